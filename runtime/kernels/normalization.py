"""Normalizations along the last axis: L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION, LOG_SOFTMAX.

Float32 results are computed in double and rounded once (LiteRT's float32 running sums differ from that
by far less than the float tolerance). The quantized forms follow LiteRT's builtin kernels: int8
L2_NORMALIZATION is reference_integer_ops' fixed-point inverse square root, uint8 the optimized one;
8-bit LOG_SOFTMAX is optimized_ops::LogSoftmax, which works in float32 from an expf table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runtime.kernels.common import check, check_inputs
from runtime.quant import (
    activation_name,
    dtype_range,
    inv_sqrt_quantized_multiplier_exp,
    multiply_by_quantized_multiplier,
)
from runtime.resolver import Registration

_F32 = np.float32
_EIGHT_BIT = ("INT8", "UINT8")


def _same_shape_prepare(ctx, node, op: str, types: tuple[str, ...]):
    """One input and one output of the same supported type; the output takes the input's shape."""
    check_inputs(node, 1)
    check(len(node.outputs) == 1, f"{op} takes one output")
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(x.type in types, f"{op}: type {x.type} is not supported ({', '.join(types)})")
    check(out.type == x.type, f"{op}: output type {out.type} differs from input type {x.type}")
    ctx.resize_tensor(out, x.shape)
    return x, out


def _check_output_quantization(op: str, out, scale: float, zero_points: dict[str, int]) -> None:
    """The kernels hard-wire the output range: an exact scale and a per-type zero point."""
    zp = zero_points[out.type]
    check(float(_F32(out.scale)) == scale and out.zero_point == zp,
          f"{op}: {out.type} output must have scale {scale} and zero point {zp}, got ({out.scale}, {out.zero_point})")


# -- L2_NORMALIZATION -----------------------------------------------------------------------------


def _l2_prepare(ctx, node) -> None:
    op = "L2_NORMALIZATION"
    x, out = _same_shape_prepare(ctx, node, op, ("FLOAT32", *_EIGHT_BIT))
    check(len(x.shape) >= 1, f"{op}: input must have at least one dimension")
    act = activation_name(node.options.fused_activation_function)
    check(act == "NONE", f"{op}: fused activation {act} is not supported (l2norm.cc needs NONE)")
    if x.type in _EIGHT_BIT:
        # l2norm.cc: outputs are in 1/128 steps, zero at 0 (int8) or 128 (uint8).
        _check_output_quantization(op, out, 1 / 128, {"INT8": 0, "UINT8": 128})


def _l2_float(x: np.ndarray) -> np.ndarray:
    """x / max(sqrt(sum x^2), 1e-6)."""
    wide = x.astype(np.float64)
    norm = np.maximum(np.sqrt(np.square(wide).sum(axis=-1, keepdims=True)), float(_F32(1e-6)))
    return (wide / norm).astype(np.float32)


def _l2_quantized(q: np.ndarray, zero_point: int, dtype) -> np.ndarray:
    """The fixed-point inverse norm of sum (q - zp)^2 (GetInvSqrtQuantizedMultiplierExp), then one rescale.

    int8 (reference_integer_ops::L2Normalization): MultiplyByQuantizedMultiplier(d, m, shift + 7).
    uint8 (optimized_ops): 128 + MultiplyByQuantizedMultiplierSmallerThanOneExp(128 * d, m, shift); the
    shift is never positive, so that is MultiplyByQuantizedMultiplier too.
    """
    d = q.astype(np.int64) - zero_point
    multiplier, shift = inv_sqrt_quantized_multiplier_exp(np.square(d).sum(axis=-1, keepdims=True))
    if dtype == np.int8:
        y = multiply_by_quantized_multiplier(d, multiplier, shift + 7)
    else:
        y = 128 + multiply_by_quantized_multiplier(128 * d, multiplier, shift)
    lo, hi = dtype_range(dtype)
    return np.clip(y, lo, hi).astype(dtype)


def _l2_invoke(ctx, node) -> None:
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    if x.type == "FLOAT32":
        out.data = _l2_float(x.data)
    else:
        out.data = _l2_quantized(x.data, x.zero_point, out.dtype)


# -- LOCAL_RESPONSE_NORMALIZATION ------------------------------------------------------------------


def _lrn_prepare(ctx, node) -> None:
    op = "LOCAL_RESPONSE_NORMALIZATION"
    x, _ = _same_shape_prepare(ctx, node, op, ("FLOAT32",))
    check(len(x.shape) == 4, f"{op}: input must be 4-D, got shape {list(x.shape)}")
    check(node.options.radius >= 0, f"{op}: radius must not be negative, got {node.options.radius}")


def _lrn(x: np.ndarray, radius: int, bias: float, alpha: float, beta: float) -> np.ndarray:
    """x / (bias + alpha * sum of x^2 over channels c - radius .. c + radius) ** beta (window clipped at the ends)."""
    wide = x.astype(np.float64)
    depth = x.shape[-1]
    cumulative = np.zeros((*x.shape[:-1], depth + 1))
    np.cumsum(np.square(wide), axis=-1, out=cumulative[..., 1:])
    upper = np.minimum(np.arange(depth) + radius + 1, depth)
    lower = np.maximum(np.arange(depth) - radius, 0)
    window = cumulative[..., upper] - cumulative[..., lower]
    return (wide * np.power(bias + alpha * window, -beta)).astype(np.float32)


def _lrn_invoke(ctx, node) -> None:
    opts = node.options
    f32 = [float(_F32(v)) for v in (opts.bias, opts.alpha, opts.beta)]
    ctx.output(node, 0).data = _lrn(ctx.input(node, 0).data, int(opts.radius), *f32)


# -- LOG_SOFTMAX ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _LogSoftmaxTable:
    exp_table: np.ndarray  # float32 expf(-input_scale * d) for d = max - q in [0, 255]
    input_scale: np.float32
    out_scale: np.float32
    out_zero_point: int


def _log_softmax_prepare(ctx, node) -> None:
    op = "LOG_SOFTMAX"
    x, out = _same_shape_prepare(ctx, node, op, ("FLOAT32", *_EIGHT_BIT))
    check(len(x.shape) >= 1, f"{op}: input must have at least one dimension")
    node.user_data = None
    if x.type in _EIGHT_BIT:
        # activations.cc LogSoftmaxPrepare: outputs in 1/16 steps, 0 at the type's maximum.
        _check_output_quantization(op, out, 16 / 256, {"INT8": 127, "UINT8": 255})
        # PopulateSoftmaxLookupTable (beta 1): table[255 - d] = expf(-input_scale * d); expf is computed
        # in double and rounded once to float.
        scale = -_F32(x.scale) * _F32(1)
        table = np.exp((scale * np.arange(256, dtype=np.float32)).astype(np.float64)).astype(np.float32)
        node.user_data = _LogSoftmaxTable(table, _F32(x.scale), _F32(out.scale), out.zero_point)


def _log_softmax_float(x: np.ndarray) -> np.ndarray:
    """x - max - log(sum(exp(x - max)))."""
    with np.errstate(invalid="ignore", over="ignore"):
        wide = x.astype(np.float64)
        shifted = wide - wide.max(axis=-1, keepdims=True)
        return (shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))).astype(np.float32)


def _log_softmax_quantized(q: np.ndarray, p: _LogSoftmaxTable, dtype) -> np.ndarray:
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


def _log_softmax_invoke(ctx, node) -> None:
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    if node.user_data is None:
        out.data = _log_softmax_float(x.data)
    else:
        out.data = _log_softmax_quantized(x.data, node.user_data, out.dtype)


def register(resolver) -> None:
    # op_version.cc: L2_NORMALIZATION v1 float32/uint8, v2 int8.
    resolver.add_builtin("L2_NORMALIZATION", Registration(prepare=_l2_prepare, invoke=_l2_invoke), 1, 2)
    resolver.add_builtin("LOCAL_RESPONSE_NORMALIZATION", Registration(prepare=_lrn_prepare, invoke=_lrn_invoke),
                         1, 1)
    # LOG_SOFTMAX v1 float32/uint8, v2 int8.
    resolver.add_builtin("LOG_SOFTMAX", Registration(prepare=_log_softmax_prepare, invoke=_log_softmax_invoke),
                         1, 2)
