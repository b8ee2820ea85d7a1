"""`accelsim benchmark MODEL --num-runs 0`: the simulated numbers of a run, without running or numeric preparation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsim.cli.main import main
from accelsim.runtime.interpreter import Interpreter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"
SIMULATED = ("simulated_us", "energy_uj", "host_only_us", "speedup", "partition_overhead_pct", "partitions",
             "delegated_nodes", "total_nodes", "transfer_bytes", "layers", "op_profile", "op_summary")


def _benchmark(capsys, *argv: str) -> dict:
    assert main(["benchmark", *argv, "--json", "--per-layer", "--enable-op-profiling"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("model", "hw"), [
    ("interleaved_int8.tflite", ["edgetpu_usb"]),
    ("transformer_block_int8.tflite", ["edgetpu_pcie", "hexagon_dsp"]),
    ("dilated_cnn_float.tflite", ["hexagon_dsp"]),
])
def test_cost_only_gives_the_simulated_numbers_of_a_run_without_running(model, hw, capsys, monkeypatch):
    args = [str(FIXTURES / model), *(w for h in hw for w in ("--hw", h)), "--schedule", "dataflow"]
    ran = _benchmark(capsys, *args, "--num-runs", "1", "--warmup-runs", "0")
    built = []
    real_init = Interpreter.__init__

    def spy(self, *a, **kw):
        built.append(kw.get("shapes_only", False))
        real_init(self, *a, **kw)

    def no_invoke(self):
        raise AssertionError("the NumPy interpreter ran")

    monkeypatch.setattr(Interpreter, "__init__", spy)
    monkeypatch.setattr(Interpreter, "invoke", no_invoke)
    costed = _benchmark(capsys, *args, "--num-runs", "0")
    assert built and all(built), "every interpreter prepares shapes only (no numeric preparation)"
    assert {k: costed[k] for k in SIMULATED} == {k: ran[k] for k in SIMULATED}
    assert costed["wallclock_us"]["runs"] == [] and costed["wallclock_us"]["avg"] is None


def test_cost_only_counts_the_loops_a_run_counts(capsys):
    """WHILE loops whose trips follow from constants: cost only counts what a run counts."""
    args = [str(FIXTURES / "lstm_gru_float.tflite"), "--hw", "hexagon_dsp", "--json"]
    ran = _benchmark(capsys, *args, "--num-runs", "1", "--warmup-runs", "0")
    costed = _benchmark(capsys, *args, "--num-runs", "0")
    assert [(c["node"], c["trips"], c["source"]) for c in costed["loops"]] == [("0:1", 10, "constant"),
                                                                               ("0:2", 10, "constant")]
    assert [(c["node"], c["trips"]) for c in ran["loops"]] == [("0:1", 10), ("0:2", 10)]


def test_cost_only_text_says_nothing_ran(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["benchmark", model, "--hw", "edgetpu_usb", "--num-runs", "0"]) == 0
    text = capsys.readouterr().out
    assert "Cost only (--num-runs 0): analysed shapes and work in" in text
    assert "the NumPy interpreter did not run" in text
    assert "Simulated latency in µs:" in text and "Host alone (kryo385_cpu, simulated):" in text
    assert "Running benchmark" not in text and "count=" not in text


def test_cost_only_loop_without_a_known_count_says_how_to_give_it(tmp_path, capsys):
    """A loop only a run could count (its counter is a model input): one line naming the node and --loop-trips."""
    from support import counter_loop_model

    model = tmp_path / "counter.tflite"
    model.write_bytes(counter_loop_model(None, 5))
    assert main(["benchmark", str(model), "--num-runs", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("accelsim benchmark: error:")
    assert "subgraph 0 node 0 (WHILE): the trip count is unknown" in err and "--loop-trips" in err
    assert main(["benchmark", str(model), "--num-runs", "0", "--loop-trips", "0:0=3", "--json"]) == 0
    loops = json.loads(capsys.readouterr().out)["loops"]
    assert [(c["node"], c["trips"], c["source"]) for c in loops] == [("0:0", 3, "override")]
