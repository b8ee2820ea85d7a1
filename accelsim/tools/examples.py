"""The sample models the help examples and the README use, written out of the installed package.

They ship with the default experiment (`accelsim.default_experiment`, examples/default/ in the repository, whose
models are links to tests/fixtures/models/), so `accelsim examples DIR` works from a wheel, far from any checkout.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from accelsim.experiments.keys import default_experiment

# The op module of atan_custom.tflite (examples/custom_op_atan.py), shipped beside the models.
OP_MODULE = "custom_op_atan.py"


def sample_files() -> list[Path]:
    """The shipped sample models (every .tflite beside the default experiment) and the custom op's module."""
    folder = default_experiment().parent
    return [*sorted(folder.glob("*.tflite")), folder / OP_MODULE]


def write_examples(folder: Path) -> list[Path]:
    """Copy the sample files into `folder` (created if needed); an existing file of the same name is replaced.

    Raises:
        OSError: the folder cannot be created or written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for source in sample_files():
        target = folder / source.name
        shutil.copyfile(source, target)
        out.append(target)
    return out
