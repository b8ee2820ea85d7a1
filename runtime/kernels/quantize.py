"""QUANTIZE and DEQUANTIZE: float <-> integer, requantization, float16 weights.

LiteRT's x86 wheel compiles the optimized kernels' NEON blocks through
NEON_2_SSE, so a flat loop runs whole SIMD blocks first and a scalar tail
after them, and the two round differently. The kernels below reproduce both
parts (quantize.cc, optimized_ops.h AffineQuantize / Requantize / Dequantize): computed, they are the
specification (`quantize`, `requantize`, `dequantize`), which the table and block plans implement.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.ir import Quantization
from accelsim.runtime.kernels.common import check, check_inputs, fast_clip, integer_domain, run_plan, store_plan
from accelsim.runtime.quant import (
    cast_to_int32,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_half_up,
    quantize_multiplier,
    tflite_round,
    wrap32,
)
from accelsim.runtime.registration import Registration
from accelsim.runtime.tensor import ARENA, PERSISTENT_RO

# quantize.cc Prepare: which integer types may be requantized into which.
_REQUANTIZE_OUTPUTS = {
    "INT8": ("UINT8", "INT8", "INT16"),
    "UINT8": ("UINT8", "INT8", "INT16"),
    "INT16": ("INT8", "INT16", "INT32"),
    "INT32": ("INT8", "INT16"),
}
# optimized_ops.h specializes Requantize (16 lanes + scalar tail) only for these pairs.
_SIMD_REQUANTIZE = {("INT8", "INT8"), ("INT8", "UINT8"), ("UINT8", "INT8"), ("UINT8", "UINT8")}
_QUANTIZED_FROM_FLOAT = ("UINT8", "INT8", "INT16")
_DEQUANTIZE_INPUTS = ("UINT8", "INT8", "INT16", "FLOAT16")
_AFFINE_LANES = 8  # AffineQuantize and Dequantize process 8 values per NEON block
_REQUANTIZE_LANES = 16


@dataclass(frozen=True)
class _Requantize:
    multiplier: int
    shift: int
    input_zero_point: int
    output_zero_point: int
    simd: bool
    # For inputs of at most 16 bits: (scalar path, SIMD path) results over integer_domain.
    tables: tuple[np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True)
class _Affine:
    scale: float
    zero_point: int


@dataclass(frozen=True)
class _PerChannel:
    scales: np.ndarray  # float32, shaped to broadcast along the quantized dimension
    zero_points: np.ndarray


def _to_output(rounded: np.ndarray, zero_point: int, dtype) -> np.ndarray:
    """static_cast<int32_t>(rounded) + zero_point (wrapping), clamped to dtype.

    On x86 NaN and values outside int32 convert to INT32_MIN; those and values near the int32
    limits (where adding the zero point wraps) take the exact path.
    """
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        clipped = np.clip(rounded, info.min - zero_point, info.max - zero_point)
        clipped += zero_point
        out = clipped.astype(dtype)
    # min/max are NaN if any value is, and then the comparisons fail too.
    if rounded.size and not (-2.0**30 < rounded.min() and rounded.max() < 2.0**30):
        rare = ~(np.abs(rounded) < 2.0**30)
        out[rare] = np.clip(wrap32(cast_to_int32(rounded[rare]) + zero_point), info.min, info.max)
    return out


def _affine_quantize(x: np.ndarray, params: _Affine, dtype) -> np.ndarray:
    """optimized_ops AffineQuantize: NEON blocks multiply by a float reciprocal and round half
    to even (vcvtnq = cvtps2dq); the scalar tail divides in double and rounds half away."""
    flat = x.reshape(-1)
    body = flat.size - flat.size % _AFFINE_LANES
    head = flat[:body] * np.float32(1.0 / params.scale)
    head = _to_output(np.rint(head, out=head), params.zero_point, dtype)
    if body == flat.size:
        return head.reshape(x.shape)
    out = np.empty(flat.size, dtype)
    out[:body] = head
    out[body:] = _to_output(tflite_round(flat[body:].astype(np.float64) / params.scale), params.zero_point, dtype)
    return out.reshape(x.shape)


def _per_channel_quantize(x: np.ndarray, params: _PerChannel, dtype) -> np.ndarray:
    """reference_ops::PerChannelQuantize: float division, TfLiteRound, truncating cast."""
    q = cast_to_int32(tflite_round(x / params.scales)) + params.zero_points
    info = np.iinfo(dtype)
    return np.clip(wrap32(q), info.min, info.max).astype(dtype)


def _requantize_values(q: np.ndarray, params: _Requantize, simd: bool, dtype) -> np.ndarray:
    """Requantize on one code path: MultiplyByQuantizedMultiplier on (q - zp_in), + zp_out, clamp.

    The SIMD blocks (MultiplyByQuantizedMultiplier4Rows: vqrdmulhq, then vrshlq) round the
    final right shift half up where the scalar form rounds half away from zero.
    """
    x = wrap32(q.astype(np.int64) - params.input_zero_point)
    mbqm = multiply_by_quantized_multiplier_half_up if simd else multiply_by_quantized_multiplier
    y = mbqm(x, params.multiplier, params.shift)
    info = np.iinfo(dtype)
    return np.clip(wrap32(y + params.output_zero_point), info.min, info.max).astype(dtype)


def _requantize(q: np.ndarray, params: _Requantize, dtype) -> np.ndarray:
    """Whole 16-value SIMD blocks first, then the scalar tail (optimized_ops Requantize), computed.

    Inputs of at most 16 bits look their results up instead (params.tables, _positional_lookup).
    """
    flat = q.reshape(-1)
    body = flat.size - flat.size % _REQUANTIZE_LANES if params.simd else 0
    out = np.empty(flat.size, dtype)
    out[:body] = _requantize_values(flat[:body], params, True, dtype)
    out[body:] = _requantize_values(flat[body:], params, False, dtype)
    return out.reshape(q.shape)


def _requantize_params(x, out) -> _Requantize:
    # quantize.cc: effective scale = input_scale / output_scale, in double.
    mult, shift = quantize_multiplier(x.scale / out.scale)
    params = _Requantize(mult, shift, x.zero_point, out.zero_point, (x.type, out.type) in _SIMD_REQUANTIZE)
    if x.dtype.itemsize > 2:
        return params
    values = integer_domain(x.dtype)
    tables = tuple(_requantize_values(values, params, simd, out.dtype) for simd in (False, True))
    return dataclasses.replace(params, tables=tables)


def _quantize_prepare(ctx, node) -> None:
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    qp = out.quantization
    check(qp is not None and qp.is_quantized, "QUANTIZE: the output needs affine quantization parameters")
    if x.type == "FLOAT32":
        check(out.type in _QUANTIZED_FROM_FLOAT,
              f"QUANTIZE: FLOAT32 input cannot be quantized to {out.type} (supported: {_QUANTIZED_FROM_FLOAT})")
        params = _affine_or_per_channel(qp, x.shape)
    else:
        allowed = _REQUANTIZE_OUTPUTS.get(x.type)
        check(allowed is not None and out.type in allowed,
              f"QUANTIZE: input type {x.type} with output type {out.type} is not supported")
        check(x.scale > 0 and out.scale > 0, "QUANTIZE: requantization needs positive input and output scales")
        if x.type == "INT16" and out.type == "INT16":
            check(x.zero_point == 0 and out.zero_point == 0,
                  "QUANTIZE: INT16 -> INT16 requires zero points of 0")
        params = _requantize_params(x, out)
    ctx.resize_tensor(out, x.shape)
    node.user_data = _quantize_runner(x, out, params)


def _affine_or_per_channel(qp, in_shape) -> _Affine | _PerChannel:
    if not qp.per_channel:
        check(qp.scales[0] > 0, "QUANTIZE: the output scale must be positive")
        return _Affine(float(qp.scales[0]), int(qp.zero_points[0]) if qp.zero_points else 0)
    dim = qp.quantized_dimension
    check(0 <= dim < len(in_shape) and in_shape[dim] == len(qp.scales),
          f"QUANTIZE: {len(qp.scales)} per-channel scales do not match dimension {dim} "
          f"of shape {list(in_shape)}")
    shape = [1] * len(in_shape)
    shape[dim] = -1
    scales = np.asarray(qp.scales, dtype=np.float32)
    # quantize.cc: a single zero point is shared by every channel.
    zps = np.broadcast_to(np.asarray(qp.zero_points or (0,), dtype=np.int64), scales.shape)
    return _PerChannel(scales.reshape(shape), zps.reshape(shape))


def _quantize_runner(x, out, params):
    """The invoke prepare picked for this node's case."""
    dtype = out.dtype
    if isinstance(params, _Requantize):
        if params.tables is not None:
            size = int(np.prod(x.shape, dtype=np.int64))
            body = size - size % _REQUANTIZE_LANES if params.simd else 0
            return _positional_lookup(x, out, params.tables[1], params.tables[0], body)

        def requantize() -> None:
            out.data = _requantize(x.data, params, dtype)
        return requantize
    if isinstance(params, _PerChannel):
        def per_channel() -> None:
            out.data = _per_channel_quantize(x.data, params, dtype)
        return per_channel
    size = int(np.prod(x.shape, dtype=np.int64))
    if size % _AFFINE_LANES or size > _FAST_AFFINE_MAX:
        def affine() -> None:
            out.data = _affine_quantize(x.data, params, dtype)
        return affine
    return _block_affine_quantize(x, out, params)


# The fast AffineQuantize below bounds |rounded| through a float32 sum of squares, whose relative
# error stays under size * 2**-24 <= 1/16 up to this size.
_FAST_AFFINE_MAX = 1 << 20


def _block_affine_quantize(x, out, params: _Affine):
    """AffineQuantize of whole NEON blocks only (size % 8 == 0): _affine_quantize with fewer passes.

    While every rounded value is below 2**29 in magnitude, adding the zero point and clamping in
    float32 equals the int32 arithmetic (values past 2**24 clamp the same way either way); a sum of
    squares under 2**58 proves that bound (NaN and inf fail it) and otherwise the exact path runs.
    The constants are 0-d float32 arrays, which ufuncs take without converting a scalar per call.
    """
    dtype = out.dtype
    info = np.iinfo(dtype)
    inverse, zp = np.asarray(np.float32(1.0 / params.scale)), np.asarray(np.float32(params.zero_point))
    lo, hi = np.asarray(np.float32(info.min)), np.asarray(np.float32(info.max))
    multiply, rint, add, dot = np.multiply, np.rint, np.add, np.dot

    def quantize() -> np.ndarray:
        d = x.data
        y = multiply(d, inverse)
        rint(y, out=y)
        flat = y.reshape(-1)
        if not dot(flat, flat) < 2.0**58:
            return _affine_quantize(d, params, dtype)
        add(y, zp, out=y)
        fast_clip(y, lo, hi, y)
        return y.astype(dtype)

    return store_plan(out, quantize)


# Up to this many positions a per-position offset array (4 bytes each) is kept; beyond, each call adds
# the two parts' offsets to a fresh index, so that prepare's memory does not grow with the tensor.
_OFFSETS_MAX = 1 << 16


def _positional_lookup(x, out, head: np.ndarray, tail: np.ndarray, body: int):
    """An 8/16-bit op tabulated twice over integer_domain: `head` for the first `body` values (the SIMD
    blocks), `tail` for the rest.

    One table alone is a take of the raw values: a negative value v indexes from the table's end,
    at the position of its unsigned bit pattern, where integer_domain holds v. Both tables are laid
    out by value, one after the other, and the two parts of the flat input add their table's offset.
    """
    size = int(np.prod(x.shape, dtype=np.int64))
    if body in (0, size):
        lookup = (head if body else tail).take

        def single() -> np.ndarray:
            return lookup(x.data)

        return store_plan(out, single)
    domain = integer_domain(x.dtype)
    order = np.argsort(domain, kind="stable")
    lookup = np.concatenate([head[order], tail[order]]).take
    head_offset = np.intp(-int(domain.min()))
    tail_offset = head_offset + domain.size
    if size <= _OFFSETS_MAX:
        # Small inputs: the offsets precomputed per position, one addition (cheaper per call).
        offsets = np.full(size, head_offset, np.int32)
        offsets[body:] = tail_offset
        offsets = offsets.reshape(x.shape)
        add = np.add

        def split_small() -> np.ndarray:
            return lookup(add(x.data, offsets))

        return store_plan(out, split_small)
    shape = out.shape

    def split() -> np.ndarray:
        i = x.data.reshape(-1).astype(np.intp)
        i[:body] += head_offset
        i[body:] += tail_offset
        return lookup(i).reshape(shape)

    return store_plan(out, split)



def dequantize(q: np.ndarray, qp: Quantization | None) -> np.ndarray:
    """DEQUANTIZE (dequantize.cc): real = scale * (q - zero_point) as LiteRT's optimized Dequantize rounds it,
    per tensor or along `qp.quantized_dimension`; float16 values (qp None) widen to float32."""
    if q.dtype == np.float16:
        return q.astype(np.float32)
    if qp.per_channel:
        # reference_ops::PerChannelDequantize: one float multiply, rounded once.
        shape = [1] * q.ndim
        shape[qp.quantized_dimension] = -1
        scales = np.asarray(qp.scales, dtype=np.float64).reshape(shape)
        zps = np.broadcast_to(np.asarray(qp.zero_points or (0,), dtype=np.int64), (len(qp.scales),))
        return (scales * (q.astype(np.int64) - zps.reshape(shape))).astype(np.float32)
    scale, zp = float(qp.scales[0]), int(qp.zero_points[0]) if qp.zero_points else 0
    flat = q.reshape(-1).astype(np.int64)
    body = flat.size - flat.size % _AFFINE_LANES
    # NEON blocks (ScaleWithNewZeroPoint, no FMA on x86): float q*scale, then + float(-zp*scale).
    head = flat[:body].astype(np.float32) * np.float32(scale) + np.float32(-zp * scale)
    # Scalar tail: static_cast<float>(double scale * (q - zp)).
    tail = (scale * (flat[body:] - zp)).astype(np.float32)
    return np.concatenate([head, tail]).reshape(q.shape)


def _dequantize_prepare(ctx, node) -> None:
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(x.type in _DEQUANTIZE_INPUTS,
          f"DEQUANTIZE: input type {x.type} is not supported (supported: {_DEQUANTIZE_INPUTS})")
    check(out.type == "FLOAT32", f"DEQUANTIZE: the output must be FLOAT32, not {out.type}")
    if x.type != "FLOAT16":
        qp = x.quantization
        check(qp is not None and qp.is_quantized, f"DEQUANTIZE: the {x.type} input has no quantization parameters")
        if qp.per_channel:
            check(x.type in ("INT8", "UINT8"), f"DEQUANTIZE: per-channel {x.type} input is not supported")
            check(0 <= qp.quantized_dimension < len(x.shape)
                  and x.shape[qp.quantized_dimension] == len(qp.scales),
                  f"DEQUANTIZE: {len(qp.scales)} per-channel scales do not match dimension "
                  f"{qp.quantized_dimension} of shape {list(x.shape)}")
        if x.type == "INT16":
            check(x.zero_point == 0, "DEQUANTIZE: INT16 input requires a zero point of 0")
    ctx.resize_tensor(out, x.shape)
    # dequantize.cc: a constant input (e.g. float16 or int8 weights) is converted once, into a
    # kTfLitePersistentRo output, so that the consumers' prepares can precompute from it.
    if x.is_constant:
        node.user_data = _constant_dequantize(out, dequantize(x.data, x.quantization))
    elif x.type != "FLOAT16" and not x.quantization.per_channel:
        node.user_data = _tabulated_dequantize(x, out)
    else:
        def run() -> None:
            out.data = dequantize(x.data, x.quantization)
        node.user_data = run


def _constant_dequantize(out, values: np.ndarray):
    if out.allocation in (ARENA, PERSISTENT_RO):
        out.allocation = PERSISTENT_RO
        out.data = values

    def dequantize() -> None:
        if out.data is not values:  # a persistent output already holds it
            out.data = values

    return dequantize


def _tabulated_dequantize(x, out):
    """Per-tensor 8/16-bit Dequantize as two tables over every input value: NEON blocks, scalar tail."""
    scale, zp = x.scale, x.zero_point
    values = integer_domain(x.dtype).astype(np.int64)
    # NEON blocks (ScaleWithNewZeroPoint, no FMA on x86): float q*scale, then + float(-zp*scale).
    block = values.astype(np.float32) * np.float32(scale) + np.float32(-zp * scale)
    # Scalar tail: static_cast<float>(double scale * (q - zp)).
    tail = (scale * (values - zp)).astype(np.float32)
    size = int(np.prod(x.shape, dtype=np.int64))
    return _positional_lookup(x, out, block, tail, size - size % _AFFINE_LANES)


def quantize(x: np.ndarray, qp: Quantization, dtype) -> np.ndarray:
    """QUANTIZE of float32 `x` to `dtype` with the output's quantization `qp` (quantize.cc): per tensor,
    optimized_ops AffineQuantize (_affine_quantize); per channel, reference_ops::PerChannelQuantize."""
    params = _affine_or_per_channel(qp, x.shape)
    rule = _per_channel_quantize if isinstance(params, _PerChannel) else _affine_quantize
    return rule(x, params, dtype)


def requantize(q: np.ndarray, source: tuple[float, int], target: tuple[float, int], dtype,
               simd: bool = False) -> np.ndarray:
    """QUANTIZE of integer `q` in (scale, zero point) `source` to `dtype` in `target` (optimized_ops
    Requantize): MultiplyByQuantizedMultiplier by source / target scale (in double), on whole 16-value
    SIMD blocks first when `simd` (the (u)int8 -> (u)int8 pairs), then the scalar tail (_requantize)."""
    multiplier, shift = quantize_multiplier(source[0] / target[0])
    return _requantize(q, _Requantize(multiplier, shift, source[1], target[1], simd), dtype)


def _quantize_reference(ctx, node) -> None:
    """`quantize` or `requantize` on a node; the lookups and block plans above implement them."""
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    if x.type == "FLOAT32":
        out.data = quantize(x.data, out.quantization, out.dtype)
    else:
        out.data = requantize(x.data, (x.scale, x.zero_point), (out.scale, out.zero_point), out.dtype,
                              (x.type, out.type) in _SIMD_REQUANTIZE)


def _dequantize_reference(ctx, node) -> None:
    """`dequantize` on a node (the tables and constant plans implement it)."""
    x = ctx.input(node, 0)
    ctx.output(node, 0).data = dequantize(x.data, x.quantization)


def _dequantize_work(ctx, node) -> work.NodeWork:
    """A constant input was dequantized at prepare (see _dequantize_prepare): no work per inference."""
    if ctx.input(node, 0).is_constant:
        return work.done_at_prepare(ctx, node)
    return work.elementwise(ctx, node)


def register(resolver) -> None:
    quantize = Registration(prepare=_quantize_prepare, invoke=run_plan, reference=_quantize_reference,
                            work=work.elementwise)
    # v1 float->(u)int8 and (u)int8 requantize, v2 int16, v3 per-channel; v4+ are int4/uint4.
    resolver.add_builtin("QUANTIZE", quantize, 1, 3)
    dequantize = Registration(prepare=_dequantize_prepare, invoke=run_plan, reference=_dequantize_reference,
                              work=_dequantize_work)
    # v1 uint8, v2 int8, v3 int16 and float16, v5 per-channel int8; v4 (sparse input) and
    # v6+ (int4, int2, uint4, float8) are not implemented.
    resolver.add_builtin("DEQUANTIZE", dequantize, 1, 3)
    resolver.add_builtin("DEQUANTIZE", dequantize, 5, 5)
