"""Extension points, each exercised by adding a toy in a test (docs/architecture.md, "Where to add ...").

A report format is one entry in `accelsim.report.RENDERERS`: the experiment file's `reports:` accepts
it, `write_report` renders it, and `accelsim run` lists the file it wrote — nothing else changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsim.cli import main
from accelsim.config import ConfigError
from accelsim.experiment import load_experiment
from accelsim.report import RENDERERS, Page
from accelsim.run import run_experiment

MODELS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models"


def _toy_render(page: Page) -> bytes:
    """One line per point: its label and latency, from the same Page every format renders."""
    return "".join(f"{p['variant']} {p['latency_us']}\n" for p in page.points if p["status"] == "ok").encode()


def _experiment(tmp_path: Path, reports: str) -> Path:
    path = tmp_path / "toy.yaml"
    path.write_text(f"""\
name: toy
models: [{MODELS / 'interleaved_int8.tflite'}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
reports: {reports}
""")
    return path


def test_a_toy_report_format_is_one_table_entry(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(RENDERERS, "toy", ("report.toy", _toy_render))
    path = _experiment(tmp_path, "[toy, json]")
    outcome = run_experiment(load_experiment(path), tmp_path / "out", jobs=1)
    toy = (tmp_path / "out" / "report.toy").read_text().splitlines()
    points = json.loads((tmp_path / "out" / "results.json").read_text())["points"]
    assert toy == [f"{p['variant']} {p['latency_us']}" for p in points] and len(toy) == 2
    assert outcome.outputs["toy"] == tmp_path / "out" / "report.toy"
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    assert f"  toy: {tmp_path / 'out' / 'report.toy'}\n" in capsys.readouterr().out


def test_an_unregistered_format_is_refused_with_the_registered_ones(tmp_path):
    path = _experiment(tmp_path, "[toy]")
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    assert info.value.errors == (f"{path}:7: reports: expected a list drawn from {', '.join(RENDERERS)}, "
                                 "got ['toy']",)
