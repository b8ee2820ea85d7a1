"""Sweep ranges, random search and limits: values, determinism, dropped points, file:line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from accelsim.experiments.executors import SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import design_points, resolved_system
from accelsim.experiments.run import run_experiment
from accelsim.hardware.config import ConfigError
from accelsim.hardware.sweeps import Range, Search, onchip_bytes, parse_range, peak_macs_per_cycle, sampled_combinations

MODEL = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models" / "interleaved_int8.tflite"


def experiment(tmp_path: Path, sweeps: str, extra: str = "") -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(f"""\
name: search
models: [{MODEL}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
sweeps:
{sweeps}
{extra}""")
    return path


def values(spec: dict, random: bool = False) -> tuple:
    errors = []
    span = parse_range(spec, ("sweeps", "k"), lambda path, message: errors.append((path, message)), random)
    assert errors == [] and isinstance(span, Range)
    return span.grid()


def test_grid_ranges_step_evenly_or_geometrically_in_the_unit_of_from():
    assert values({"from": 8, "to": 64, "step": 8}) == (8, 16, 24, 32, 40, 48, 56, 64)
    assert values({"from": 8, "to": 60, "step": 8}) == (8, 16, 24, 32, 40, 48, 56)  # `to` is a bound
    assert values({"from": "250 MHz", "to": "1 GHz", "log": True, "steps": 3}) == ("250 MHz", "500 MHz", "1000 MHz")
    assert values({"from": "40 MB/s", "to": "2 GB/s", "steps": 2}) == ("40 MB/s", "2000 MB/s")
    assert values({"from": "1 MiB", "to": "4 MiB", "step": "1 MiB"}) == ("1 MiB", "2 MiB", "3 MiB", "4 MiB")
    assert values({"from": 0.5, "to": 1.0, "steps": 3}) == (0.5, 0.75, 1.0)


def test_random_draws_are_seeded_within_their_ranges_and_lists():
    sweeps = [("rows", Range(start=8, stop=256, step=8, whole=True)), ("bw", Range(start=40e6, stop=2e9, log=True,
                                                                                   unit="MB/s",
                                                                        factor=1e6, kind="rate")),
              ("schedule", ("sequential", "dataflow"))]
    drawn = sampled_combinations(sweeps, Search("random", 500, seed=4))
    assert drawn == sampled_combinations(sweeps, Search("random", 500, seed=4))
    assert drawn != sampled_combinations(sweeps, Search("random", 500, seed=5))
    rows = np.array([d["rows"] for d in drawn])
    assert set(rows) <= set(range(8, 257, 8)) and len(set(rows)) > 20
    bandwidth = np.array([float(d["bw"].split()[0]) * 1e6 for d in drawn])
    assert bandwidth.min() >= 40e6 * (1 - 1e-6) and bandwidth.max() <= 2e9 * (1 + 1e-6)
    # Log-uniform: about half the draws fall below the geometric mean (283 MB/s), not 10% as uniform would.
    assert 0.4 < np.mean(bandwidth < np.sqrt(40e6 * 2e9)) < 0.6
    assert {d["schedule"] for d in drawn} == {"sequential", "dataflow"}


@pytest.mark.slow
def test_a_random_search_gives_each_variant_its_keys_once_each(tmp_path):
    path = experiment(tmp_path, "  edgetpu_usb.compute.rows: {from: 8, to: 64, step: 8}\n"
                                "  edgetpu_usb.link.bandwidth: {from: 40 MB/s, to: 2 GB/s, log: true}\n"
                                "  schedule: [sequential, dataflow]",
                      "search: {strategy: random, samples: 30, seed: 1}\n")
    exp = load_experiment(path)
    points = design_points(exp)
    cpu = [p for p in points if p.variant == "cpu_only"]
    usb = [p for p in points if p.variant == "usb"]
    assert len(cpu) == 2 and {p.sweep["schedule"] for p in cpu} == {"sequential", "dataflow"}  # repeats run once
    assert len(usb) == 30 and len({p.id for p in usb}) == 30
    assert design_points(load_experiment(path)) == points
    out = run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    assert out.failed == 0 and len(out.records) == 32


@pytest.mark.slow
def test_limits_drop_points_before_they_run(tmp_path, capsys):
    path = experiment(tmp_path, "  edgetpu_usb.compute.rows: [32, 64, 128]\n"
                                "  edgetpu_usb.compute.cols: [32, 64, 128]\n"
                                "  edgetpu_usb.memory.levels.sram.size: [4 MiB, 8 MiB]",
                      "limits: {peak_macs_per_cycle: {max: 4096}, onchip_bytes: {min: 5 MB, max: 16 MiB}}\n")
    exp = load_experiment(path)
    points = design_points(exp)
    usb = [p for p in points if p.variant == "usb"]
    # rows x cols <= 4096: 6 of the 9 shapes; sram >= 5 MB: only 8 MiB. The CPU-only point has no accelerator.
    assert len(usb) == 6 and len(points) == 7
    for p in usb:
        accelerator = resolved_system(p).accelerators[0].hardware
        assert peak_macs_per_cycle(accelerator) == p.sweep["edgetpu_usb.compute.rows"] * p.sweep[
            "edgetpu_usb.compute.cols"] <= 4096
        assert onchip_bytes(accelerator) == 8 * 2**20
    from accelsim.cli.main import main

    # The 12 refused points are infeasible results (stored, shown, never simulated), not left out silently.
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "19 design points (0 cached, 7 run, 0 failed)" in printed and "  12 infeasible (limits: 12)\n" in printed
    records = json.loads((tmp_path / "out" / "results.json").read_text())["points"]
    refused = [r for r in records if r["status"] == "infeasible"]
    assert len(refused) == 12 and {r["infeasible"] for r in refused} == {"limits"}
    for r in refused:  # each says which limit and by how much, and carries the area proxies (host and accelerator)
        rows, cols = r["sweep"]["edgetpu_usb.compute.rows"], r["sweep"]["edgetpu_usb.compute.cols"]
        expected = (f"limits.peak_macs_per_cycle: edgetpu_usb has {rows * cols:,} MACs per cycle, above the max "
                    "4,096 MACs per cycle" if rows * cols > 4096 else
                    "limits.onchip_bytes: edgetpu_usb has 4,194,304 bytes, below the min 5,000,000 bytes")
        assert r["error"] == expected and r.get("latency_us") is None and r["area_macs"] >= rows * cols
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Infeasible design points\n\n12 infeasible (limits: 12): " in report
    eight_k = "| limits | limits.peak_macs_per_cycle: edgetpu_usb has 8,192 MACs per cycle"
    assert report.count(eight_k) == 4  # 64x128 and 128x64, each at both SRAM sizes
    # Run again with looser limits: the refused points run now (a stored limits verdict is not a cached result),
    # and the points that ran before are reused.
    path.write_text(path.read_text().replace("max: 4096", "max: 16384").replace("min: 5 MB, ", ""))
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "19 design points (7 cached, 12 run, 0 failed)" in printed and "infeasible" not in printed


@pytest.mark.parametrize(("sweeps", "extra", "expected"), [
    ("  edgetpu_usb.compute.rows: [8]", "search: {strategy: random, sample: 5}\n",
     r"exp.yaml:9: search.sample: unknown key; did you mean 'samples'\?"),
    ("  edgetpu_usb.compute.rows: [8]", "search: {strategy: randon, samples: 5}\n",
     r"exp.yaml:9: search.strategy: expected one of grid, random, got 'randon'; did you mean 'random'\?"),
    ("  edgetpu_usb.compute.rows: [8]", "search: {strategy: random, samples: 0}\n",
     r"exp.yaml:9: search.samples: expected a whole number >= 1"),
    ("  edgetpu_usb.compute.rows: [8]", "search: {strategy: grid, samples: 4}\n",
     r"exp.yaml:9: search.samples: a grid runs every combination; samples goes with strategy: random"),
    ("  edgetpu_usb.compute.rows: [8]", "limits: {peak_mac_per_cycle: {max: 8192}}\n",
     r"exp.yaml:9: limits.peak_mac_per_cycle: unknown key; did you mean 'peak_macs_per_cycle'\?"),
    ("  edgetpu_usb.compute.rows: [8]", "limits: {onchip_bytes: {maximum: 16 MiB}}\n",
     r"exp.yaml:9: limits.onchip_bytes.maximum: unknown key; did you mean 'max'\?"),
    ("  edgetpu_usb.compute.rows: [8]", "limits: {onchip_bytes: {max: 16 MHz}}\n",
     r"exp.yaml:9: limits.onchip_bytes.max: expected a size like '8 MiB', got '16 MHz'"),
    ("  edgetpu_usb.compute.rows: [8]", "limits:\n  onchip_bytes: {min: 2 MiB, max: 1 MiB}\n",
     r"exp.yaml:10: limits.onchip_bytes: min '2 MiB' is above max '1 MiB'"),
    ("  edgetpu_usb.compute.rows: {from: 8, to: 64, stpe: 8}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.compute.rows.stpe: unknown key; did you mean 'step'\?"),
    ("  edgetpu_usb.link.bandwidth: {from: 40 MB/s, to: 2 GB/s, log: true}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.link.bandwidth: a grid needs step .*search: \{strategy: random"),
    ("  edgetpu_usb.link.bandwidth: {from: 2 GB/s, to: 40 MB/s, steps: 3}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.link.bandwidth: from must be below to"),
    ("  edgetpu_usb.link.bandwidth: {from: 40 MB/s, to: 2 GHz, steps: 3}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.link.bandwidth: from is a rate and to is a frequency"),
    ("  edgetpu_usb.link.bandwidth: {from: 40 MB/s, to: 2 GB/s, step: 10 MB/s, log: true}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.link.bandwidth.step: step and log: true do not go together; use steps"),
    ("  edgetpu_usb.compute.rows: {from: fast, to: 64, step: 8}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.compute.rows.from: expected a number or a quantity like 40 MB/s"),
    ("  edgetpu_usbb.compute.rows: {from: 8, to: 64, step: 8}", "",
     r"exp.yaml:8: sweeps.edgetpu_usbb.compute.rows: no variant has an accelerator named 'edgetpu_usbb'; "
     r"did you mean 'edgetpu_usb'\?"),
    ("  edgetpu_usb.link.bandwdth: {from: 40 MB/s, to: 2 GB/s, steps: 3}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.link.bandwdth: unknown key; did you mean 'bandwidth'\?$"),  # once, not per value
    ("  edgetpu_usb.link.bandwidth: {from: 40 MB, to: 2 GB, steps: 3}", "",
     r"exp.yaml:8: sweeps.edgetpu_usb.link.bandwidth: value '40 MB': .*rate"),  # the config refuses a size
])
def test_bad_search_limit_and_range_keys_name_file_line_and_key(tmp_path, sweeps, extra, expected):
    with pytest.raises(ConfigError, match=expected):
        load_experiment(experiment(tmp_path, sweeps, extra))
