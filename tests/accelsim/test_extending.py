"""Extension points, each exercised by adding a toy in a test (docs/architecture.md, "Where to add ...").

A report format is one entry in `accelsim.reports.report.RENDERERS`: the experiment file's `reports:` accepts
it, `write_report` renders it, and `accelsim run` lists the file it wrote — nothing else changes.
A placement policy of `assign:` is a search in `accelsim.simulation.placement.ASSIGNERS` and its name in
`accelsim.hardware.config.ASSIGN_POLICIES`: experiments accept it, points using it get their own analysis, and
the search decides what the delegates claim through `build_interpreter`'s arguments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import accelsim.hardware.config
from accelsim.cli.main import main
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.run import run_experiment
from accelsim.hardware.config import ConfigError
from accelsim.reports.report import RENDERERS, Page
from accelsim.simulation import placement
from accelsim.simulation.costing import simulate_interpreter
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.inference import PartitionChoice

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


def _all_on_the_host(model, system, schedule, loops, exact_limit):
    """A toy placement policy: no accelerator may claim anything, so the whole model runs on the host."""
    order, order_delegates = build_interpreter(model, system)
    tflite = simulate_interpreter(order, order_delegates, system, schedule, loops=loops)
    interpreter, delegates = build_interpreter(model, system, allowed={a.name: frozenset() for a in
                                                                       system.accelerators})
    partitions = [(n.delegate.name(), n.params.partition) for n in map(order.primary.nodes.__getitem__,
                                                                        order.primary.execution_plan) if n.delegate]
    return interpreter, delegates, PartitionChoice(objective=system.assign.objective, search="toy",
                                                   tflite=tuple(partitions), host=tuple(partitions),
                                                   tflite_latency=tflite.latency, tflite_energy=tflite.energy)


def test_a_toy_placement_policy_is_one_search_and_its_name(tmp_path, monkeypatch):
    config = accelsim.hardware.config
    monkeypatch.setattr(config, "ASSIGN_POLICIES", (*config.ASSIGN_POLICIES, "host_only"))
    monkeypatch.setitem(placement.ASSIGNERS, "host_only", _all_on_the_host)
    path = tmp_path / "placed.yaml"
    path.write_text(f"""\
name: placed
models: [{MODELS / 'interleaved_int8.tflite'}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
  - {{name: usb_kept_home, accelerators: [edgetpu_usb], assign: host_only}}
reports: [json]
""")
    records = {r["variant"]: r for r in run_experiment(load_experiment(path), tmp_path / "out", jobs=1).records}
    home, usb, cpu = records["usb_kept_home"], records["usb"], records["cpu_only"]
    assert home["status"] == "ok" and home["delegated_nodes"] == 0 < usb["delegated_nodes"]
    assert home["latency_us"] == cpu["latency_us"]  # every node on the host, as without the accelerator
    choice = home["partition_choice"]
    assert choice["search"] == "toy" and choice["tflite_partitions"] == usb["partitions"]
    assert choice["tflite_latency_us"] == usb["latency_us"]
