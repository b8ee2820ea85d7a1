"""Elementwise math, float32 and 8/16-bit quantized: EXP, LOG, SQRT, RSQRT, SQUARE, ABS, NEG, POW,
SQUARED_DIFFERENCE, MINIMUM, MAXIMUM (ADD, SUB, MUL are in elementwise.py; DIV, FLOOR_DIV, FLOOR_MOD
in division.py).

Quantized forms follow the kernels LiteRT's builtin resolver runs on x86: LUTs are built in
float32 exactly as LUTPopulate builds them (8-bit: one entry per value; int16: 513 entries
with linear interpolation; common.py), everything else is TFLite's gemmlowp fixed point carried
over int64 arrays (activations.cc, elementwise.cc, exp.cc, squared_difference.cc).
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
    LutOp,
    QuantParams,
    binary_prepare,
    check,
    clamp_to,
    expf,
    in_float64,
    is_quantized,
    lookup,
    lut_int16,
    lut_lookup_int16,
    lut_op_prepare,
    lut_table,
    lut_values,
    pair_table,
    require_per_tensor_quantized,
    require_zero_points,
    run_plan,
    store_plan,
    tabulate,
    unary_node,
    unary_plan,
    unary_prepare,
)
from accelsim.runtime.kernels.elementwise import pair_table_plan
from accelsim.runtime.quant import (
    INT32_MAX,
    cast_to_int32,
    inv_sqrt_quantized_multiplier_exp,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    tflite_round,
    wrap32,
)
from accelsim.runtime.registration import Registration

_F32 = np.float32
_ONE = np.array(1, dtype=np.float32)  # a 0-d float32: the cheapest scalar operand of a float32 ufunc
_FLT_MAX = float(np.finfo(np.float32).max)


def _checked(fn, dtype, zero_point: int, message: str):
    """fn, refusing inputs below the zero point (a negative real value) as elementwise.cc does."""
    if zero_point <= np.iinfo(dtype).min:
        return fn  # no value is below it

    def apply(q: np.ndarray) -> np.ndarray:
        check(q.size == 0 or q.min() >= zero_point, message)
        return fn(q)

    return apply


# -- LUT ops: EXP, LOG (activations.py adds ELU, GELU) ------------------------------------------------------------


def exp(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """EXP (exp.cc): float32 expf (in double, rounded once); int8/int16 with (input, output)
    `quantization`, LUTPopulate's table of expf (lut_values)."""
    return lut_values(expf, expf, x, quantization)


def log(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """LOG (elementwise.cc): float32 logf; int8/int16 with (input, output) `quantization`,
    LUTPopulate's table of logf, non-positive inputs at the output's lowest value (LogLUTPrepare)."""
    transform = None if quantization is None else _log_transform(x.dtype, quantization[1])
    return lut_values(partial(in_float64, np.log), transform, x, quantization)


def _log_transform(dtype, out):
    # elementwise.cc LogLUTPrepare: non-positive inputs map to the output's lowest value.
    qmin = -128 if dtype == np.int8 else -32768
    lowest = _F32(qmin - out.zero_point) * _F32(out.scale)

    def transform(v):
        safe = np.where(v > 0, v, _F32(1))
        return np.where(v > 0, in_float64(np.log, safe), lowest).astype(np.float32)

    return transform


_LUT_OPS = (
    # exp.cc: int16 needs zero points of 0.
    LutOp("EXP", ("FLOAT32", "INT8", "INT16"), lambda node, x: expf, lambda node, out: expf, True),
    # elementwise.cc GenericPrepare: quantized int16 needs zero points of 0.
    LutOp("LOG", ("FLOAT32", "INT8", "INT16"), lambda node, x: partial(in_float64, np.log),
          lambda node, out: _log_transform(out.dtype, out), True),
)

# -- SQRT, RSQRT, SQUARE, ABS, NEG -----------------------------------------------------------


def _elementwise_quantized(op: str, x, out) -> None:
    """elementwise.cc GenericPrepare: int8 always, int16 when quantized, with int16 zero points 0."""
    require_per_tensor_quantized(op, x, out)
    if x.type == "INT16":
        require_zero_points(op, x, out)


def _sqrt_quantized(q: np.ndarray, x, out) -> np.ndarray:
    """SqrtEvalQuantized: dequantize in float, sqrtf, divide by the output scale and truncate."""
    real = _F32(x.scale) * (q - x.zero_point).astype(np.float32)
    return cast_to_int32(np.sqrt(real) / _F32(out.scale)) + out.zero_point


def _sqrt_prepare(ctx, node) -> None:
    x, out = unary_prepare(ctx, node, "SQRT", ("FLOAT32", "INT8", "INT16"))
    if x.type == "FLOAT32":
        node.user_data = np.sqrt
        return
    _elementwise_quantized("SQRT", x, out)
    table = tabulate(partial(_sqrt_quantized, x=x, out=out), x.dtype)
    node.user_data = _checked(lookup(table), x.dtype, x.zero_point, _SQRT_NEGATIVE)


_SQRT_NEGATIVE = "SQRT: the quantized input has negative values (Sqrt is only defined for non-negative values)"


def sqrt(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """SQRT (elementwise.cc): float32 sqrtf; int8/int16 with (input, output) `quantization`,
    SqrtEvalQuantized per value (_sqrt_quantized). Raises KernelError for inputs below the zero point."""
    if quantization is None:
        return np.sqrt(x)
    qin, qout = quantization
    return _checked(lambda q: clamp_to(_sqrt_quantized(q.astype(np.int64), qin, qout), x.dtype), x.dtype,
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
    x, out = unary_prepare(ctx, node, "RSQRT", ("FLOAT32", "INT8", "INT16"))
    if x.type == "FLOAT32":
        # NumPy gives a scalar for a 0-d operand, which the in-place second step cannot write to.
        node.user_data = _rsqrt_float if x.shape else lambda v: np.divide(_ONE, np.sqrt(v))
        return
    _elementwise_quantized("RSQRT", x, out)
    if x.type == "INT8":
        table = tabulate(_rsqrt_int8_rule(x, out), np.int8)
    else:
        table = lut_table(_rsqrt_int16_transform(out), x, out)
    node.user_data = _checked(lookup(table), x.dtype, x.zero_point, _RSQRT_BELOW_ZERO)


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
        lut = lut_int16(_rsqrt_int16_transform(qout), qin.scale, qin.zero_point, qout.scale, qout.zero_point)
        rule = partial(lut_lookup_int16, lut=lut)
    return _checked(lambda q: clamp_to(rule(q.astype(np.int64)), x.dtype), x.dtype, qin.zero_point,
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
    x, out = unary_prepare(ctx, node, "ABS", ("FLOAT32", "INT8", "INT16", "INT32"))
    if not (x.type == "INT8" or (x.type == "INT16" and is_quantized(x))):
        node.user_data = np.abs  # float32, int32 and plain int16 (wrapping like std::abs)
        return
    _elementwise_quantized("ABS", x, out)
    node.user_data = lookup(tabulate(partial(_abs_quantized, p=_abs_params(x, out)), x.dtype))


def _abs_params(x, out) -> _AbsParams:
    sx, so = _F32(x.scale), _F32(out.scale)
    return _AbsParams(x.zero_point, out.zero_point, quantize_multiplier(float(sx / so)) if sx != so else None)


def absolute(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """ABS (elementwise.cc AbsEval): std::abs (integers wrapping); int8 and quantized int16 with (input,
    output) `quantization`, |q - zp_in| rescaled by input/output scale (when they differ) + zp_out."""
    if quantization is None:
        return np.abs(x)
    return clamp_to(_abs_quantized(x.astype(np.int64), _abs_params(*quantization)), x.dtype)


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
        unary_prepare(ctx, node, op, supported)
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
        binary_prepare(ctx, node, op, _MIN_MAX_TYPES)

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
    a, b, out = binary_prepare(ctx, node, "SQUARED_DIFFERENCE", ("FLOAT32", "INT32", "INT8"))
    if a.type != "INT8":
        node.user_data = _squared_difference_plain(a, b, out)
        return
    require_per_tensor_quantized("SQUARED_DIFFERENCE", a, b, out)
    p = _squared_difference_params(a, b, out)
    node.user_data = pair_table_plan(pair_table(partial(_squared_difference_quantized, p=p), np.int8), a, b, out)


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
    return clamp_to(values, np.int8)


def _squared_difference_reference(ctx, node) -> None:
    """`squared_difference` on a node: its inputs' and output's quantization when int8."""
    a, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    quantization = QuantParams.of(a, b, out) if a.type == "INT8" else None
    out.data = squared_difference(a.data, b.data, quantization).reshape(out.shape)


def _pow_prepare(ctx, node) -> None:
    a, b, _ = binary_prepare(ctx, node, "POW", ("FLOAT32", "INT32"))
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
            result = _integer_power(a.astype(np.int64), exponent, lambda u, v: wrap32(u * v))
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


# -- registration ----------------------------------------------------------------------------


def register(resolver) -> None:
    add = resolver.add_builtin
    # SQUARE, NEG, POW have only version 1 (register.cc).
    # EXP, LOG: v2 int8/int16.
    versions = {"EXP": 2, "LOG": 2}
    references = {"EXP": exp, "LOG": log}
    for spec in _LUT_OPS:
        # 8-bit EXP and LOG read a table, as TFLite's LUTPopulate kernels do.
        add(spec.name, unary_plan(lut_op_prepare(spec), work.lookup_if_quantized, unary_node(references[spec.name])), 1,
            versions[spec.name])
    # SQRT: v2 int8/int16. RSQRT: v2 int8, v3 int16; v4 (float16) is not implemented.
    add("SQRT", unary_plan(_sqrt_prepare, work.elementwise, unary_node(sqrt)), 1, 2)
    add("RSQRT", unary_plan(_rsqrt_prepare, work.elementwise, unary_node(rsqrt)), 1, 3)
    add("SQUARE", unary_plan(_unary_prepare_with("SQUARE", ("FLOAT32",), square), work.elementwise, _direct(square)), 1,
        1)
    # ABS: v2 int8, v3 quantized int16, v4 plain int16, v5 int32.
    add("ABS", unary_plan(_abs_prepare, work.elementwise, unary_node(absolute)), 1, 5)
    # neg.cc: a plain negation for every type, integers wrapping (no requantization).
    negate = _unary_prepare_with("NEG", ("FLOAT32", "INT8", "INT16", "INT32", "INT64"), np.negative)
    add("NEG", unary_plan(negate, work.elementwise, _direct(neg)), 1, 1)
    # MINIMUM, MAXIMUM: v2 int8, v3 broadcasting beyond 4-D, v4 int16.
    add("MINIMUM", _min_max("MINIMUM"), 1, 4)
    add("MAXIMUM", _min_max("MAXIMUM"), 1, 4)
    # SQUARED_DIFFERENCE: v2 int8.
    add("SQUARED_DIFFERENCE", Registration(prepare=_squared_difference_prepare, invoke=run_plan,
                                           reference=_squared_difference_reference, work=work.elementwise), 1, 2)
    # POW has no fast path: the node form of the array function `power` is both the invoke and the reference.
    add("POW", Registration(prepare=_pow_prepare, invoke=_pow_node, reference=_pow_node, work=work.elementwise), 1,
        1)
