"""The experiment key table: the loader's vocabulary, `accelsim experiment [--schema]`, `run --help`, the default."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from accelsim.cli.main import main
from accelsim.experiments.keys import KEYS, REQUIRED, default_experiment, section_keys, vocabularies

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = ("", "variants[]", "loops", "pareto", "search")


def _written_keys(data: dict) -> set[str]:
    """Every key path an experiment file writes, in the table's spelling (sweeps' keys are the user's)."""
    found = set(data)
    found |= {f"variants[].{k}" for v in data.get("variants", []) for k in v}
    found |= {f"{section}.{k}" for section in ("loops", "pareto", "search") for k in data.get(section, {})}
    return found


def test_docs_experiments_md_is_the_schema_command(capsys):
    """docs/experiments.md is `accelsim experiment --schema`; regenerate it with that command when this fails."""
    assert main(["experiment", "--schema"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")


def test_every_key_of_the_table_is_in_the_schema_with_its_default_and_example():
    from accelsim.experiments.keys import schema_markdown

    text = schema_markdown()
    rows = {line.split(" | ")[0].strip("| `"): line for line in text.splitlines() if line.startswith("| `")}
    assert list(rows) == [k.path for k in KEYS]
    for key in KEYS:
        assert key.default.replace("|", "\\|") in rows[key.path] and key.example in rows[key.path]
    assert REQUIRED in rows["models"] and "`sequential` \\| `dataflow`" in rows["schedule"]


def test_the_loader_accepts_exactly_the_keys_of_the_table(tmp_path):
    """The loader's section keys come from the table; the search section (parsed in accelsim.hardware.sweeps) agrees."""
    import accelsim.experiments.experiment as experiment
    from accelsim.hardware.sweeps import parse_search

    assert experiment._TOP_KEYS == section_keys()
    assert experiment._VARIANT_KEYS == section_keys("variants[]")
    errors = []
    parse_search({k: v for k, v in (("strategy", "random"), ("samples", 3), ("seed", 1))},
                 ("search",), lambda path, message: errors.append((path, message)))
    parse_search({"sampler": "nsga2", "budget": 5, "seed": 1, "objectives": ["latency_us", "energy_uj"]},
                 ("search",), lambda path, message: errors.append((path, message)))
    assert section_keys("search") == ("strategy", "samples", "seed", "sampler", "budget", "objectives")
    assert errors == []
    # a key the table lacks is refused with the table's keys as the choices
    path = tmp_path / "e.yaml"
    path.write_text("models: [m.tflite]\nhost: host_cpu\nvariants: [{name: a, accelerators: [], colour: 1}]\n"
                    "nonsense: 1\n")
    with pytest.raises(experiment.ConfigError) as info:
        experiment.load_experiment(path)
    text = "\n".join(info.value.errors)
    assert f"nonsense: unknown key; expected one of {', '.join(section_keys())}" in text
    assert f"variants[0].colour: unknown key; expected one of {', '.join(section_keys('variants[]'))}" in text


@pytest.mark.parametrize("example", [*sorted((ROOT / "examples").rglob("*.yaml")), ROOT / ".ci" / "wheel_check.yaml"],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_key_the_shipped_experiments_write_is_in_the_table(example):
    paths = {k.path for k in KEYS}
    assert _written_keys(yaml.safe_load(example.read_text())) <= paths


def test_defaults_and_vocabularies_come_from_the_modules_that_check_them():
    from accelsim.core.pareto import DEFAULT_BEST
    from accelsim.reports.report import RENDERERS as FORMATS

    best = next(k for k in KEYS if k.path == "best")
    assert best.default == str(DEFAULT_BEST)
    assert {k.choices for k in KEYS if k.choices} <= set(vocabularies())
    assert all(f"`{f}`" in vocabularies()["formats"] for f in FORMATS)


def test_experiment_lists_the_keys_and_run_help_names_them(capsys):
    assert main(["experiment"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == [k.path for k in KEYS]
    assert str(default_experiment()) in lines[-1] and "accelsim experiment --schema" in lines[-1]
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"An experiment file's keys: {', '.join(section_keys())};" in out
    assert "accelsim experiment --schema" in out


def test_the_default_experiment_ships_with_its_model():
    """`accelsim run` with no argument needs nothing from a checkout: its model sits beside it (package data)."""
    from accelsim.experiments.experiment import load_experiment

    experiment = load_experiment(default_experiment())
    assert [Path(m).parent for m in experiment.models] == [default_experiment().parent]
    assert experiment.name == "default" and [v.name for v in experiment.variants][0] == "cpu_only"
