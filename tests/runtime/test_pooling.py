"""AVERAGE_POOL_2D and MAX_POOL_2D against LiteRT: float32, int8 and uint8, every option."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from op_models import ACTIVATIONS, pool_model
from support import Spec, check_against_litert, single_op_model

from accelsim.runtime.errors import KernelError, OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.resolver import BuiltinOpResolver

SAME, VALID = 0, 1
WINDOWS = [(2, 2, 2, 2), (3, 3, 1, 1), (3, 2, 2, 1), (5, 5, 3, 3), (1, 1, 1, 1), (7, 7, 1, 1)]


@pytest.mark.slow
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("typ", ["FLOAT32", "INT8", "UINT8"])
@pytest.mark.parametrize("padding", [SAME, VALID])
@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: "f{}x{}s{}x{}".format(*w))
def test_pool_matches_litert(op, typ, padding, window):
    # Odd spatial sizes, batch 2: SAME pads unevenly and edge windows count fewer taps.
    outs = check_against_litert(pool_model(op, typ, (2, 9, 7, 5), window, padding))
    assert outs[0].dtype == np.dtype(typ.lower())


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("typ", ["FLOAT32", "INT8", "UINT8"])
@pytest.mark.parametrize("activation", ["RELU", "RELU_N1_TO_1", "RELU6"])
def test_pool_fused_activation(op, typ, activation):
    outs = check_against_litert(pool_model(op, typ, (1, 8, 8, 3), (3, 3, 2, 2), SAME, activation))
    if typ == "FLOAT32":
        lo, hi = {"RELU": (0, np.inf), "RELU_N1_TO_1": (-1, 1), "RELU6": (0, 6)}[activation]
        assert outs[0].min() >= lo and outs[0].max() <= hi


def test_int8_average_rounds_half_away_from_zero():
    # Windows of two values: -1.5 -> -2, 1.5 -> 2, -0.5 -> -1, 2.5 -> 3 (integer_ops/pooling.h).
    model = pool_model("AVERAGE_POOL_2D", "INT8", (1, 2, 4, 1), (2, 1, 2, 1), VALID)
    x = np.array([-1, 1, 0, 2, -2, 2, -1, 3], np.int8).reshape(1, 2, 4, 1)
    ours = check_against_litert(model, [x])
    np.testing.assert_array_equal(ours[0].reshape(-1), [-2, 2, -1, 3])


def test_int8_average_counts_only_in_bounds_taps():
    # A 3x3 SAME window at a corner averages 4 values, not 9.
    model = pool_model("AVERAGE_POOL_2D", "INT8", (1, 3, 3, 1), (3, 3, 1, 1), SAME)
    x = np.full((1, 3, 3, 1), 100, np.int8)
    ours = check_against_litert(model, [x])
    assert np.all(ours[0] == 100)


def test_int8_pool_with_large_channel_count():
    # More than the optimized kernel's 256-channel tranche.
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        check_against_litert(pool_model(op, "INT8", (1, 5, 5, 300), (2, 2, 2, 2), SAME))


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("typ", ["FLOAT32", "INT8"])
def test_window_larger_than_input(op, typ):
    # SAME with a 4x4 window over a 2x2 image: every window is mostly padding.
    check_against_litert(pool_model(op, typ, (1, 2, 2, 2), (4, 4, 1, 1), SAME))


def test_random_windows_sweep():
    rng = np.random.default_rng(7)
    for op, typ in itertools.product(["AVERAGE_POOL_2D", "MAX_POOL_2D"], ["INT8", "FLOAT32"]):
        for _ in range(6):
            window = tuple(int(v) for v in rng.integers(1, 5, 4))
            shape = tuple(int(rng.integers(lo, hi)) for lo, hi in ((1, 3), (4, 12), (4, 12), (1, 9)))
            model = pool_model(op, typ, shape, window, int(rng.integers(0, 2)))
            check_against_litert(model, seed=int(rng.integers(99)))


def test_registered_versions():
    resolver = BuiltinOpResolver()
    # op_version.cc: v2 adds int8; v3 (int16) is not implemented.
    assert resolver.builtin_versions("AVERAGE_POOL_2D") == [1, 2]
    assert resolver.builtin_versions("MAX_POOL_2D") == [1, 2]
    model = single_op_model("AVERAGE_POOL_2D", [Spec((1, 4, 4, 1), "INT16", scale=1.0)],
                            [Spec((1, 2, 2, 1), "INT16", scale=1.0)], version=3, padding=VALID, filter_height=2,
                            filter_width=2, stride_h=2, stride_w=2)
    with pytest.raises(OpResolutionError, match="AVERAGE_POOL_2D' version '3'"):
        Interpreter(model_content=model)


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


@pytest.mark.parametrize(("options", "message"), [
    ({"stride_h": 0}, "stride 0"),
    ({"filter_width": 0}, "filter size"),
    ({"padding": 7}, "unknown padding 7"),
])
def test_bad_options_raise(options, message):
    opts = dict(padding=SAME, filter_height=2, filter_width=2, stride_h=1, stride_w=1) | options
    model = single_op_model("MAX_POOL_2D", [Spec((1, 4, 4, 1))], [Spec((1, 4, 4, 1))], **opts)
    with pytest.raises(KernelError, match=message):
        _prepare(model)


def test_non_4d_input_raises():
    model = single_op_model("AVERAGE_POOL_2D", [Spec((4, 4, 1))], [Spec((2, 2, 1))], padding=VALID,
                            filter_height=2, filter_width=2, stride_h=2, stride_w=2)
    with pytest.raises(KernelError, match="must be 4-D"):
        _prepare(model)


def test_type_mismatch_raises():
    model = single_op_model("MAX_POOL_2D", [Spec((1, 4, 4, 1))], [Spec((1, 2, 2, 1), "INT8", scale=1.0)],
                            padding=VALID, filter_height=2, filter_width=2, stride_h=2, stride_w=2)
    with pytest.raises(KernelError, match="FLOAT32 differs from output type INT8"):
        _prepare(model)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_window_larger_than_valid_input_gives_empty_output(op):
    # pooling.cc ignores ComputePaddingHeightWidth's failure: the output is [1, 0, 0, 1], not an error.
    model = single_op_model(op, [Spec((1, 3, 3, 1))], [Spec((1, 1, 1, 1))], padding=VALID,
                            filter_height=5, filter_width=5, stride_h=1, stride_w=1)
    ours = check_against_litert(model)
    assert ours[0].shape == (1, 0, 0, 1)


def test_valid_window_too_tall_with_stride_gives_empty_output():
    model = single_op_model("AVERAGE_POOL_2D", [Spec((1, 3, 9, 2), "INT8", scale=0.1)],
                            [Spec((1, 1, 1, 2), "INT8", scale=0.1)], version=2, padding=VALID,
                            filter_height=6, filter_width=2, stride_h=2, stride_w=2)
    assert check_against_litert(model)[0].shape == (1, 0, 4, 2)


def test_int8_relu6_clamp_uses_float32_division():
    # 6 / scale is 101.4999999 in double but 101.5f in float32: LiteRT clamps at -128 + 102 = -26.
    scale = 0.05911330133676529
    model = single_op_model("MAX_POOL_2D", [Spec((1, 4, 4, 1), "INT8", scale=scale, zero_point=-128)],
                            [Spec((1, 4, 4, 1), "INT8", scale=scale, zero_point=-128)], version=2, padding=VALID,
                            filter_height=1, filter_width=1, stride_h=1, stride_w=1,
                            fused_activation_function=ACTIVATIONS["RELU6"])
    x = np.full((1, 4, 4, 1), 120, np.int8)
    assert check_against_litert(model, [x])[0].max() == -26


@pytest.mark.parametrize("activation", ["NONE", "RELU6"])
def test_float_max_pool_nan_and_infinities(activation):
    # std::max from lowest(): NaN never wins, an all-NaN window gives lowest, -inf never goes below it.
    model = pool_model("MAX_POOL_2D", "FLOAT32", (1, 4, 6, 2), (2, 2, 2, 2), VALID, activation)
    x = np.random.default_rng(3).standard_normal((1, 4, 6, 2)).astype(np.float32)
    x[0, 0:2, 0:2, 0] = np.nan  # a whole window
    x[0, 0, 2, 1] = np.nan  # one tap of a window
    x[0, 2:4, 2:4, 1] = -np.inf
    x[0, 2, 4, 0] = np.inf
    ours = check_against_litert(model, [x])[0]
    assert not np.isnan(ours).any()


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("typ", ["FLOAT32", "INT8", "UINT8"])
def test_padded_pool_reads_only_the_current_input(op, typ):
    # The plan keeps a padded copy of the input between invokes: each result depends on its own input.
    model = pool_model(op, typ, (1, 6, 5, 3), (3, 3, 2, 2), SAME)
    interpreter = Interpreter(model_content=model)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    out_index = interpreter.get_output_details()[0]["index"]
    rng = np.random.default_rng(11)
    dtype = np.dtype(typ.lower())
    inputs = [(rng.standard_normal((1, 6, 5, 3)) * 3).astype(dtype) if typ == "FLOAT32"
              else rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (1, 6, 5, 3), endpoint=True).astype(dtype)
              for _ in range(2)]
    results = []
    for x in (inputs[0], inputs[1], inputs[0]):
        interpreter.set_tensor(details[0]["index"], x)
        interpreter.invoke()
        results.append(interpreter.get_tensor(out_index).copy())
    np.testing.assert_array_equal(results[0], results[2])
    check_against_litert(model, [inputs[1]])
    assert not np.array_equal(results[0], results[1])


def test_int8_average_of_extreme_values():
    # The whole sum range of a 2x2 window: -512 and 508 go through the rounding table's ends.
    model = pool_model("AVERAGE_POOL_2D", "INT8", (1, 2, 4, 1), (2, 2, 2, 2), VALID)
    x = np.array([-128, -128, 127, 127, -128, -128, 127, 127], np.int8).reshape(1, 2, 4, 1)
    ours = check_against_litert(model, [x])
    np.testing.assert_array_equal(ours[0].reshape(-1), [-128, 127])


@pytest.mark.parametrize("activation", ["NONE", "RELU"])
def test_float_average_pool_clamps_infinity_to_float_max(activation):
    # kernel_util.h: NONE and RELU clamp at numeric_limits<float>::max(); NaN passes through the clamp.
    model = pool_model("AVERAGE_POOL_2D", "FLOAT32", (1, 4, 4, 2), (2, 2, 2, 2), VALID, activation)
    x = np.ones((1, 4, 4, 2), np.float32)
    x[0, 0, 0, 0] = np.inf
    x[0, 2, 2, 1] = -np.inf
    x[0, 0, 2, 1] = np.nan
    ours = check_against_litert(model, [x])[0]
    assert ours[0, 0, 0, 0] == np.finfo(np.float32).max
