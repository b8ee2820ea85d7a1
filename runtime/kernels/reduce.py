"""Reductions: MEAN (float32, int32, int64, uint8, int8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runtime.kernels.common import check, tensor_values
from runtime.quant import (
    dtype_range,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_half_up,
    quantize_multiplier,
)
from runtime.resolver import Registration

_QUANTIZED = ("UINT8", "INT8")
_TYPES = ("FLOAT32", "INT32", "INT64", *_QUANTIZED)


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
class _MeanPlan:
    """Per-node constants: the input/output rescaling for quantized types."""

    multiplier: int
    shift: int


def _mean_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "MEAN takes (input, axis) and one output")
    x = ctx.input(node, 0)
    axis = ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(axis.type == "INT32", f"axis tensor must be INT32, got {axis.type}")
    check(x.type in _TYPES, f"type {x.type} is not supported ({', '.join(_TYPES)})")
    check(out.type == x.type, f"output type {out.type} differs from input type {x.type}")
    multiplier = shift = 0
    if x.type in _QUANTIZED:
        # reduce.cc PrepareMeanOrSum: real multiplier = input_scale / output_scale, in double.
        multiplier, shift = quantize_multiplier(x.scale / out.scale)
    node.user_data = _MeanPlan(multiplier, shift)
    if not axis.is_constant:
        ctx.set_dynamic(out)
        return
    axes = resolve_axes(axis.data, len(x.shape))
    ctx.resize_tensor(out, reduced_shape(x.shape, axes, node.options.keep_dims))


def _float_mean(x: np.ndarray, axes, count: int) -> np.ndarray:
    return (x.sum(axis=axes, dtype=np.float32) / np.float32(count)).astype(np.float32)


def _integer_mean(x: np.ndarray, axes, count: int, dtype) -> np.ndarray:
    """reduce.h Mean<int, int64>: the int64 sum divided by the count, truncating toward zero."""
    total = x.sum(axis=axes, dtype=np.int64)
    quotient = np.abs(total) // count
    return (np.sign(total) * quotient).astype(dtype)


def _quantized_mean_4d(x, out, total: np.ndarray, count: int) -> np.ndarray:
    """optimized_integer_ops/mean.h (4-D, axes {1,2}, keep_dims): float32 bias and scale, one multiply.

    LiteRT's x86 wheels build the NEON branch through NEON_2_SSE (neon_check.h), so MeanImpl
    runs blocks of 16 channels through MultiplyByQuantizedMultiplier4Rows (vqrdmulh, vrshl:
    both round half up) and the remaining channels through the scalar gemmlowp form (half away
    from zero). The oracle runs one thread, hence one depth range.
    """
    f32 = np.float32
    temp = f32(x.zero_point) * f32(x.scale) / f32(out.scale)
    temp = temp + f32(0.5) if temp > 0 else temp - f32(0.5)
    bias = out.zero_point - int(temp)
    real_scale = f32(x.scale) / (f32(count) * f32(out.scale))
    multiplier, shift = quantize_multiplier(float(real_scale))
    vector_channels = total.shape[-1] // 16 * 16
    scaled = np.empty_like(total)
    scaled[..., :vector_channels] = multiply_by_quantized_multiplier_half_up(
        total[..., :vector_channels], multiplier, shift)
    scaled[..., vector_channels:] = multiply_by_quantized_multiplier(total[..., vector_channels:], multiplier, shift)
    return scaled + bias


def _quantized_mean_general(x, out, total: np.ndarray, count: int, plan: _MeanPlan) -> np.ndarray:
    """reference_ops QuantizedMeanOrSum: fold 1/count into the multiplier, then requantize sum - zp * count."""
    shift = min(count.bit_length() - 1, 32, 31 + plan.shift)
    multiplier = (plan.multiplier << shift) // count
    shifted = total - x.zero_point * count
    return multiply_by_quantized_multiplier(shifted, multiplier, plan.shift - shift) + out.zero_point


def _mean_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    keep_dims = node.options.keep_dims
    axes = resolve_axes(tensor_values(ctx.input(node, 1)), len(x.shape))
    shape = reduced_shape(x.shape, axes, keep_dims)
    if x.data.size == 0:
        # reduce.cc InitializeMeanOutput: an empty input gives NaN (0 for integer types).
        out.data = np.full(shape, np.nan if x.type == "FLOAT32" else 0, dtype=out.dtype)
        return
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if x.type == "FLOAT32":
        result = _float_mean(x.data, axes, count)
    elif x.type in ("INT32", "INT64"):
        result = _integer_mean(x.data, axes, count, out.dtype)
    else:
        total = x.data.sum(axis=axes, dtype=np.int64)
        if keep_dims and len(x.shape) == 4 and sorted(axes) == [1, 2]:
            q = _quantized_mean_4d(x, out, total, count)
        else:
            q = _quantized_mean_general(x, out, total, count, node.user_data)
        lo, hi = dtype_range(out.dtype)
        result = np.clip(q, lo, hi).astype(out.dtype)
    out.data = np.asarray(result, dtype=out.dtype).reshape(shape)


def register(resolver) -> None:
    # op_version.cc: MEAN v2 adds int8, v3 adds int16 (not implemented).
    resolver.add_builtin("MEAN", Registration(prepare=_mean_prepare, invoke=_mean_invoke), 1, 2)
