"""Warnings printed beside the numbers they qualify (issue 31 A1, A4): in benchmark, run and the report."""

from __future__ import annotations

import json
from pathlib import Path

from support import CUSTOM_OP_FIXTURES, FIXTURES

from accelsim.cli.main import main

ATAN = FIXTURES / "atan_custom.tflite"
ATAN_OPS = CUSTOM_OP_FIXTURES["atan_custom"]


def test_a_custom_op_the_host_runs_is_named_in_a_warning_in_benchmark(capsys):
    """Issue 31 A4: host_cpu has no cost of its own for a custom op; its op module's guess was a silent 0.0 µs."""
    assert main(["benchmark", str(ATAN), "--host", "host_cpu", "--num-runs", "0", "--ops", ATAN_OPS]) == 0
    out = capsys.readouterr().out
    warning = next(line for line in out.splitlines() if line.startswith("Warning: custom op"))
    assert warning.startswith("Warning: custom op 'Atan' (node 1) on the host host_cpu: no host config has a cost of "
                              "its own for a custom op, so it is costed from its op module's work estimate (48 ops)")
    assert main(["benchmark", str(ATAN), "--host", "host_cpu", "--num-runs", "0", "--ops", ATAN_OPS, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [w.split(":")[0] for w in data["warnings"]] == ["custom op 'Atan' (node 1) on the host host_cpu"]


def test_a_run_and_its_report_carry_the_warnings_once_with_their_point_count(tmp_path: Path, capsys):
    path = tmp_path / "exp.yaml"
    path.write_text(f"name: warned\nmodels: [{ATAN}]\nhost: host_cpu\nops: [{ATAN_OPS}]\n"
                    "variants: [{name: cpu_only, accelerators: []}]\nsweeps:\n  host.clock: [1 GHz, 2 GHz]\n"
                    "reports: [md, json]\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("accelsim run: warning: custom op 'Atan' (node 1) on the host host_cpu") == 1
    assert "an unmeasured guess (2 points)" in err
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Warnings" in report and "custom op 'Atan' (node 1) on the host host_cpu" in report
    points = json.loads((tmp_path / "out" / "results.json").read_text())["points"]
    assert all(p["warnings"][0].startswith("custom op 'Atan'") for p in points)
