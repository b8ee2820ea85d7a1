"""MEAN against LiteRT: float32, int32, int64, uint8 and int8 (general and 4-D fast paths)."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, single_op_model

from runtime.errors import KernelError, OpResolutionError
from runtime.interpreter import Interpreter
from runtime.kernels.reduce import reduced_shape, resolve_axes
from runtime.resolver import BuiltinOpResolver

SHAPE = (2, 6, 5, 7)
AXES = [[1, 2], [2, 1], [1, 2, 1], [-3, -2], [3], [0], [0, 1, 2, 3], [1], [0, 3], [-1], []]
# (input scale, input zero point, output scale, output zero point); uint8 zero points get +128.
QUANT_PAIRS = [(0.05, -3, 0.05, -3), (0.05, -3, 0.02, 5), (0.1, 10, 0.4, -20), (0.003, 0, 0.5, 1)]


def mean_model(typ, shape, axes, keep_dims, quant=None, axis_input=None) -> bytes:
    version = 2 if typ == "INT8" else 1
    q_in = q_out = {}
    if quant is not None:
        offset = 128 if typ == "UINT8" else 0
        q_in = {"scale": quant[0], "zero_point": quant[1] + offset}
        q_out = {"scale": quant[2], "zero_point": quant[3] + offset}
    out_shape = reduced_shape(shape, resolve_axes(axes, len(shape)), keep_dims)
    axis = axis_input or const(np.array(axes, np.int32))
    return single_op_model("MEAN", [Spec(tuple(shape), typ, **q_in), axis], [Spec(out_shape, typ, **q_out)],
                           version=version, keep_dims=keep_dims)


@pytest.mark.parametrize("typ", ["FLOAT32", "INT32", "INT64"])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("keep_dims", [True, False])
def test_mean_unquantized(typ, axes, keep_dims):
    check_against_litert(mean_model(typ, SHAPE, axes, keep_dims))


@pytest.mark.parametrize("typ", ["INT8", "UINT8"])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("quant", QUANT_PAIRS, ids=lambda q: "s{}z{}-s{}z{}".format(*q))
def test_mean_quantized(typ, axes, keep_dims, quant):
    check_against_litert(mean_model(typ, SHAPE, axes, keep_dims, quant))


@pytest.mark.parametrize("typ", ["INT8", "UINT8"])
@pytest.mark.parametrize("channels", [7, 16, 20, 37])
def test_mean_4d_fast_path_random_scales(typ, channels):
    # keep_dims over axes {1, 2} of a 4-D tensor takes optimized Mean: float32 bias, NEON rounding for
    # blocks of 16 channels and gemmlowp rounding for the rest.
    rng = np.random.default_rng(channels)
    for seed in range(12):
        quant = (float(rng.uniform(0.001, 0.2)), int(rng.integers(-128, 127)),
                 float(rng.uniform(0.001, 0.2)), int(rng.integers(-128, 127)))
        if typ == "UINT8":
            quant = (quant[0], quant[1] // 2, quant[2], quant[3] // 2)
        model = mean_model(typ, (2, 7, 5, channels), [1, 2], True, quant)
        check_against_litert(model, seed=seed)


def test_mean_global_pool_mobilenet_shape():
    # MobileNet's head: [1, 7, 7, 1280] -> [1, 1280] (keep_dims false takes the reference path).
    for keep_dims in (False, True):
        check_against_litert(mean_model("INT8", (1, 7, 7, 1280), [1, 2], keep_dims, (0.0235, -128, 0.0204, -128)))


def test_mean_axis_from_graph_input():
    model = mean_model("FLOAT32", (3, 4, 5), [1], False, axis_input=Spec((1,), "INT32"))
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    ours = check_against_litert(model, [x, np.array([-1], np.int32)])
    assert ours[0].shape == (3, 4)


def test_mean_int32_truncates_toward_zero():
    model = mean_model("INT32", (1, 3), [1], False)
    ours = check_against_litert(model, [np.array([[-1, -1, 0]], np.int32)])
    assert ours[0].tolist() == [0]


def test_mean_rank0_input():
    check_against_litert(mean_model("FLOAT32", (), [0], False))


def test_registered_versions():
    # op_version.cc: MEAN v2 adds int8; v3 (int16) is not implemented.
    assert BuiltinOpResolver().builtin_versions("MEAN") == [1, 2]
    model = single_op_model("MEAN", [Spec((2, 3), "INT16", scale=1.0), const(np.array([1], np.int32))],
                            [Spec((2,), "INT16", scale=1.0)], version=3)
    with pytest.raises(OpResolutionError, match="'MEAN' version '3'"):
        Interpreter(model_content=model)


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


@pytest.mark.parametrize("axes", [[3], [-4], [0, 5]])
def test_bad_axis_raises(axes):
    model = single_op_model("MEAN", [Spec((2, 3, 4)), const(np.array(axes, np.int32))], [Spec((2,))])
    with pytest.raises(KernelError, match="invalid axis"):
        _prepare(model)


def test_int64_axis_tensor_raises():
    model = single_op_model("MEAN", [Spec((2, 3)), const(np.array([1], np.int64))], [Spec((2,))])
    with pytest.raises(KernelError, match="axis tensor must be INT32"):
        _prepare(model)


def test_int16_input_raises_at_version_2():
    model = single_op_model("MEAN", [Spec((2, 3), "INT16", scale=1.0), const(np.array([1], np.int32))],
                            [Spec((2,), "INT16", scale=1.0)], version=2)
    with pytest.raises(KernelError, match="type INT16 is not supported"):
        _prepare(model)
