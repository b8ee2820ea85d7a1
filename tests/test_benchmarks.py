"""The interpreter benchmark's measuring parts run and count what they claim (no timing is asserted)."""

import numpy as np
import pytest

from benchmarks.interpreter import FIXTURES, op_profile, time_invoke
from runtime import Interpreter


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
