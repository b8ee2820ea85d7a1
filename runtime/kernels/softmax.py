"""Softmax ops: SOFTMAX and LOG_SOFTMAX, float32 and 8-bit quantized.

SOFTMAX scales an exp table built with expf (activations.cc PopulateSoftmaxLookupTable; on x86
LiteRT takes this float-table path, not the uint16 LUT of aarch64); 8-bit LOG_SOFTMAX is
optimized_ops::LogSoftmax, which works in float32 from an expf table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    EIGHT_BIT,
    check,
    check_inputs,
    check_output_quantization,
    expf,
    require_positive_scales,
    run_plan,
    store_plan,
    table_index,
    unary_prepare,
)
from accelsim.runtime.quant import cast_to_int32, dtype_range, tflite_round
from accelsim.runtime.registration import Registration

_F32 = np.float32
_SOFTMAX_OUTPUTS = {"INT8": ("INT8", "INT16"), "UINT8": ("UINT8", "INT16")}


def _softmax_prepare(ctx, node) -> None:
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(len(x.shape) >= 1, "SOFTMAX: the input must have at least one dimension")
    beta = _F32(node.options.beta)
    ctx.resize_tensor(out, x.shape)
    if x.type == "FLOAT32":
        check(out.type == "FLOAT32", f"SOFTMAX: FLOAT32 input needs a FLOAT32 output, not {out.type}")
        node.user_data = _softmax_float(x, out, beta)
        return
    allowed = _SOFTMAX_OUTPUTS.get(x.type)
    check(allowed is not None, f"SOFTMAX: input type {x.type} is not supported (supported: FLOAT32, INT8, UINT8)")
    check(out.type in allowed, f"SOFTMAX: {x.type} input needs an output of type {' or '.join(allowed)}, "
                               f"not {out.type}")
    require_positive_scales("SOFTMAX", x, out)
    if x.type == "INT8" and out.type == "INT8":
        check(out.zero_point == -128, f"SOFTMAX: INT8 output zero point must be -128, got {out.zero_point}")
        check(abs(float(out.scale) - 1.0 / 256) <= 0.001 / 256,
              f"SOFTMAX: INT8 output scale must be 1/256, got {out.scale}")
    # PopulateSoftmaxLookupTable: table[255 - d] = expf(scale * d) with scale = -input_scale * beta.
    scale = -_F32(x.scale) * beta
    table = expf(scale * np.arange(256, dtype=np.float32))
    node.user_data = _softmax_quantized(x, out, table)


def softmax(x: np.ndarray, beta: float, in_scale: float = 0.0, out_scale: float = 0.0, out_zp: int = 0,
            out_dtype=np.float32) -> np.ndarray:
    """SOFTMAX's specification over the last axis; the plans below implement it (tests/runtime/test_references.py).

    Float (optimized_ops::Softmax): exp((x - max) * beta) / sum, in float32. 8-bit (the float-table path
    LiteRT takes on x86, activations.cc PopulateSoftmaxLookupTable): e = expf(-input_scale * beta * (max - q)),
    summed left to right in float32; p = e * (1 / (sum * output_scale)); std::round(p) (a uint8 output:
    (int)(p + 0.5f)) plus the output zero point, clamped to the output type.
    """
    if x.dtype == np.float32:
        e = np.exp((x - x.max(axis=-1, keepdims=True)) * _F32(beta))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    d = x.max(axis=-1, keepdims=True).astype(np.int64) - x
    e = expf((-_F32(in_scale) * _F32(beta)) * d.astype(np.float32))
    total = np.add.accumulate(e, axis=-1)[..., -1:]
    p = e * (_F32(1) / (total * _F32(out_scale)))
    rounded = np.floor(p + _F32(0.5)) if out_dtype == np.uint8 else tflite_round(p)
    return np.clip(cast_to_int32(rounded) + out_zp, *dtype_range(out_dtype)).astype(out_dtype)


def _softmax_reference(ctx, node) -> None:
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    out.data = softmax(x.data, node.options.beta, x.scale, out.scale, out.zero_point, out.dtype)


def _softmax_float(x, out, beta: np.float32):
    """optimized_ops::Softmax (float): (x - max) * beta, exp and the normalization, all in float32."""
    rows, shape = _softmax_rows(x), out.shape
    scale = None if beta == 1 else np.asarray(beta)
    row_max, row_sum, subtract, exp = np.maximum.reduce, np.add.reduce, np.subtract, np.exp

    def softmax() -> np.ndarray:
        d = x.data.reshape(rows)  # 2-D: NumPy's per-call cost grows with the rank
        z = subtract(d, row_max(d, axis=1, keepdims=True))
        if scale is not None:
            z *= scale
        exp(z, out=z)
        z /= row_sum(z, axis=1, keepdims=True)
        return z.reshape(shape)

    return store_plan(out, softmax)


def _softmax_rows(x) -> tuple[int, int]:
    """The input as [rows, last dim]."""
    return int(np.prod(x.shape[:-1], dtype=np.int64)), x.shape[-1]


def _softmax_quantized(x, out, table: np.ndarray):
    """optimized_ops::Softmax for 8-bit input (the float-table path LiteRT uses on x86)."""
    out_scale, zp, dtype = _F32(out.scale), out.zero_point, out.dtype
    info = np.iinfo(dtype)
    # Every table value in [0, 1] (table[0] = expf(0) = 1 is the row max's entry, so sum_exp >= 1) bounds
    # each probability: p <= (1 / out_scale) * (1 + 2**-23). For a moderate 1 / out_scale, std::round(p) + zp
    # clamped to the type is then a lookup (see _softmax_lookup).
    k_max = int(float(_F32(1) / out_scale) * (1 + 2.0**-20)) + 2
    if bool(np.all((table >= 0) & (table <= 1))) and k_max <= 2**17 and out.type != "UINT8":
        return _softmax_lookup(x, out, table, k_max)
    round_up_half = out.type == "UINT8"  # uint8 output on x86: (int)(p + 0.5f) instead of std::round
    one = _F32(1)
    rows, shape = _softmax_rows(x), out.shape

    def softmax() -> None:
        q = x.data.reshape(rows)  # 2-D: NumPy's per-call cost grows with the rank
        # max - q in [0, 255] as uint8: the wrapping difference of the unsigned bit patterns.
        row_max = q.max(axis=-1, keepdims=True)
        e = table[np.subtract(table_index(row_max), table_index(q))]
        # The C++ sums the row left to right in float; accumulate keeps that order.
        sum_exp = np.add.accumulate(e, axis=-1)[:, -1:]
        sum_exp *= out_scale
        prob = e * np.divide(one, sum_exp, out=sum_exp)  # inv_sum_exp = 1.0f / (sum_exp * scale)
        rounded = np.floor(prob + _F32(0.5)) if round_up_half else tflite_round(prob)
        out.data = np.clip(cast_to_int32(rounded) + zp, info.min, info.max).astype(dtype).reshape(shape)

    return softmax


def _softmax_lookup(x, out, table: np.ndarray, k_max: int):
    """The 8-bit Softmax with std::round(p) + zp and the clamp as one lookup of floor(2p).

    For p >= 0, std::round(p) = floor(p + 0.5) = (floor(2p) + 1) // 2, and 2p is exact in float32:
    2 * (e * inv_sum_exp) = e * (2 / (sum_exp * scale)), both divisions and products correctly
    rounded (a factor of two commutes with the rounding; a subnormal p gives 0 either way). So the
    probabilities are computed doubled, truncated (the floor, as p >= 0) and looked up in a table of
    clamp((j + 1) // 2 + zp) over every j; take's clip mode is only a guard (the last entry is already
    the type's max). When float32(out_scale) is a power of two, sum_exp * scale is exact and the two
    steps of 2 / (sum_exp * scale) are one division of 2 / scale (measured fixtures use 1/256).
    """
    out_scale, zp, info = _F32(out.scale), out.zero_point, np.iinfo(out.dtype)
    requantized = np.clip((np.arange(2 * k_max + 2) + 1) // 2 + zp, info.min, info.max).astype(out.dtype)
    mantissa, _ = np.frexp(out_scale)
    if mantissa == 0.5:
        numerator, scale = np.asarray(_F32(2) / out_scale), None
    else:
        numerator, scale = np.asarray(_F32(2)), np.asarray(out_scale)
    rows, shape = _softmax_rows(x), out.shape
    row_max, accumulate, subtract, divide = np.maximum.reduce, np.add.accumulate, np.subtract, np.divide
    exp_of, lookup, intp = table.take, requantized.take, np.intp

    def softmax() -> np.ndarray:
        q = x.data.reshape(rows)  # 2-D: NumPy's per-call cost grows with the rank
        # max - q in [0, 255], wrapped to the input's type: as an int8, d - 256 for d > 127, which take
        # reads from the table's end (a negative index), i.e. table[d] again.
        e = exp_of(subtract(row_max(q, axis=1, keepdims=True), q))
        # The C++ sums the row left to right in float; accumulate keeps that order.
        sum_exp = accumulate(e, axis=1)[:, -1:]
        if scale is not None:
            sum_exp = sum_exp * scale
        e *= divide(numerator, sum_exp)
        return lookup(e.astype(intp), mode="clip").reshape(shape)

    return store_plan(out, softmax)


@dataclass(frozen=True)
class LogSoftmaxTable:
    """An 8-bit LOG_SOFTMAX's exp lookup table and quantization (activations.cc LogSoftmaxPrepare)."""

    exp_table: np.ndarray  # float32 expf(-input_scale * d) for d = max - q in [0, 255]
    input_scale: np.float32
    out_scale: np.float32
    out_zero_point: int

    @classmethod
    def of(cls, input_scale: float, out_scale: float, out_zero_point: int) -> LogSoftmaxTable:
        """PopulateSoftmaxLookupTable (beta 1): table[255 - d] = expf(-input_scale * d); expf is computed
        in double and rounded once to float."""
        scale = -_F32(input_scale) * _F32(1)
        table = np.exp((scale * np.arange(256, dtype=np.float32)).astype(np.float64)).astype(np.float32)
        return cls(table, _F32(input_scale), _F32(out_scale), out_zero_point)


def _log_softmax_prepare(ctx, node) -> None:
    op = "LOG_SOFTMAX"
    x, out = unary_prepare(ctx, node, op, ("FLOAT32", *EIGHT_BIT))
    check(len(x.shape) >= 1, f"{op}: input must have at least one dimension")
    node.user_data = None
    if x.type in EIGHT_BIT:
        # activations.cc LogSoftmaxPrepare: outputs in 1/16 steps, 0 at the type's maximum.
        check_output_quantization(op, out, 16 / 256, {"INT8": 127, "UINT8": 255})
        node.user_data = LogSoftmaxTable.of(x.scale, out.scale, out.zero_point)


def _log_softmax_float(x: np.ndarray) -> np.ndarray:
    """x - max - log(sum(exp(x - max)))."""
    with np.errstate(invalid="ignore", over="ignore"):
        wide = x.astype(np.float64)
        shifted = wide - wide.max(axis=-1, keepdims=True)
        return (shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))).astype(np.float32)


def _log_softmax_quantized(q: np.ndarray, p: LogSoftmaxTable, dtype) -> np.ndarray:
    """optimized_ops::LogSoftmax for 8-bit input, every step in float32 as the C++ does.

    sum_exp adds table[255 - (max - q)] left to right; log_prob = (s_in / s_out) * q
    - (s_in * max + logf(sum_exp)) / s_out, rounded with rint (half to even), plus the zero point.
    """
    q32 = q.astype(np.float32)
    top = q.max(axis=-1, keepdims=True)
    e = p.exp_table[top.astype(np.int64) - q.astype(np.int64)]
    sum_exp = np.cumsum(e, axis=-1, dtype=np.float32)[..., -1:]
    log_sum_exp = np.log(sum_exp.astype(np.float64)).astype(np.float32)
    scale = p.input_scale / p.out_scale
    precomputed = (p.input_scale * top.astype(np.float32) + log_sum_exp) / p.out_scale
    log_prob = scale * q32 - precomputed
    lo, hi = dtype_range(dtype)
    return np.clip(np.rint(log_prob).astype(np.int64) + p.out_zero_point, lo, hi).astype(dtype)


def log_softmax(x: np.ndarray, table: LogSoftmaxTable | None = None) -> np.ndarray:
    """LOG_SOFTMAX along the last axis (activations.cc LogSoftmaxEval), in x's dtype.

    Float32: x - max - log(sum(exp(x - max))). 8-bit (`table` required): optimized_ops::LogSoftmax's
    table-driven float32 steps (_log_softmax_quantized), outputs in 1/16 steps.
    """
    return _log_softmax_float(x) if table is None else _log_softmax_quantized(x, table, x.dtype)


def _log_softmax_node(ctx, node) -> None:
    """`log_softmax` on a node; prepare built the 8-bit table (None for float32)."""
    ctx.output(node, 0).data = log_softmax(ctx.input(node, 0).data, node.user_data)


def register(resolver) -> None:
    # SOFTMAX: v1 float/uint8, v2 int8; v3 (int16) and v4 (float16) are not implemented.
    resolver.add_builtin("SOFTMAX", Registration(prepare=_softmax_prepare, invoke=run_plan,
                                                 reference=_softmax_reference, work=work.row_wise(3)), 1, 2)
    # LOG_SOFTMAX v1 float32/uint8, v2 int8.
    # LOG_SOFTMAX has no fast path (its 256-entry exp table is LiteRT's own): the node form of
    # `log_softmax` is both the invoke and the reference.
    resolver.add_builtin("LOG_SOFTMAX", Registration(prepare=_log_softmax_prepare, invoke=_log_softmax_node,
                                                     reference=_log_softmax_node, work=work.row_wise(3)), 1, 2)
