"""RELU, RELU6, LOGISTIC, TANH and SOFTMAX against LiteRT: float32 and quantized (bit-exact)."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, prepare_error, run_litert, run_ours, single_op_model

from accelsim.runtime.errors import OpResolutionError
from accelsim.runtime.interpreter import Interpreter

ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
ALL_UINT8 = np.arange(256, dtype=np.uint8).reshape(4, 64)
EVERY_VALUE = {"INT8": ALL_INT8, "UINT8": ALL_UINT8}
VERSION = {"UINT8": 1, "INT8": 2, "INT16": 3}


def _unary(op, type_, shape, in_q=None, out_q=None, version=1, **options):
    in_q, out_q = in_q or (None, None), out_q or (None, None)
    return single_op_model(op, [Spec(shape, type_, scale=in_q[0], zero_point=in_q[1])],
                           [Spec(shape, type_, scale=out_q[0], zero_point=out_q[1])], version=version, **options)


def _float_inputs(shape, spread=6.0, seed=0):
    return [np.random.default_rng(seed).uniform(-spread, spread, shape).astype(np.float32)]


# ---------------------------------------------------------------------------------------------
# RELU, RELU6.


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("shape", [(7,), (2, 3, 5, 4)], ids=str)
def test_relu_float(op, shape):
    out = check_against_litert(_unary(op, "FLOAT32", shape), _float_inputs(shape, 9.0))[0]
    assert out.min() == 0 and (op == "RELU" or out.max() == 6)


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("shape", [(64,), (1, 40, 40, 8)], ids=str)  # either side of the clip switch-over
def test_relu_float_infinities_and_nan(op, shape):
    x = _float_inputs(shape, 9.0)[0]
    x.reshape(-1)[:3] = [np.inf, -np.inf, np.nan]
    out = check_against_litert(_unary(op, "FLOAT32", shape), [x])[0]
    assert np.isnan(out.reshape(-1)[2]) and out.reshape(-1)[0] == (np.inf if op == "RELU" else 6)


RELU_QUANT = [  # (input scale, zero point), (output scale, zero point)
    ((0.05, 0), (0.05, 0)),  # same scale: a pure clamp
    ((0.05, -20), (0.05, 7)),  # same scale, zero points differ
    ((0.05, 10), (0.025, -128)),  # output range halved: requantization
    ((0.02, -128), (0.047, -128)),  # typical converter output for RELU6 after conv
    ((0.5, 3), (0.001, 0)),  # everything above zero saturates
]


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("type_", ["INT8", "UINT8"])
@pytest.mark.parametrize("in_q,out_q", RELU_QUANT, ids=str)
def test_relu_8bit_every_value(op, type_, in_q, out_q):
    if type_ == "UINT8":
        in_q, out_q = (in_q[0], in_q[1] + 128), (out_q[0], out_q[1] + 128)
    x = EVERY_VALUE[type_]
    out = check_against_litert(_unary(op, type_, x.shape, in_q, out_q, version=VERSION[type_]), [x])[0]
    assert out.min() >= out_q[1]


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("scales", [(0.001, 0.001), (0.001, 0.0004), (1 / 4096, 1 / 32768)], ids=str)
def test_relu_int16(op, scales):
    x = np.random.default_rng(0).integers(-32768, 32767, (3, 100), endpoint=True).astype(np.int16)
    check_against_litert(_unary(op, "INT16", x.shape, (scales[0], 0), (scales[1], 0), version=3), [x])


# ---------------------------------------------------------------------------------------------
# LOGISTIC, TANH.


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_sigmoid_tanh_float(op):
    check_against_litert(_unary(op, "FLOAT32", (3, 50)), _float_inputs((3, 50), 12.0))


LUT_INPUT_QUANT = [(0.1, 0), (0.0625, -128), (0.013, 37), (0.003, -5), (2.5, 0)]


@pytest.mark.parametrize("in_q", LUT_INPUT_QUANT, ids=str)
@pytest.mark.parametrize("type_", ["INT8", "UINT8"])
def test_logistic_8bit_every_value(in_q, type_):
    offset = 128 if type_ == "UINT8" else 0
    out_q = (1 / 256, -128 + offset)
    x = EVERY_VALUE[type_]
    model = _unary("LOGISTIC", type_, x.shape, (in_q[0], in_q[1] + offset), out_q, version=VERSION[type_])
    out = check_against_litert(model, [x])[0]
    # sigmoid(0) = 0.5 -> exactly 128 steps above the output zero point.
    assert out[x == in_q[1] + offset].item() == out_q[1] + 128


@pytest.mark.parametrize("in_q", LUT_INPUT_QUANT, ids=str)
@pytest.mark.parametrize("out_q", [(1 / 128, 0), (0.0091, 3), (0.02, -30)], ids=str)
@pytest.mark.parametrize("type_", ["INT8", "UINT8"])
def test_tanh_8bit_every_value(in_q, out_q, type_):
    offset = 128 if type_ == "UINT8" else 0
    x = EVERY_VALUE[type_]
    model = _unary("TANH", type_, x.shape, (in_q[0], in_q[1] + offset), (out_q[0], out_q[1] + offset),
                   version=VERSION[type_])
    check_against_litert(model, [x])


def test_lut_outputs_are_monotonic():
    """The table maps increasing inputs to non-decreasing outputs (a sanity check of the indexing)."""
    x = ALL_INT8.reshape(-1)
    for op, out_q in (("LOGISTIC", (1 / 256, -128)), ("TANH", (1 / 128, 0))):
        out = run_ours(_unary(op, "INT8", x.shape, (0.05, 10), out_q, version=2), [x])[0]
        assert np.all(np.diff(out.astype(np.int64)) >= 0) and out[0] == -128 and out[-1] >= 126


# ---------------------------------------------------------------------------------------------
# SOFTMAX.


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.3])
@pytest.mark.parametrize("shape", [(10,), (3, 17), (2, 3, 4, 9)], ids=str)
def test_softmax_float(beta, shape):
    out = check_against_litert(_unary("SOFTMAX", "FLOAT32", shape, beta=beta), _float_inputs(shape, 8.0))[0]
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)


SOFTMAX_TYPES = [("INT8", "INT8", (1 / 256, -128)), ("UINT8", "UINT8", (1 / 256, 0)),
                 ("INT8", "INT16", (1 / 32768, 0)), ("UINT8", "INT16", (1 / 32768, 0))]


@pytest.mark.slow
@pytest.mark.parametrize("in_type,out_type,out_q", SOFTMAX_TYPES)
@pytest.mark.parametrize("beta", [1.0, 0.37, 3.0])
@pytest.mark.parametrize("shape", [(1, 1), (4, 10), (2, 3, 1000)], ids=str)
def test_softmax_8bit(in_type, out_type, out_q, beta, shape):
    rng = np.random.default_rng(int(beta * 100) + len(shape))
    info = np.iinfo(np.dtype(in_type.lower()))
    x = rng.integers(info.min, info.max, shape, endpoint=True).astype(in_type.lower())
    in_q = (float(np.float32(rng.uniform(0.02, 0.3))), int(rng.integers(info.min, info.max)))
    model = single_op_model("SOFTMAX", [Spec(shape, in_type, scale=in_q[0], zero_point=in_q[1])],
                            [Spec(shape, out_type, scale=out_q[0], zero_point=out_q[1])],
                            version=VERSION[in_type], beta=beta)
    check_against_litert(model, [x])


def test_softmax_int8_rows_of_equal_and_extreme_values():
    x = np.array([[5] * 8, [-128] * 7 + [127], [127] * 4 + [-128] * 4, list(range(-4, 4))], np.int8)
    model = single_op_model("SOFTMAX", [Spec(x.shape, "INT8", scale=0.1, zero_point=0)],
                            [Spec(x.shape, "INT8", scale=1 / 256, zero_point=-128)], version=2, beta=1.0)
    out = check_against_litert(model, [x])[0]
    assert out[1, -1] == 127 and (out[0] == out[0, 0]).all()



@pytest.mark.parametrize("out_q", [(1 / 100000, -3000), (1e-6, 100), (1 / 32768, 5000)], ids=str)
def test_softmax_int8_to_int16_output_scales_and_zero_points(out_q):
    """The requantization table's size follows 1 / output scale; past 2**17 entries the generic path runs."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.integers(-128, 127, (5, 12), endpoint=True), np.full((1, 12), -128),
                        [[127] + [-128] * 11]]).astype(np.int8)
    model = single_op_model("SOFTMAX", [Spec(x.shape, "INT8", scale=0.15, zero_point=-3)],
                            [Spec(x.shape, "INT16", scale=out_q[0], zero_point=out_q[1])], version=2, beta=1.0)
    check_against_litert(model, [x])

# ---------------------------------------------------------------------------------------------
# Errors and versions.


def test_logistic_rejects_output_scale_other_than_1_256():
    model = _unary("LOGISTIC", "INT8", (4,), (0.1, 0), (1 / 128, -128), version=2)
    assert "output scale must be 1/256" in prepare_error(model)


def test_softmax_int8_rejects_wrong_output_zero_point():
    model = single_op_model("SOFTMAX", [Spec((4,), "INT8", scale=0.1, zero_point=0)],
                            [Spec((4,), "INT8", scale=1 / 256, zero_point=0)], version=2, beta=1.0)
    assert "zero point must be -128" in prepare_error(model)


def test_softmax_rejects_unsupported_output_type():
    model = single_op_model("SOFTMAX", [Spec((4,), "INT8", scale=0.1, zero_point=0)],
                            [Spec((4,), "UINT8", scale=1 / 256, zero_point=0)], version=2, beta=1.0)
    assert "INT8 input needs an output of type INT8 or INT16, not UINT8" in prepare_error(model)


@pytest.mark.parametrize("op", ["RELU", "TANH"])
def test_rejects_output_type_different_from_input(op):
    model = single_op_model(op, [Spec((4,))], [Spec((4,), "INT8", scale=0.1, zero_point=0)])
    assert "output type INT8 differs from input type FLOAT32" in prepare_error(model)


@pytest.mark.parametrize("op,type_", [("TANH", "INT16"), ("RELU6", "INT32"), ("SOFTMAX", "INT32")])
def test_rejects_unsupported_types(op, type_):
    q = dict(scale=1 / 4096, zero_point=0)
    options = {"beta": 1.0} if op == "SOFTMAX" else {}
    model = single_op_model(op, [Spec((4,), type_, **q)], [Spec((4,), type_, **q)], **options)
    assert f"type {type_} is not supported" in prepare_error(model)


def test_relu_int16_rejects_nonzero_zero_point():
    model = _unary("RELU", "INT16", (4,), (0.01, 3), (0.01, 0), version=3)
    assert "INT16 requires zero points of 0" in prepare_error(model)


def test_quantized_input_without_scale_is_rejected():
    model = single_op_model("TANH", [Spec((4,), "INT8")], [Spec((4,), "INT8")], version=2)
    assert "needs a positive quantization scale" in prepare_error(model)


@pytest.mark.parametrize("op,version", [("LOGISTIC", 3), ("TANH", 3), ("SOFTMAX", 3), ("RELU", 4)])
def test_unimplemented_versions_are_not_registered(op, version):
    options = {"beta": 1.0} if op == "SOFTMAX" else {}
    with pytest.raises(OpResolutionError, match=f"version '{version}'"):
        Interpreter(model_content=_unary(op, "FLOAT32", (4,), version=version, **options))


def test_relu_large_tensor_matches():
    x = np.random.default_rng(9).integers(-128, 127, (8, 64, 64), endpoint=True).astype(np.int8)
    model = _unary("RELU6", "INT8", x.shape, (0.03, -3), (0.0235, -128), version=2)
    assert np.array_equal(run_ours(model, [x])[0], run_litert(model, [x])[0])


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH", "RELU6"])
@pytest.mark.parametrize("shape", [(1, 16), (2, 5, 7, 3)], ids=str)
def test_float_unary_large_magnitudes(op, shape):
    # exp(-x) overflows to inf for x < -88 (LOGISTIC then gives 0); tanh saturates at +-1.
    x = _float_inputs(shape, 120.0, seed=3)[0]
    x.reshape(-1)[:4] = [-100.0, 100.0, 0.0, -1e-3]
    out = check_against_litert(_unary(op, "FLOAT32", shape), [x])[0]
    assert out.min() >= (-1 if op == "TANH" else 0) and out.max() <= (6 if op == "RELU6" else 1)


def test_softmax_float_beta_and_constant_rows():
    x = np.array([[3.0] * 6, [-1e30, 0.0, 1e-3, 5.0, -5.0, 2.0]], np.float32)
    out = check_against_litert(_unary("SOFTMAX", "FLOAT32", x.shape, beta=0.7), [x])[0]
    np.testing.assert_allclose(out[0], 1 / 6, rtol=1e-6)


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_float_0d_input(op):
    # Found by tests/runtime/test_references.py: the in-place float LOGISTIC failed on a 0-d input.
    check_against_litert(single_op_model(op, [Spec(())], [Spec(())]), [np.array(0.75, np.float32)])
