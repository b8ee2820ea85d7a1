"""MEAN against LiteRT: float32, int32, int64, uint8 and int8 (general and 4-D fast paths)."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, single_op_model

from accelsim.runtime.errors import KernelError, OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.kernels.reduce import reduced_shape, resolve_axes
from accelsim.runtime.resolver import BuiltinOpResolver

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


@pytest.mark.slow
@pytest.mark.parametrize("typ", ["FLOAT32", "INT32", "INT64"])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("keep_dims", [True, False])
def test_mean_unquantized(typ, axes, keep_dims):
    check_against_litert(mean_model(typ, SHAPE, axes, keep_dims))


@pytest.mark.slow
@pytest.mark.parametrize("typ", ["INT8", "UINT8"])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("quant", QUANT_PAIRS, ids=lambda q: "s{}z{}-s{}z{}".format(*q))
def test_mean_quantized(typ, axes, keep_dims, quant):
    check_against_litert(mean_model(typ, SHAPE, axes, keep_dims, quant))


@pytest.mark.slow
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


@pytest.mark.parametrize("typ,count", [("INT8", 255), ("INT8", 256), ("UINT8", 128), ("UINT8", 129),
                                        ("UINT8", 257)])
@pytest.mark.parametrize("keep_dims", [True, False])
def test_mean_quantized_extreme_sums_near_the_table_limit(typ, count, keep_dims):
    """Sums of all-lowest and all-highest values, around the counts where an int16 sum could overflow."""
    info = np.iinfo(np.dtype(typ.lower()))
    rng = np.random.default_rng(count)
    x = rng.integers(info.min, info.max, (3, count, 2), endpoint=True).astype(typ.lower())
    x[0], x[1, :, 0], x[1, :, 1] = info.min, info.max, info.min
    model = mean_model(typ, x.shape, [1], keep_dims, (0.05, -3, 0.02, 5))
    ours = check_against_litert(model, [x])[0].reshape(3, 2)
    # The extreme means saturate the output.
    assert ours[0, 0] == ours[1, 1] == info.min and ours[1, 0] == info.max


def test_mean_axis_from_graph_input():
    model = mean_model("FLOAT32", (3, 4, 5), [1], False, axis_input=Spec((1,), "INT32"))
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    ours = check_against_litert(model, [x, np.array([-1], np.int32)])
    assert ours[0].shape == (3, 4)


def test_mean_int32_truncates_toward_zero():
    model = mean_model("INT32", (1, 3), [1], False)
    ours = check_against_litert(model, [np.array([[-1, -1, 0]], np.int32)])
    assert ours[0].tolist() == [0]


@pytest.mark.parametrize("typ,quant", [("FLOAT32", None), ("INT8", (0.05, -3, 0.02, 5))])
def test_mean_rank0_input(typ, quant):
    check_against_litert(mean_model(typ, (), [0], False, quant))


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


# ---------------------------------------------------------------------------------------------
# SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD

REDUCERS = ["SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"]


def reduce_model(op, typ, shape, axes, keep_dims, quant=None, version=1, axis_input=None) -> bytes:
    q_in = q_out = {}
    if quant is not None:
        q_in = {"scale": quant[0], "zero_point": quant[1]}
        q_out = {"scale": quant[2], "zero_point": quant[3]}
    out_shape = reduced_shape(shape, resolve_axes(axes, len(shape)), keep_dims)
    axis = axis_input or const(np.array(axes, np.int32))
    return single_op_model(op, [Spec(tuple(shape), typ, **q_in), axis], [Spec(out_shape, typ, **q_out)],
                           version=version, keep_dims=keep_dims)


def _small_values(typ, shape, seed=0) -> np.ndarray:
    """Inputs whose products stay representable (REDUCE_PROD of unquantized types)."""
    rng = np.random.default_rng(seed)
    if typ == "FLOAT32":
        return (rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)).astype(np.float32)
    return rng.integers(-3, 4, shape).astype(np.int32 if typ == "INT32" else np.int64)


@pytest.mark.slow
@pytest.mark.parametrize("op", REDUCERS)
@pytest.mark.parametrize("typ", ["FLOAT32", "INT32", "INT64"])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("keep_dims", [True, False])
def test_reduce_unquantized(op, typ, axes, keep_dims):
    model = reduce_model(op, typ, SHAPE, axes, keep_dims)
    inputs = [_small_values(typ, SHAPE)] if op == "REDUCE_PROD" else None
    check_against_litert(model, inputs)


def test_sum_int32_wraps():
    model = reduce_model("SUM", "INT32", (1, 3), [1], False)
    ours = check_against_litert(model, [np.array([[2**31 - 1, 1, 5]], np.int32)])
    assert ours[0].tolist() == [-(2**31) + 5]


@pytest.mark.slow
@pytest.mark.parametrize("typ", ["INT8", "UINT8", "INT16"])
@pytest.mark.parametrize("axes", [[1, 2], [3], [0, 1, 2, 3], [-1, 0], []], ids=str)
@pytest.mark.parametrize("keep_dims", [True, False])
def test_sum_quantized(typ, axes, keep_dims):
    # optimized QuantizedMeanOrSum(compute_sum): float32 scale and bias, rounded half away from zero.
    rng = np.random.default_rng(len(axes))
    count = int(np.prod([SHAPE[a] for a in resolve_axes(axes, 4)]))
    for seed in range(4):
        in_scale = float(rng.uniform(0.01, 0.1))
        in_zp = {"INT8": int(rng.integers(-20, 21)), "UINT8": int(rng.integers(110, 150)), "INT16": 0}[typ]
        out_scale = in_scale * np.sqrt(count) * float(rng.uniform(1, 4)) * (8 if typ == "INT16" else 1)
        out_zp = {"INT8": int(rng.integers(-10, 11)), "UINT8": int(rng.integers(110, 150)), "INT16": 0}[typ]
        version = 2 if typ == "INT8" else 1
        model = reduce_model("SUM", typ, SHAPE, axes, keep_dims, (in_scale, in_zp, out_scale, out_zp), version)
        out = check_against_litert(model, seed=seed)[0]
        assert out.size == 1 or len(np.unique(out)) > 3


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("typ", ["INT8", "UINT8", "INT16"])
@pytest.mark.parametrize("axes", [[1, 2], [3], [0, 1, 2, 3], [2, -4]], ids=str)
def test_max_min_quantized(op, typ, axes):
    zp = {"INT8": -4, "UINT8": 130, "INT16": 0}[typ]
    version = {"INT8": 2, "UINT8": 1, "INT16": 3}[typ]
    check_against_litert(reduce_model(op, typ, SHAPE, axes, False, (0.05, zp, 0.05, zp), version))


@pytest.mark.parametrize(("typ", "quant"), [("INT8", (1 / 100, 3, 0.01, -2)), ("INT8", (1 / 64, -5, 0.02, 4)),
                                            ("INT16", (1 / 800, 0, 0.0005, 0))], ids=str)
@pytest.mark.parametrize("axes", [[1], [3], [2, 0], [1, 2]], ids=str)
def test_prod_quantized(typ, quant, axes):
    # QuantizedReduceProd rescales after every product (int64 MultiplyByQuantizedMultiplier) in memory order.
    model = reduce_model("REDUCE_PROD", typ, SHAPE, axes, True, quant, version=2)
    for seed in range(3):
        out = check_against_litert(model, seed=seed)[0]
    if len(axes) == 1:
        assert len(np.unique(out)) > 10


def test_prod_quantized_without_axes_copies():
    model = reduce_model("REDUCE_PROD", "INT8", (2, 3), [], False, (0.1, 3, 0.05, -1), version=2)
    x = np.arange(-3, 3, dtype=np.int8).reshape(2, 3)
    assert np.array_equal(check_against_litert(model, [x])[0], x)


@pytest.mark.parametrize("op", REDUCERS)
def test_reduce_empty_input_gives_neutral_element(op):
    model = reduce_model(op, "FLOAT32", (2, 0, 3), [1], False)
    out = check_against_litert(model, [np.zeros((2, 0, 3), np.float32)])[0]
    neutral = {"SUM": 0.0, "REDUCE_PROD": 1.0, "REDUCE_MAX": np.finfo(np.float32).min,
               "REDUCE_MIN": np.finfo(np.float32).max}[op]
    assert np.all(out == np.float32(neutral))


@pytest.mark.parametrize("op", REDUCERS)
def test_reduce_axis_from_graph_input(op):
    model = reduce_model(op, "FLOAT32", (3, 4, 5), [1], True, axis_input=Spec((2,), "INT32"))
    x = _small_values("FLOAT32", (3, 4, 5))
    ours = check_against_litert(model, [x, np.array([-1, 0], np.int32)])
    assert ours[0].shape == (1, 4, 1)


def test_reduce_registered_versions():
    resolver = BuiltinOpResolver()
    assert resolver.builtin_versions("SUM") == [1, 2]
    assert resolver.builtin_versions("REDUCE_MAX") == [1, 2, 3]
    assert resolver.builtin_versions("REDUCE_MIN") == [1, 2, 3]
    assert resolver.builtin_versions("REDUCE_PROD") == [1, 2]
    assert resolver.builtin_versions("ARG_MAX") == [1, 2, 3]


def test_max_with_requantization_raises():
    model = reduce_model("REDUCE_MAX", "INT8", (2, 3), [1], False, (0.1, 0, 0.2, 0), version=2)
    with pytest.raises(KernelError, match="differs from the output's"):
        _prepare(model)


def test_reduce_bool_raises():
    model = reduce_model("REDUCE_MAX", "BOOL", (2, 3), [1], False)
    with pytest.raises(KernelError, match="type BOOL is not supported"):
        _prepare(model)


# ---------------------------------------------------------------------------------------------
# ARG_MAX, ARG_MIN


def arg_model(op, typ, shape, axis, out_type="INT32", axis_type=np.int32, version=1) -> bytes:
    out_shape = tuple(d for i, d in enumerate(shape) if i != axis % len(shape))
    return single_op_model(op, [Spec(tuple(shape), typ), const(np.array([axis], axis_type))],
                           [Spec(out_shape, out_type)], version=version,
                           output_type={"INT32": 2, "INT64": 4}[out_type])


def _tied_values(typ, shape, seed=0) -> np.ndarray:
    """Few distinct values, so most rows hold ties (the first index must win)."""
    rng = np.random.default_rng(seed)
    if typ == "BOOL":
        return rng.integers(0, 2, shape).astype(bool)
    values = rng.integers(0 if typ == "UINT8" else -3, 4, shape)
    return values.astype({"FLOAT32": np.float32, "INT8": np.int8, "UINT8": np.uint8, "INT32": np.int32}[typ])


@pytest.mark.slow
@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("typ", ["FLOAT32", "INT8", "UINT8", "INT32", "BOOL"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("out_type", ["INT32", "INT64"])
def test_arg_min_max(op, typ, axis, out_type):
    shape = (3, 37, 5) if axis != 1 else (3, 5, 37)
    version = {"INT8": 2, "BOOL": 3}.get(typ, 1)
    model = arg_model(op, typ, shape, axis, out_type, version=version)
    out = check_against_litert(model, [_tied_values(typ, shape)])[0]
    assert out.dtype == np.dtype(out_type.lower())


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
def test_arg_int64_axis_and_random_floats(op):
    model = arg_model(op, "FLOAT32", (4, 100), -1, "INT64", axis_type=np.int64)
    check_against_litert(model)


def test_arg_first_index_wins_ties():
    model = arg_model("ARG_MAX", "INT8", (1, 40), 1, version=2)
    x = np.zeros((1, 40), np.int8)
    x[0, [17, 23, 39]] = 5
    assert check_against_litert(model, [x])[0].tolist() == [17]


def test_arg_nan_never_wins_along_an_outer_axis():
    # arg_min_max.h's NaN-aware comparator: a NaN is skipped; an all-NaN column gives 0.
    model = arg_model("ARG_MAX", "FLOAT32", (4, 3), 0)
    x = np.array([[np.nan, 1, np.nan], [2, np.nan, np.nan], [1, 5, np.nan], [np.nan, 5, np.nan]], np.float32)
    assert check_against_litert(model, [x])[0].tolist() == [1, 2, 0]


def test_arg_output_type_mismatch_raises():
    model = single_op_model("ARG_MAX", [Spec((2, 3)), const(np.array([1], np.int32))], [Spec((2,), "INT32")],
                            output_type=4)
    with pytest.raises(KernelError, match="output_type is INT64 but the output tensor is INT32"):
        _prepare(model)


def test_arg_empty_axis_raises():
    model = arg_model("ARG_MIN", "FLOAT32", (2, 0), 1)
    with pytest.raises(KernelError, match="empty axis"):
        _prepare(model)
