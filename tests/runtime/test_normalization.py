"""L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and LOG_SOFTMAX against LiteRT (float32, int8, uint8)."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, single_op_model

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter

SHAPES = [(2, 3, 17), (5, 1), (4, 64), (1, 2, 3, 100), (3, 300)]
# input zero points per type (the output quantization is fixed by the kernels)
L2_ZERO_POINTS = {"INT8": [-5, 0, 7], "UINT8": [100, 128, 140]}
L2_OUTPUT = {"INT8": {"scale": 1 / 128, "zero_point": 0}, "UINT8": {"scale": 1 / 128, "zero_point": 128}}
LOG_SOFTMAX_OUTPUT = {"INT8": {"scale": 16 / 256, "zero_point": 127}, "UINT8": {"scale": 16 / 256, "zero_point": 255}}


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


# -- L2_NORMALIZATION -----------------------------------------------------------------------------


def l2_model(shape, typ="FLOAT32", zero_point=0, scale=0.05, out=None) -> bytes:
    q = {} if typ == "FLOAT32" else {"scale": scale, "zero_point": zero_point}
    out = out if out is not None else L2_OUTPUT.get(typ, {})
    return single_op_model("L2_NORMALIZATION", [Spec(shape, typ, **q)], [Spec(shape, typ, **out)],
                           version=2 if typ == "INT8" else 1, fused_activation_function=0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_l2_float(shape):
    out = check_against_litert(l2_model(shape))[0]
    assert np.allclose(np.square(out.astype(np.float64)).sum(axis=-1), 1, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("typ", ["INT8", "UINT8"])
def test_l2_quantized(shape, typ):
    # The fixed-point inverse square root (GetInvSqrtQuantizedMultiplierExp), bit for bit.
    for zero_point in L2_ZERO_POINTS[typ]:
        for seed in range(2):
            check_against_litert(l2_model(shape, typ, zero_point), seed=seed)


def test_l2_int8_long_rows_take_the_large_sum_branch():
    # 20000 values of |q - zp| ~ 200 sum past 2**29: the inverse square root divides the sum by 4 first.
    model = l2_model((1, 20000), "INT8", zero_point=-60)
    x = np.random.default_rng(0).integers(100, 128, (1, 20000)).astype(np.int8)
    check_against_litert(model, [x])


def test_l2_int8_zero_and_unit_rows():
    # A row summing to 0 or 1 uses the largest multiplier instead of dividing by zero.
    model = l2_model((3, 5), "INT8", zero_point=2, scale=0.1)
    x = np.array([[2] * 5, [3, 2, 2, 2, 2], [2, 2, 1, 2, 2]], np.int8)
    assert check_against_litert(model, [x])[0].tolist() == [[0] * 5, [127, 0, 0, 0, 0], [0, 0, -128, 0, 0]]


def test_l2_float_tiny_norm_uses_epsilon():
    x = np.zeros((2, 4), np.float32)
    x[1, 1] = 1e-8
    out = check_against_litert(l2_model((2, 4)), [x])[0]
    assert out[1, 1] == pytest.approx(0.01)


def test_l2_wrong_output_scale_raises():
    with pytest.raises(KernelError, match="output must have scale 0.0078125 and zero point 0"):
        _prepare(l2_model((2, 4), "INT8", out={"scale": 1 / 100, "zero_point": 0}))


def test_l2_fused_activation_raises():
    model = single_op_model("L2_NORMALIZATION", [Spec((2, 4))], [Spec((2, 4))], fused_activation_function=1)
    with pytest.raises(KernelError, match="fused activation RELU"):
        _prepare(model)


# -- LOCAL_RESPONSE_NORMALIZATION -----------------------------------------------------------------


@pytest.mark.parametrize(("radius", "bias", "alpha", "beta"),
                         [(2, 1.0, 1e-4, 0.75), (0, 2.0, 0.5, 0.5), (5, 1.0, 1.0, 1.0), (1, 0.5, 2.0, 0.3),
                          (10, 1.0, 0.1, 1.5)], ids=str)
@pytest.mark.parametrize("shape", [(1, 3, 4, 16), (2, 2, 2, 7), (1, 1, 1, 40)], ids=str)
def test_lrn(shape, radius, bias, alpha, beta):
    model = single_op_model("LOCAL_RESPONSE_NORMALIZATION", [Spec(shape)], [Spec(shape)], radius=radius, bias=bias,
                            alpha=alpha, beta=beta)
    check_against_litert(model)


def test_lrn_needs_4d():
    model = single_op_model("LOCAL_RESPONSE_NORMALIZATION", [Spec((2, 8))], [Spec((2, 8))], radius=1, bias=1.0,
                            alpha=1.0, beta=0.5)
    with pytest.raises(KernelError, match="must be 4-D"):
        _prepare(model)


def test_lrn_int8_raises():
    model = single_op_model("LOCAL_RESPONSE_NORMALIZATION", [Spec((1, 1, 2, 8), "INT8", scale=0.1)],
                            [Spec((1, 1, 2, 8), "INT8", scale=0.1)], radius=1, bias=1.0, alpha=1.0, beta=0.5)
    with pytest.raises(KernelError, match="type INT8 is not supported"):
        _prepare(model)


# -- LOG_SOFTMAX ----------------------------------------------------------------------------------


def log_softmax_model(shape, typ="FLOAT32", scale=0.05, zero_point=0, out=None) -> bytes:
    q = {} if typ == "FLOAT32" else {"scale": scale, "zero_point": zero_point}
    out = out if out is not None else LOG_SOFTMAX_OUTPUT.get(typ, {})
    return single_op_model("LOG_SOFTMAX", [Spec(shape, typ, **q)], [Spec(shape, typ, **out)],
                           version=2 if typ == "INT8" else 1)


@pytest.mark.parametrize("shape", [*SHAPES, (2, 1000)], ids=str)
def test_log_softmax_float(shape):
    out = check_against_litert(log_softmax_model(shape))[0]
    assert np.allclose(np.exp(out.astype(np.float64)).sum(axis=-1), 1, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("shape", [*SHAPES, (2, 1000)], ids=str)
@pytest.mark.parametrize("typ", ["INT8", "UINT8"])
@pytest.mark.parametrize("scale", [0.01, 0.05, 0.2, 1.0])
def test_log_softmax_quantized(shape, typ, scale):
    # optimized_ops::LogSoftmax: an expf table, float32 sums, rint.
    zero_point = 3 if typ == "INT8" else 130
    for seed in range(2):
        check_against_litert(log_softmax_model(shape, typ, scale, zero_point), seed=seed)


def test_log_softmax_wrong_output_zero_point_raises():
    with pytest.raises(KernelError, match="zero point 127"):
        _prepare(log_softmax_model((2, 4), "INT8", out={"scale": 16 / 256, "zero_point": 0}))


def test_log_softmax_int16_raises():
    model = single_op_model("LOG_SOFTMAX", [Spec((2, 4), "INT16", scale=0.1)], [Spec((2, 4), "INT16", scale=0.1)])
    with pytest.raises(KernelError, match="type INT16 is not supported"):
        _prepare(model)
