"""Activations: RELU, RELU6, LOGISTIC, TANH, ELU, GELU, PRELU, LEAKY_RELU, HARD_SWISH.

The quantized forms follow LiteRT's optimized builtin kernels (activations.cc):
RELU/RELU6 requantize with MultiplyByQuantizedMultiplier (QuantizedReluX),
LOGISTIC/TANH look values up in a 256-entry table built in float (LUTPopulate);
ELU, GELU, PRELU, LEAKY_RELU and HARD_SWISH share math.py's table machinery (see there).
The unary ops are tabulated over every input value in prepare. expf/tanhf are computed in double and
rounded once; that matched glibc's tables in every one of 6000 random parameter sets.
"""

from __future__ import annotations

import math
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
    table_index,
)
from accelsim.runtime.kernels.math import (
    _check_type,
    _clamp_to,
    _in_float64,
    _lookup,
    _lut_op_prepare,
    _lut_populate,
    _LutOp,
    _options_field,
    _pair_lookup,
    _require_per_tensor_quantized,
    _require_zero_points,
    _saturating_shift_left,
    _srdhm16,
    _tabulate,
    _trunc_div,
    _unary,
    _unary_prepare,
    lut_apply,
    lut_values,
    unary_node,
)
from accelsim.runtime.quant import (
    INT32_MAX,
    cast_to_int32,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
    tflite_round,
)
from accelsim.runtime.registration import Registration

_EIGHT_BIT = ("INT8", "UINT8")
_F32 = np.float32


def _f32_exp(x: np.ndarray) -> np.ndarray:
    """expf, correctly rounded (computed in double, rounded once to float; overflow gives inf)."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(x, dtype=np.float64)).astype(np.float32)


def _f32_tanh(x: np.ndarray) -> np.ndarray:
    """tanhf, correctly rounded (computed in double, rounded once to float)."""
    return np.tanh(np.asarray(x, dtype=np.float64)).astype(np.float32)


def _f32_logistic(x: np.ndarray) -> np.ndarray:
    """The LOGISTIC table's transform: 1.0f / (1.0f + expf(-x)), every step in float."""
    return _F32(1) / (_F32(1) + _f32_exp(-x))


def _same_type_prepare(ctx, node, op: str):
    """GenericPrepare: one input, one output of the same type and shape."""
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(x.type == out.type, f"{op}: output type {out.type} differs from input type {x.type}")
    ctx.resize_tensor(out, x.shape)
    return x, out


def _require_quantized(op: str, *tensors) -> None:
    """Quantized kernels divide by the scales; TFLite would produce inf/NaN multipliers."""
    for t in tensors:
        check(t.scale > 0, f"{op}: {t.type} tensor {t.name!r} needs a positive quantization scale")


# -- RELU, RELU6 -----------------------------------------------------------------------------

_RELU_LIMITS = {"RELU": (0.0, None), "RELU6": (0.0, 6.0)}
_RELU_TYPES = ("FLOAT32", "INT8", "UINT8", "INT16")


def _relu_table(op: str, x, out) -> np.ndarray:
    """QuantizedReluX for every input value (integer_domain order)."""
    return _relu_quantized(op, integer_domain(x.dtype), x, out, out.dtype)


def _relu_quantized(op: str, q: np.ndarray, x, out, dtype) -> np.ndarray:
    """QuantizedReluX of the values q: requantize with MultiplyByQuantizedMultiplier, then clamp."""
    # ReluPrepare: the multiplier is input_scale / output_scale computed in float.
    mult, shift = quantize_multiplier(float(_F32(x.scale) / _F32(out.scale)))
    y = multiply_by_quantized_multiplier(q.astype(np.int64) - x.zero_point, mult, shift) + out.zero_point
    return np.clip(y, *_relu_range(op, out, dtype)).astype(dtype)


def relu(op: str, x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """RELU or RELU6 (activations.cc ReluEval, Relu6Eval): float32 max(x, 0), and min(., 6) for RELU6;
    8/16-bit with (input, output) `quantization`, QuantizedReluX: (q - zp_in) rescaled by
    input/output scale, + zp_out, clamped to the quantized [0, inf) or [0, 6] within the type."""
    if quantization is None:
        hi = _RELU_LIMITS[op][1]
        return np.maximum(x, _F32(0)) if hi is None else np.minimum(np.maximum(x, _F32(0)), _F32(hi))
    return _relu_quantized(op, x, *quantization, x.dtype)


def _relu_node(op: str):
    """`relu` on a node: the input's and output's quantization for 8/16-bit types."""
    def node_relu(ctx, node) -> None:
        x, out = ctx.input(node, 0), ctx.output(node, 0)
        out.data = relu(op, x.data, None if x.type == "FLOAT32" else QuantParams.of(x, out))

    return node_relu


def _relu_prepare(op: str):
    float_hi = _RELU_LIMITS[op][1]

    def prepare(ctx, node) -> None:
        x, out = _same_type_prepare(ctx, node, op)
        check(x.type in _RELU_TYPES, f"{op}: type {x.type} is not supported (supported: {_RELU_TYPES})")
        if x.type == "FLOAT32":
            node.user_data = _float_relu(x, out, float_hi)
            return
        _require_quantized(op, x, out)
        if x.type == "INT16":
            check(x.zero_point == 0 and out.zero_point == 0, f"{op}: INT16 requires zero points of 0")
        node.user_data = _table_lookup(x, out, _relu_table(op, x, out))

    return prepare


def _float_relu(x, out, hi):
    """max(x, 0), then min(., hi) for RELU6: inf stays inf under RELU, NaN stays NaN.

    Against a scalar bound, np.maximum is the cheapest call on a few thousand values and
    ndarray.clip (a vectorized loop) on more: 110k float32 values take 55 us and 21 us (NumPy 2.4).
    """
    zero, top = _F32(0), _F32(np.inf if hi is None else hi)
    if hi is None and int(np.prod(out.shape, dtype=np.int64)) <= _SMALL:
        def relu() -> None:
            out.data = np.maximum(x.data, zero)

        return relu

    def clipped() -> None:
        out.data = x.data.clip(zero, top)

    return clipped


_SMALL = 4096  # values below which np.maximum against a scalar beats ndarray.clip


def _table_lookup(x, out, table: np.ndarray):
    """An 8/16-bit unary op tabulated over every input value: one gather per invoke."""
    def lookup() -> None:
        out.data = np.take(table, table_index(x.data))

    return lookup


def _relu_range(op: str, out, dtype) -> tuple[int, int]:
    """QuantizedReluX: zero_point + (int)roundf(limit / scale) in float, within the type's range."""
    info = np.iinfo(dtype)
    act_min, act_max = _RELU_LIMITS[op]
    scale = _F32(out.scale)
    lo = max(int(info.min), out.zero_point + int(cast_to_int32(tflite_round(_F32(act_min) / scale))))
    if act_max is None:
        return lo, int(info.max)
    return lo, min(int(info.max), out.zero_point + int(cast_to_int32(tflite_round(_F32(act_max) / scale))))


# -- LOGISTIC, TANH --------------------------------------------------------------------------


_TRANSFORMS = {"LOGISTIC": _f32_logistic, "TANH": _f32_tanh}


def _lut_prepare(op: str):
    def prepare(ctx, node) -> None:
        x, out = _same_type_prepare(ctx, node, op)
        supported = ("FLOAT32", *_EIGHT_BIT)
        check(x.type in supported, f"{op}: type {x.type} is not supported (supported: {supported})")
        if x.type == "FLOAT32":
            node.user_data = _float_tanh(x, out) if op == "TANH" else _float_logistic(x, out)
            return
        _require_quantized(op, x, out)
        if op == "LOGISTIC":
            # SigmoidPrepare: the output must cover [0, 1) with scale exactly 1/256.
            check(float(_F32(out.scale)) == 1.0 / 256, f"LOGISTIC: output scale must be 1/256, got {out.scale}")
        table = _lut_populate(_TRANSFORMS[op], x.scale, x.zero_point, out.scale, out.zero_point, x.dtype)
        node.user_data = _table_lookup(x, out, table)

    return prepare


def tanh(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """TANH (activations.cc TanhEval): float32 tanh; 8-bit with (input, output) `quantization`,
    math.lut_apply of tanhf (LUTPopulate's arithmetic) on the values themselves."""
    if quantization is None:
        return np.tanh(x)
    qin, qout = quantization
    return lut_apply(_f32_tanh, x, qin.scale, qin.zero_point, qout.scale, qout.zero_point, x.dtype)


def logistic(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """LOGISTIC (activations.cc SigmoidEval): float32 1 / (1 + exp(-x)); 8-bit with (input, output)
    `quantization`, math.lut_apply of 1.0f / (1.0f + expf(-x)) on the values themselves."""
    if quantization is None:
        return (_F32(1) / (_F32(1) + np.exp(-x))).astype(np.float32)
    qin, qout = quantization
    return lut_apply(_f32_logistic, x, qin.scale, qin.zero_point, qout.scale, qout.zero_point, x.dtype)


# Float TANH/LOGISTIC: LiteRT's optimized kernels evaluate Eigen's float32 approximations, so
# float32 NumPy (a few ulp from the exact value, like Eigen's) stays well inside the float bound.
def _float_tanh(x, out):
    def tanh() -> None:
        out.data = np.tanh(x.data)

    return tanh


def _float_logistic(x, out):
    """1 / (1 + exp(-x)) in float32, in place (exp overflows to inf for x < -88: the result is 0)."""
    one = np.asarray(_F32(1))  # a 0-d operand: no scalar conversion per call
    if not x.shape:  # NumPy gives a scalar for a 0-d operand, which the in-place steps cannot write to
        return store_plan(out, lambda: one / (one + np.exp(-x.data)))

    def logistic() -> np.ndarray:
        y = np.negative(x.data)
        np.exp(y, out=y)
        np.add(y, one, out=y)
        return np.reciprocal(y, out=y)

    return store_plan(out, logistic)


# -- ELU, GELU, PRELU, LEAKY_RELU, HARD_SWISH -------------------------------------------------

def _expm1_f32(v):
    return _in_float64(np.expm1, v)


def _erfc_exact(v: np.ndarray) -> np.ndarray:
    """erfcf of float32 values, correctly rounded (math.erfc over at most 1539 table points)."""
    flat = np.asarray(v, dtype=np.float64).reshape(-1)
    return np.array([math.erfc(float(t)) for t in flat], dtype=np.float64).reshape(np.shape(v)).astype(np.float32)


_SQRT1_2 = _F32(-math.sqrt(0.5))  # static_cast<float>(-M_SQRT1_2)
_SQRT_2_OVER_PI = _F32(2.0 / math.sqrt(math.pi) * math.sqrt(0.5))  # kSqrt2dPi = M_2_SQRTPI * M_SQRT1_2


def _gelu_transform(v: np.ndarray) -> np.ndarray:
    """gelu.h GeluTransform: 0.5f * in * erfc(in * -M_SQRT1_2) in float32."""
    return (_F32(0.5) * v) * _erfc_exact(v * _SQRT1_2)


def _gelu_approximate_transform(v: np.ndarray) -> np.ndarray:
    """gelu.h GeluTransformApproximate: 0.5f*in*(1+tanh(sqrt(2/pi)*(in+0.044715f*in^3))) in float32."""
    cube = ((_F32(0.044715) * v) * v) * v
    inner = _in_float64(np.tanh, _SQRT_2_OVER_PI * (v + cube))
    return (_F32(0.5) * v) * (_F32(1) + inner)


def _f32_constants(*values) -> tuple[np.ndarray, ...]:
    # 0-d float32 arrays: the cheapest scalar operand of a float32 ufunc call.
    return tuple(np.array(v, dtype=np.float32) for v in values)


_HALF, _ONE, _TWO, _ZERO, _NEG_SQRT1_2, _GELU_CUBIC, _GELU_TANH_SCALE = _f32_constants(
    0.5, 1, 2, 0, -_SQRT1_2, 0.044715, _SQRT_2_OVER_PI)


# Numerical Recipes' Chebyshev fit erfcc: erfc(z) = t * exp(-z^2 + P(t)), t = 1 / (1 + z / 2) for
# z >= 0, relative error below 1.2e-7 in exact arithmetic. Here the coefficients of t^0..t^9, with
# ln 2 taken from the constant one so that the exponential gives erfc(z) / 2, and a last -1 for z^2.
_HALF_ERFCC = np.array([-1.26551223 - math.log(2.0), 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                        0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277, -1.0], dtype=np.float32)


# How t^2..t^9 are built from lower powers (rows of the scratch): two products per power at most.
_POWER_FACTORS = ((2, 1, 1), (3, 2, 1), (4, 2, 2), (5, 4, 1), (6, 3, 3), (7, 6, 1), (8, 4, 4), (9, 8, 1))


# GELU's scratch holds 11 rows of at most this many values (704 KiB): larger inputs go block by block,
# so that prepare never allocates a multiple of the tensor (11 rows of a 67M-value input were 2.9 GB).
_GELU_BLOCK = 16384


def gelu_float_for(size: int) -> Callable[[np.ndarray], np.ndarray]:
    """reference_ops::Gelu (Eigen, float32): 0.5f * x * erfc(x * -M_SQRT1_2), erfc from erfcc in
    float32 (within a few ulps of erfcf), for inputs of `size` values.

    Few NumPy calls: the powers of t fill the rows of a scratch array owned by this node (never
    handed out), and one matrix-vector product sums the polynomial and -z^2 (about 16 us for
    1024 values against 24 for Horner's 18 calls). Inputs over _GELU_BLOCK values run in blocks.
    """
    block = max(1, min(size, _GELU_BLOCK))
    scratch = np.empty((len(_HALF_ERFCC), block), dtype=np.float32)
    scratch[0] = 1
    full = (scratch, list(scratch))

    def gelu_block(v: np.ndarray, out: np.ndarray) -> None:
        """out = GELU(v) for a flat block of at most `block` values."""
        rows, row = full if v.size == block else (scratch[:, :v.size], list(scratch[:, :v.size]))
        t, square = row[1], row[-1]
        z = np.multiply(v, _NEG_SQRT1_2)  # w = x * -M_SQRT1_2, made |w| after its square is taken
        np.multiply(z, z, out=square)
        np.abs(z, out=z)
        # t = 1 / (1 + z / 2), computed as 2 / (2 + z): scaling by 2 is exact, so the bits are the same.
        np.add(z, _TWO, out=t)
        np.divide(_TWO, t, out=t)
        for k, i, j in _POWER_FACTORS:
            np.multiply(row[i], row[j], out=row[k])
        half = np.dot(_HALF_ERFCC, rows)
        np.exp(half, out=half)
        half *= t  # erfc(|w|) / 2, in [0, 1/2]
        # erfc(w) = 2 - erfc(-w): for x > 0 (w < 0) the half is 1 - half, which |1 - half| gives
        # exactly as |0 - half| gives half itself otherwise (a bool operand is 0 or 1).
        np.subtract(np.greater(v, _ZERO), half, out=half)
        np.abs(half, out=half)
        np.multiply(v, half, out=out)

    def gelu(x: np.ndarray) -> np.ndarray:
        v = x.reshape(-1)
        y = np.empty(v.shape, np.float32)
        if v.size == block:
            gelu_block(v, y)
        else:
            for start in range(0, v.size, block):
                gelu_block(v[start:start + block], y[start:start + block])
        return y.reshape(x.shape)

    return gelu


def _gelu_approximate_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::Gelu with approximate: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),
    each step in float32 in the C++'s order, in place."""
    inner = np.multiply(x, _GELU_CUBIC)
    inner *= x
    inner *= x
    inner += x
    inner *= _GELU_TANH_SCALE
    np.tanh(inner, out=inner)
    inner += _ONE
    y = np.multiply(x, _HALF)
    y *= inner
    return y


def _elu_f32(v):
    return np.where(v < 0, _expm1_f32(v), v).astype(np.float32)


def _gelu_approximate(node) -> bool:
    return bool(_options_field(node, "approximate", False))


_PRELU_TYPES = ("FLOAT32", "INT8", "UINT8", "INT16")


@dataclass(frozen=True)
class _PreluParams:
    input_zp: int
    alpha_zp: int
    output_zp: int
    identity: tuple[int, int]
    alpha: tuple[int, int]


def _prelu_float(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, x, x * alpha)


def _prelu_quantized(q: np.ndarray, alpha: np.ndarray, p: _PreluParams) -> np.ndarray:
    """reference_ops Prelu: x * input/output scale, or x * alpha * input*alpha/output scale."""
    v = q - p.input_zp
    positive = multiply_by_quantized_multiplier(v, *p.identity)
    negative = multiply_by_quantized_multiplier(v * (alpha - p.alpha_zp), *p.alpha)
    return np.where(v >= 0, positive, negative) + p.output_zp


def _prelu_prepare(ctx, node) -> None:
    check_inputs(node, 2)
    x, alpha, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    _check_type("PRELU", x, _PRELU_TYPES)
    check(out.type == x.type, f"PRELU: output type {out.type} differs from input type {x.type}")
    # activations.cc PreluEval: int16 inputs take an int8 alpha, the other types their own.
    alpha_type = "INT8" if x.type == "INT16" else x.type
    check(alpha.type == alpha_type, f"PRELU: a {x.type} input needs a {alpha_type} alpha, got {alpha.type}")
    shape = broadcast_shape(x.shape, alpha.shape)
    check(shape == tuple(x.shape),
          f"PRELU: alpha shape {list(alpha.shape)} broadcasts input {list(x.shape)} to {list(shape)}")
    ctx.resize_tensor(out, shape)
    if x.type == "FLOAT32":
        node.user_data = _prelu_float
        return
    _require_per_tensor_quantized("PRELU", x, alpha, out)
    rule = partial(_prelu_quantized, p=_prelu_params(x, alpha, out))
    if x.type in _EIGHT_BIT:
        node.user_data = _pair_lookup(rule, x.dtype)
    else:
        node.user_data = lambda q, a: _clamp_to(rule(q.astype(np.int64), a.astype(np.int64)), np.int16)


def _prelu_params(x, alpha, out) -> _PreluParams:
    # PreluPrepare: input_scale / output_scale and input_scale * alpha_scale / output_scale, in float.
    sx, sa, so = _F32(x.scale), _F32(alpha.scale), _F32(out.scale)
    return _PreluParams(x.zero_point, alpha.zero_point, out.zero_point, quantize_multiplier(float(sx / so)),
                        quantize_multiplier(float(sx * sa / so)))


def prelu(x: np.ndarray, alpha: np.ndarray,
          quantization: tuple[QuantParams, QuantParams, QuantParams] | None = None) -> np.ndarray:
    """PRELU (activations.cc PreluEval): x, or x * alpha (broadcast to x) below 0; with (input, alpha,
    output) `quantization`, reference_ops Prelu per value (_prelu_quantized) in the input's type."""
    a = np.broadcast_to(alpha, x.shape)
    if quantization is None:
        return _prelu_float(x, a)
    return _clamp_to(_prelu_quantized(x.astype(np.int64), a.astype(np.int64), _prelu_params(*quantization)), x.dtype)


def _prelu_reference(ctx, node) -> None:
    """`prelu` on a node: its tensors' quantization when quantized."""
    x, alpha, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    out.data = prelu(x.data, alpha.data, None if x.type == "FLOAT32" else QuantParams.of(x, alpha, out))


def _prelu_invoke(ctx, node) -> None:
    x, alpha, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    out.data = node.user_data(x.data, np.broadcast_to(alpha.data, x.shape))


@dataclass(frozen=True)
class _LeakyParams:
    input_zp: int
    output_zp: int
    identity: tuple[int, int]
    alpha: tuple[int, int]


def _leaky_relu_quantized(q: np.ndarray, p: _LeakyParams) -> np.ndarray:
    v = q - p.input_zp
    identity = multiply_by_quantized_multiplier(v, *p.identity)
    # leaky_relu.h: a negative alpha multiplies by its magnitude and negates the product.
    mult, shift = p.alpha
    scaled = np.sign(mult) * multiply_by_quantized_multiplier(v, abs(mult), shift)
    return np.where(v >= 0, identity, scaled) + p.output_zp


def _leaky_relu_prepare(ctx, node) -> None:
    x, out = _unary_prepare(ctx, node, "LEAKY_RELU", ("FLOAT32", "INT8", "UINT8", "INT16"))
    alpha = _F32(_options_field(node, "alpha", 0.0))
    if x.type == "FLOAT32":
        node.user_data = lambda v: np.where(v > 0, v, v * alpha)
        return
    _require_per_tensor_quantized("LEAKY_RELU", x, out)
    if x.type == "INT16":
        _require_zero_points("LEAKY_RELU", x, out)
    node.user_data = _lookup(_tabulate(partial(_leaky_relu_quantized, p=_leaky_params(x, out, alpha)), x.dtype))


def _leaky_params(x, out, alpha) -> _LeakyParams:
    # LeakyReluPrepare: input_scale * alpha / output_scale and input_scale / output_scale, in float.
    sx, so = _F32(x.scale), _F32(out.scale)
    return _LeakyParams(x.zero_point, out.zero_point, quantize_multiplier(float(sx / so)),
                        quantize_multiplier(float(sx * alpha / so)))


def leaky_relu(x: np.ndarray, alpha: float, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """LEAKY_RELU (activations.cc LeakyReluEval): x above 0, else x * alpha (float32); with (input,
    output) `quantization`, leaky_relu.h per value (_leaky_relu_quantized) in the input's type."""
    alpha = _F32(alpha)
    if quantization is None:
        return np.asarray(np.where(x > 0, x, x * alpha))
    return _clamp_to(_leaky_relu_quantized(x.astype(np.int64), _leaky_params(*quantization, alpha)), x.dtype)


def _leaky_relu_reference(ctx, node) -> None:
    """`leaky_relu` on a node: its alpha option and, when quantized, its tensors' quantization."""
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    out.data = leaky_relu(x.data, _options_field(node, "alpha", 0.0),
                          None if x.type == "FLOAT32" else QuantParams.of(x, out))


@dataclass(frozen=True)
class _HardSwishParams:
    input_zp: int
    output_zp: int
    output_multiplier: int  # int16 fixed point
    output_exponent: int
    reluish_multiplier: int
    reluish_exponent: int


def _downscale_to_int16(multiplier: int) -> int:
    """common.h DownScaleInt32ToInt16Multiplier: round the Q0.31 multiplier to Q0.15."""
    if multiplier >= INT32_MAX - (1 << 15):
        return 32767
    return (multiplier + (1 << 15)) >> 16


def _hard_swish_quantized(q: np.ndarray, p: _HardSwishParams) -> np.ndarray:
    """reference_ops::HardSwish (x86 runs the reference: the NEON form needs true ARM NEON)."""
    hires = (q - p.input_zp) * 128
    preshift_output = _srdhm16(hires, p.output_multiplier)
    # The "reluish" factor: x rescaled from [-3, 3] to [-1, 1] (saturating), then to [0, 1].
    reluish = hires
    if p.reluish_exponent > 0:
        reluish = _saturating_shift_left(reluish, p.reluish_exponent - 1, bits=16)
    reluish = _srdhm16(reluish, p.reluish_multiplier)
    if p.reluish_exponent > 0:
        reluish = _saturating_shift_left(reluish, 1, bits=16)
    elif p.reluish_exponent < 0:
        reluish = rounding_divide_by_pot(reluish, -p.reluish_exponent)
    reluish = (reluish + (1 << 15)) >> 1
    # SaturatingDoublingHighMul: like the rounding form but truncating, to cancel its bias.
    product = _trunc_div(reluish * preshift_output, 1 << 15)
    preshift = np.where((reluish == -32768) & (preshift_output == -32768), 32767, product)
    return rounding_divide_by_pot(preshift, -p.output_exponent) + p.output_zp


def _hard_swish_float(v: np.ndarray) -> np.ndarray:
    # optimized_ops HardSwish (NEON blocks): (x / 6) * clamp(x + 3, 0, 6) in float32.
    return (v * _F32(1.0 / 6.0)) * np.minimum(_F32(6), np.maximum(_F32(0), v + _F32(3)))


def _hard_swish_prepare(ctx, node) -> None:
    x, out = _unary_prepare(ctx, node, "HARD_SWISH", ("FLOAT32", *_EIGHT_BIT))
    if x.type == "FLOAT32":
        node.user_data = _hard_swish_float
        return
    _require_per_tensor_quantized("HARD_SWISH", x, out)
    node.user_data = _lookup(_tabulate(partial(_hard_swish_quantized, p=_hard_swish_params(x, out)), x.dtype))


def _hard_swish_params(x, out) -> _HardSwishParams:
    # HardSwishPrepare: the input on a 128x finer scale, rescaled to the output and to [-3, 3].
    hires = _F32(1.0 / 128.0) * _F32(x.scale)
    out_mult, out_exp = quantize_multiplier(float(hires / _F32(out.scale)))
    check(out_exp <= 0, f"HARD_SWISH: input scale {x.scale} is too large for output scale {out.scale}")
    relu_mult, relu_exp = quantize_multiplier(float(hires / _F32(3.0 / 32768.0)))
    return _HardSwishParams(x.zero_point, out.zero_point, _downscale_to_int16(out_mult), out_exp,
                            _downscale_to_int16(relu_mult), relu_exp)


def hard_swish(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """HARD_SWISH (activations.cc HardSwishEval): x * relu6(x + 3) / 6 in float32; 8-bit with (input,
    output) `quantization`, reference_ops::HardSwish per value (_hard_swish_quantized)."""
    if quantization is None:
        return np.asarray(_hard_swish_float(x))
    return _clamp_to(_hard_swish_quantized(x.astype(np.int64), _hard_swish_params(*quantization)), x.dtype)


def elu(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """ELU (activations.cc EluEval): x above 0, else expm1(x), in float32; int8 with (input, output)
    `quantization`, LUTPopulate's table of that transform (math.lut_values)."""
    return lut_values(_elu_f32, _elu_f32, x, quantization)


def gelu(x: np.ndarray, approximate: bool = False,
         quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """GELU (gelu.cc): float32 reference_ops::Gelu, 0.5 * x * erfc(-x / sqrt 2) (erfc from erfcc,
    gelu_float_for) or its tanh form when `approximate`; 8/16-bit with (input, output)
    `quantization`, LUTPopulate's table of gelu.h's GeluTransform(Approximate) (math.lut_values)."""
    float_fn = _gelu_approximate_float if approximate else gelu_float_for(x.size)
    return lut_values(float_fn, _gelu_approximate_transform if approximate else _gelu_transform, x, quantization)


def _gelu_node(ctx, node) -> None:
    """`gelu` on a node: its approximate option and, when quantized, its tensors' quantization."""
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    out.data = gelu(x.data, _gelu_approximate(node), None if x.type == "FLOAT32" else QuantParams.of(x, out))


# ELU and GELU: float32 computed directly, quantized through LUTPopulate's table (math.py's LUT ops).
_LUT_OPS = (
    _LutOp("ELU", ("FLOAT32", "INT8"), lambda node, x: _elu_f32, lambda node, out: _elu_f32, False),
    _LutOp("GELU", ("FLOAT32", "INT8", "UINT8", "INT16"),
           lambda node, x: _gelu_approximate_float if _gelu_approximate(node) else gelu_float_for(math.prod(x.shape)),
           lambda node, out: _gelu_approximate_transform if _gelu_approximate(node) else _gelu_transform, False),
)


def register(resolver) -> None:
    for op in ("RELU", "RELU6"):
        # v1 float, v2 int8/uint8, v3 int16 (zero points 0).
        relu = Registration(prepare=_relu_prepare(op), invoke=run_plan, reference=_relu_node(op),
                            work=work.elementwise)
        resolver.add_builtin(op, relu, 1, 3)
    for op, reference in (("LOGISTIC", logistic), ("TANH", tanh)):
        # v1 float/uint8, v2 int8; v3 (int16 fixed point) is not implemented.
        resolver.add_builtin(op, Registration(prepare=_lut_prepare(op), invoke=run_plan,
                                              reference=unary_node(reference, _EIGHT_BIT),
                                              work=work.lookup_if_quantized), 1, 2)
    # PRELU, HARD_SWISH, ELU have only version 1 (register.cc).
    prelu = Registration(prepare=_prelu_prepare, invoke=_prelu_invoke, reference=_prelu_reference,
                         work=work.elementwise)
    resolver.add_builtin("PRELU", prelu, 1, 1)
    # LEAKY_RELU: v2 adds int16.
    resolver.add_builtin("LEAKY_RELU", _unary(_leaky_relu_prepare, work.elementwise, _leaky_relu_reference), 1, 2)
    resolver.add_builtin("HARD_SWISH", _unary(_hard_swish_prepare, work.elementwise, unary_node(hard_swish)), 1, 1)
    # ELU: v1 only. GELU: v2 int8/uint8; v3 (float16) is not implemented.
    versions = {"ELU": 1, "GELU": 2}
    references = {"ELU": unary_node(elu), "GELU": _gelu_node}
    for spec in _LUT_OPS:
        # 8-bit ELU and GELU read a table, as TFLite's LUTPopulate kernels do.
        resolver.add_builtin(spec.name, _unary(_lut_op_prepare(spec), work.lookup_if_quantized,
                                               references[spec.name]), 1, versions[spec.name])
