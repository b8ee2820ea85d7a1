"""The verbs that check or list files: validate, configs, experiment.

Imported by the command line only when one of them runs (accelsim/cli/main.py, VERBS).
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from accelsim.experiments.experiment import SHIPPED_CONFIGS
from accelsim.experiments.keys import default_experiment, key_lines, section_keys
from accelsim.experiments.keys import schema_markdown as experiment_schema_markdown
from accelsim.hardware.config_docs import schema_markdown, shipped_lines
from accelsim.hardware.config_yaml import ConfigError
from accelsim.tools.examples import write_examples
from accelsim.tools.validation import validation_lines


def cmd_validate(args: argparse.Namespace) -> int:
    bad = 0
    for path in args.files:
        try:
            for line in validation_lines(path):
                print(line)
        except ConfigError as exc:
            bad += 1
            for line in exc.errors:
                print(line)
    return 1 if bad else 0


def cmd_configs(args: argparse.Namespace) -> int:
    if args.schema:
        print(schema_markdown())
        return 0
    print("\n".join(shipped_lines(SHIPPED_CONFIGS)))
    print(f"(in {SHIPPED_CONFIGS}; give one by name: --hw edgetpu_usb; every key: accelsim configs --schema)")
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    if args.schema:
        print(experiment_schema_markdown())
        return 0
    print("\n".join(key_lines()))
    print(f"(the default experiment: {default_experiment()}; every key with its value, default and an example: "
          "accelsim experiment --schema)")
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    written = write_examples(Path(args.folder))
    print("\n".join(str(path) for path in written))
    print(f"(try: accelsim benchmark {written[0].parent / 'mobilenet_v2_035_96_int8.tflite'} --hw edgetpu_usb)")
    return 0


def experiment_keys_help_fill(parser: argparse.ArgumentParser) -> None:
    """`accelsim run --help`'s description, completed with the experiment file's keys (when the help is printed)."""
    parser.description += "\n\n" + textwrap.fill(
        f"An experiment file's keys: {', '.join(section_keys())}; each variant's: "
        f"{', '.join(section_keys('variants[]'))}. Every key with its value, default and an example: "
        "accelsim experiment --schema.", width=100)
