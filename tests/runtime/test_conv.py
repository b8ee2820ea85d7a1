"""CONV_2D and DEPTHWISE_CONV_2D against LiteRT: float32, int8 (per-tensor, per-channel) and uint8."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from op_models import ACTIVATIONS, conv_model, out_hw
from support import (
    FIXTURES,
    Spec,
    assert_close_to_reference,
    check_against_litert,
    const,
    fixture_node_models,
    prepare_error,
    random_inputs,
    run_litert,
    run_ours,
    single_op_model,
)

from accelsim.runtime.errors import KernelError, OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.kernels.conv.geometry import SAME, VALID, out_size_and_padding
from accelsim.runtime.kernels.conv.stage import Requantizer
from accelsim.runtime.numerics import NumericsProfile
from accelsim.runtime.quant import multiply_by_quantized_multiplier_half_up, quantize_multipliers
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

KINDS = ("float", "int8_per_channel", "int8_per_tensor")


def check_without_bias(op, in_shape, filter_shape, kind, **kw):
    """LiteRT's builtin conv kernels require the bias input; compare ours without it to LiteRT with zeros."""
    no_bias = conv_model(op, in_shape, filter_shape, kind, bias="none", **kw)
    zero_bias = conv_model(op, in_shape, filter_shape, kind, bias="zero", **kw)
    inputs = random_inputs(Interpreter(model_content=no_bias).get_input_details(), seed=3)
    assert_close_to_reference(run_ours(no_bias, inputs), run_litert(zero_bias, inputs))


# ---------------------------------------------------------------------------------------------
# CONV_2D


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("padding", [SAME, VALID])
def test_conv_geometry(padding, stride, dilation, kind):
    model = conv_model("CONV_2D", (2, 11, 9, 8), (12, 3, 3, 8), kind, padding=padding,
                       stride=(stride, stride), dilation=(dilation, dilation), seed=stride * 10 + dilation)
    out = check_against_litert(model)
    assert out[0].shape[0] == 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_conv_fused_activation(activation, kind):
    model = conv_model("CONV_2D", (1, 10, 10, 6), (16, 3, 3, 6), kind, activation=activation, seed=5)
    out = check_against_litert(model)[0]
    if activation != "NONE" and kind == "float":
        assert out.min() >= (-1 if activation == "RELU_N1_TO_1" else 0)


@pytest.mark.parametrize("kind", KINDS)
def test_conv_without_bias(kind):
    check_without_bias("CONV_2D", (1, 9, 9, 4), (8, 3, 3, 4), kind, padding=SAME, seed=11)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [*KINDS, "uint8"])
@pytest.mark.parametrize("in_shape, filter_shape, stride, padding", [
    ((1, 12, 10, 16), (24, 1, 1, 16), (1, 1), VALID),  # pointwise: no im2col copy
    ((1, 13, 11, 3), (8, 5, 3, 3), (2, 1), SAME),  # non-square kernel and strides
    ((2, 4, 5, 3), (4, 7, 7, 3), (1, 1), SAME),  # kernel larger than the input
    ((1, 9, 9, 5), (6, 3, 3, 5), (3, 2), VALID),  # strides that skip trailing rows
    ((1, 10, 10, 3), (5, 4, 4, 3), (1, 1), SAME),  # even kernel: odd total padding, the extra row after
    ((1, 9, 8, 3), (4, 2, 2, 3), (2, 2), SAME),
])
def test_conv_shapes(in_shape, filter_shape, stride, padding, kind):
    model = conv_model("CONV_2D", in_shape, filter_shape, kind, stride=stride, padding=padding, seed=7)
    check_against_litert(model)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [*KINDS, "uint8"])
@pytest.mark.parametrize("in_shape, filter_shape, stride, dilation, padding", [
    # Few input channels at unit strides: the patch matrix comes from channel planes (PlanarPatches).
    ((2, 12, 11, 3), (8, 3, 3, 3), (1, 1), (1, 1), SAME),
    ((1, 13, 12, 5), (6, 3, 2, 5), (1, 1), (2, 3), VALID),
    # ... and strided, for large outputs (one copy per tap, from the stride phase planes).
    ((1, 66, 64, 3), (8, 3, 3, 3), (2, 2), (1, 1), SAME),
    ((1, 70, 100, 2), (4, 3, 3, 2), (2, 3), (2, 1), VALID),
    # Many channels, dilated at unit strides: im2col filled phase by phase (Geometry.phases).
    ((1, 10, 9, 16), (8, 3, 3, 16), (1, 1), (2, 2), SAME),
    ((1, 11, 12, 12), (8, 3, 3, 12), (1, 1), (3, 2), VALID),
    # Many channels, strided: plain im2col over the padded input.
    ((1, 10, 9, 16), (8, 3, 3, 16), (2, 2), (1, 1), SAME),
])
def test_conv_patch_paths(in_shape, filter_shape, stride, dilation, padding, kind):
    model = conv_model("CONV_2D", in_shape, filter_shape, kind, stride=stride, dilation=dilation, padding=padding,
                       activation="RELU6", seed=sum(in_shape))
    out = check_against_litert(model)
    assert out[0].shape[1:3] == out_hw(in_shape[1:3], filter_shape[1:3], padding, stride, dilation)


@pytest.mark.parametrize("kind", [*KINDS, "uint8"])
def test_conv_planar_patches_are_rewritten_each_invoke(kind):
    # The plan reuses its padded planes and patch matrix: a second input must not see the first one's data.
    model = conv_model("CONV_2D", (1, 9, 8, 3), (4, 3, 3, 3), kind, seed=83)
    interpreter = Interpreter(model_content=model)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    first, second = random_inputs(details, seed=1), random_inputs(details, seed=2)
    for inputs in (first, second):
        ours = run_ours(model, inputs)
        interpreter.set_tensor(details[0]["index"], inputs[0])
        interpreter.invoke()
        np.testing.assert_array_equal(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]), ours[0])
    assert_close_to_reference(run_ours(model, second), run_litert(model, second))


@pytest.mark.parametrize("kind", KINDS)
def test_grouped_conv(kind):
    # Version 6: 12 input channels, filters of depth 4 -> 3 groups of 6 output channels. LiteRT runs
    # grouped int8 convolutions on the reference kernel, whose rounding differs from the optimized one.
    model = conv_model("CONV_2D", (2, 10, 9, 12), (18, 3, 3, 4), kind, version=6, seed=13)
    check_against_litert(model)


def test_conv_uint8_activation_and_batch():
    model = conv_model("CONV_2D", (3, 8, 8, 4), (10, 3, 3, 4), "uint8", activation="RELU6", stride=(2, 2), seed=17)
    check_against_litert(model)


def test_conv_int8_multiplier_above_one():
    # A tiny output scale makes input_scale * filter_scale / output_scale > 1: positive shifts.
    model = conv_model("CONV_2D", (1, 6, 6, 2), (4, 1, 1, 2), "int8_per_channel", out_scale_factor=0.002, seed=19)
    check_against_litert(model)


@pytest.mark.parametrize("op, filter_shape", [("CONV_2D", (6, 3, 3, 4)), ("DEPTHWISE_CONV_2D", (1, 3, 3, 8))])
@pytest.mark.parametrize("kind", ["float", "int8_per_tensor"])
def test_filter_given_at_run_time(op, filter_shape, kind):
    # A filter that is a graph input, not a constant: the GEMM operand is rebuilt at every invoke.
    model = load_model(conv_model(op, (1, 7, 7, 4), filter_shape, kind, seed=71))
    sg = model.subgraphs[0]
    w = sg.tensors[1]
    sg = dataclasses.replace(sg, tensors=(sg.tensors[0], dataclasses.replace(w, buffer=0), *sg.tensors[2:]),
                             inputs=(0, 1))
    check_against_litert(save_model(model.replace(subgraphs=(sg,))))


def test_conv_input_resized_to_larger_batch():
    model = conv_model("CONV_2D", (1, 7, 7, 3), (5, 3, 3, 3), "int8_per_channel", seed=23)
    x = np.random.default_rng(0).integers(-128, 128, (4, 7, 7, 3)).astype(np.int8)
    assert check_against_litert(model, [x])[0].shape == (4, 7, 7, 5)


@pytest.mark.parametrize("kind", ["float", "int8_per_channel"])
@pytest.mark.parametrize("code", [4, 5])  # TANH, SIGN_BIT
def test_conv_non_relu_fused_activation_is_ignored(code, kind):
    # CalculateActivationRange only knows the ReLU family: LiteRT leaves TANH / SIGN_BIT unapplied.
    model = load_model(conv_model("CONV_2D", (1, 6, 6, 3), (4, 3, 3, 3), kind, seed=53))
    op = model.subgraphs[0].operators[0]
    op = dataclasses.replace(op, options=op.options.replace(fused_activation_function=code))
    sg = dataclasses.replace(model.subgraphs[0], operators=(op,))
    check_against_litert(save_model(model.replace(subgraphs=(sg,))))


def test_conv_int8_activation_range_divides_in_float32():
    # Output scale 0.4: 1 / 0.4 is 2.5 in float32 but 2.4999999 in double; kernel_util.cc's
    # Quantize divides in float32, so RELU_N1_TO_1 clamps to [-3, 3].
    rng = np.random.default_rng(73)
    model = single_op_model(
        "CONV_2D",
        [Spec((1, 6, 6, 8), "INT8", scale=0.05, zero_point=0),
         const(rng.integers(-127, 128, (4, 1, 1, 8)).astype(np.int8), scale=(0.02,) * 4, zero_point=0),
         const(np.zeros(4, np.int32), scale=0.001)],
        [Spec((1, 6, 6, 4), "INT8", scale=0.4, zero_point=0)], version=3, stride_w=1, stride_h=1,
        fused_activation_function=ACTIVATIONS["RELU_N1_TO_1"])
    out = check_against_litert(model)[0]
    assert out.min() == -3 and out.max() == 3


def test_conv_int8_wide_reduction_uses_exact_float64_gemm():
    # 3*3*256 taps of +-127 weights: partial sums exceed 2**24, so float32 would not be exact.
    rng = np.random.default_rng(59)
    w = rng.choice(np.array([-127, 127], np.int8), (8, 3, 3, 256))
    model = single_op_model(
        "CONV_2D",
        [Spec((1, 5, 5, 256), "INT8", scale=0.02, zero_point=-3),
         const(w, scale=(0.004,) * 8, zero_point=0, quantized_dimension=0),
         const(rng.integers(-5000, 5000, 8).astype(np.int32), scale=0.02 * 0.004)],
        [Spec((1, 5, 5, 8), "INT8", scale=40.0, zero_point=1)], version=3, stride_w=1, stride_h=1)
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    assert it.primary.nodes[0].user_data.dtype == np.float64
    check_against_litert(model)


def test_requantizer_fast_path_matches_reference_formula():
    # The in-place hot path must equal quant.multiply_by_quantized_multiplier_half_up + zp + clamp,
    # including ruy's int32-overflow case for accumulators near 2**31.
    rng = np.random.default_rng(61)
    real = np.array([0.9, 0.3, 1e-3, 2.5e-6, 0.99 * 2.0**-29, 1e-9])  # 0.99 * 2**-29 overflows near 2**31
    mult, shift = quantize_multipliers(real)
    acc = np.concatenate([rng.integers(-2**31, 2**31, (500, 6)), rng.integers(-300, 300, (500, 6)),
                          np.full((1, 6), 2**31 - 1), np.full((1, 6), -2**31)])
    rq = Requantizer(mult, shift, 7, -128, 127, np.dtype(np.int8), multiply_by_quantized_multiplier_half_up)
    expected = np.clip(multiply_by_quantized_multiplier_half_up(acc, mult, shift) + 7, -128, 127)
    assert np.array_equal(rq(acc.copy()), expected)


@pytest.mark.parametrize("dtype, zero_point, act", [(np.int8, 7, (-128, 127)), (np.int8, -20, (-20, 90)),
                                                    (np.uint8, 130, (0, 255)), (np.uint8, 12, (12, 200))])
def test_exact_stage_matches_requantizer(dtype, zero_point, act):
    # The folded float64 stage, on both of its clamp paths (float64, and int16 for large outputs),
    # equals the int64 Requantizer on every accumulator within its bounds, negative ones included.
    rng = np.random.default_rng(int(zero_point) + 200)
    channels, pixels = 16, 2048
    real = rng.uniform(0.0005, 0.01, channels)
    mult, shift = quantize_multipliers(real)
    rq = Requantizer(mult, shift, zero_point, *act, np.dtype(dtype), multiply_by_quantized_multiplier_half_up,
                     acc_bound=43000.0)
    bias = rng.integers(-3000, 3000, channels)
    bounds = np.full(channels, 40000.0)
    acc = rng.integers(-40000, 40001, (pixels, channels))
    acc[:3] = [[-40000] * channels, [40000] * channels, [0] * channels]
    expected = rq(acc + bias)
    for count in (pixels, 64):  # 32768 values take the int16 clamp, 1024 the float64 one
        stage = rq.exact_stage(bias, bounds, count)
        assert stage is not None and stage.narrow and stage.shift is None
        got = stage(acc[:count].astype(np.float32)).reshape(count, channels)
        np.testing.assert_array_equal(got, expected[:count])
        assert got.dtype == dtype


def test_large_int8_output_against_litert():
    # 16384 output values or more take ExactStage's int16 clamp.
    for kind in ("int8_per_channel", "uint8"):
        model = conv_model("CONV_2D", (1, 32, 32, 16), (24, 1, 1, 16), kind, activation="RELU6", seed=97)
        check_against_litert(model)


# ---------------------------------------------------------------------------------------------
# DEPTHWISE_CONV_2D


@pytest.mark.slow
@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("padding", [SAME, VALID])
def test_depthwise_geometry(padding, stride, dilation, kind, multiplier):
    model = conv_model("DEPTHWISE_CONV_2D", (2, 13, 11, 8), (1, 3, 3, 8 * multiplier), kind, padding=padding,
                       stride=(stride, stride), dilation=(dilation, dilation), seed=stride + 3 * dilation)
    check_against_litert(model)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_depthwise_fused_activation(activation, kind):
    model = conv_model("DEPTHWISE_CONV_2D", (1, 12, 12, 16), (1, 3, 3, 16), kind, activation=activation, seed=29)
    check_against_litert(model)


@pytest.mark.parametrize("kind", KINDS)
def test_depthwise_without_bias(kind):
    check_without_bias("DEPTHWISE_CONV_2D", (1, 9, 9, 4), (1, 3, 3, 8), kind, seed=31)


@pytest.mark.parametrize("kind", [*KINDS, "uint8"])
@pytest.mark.parametrize("in_shape, filter_shape, stride, padding", [
    ((1, 15, 13, 6), (1, 5, 5, 6), (2, 2), SAME),
    ((2, 9, 12, 3), (1, 3, 5, 9), (1, 2), VALID),  # multiplier 3, non-square
    ((1, 8, 8, 32), (1, 3, 3, 32), (2, 2), SAME),  # the MobileNet downsampling shape
])
def test_depthwise_shapes(in_shape, filter_shape, stride, padding, kind):
    model = conv_model("DEPTHWISE_CONV_2D", in_shape, filter_shape, kind, stride=stride, padding=padding, seed=37)
    check_against_litert(model)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [*KINDS, "uint8"])
@pytest.mark.parametrize("in_shape, filter_shape, stride, dilation, padding", [
    ((1, 14, 13, 8), (1, 3, 3, 8), (3, 3), (2, 2), SAME),  # kernel columns 0, 2, 4 over stride 3: a sparse tap grid
    ((1, 9, 11, 8), (1, 1, 1, 8), (2, 2), (1, 1), VALID),  # 1x1 kernel, strided
    ((2, 12, 15, 4), (1, 2, 4, 8), (1, 3), (1, 1), SAME),  # even kernel widths over stride 3, multiplier 2
    ((1, 17, 19, 6), (1, 5, 5, 6), (1, 1), (3, 2), SAME),
])
def test_depthwise_tap_layouts(in_shape, filter_shape, stride, dilation, padding, kind):
    model = conv_model("DEPTHWISE_CONV_2D", in_shape, filter_shape, kind, stride=stride, dilation=dilation,
                       padding=padding, seed=sum(filter_shape))
    out = check_against_litert(model)
    assert out[0].shape[1:3] == out_hw(in_shape[1:3], filter_shape[1:3], padding, stride, dilation)


@pytest.mark.parametrize("kind", ["float", "int8_per_channel"])
def test_depthwise_scratch_is_rewritten_each_invoke(kind):
    # The plan keeps its padded input between invokes: results must depend on the current input only.
    model = conv_model("DEPTHWISE_CONV_2D", (1, 7, 9, 8), (1, 3, 3, 8), kind, stride=(2, 2), seed=89)
    interpreter = Interpreter(model_content=model)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    out_index = interpreter.get_output_details()[0]["index"]
    results = []
    for seed in (1, 2, 1):
        inputs = random_inputs(details, seed=seed)
        interpreter.set_tensor(details[0]["index"], inputs[0])
        interpreter.invoke()
        results.append(interpreter.get_tensor(out_index).copy())
        assert_close_to_reference([results[-1]], run_litert(model, inputs))
    np.testing.assert_array_equal(results[0], results[2])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dilation", [1, 2])
def test_depthwise_many_channels(dilation, kind):
    # Many channels: each tap's output rows are long runs of out_w * 96 values.
    model = conv_model("DEPTHWISE_CONV_2D", (1, 11, 10, 96), (1, 3, 3, 96), kind, dilation=(dilation, dilation),
                       seed=67)
    check_against_litert(model)


@pytest.mark.parametrize("kind", ["int8_per_channel", "uint8"])
@pytest.mark.parametrize("in_shape, filter_shape", [
    ((1, 9, 9, 6), (1, 3, 3, 6)),  # fewer than 8 channels: all through the scalar output stage
    ((1, 9, 9, 12), (1, 3, 3, 12)),  # 8 vectorized + 4 scalar channels
    ((1, 9, 9, 3), (1, 3, 3, 9)),  # multiplier 3: 8 + 1
    ((2, 7, 5, 3), (1, 3, 3, 3)),  # uint8: 15 values per row, the last 3 scalar
    ((1, 4, 23, 200), (1, 3, 3, 200)),  # uint8: rows cut into accumulator chunks of 10 pixels
])
def test_depthwise_output_stage_paths(in_shape, filter_shape, kind):
    # LiteRT's x86 depthwise output stage rounds differently in its vector code and its scalar tail.
    model = conv_model("DEPTHWISE_CONV_2D", in_shape, filter_shape, kind, seed=43)
    check_against_litert(model)


@pytest.mark.parametrize("kind", ["int8_per_channel", "uint8"])
def test_depthwise_multiplier_above_one(kind):
    model = conv_model("DEPTHWISE_CONV_2D", (1, 6, 6, 16), (1, 3, 3, 16), kind, out_scale_factor=0.002, seed=47)
    check_against_litert(model)


def test_depthwise_channel_count_comes_from_shapes():
    # depthwise_conv.cc ignores options.depth_multiplier and derives it from the filter's channels.
    good = conv_model("DEPTHWISE_CONV_2D", (1, 6, 6, 3), (1, 3, 3, 6), "float", seed=41)
    model = load_model(good)
    op = model.subgraphs[0].operators[0]
    bad_options = dataclasses.replace(op, options=op.options.replace(depth_multiplier=5))
    sg = dataclasses.replace(model.subgraphs[0], operators=(bad_options,))
    out = check_against_litert(save_model(model.replace(subgraphs=(sg,))))
    assert out[0].shape == (1, 6, 6, 6)


# ---------------------------------------------------------------------------------------------
# Error paths: prepare fails with a message naming the problem.


def test_conv_rejects_wrong_input_rank():
    model = single_op_model("CONV_2D", [Spec((9, 9, 3)), const(np.zeros((4, 3, 3, 3), np.float32)),
                                        const(np.zeros(4, np.float32))], [Spec((1, 9, 9, 4))], stride_w=1, stride_h=1)
    assert "input must be 4-D" in prepare_error(model)


def test_conv_rejects_channel_mismatch():
    model = single_op_model("CONV_2D", [Spec((1, 9, 9, 5)), const(np.zeros((4, 3, 3, 3), np.float32)),
                                        const(np.zeros(4, np.float32))], [Spec((1, 9, 9, 4))], stride_w=1, stride_h=1)
    assert "input has 5 channels but the filter expects 3" in prepare_error(model)


def test_conv_rejects_wrong_bias_size():
    model = single_op_model("CONV_2D", [Spec((1, 9, 9, 3)), const(np.zeros((4, 3, 3, 3), np.float32)),
                                        const(np.zeros(5, np.float32))], [Spec((1, 9, 9, 4))], stride_w=1, stride_h=1)
    assert "bias has 5 elements, expected 4" in prepare_error(model)


def test_conv_rejects_zero_stride():
    model = single_op_model("CONV_2D", [Spec((1, 9, 9, 3)), const(np.zeros((4, 3, 3, 3), np.float32)),
                                        const(np.zeros(4, np.float32))], [Spec((1, 9, 9, 4))])
    assert "strides must be positive" in prepare_error(model)


def test_conv_rejects_hybrid_weights():
    model = single_op_model("CONV_2D", [Spec((1, 9, 9, 3)), const(np.ones((4, 3, 3, 3), np.int8), scale=0.1),
                                        const(np.zeros(4, np.float32))], [Spec((1, 9, 9, 4))],
                            version=1, stride_w=1, stride_h=1)
    assert "hybrid" in prepare_error(model)


def test_conv_rejects_per_channel_scales_on_wrong_axis():
    model = conv_model("CONV_2D", (1, 5, 5, 4), (4, 3, 3, 4), "int8_per_channel")
    parsed = load_model(model)
    sg = parsed.subgraphs[0]
    w = sg.tensors[1]
    moved = dataclasses.replace(w, quantization=dataclasses.replace(w.quantization, quantized_dimension=3))
    sg = dataclasses.replace(sg, tensors=(sg.tensors[0], moved, *sg.tensors[2:]))
    assert "quantized along dimension 0" in prepare_error(save_model(parsed.replace(subgraphs=(sg,))))


def test_conv_rejects_asymmetric_int8_weights():
    w = const(np.ones((4, 3, 3, 3), np.int8), scale=0.1, zero_point=3)
    model = single_op_model("CONV_2D", [Spec((1, 5, 5, 3), "INT8", scale=0.1, zero_point=0), w,
                                        const(np.zeros(4, np.int32), scale=0.01)],
                            [Spec((1, 5, 5, 4), "INT8", scale=0.5, zero_point=0)], version=3, stride_w=1, stride_h=1)
    assert "symmetric" in prepare_error(model)


def test_depthwise_rejects_bad_filter():
    model = single_op_model("DEPTHWISE_CONV_2D", [Spec((1, 9, 9, 4)), const(np.zeros((1, 3, 3, 6), np.float32)),
                                                  const(np.zeros(6, np.float32))], [Spec((1, 9, 9, 6))],
                            stride_w=1, stride_h=1, depth_multiplier=1)
    assert "not a multiple of the input's 4 channels" in prepare_error(model)
    model = single_op_model("DEPTHWISE_CONV_2D", [Spec((1, 9, 9, 4)), const(np.zeros((2, 3, 3, 4), np.float32)),
                                                  const(np.zeros(4, np.float32))], [Spec((1, 9, 9, 4))],
                            stride_w=1, stride_h=1, depth_multiplier=1)
    assert "[1, height, width, out_channels]" in prepare_error(model)


def test_unimplemented_versions_are_not_registered():
    # Version 2 of CONV_2D is hybrid (float input, int8 weights): not implemented, so not resolvable.
    model = single_op_model("CONV_2D", [Spec((1, 9, 9, 3)), const(np.zeros((4, 3, 3, 3), np.float32)),
                                        const(np.zeros(4, np.float32))], [Spec((1, 9, 9, 4))],
                            version=2, stride_w=1, stride_h=1)
    with pytest.raises(OpResolutionError, match="version '2'"):
        Interpreter(model_content=model)


# ---------------------------------------------------------------------------------------------
# Converter-produced nodes: every conv of the fixture models, cut out as a one-node model.


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v2_035_96_int8", "mobilenet_v2_035_96_float", "dilated_cnn_int8",
                                  "dilated_cnn_float", "interleaved_int8", "interleaved_float", "segmentation_float"])
def test_fixture_conv_nodes(name):
    path = FIXTURES / f"{name}.tflite"
    count = 0
    for i, node_model in enumerate(fixture_node_models(path, {"CONV_2D", "DEPTHWISE_CONV_2D"})):
        check_against_litert(node_model, seed=i)
        count += 1
    assert count > 0


def run_node(model: bytes, inputs, profile: NumericsProfile | None = None, reference: bool = False, runs: int = 1):
    """Our output of a one-node model and the node's plan, with `profile` asked for the node as a delegate does."""
    interpreter = Interpreter(model_content=model, reference=reference)
    if profile is not None:
        interpreter.subgraph(0).context.set_numerics([0], profile)
    interpreter.allocate_tensors()
    for _ in range(runs):
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], inputs[0])
        interpreter.invoke()
    out = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    return out, interpreter.subgraph(0).nodes[0].user_data


DECLARED = NumericsProfile(rounding="half_away_from_zero")


@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_raw_sums_match_litert_and_a_declared_rounding_takes_the_generic_stage(stride):
    # Quantized depthwise taps may sum raw inputs (the input zero point folded into the bias, padding
    # holding the zero point) under LiteRT's rounding; a declared rounding has no precomputed stage, and
    # the generic stage (zero point subtracted in the taps) must equal the reference with that rounding.
    model = conv_model("DEPTHWISE_CONV_2D", (1, 5, 6, 8), (1, 3, 3, 8), "int8_per_channel", stride=(stride, stride),
                       seed=97)
    inputs = random_inputs(Interpreter(model_content=model).get_input_details(), seed=5)
    out, plan = run_node(model, inputs)
    assert plan.folded is not None and plan.folded.any()
    np.testing.assert_array_equal(out, run_litert(model, inputs)[0])
    out, plan = run_node(model, inputs, DECLARED)
    assert plan.folded is None and plan.stage is None
    np.testing.assert_array_equal(out, run_node(model, inputs, DECLARED, reference=True)[0])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["int8_per_channel", "int8_per_tensor", "uint8"])
@pytest.mark.parametrize(("in_shape", "filter_shape", "stride", "dilation"), [
    ((1, 6, 7, 40), (12, 1, 1, 40), (1, 1), (1, 1)),   # pointwise: no padding, a plain cast
    ((1, 9, 8, 40), (6, 3, 3, 40), (2, 2), (1, 1)),    # padded im2col: the border holds the zero point
    ((1, 9, 9, 40), (5, 3, 3, 40), (1, 1), (2, 2)),    # phased dilated im2col over the same padding
], ids=["pointwise", "padded", "dilated"])
def test_conv_raw_sums_match_litert_and_a_declared_rounding_takes_the_generic_stage(kind, in_shape, filter_shape,
                                                                                     stride, dilation):
    # CONV_2D's im2col may sum raw inputs (the input zero point folded into the bias) under LiteRT's
    # rounding; under a declared rounding the generic output stage runs on (x - zp) sums instead, and
    # must equal the reference with that rounding.
    model = conv_model("CONV_2D", in_shape, filter_shape, kind, stride=stride, dilation=dilation, seed=41)
    inputs = random_inputs(Interpreter(model_content=model).get_input_details(), seed=6)
    out, plan = run_node(model, inputs)
    assert plan.planar is None and plan.folded is not None and plan.folded.any()
    np.testing.assert_array_equal(out, run_litert(model, inputs)[0])
    out, plan = run_node(model, inputs, DECLARED)
    assert plan.folded is None and plan.stage is None
    np.testing.assert_array_equal(out, run_node(model, inputs, DECLARED, reference=True)[0])


@pytest.mark.slow
@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("kind", ["float", "int8_per_channel"])
@pytest.mark.parametrize("stride", [(1, 32767), (32767, 1), (32767, 32767), (2, 40)],
                         ids=["int16_max_w", "int16_max_h", "int16_max_both", "past_the_width"])
def test_strides_past_the_input_match_litert(op, kind, stride):
    # One output along an axis makes its stride irrelevant; layouts sized by the stride (depthwise's
    # tap phases, planar im2col) must not grow with it.
    filter_shape = (1, 3, 3, 8) if op == "DEPTHWISE_CONV_2D" else (4, 3, 3, 8)
    for padding in (SAME, VALID):
        check_against_litert(conv_model(op, (1, 7, 9, 8), filter_shape, kind, stride=stride, padding=padding,
                                        seed=13))


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("stride", [(1, 2140930175), (32768, 1)])
def test_strides_above_int16_are_refused_as_litert_does(op, stride):
    # Found by benchmarks/fuzz_models.py (seed 23, case 3651): stride_w 2140930175 made depthwise's tap
    # layout ask for 1.7 TiB. conv.cc / depthwise_conv.cc refuse strides above INT16_MAX in Prepare.
    filter_shape = (1, 3, 3, 8) if op == "DEPTHWISE_CONV_2D" else (4, 3, 3, 8)
    model = conv_model(op, (1, 7, 9, 8), filter_shape, "int8_per_channel", stride=stride, seed=13)
    with pytest.raises(RuntimeError, match="INT16_MAX"):
        run_litert(model, random_inputs(Interpreter(model_content=model).get_input_details()))
    message = prepare_error(model)
    assert f"strides must be at most 32767, got stride_h={stride[0]} stride_w={stride[1]}" in message


@pytest.mark.slow
@pytest.mark.parametrize(("in_shape", "filter_shape", "scaled"), [
    ((2, 6, 7, 8), (24, 1, 1, 8), True),       # small: ScaledGemm
    ((1, 40, 40, 8), (16, 1, 1, 8), False),    # large: the float32 GEMM and ExactStage
], ids=["small", "large"])
@pytest.mark.parametrize(("kind", "activation", "out_scale_factor", "cast"), [
    *((kind, act, 1.0, np.int16) for kind in ("int8_per_channel", "int8_per_tensor", "uint8")
      for act in ("NONE", "RELU6")),
    # A small output scale: the lifted values may pass int16, and the clamp runs on int32.
    ("int8_per_tensor", "NONE", 0.005, np.int32), ("uint8", "RELU", 0.005, np.int32)])
def test_conv_scaled_gemm_matches_litert_and_falls_back(kind, in_shape, filter_shape, scaled, activation,
                                                        out_scale_factor, cast):
    # Pointwise quantized convs may fold the output stage's scale into float64 weights (ScaledGemm) under
    # LiteRT's rounding; a declared rounding gets the generic path, equal to the reference with it.
    model = conv_model("CONV_2D", in_shape, filter_shape, kind, activation=activation,
                       out_scale_factor=out_scale_factor, seed=43)
    inputs = random_inputs(Interpreter(model_content=model).get_input_details(), seed=8)
    out, plan = run_node(model, inputs, runs=2)  # the buffer is rewritten each invoke
    assert (plan.scaled is not None) == scaled and plan.stage is not None
    assert plan.scaled is None or plan.scaled.cast == cast
    np.testing.assert_array_equal(out, run_litert(model, inputs)[0])
    out, plan = run_node(model, inputs, DECLARED, runs=2)
    assert plan.scaled is None and plan.stage is None
    np.testing.assert_array_equal(out, run_node(model, inputs, DECLARED, reference=True)[0])



def test_out_size_refuses_a_window_larger_than_the_input_plus_a_stride():
    """ComputeOutSizeChecked: VALID with a window one step too large gives 0 outputs; a larger one fails."""
    assert out_size_and_padding(VALID, 2, 3, 1, 1)[0] == 0
    with pytest.raises(KernelError, match="window 5 does not fit input size 1"):
        out_size_and_padding(VALID, 1, 5, 1, 1)
