"""Division: DIV, FLOOR_DIV, FLOOR_MOD, float32, int32 and (DIV) 8/16-bit quantized.

Quantized DIV follows reference_ops DivElementwise (div.cc), which LiteRT's builtin resolver runs on
x86: the divisor's reciprocal in gemmlowp fixed point, then the output rescale, carried over int64
arrays (common.py's and quant.py's helpers). An 8-bit result depends only on the pair of input
values, so prepare tabulates it over all 65536 pairs and invoke gathers from that table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    EIGHT_BIT,
    QuantParams,
    binary_prepare,
    check,
    options_field,
    pair_lookup,
    require_per_tensor_quantized,
)
from accelsim.runtime.quant import (
    INT32_MAX,
    INT32_MIN,
    activation_name,
    activation_range_quantized,
    clrsb32,
    clz32,
    one_over_one_plus_x,
    quantize_multiplier,
    rounding_divide_by_pot_x86,
    saturating_rounding_doubling_high_mul,
    wrap32,
)
from accelsim.runtime.registration import Registration

_F32 = np.float32
_FLT_MAX = float(np.finfo(np.float32).max)


def _apply_binary(ctx, node) -> None:
    """The invoke of binary ops whose prepare chose a function of the two inputs (broadcasting them)."""
    out = ctx.output(node, 0)
    out.data = np.asarray(node.user_data(ctx.input(node, 0).data, ctx.input(node, 1).data)).reshape(out.shape)


_DIV_QUANTIZED = ("UINT8", "INT8", "INT16")


def _float_activation_range(code) -> tuple[float, float]:
    """CalculateActivationRange: NONE (and TANH, SIGN_BIT) still clamp to the finite float range."""
    return {"RELU": (0.0, _FLT_MAX), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}.get(
        activation_name(code), (-_FLT_MAX, _FLT_MAX))


def _int32_activation_range(code) -> tuple[int, int]:
    return {"RELU": (0, INT32_MAX), "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}.get(
        activation_name(code), (INT32_MIN, INT32_MAX))


@dataclass(frozen=True)
class _DivQuantized:
    zero_points: tuple[int, int, int]
    multiplier: int
    shift: int
    act_min: int
    act_max: int


def _div_quantized(a: np.ndarray, b: np.ndarray, p: _DivQuantized) -> np.ndarray:
    """reference_ops DivElementwise: x1 * (1/x2) with gemmlowp's reciprocal, then the rescale."""
    srdhm = saturating_rounding_doubling_high_mul
    za, zb, zo = p.zero_points
    x1, x2 = a - za, b - zb
    # A negative divisor flips both signs so that the reciprocal is positive.
    x1 = np.where(x2 < 0, -x1, x1)
    x2 = np.abs(x2)
    # GetReciprocal(x2, 31): x2 normalized to [1, 2), 1/(1 + fraction) in Q0.31.
    headroom_plus_one = clz32(x2)
    recip_shift = 31 - headroom_plus_one
    recip = one_over_one_plus_x(((x2 << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31))
    headroom = clrsb32(x1)
    quotient = srdhm(wrap32(x1 << headroom), recip)
    total_shift = p.shift - recip_shift - headroom
    scaled = rounding_divide_by_pot_x86(srdhm(quotient, p.multiplier), -total_shift)
    return np.clip(scaled + zo, p.act_min, p.act_max)


def _div_float(a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> np.ndarray:
    # Division by zero is allowed; the activation clamp turns infinities into +-FLT_MAX.
    return np.clip(a / b, lo, hi).astype(np.float32)


def _div_int32(a: np.ndarray, b: np.ndarray, lo: int, hi: int) -> np.ndarray:
    x, y = a.astype(np.int64), b.astype(np.int64)
    q = np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))  # C++ division truncates
    return wrap32(np.clip(q, lo, hi)).astype(np.int32)


def _div_prepare(ctx, node) -> None:
    a, b, out = binary_prepare(ctx, node, "DIV", ("FLOAT32", "INT32", *_DIV_QUANTIZED))
    act = options_field(node, "fused_activation_function", 0)
    if a.type == "FLOAT32":
        node.user_data = partial(_div_float, lo=_float_activation_range(act)[0], hi=_float_activation_range(act)[1])
        return
    if a.type == "INT32":
        node.user_data = partial(_div_int32, lo=_int32_activation_range(act)[0], hi=_int32_activation_range(act)[1])
        return
    require_per_tensor_quantized("DIV", a, b, out)
    rule = partial(_div_quantized, p=_div_params(a, b, out, act, out.dtype))
    if a.type in EIGHT_BIT:
        node.user_data = pair_lookup(rule, a.dtype)
    else:
        node.user_data = lambda u, v: rule(u.astype(np.int64), v.astype(np.int64)).astype(np.int16)


def _div_params(a, b, out, act, dtype) -> _DivQuantized:
    name = activation_name(act)
    lo, hi = activation_range_quantized(name if name in ("RELU", "RELU6", "RELU_N1_TO_1") else "NONE",
                                        out.scale, out.zero_point, dtype)
    # div.cc: input1_scale / (input2_scale * output_scale), all of it in float.
    mult, shift = quantize_multiplier(float(_F32(a.scale) / (_F32(b.scale) * _F32(out.scale))))
    return _DivQuantized((a.zero_point, b.zero_point, out.zero_point), mult, shift, lo, hi)


def div(a: np.ndarray, b: np.ndarray, activation: int = 0,
        quantization: tuple[QuantParams, QuantParams, QuantParams] | None = None) -> np.ndarray:
    """DIV (div.cc) of broadcast `a` and `b`, clamped to the fused `activation` (its schema code):
    float32 a / b (x / 0 allowed), int32 truncating division; 8/16-bit with (a, b, output)
    `quantization`, reference_ops DivElementwise per value pair (_div_quantized). Raises KernelError
    for a zero integer divisor (its zero point when quantized), as CheckNonZero does."""
    if quantization is not None:
        check(bool(np.all(b != quantization[1].zero_point)), "DIV: division by zero (the divisor has a zero value)")
        values = _div_quantized(a.astype(np.int64), b.astype(np.int64), _div_params(*quantization, activation,
                                                                                        a.dtype))
    elif a.dtype == np.int32:
        check(bool(np.all(b != 0)), "DIV: division by zero (the divisor has a zero value)")
        values = _div_int32(a, b, *_int32_activation_range(activation))
    else:
        values = _div_float(a, b, *_float_activation_range(activation))
    return np.asarray(values).astype(a.dtype)


def _div_reference(ctx, node) -> None:
    """`div` on a node: its fused activation, and its inputs' and output's quantization when quantized."""
    a, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    quantization = QuantParams.of(a, b, out) if a.type in _DIV_QUANTIZED else None
    out.data = div(a.data, b.data, options_field(node, "fused_activation_function", 0), quantization).reshape(
        out.shape)


def _div_invoke(ctx, node) -> None:
    b = ctx.input(node, 1)
    if b.type != "FLOAT32":
        # div.cc CheckNonZero: no divisor may be zero (its zero point when quantized).
        zero = b.zero_point if b.type in _DIV_QUANTIZED else 0
        check(bool(np.all(b.data != zero)), "DIV: division by zero (the divisor has a zero value)")
    _apply_binary(ctx, node)


def _floor_div_prepare(ctx, node) -> None:
    binary_prepare(ctx, node, "FLOOR_DIV", ("FLOAT32", "INT32", "INT16", "INT8"))


def floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FLOOR_DIV of broadcast `a` and `b` in their dtype (floor_div.h: std::floor of the quotient,
    in double for float32). Raises KernelError for a zero divisor, as floor_div.cc does."""
    check(bool(np.all(b != 0)), "FLOOR_DIV: division by zero")
    if a.dtype == np.float32:
        return np.floor(a.astype(np.float64) / b.astype(np.float64)).astype(a.dtype)
    return np.floor_divide(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)


def _floor_div_node(ctx, node) -> None:
    out = ctx.output(node, 0)
    out.data = np.broadcast_to(floor_div(ctx.input(node, 0).data, ctx.input(node, 1).data), out.shape).copy()


def _floor_mod_prepare(ctx, node) -> None:
    binary_prepare(ctx, node, "FLOOR_MOD", ("FLOAT32", "INT8", "INT16", "INT32", "INT64"))


def floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FLOOR_MOD of broadcast `a` and `b` in their dtype (floor_mod.h: fmod for float32, then the
    divisor added when the signs differ; the integer remainder takes the divisor's sign). Raises
    KernelError for a zero integer divisor, as floor_mod.cc does."""
    if a.dtype == np.float32:
        with np.errstate(all="ignore"):
            trunc = np.fmod(a, b)
            return np.where((trunc != 0) & ((b < 0) != (trunc < 0)), trunc + b, trunc).astype(a.dtype)
    check(bool(np.all(b != 0)), "FLOOR_MOD: division by zero")
    return np.mod(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)


def _floor_mod_node(ctx, node) -> None:
    out = ctx.output(node, 0)
    out.data = np.broadcast_to(floor_mod(ctx.input(node, 0).data, ctx.input(node, 1).data), out.shape).copy()


def register(resolver) -> None:
    add = resolver.add_builtin
    # DIV: v2 broadcasting beyond 4-D (the quantized forms are version 1).
    add("DIV", Registration(prepare=_div_prepare, invoke=_div_invoke, reference=_div_reference, work=work.elementwise),
        1, 2)
    # FLOOR_DIV and FLOOR_MOD have no fast path: the node form of the array function (`floor_div`,
    # `floor_mod`) is both the invoke and the reference.
    # FLOOR_DIV: v2 float32, v3 int8/int16. FLOOR_MOD: v2 int8/int16.
    add("FLOOR_DIV", Registration(prepare=_floor_div_prepare, invoke=_floor_div_node, reference=_floor_div_node,
                                  work=work.elementwise),
        1, 3)
    add("FLOOR_MOD", Registration(prepare=_floor_mod_prepare, invoke=_floor_mod_node, reference=_floor_mod_node,
                                  work=work.elementwise),
        1, 2)
