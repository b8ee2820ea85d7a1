"""Activations: RELU, RELU6, LOGISTIC, TANH, ELU, PRELU, LEAKY_RELU, HARD_SWISH (GELU is in gelu.py).

The quantized forms follow LiteRT's optimized builtin kernels (activations.cc):
RELU/RELU6 requantize with MultiplyByQuantizedMultiplier (QuantizedReluX),
LOGISTIC/TANH look values up in a 256-entry table built in float (LUTPopulate);
ELU, PRELU, LEAKY_RELU and HARD_SWISH use common.py's tables and LUTs.
The unary ops are tabulated over every input value in prepare. expf/tanhf are computed in double and
rounded once; that matched glibc's tables in every one of 6000 random parameter sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    EIGHT_BIT,
    LutOp,
    QuantParams,
    broadcast_shape,
    check,
    check_inputs,
    check_type,
    clamp_to,
    expf,
    in_float64,
    integer_domain,
    lookup,
    lut_apply,
    lut_op_prepare,
    lut_populate,
    lut_values,
    options_field,
    pair_lookup,
    require_per_tensor_quantized,
    require_positive_scales,
    require_zero_points,
    run_plan,
    store_plan,
    table_index,
    tabulate,
    unary_node,
    unary_plan,
    unary_prepare,
)
from accelsim.runtime.quant import (
    INT32_MAX,
    cast_to_int32,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
    saturating_shift_left,
    srdhm16,
    tflite_round,
    trunc_div,
)
from accelsim.runtime.registration import Registration

_F32 = np.float32


def _f32_tanh(x: np.ndarray) -> np.ndarray:
    """tanhf, correctly rounded (computed in double, rounded once to float)."""
    return np.tanh(np.asarray(x, dtype=np.float64)).astype(np.float32)


def _f32_logistic(x: np.ndarray) -> np.ndarray:
    """The LOGISTIC table's transform: 1.0f / (1.0f + expf(-x)), every step in float."""
    return _F32(1) / (_F32(1) + expf(-x))


def _same_type_prepare(ctx, node, op: str):
    """GenericPrepare: one input, one output of the same type and shape."""
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(x.type == out.type, f"{op}: output type {out.type} differs from input type {x.type}")
    ctx.resize_tensor(out, x.shape)
    return x, out


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
        require_positive_scales(op, x, out)
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
        supported = ("FLOAT32", *EIGHT_BIT)
        check(x.type in supported, f"{op}: type {x.type} is not supported (supported: {supported})")
        if x.type == "FLOAT32":
            node.user_data = _float_tanh(x, out) if op == "TANH" else _float_logistic(x, out)
            return
        require_positive_scales(op, x, out)
        if op == "LOGISTIC":
            # SigmoidPrepare: the output must cover [0, 1) with scale exactly 1/256.
            check(float(_F32(out.scale)) == 1.0 / 256, f"LOGISTIC: output scale must be 1/256, got {out.scale}")
        table = lut_populate(_TRANSFORMS[op], x.scale, x.zero_point, out.scale, out.zero_point, x.dtype)
        node.user_data = _table_lookup(x, out, table)

    return prepare


def tanh(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """TANH (activations.cc TanhEval): float32 tanh; 8-bit with (input, output) `quantization`,
    common.lut_apply of tanhf (LUTPopulate's arithmetic) on the values themselves."""
    if quantization is None:
        return np.tanh(x)
    qin, qout = quantization
    return lut_apply(_f32_tanh, x, qin.scale, qin.zero_point, qout.scale, qout.zero_point, x.dtype)


def logistic(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """LOGISTIC (activations.cc SigmoidEval): float32 1 / (1 + exp(-x)); 8-bit with (input, output)
    `quantization`, common.lut_apply of 1.0f / (1.0f + expf(-x)) on the values themselves."""
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


# -- ELU, PRELU, LEAKY_RELU, HARD_SWISH (GELU is in gelu.py) -------------------------------------------------

def _expm1_f32(v):
    return in_float64(np.expm1, v)


def _elu_f32(v):
    return np.where(v < 0, _expm1_f32(v), v).astype(np.float32)


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
    check_type("PRELU", x, _PRELU_TYPES)
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
    require_per_tensor_quantized("PRELU", x, alpha, out)
    rule = partial(_prelu_quantized, p=_prelu_params(x, alpha, out))
    if x.type in EIGHT_BIT:
        node.user_data = pair_lookup(rule, x.dtype)
    else:
        node.user_data = lambda q, a: clamp_to(rule(q.astype(np.int64), a.astype(np.int64)), np.int16)


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
    return clamp_to(_prelu_quantized(x.astype(np.int64), a.astype(np.int64), _prelu_params(*quantization)), x.dtype)


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
    x, out = unary_prepare(ctx, node, "LEAKY_RELU", ("FLOAT32", "INT8", "UINT8", "INT16"))
    alpha = _F32(options_field(node, "alpha", 0.0))
    if x.type == "FLOAT32":
        node.user_data = lambda v: np.where(v > 0, v, v * alpha)
        return
    require_per_tensor_quantized("LEAKY_RELU", x, out)
    if x.type == "INT16":
        require_zero_points("LEAKY_RELU", x, out)
    node.user_data = lookup(tabulate(partial(_leaky_relu_quantized, p=_leaky_params(x, out, alpha)), x.dtype))


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
    return clamp_to(_leaky_relu_quantized(x.astype(np.int64), _leaky_params(*quantization, alpha)), x.dtype)


def _leaky_relu_reference(ctx, node) -> None:
    """`leaky_relu` on a node: its alpha option and, when quantized, its tensors' quantization."""
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    out.data = leaky_relu(x.data, options_field(node, "alpha", 0.0),
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
    preshift_output = srdhm16(hires, p.output_multiplier)
    # The "reluish" factor: x rescaled from [-3, 3] to [-1, 1] (saturating), then to [0, 1].
    reluish = hires
    if p.reluish_exponent > 0:
        reluish = saturating_shift_left(reluish, p.reluish_exponent - 1, bits=16)
    reluish = srdhm16(reluish, p.reluish_multiplier)
    if p.reluish_exponent > 0:
        reluish = saturating_shift_left(reluish, 1, bits=16)
    elif p.reluish_exponent < 0:
        reluish = rounding_divide_by_pot(reluish, -p.reluish_exponent)
    reluish = (reluish + (1 << 15)) >> 1
    # SaturatingDoublingHighMul: like the rounding form but truncating, to cancel its bias.
    product = trunc_div(reluish * preshift_output, 1 << 15)
    preshift = np.where((reluish == -32768) & (preshift_output == -32768), 32767, product)
    return rounding_divide_by_pot(preshift, -p.output_exponent) + p.output_zp


def _hard_swish_float(v: np.ndarray) -> np.ndarray:
    # optimized_ops HardSwish (NEON blocks): (x / 6) * clamp(x + 3, 0, 6) in float32.
    return (v * _F32(1.0 / 6.0)) * np.minimum(_F32(6), np.maximum(_F32(0), v + _F32(3)))


def _hard_swish_prepare(ctx, node) -> None:
    x, out = unary_prepare(ctx, node, "HARD_SWISH", ("FLOAT32", *EIGHT_BIT))
    if x.type == "FLOAT32":
        node.user_data = _hard_swish_float
        return
    require_per_tensor_quantized("HARD_SWISH", x, out)
    node.user_data = lookup(tabulate(partial(_hard_swish_quantized, p=_hard_swish_params(x, out)), x.dtype))


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
    return clamp_to(_hard_swish_quantized(x.astype(np.int64), _hard_swish_params(*quantization)), x.dtype)


def elu(x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """ELU (activations.cc EluEval): x above 0, else expm1(x), in float32; int8 with (input, output)
    `quantization`, LUTPopulate's table of that transform (common.lut_values)."""
    return lut_values(_elu_f32, _elu_f32, x, quantization)


# ELU: float32 computed directly, quantized through LUTPopulate's table (common.LutOp).
_ELU = LutOp("ELU", ("FLOAT32", "INT8"), lambda node, x: _elu_f32, lambda node, out: _elu_f32, False)


def register(resolver) -> None:
    for op in ("RELU", "RELU6"):
        # v1 float, v2 int8/uint8, v3 int16 (zero points 0).
        relu = Registration(prepare=_relu_prepare(op), invoke=run_plan, reference=_relu_node(op),
                            work=work.elementwise)
        resolver.add_builtin(op, relu, 1, 3)
    for op, reference in (("LOGISTIC", logistic), ("TANH", tanh)):
        # v1 float/uint8, v2 int8; v3 (int16 fixed point) is not implemented.
        resolver.add_builtin(op, Registration(prepare=_lut_prepare(op), invoke=run_plan,
                                              reference=unary_node(reference, EIGHT_BIT),
                                              work=work.lookup_if_quantized), 1, 2)
    # PRELU, HARD_SWISH, ELU have only version 1 (register.cc).
    prelu = Registration(prepare=_prelu_prepare, invoke=_prelu_invoke, reference=_prelu_reference,
                         work=work.elementwise)
    resolver.add_builtin("PRELU", prelu, 1, 1)
    # LEAKY_RELU: v2 adds int16.
    resolver.add_builtin("LEAKY_RELU", unary_plan(_leaky_relu_prepare, work.elementwise, _leaky_relu_reference), 1, 2)
    resolver.add_builtin("HARD_SWISH", unary_plan(_hard_swish_prepare, work.elementwise, unary_node(hard_swish)), 1, 1)
    # ELU: v1 only; 8-bit ELU reads a table, as TFLite's LUTPopulate kernel does.
    resolver.add_builtin("ELU", unary_plan(lut_op_prepare(_ELU), work.lookup_if_quantized, unary_node(elu)), 1, 1)
