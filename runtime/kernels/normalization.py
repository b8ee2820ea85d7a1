"""Normalizations along the last axis: L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION.

Float32 results are computed in double and rounded once (LiteRT's float32 running sums differ from that
by far less than the float tolerance). The quantized forms follow LiteRT's builtin kernels: int8
L2_NORMALIZATION is reference_integer_ops' fixed-point inverse square root, uint8 the optimized one.
"""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import EIGHT_BIT, check, check_output_quantization, unary_prepare
from accelsim.runtime.quant import (
    activation_name,
    dtype_range,
    inv_sqrt_quantized_multiplier_exp,
    multiply_by_quantized_multiplier,
)
from accelsim.runtime.registration import Registration

_F32 = np.float32


# -- L2_NORMALIZATION -----------------------------------------------------------------------------


def _l2_prepare(ctx, node) -> None:
    op = "L2_NORMALIZATION"
    x, out = unary_prepare(ctx, node, op, ("FLOAT32", *EIGHT_BIT))
    check(len(x.shape) >= 1, f"{op}: input must have at least one dimension")
    act = activation_name(node.options.fused_activation_function)
    check(act == "NONE", f"{op}: fused activation {act} is not supported (l2norm.cc needs NONE)")
    if x.type in EIGHT_BIT:
        # l2norm.cc: outputs are in 1/128 steps, zero at 0 (int8) or 128 (uint8).
        check_output_quantization(op, out, 1 / 128, {"INT8": 0, "UINT8": 128})


def l2_normalization(x: np.ndarray, zero_point: int = 0) -> np.ndarray:
    """L2_NORMALIZATION along the last axis (l2norm.cc), in x's dtype; `zero_point` is an 8-bit input's.

    Float32: x / max(sqrt(sum x^2), 1e-6) (reference_ops::L2Normalization's epsilon). 8-bit: outputs in
    1/128 steps (_l2_quantized).
    """
    return _l2_float(x) if x.dtype == np.float32 else _l2_quantized(x, zero_point, x.dtype)


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


def _l2_node(ctx, node) -> None:
    x = ctx.input(node, 0)
    ctx.output(node, 0).data = l2_normalization(x.data, x.zero_point)


# -- LOCAL_RESPONSE_NORMALIZATION ------------------------------------------------------------------


def _lrn_prepare(ctx, node) -> None:
    op = "LOCAL_RESPONSE_NORMALIZATION"
    x, _ = unary_prepare(ctx, node, op, ("FLOAT32",))
    check(len(x.shape) == 4, f"{op}: input must be 4-D, got shape {list(x.shape)}")
    check(node.options.radius >= 0, f"{op}: radius must not be negative, got {node.options.radius}")


def local_response_normalization(x: np.ndarray, radius: int, bias: float, alpha: float, beta: float) -> np.ndarray:
    """LOCAL_RESPONSE_NORMALIZATION (reference_ops::LocalResponseNormalization) of float32 NHWC `x`:
    x / (bias + alpha * sum of x^2 over channels c - radius .. c + radius) ** beta (window clipped at the ends)."""
    wide = x.astype(np.float64)
    depth = x.shape[-1]
    cumulative = np.zeros((*x.shape[:-1], depth + 1))
    np.cumsum(np.square(wide), axis=-1, out=cumulative[..., 1:])
    upper = np.minimum(np.arange(depth) + radius + 1, depth)
    lower = np.maximum(np.arange(depth) - radius, 0)
    window = cumulative[..., upper] - cumulative[..., lower]
    return (wide * np.power(bias + alpha * window, -beta)).astype(np.float32)


def _lrn_node(ctx, node) -> None:
    opts = node.options
    f32 = [float(_F32(v)) for v in (opts.bias, opts.alpha, opts.beta)]  # the options are float32
    ctx.output(node, 0).data = local_response_normalization(ctx.input(node, 0).data, int(opts.radius), *f32)


def _lrn_work(ctx, node) -> work.NodeWork:
    """A window of 2 * radius + 1 squared channels summed per output element (one tap each), then a scale."""
    taps = 2 * int(node.options.radius) + 1
    elements = int(np.prod(ctx.output(node, 0).shape, dtype=np.int64))
    return work.measured(ctx, node, "window", elements * (taps + 1))


def register(resolver) -> None:
    # op_version.cc: L2_NORMALIZATION v1 float32/uint8, v2 int8.
    # Neither op has a fast path: the node form of each array function (`l2_normalization`,
    # `local_response_normalization`) is both the invoke and the reference.
    resolver.add_builtin("L2_NORMALIZATION", Registration(prepare=_l2_prepare, invoke=_l2_node, reference=_l2_node,
                                                          work=work.per_input(2)),
                         1, 2)
    resolver.add_builtin("LOCAL_RESPONSE_NORMALIZATION", Registration(prepare=_lrn_prepare, invoke=_lrn_node,
                                                                      reference=_lrn_node, work=_lrn_work), 1, 1)
