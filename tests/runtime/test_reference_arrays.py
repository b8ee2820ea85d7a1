"""Array references called directly, against LiteRT.

The ops here have no fast path: the node form of each array function is both invoke and reference,
so "fast == reference" holds by construction (test_references.py); what is tested here is the array
function itself, called on plain NumPy arrays and options, against LiteRT running the same op.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import Spec, assert_close_to_reference, const, random_inputs, run_litert, single_op_model

from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Quantization
from accelsim.runtime.kernels.activations import elu, hard_swish, leaky_relu, logistic, prelu, relu, tanh
from accelsim.runtime.kernels.cast import cast
from accelsim.runtime.kernels.common import QuantParams
from accelsim.runtime.kernels.concat import concatenation, pack
from accelsim.runtime.kernels.cumsum import cumsum
from accelsim.runtime.kernels.division import div, floor_div, floor_mod
from accelsim.runtime.kernels.fill import fill, range_values, zeros_like
from accelsim.runtime.kernels.gather import gather, gather_nd
from accelsim.runtime.kernels.gelu import gelu
from accelsim.runtime.kernels.logical import compare, logical_and, logical_not, logical_or, select
from accelsim.runtime.kernels.lstm import LstmOptions, LstmWeights, lstm
from accelsim.runtime.kernels.math import (
    absolute,
    exp,
    log,
    maximum_minimum,
    neg,
    power,
    rsqrt,
    sqrt,
    square,
    squared_difference,
)
from accelsim.runtime.kernels.normalization import l2_normalization, local_response_normalization
from accelsim.runtime.kernels.pad import mirror_pad, pad
from accelsim.runtime.kernels.quantize import dequantize, quantize, requantize
from accelsim.runtime.kernels.reduce import ReduceQuantization, arg_min_max, mean, reduce
from accelsim.runtime.kernels.resize import ResizeOptions, resize_bilinear, resize_nearest_neighbor
from accelsim.runtime.kernels.shape import expand_dims, reshape, shape_of, squeeze
from accelsim.runtime.kernels.slicing import StridedSliceMasks, slice_, strided_slice
from accelsim.runtime.kernels.softmax import LogSoftmaxTable, log_softmax
from accelsim.runtime.kernels.space import batch_to_space_nd, depth_to_space, space_to_batch_nd, space_to_depth
from accelsim.runtime.kernels.split import split, unpack
from accelsim.runtime.kernels.tile import broadcast_to, tile
from accelsim.runtime.kernels.transpose import transpose
from accelsim.runtime.quant import activation_name
from accelsim.runtime.read import load_model

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The (input, output) types of QUANTIZE and DEQUANTIZE, as test_references.py draws them for the fast kernels.
QUANTIZE_CASES = [("FLOAT32", "INT8"), ("FLOAT32", "UINT8"), ("FLOAT32", "INT16"), ("INT8", "INT8"), ("INT8", "UINT8"),
                  ("UINT8", "INT8"), ("UINT8", "UINT8"), ("INT16", "INT8"), ("INT32", "INT8")]


def litert_output(op: str, inputs: list[Spec], out: Spec, arrays: list[np.ndarray], version: int = 1,
                  **options) -> np.ndarray:
    """LiteRT's output of a one-`op` model fed `arrays` for its non-constant inputs."""
    return run_litert(single_op_model(op, inputs, [out], version=version, **options), arrays)[0]


def draw_array(data, typ: str, shape: tuple[int, ...], lo: int = -9, hi: int = 9) -> np.ndarray:
    """Small integers (exact in every op below), as float32 or the type's integers."""
    seed = data.draw(st.integers(0, 2**16))
    values = np.random.default_rng(seed).integers(lo, hi + 1, shape)
    return values.astype({"FLOAT32": np.float32, "INT32": np.int32, "INT8": np.int8, "UINT8": np.uint8}[typ])


SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@SETTINGS
@given(op=st.sampled_from(["SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"]),
       typ=st.sampled_from(["FLOAT32", "INT32"]), shape=SHAPES, keep_dims=st.booleans(), data=st.data())
def test_reduce_as_arrays_matches_litert(op, typ, shape, keep_dims, data):
    axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape))))
    x = draw_array(data, typ, shape, -2, 2)
    ours = reduce(op, x, axes, keep_dims)
    theirs = litert_output(op, [Spec(shape, typ), const(np.array(axes, np.int32))], Spec(ours.shape, typ), [x],
                           keep_dims=keep_dims)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["INT8", "UINT8"]), shape=SHAPES, data=st.data())
def test_quantized_sum_as_arrays_matches_litert(typ, shape, data):
    axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1, max_size=len(shape))))
    zero_points = (data.draw(st.integers(-20, 20)), data.draw(st.integers(-20, 20)))
    if typ == "UINT8":
        zero_points = (zero_points[0] + 128, zero_points[1] + 128)
    scales = (float(np.float32(data.draw(st.floats(0.01, 0.1)))), float(np.float32(data.draw(st.floats(0.05, 0.5)))))
    x = draw_array(data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255)))
    q = ReduceQuantization(scales[0], zero_points[0], scales[1], zero_points[1], x.dtype)
    ours = reduce("SUM", x, axes, False, q)
    theirs = litert_output("SUM", [Spec(shape, typ, scale=scales[0], zero_point=zero_points[0]),
                                   const(np.array(axes, np.int32))],
                           Spec(ours.shape, typ, scale=scales[1], zero_point=zero_points[1]), [x],
                           version=2 if typ == "INT8" else 1, keep_dims=False)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(op=st.sampled_from(["ARG_MAX", "ARG_MIN"]), typ=st.sampled_from(["FLOAT32", "INT32", "UINT8"]), shape=SHAPES,
       data=st.data())
def test_arg_min_max_as_arrays_matches_litert(op, typ, shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = draw_array(data, typ, shape, 0, 3)  # few values: ties must pick the first index
    ours = arg_min_max(op, x, axis, np.int32)
    theirs = litert_output(op, [Spec(shape, typ), const(np.array([axis], np.int32))], Spec(ours.shape, "INT32"), [x],
                           output_type=2)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(op=st.sampled_from(["MAXIMUM", "MINIMUM", "FLOOR_DIV", "FLOOR_MOD", "POW", "SELECT_V2"]),
       typ=st.sampled_from(["FLOAT32", "INT32"]), shapes=st.sampled_from([((2, 3), (2, 3)), ((2, 3), (3,)),
                                                                          ((4, 1, 2), (3, 1)), ((3,), ())]),
       data=st.data())
def test_binary_rules_as_arrays_match_litert(op, typ, shapes, data):
    a = draw_array(data, typ, shapes[0], *((1, 3) if op == "POW" else (-9, 9)))
    b = draw_array(data, typ, shapes[1], 0, 3) if op == "POW" else draw_array(data, typ, shapes[1])
    if op in ("FLOOR_DIV", "FLOOR_MOD"):
        b = np.where(b == 0, 3, b).astype(b.dtype)
    out_shape = np.broadcast_shapes(*shapes)
    specs = [Spec(shapes[0], typ), Spec(shapes[1], typ)]
    arrays = [a, b]
    if op == "SELECT_V2":
        cond = draw_array(data, "INT32", shapes[1], 0, 1).astype(np.bool_)
        specs, arrays = [Spec(shapes[1], "BOOL"), *specs], [cond, a, b]
        ours = select(cond, a, b, out_shape)
    else:
        ours = {"MAXIMUM": lambda: maximum_minimum(op, a, b), "MINIMUM": lambda: maximum_minimum(op, a, b),
                "FLOOR_DIV": lambda: floor_div(a, b), "FLOOR_MOD": lambda: floor_mod(a, b),
                "POW": lambda: power(a, b, shapes[0] != shapes[1])}[op]()
    version = 2 if op == "FLOOR_DIV" and typ == "FLOAT32" else 1
    assert_close_to_reference([ours], [litert_output(op, specs, Spec(out_shape, typ), arrays, version=version)])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32"]), shape=SHAPES, exclusive=st.booleans(), reverse=st.booleans(),
       data=st.data())
def test_cumsum_as_arrays_matches_litert(typ, shape, exclusive, reverse, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = draw_array(data, typ, shape)
    ours = cumsum(x, axis, exclusive, reverse)
    theirs = litert_output("CUMSUM", [Spec(shape, typ), const(np.array(axis, np.int32))], Spec(shape, typ), [x],
                           exclusive=exclusive, reverse=reverse)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(params_shape=SHAPES, depth=st.integers(1, 4),
       rows=st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple), data=st.data())
def test_gather_nd_as_arrays_matches_litert(params_shape, depth, rows, data):
    depth = min(depth, len(params_shape))
    params = draw_array(data, "FLOAT32", params_shape)
    seed = data.draw(st.integers(0, 2**16))
    indices = np.random.default_rng(seed).integers(0, params_shape[:depth], (*rows, depth)).astype(np.int32)
    ours = gather_nd(params, indices)
    theirs = litert_output("GATHER_ND", [Spec(params_shape), const(indices)], Spec(ours.shape), [params])
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8"]), block=st.integers(1, 3), n=st.integers(1, 2), h=st.integers(1, 3),
       w=st.integers(1, 3), c=st.integers(1, 3), data=st.data())
def test_depth_and_space_as_arrays_match_litert(typ, block, n, h, w, c, data):
    quant = dict(scale=0.1, zero_point=2) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    deep = draw_array(data, typ, (n, h, w, c * block * block))
    ours = depth_to_space(deep, block)
    assert_close_to_reference([ours], [litert_output("DEPTH_TO_SPACE", [Spec(deep.shape, typ, **quant)],
                                                     Spec(ours.shape, typ, **quant), [deep], version=version,
                                                     block_size=block)])
    wide = draw_array(data, typ, (n, h * block, w * block, c))
    ours = space_to_depth(wide, block)
    assert_close_to_reference([ours], [litert_output("SPACE_TO_DEPTH", [Spec(wide.shape, typ, **quant)],
                                                     Spec(ours.shape, typ, **quant), [wide], version=version,
                                                     block_size=block)])


@SETTINGS
@given(block=st.tuples(st.integers(1, 3), st.integers(1, 3)), pads=st.lists(st.integers(0, 2), min_size=4, max_size=4),
       n=st.integers(1, 2), c=st.integers(1, 3), data=st.data())
def test_space_and_batch_as_arrays_match_litert(block, pads, n, c, data):
    pads = np.array(pads, np.int64).reshape(2, 2)
    # Each padded size a multiple of its block, at least one input pixel.
    size = [max(data.draw(st.integers(1, 4)), -(-(int(p.sum()) + 1) // b)) * b - int(p.sum())
            for b, p in zip(block, pads)]
    x = draw_array(data, "FLOAT32", (n, *size, c))
    ours = space_to_batch_nd(x, list(block), pads, 0)
    consts = [const(np.array(block, np.int32)), const(pads.astype(np.int32))]
    assert_close_to_reference([ours], [litert_output("SPACE_TO_BATCH_ND", [Spec(x.shape), *consts], Spec(ours.shape),
                                                     [x])])
    back = batch_to_space_nd(ours, list(block), pads)
    assert_close_to_reference([back], [litert_output("BATCH_TO_SPACE_ND", [Spec(ours.shape), *consts],
                                                     Spec(back.shape), [ours])])
    assert np.array_equal(back, x)


@SETTINGS
@given(pair=st.sampled_from([("FLOAT32", "INT32"), ("FLOAT32", "UINT8"), ("INT32", "FLOAT32"), ("INT32", "BOOL"),
                             ("INT8", "INT32"), ("FLOAT32", "INT8")]), shape=SHAPES, data=st.data())
def test_cast_as_arrays_matches_litert(pair, shape, data):
    src, dst = pair
    seed = data.draw(st.integers(0, 2**16))
    x = (np.random.default_rng(seed).standard_normal(shape) * 200).astype(np.float32) if src == "FLOAT32" \
        else draw_array(data, src, shape, -9, 9)  # floats out of range: SafeCast saturates
    ours = cast(x, np.dtype({"INT32": np.int32, "UINT8": np.uint8, "INT8": np.int8, "FLOAT32": np.float32,
                             "BOOL": np.bool_}[dst]))
    assert_close_to_reference([ours], [litert_output("CAST", [Spec(shape, src)], Spec(shape, dst), [x])])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8"]), shape=SHAPES, data=st.data())
def test_normalizations_as_arrays_match_litert(typ, shape, data):
    zero_point = {"FLOAT32": 0, "INT8": data.draw(st.integers(-20, 20)), "UINT8": data.draw(st.integers(100, 150))}[typ]
    quant_in = {} if typ == "FLOAT32" else dict(scale=0.05, zero_point=zero_point)
    quant_out = {} if typ == "FLOAT32" else dict(scale=1 / 128, zero_point={"INT8": 0, "UINT8": 128}[typ])
    x = draw_array(data, "FLOAT32", shape) if typ == "FLOAT32" else draw_array(
        data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255)))
    ours = l2_normalization(x, zero_point)
    theirs = litert_output("L2_NORMALIZATION", [Spec(shape, typ, **quant_in)], Spec(shape, typ, **quant_out), [x],
                           version=2 if typ == "INT8" else 1)
    assert_close_to_reference([ours], [theirs])
    log_out = {} if typ == "FLOAT32" else dict(scale=16 / 256, zero_point={"INT8": 127, "UINT8": 255}[typ])
    table = None if typ == "FLOAT32" else LogSoftmaxTable.of(0.05, 16 / 256, log_out["zero_point"])
    ours = log_softmax(x, table)
    theirs = litert_output("LOG_SOFTMAX", [Spec(shape, typ, **quant_in)], Spec(shape, typ, **log_out), [x],
                           version=2 if typ == "INT8" else 1)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 9)),
       radius=st.integers(0, 4), bias=st.floats(0.5, 2), alpha=st.floats(0.01, 1), beta=st.floats(0.25, 1),
       data=st.data())
def test_local_response_normalization_as_arrays_matches_litert(shape, radius, bias, alpha, beta, data):
    x = draw_array(data, "FLOAT32", shape)
    f32 = [float(np.float32(v)) for v in (bias, alpha, beta)]
    ours = local_response_normalization(x, radius, *f32)
    theirs = litert_output("LOCAL_RESPONSE_NORMALIZATION", [Spec(shape)], Spec(shape), [x], radius=radius,
                           bias=f32[0], alpha=f32[1], beta=f32[2])
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT64"]), start=st.integers(-20, 20), delta=st.integers(-5, 5),
       count=st.integers(1, 12), half=st.booleans())
def test_range_as_arrays_matches_litert(typ, start, delta, count, half):
    if delta == 0:
        delta = 1
    dtype = {"FLOAT32": np.float32, "INT32": np.int32, "INT64": np.int64}[typ]
    step = delta / 2 if half and typ == "FLOAT32" else delta
    scalars = [dtype(start), dtype(start + step * count), dtype(step)]
    ours = range_values(*scalars)
    theirs = litert_output("RANGE", [const(np.array(v, dtype)) for v in scalars], Spec(ours.shape, typ), [],
                           version=2 if typ == "INT64" else 1)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_split_and_unpack_as_arrays_match_litert(typ, shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    cuts = sorted(data.draw(st.lists(st.integers(0, shape[axis]), max_size=3)))
    sizes = np.diff([0, *cuts, shape[axis]]).astype(np.int32)
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=1) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    ours = split(x, axis, sizes.tolist())
    outs = [Spec(p.shape, typ, **quant) for p in ours]
    model = single_op_model("SPLIT_V", [Spec(shape, typ, **quant), const(sizes), const(np.array(axis, np.int32))],
                            outs, version=version, num_splits=len(sizes))
    assert_close_to_reference(ours, run_litert(model, [x]))
    ours = unpack(x, axis)
    model = single_op_model("UNPACK", [Spec(shape, typ, **quant)], [Spec(p.shape, typ, **quant) for p in ours],
                            version=version, num=shape[axis], axis=axis)
    assert_close_to_reference(ours, run_litert(model, [x]))


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8", "UINT8"]), shape=SHAPES, keep_dims=st.booleans(),
       spatial=st.booleans(), data=st.data())
def test_mean_as_arrays_matches_litert(typ, shape, keep_dims, spatial, data):
    if spatial:  # optimized_integer_ops/mean.h's 4-D rule: NHWC, axes {1, 2}, keep_dims; 16+ channels vectorised
        shape, axes, keep_dims = (1, *shape[:2], data.draw(st.integers(1, 40))), (1, 2), True
    else:
        axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1, max_size=len(shape))))
    quantized = typ in ("INT8", "UINT8")
    x = draw_array(data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255) if typ == "UINT8" else (-9, 9)))
    q_in = dict(scale=float(np.float32(data.draw(st.floats(0.01, 0.1)))), zero_point=data.draw(
        st.integers(-10, 10)) + (128 if typ == "UINT8" else 0)) if quantized else {}
    q_out = dict(scale=float(np.float32(data.draw(st.floats(0.01, 0.1)))), zero_point=data.draw(
        st.integers(-10, 10)) + (128 if typ == "UINT8" else 0)) if quantized else {}
    quantization = ReduceQuantization(q_in["scale"], q_in["zero_point"], q_out["scale"], q_out["zero_point"],
                                      x.dtype) if quantized else None
    ours = mean(x, axes, keep_dims, quantization)
    theirs = litert_output("MEAN", [Spec(shape, typ, **q_in), const(np.array(axes, np.int32))],
                           Spec(ours.shape, typ, **q_out), [x], version=2 if typ == "INT8" else 1, keep_dims=keep_dims)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple), data=st.data())
def test_gather_as_arrays_matches_litert(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    batch_dims = data.draw(st.integers(0, axis))
    extra = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    seed = data.draw(st.integers(0, 2**16))
    positions = np.random.default_rng(seed).integers(0, shape[axis], shape[:batch_dims] + extra).astype(np.int32)
    x = draw_array(data, "INT8", shape, -128, 127)
    ours = gather(x, positions, axis, batch_dims)
    quant = dict(scale=0.1, zero_point=0)
    theirs = litert_output("GATHER", [Spec(shape, "INT8", **quant), const(positions)],
                           Spec(ours.shape, "INT8", **quant), [x], version=5, axis=axis, batch_dims=batch_dims)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "UINT8"]), shape=SHAPES, count=st.integers(1, 3), data=st.data())
def test_concatenation_as_arrays_matches_litert(typ, shape, count, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    values = [draw_array(data, typ, shape[:axis] + (data.draw(st.integers(1, 3)),) + shape[axis + 1:], 0, 255)
              for _ in range(count)]
    quant = [dict(scale=float(np.float32(data.draw(st.floats(0.02, 0.2)))), zero_point=data.draw(st.integers(0, 255)))
             if typ == "UINT8" else {} for _ in range(count + 1)]
    pairs = [(q["scale"], q["zero_point"]) for q in quant] if typ == "UINT8" else [None] * (count + 1)
    ours = concatenation(values, axis, pairs[:-1] if typ == "UINT8" else None, pairs[-1])
    theirs = litert_output("CONCATENATION", [Spec(v.shape, typ, **q) for v, q in zip(values, quant)],
                           Spec(ours.shape, typ, **quant[-1]), values, axis=axis)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(types=st.sampled_from(QUANTIZE_CASES), shape=SHAPES,
       scales=st.tuples(st.floats(0.01, 0.5), st.floats(0.01, 0.5)),
       zero_points=st.tuples(st.integers(-50, 50), st.integers(-50, 50)), seed=st.integers(0, 2**16))
def test_quantize_and_dequantize_as_arrays_match_litert(types, shape, scales, zero_points, seed):
    src, dst = types
    dtypes = {"FLOAT32": np.float32, "INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16, "INT32": np.int32}
    pairs = [(float(np.float32(s)), 0 if typ in ("INT16", "INT32") else z + (128 if typ == "UINT8" else 0))
             for typ, s, z in zip(types, scales, zero_points)]
    specs = [Spec(shape, typ, **({} if typ == "FLOAT32" else dict(scale=p[0], zero_point=p[1])))
             for typ, p in zip(types, pairs)]
    x = random_inputs([dict(dtype=dtypes[src], shape=shape)], seed)[0]
    if src == "FLOAT32":
        ours = quantize(x, Quantization((pairs[1][0],), (pairs[1][1],)), np.dtype(dtypes[dst]))
    else:
        ours = requantize(x, pairs[0], pairs[1], np.dtype(dtypes[dst]), (src, dst) in {
            ("INT8", "INT8"), ("INT8", "UINT8"), ("UINT8", "INT8"), ("UINT8", "UINT8")})
    version = 2 if "INT16" in types else 1
    assert_close_to_reference([ours], [litert_output("QUANTIZE", specs[:1], specs[1], [x], version=version)])
    if dst in ("INT8", "UINT8"):
        back = dequantize(ours, Quantization((pairs[1][0],), (pairs[1][1],)))
        assert_close_to_reference([back], [litert_output("DEQUANTIZE", specs[1:], Spec(shape), [ours],
                                                         version=2 if dst == "INT8" else 1)])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_shape_ops_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    new_shape = [int(np.prod(shape))] if data.draw(st.booleans()) else list(shape[::-1])
    new_shape[data.draw(st.integers(0, len(new_shape) - 1))] = -1
    ours = reshape(x, new_shape)
    assert_close_to_reference([ours], [litert_output("RESHAPE", [Spec(shape, typ, **quant),
                                                                 const(np.array(new_shape, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x])])
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    ours = expand_dims(x, axis + len(shape) + 1 if axis < 0 else axis)
    assert_close_to_reference([ours], [litert_output("EXPAND_DIMS", [Spec(shape, typ, **quant),
                                                                     const(np.array(axis, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x])])
    ones = tuple(i for i, d in enumerate(shape) if d == 1)
    dims = data.draw(st.sampled_from([(), ones, ones[:1], tuple(d - len(shape) for d in ones)]))
    ours = squeeze(x, dims)
    assert_close_to_reference([ours], [litert_output("SQUEEZE", [Spec(shape, typ, **quant)],
                                                     Spec(ours.shape, typ, **quant), [x], squeeze_dims=list(dims))])
    out_type = data.draw(st.sampled_from([("INT32", np.int32, 2), ("INT64", np.int64, 4)]))
    ours = shape_of(x, out_type[1])
    assert_close_to_reference([ours], [litert_output("SHAPE", [Spec(shape, typ, **quant)], Spec((len(shape),),
                                                     out_type[0]), [x], out_type=out_type[2])])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_pad_and_transpose_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    amounts = np.array([[data.draw(st.integers(0, d)) for _ in range(2)] for d in shape], np.int32)
    padded = tuple(int(d + a.sum()) for d, a in zip(shape, amounts))
    fill = data.draw(st.integers(-5, 5))
    # PADV2's constant_values: it must share the output's quantization, so an int8 fill is its own value.
    ours = pad(x, amounts, fill)
    fill_spec = const(np.array([fill], x.dtype), typ, **quant)
    assert_close_to_reference([ours], [litert_output("PADV2", [Spec(shape, typ, **quant), const(amounts), fill_spec],
                                                     Spec(padded, typ, **quant), [x], version=version)])
    # PAD's fill for an int8 tensor is the output zero point.
    ours = pad(x, amounts, quant.get("zero_point", 0))
    assert_close_to_reference([ours], [litert_output("PAD", [Spec(shape, typ, **quant), const(amounts)],
                                                     Spec(padded, typ, **quant), [x], version=version)])
    mode = data.draw(st.sampled_from([0, 1]))  # REFLECT, SYMMETRIC
    mirror = np.minimum(amounts, np.array(shape, np.int32)[:, None] - (1 - mode))
    ours = mirror_pad(x, mirror, mode)
    assert_close_to_reference([ours], [litert_output("MIRROR_PAD", [Spec(shape, typ, **quant), const(mirror)],
                                                     Spec(ours.shape, typ, **quant), [x],
                                                     version=2 if typ == "INT8" else 1, mode=mode)])
    perm = data.draw(st.permutations(range(len(shape))))
    ours = transpose(x, perm)
    assert_close_to_reference([ours], [litert_output("TRANSPOSE", [Spec(shape, typ, **quant),
                                                                   const(np.array(perm, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x],
                                                     version=2 if typ == "INT8" else 1)])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_slices_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    begin = [data.draw(st.integers(0, d)) for d in shape]
    size = [data.draw(st.integers(-1, d - b)) for d, b in zip(shape, begin)]
    ours = slice_(x, begin, size)
    assert_close_to_reference([ours], [litert_output("SLICE", [Spec(shape, typ, **quant),
                                                               const(np.array(begin, np.int32)),
                                                               const(np.array(size, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x], version=version)])
    count = data.draw(st.integers(1, len(shape)))  # indices for the leading axes; the rest are whole
    shrink = data.draw(st.integers(0, 2**count - 1))
    begin, end, strides = [], [], []
    for axis, d in enumerate(shape[:count]):
        if shrink >> axis & 1:
            begin.append(data.draw(st.integers(-d, d - 1)))
            end.append(begin[-1] + 1)
            strides.append(1)
        else:
            begin.append(data.draw(st.integers(-d - 1, d + 1)))
            end.append(data.draw(st.integers(-d - 1, d + 1)))
            strides.append(data.draw(st.sampled_from([-2, -1, 1, 2, 3])))
    masks = StridedSliceMasks(begin_mask=data.draw(st.integers(0, 2**count - 1)) & ~shrink,
                              end_mask=data.draw(st.integers(0, 2**count - 1)) & ~shrink, shrink_axis_mask=shrink)
    ours = strided_slice(x, np.array(begin), np.array(end), np.array(strides), masks)
    consts = [const(np.array(v, np.int32)) for v in (begin, end, strides)]
    theirs = litert_output("STRIDED_SLICE", [Spec(shape, typ, **quant), *consts], Spec(ours.shape, typ, **quant), [x],
                           version=version, begin_mask=masks.begin_mask, end_mask=masks.end_mask,
                           shrink_axis_mask=shrink)
    assert_close_to_reference([ours], [theirs])


# op -> its array reference as f(x, quantization), for the unary cases below.
UNARY_REFERENCES = {
    "RELU": lambda x, q: relu("RELU", x, q), "RELU6": lambda x, q: relu("RELU6", x, q), "LOGISTIC": logistic,
    "TANH": tanh, "ELU": elu, "GELU": lambda x, q: gelu(x, False, q), "HARD_SWISH": hard_swish,
    "LEAKY_RELU": lambda x, q: leaky_relu(x, 0.2, q), "EXP": exp, "LOG": log, "SQRT": sqrt, "RSQRT": rsqrt,
    "ABS": absolute, "NEG": lambda x, q: neg(x), "SQUARE": lambda x, q: square(x)}
UNARY_ARRAY_CASES = [("RELU", "FLOAT32", 1), ("RELU", "INT8", 2), ("RELU6", "UINT8", 2), ("LOGISTIC", "FLOAT32", 1),
                     ("LOGISTIC", "INT8", 2), ("TANH", "UINT8", 1), ("TANH", "FLOAT32", 1), ("ELU", "FLOAT32", 1),
                     ("ELU", "INT8", 1), ("GELU", "FLOAT32", 1), ("GELU", "INT8", 2), ("HARD_SWISH", "FLOAT32", 1),
                     ("HARD_SWISH", "INT8", 1), ("LEAKY_RELU", "FLOAT32", 1), ("LEAKY_RELU", "INT8", 1),
                     ("EXP", "FLOAT32", 1), ("EXP", "INT8", 2), ("EXP", "INT16", 2), ("LOG", "FLOAT32", 1),
                     ("LOG", "INT8", 2), ("SQRT", "FLOAT32", 1), ("SQRT", "INT8", 2), ("RSQRT", "FLOAT32", 1),
                     ("RSQRT", "INT8", 2), ("RSQRT", "INT16", 3), ("ABS", "FLOAT32", 1), ("ABS", "INT8", 2),
                     ("ABS", "INT32", 5), ("NEG", "INT32", 1), ("SQUARE", "FLOAT32", 1)]


@SETTINGS
@given(case=st.sampled_from(UNARY_ARRAY_CASES), shape=st.lists(st.integers(1, 6), min_size=0, max_size=3),
       scales=st.tuples(st.floats(0.01, 0.1), st.floats(0.01, 0.1)), zero_points=st.tuples(st.integers(-40, 40),
                                                                                          st.integers(-40, 40)),
       seed=st.integers(0, 2**16))
def test_unary_ops_as_arrays_match_litert(case, shape, scales, zero_points, seed):
    op, typ, version = case
    shape = tuple(shape)
    quant_in = quant_out = {}
    if typ in ("INT8", "UINT8", "INT16"):
        offset = 128 if typ == "UINT8" else 0
        zps = (0, 0) if typ == "INT16" else (zero_points[0] + offset, zero_points[1] + offset)
        if op in ("SQRT", "RSQRT") and typ != "INT16":  # no input below the zero point
            zps = (-128 + offset, zps[1])
        quant_in = dict(scale=float(np.float32(scales[0] / (50 if typ == "INT16" else 1))), zero_point=zps[0])
        quant_out = dict(scale=float(np.float32(scales[1])), zero_point=zps[1])
        if op == "LOGISTIC":
            quant_out = dict(scale=1 / 256, zero_point=-128 if typ == "INT8" else 0)
        if op == "TANH":
            quant_out = dict(scale=1 / 128, zero_point=0 if typ == "INT8" else 128)
    x = random_inputs([dict(dtype=np.dtype({"FLOAT32": np.float32, "INT8": np.int8, "UINT8": np.uint8,
                                            "INT16": np.int16, "INT32": np.int32}[typ]), shape=shape)], seed)[0]
    if typ == "FLOAT32" and op in ("LOG", "SQRT", "RSQRT"):
        x = np.abs(x) + np.float32(0.01)
    if typ == "INT16" and op == "RSQRT":
        x = np.abs(x).astype(np.int16)
    quantization = tuple(QuantParams(q["scale"], q["zero_point"]) for q in (quant_in, quant_out)) if quant_in else None
    ours = UNARY_REFERENCES[op](x, quantization)
    options = dict(alpha=0.2) if op == "LEAKY_RELU" else {}
    theirs = litert_output(op, [Spec(shape, typ, **quant_in)], Spec(shape, typ, **quant_out), [x], version=version,
                           **options)
    assert_close_to_reference([np.asarray(ours)], [theirs])


@SETTINGS
@given(op=st.sampled_from(["DIV", "SQUARED_DIFFERENCE", "PRELU"]), typ=st.sampled_from(["FLOAT32", "INT8", "INT32"]),
       activation=st.integers(0, 3), data=st.data())
def test_binary_math_as_arrays_match_litert(op, typ, activation, data):
    if typ == "INT32" and op == "PRELU":
        typ = "FLOAT32"
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    other = shape[data.draw(st.integers(0, len(shape))):]
    specs = [Spec(shape, typ), Spec(other, typ), Spec(shape, typ)]
    a, b = draw_array(data, typ, shape, -100, 100), draw_array(data, typ, other, -100, 100)
    quantization = None
    if typ == "INT8":
        pairs = [(float(np.float32(data.draw(st.floats(0.02, 0.2)))), data.draw(st.integers(-20, 20)))
                 for _ in range(3)]
        specs = [Spec(s.shape, typ, scale=sc, zero_point=zp) for s, (sc, zp) in zip(specs, pairs)]
        quantization = tuple(QuantParams(*p) for p in pairs)
    if op == "DIV":  # a zero divisor (its zero point when quantized) is an error in LiteRT and here
        zero = quantization[1].zero_point if quantization else 0
        b = np.where(b == zero, b.dtype.type(zero + 1), b)
        ours = div(a, b, activation if typ != "INT8" or activation != 3 else 0, quantization)
        options = dict(fused_activation_function=activation if typ != "INT8" or activation != 3 else 0)
    elif op == "SQUARED_DIFFERENCE":
        ours, options = squared_difference(a, b, quantization), {}
    else:
        ours, options = prelu(a, b, quantization), {}
    version = 2 if typ == "INT8" and op == "SQUARED_DIFFERENCE" else 1
    theirs = litert_output(op, specs[:2], specs[2], [a, b], version=version, **options)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(op=st.sampled_from(["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]),
       typ=st.sampled_from(["FLOAT32", "INT32", "INT8", "UINT8"]), data=st.data())
def test_comparisons_and_logical_ops_as_arrays_match_litert(op, typ, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    other = shape[data.draw(st.integers(0, len(shape))):]
    lo, hi = {"INT8": (-128, 127), "UINT8": (0, 255)}.get(typ, (-3, 3))
    a, b = draw_array(data, typ, shape, lo, hi), draw_array(data, typ, other, lo, hi)
    specs, quantization = [Spec(shape, typ), Spec(other, typ)], None
    if typ in ("INT8", "UINT8"):
        pairs = [(float(np.float32(data.draw(st.floats(0.01, 0.5)))),
                  data.draw(st.integers(-20, 20)) + (128 if typ == "UINT8" else 0)) for _ in range(2)]
        specs = [Spec(s.shape, typ, scale=sc, zero_point=zp) for s, (sc, zp) in zip(specs, pairs)]
        quantization = tuple(QuantParams(*p) for p in pairs)
    ours = compare(op, a, b, quantization)
    theirs = litert_output(op, specs, Spec(ours.shape, "BOOL"), [a, b], version=2 if typ == "INT8" else 1)
    assert_close_to_reference([ours], [theirs])
    p, q = a > 0, b > 0
    for name, fn in (("LOGICAL_AND", logical_and), ("LOGICAL_OR", logical_or)):
        ours = fn(p, q)
        theirs = litert_output(name, [Spec(shape, "BOOL"), Spec(other, "BOOL")], Spec(ours.shape, "BOOL"), [p, q])
        assert_close_to_reference([ours], [theirs])
    assert_close_to_reference([logical_not(p)], [litert_output("LOGICAL_NOT", [Spec(shape, "BOOL")],
                                                               Spec(shape, "BOOL"), [p])])


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_repeating_and_filling_ops_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    multiples = [data.draw(st.integers(0, 3)) for _ in shape]
    ours = tile(x, multiples)
    assert_close_to_reference([ours], [litert_output("TILE", [Spec(shape, typ, **quant),
                                                              const(np.array(multiples, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x],
                                                     version=3 if typ == "INT8" else 1)])
    target = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2))) + tuple(
        d if d != 1 else data.draw(st.integers(1, 3)) for d in shape)
    ones = draw_array(data, typ, tuple(1 if d != t else d for d, t in zip(shape, target[-len(shape):])))
    ours = broadcast_to(ones, target)
    assert_close_to_reference([ours], [litert_output("BROADCAST_TO", [Spec(ones.shape, typ, **quant),
                                                                      const(np.array(target, np.int32))],
                                                     Spec(target, typ, **quant), [ones],
                                                     version=3 if typ == "INT8" else 2)])
    count = data.draw(st.integers(1, 3))
    values = [draw_array(data, typ, shape) for _ in range(count)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    ours = pack(values, axis + len(shape) + 1 if axis < 0 else axis)
    assert_close_to_reference([ours], [litert_output("PACK", [Spec(shape, typ, **quant)] * count,
                                                     Spec(ours.shape, typ, **quant), values, version=version,
                                                     values_count=count, axis=axis)])
    value = x.reshape(-1)[:1].reshape(())
    ours = fill(shape, value)
    assert_close_to_reference([ours], [litert_output("FILL", [const(np.array(shape, np.int32)), Spec((), typ, **quant)],
                                                     Spec(shape, typ, **quant), [value],
                                                     version=3 if typ == "INT8" else 1)])
    if typ != "INT8":  # zeros_like.cc: int64, int32 and float32
        assert_close_to_reference([zeros_like(x)], [litert_output("ZEROS_LIKE", [Spec(shape, typ)], Spec(shape, typ),
                                                                  [x])])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8"]), flags=st.sampled_from([(False, False), (True, False),
                                                                                  (False, True)]), data=st.data())
def test_resizes_as_arrays_match_litert(typ, flags, data):
    shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)),
             data.draw(st.integers(1, 3)))
    size = (data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12)))
    x = draw_array(data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255) if typ == "UINT8" else (-9, 9)))
    if typ == "FLOAT32":
        x = x + np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    quant = dict(scale=0.1, zero_point=-3 if typ == "INT8" else 120) if typ != "FLOAT32" else {}
    options = ResizeOptions(*flags)
    version = 3 if any(flags) else 2 if typ == "INT8" else 1
    for op, fn in (("RESIZE_BILINEAR", resize_bilinear), ("RESIZE_NEAREST_NEIGHBOR", resize_nearest_neighbor)):
        ours = fn(x, size, options)
        theirs = litert_output(op, [Spec(shape, typ, **quant), const(np.array(size, np.int32))],
                               Spec(ours.shape, typ, **quant), [x], version=version, align_corners=flags[0],
                               half_pixel_centers=flags[1])
        assert_close_to_reference([ours], [theirs])


@pytest.mark.slow
@SETTINGS
@given(variant=st.sampled_from([{}, dict(cifg=True), dict(peephole=True), dict(projection=True, projection_bias=True),
                                dict(layer_norm=True), dict(cifg=True, peephole=True, layer_norm=True)]),
       time_major=st.booleans(), activation=st.sampled_from([0, 1, 4]), seed=st.integers(0, 2**16))
def test_lstm_as_arrays_matches_litert(variant, time_major, activation, seed):
    from tests.runtime.test_lstm import lstm_model

    model = lstm_model(time_major=time_major, fused_activation_function=activation, seed=seed, n_output=4 if
                       variant.get("projection") else None, **variant)
    constants = Interpreter(model_content=model)
    constants.allocate_tensors()
    index = load_model(model).subgraphs[0].operators[0].inputs

    def value(i):
        return None if index[i] < 0 else constants.get_tensor(index[i])

    weights = LstmWeights.from_gates([value(i) for i in (1, 2, 3, 4)], [value(i) for i in (5, 6, 7, 8)],
                                     [value(i) for i in (12, 13, 14, 15)],
                                     tuple(value(i) for i in (9, 10, 11)) if variant.get("peephole") else None,
                                     tuple(value(i) for i in (20, 21, 22, 23)) if variant.get("layer_norm") else None,
                                     value(16), value(17))
    x = random_inputs(constants.get_input_details(), seed)[0]
    steps = x if time_major else x.transpose(1, 0, 2)
    batch = steps.shape[1]
    ours, _, _ = lstm(steps, np.zeros((batch, weights.n_output), np.float32),
                      np.zeros((batch, weights.n_cell), np.float32), weights, LstmOptions(activation_name(activation)),
                      time_major)
    assert_close_to_reference([ours if time_major else ours.transpose(1, 0, 2)], run_litert(model, [x]))


