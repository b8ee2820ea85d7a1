"""The interpreter benchmark's measuring parts run and count what they claim (no timing is asserted)."""

import numpy as np
import pytest

from accelsim.runtime import Interpreter
from benchmarks.interpreter import FIXTURES, op_profile, time_invoke


def test_op_profile_counts_kernel_calls_per_invoke_including_loop_bodies():
    _, rows = op_profile(FIXTURES / "sparse_float.tflite", min_time=0.0)
    assert [(op, calls) for op, _, calls in rows] == [("FULLY_CONNECTED", 3.0)]
    # lstm_gru_float: two WHILE nodes in the main graph, their bodies run 10 times each.
    _, rows = op_profile(FIXTURES / "lstm_gru_float.tflite", min_time=0.0)
    calls = {op: c for op, _, c in rows}
    assert calls["WHILE"] == 2.0
    assert calls["LESS"] == 44.0  # two conditions per cond evaluation, 11 evaluations per loop
    assert all(seconds > 0 for _, seconds, _ in rows)


def test_time_invoke_runs_at_least_the_requested_invokes():
    it = Interpreter(model_path=FIXTURES / "sparse_float.tflite")
    counted = []
    original = it.invoke

    def counting():
        counted.append(1)
        original()

    it.invoke = counting
    seconds = time_invoke(it, [np.zeros((1, 64), np.float32)], runs=7, warmup=2)
    assert len(counted) == 9 and seconds > 0


@pytest.mark.parametrize("name", ["lstm_gru_float", "transformer_block_float"])
def test_fusion_floor_networks_compute_the_fixtures_they_time(name):
    """A hand-fused network is a bound for a model only if it computes that model's outputs."""
    from benchmarks.fusion_floor import NETWORKS

    path = FIXTURES / f"{name}.tflite"
    it = Interpreter(model_path=path)
    it.allocate_tensors()
    detail = it.get_input_details()[0]
    x = np.random.default_rng(3).standard_normal(detail["shape"]).astype(np.float32)
    it.set_tensor(detail["index"], x)
    it.invoke()
    expected = it.get_tensor(it.get_output_details()[0]["index"])
    got = NETWORKS[name](path)(x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * np.abs(expected).max())


def test_cost_vs_litert_simulates_on_the_shipped_host_and_reports_loops():
    from benchmarks.cost_vs_litert import Row, simulated, spread

    latency_us, loops = simulated(FIXTURES / "lstm_gru_float.tflite", "host_x86")
    assert latency_us > 0 and loops == "0:1: 10 (constant), 0:2: 10 (constant)"
    rows = [Row("a", 10.0, 12.0, 5.0, ""), Row("b", 10.0, 11.0, 20.0, "")]
    assert [r.ratio for r in rows] == [0.5, 2.0] and spread(rows) == 4.0


def test_cost_vs_litert_times_litert_by_thread_cpu_time():
    from benchmarks.cost_vs_litert import litert_interpreter, round_median

    it = litert_interpreter(FIXTURES / "sparse_float.tflite", warmup=1)
    assert round_median(it, runs=3, min_time=0.0) > 0


def test_dse_benchmark_runs_a_tiny_grid_through_every_path(capsys):
    """benchmarks/dse.py --tiny: the executor, the fresh paths and the from-file table all run (no timing asserted)."""
    from benchmarks.dse import RESNET, main

    assert main(["--tiny", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "4 points (2 x 2: compute.rows, compute.cols)" in out and "0 of the new run's points failed" in out
    for label in ("full kernel prepare", "(shapes only)", "new: one analysis per batch"):
        assert label in out
    assert "mobilenet_v2_100_224_int8    host_cpu+edgetpu_usb" in out
    assert ("resnet152_int8" in out) and (RESNET.exists() or "build it once with" in out)


def test_cost_policy_benchmark_compares_both_choices_and_never_loses():
    from benchmarks.cost_policy import FIXTURES as MODELS
    from benchmarks.cost_policy import compare

    row = compare(MODELS / "interleaved_int8.tflite", "hexagon_dsp")
    assert (row.moved, row.partitions) == (2, 2)  # both DSP partitions cost more than the host alone
    assert row.cost_us < row.tflite_us
    kept = compare(MODELS / "mobilenet_v2_100_224_int8.tflite", "edgetpu_usb")
    assert kept.moved == 0 and kept.cost_us == kept.tflite_us  # the Edge TPU pays for itself there


def test_the_host_x86_fit_returns_to_the_rates_that_explain_the_times():
    """fit_host_x86's descent, without timing anything: 'measured' times simulated with the shipped rates, a
    start with the int8 row cost 30 cycles off (20-30% slower), and the fit finds the shipped values again."""
    from accelsim.config import System, load_hardware
    from benchmarks.fit_host_x86 import ROOT, analyze, ceiling, current, fit, latencies, with_values

    hw = load_hardware(ROOT / "hw_configs" / "host_x86.yaml")
    analyses = [analyze(str(FIXTURES / f"{m}.tflite"), System(hw, ())) for m in
                ("interleaved_int8", "transformer_block_int8", "dilated_cnn_int8")]
    shipped = current(hw)
    measured = latencies(analyses, hw)
    start = with_values(hw, {**shipped, "compute.row_cycles.int8": shipped["compute.row_cycles.int8"] + 30})
    assert min(s / m for s, m in zip(latencies(analyses, start), measured)) > 1.05
    assert fit(analyses, start, measured) == shipped
    assert ceiling("compute.vector_per_cycle.float32", hw) == 32 == 512 // 32 * 2  # two ports of 16 lanes


def test_the_coral_fit_reruns_to_the_shipped_values():
    """cost_vs_coral.py --fit from the committed summaries (no TensorFlow): the YAMLs hold its shape and links."""
    from accelsim.config import load_system
    from accelsim.experiment import SHIPPED_CONFIGS
    from benchmarks.cost_vs_coral import CONFIGS, FIT_ROWS, ROWS, SUMMARIES, fit_lines, row_set

    assert sorted(p.name for p in SUMMARIES.glob("*.xz")) == sorted(f"{k}_int8.tflite.xz" for k in FIT_ROWS)
    assert [r.key for r in ROWS if row_set(r.key) == "held-out"] == ["inception_resnet_v2"]
    systems = {c: load_system(SHIPPED_CONFIGS / "host_cpu.yaml", [SHIPPED_CONFIGS / f"{c}.yaml"]) for c in CONFIGS}
    lines = fit_lines(systems)
    assert lines[-1] == "  the YAMLs hold the fit: yes", "\n".join(lines)


def test_a_coral_summary_simulates_exactly_as_its_model():
    """What --summarize commits (weights zeroed, quantization constant) costs the same as the model, and is small."""
    import lzma

    from accelsim.config import load_system
    from accelsim.experiment import SHIPPED_CONFIGS
    from accelsim.runtime.read import load_model
    from accelsim.runtime.write import save_model
    from accelsim.system import simulate_model
    from benchmarks.cost_vs_coral import summary_model

    model = load_model(str(FIXTURES / "mobilenet_v2_100_224_int8.tflite"))
    summary = save_model(summary_model(model))
    assert len(lzma.compress(summary)) < len((FIXTURES / "mobilenet_v2_100_224_int8.tflite").read_bytes()) / 20
    for config in ("edgetpu_usb", "edgetpu_pcie", "hexagon_dsp"):
        system = load_system(SHIPPED_CONFIGS / "host_cpu.yaml", [SHIPPED_CONFIGS / f"{config}.yaml"])
        assert simulate_model(load_model(summary), system).latency == simulate_model(model, system).latency


def test_calibration_tables_put_held_out_rows_first_and_say_when_there_are_none():
    from benchmarks.calibration import FIT, HELD_OUT, error_lines

    lines = error_lines("x / ref", [(FIT, 1.0), (HELD_OUT, 2.0), (FIT, 0.5), (HELD_OUT, 0.5)])
    assert lines == ["x / ref: held-out rows (2): geometric-mean error 100%, worst 100%",
                     "x / ref: fit rows (2): geometric-mean error 41%, worst 50%"]
    assert error_lines("y / ref", [(FIT, 1.1)]) == [
        "y / ref: no held-out row yet: every row informed a number, so none is an independent check",
        "y / ref: fit rows (1): geometric-mean error 10%, worst 10%"]
