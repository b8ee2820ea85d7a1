"""Elementwise math, float32 and 8/16-bit quantized, and the table helpers activations.py shares.

Ops: EXP, LOG, SQRT, RSQRT, SQUARE, ABS, NEG, POW, SQUARED_DIFFERENCE, MINIMUM, MAXIMUM, DIV,
FLOOR_DIV, FLOOR_MOD (ADD, SUB, MUL are in elementwise.py).

Quantized forms follow the kernels LiteRT's builtin resolver runs on x86: LUTs are built in
float32 exactly as LUTPopulate builds them (8-bit: one entry per value; int16: 513 entries
with linear interpolation), everything else is TFLite's gemmlowp fixed point carried over
int64 arrays (activations.cc, elementwise.cc, exp.cc, squared_difference.cc, div.cc).
A quantized result depends only on the input value (or the pair of 8-bit inputs), so
prepare evaluates the rule once over the whole input domain and invoke gathers from that
table; prepare leaves invoke a function of the input arrays in `node.user_data`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    QuantParams,
    broadcast_shape,
    check,
    check_inputs,
    integer_domain,
    run_plan,
    store_plan,
)
from accelsim.runtime.kernels.elementwise import pair_table_plan
from accelsim.runtime.quant import (
    INT32_MAX,
    INT32_MIN,
    activation_name,
    activation_range_quantized,
    cast_to_int32,
    inv_sqrt_quantized_multiplier_exp,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    saturating_rounding_doubling_high_mul,
    tflite_round,
)
from accelsim.runtime.registration import Registration

_F32 = np.float32
_ONE = np.array(1, dtype=np.float32)  # a 0-d float32: the cheapest scalar operand of a float32 ufunc
_FLT_MAX = float(np.finfo(np.float32).max)
_EIGHT_BIT = ("INT8", "UINT8")

# -- shared helpers --------------------------------------------------------------------------


def _quantized(t) -> bool:
    q = t.quantization
    return q is not None and bool(q.scales)


def _check_type(op: str, t, supported) -> None:
    check(t.type in supported, f"{op}: type {t.type} is not supported (supported: {', '.join(supported)})")


def _require_per_tensor_quantized(op: str, *tensors) -> None:
    for t in tensors:
        check(_quantized(t) and t.scale > 0,
              f"{op}: {t.type} tensor {t.name!r} needs per-tensor quantization with a positive scale")


def _require_zero_points(op: str, *tensors) -> None:
    for t in tensors:
        check(t.zero_point == 0, f"{op}: {t.type} tensor {t.name!r} needs zero point 0, got {t.zero_point}")


def _unary_prepare(ctx, node, op: str, supported):
    """One input, one output of the same type and shape."""
    check_inputs(node, 1)
    check(len(node.outputs) == 1, f"{op} takes one output")
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    _check_type(op, x, supported)
    check(out.type == x.type, f"{op}: output type {out.type} differs from input type {x.type}")
    ctx.resize_tensor(out, x.shape)
    return x, out


def _binary_prepare(ctx, node, op: str, supported):
    """Two inputs of one type, broadcast against each other; the output takes their type."""
    check_inputs(node, 2)
    check(len(node.outputs) == 1, f"{op} takes one output")
    a, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    check(a.type == b.type, f"{op}: input types differ ({a.type} and {b.type})")
    _check_type(op, a, supported)
    check(out.type == a.type, f"{op}: output type {out.type} differs from input type {a.type}")
    ctx.resize_tensor(out, broadcast_shape(a.shape, b.shape))
    return a, b, out


def _options_field(node, name: str, default):
    return getattr(node.options, name) if node.options is not None else default


def _clamp_to(values, dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def _in_float64(fn, x: np.ndarray) -> np.ndarray:
    """fn evaluated in double and rounded once to float32 (a correctly rounded libm float call)."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(np.asarray(x, dtype=np.float64))).astype(np.float32)


# Tables over a whole integer domain, applied with np.take.


def _tabulate(fn, dtype) -> np.ndarray:
    """`fn` (int64 values -> results) over every value of an 8/16-bit type, in `integer_domain` order."""
    with np.errstate(all="ignore"):
        return _clamp_to(fn(integer_domain(dtype).astype(np.int64)), dtype)


def _lookup(table: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    # In `integer_domain` order a negative value's entry is where NumPy's negative indices wrap to.
    return table.take


def _pair_table(fn, dtype) -> np.ndarray:
    """`fn(a, b)` over all 65536 pairs of 8-bit values: table[0, a - lowest, b - lowest]."""
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1, dtype=np.int64)
    with np.errstate(all="ignore"):
        return _clamp_to(fn(values[:, None], values[None, :]), dtype)[None]


def _pair_lookup(fn, dtype) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """`fn(a, b)` over all 65536 pairs of 8-bit values, applied to input arrays that broadcast."""
    lowest = int(np.iinfo(dtype).min)
    # (a << 8) + b is negative for negative values; rolled, the table reads them through wrap-around.
    flat = np.roll(_pair_table(fn, dtype).reshape(-1), lowest * 257)
    return lambda a, b: flat[(a.astype(np.intp) << 8) + b]


def _checked(fn, dtype, zero_point: int, message: str):
    """fn, refusing inputs below the zero point (a negative real value) as elementwise.cc does."""
    if zero_point <= np.iinfo(dtype).min:
        return fn  # no value is below it

    def apply(q: np.ndarray) -> np.ndarray:
        check(q.size == 0 or q.min() >= zero_point, message)
        return fn(q)

    return apply


# gemmlowp fixed point over int64 arrays that hold int32 values.


def _wrap32(v) -> np.ndarray:
    return ((np.asarray(v, dtype=np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _trunc_div(a, d: int) -> np.ndarray:
    """C++ integer division (truncates toward zero)."""
    a = np.asarray(a, dtype=np.int64)
    return np.where(a >= 0, a // d, -((-a) // d))


def _saturating_shift_left(x, amount: int, bits: int = 32) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT with a positive exponent (Rescale to fewer integer bits)."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.clip(np.asarray(x, dtype=np.int64) << amount, lo, hi)


def _rounding_half_sum(a, b) -> np.ndarray:
    s = np.asarray(a, dtype=np.int64) + b
    return _trunc_div(s + np.where(s >= 0, 1, -1), 2)


def _one_over_one_plus_x(a) -> np.ndarray:
    """gemmlowp one_over_one_plus_x_for_x_in_0_1: Newton-Raphson 1/(1+a), a and result Q0.31."""
    srdhm = saturating_rounding_doubling_high_mul
    half_denominator = _rounding_half_sum(a, INT32_MAX)
    # Q2.29 constants 48/17 and -32/17; F2::One() is 1 << 29.
    x = 1515870810 + srdhm(half_denominator, -1010580540)
    for _ in range(3):
        one_minus = (1 << 29) - srdhm(half_denominator, x)
        x = x + _saturating_shift_left(srdhm(x, one_minus), 2)
    return _saturating_shift_left(x, 1)


def _clz32(x) -> np.ndarray:
    """Count leading zeros of non-negative values below 2**32 (32 for zero)."""
    x = np.asarray(x, dtype=np.int64)
    return np.where(x == 0, 32, 32 - np.frexp(x.astype(np.float64))[1])


def _clrsb32(x) -> np.ndarray:
    """GCC __builtin_clrsb on int32 (CountLeadingSignBits): 31 for 0 and -1."""
    x = np.asarray(x, dtype=np.int64)
    return _clz32(np.where(x < 0, ~x, x)) - 1


def _srdhm16(a, b) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul for int16."""
    ab = np.asarray(a, dtype=np.int64) * b
    high = _trunc_div(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 1 << 15)
    return np.where((np.asarray(a) == -32768) & (b == -32768), 32767, high)


# LUTs as LUTPopulate builds them: 8-bit through activations', int16 interpolated.


def _lut_int16(transform, in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """LUTPopulateInt16<float>: 512 samples over the input range plus an end point, biased so
    that interpolating between samples best matches the midpoints; every step in float32."""
    f = _F32
    in_min = f(in_scale) * f(-32768 - in_zp)
    in_max = f(in_scale) * f(32767 - in_zp)
    out_min = f(out_scale) * f(-32768 - out_zp)
    out_max = f(out_scale) * f(32767 - out_zp)
    step = (in_max - in_min) / f(512)
    inv = f(65536) / (out_max - out_min)

    def rnd(v):
        return tflite_round(v).astype(np.float32)

    start = in_min + np.arange(512, dtype=np.float32) * step
    val = transform(start)
    mid = transform(start + step / f(2))
    nxt = transform(in_min + np.arange(1, 513, dtype=np.float32) * step)
    interpolated = rnd((nxt * inv + rnd(val * inv)) / f(2))
    bias = rnd((interpolated - rnd(mid * inv)) / f(2))
    last = rnd(transform(np.asarray([in_max], dtype=np.float32)) * inv)
    table = np.concatenate([rnd(val * inv) - bias, last])
    return np.clip(table, -32768, 32767).astype(np.int64)


def _lut_lookup_int16(v: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """LUTLookup: the top 9 bits pick a segment, the low 7 interpolate within it."""
    index = 256 + (v >> 7)
    base = lut[index]
    return base + (((lut[index + 1] - base) * (v & 0x7F) + 64) >> 7)


def _lut_table(transform, x, out) -> np.ndarray:
    """The LUT of `transform` for x's type, expanded to a table over x's whole domain."""
    if x.type == "INT16":
        lut = _lut_int16(transform, x.scale, x.zero_point, out.scale, out.zero_point)
        return _tabulate(partial(_lut_lookup_int16, lut=lut), np.int16)
    return _lut_populate(transform, x.scale, x.zero_point, out.scale, out.zero_point, x.dtype)


# Float32 transforms as the C++ evaluates them (each libm call rounded once to float).


def _exp_f32(v):
    return _in_float64(np.exp, v)




# -- LUT ops: EXP, LOG (activations.py adds ELU, GELU) ------------------------------------------------------------


@dataclass(frozen=True)
class _LutOp:
    """A unary op computed in float for float32 and through LUTPopulate's table when quantized."""

    name: str
    types: tuple[str, ...]
    float_fn: Callable  # (node, input tensor) -> (float32 array -> float32 array)
    transform_for: Callable  # (node, output tensor) -> the float32 transform the LUT samples
    int16_zero_points: bool  # the int16 form needs zero points of 0


def lut_values(float_fn, transform, x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None) -> np.ndarray:
    """A LUT op on `x`: float32 `float_fn` directly; with (input, output) `quantization`, int8/uint8
    through `lut_apply` on the values themselves, int16 through LUTLookup of LUTPopulateInt16 of
    `transform` (that interpolation is the int16 rule)."""
    if quantization is None:
        return float_fn(x.reshape(-1).copy()).reshape(x.shape)
    qin, qout = quantization
    if x.dtype == np.int16:
        lut = _lut_int16(transform, qin.scale, qin.zero_point, qout.scale, qout.zero_point)
        return _clamp_to(_lut_lookup_int16(x.astype(np.int64), lut), np.int16)
    return lut_apply(transform, x, qin.scale, qin.zero_point, qout.scale, qout.zero_point, x.dtype)


def exp(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """EXP (exp.cc): float32 expf (in double, rounded once); int8/int16 with (input, output)
    `quantization`, LUTPopulate's table of expf (lut_values)."""
    return lut_values(_exp_f32, _exp_f32, x, quantization)


def log(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """LOG (elementwise.cc): float32 logf; int8/int16 with (input, output) `quantization`,
    LUTPopulate's table of logf, non-positive inputs at the output's lowest value (LogLUTPrepare)."""
    transform = None if quantization is None else _log_transform(x.dtype, quantization[1])
    return lut_values(partial(_in_float64, np.log), transform, x, quantization)


def unary_node(fn, quantized_types=("INT8", "UINT8", "INT16")):
    """The node form of a unary reference `fn(x, quantization)`: (input, output) QuantParams for the
    `quantized_types` when the input carries a quantization, else None."""
    def node_form(ctx, node) -> None:
        x, out = ctx.input(node, 0), ctx.output(node, 0)
        quantization = QuantParams.of(x, out) if x.type in quantized_types and _quantized(x) else None
        out.data = np.asarray(fn(x.data, quantization))

    return node_form


def _lut_op_prepare(spec: _LutOp):
    def prepare(ctx, node) -> None:
        x, out = _unary_prepare(ctx, node, spec.name, spec.types)
        if x.type == "FLOAT32":
            fn = spec.float_fn(node, x)
            # NumPy gives scalars for 0-d operands, which the in-place steps cannot write to.
            node.user_data = fn if x.shape else lambda v: fn(v.reshape(1)).reshape(())
            return
        _require_per_tensor_quantized(spec.name, x, out)
        if x.type == "INT16" and spec.int16_zero_points:
            _require_zero_points(spec.name, x, out)
        node.user_data = _lookup(_lut_table(spec.transform_for(node, out), x, out))

    return prepare


def _log_transform(dtype, out):
    # elementwise.cc LogLUTPrepare: non-positive inputs map to the output's lowest value.
    qmin = -128 if dtype == np.int8 else -32768
    lowest = _F32(qmin - out.zero_point) * _F32(out.scale)

    def transform(v):
        safe = np.where(v > 0, v, _F32(1))
        return np.where(v > 0, _in_float64(np.log, safe), lowest).astype(np.float32)

    return transform


_LUT_OPS = (
    # exp.cc: int16 needs zero points of 0.
    _LutOp("EXP", ("FLOAT32", "INT8", "INT16"), lambda node, x: _exp_f32, lambda node, out: _exp_f32, True),
    # elementwise.cc GenericPrepare: quantized int16 needs zero points of 0.
    _LutOp("LOG", ("FLOAT32", "INT8", "INT16"), lambda node, x: partial(_in_float64, np.log),
           lambda node, out: _log_transform(out.dtype, out), True),
)

# -- SQRT, RSQRT, SQUARE, ABS, NEG -----------------------------------------------------------


def _elementwise_quantized(op: str, x, out) -> None:
    """elementwise.cc GenericPrepare: int8 always, int16 when quantized, with int16 zero points 0."""
    _require_per_tensor_quantized(op, x, out)
    if x.type == "INT16":
        _require_zero_points(op, x, out)


def _sqrt_quantized(q: np.ndarray, x, out) -> np.ndarray:
    """SqrtEvalQuantized: dequantize in float, sqrtf, divide by the output scale and truncate."""
    real = _F32(x.scale) * (q - x.zero_point).astype(np.float32)
    return cast_to_int32(np.sqrt(real) / _F32(out.scale)) + out.zero_point


def _sqrt_prepare(ctx, node) -> None:
    x, out = _unary_prepare(ctx, node, "SQRT", ("FLOAT32", "INT8", "INT16"))
    if x.type == "FLOAT32":
        node.user_data = np.sqrt
        return
    _elementwise_quantized("SQRT", x, out)
    table = _tabulate(partial(_sqrt_quantized, x=x, out=out), x.dtype)
    node.user_data = _checked(_lookup(table), x.dtype, x.zero_point, _SQRT_NEGATIVE)


_SQRT_NEGATIVE = "SQRT: the quantized input has negative values (Sqrt is only defined for non-negative values)"


def sqrt(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """SQRT (elementwise.cc): float32 sqrtf; int8/int16 with (input, output) `quantization`,
    SqrtEvalQuantized per value (_sqrt_quantized). Raises KernelError for inputs below the zero point."""
    if quantization is None:
        return np.sqrt(x)
    qin, qout = quantization
    return _checked(lambda q: _clamp_to(_sqrt_quantized(q.astype(np.int64), qin, qout), x.dtype), x.dtype,
                    qin.zero_point, _SQRT_NEGATIVE)(x)


def _rsqrt_int8(q: np.ndarray, zero_point: int, multiplier: int, shift: int, out_zp: int) -> np.ndarray:
    """RsqrtEvalQuantizedInt8: 1/sqrt(q - zero_point) in fixed point, then the output rescale."""
    v = np.maximum(q - zero_point, 0)
    inv, inv_shift = inv_sqrt_quantized_multiplier_exp(v)  # v <= 1 gives (INT32_MAX, 0), as common.h does
    k_shift = 20  # keeps the intermediate an integer
    data = multiply_by_quantized_multiplier(np.ones_like(v), inv, inv_shift + k_shift)
    result = multiply_by_quantized_multiplier(data, multiplier, shift - k_shift) + out_zp
    # A zero input is taken as the largest output.
    return np.where(v == 0, 127, result)


def _rsqrt_prepare(ctx, node) -> None:
    x, out = _unary_prepare(ctx, node, "RSQRT", ("FLOAT32", "INT8", "INT16"))
    if x.type == "FLOAT32":
        # NumPy gives a scalar for a 0-d operand, which the in-place second step cannot write to.
        node.user_data = _rsqrt_float if x.shape else lambda v: np.divide(_ONE, np.sqrt(v))
        return
    _elementwise_quantized("RSQRT", x, out)
    if x.type == "INT8":
        table = _tabulate(_rsqrt_int8_rule(x, out), np.int8)
    else:
        table = _lut_table(_rsqrt_int16_transform(out), x, out)
    node.user_data = _checked(_lookup(table), x.dtype, x.zero_point, _RSQRT_BELOW_ZERO)


_RSQRT_BELOW_ZERO = ("RSQRT: the quantized input has values below its zero point (Rsqrt is only defined for "
                     "positive values)")


def _rsqrt_int8_rule(x, out):
    """RsqrtEvalQuantizedInt8 for this node's scales, as a function of int64 values."""
    # SetRsqrtOutputMultiplier: 1 / (sqrtf(input_scale) * output_scale), the product in float.
    mult, shift = quantize_multiplier(1.0 / float(np.sqrt(_F32(x.scale)) * _F32(out.scale)))
    return partial(_rsqrt_int8, zero_point=x.zero_point, multiplier=mult, shift=shift, out_zp=out.zero_point)


def _rsqrt_int16_transform(out):
    """elementwise.cc: int16 RSQRT is a LUT of this transform; non-positive inputs give the largest output."""
    top = _F32(32767) * _F32(out.scale)

    def transform(v):
        safe = np.where(v > 0, v, _F32(1))
        return np.where(v > 0, _F32(1) / np.sqrt(safe), top).astype(np.float32)

    return transform


def rsqrt(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """RSQRT (elementwise.cc): float32 1.f / sqrtf; with (input, output) `quantization`, int8
    RsqrtEvalQuantizedInt8 per value, int16 LUTLookup of LUTPopulateInt16. Raises KernelError for
    inputs below the zero point."""
    if quantization is None:
        return np.divide(_ONE, np.sqrt(x))
    qin, qout = quantization
    if x.dtype == np.int8:
        rule = _rsqrt_int8_rule(qin, qout)
    else:
        lut = _lut_int16(_rsqrt_int16_transform(qout), qin.scale, qin.zero_point, qout.scale, qout.zero_point)
        rule = partial(_lut_lookup_int16, lut=lut)
    return _checked(lambda q: _clamp_to(rule(q.astype(np.int64)), x.dtype), x.dtype, qin.zero_point,
                    _RSQRT_BELOW_ZERO)(x)


def _rsqrt_float(x: np.ndarray) -> np.ndarray:
    """1.f / std::sqrt(f): both steps are correctly rounded float32 operations (the second in place)."""
    root = np.sqrt(x)
    return np.divide(_ONE, root, out=root)


@dataclass(frozen=True)
class _AbsParams:
    input_zp: int
    output_zp: int
    multiplier: tuple[int, int] | None  # None when input and output scales are equal


def _abs_quantized(q: np.ndarray, p: _AbsParams) -> np.ndarray:
    v = np.abs(q - p.input_zp)
    if p.multiplier is not None:
        v = multiply_by_quantized_multiplier(v, *p.multiplier)
    return v + p.output_zp


def _abs_prepare(ctx, node) -> None:
    x, out = _unary_prepare(ctx, node, "ABS", ("FLOAT32", "INT8", "INT16", "INT32"))
    if not (x.type == "INT8" or (x.type == "INT16" and _quantized(x))):
        node.user_data = np.abs  # float32, int32 and plain int16 (wrapping like std::abs)
        return
    _elementwise_quantized("ABS", x, out)
    node.user_data = _lookup(_tabulate(partial(_abs_quantized, p=_abs_params(x, out)), x.dtype))


def _abs_params(x, out) -> _AbsParams:
    sx, so = _F32(x.scale), _F32(out.scale)
    return _AbsParams(x.zero_point, out.zero_point, quantize_multiplier(float(sx / so)) if sx != so else None)


def absolute(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """ABS (elementwise.cc AbsEval): std::abs (integers wrapping); int8 and quantized int16 with (input,
    output) `quantization`, |q - zp_in| rescaled by input/output scale (when they differ) + zp_out."""
    if quantization is None:
        return np.abs(x)
    return _clamp_to(_abs_quantized(x.astype(np.int64), _abs_params(*quantization)), x.dtype)


def square(x: np.ndarray) -> np.ndarray:
    """SQUARE (square.cc): x * x in float32."""
    return x * x


def neg(x: np.ndarray) -> np.ndarray:
    """NEG (neg.cc): -x in the input type, integers wrapping; no requantization."""
    return np.negative(x)


def _direct(fn):
    """The node form of a unary reference `fn(x)` that needs no options."""
    def reference(ctx, node) -> None:
        ctx.output(node, 0).data = np.asarray(fn(ctx.input(node, 0).data))

    return reference


def _unary_prepare_with(op: str, supported, fn):
    def prepare(ctx, node) -> None:
        _unary_prepare(ctx, node, op, supported)
        node.user_data = fn

    return prepare


# -- MINIMUM, MAXIMUM, SQUARED_DIFFERENCE, POW -----------------------------------------------

_MIN_MAX_TYPES = ("FLOAT32", "UINT8", "INT8", "INT16", "INT32", "INT64")


def maximum_minimum(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MAXIMUM or MINIMUM of broadcast `a` and `b` (maximum_minimum.cc: el1 > el2 ? el1 : el2, or <).

    A NaN second operand wins; quantized inputs share the output's quantization, so no requantization.
    """
    return np.where(a > b if op == "MAXIMUM" else a < b, a, b)


def _min_max(op: str) -> Registration:
    def prepare(ctx, node) -> None:
        _binary_prepare(ctx, node, op, _MIN_MAX_TYPES)

    def node_min_max(ctx, node) -> None:
        out = ctx.output(node, 0)
        out.data = maximum_minimum(op, ctx.input(node, 0).data, ctx.input(node, 1).data).astype(out.dtype).reshape(
            out.shape)

    # No fast path: the node form of `maximum_minimum` is both the invoke and the reference.
    return Registration(prepare=prepare, invoke=node_min_max, reference=node_min_max, work=work.elementwise)


@dataclass(frozen=True)
class _SquaredDifferenceParams:
    zero_points: tuple[int, int, int]
    input1: tuple[int, int]
    input2: tuple[int, int]
    output: tuple[int, int]


def _squared_difference_quantized(a: np.ndarray, b: np.ndarray, p: _SquaredDifferenceParams) -> np.ndarray:
    """squared_difference.cc: both inputs on a shared scale with 7 bits of headroom, squared, rescaled."""
    za, zb, zo = p.zero_points
    sa = multiply_by_quantized_multiplier((a - za) << 7, *p.input1)
    sb = multiply_by_quantized_multiplier((b - zb) << 7, *p.input2)
    return multiply_by_quantized_multiplier((sa - sb) * (sa - sb), *p.output) + zo


def _smaller_than_one(op: str, real: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp, which TFLite checks is in (0, 1)."""
    check(0.0 < real < 1.0, f"{op}: the quantized rescaling multiplier {real:g} is outside (0, 1)")
    return quantize_multiplier(real)


def _squared_difference_plain(a, b, out) -> Callable[[], None]:
    """(a - b)^2 in the input type, int32 wrapping like the C++; squared in place."""
    if out.shape == ():
        def compute():
            d = a.data - b.data  # NumPy scalars for 0-d operands
            return d * d
        return store_plan(out, compute)

    def run() -> None:
        d = np.subtract(a.data, b.data)
        out.unchecked_data = np.multiply(d, d, out=d)  # store_plan's rule

    return run


def _squared_difference_prepare(ctx, node) -> None:
    a, b, out = _binary_prepare(ctx, node, "SQUARED_DIFFERENCE", ("FLOAT32", "INT32", "INT8"))
    if a.type != "INT8":
        node.user_data = _squared_difference_plain(a, b, out)
        return
    _require_per_tensor_quantized("SQUARED_DIFFERENCE", a, b, out)
    p = _squared_difference_params(a, b, out)
    node.user_data = pair_table_plan(_pair_table(partial(_squared_difference_quantized, p=p), np.int8), a, b, out)


def _squared_difference_params(a, b, out) -> _SquaredDifferenceParams:
    twice_max = 2.0 * float(max(_F32(a.scale), _F32(b.scale)))
    output_real = twice_max * twice_max / float(_F32(1 << 14) * _F32(out.scale))
    return _SquaredDifferenceParams(
        (a.zero_point, b.zero_point, out.zero_point),
        _smaller_than_one("SQUARED_DIFFERENCE", a.scale / twice_max),
        _smaller_than_one("SQUARED_DIFFERENCE", b.scale / twice_max),
        _smaller_than_one("SQUARED_DIFFERENCE", output_real))


def squared_difference(a: np.ndarray, b: np.ndarray,
                       quantization: tuple[QuantParams, QuantParams, QuantParams] | None = None) -> np.ndarray:
    """SQUARED_DIFFERENCE (squared_difference.cc) of broadcast `a` and `b`: (a - b)^2 in the input type;
    int8 with (a, b, output) `quantization`, per value pair (_squared_difference_quantized)."""
    if quantization is None:
        d = np.subtract(a, b)
        return np.asarray(d * d)
    values = _squared_difference_quantized(a.astype(np.int64), b.astype(np.int64),
                                           _squared_difference_params(*quantization))
    return _clamp_to(values, np.int8)


def _squared_difference_reference(ctx, node) -> None:
    """`squared_difference` on a node: its inputs' and output's quantization when int8."""
    a, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    quantization = QuantParams.of(a, b, out) if a.type == "INT8" else None
    out.data = squared_difference(a.data, b.data, quantization).reshape(out.shape)


def _apply_binary(ctx, node) -> None:
    """The invoke of binary ops whose prepare chose a function of the two inputs (broadcasting them)."""
    out = ctx.output(node, 0)
    out.data = np.asarray(node.user_data(ctx.input(node, 0).data, ctx.input(node, 1).data)).reshape(out.shape)


def _pow_prepare(ctx, node) -> None:
    a, b, _ = _binary_prepare(ctx, node, "POW", ("FLOAT32", "INT32"))
    node.user_data = tuple(a.shape) != tuple(b.shape)


def _integer_power(x: np.ndarray, exponent: int, mul) -> np.ndarray:
    """optimized_ops IntegerExponentPow: square-and-multiply, one Mul kernel call per step."""
    if exponent == 1:
        return x
    half = _integer_power(x, exponent // 2, mul)
    result = mul(half, half)
    return mul(x, result) if exponent % 2 else result


def _scalar_integer_exponent(b: np.ndarray) -> int | None:
    """BroadcastPow4D's fast path: a one-element exponent within 1e-5 of an integer >= 1."""
    if b.size != 1:
        return None
    e = b.reshape(-1)[0]
    rounded = int(tflite_round(float(e))) if np.isfinite(e) else 0
    if not 1 <= rounded <= INT32_MAX:  # static_cast<int> of a larger value is INT32_MIN on x86
        return None
    close = abs(e - rounded) < _F32(1e-5) if b.dtype == np.float32 else e == rounded
    return rounded if close else None


def power(a: np.ndarray, b: np.ndarray, broadcasting: bool) -> np.ndarray:
    """POW of float32 or int32 `a` and `b` (pow.cc), in the inputs' dtype, broadcast.

    Only a broadcasting POW (input shapes differ, `broadcasting`) takes BroadcastPow4D's
    integer-exponent path (_scalar_integer_exponent); otherwise std::pow, in float for float32 and in
    double for int32 (then static_cast<int32_t>). Raises KernelError for a negative int32 exponent.
    """
    is_int = a.dtype == np.int32
    if is_int:
        check(bool(np.all(b >= 0)), "POW: negative exponents are not supported for INT32")
    exponent = _scalar_integer_exponent(b) if broadcasting else None
    with np.errstate(all="ignore"):
        if exponent is not None and is_int:
            result = _integer_power(a.astype(np.int64), exponent, lambda u, v: _wrap32(u * v))
        elif exponent is not None:
            # Each Mul clamps to the float range: overflow gives +-FLT_MAX, not infinity.
            result = _integer_power(a, exponent, lambda u, v: np.clip(u * v, -_FLT_MAX, _FLT_MAX))
        else:
            result = np.power(a.astype(np.float64), b.astype(np.float64))
            result = cast_to_int32(result) if is_int else result
        return np.broadcast_to(result, np.broadcast_shapes(a.shape, b.shape)).astype(a.dtype)


def _pow_node(ctx, node) -> None:
    """`power` on a node; prepare stored whether its input shapes differ."""
    out = ctx.output(node, 0)
    out.data = power(ctx.input(node, 0).data, ctx.input(node, 1).data, node.user_data).reshape(out.shape)


# -- DIV, FLOOR_DIV, FLOOR_MOD ---------------------------------------------------------------

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


def _rounding_divide_by_pot_x86(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT on int32 as x86 executes it for any exponent: the mask is
    (1 << e) - 1 truncated to 32 bits and the arithmetic shift count is taken mod 32."""
    mask = _wrap32((np.int64(1) << np.clip(exponent, 0, 62)) - 1)
    threshold = (mask >> 1) + (x < 0)
    return (x >> (exponent & 31)) + ((x & mask) > threshold)


def _div_quantized(a: np.ndarray, b: np.ndarray, p: _DivQuantized) -> np.ndarray:
    """reference_ops DivElementwise: x1 * (1/x2) with gemmlowp's reciprocal, then the rescale."""
    srdhm = saturating_rounding_doubling_high_mul
    za, zb, zo = p.zero_points
    x1, x2 = a - za, b - zb
    # A negative divisor flips both signs so that the reciprocal is positive.
    x1 = np.where(x2 < 0, -x1, x1)
    x2 = np.abs(x2)
    # GetReciprocal(x2, 31): x2 normalized to [1, 2), 1/(1 + fraction) in Q0.31.
    headroom_plus_one = _clz32(x2)
    recip_shift = 31 - headroom_plus_one
    recip = _one_over_one_plus_x(((x2 << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31))
    headroom = _clrsb32(x1)
    quotient = srdhm(_wrap32(x1 << headroom), recip)
    total_shift = p.shift - recip_shift - headroom
    scaled = _rounding_divide_by_pot_x86(srdhm(quotient, p.multiplier), -total_shift)
    return np.clip(scaled + zo, p.act_min, p.act_max)


def _div_float(a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> np.ndarray:
    # Division by zero is allowed; the activation clamp turns infinities into +-FLT_MAX.
    return np.clip(a / b, lo, hi).astype(np.float32)


def _div_int32(a: np.ndarray, b: np.ndarray, lo: int, hi: int) -> np.ndarray:
    x, y = a.astype(np.int64), b.astype(np.int64)
    q = np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))  # C++ division truncates
    return _wrap32(np.clip(q, lo, hi)).astype(np.int32)


def _div_prepare(ctx, node) -> None:
    a, b, out = _binary_prepare(ctx, node, "DIV", ("FLOAT32", "INT32", *_DIV_QUANTIZED))
    act = _options_field(node, "fused_activation_function", 0)
    if a.type == "FLOAT32":
        node.user_data = partial(_div_float, lo=_float_activation_range(act)[0], hi=_float_activation_range(act)[1])
        return
    if a.type == "INT32":
        node.user_data = partial(_div_int32, lo=_int32_activation_range(act)[0], hi=_int32_activation_range(act)[1])
        return
    _require_per_tensor_quantized("DIV", a, b, out)
    rule = partial(_div_quantized, p=_div_params(a, b, out, act, out.dtype))
    if a.type in _EIGHT_BIT:
        node.user_data = _pair_lookup(rule, a.dtype)
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
    out.data = div(a.data, b.data, _options_field(node, "fused_activation_function", 0), quantization).reshape(
        out.shape)


def _div_invoke(ctx, node) -> None:
    b = ctx.input(node, 1)
    if b.type != "FLOAT32":
        # div.cc CheckNonZero: no divisor may be zero (its zero point when quantized).
        zero = b.zero_point if b.type in _DIV_QUANTIZED else 0
        check(bool(np.all(b.data != zero)), "DIV: division by zero (the divisor has a zero value)")
    _apply_binary(ctx, node)


def _floor_div_prepare(ctx, node) -> None:
    _binary_prepare(ctx, node, "FLOOR_DIV", ("FLOAT32", "INT32", "INT16", "INT8"))


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
    _binary_prepare(ctx, node, "FLOOR_MOD", ("FLOAT32", "INT8", "INT16", "INT32", "INT64"))


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


# -- registration ----------------------------------------------------------------------------


def _unary(prepare, estimate, reference=None) -> Registration:
    """A unary op whose prepare leaves a function of the input array (of the output's dtype and shape)
    in node.user_data; it becomes the invoke plan that applies it. `estimate` is its work hook,
    `reference` its reference hook."""
    def prepare_plan(ctx, node) -> None:
        prepare(ctx, node)
        fn, x, out = node.user_data, ctx.input(node, 0), ctx.output(node, 0)
        if not out.shape:
            node.user_data = store_plan(out, lambda: fn(x.data))
            return

        def run() -> None:
            out.unchecked_data = fn(x.data)  # store_plan's rule

        node.user_data = run

    return Registration(prepare=prepare_plan, invoke=run_plan, reference=reference, work=estimate)


def _lut_populate(transform, in_scale: float, in_zp: int, out_scale: float, out_zp: int, dtype) -> np.ndarray:
    """LUTPopulateInt8, reproduced in float32, over `integer_domain(dtype)`."""
    return lut_apply(transform, integer_domain(dtype), in_scale, in_zp, out_scale, out_zp, dtype)


def lut_apply(transform, q: np.ndarray, in_scale: float, in_zp: int, out_scale: float, out_zp: int,
              dtype) -> np.ndarray:
    """An 8-bit LUT op's specification on the values `q` themselves: LUTPopulateInt8's arithmetic in float32
    (dequantize, `transform`, divide by the output scale, std::round, + zero point, clamp to dtype)."""
    info = np.iinfo(dtype)
    q = q.astype(np.int64)
    dequantized = _F32(in_scale) * (q - in_zp).astype(np.float32)
    inverse_scale = _F32(1) / _F32(out_scale)
    rescaled = tflite_round(transform(dequantized) * inverse_scale).astype(np.float32)
    quantized = cast_to_int32(rescaled + _F32(out_zp))
    return np.clip(quantized, info.min, info.max).astype(dtype)


def register(resolver) -> None:
    add = resolver.add_builtin
    # SQUARE, NEG, POW have only version 1 (register.cc).
    # EXP, LOG: v2 int8/int16.
    versions = {"EXP": 2, "LOG": 2}
    references = {"EXP": exp, "LOG": log}
    for spec in _LUT_OPS:
        # 8-bit EXP and LOG read a table, as TFLite's LUTPopulate kernels do.
        add(spec.name, _unary(_lut_op_prepare(spec), work.lookup_if_quantized, unary_node(references[spec.name])), 1,
            versions[spec.name])
    # SQRT: v2 int8/int16. RSQRT: v2 int8, v3 int16; v4 (float16) is not implemented.
    add("SQRT", _unary(_sqrt_prepare, work.elementwise, unary_node(sqrt)), 1, 2)
    add("RSQRT", _unary(_rsqrt_prepare, work.elementwise, unary_node(rsqrt)), 1, 3)
    add("SQUARE", _unary(_unary_prepare_with("SQUARE", ("FLOAT32",), square), work.elementwise, _direct(square)), 1,
        1)
    # ABS: v2 int8, v3 quantized int16, v4 plain int16, v5 int32.
    add("ABS", _unary(_abs_prepare, work.elementwise, unary_node(absolute)), 1, 5)
    # neg.cc: a plain negation for every type, integers wrapping (no requantization).
    negate = _unary_prepare_with("NEG", ("FLOAT32", "INT8", "INT16", "INT32", "INT64"), np.negative)
    add("NEG", _unary(negate, work.elementwise, _direct(neg)), 1, 1)
    # MINIMUM, MAXIMUM: v2 int8, v3 broadcasting beyond 4-D, v4 int16.
    add("MINIMUM", _min_max("MINIMUM"), 1, 4)
    add("MAXIMUM", _min_max("MAXIMUM"), 1, 4)
    # SQUARED_DIFFERENCE: v2 int8.
    add("SQUARED_DIFFERENCE", Registration(prepare=_squared_difference_prepare, invoke=run_plan,
                                           reference=_squared_difference_reference, work=work.elementwise), 1, 2)
    # POW, FLOOR_DIV and FLOOR_MOD have no fast path: the node form of the array function (`power`,
    # `floor_div`, `floor_mod`) is both the invoke and the reference.
    add("POW", Registration(prepare=_pow_prepare, invoke=_pow_node, reference=_pow_node, work=work.elementwise), 1,
        1)
    # DIV: v2 broadcasting beyond 4-D (the quantized forms are version 1).
    add("DIV", Registration(prepare=_div_prepare, invoke=_div_invoke, reference=_div_reference, work=work.elementwise),
        1, 2)
    # FLOOR_DIV: v2 float32, v3 int8/int16. FLOOR_MOD: v2 int8/int16.
    add("FLOOR_DIV", Registration(prepare=_floor_div_prepare, invoke=_floor_div_node, reference=_floor_div_node,
                                  work=work.elementwise),
        1, 3)
    add("FLOOR_MOD", Registration(prepare=_floor_mod_prepare, invoke=_floor_mod_node, reference=_floor_mod_node,
                                  work=work.elementwise),
        1, 2)
