"""Reductions: MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, ARG_MAX, ARG_MIN.

MEAN takes float32, int32, int64, uint8 and int8. SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_PROD follow
reduce.cc's optimized kernels: float32 and int32/int64 (wrapping) directly, 8/16-bit quantized SUM
through a float32 rescale, REDUCE_PROD through a rescale after every product, REDUCE_MAX/MIN on the
raw values (input and output share their quantization).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import EIGHT_BIT, check, store_plan, tensor_values
from accelsim.runtime.quant import (
    dtype_range,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_half_up,
    multiply_by_quantized_multiplier_int64,
    quantize_multiplier,
    tflite_round,
    wrap32,
)
from accelsim.runtime.registration import Registration

_TYPES = ("FLOAT32", "INT32", "INT64", *EIGHT_BIT)


def resolve_axes(axis_values, rank: int) -> tuple[int, ...]:
    """reduce.cc ResolveAxis: negative axes wrap, duplicates drop, order of first use kept; rank 0 reduces nothing."""
    if rank == 0:
        return ()
    resolved: list[int] = []
    for a in np.asarray(axis_values).reshape(-1).tolist():
        current = a + rank if a < 0 else a
        check(0 <= current < rank, f"invalid axis {a} for an input of rank {rank}")
        if current not in resolved:
            resolved.append(current)
    return tuple(resolved)


def reduced_shape(shape, axes, keep_dims: bool) -> tuple[int, ...]:
    """The output shape: reduced axes become 1 (keep_dims) or disappear."""
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


@dataclass(frozen=True)
class ReduceQuantization:
    """A quantized reduction's input and output (scale, zero point) and output dtype."""

    in_scale: float
    in_zero_point: int
    out_scale: float
    out_zero_point: int
    dtype: np.dtype

    @classmethod
    def of(cls, x, out) -> ReduceQuantization:
        """The quantization of input tensor `x` and output tensor `out`."""
        return cls(x.scale, x.zero_point, out.scale, out.zero_point, out.dtype)


@dataclass(frozen=True)
class _MeanPlan:
    """Per-node constants: the resolved constant axes, and `fast`: the whole invoke, for the cases
    prepare specialized (None: the generic path)."""

    axes: tuple[int, ...] | None = None
    fast: Callable[[], None] | None = None


def _mean_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "MEAN takes (input, axis) and one output")
    x = ctx.input(node, 0)
    axis = ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(axis.type == "INT32", f"axis tensor must be INT32, got {axis.type}")
    check(x.type in _TYPES, f"type {x.type} is not supported ({', '.join(_TYPES)})")
    check(out.type == x.type, f"output type {out.type} differs from input type {x.type}")
    if not axis.is_constant:
        ctx.set_dynamic(out)
        node.user_data = _MeanPlan()
        return
    axes = resolve_axes(axis.data, len(x.shape))
    keep_dims = bool(node.options.keep_dims)
    ctx.resize_tensor(out, reduced_shape(x.shape, axes, keep_dims))
    count = _count(x.shape, axes)
    lo, hi = dtype_range(x.dtype) if x.type in EIGHT_BIT else (0, 0)
    fast = None
    if x.type in EIGHT_BIT and 0 < count * (hi - lo) < 1 << 16:
        fast = _mean_table_plan(x, out, axes, count, keep_dims)
    elif x.type == "FLOAT32" and axes and count > 0:
        fast = _float_mean_plan(x, out, axes, count, keep_dims)
    node.user_data = _MeanPlan(axes, fast)


def _float_mean_plan(x, out, axes, count: int, keep_dims: bool) -> Callable[[], None]:
    """The float32 sum over the axes (as _float_mean), divided by the count in place."""
    divisor = np.array(count, dtype=np.float32)
    if out.shape == ():
        return store_plan(out, lambda: np.add.reduce(x.data, axis=axes) / divisor)
    if axes == (len(x.shape) - 1,):
        # The last axis (a layer norm's): the sum as a float32 product with ones, one BLAS call
        # (1.0 us against np.add.reduce's 1.5 for 8 rows of 32), the output's shape given by the
        # ones' (a trailing 1 for keep_dims).
        ones = np.ones((count, 1) if keep_dims else (count,), dtype=np.float32)

        def run() -> None:
            total = np.dot(x.data, ones)
            out.unchecked_data = np.divide(total, divisor, out=total)  # store_plan's rule

        return run

    def compute() -> np.ndarray:
        total = np.add.reduce(x.data, axis=axes, keepdims=keep_dims)
        return np.divide(total, divisor, out=total)

    return store_plan(out, compute)


def _mean_table_plan(x, out, axes, count: int, keep_dims: bool) -> Callable[[], None]:
    """The quantized MEAN's result for every possible sum: invoke only sums (exactly, in int16 when
    it cannot overflow) and looks up."""
    lo, hi = dtype_range(x.dtype)
    totals = np.arange(count * lo, count * hi + 1, dtype=np.int64)
    out_lo, out_hi = dtype_range(out.dtype)
    sum_type = np.int16 if count * max(-lo, hi) <= np.iinfo(np.int16).max else np.int32
    if keep_dims and len(x.shape) == 4 and sorted(axes) == [1, 2]:
        # optimized_integer_ops/mean.h: the first vector_channels channels take the SIMD rounding.
        vector_channels = x.shape[3] // 16 * 16
        multiplier, shift, bias = _mean_4d_params(ReduceQuantization.of(x, out), count)
        rows = np.stack([multiply_by_quantized_multiplier_half_up(totals, multiplier, shift) + bias,
                         multiply_by_quantized_multiplier(totals, multiplier, shift) + bias])
        table = np.clip(rows, out_lo, out_hi).astype(out.dtype).reshape(-1)
        # Index sum - lowest sum, plus one row for the scalar channels.
        offsets = np.full(out.shape, -count * lo, dtype=np.intp)
        offsets[..., vector_channels:] += totals.size

        def compute() -> np.ndarray:
            return table.take(np.add.reduce(x.data, axis=axes, dtype=np.intp, keepdims=True) + offsets)

        return store_plan(out, compute)
    row = np.clip(_quantized_mean_general(ReduceQuantization.of(x, out), totals, count), out_lo,
                  out_hi).astype(out.dtype)
    # Rolled, the table reads a negative sum through NumPy's wrap-around of negative indices.
    table = np.roll(row, count * lo)
    return store_plan(out, lambda: table.take(np.add.reduce(x.data, axis=axes, dtype=sum_type, keepdims=keep_dims)))


def _float_mean(x: np.ndarray, axes, count: int) -> np.ndarray:
    return (x.sum(axis=axes, dtype=np.float32) / np.float32(count)).astype(np.float32)


def _integer_mean(x: np.ndarray, axes, count: int, dtype) -> np.ndarray:
    """reduce.h Mean<int, int64>: the int64 sum divided by the count, truncating toward zero."""
    total = x.sum(axis=axes, dtype=np.int64)
    quotient = np.abs(total) // count
    return (np.sign(total) * quotient).astype(dtype)


def _quantized_mean_4d(q: ReduceQuantization, total: np.ndarray, count: int) -> np.ndarray:
    """optimized_integer_ops/mean.h (4-D, axes {1,2}, keep_dims): float32 bias and scale, one multiply.

    LiteRT's x86 wheels build the NEON branch through NEON_2_SSE (neon_check.h), so MeanImpl
    runs blocks of 16 channels through MultiplyByQuantizedMultiplier4Rows (vqrdmulh, vrshl:
    both round half up) and the remaining channels through the scalar gemmlowp form (half away
    from zero). The oracle runs one thread, hence one depth range.
    """
    multiplier, shift, bias = _mean_4d_params(q, count)
    vector_channels = total.shape[-1] // 16 * 16
    scaled = np.empty_like(total)
    scaled[..., :vector_channels] = multiply_by_quantized_multiplier_half_up(
        total[..., :vector_channels], multiplier, shift)
    scaled[..., vector_channels:] = multiply_by_quantized_multiplier(total[..., vector_channels:], multiplier, shift)
    return scaled + bias


def _mean_4d_params(q: ReduceQuantization, count: int) -> tuple[int, int, int]:
    """optimized_integer_ops/mean.h: (multiplier, shift, bias) from float32 scale and bias arithmetic."""
    f32 = np.float32
    temp = f32(q.in_zero_point) * f32(q.in_scale) / f32(q.out_scale)
    temp = temp + f32(0.5) if temp > 0 else temp - f32(0.5)
    bias = q.out_zero_point - int(temp)
    real_scale = f32(q.in_scale) / (f32(count) * f32(q.out_scale))
    multiplier, shift = quantize_multiplier(float(real_scale))
    return multiplier, shift, bias


def _quantized_mean_general(q: ReduceQuantization, total: np.ndarray, count: int) -> np.ndarray:
    """reference_ops QuantizedMeanOrSum: fold 1/count into the multiplier, then requantize sum - zp * count.

    The multiplier is reduce.cc PrepareMeanOrSum's: input_scale / output_scale, in double.
    """
    base_multiplier, base_shift = quantize_multiplier(q.in_scale / q.out_scale)
    shift = min(count.bit_length() - 1, 32, 31 + base_shift)
    multiplier = (base_multiplier << shift) // count
    shifted = total - q.in_zero_point * count
    return multiply_by_quantized_multiplier(shifted, multiplier, base_shift - shift) + q.out_zero_point


def _mean_invoke(ctx, node) -> None:
    plan: _MeanPlan = node.user_data
    if plan.fast is not None:
        plan.fast()
        return
    _mean_reference(ctx, node)


def mean(x: np.ndarray, axes: tuple[int, ...], keep_dims: bool,
         quantization: ReduceQuantization | None = None) -> np.ndarray:
    """MEAN of `x` over resolved `axes` (reduce.cc, reduce.h Mean, reference_ops QuantizedMeanOrSum and
    optimized_integer_ops/mean.h's 4-D rule): the sum over the axes, divided as each type does.

    Float32 sums in float32 and divides; int32/int64 truncate toward zero; 8-bit (`quantization`)
    requantize the int64 sum (the 4-D rule for NHWC spatial means with keep_dims). An empty input
    gives NaN, 0 for integer types (reduce.cc InitializeMeanOutput). The fast plans
    (_float_mean_plan, _mean_table_plan) implement this (tests/runtime/test_references.py).
    """
    shape = reduced_shape(x.shape, axes, keep_dims)
    dtype = x.dtype if quantization is None else quantization.dtype
    if x.size == 0:
        return np.full(shape, np.nan if x.dtype == np.float32 else 0, dtype=dtype)
    count = _count(x.shape, axes)
    if quantization is None:
        result = _float_mean(x, axes, count) if x.dtype == np.float32 else _integer_mean(x, axes, count, dtype)
        return np.asarray(result, dtype=dtype).reshape(shape)
    total = x.sum(axis=axes, dtype=np.int64)
    if keep_dims and x.ndim == 4 and sorted(axes) == [1, 2]:
        q = _quantized_mean_4d(quantization, total, count)
    else:
        q = _quantized_mean_general(quantization, total, count)
    lo, hi = dtype_range(dtype)
    return np.clip(q, lo, hi).astype(dtype).reshape(shape)


def _mean_reference(ctx, node) -> None:
    """`mean` on a node: its axes (resolved at prepare when constant), keep_dims and quantization."""
    plan: _MeanPlan = node.user_data
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    axes = plan.axes if plan.axes is not None else resolve_axes(tensor_values(ctx.input(node, 1)), len(x.shape))
    quantization = ReduceQuantization.of(x, out) if x.type in EIGHT_BIT else None
    out.data = mean(x.data, axes, node.options.keep_dims, quantization)


# ---------------------------------------------------------------------------------------------
# SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD


@dataclass(frozen=True)
class _Reduction:
    """One reducer: its types and how it combines raw values (the unquantized path)."""

    op: str
    types: tuple[str, ...]
    quantized: tuple[str, ...]  # types that carry quantization and take the op's quantized path
    raw: Callable  # (values, axes) -> reduced values in the input dtype


def _accumulate(combine):
    """Sum/product: float32 accumulates in float64 and rounds once (LiteRT's running float32 sum or
    product differs from that by less than the float tolerance); integers wrap in their own type
    (AddTensorValuesWithExpectedOverflow)."""
    def reduce(x, axes):
        if x.dtype == np.float32:
            return combine(x, axis=axes, dtype=np.float64).astype(np.float32)
        return combine(x, axis=axes, dtype=x.dtype)

    return reduce


def _extremum(combine, lowest: bool):
    """Max/min with the neutral element of reduce.cc (lowest / max of the type) for empty reductions."""
    def reduce(x, axes):
        info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
        return combine(x, axis=axes, initial=info.min if lowest else info.max)

    return reduce


_REDUCTIONS = {
    "SUM": _Reduction("SUM", ("FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16"), ("UINT8", "INT8", "INT16"),
                      _accumulate(np.sum)),
    "REDUCE_MAX": _Reduction("REDUCE_MAX", ("FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16"), (),
                             _extremum(np.max, lowest=True)),
    "REDUCE_MIN": _Reduction("REDUCE_MIN", ("FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16"), (),
                             _extremum(np.min, lowest=False)),
    "REDUCE_PROD": _Reduction("REDUCE_PROD", ("FLOAT32", "INT32", "INT64", "INT8", "INT16"), ("INT8", "INT16"),
                              _accumulate(np.prod)),
}


def _reduce_prepare(reduction: _Reduction):
    op = reduction.op

    def prepare(ctx, node) -> None:
        check(len(node.inputs) == 2 and len(node.outputs) == 1, f"{op} takes (input, axis) and one output")
        x, axis, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
        check(axis.type == "INT32", f"{op}: axis tensor must be INT32, got {axis.type}")
        check(x.type in reduction.types, f"{op}: type {x.type} is not supported ({', '.join(reduction.types)})")
        check(out.type == x.type, f"{op}: output type {out.type} differs from input type {x.type}")
        if x.type in reduction.quantized:
            check(x.scales.size == 1 and out.scales.size == 1, f"{op}: {x.type} input and output need one "
                                                                "quantization scale each")
        if x.type == "INT16":
            check(x.zero_point == 0 and out.zero_point == 0, f"{op}: int16 zero points must be 0")
        if not reduction.quantized and x.type in ("UINT8", "INT8", "INT16"):
            # reduce.cc EvalType: max/min compare raw values, so both sides must share their quantization.
            check(x.scale == out.scale and x.zero_point == out.zero_point,
                  f"{op}: input quantization ({x.scale}, {x.zero_point}) differs from the output's "
                  f"({out.scale}, {out.zero_point})")
        if not axis.is_constant:
            ctx.set_dynamic(out)
            return
        axes = resolve_axes(tensor_values(axis), len(x.shape))
        ctx.resize_tensor(out, reduced_shape(x.shape, axes, node.options.keep_dims))

    return prepare


def _quantized_sum(q: ReduceQuantization, total: np.ndarray, count: int) -> np.ndarray:
    """optimized_ops::QuantizedMeanOrSum(compute_sum): round(sum * s + bias) + zp_out, all in float32.

    s = input_scale / output_scale and bias = -zp_in * s * count, each product rounded to float32.
    """
    f32 = np.float32
    scale = f32(q.in_scale) / f32(q.out_scale)
    bias = f32(f32(-q.in_zero_point) * scale) * f32(count)
    value = tflite_round(total.astype(f32) * scale + bias)
    return value.astype(np.int64) + q.out_zero_point


def _quantized_prod(x: np.ndarray, q: ReduceQuantization, axes) -> np.ndarray:
    """optimized_ops::QuantizedReduceProd: fold each output's values in memory order, rescaling every step.

    reduce.cc GetQuantProdScaling: s = input_scale / output_scale**(1/n) (double) for n reduced values;
    acc = q0 - zp, then acc = M(acc * (q - zp)) for each next value, and one last M(acc), where M is the
    int64 MultiplyByQuantizedMultiplier (its int32 result wraps). The fold is sequential by nature.
    """
    kept = [a for a in range(x.ndim) if a not in axes]
    values = x.transpose(kept + sorted(axes)).reshape(-1 if kept else 1, _count(x.shape, axes))
    n = values.shape[1]
    multiplier, shift = quantize_multiplier(q.in_scale / np.power(float(q.out_scale), 1.0 / n))
    centered = values.astype(np.int64) - q.in_zero_point
    acc = centered[:, 0]
    for j in range(1, n):
        acc = wrap32(multiply_by_quantized_multiplier_int64(acc * centered[:, j], multiplier, shift))
    return wrap32(multiply_by_quantized_multiplier_int64(acc, multiplier, shift)) + q.out_zero_point


def _count(shape, axes) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def reduce(op: str, x: np.ndarray, axes: tuple[int, ...], keep_dims: bool,
           quantization: ReduceQuantization | None = None) -> np.ndarray:
    """SUM, REDUCE_MAX, REDUCE_MIN or REDUCE_PROD of `x` over resolved `axes` (reduce.cc EvalGeneric/EvalSum).

    Without `quantization` the raw values combine in the input type (_REDUCTIONS). With it (quantized
    SUM and REDUCE_PROD) the result is rescaled to the output's quantization and saturated to its
    dtype; an empty input leaves the output at its zero point, as the kernels return early.
    """
    shape = reduced_shape(x.shape, axes, keep_dims)
    if quantization is None:
        return np.asarray(_REDUCTIONS[op].raw(x, axes)).reshape(shape)
    if x.size == 0:
        values = np.full(reduced_shape(x.shape, axes, False), quantization.out_zero_point)
    elif op == "SUM":
        values = _quantized_sum(quantization, x.sum(axis=axes, dtype=np.int64), _count(x.shape, axes))
    elif not axes:
        values = x  # QuantizedReduceProd: ReduceIsCopy, no rescale
    else:
        values = _quantized_prod(x, quantization, axes)
    lo, hi = dtype_range(quantization.dtype)
    return np.clip(np.asarray(values), lo, hi).astype(quantization.dtype).reshape(shape)


def _reduce_node(reduction: _Reduction):
    """`reduce` on a node: its axes tensor, keep_dims option and (quantized types) quantization."""
    def node_reduce(ctx, node) -> None:
        x, out = ctx.input(node, 0), ctx.output(node, 0)
        axes = resolve_axes(tensor_values(ctx.input(node, 1)), len(x.shape))
        quantization = ReduceQuantization.of(x, out) if x.type in reduction.quantized else None
        out.data = reduce(reduction.op, x.data, axes, node.options.keep_dims, quantization).astype(out.dtype)

    return node_reduce


# ---------------------------------------------------------------------------------------------
# ARG_MAX, ARG_MIN

_ARG_TYPES = ("FLOAT32", "UINT8", "INT8", "INT32", "BOOL")
_INDEX_TYPES = {2: "INT32", 4: "INT64"}  # schema TensorType codes allowed in ArgMax/ArgMinOptions.output_type


def _arg_axis(axis_t, rank: int, op: str) -> int:
    values = np.asarray(tensor_values(axis_t)).reshape(-1)
    check(values.size == 1, f"{op}: axis must have exactly one element, got {values.size}")
    axis = int(values[0])
    resolved = axis + rank if axis < 0 else axis
    check(0 <= resolved < rank, f"{op}: invalid axis {axis} for an input of rank {rank}")
    return resolved


def _arg_shape(x_shape, axis: int, op: str) -> tuple[int, ...]:
    check(x_shape[axis] > 0, f"{op}: cannot compute {op} over an empty axis")
    return tuple(d for i, d in enumerate(x_shape) if i != axis)


def _arg_prepare(op: str):
    def prepare(ctx, node) -> None:
        check(len(node.inputs) == 2 and len(node.outputs) == 1, f"{op} takes (input, axis) and one output")
        x, axis, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
        check(axis.type in ("INT32", "INT64"), f"{op}: axis tensor must be INT32 or INT64, got {axis.type}")
        index_type = _INDEX_TYPES.get(int(node.options.output_type))
        check(index_type is not None, f"{op}: output_type {node.options.output_type} must be INT32 (2) or INT64 (4)")
        check(out.type == index_type, f"{op}: output_type is {index_type} but the output tensor is {out.type}")
        check(x.type in _ARG_TYPES, f"{op}: type {x.type} is not supported ({', '.join(_ARG_TYPES)})")
        check(len(x.shape) >= 1, f"{op}: input must have at least one dimension")
        if not axis.is_constant:
            ctx.set_dynamic(out)
            return
        ctx.resize_tensor(out, _arg_shape(x.shape, _arg_axis(axis, len(x.shape), op), op))

    return prepare


def arg_min_max(op: str, x: np.ndarray, axis: int, dtype) -> np.ndarray:
    """ARG_MAX or ARG_MIN of `x` along resolved `axis`, as `dtype` indices (reference_ops::ArgMinMax).

    Ties give the first index, as the kernels' strict comparisons do. Float: arg_min_max.h's NaN-aware
    comparator never lets a NaN win and an all-NaN row gives index 0. (LiteRT's x86 last-axis float
    kernel reduces 4-lane blocks with NEON_2_SSE's vpmax, which keeps a NaN in its first operand, so
    with NaNs in the input it can return another index; not reproduced.)
    """
    pick = np.argmax if op == "ARG_MAX" else np.argmin
    if x.dtype != np.float32:
        return np.asarray(pick(x, axis=axis), dtype=dtype)
    nan = np.isnan(x)
    index = pick(np.where(nan, -np.inf if op == "ARG_MAX" else np.inf, x), axis=axis)
    return np.asarray(np.where(nan.all(axis=axis), 0, index), dtype=dtype)


def _arg_node(op: str):
    """`arg_min_max` on a node: its axis tensor and output type."""
    def node_arg(ctx, node) -> None:
        x, out = ctx.input(node, 0), ctx.output(node, 0)
        axis = _arg_axis(ctx.input(node, 1), len(x.shape), op)
        out.data = arg_min_max(op, x.data, axis, out.dtype).reshape(_arg_shape(x.shape, axis, op))

    return node_arg


def register(resolver) -> None:
    # op_version.cc: MEAN v2 adds int8, v3 adds int16 (not implemented).
    resolver.add_builtin("MEAN", Registration(prepare=_mean_prepare, invoke=_mean_invoke, reference=_mean_reference,
                                              work=work.reduce),
                         1, 2)
    # SUM, REDUCE_MAX/MIN/PROD and ARG_MAX/MIN have no fast path: the node form of the array
    # function (`reduce`, `arg_min_max`) is both the invoke and the reference.
    # SUM: v1 float32/int32/int64/uint8 (and int16, which op_version.cc leaves at 1), v2 int8.
    # REDUCE_MAX/MIN: v2 int8, v3 int16. REDUCE_PROD: v2 quantized int8/int16.
    for op, max_version in (("SUM", 2), ("REDUCE_MAX", 3), ("REDUCE_MIN", 3), ("REDUCE_PROD", 2)):
        reduction = _REDUCTIONS[op]
        invoke = _reduce_node(reduction)
        resolver.add_builtin(op, Registration(prepare=_reduce_prepare(reduction), invoke=invoke, reference=invoke,
                                              work=work.reduce),
                             1, max_version)
    # ARG_MAX/ARG_MIN: v1 float32/uint8/int32, v2 int8, v3 bool.
    for op in ("ARG_MAX", "ARG_MIN"):
        invoke = _arg_node(op)
        resolver.add_builtin(op, Registration(prepare=_arg_prepare(op), invoke=invoke, reference=invoke,
                                              work=work.reduce), 1, 3)
