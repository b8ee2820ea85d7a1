"""Infeasible designs: a level too small for the weights is never treated as if they fit; infeasible is not failed."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.cli.main import main
from accelsim.core.feasibility import Infeasible, summary_line

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "fixtures" / "models"

# The issue's new user: a 64x64 int8 NPU with one 2 MiB SRAM, written from the README; weights default to the
# last level (sram) and nothing is said about energy.
NPU = """\
name: npu64
kind: systolic
clock: 1 GHz
compute: {rows: 64, cols: 64, dataflow: ws, vector_lanes: 64}
memory:
  levels:
    sram: {size: 2 MiB, bandwidth: 64 GB/s}
link: {bandwidth: 1 GB/s}
claims:
  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}
  - {op: DEPTHWISE_CONV_2D, versions: 1-3, dtypes: [int8]}
  - {op: ADD, versions: 1-2, dtypes: [int8]}
  - {op: FULLY_CONNECTED, versions: 1-4, dtypes: [int8]}
"""
STREAMED = NPU.replace("link: {", "  weights: link\n  cache: sram\nlink: {")


def _npu(tmp_path: Path, text: str = NPU, name: str = "npu64.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_2_mib_npu_does_not_run_mobilenet_v2_with_on_chip_weights(tmp_path, capsys):
    """The issue's scenario: 3.5 MB of int8 weights on a 2 MiB SRAM gave an on-chip-weights latency silently."""
    model = str(MODELS / "mobilenet_v2_100_224_int8.tflite")
    assert main(["benchmark", model, "--hw", _npu(tmp_path), "--num-runs", "1", "--warmup-runs", "0"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith("accelsim benchmark: infeasible (memory): ")
    for said in ("npu64.yaml:7: memory.levels.sram.size", "weights need 3541984 bytes", "holds 2097152 bytes",
                 "memory: {weights: link, cache: sram}", "make 'sram' at least"):
        assert said in err
    # whatif and sensitivity say the same in one line; validate names it for an experiment's unswept configs
    for verb in ("whatif", "sensitivity"):
        assert main([verb, model, "--hw", _npu(tmp_path)]) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith(f"accelsim {verb}: infeasible (memory): ")
    experiment = tmp_path / "exp.yaml"
    experiment.write_text(f"models: [{model}]\nhost: host_cpu\nvariants: [{{name: npu, accelerators: "
                          f"[{_npu(tmp_path)}]}}]\n")
    assert main(["validate", str(experiment)]) == 0
    assert ("  infeasible: mobilenet_v2_100_224_int8 on npu (unswept values): " in capsys.readouterr().out)
    # Placed honestly, the overflow streams over the link every inference, counted and said.
    assert main(["benchmark", model, "--hw", _npu(tmp_path, STREAMED, "s.yaml"), "--num-runs", "1",
                 "--warmup-runs", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["streamed_param_bytes"] > 3541984 - 2 * 2**20
    assert data["streamed_param_bytes"] + data["init_param_bytes"] == 3541984


def _experiment(tmp_path: Path, sizes: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(f"""\
name: tight
models: [{MODELS / 'mobilenet_v2_035_96_int8.tflite'}]
host: host_cpu
variants:
  - {{name: npu, accelerators: [{_npu(tmp_path)}]}}
sweeps:
  npu64.memory.levels.sram.size: {sizes}
""")
    return path


def test_infeasible_points_are_results_counted_apart_and_cached(tmp_path, capsys):
    out = tmp_path / "out"
    path = _experiment(tmp_path, "[64 KiB, 2 MiB]")
    assert main(["run", str(path), "--out", str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "0 failed" in printed and "1 infeasible (memory: 1)" in printed
    records = json.loads((out / "results.json").read_text())["points"]
    by_size = {r["sweep"]["npu64.memory.levels.sram.size"]: r for r in records}
    assert by_size["2 MiB"]["status"] == "ok"
    tight = by_size["64 KiB"]
    assert (tight["status"], tight["infeasible"]) == ("infeasible", "memory")
    assert "holds 65536 bytes" in tight["error"] and "latency_us" not in tight
    report = (out / "report.md").read_text()
    assert "## Infeasible design points" in report and "## Failed design points" not in report
    row = next(line for line in report.splitlines() if line.startswith("| mobilenet") and "| 64 KiB " in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert "infeasible" in cells and "error" not in cells  # the summary row says what it is
    # the best point's sensitivity: the variation back to the infeasible size says so
    what = report[report.index("## What to change"):]
    assert "### mobilenet_v2_035_96_int8 on npu at npu64.memory.levels.sram.size=2 MiB" in what
    assert "Verdict: what to change first" in what and "npu64.memory.levels.sram.size" in what
    # a result like an ok point: cached, not run again
    assert main(["run", str(path), "--out", str(out), "--jobs", "1"]) == 0
    assert "(2 cached, 0 run, 0 failed)" in capsys.readouterr().out


def test_a_sweep_where_every_point_is_infeasible_exits_0_with_reasons_and_a_report(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(_experiment(tmp_path, "[16 KiB, 64 KiB]")), "--out", str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "2 infeasible (memory: 2)" in printed and "first infeasible:" in printed and "which holds" in printed
    report = (out / "report.md").read_text()
    assert "0 simulated, 0 failed, 2 infeasible (memory: 2)" in report
    assert "No point could run the model" in report
    assert "## Sweeps\n\nNo sweep plot: no design point was simulated (every point is infeasible" in report


def test_summary_line_counts_each_reason():
    records = [{"status": "infeasible", "infeasible": "memory"}, {"status": "ok"}, {"status": "error"},
               {"status": "infeasible", "infeasible": "memory"}, {"status": "infeasible", "infeasible": "constraints"},
               *[{"status": "infeasible", "infeasible": "limits"}] * 3]
    assert summary_line(records) == "6 infeasible (memory: 2, limits: 3, constraints: 1)"
    assert summary_line([{"status": "ok"}]) is None
    with pytest.raises(ValueError, match="one of"):
        Infeasible("size", "x")
    again = pickle.loads(pickle.dumps(Infeasible("limits", "over 16 MiB")))
    assert (again.reason, str(again)) == ("limits", "over 16 MiB")


def test_energy_left_out_is_not_modelled_and_defaults_are_listed_as_assumptions(tmp_path, capsys):
    out = tmp_path / "out"
    results = out / "results.json"
    assert main(["run", str(_experiment(tmp_path, "[1 MiB, 2 MiB]")), "--out", str(out), "--jobs", "1"]) == 0
    records = json.loads(results.read_text())["points"]
    assert [r["status"] for r in records] == ["ok", "ok"]
    for r in records:  # never a quiet 0, nor the host's part passed off as the whole
        assert r["energy_uj"] is None and r["edp_uj_ms"] is None and r["energy_not_modelled"] == ["npu64"]
        assert r["energy_by_unit_uj"]["npu64"] is None and r["energy_by_unit_uj"]["host_cpu"] > 0
    report = (out / "report.md").read_text()
    assumed = report[report.index("## Assumptions"):]
    for line in ("npu64: link.call_overhead = 0 s (not given;", "npu64: link.latency = 0 s",
                 "npu64: energy not modelled (no energy.mac)", "host_cpu: memory.levels.dram.latency = 0 s"):
        assert line in assumed
    assert "npu64: memory.levels.sram.size" not in assumed  # swept: set at every point
    assert "not modelled" in report[report.index("## Summary"):report.index("## Assumptions")]
    # the glossary defines every column once; in HTML the headers link to it
    glossary = {cells[0]: cells[1:] for cells in (
        [c.strip() for c in line.strip("|").split("|")] for line in report[report.index("## Glossary"):].splitlines()
        if line.startswith("| "))}
    assert glossary["Partition overhead"][:2] == ["%", "100 × (transfer + call overhead) / latency "
                                                       "(partition_overhead_pct)"]
    page = (out / "report.html").read_text()
    assert '<a href="#g-partition-overhead">Partition overhead (%)</a>' in page
    assert '<tr id="g-partition-overhead"><td>Partition overhead</td>' in page
    capsys.readouterr()
    assert main(["compare", str(results), str(results), "--plot", str(tmp_path / "c.png")]) == 0
    printed = capsys.readouterr().out
    assert "Note: energy is not modelled for npu64 (no energy.mac) in 4 of 4 results" in printed


def test_benchmark_lists_assumptions_and_says_energy_is_not_modelled(tmp_path, capsys):
    model = str(MODELS / "mobilenet_v2_035_96_int8.tflite")
    assert main(["benchmark", model, "--hw", _npu(tmp_path), "--num-runs", "1", "--warmup-runs", "0"]) == 0
    printed = capsys.readouterr().out
    assert "Simulated energy per inference: not modelled (no energy.mac for npu64)" in printed
    assert "  npu64: link.call_overhead = 0 s (not given;" in printed
    assert main(["benchmark", model, "--hw", _npu(tmp_path), "--num-runs", "1", "--warmup-runs", "0",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["energy_uj"] is None and data["energy_not_modelled"] == ["npu64"]
    assert any(line.startswith("npu64: link.latency = 0 s") for line in data["assumptions"])


def test_sweep_plots_for_many_keys_hold_the_others_at_the_best_point_and_mark_infeasible_points():
    from accelsim.reports import figures as report  # the report's figures (arch split them out of report.py)

    points = []
    for a in range(5):
        for b in range(5):
            for c in (1, 2):
                sweep = {"npu.a": a + 1, "npu.b": b + 1, "npu.c": c}
                base = {"id": f"{a}{b}{c}", "model_name": "m", "model": "m.tflite", "variant": "v",
                        "accelerators": ["npu"], "sweep": sweep, "schedule": "sequential", "speedup": None}
                if a == 0 and c == 1:
                    points.append({**base, "status": "infeasible", "infeasible": "memory", "error": "too small"})
                else:
                    points.append({**base, "status": "ok", "latency_us": 100.0 / (a + 1) + b + c,
                                   "partition_overhead_pct": 1.0})
    assert report._sweep_line_count(points, "npu.c") > report.SWEEP_MAX_LINES  # 25 lines: held at the best
    held = report._held_at_best(points, "npu.c")
    assert {(p["sweep"]["npu.a"], p["sweep"]["npu.b"]) for p in held} == {(5, 1)}  # the fastest point's a and b
    figures = report.all_figures(points, [], [], ["npu.a", "npu.b", "npu.c"], {("latency_us", "energy_uj"): []}, None)
    assert {f"plots/sweep_npu.{k}.png" for k in "abc"} <= set(figures)
    lines = report._sweep_lines(report._held_at_best(points, "npu.a"), "npu.a")
    assert len(lines) == 1 and lines[0].values == (2, 3, 4, 5)  # a=1 is infeasible at the best c


def test_a_whatif_line_that_makes_the_design_infeasible_is_said_not_a_crash(tmp_path):
    from accelsim.hardware.config import load_system
    from accelsim.insight.whatif import _effect, _outcome
    from accelsim.runtime.read import load_model

    tiny = load_system(ROOT / "hw_configs" / "host_cpu.yaml", [_npu(tmp_path, NPU.replace("2 MiB", "64 KiB"))])
    after = _outcome(load_model(str(MODELS / "mobilenet_v2_035_96_int8.tflite")), tiny, "sequential", None)
    assert after.latency_us is None and after.error.startswith("infeasible: ") and "holds 65536 bytes" in after.error
    assert _effect(after, after) == after.error


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 4096), weights=st.lists(st.integers(0, 2048), min_size=1, max_size=6),
       working=st.lists(st.integers(2, 1024), min_size=1, max_size=6))
def test_a_single_level_holds_the_model_exactly_when_all_weights_and_the_largest_working_set_fit(
        size, weights, working):
    """The rule of accelsim.hardware.memory.placed against its plain statement, on random devices."""
    from accelsim.hardware.memory import Level, Memory, traffic
    from accelsim.runtime.work import NodeWork

    works = [NodeWork("ADD", "int8", macs=1, weight_bytes=w, input_bytes=a // 2, output_bytes=a - a // 2)
             for w, a in zip(weights, working)]
    memory = Memory((Level("sram", 1e9, size),), weights="sram", activations="sram")
    fits = sum(w.weight_bytes for w in works) + max(w.input_bytes + w.output_bytes for w in works) <= size

    def refuse(path, message):
        return Infeasible("memory", f"{'.'.join(path)}: {message}")

    if fits:
        moved = traffic(works, memory, refuse, "npu", True)
        assert [dict(t.level_bytes).get("sram", 0) for t in moved] == [
            w.weight_bytes + w.input_bytes + w.output_bytes for w in works]
    else:
        with pytest.raises(Infeasible) as info:
            traffic(works, memory, refuse, "npu", True)
        need = sum(w.weight_bytes for w in works)
        assert str(info.value).startswith(f"memory.levels.sram.size: npu's weights need {need} bytes")


def test_an_accelerator_whose_constraints_refuse_every_node_it_matches_is_infeasible(tmp_path, capsys):
    """Reason 'constraints': max_channels 2 refuses every conv of the int8 model; on the float model the int8 claims
    match nothing, which is not the constraints' doing (an ordinary host-only point)."""
    npu = _npu(tmp_path, NPU.split("claims:")[0] + "claims:\n  - {op: CONV_2D, versions: 1-3, dtypes: [int8], "
                                                   "constraints: {max_channels: 64}}\n")
    path = tmp_path / "exp.yaml"
    path.write_text(f"name: narrow\nmodels: [{MODELS / 'mobilenet_v2_035_96_int8.tflite'}, "
                    f"{MODELS / 'mobilenet_v2_035_96_float.tflite'}]\nhost: host_cpu\n"
                    f"variants: [{{name: npu, accelerators: [{npu}]}}]\n"
                    "sweeps:\n  npu64.claims[0].constraints.max_channels: [2, 64]\n")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--jobs", "1"]) == 0
    assert "0 failed" in capsys.readouterr().out
    records = {(r["model_name"], r["sweep"]["npu64.claims[0].constraints.max_channels"]): r
               for r in json.loads((out / "results.json").read_text())["points"]}
    narrow = records[("mobilenet_v2_035_96_int8", 2)]
    assert (narrow["status"], narrow["infeasible"]) == ("infeasible", "constraints")
    assert narrow["error"].startswith(f"{npu}:10: claims[0].constraints: npu64 can run no node of the model: its "
                                      "claims match 35 node(s) by op, version and type")
    assert "(first: node 0 CONV_2D, input channels 3 above max 2)" in narrow["error"]
    assert records[("mobilenet_v2_035_96_int8", 64)]["status"] == "ok"  # some convs fit: the rest fall back
    assert {records[("mobilenet_v2_035_96_float", v)]["status"] for v in (2, 64)} == {"ok"}
    assert "1 infeasible (constraints: 1)" in (out / "report.md").read_text()


@settings(max_examples=200, deadline=None)
@given(channels=st.integers(1, 64), version=st.integers(1, 4), dtype=st.sampled_from(["int8", "float32"]),
       limits=st.lists(st.tuples(st.integers(1, 64), st.integers(1, 3), st.sampled_from([(), ("int8",)])),
                       max_size=3))
def test_constraint_refusal_is_the_claim_check_refusing_only_on_constraints(channels, version, dtype, limits):
    """constraint_refusal names a constraint exactly when no rule accepts the node and some rule matches its op,
    version and type; it never speaks where a rule accepts the node."""
    from accelsim.delegates.spec import ClaimRule, NodeFacts, check_claim, constraint_refusal

    facts = NodeFacts("CONV_2D", version, dtype, in_channels=channels, out_channels=channels)
    rules = [ClaimRule("CONV_2D", (1, hi), frozenset(dt), {"max_channels": most}) for most, hi, dt in limits]
    matching = [r for r in rules if version <= r.versions[-1][1] and (not r.dtypes or dtype in r.dtypes)]
    refusal = constraint_refusal(rules, facts)
    if check_claim(rules, facts)[0] or not matching:
        assert refusal is None
    else:
        index, why = refusal
        most = matching[0].constraints["max_channels"]
        assert rules[index] is matching[0] and why == f"input channels {channels} above max {most}"
