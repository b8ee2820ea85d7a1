"""Activations: RELU, RELU6, LOGISTIC, TANH, SOFTMAX (float32 and 8-bit quantized, int16 ReLUs).

The quantized forms follow LiteRT's optimized builtin kernels (activations.cc):
RELU/RELU6 requantize with MultiplyByQuantizedMultiplier (QuantizedReluX),
LOGISTIC/TANH look values up in a 256-entry table built in float (LUTPopulate),
and SOFTMAX scales an exp table built with expf (PopulateSoftmaxLookupTable; on x86
LiteRT takes this float-table path, not the uint16 LUT of aarch64). The unary ops are
tabulated over every input value in prepare. expf/tanhf are computed in double and
rounded once; that matched glibc's tables in every one of 6000 random parameter sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runtime.kernels.common import check, check_inputs, integer_domain, table_index
from runtime.quant import cast_to_int32, multiply_by_quantized_multiplier, quantize_multiplier, tflite_round
from runtime.resolver import Registration

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
    """QuantizedReluX for every input value: requantize with MultiplyByQuantizedMultiplier, then clamp."""
    # ReluPrepare: the multiplier is input_scale / output_scale computed in float.
    mult, shift = quantize_multiplier(float(_F32(x.scale) / _F32(out.scale)))
    q = integer_domain(x.dtype).astype(np.int64)
    y = multiply_by_quantized_multiplier(q - x.zero_point, mult, shift) + out.zero_point
    return np.clip(y, *_relu_range(op, out)).astype(out.dtype)


def _relu_prepare(op: str):
    def prepare(ctx, node) -> None:
        x, out = _same_type_prepare(ctx, node, op)
        check(x.type in _RELU_TYPES, f"{op}: type {x.type} is not supported (supported: {_RELU_TYPES})")
        node.user_data = None
        if x.type == "FLOAT32":
            return
        _require_quantized(op, x, out)
        if x.type == "INT16":
            check(x.zero_point == 0 and out.zero_point == 0, f"{op}: INT16 requires zero points of 0")
        node.user_data = _relu_table(op, x, out)

    return prepare


def _relu_range(op: str, out) -> tuple[int, int]:
    """QuantizedReluX: zero_point + (int)roundf(limit / scale) in float, within the type's range."""
    info = np.iinfo(out.dtype)
    act_min, act_max = _RELU_LIMITS[op]
    scale = _F32(out.scale)
    lo = max(int(info.min), out.zero_point + int(cast_to_int32(tflite_round(_F32(act_min) / scale))))
    if act_max is None:
        return lo, int(info.max)
    return lo, min(int(info.max), out.zero_point + int(cast_to_int32(tflite_round(_F32(act_max) / scale))))


def _relu_invoke(op: str):
    float_hi = _RELU_LIMITS[op][1]

    def invoke(ctx, node) -> None:
        x, out = ctx.input(node, 0), ctx.output(node, 0)
        if node.user_data is None:
            out.data = np.maximum(x.data, _F32(0)) if float_hi is None else x.data.clip(_F32(0), _F32(float_hi))
        else:
            out.data = np.take(node.user_data, table_index(x.data))

    return invoke


# -- LOGISTIC, TANH --------------------------------------------------------------------------


def _lut_populate(transform, in_scale: float, in_zp: int, out_scale: float, out_zp: int, dtype) -> np.ndarray:
    """LUTPopulateInt8, reproduced in float32, over `integer_domain(dtype)`."""
    info = np.iinfo(dtype)
    q = integer_domain(dtype).astype(np.int64)
    dequantized = _F32(in_scale) * (q - in_zp).astype(np.float32)
    inverse_scale = _F32(1) / _F32(out_scale)
    rescaled = tflite_round(transform(dequantized) * inverse_scale).astype(np.float32)
    quantized = cast_to_int32(rescaled + _F32(out_zp))
    return np.clip(quantized, info.min, info.max).astype(dtype)


_TRANSFORMS = {"LOGISTIC": _f32_logistic, "TANH": _f32_tanh}


def _lut_prepare(op: str):
    def prepare(ctx, node) -> None:
        x, out = _same_type_prepare(ctx, node, op)
        supported = ("FLOAT32", *_EIGHT_BIT)
        check(x.type in supported, f"{op}: type {x.type} is not supported (supported: {supported})")
        node.user_data = None
        if x.type == "FLOAT32":
            return
        _require_quantized(op, x, out)
        if op == "LOGISTIC":
            # SigmoidPrepare: the output must cover [0, 1) with scale exactly 1/256.
            check(float(_F32(out.scale)) == 1.0 / 256, f"LOGISTIC: output scale must be 1/256, got {out.scale}")
        node.user_data = _lut_populate(_TRANSFORMS[op], x.scale, x.zero_point, out.scale, out.zero_point, x.dtype)

    return prepare


def _lut_invoke(op: str):
    def invoke(ctx, node) -> None:
        x, out = ctx.input(node, 0), ctx.output(node, 0)
        if node.user_data is None:
            y = x.data.astype(np.float64)
            if op == "TANH":
                np.tanh(y, out=y)
            else:  # 0.5 * (1 + tanh(0.5 * x)), in place
                y *= 0.5
                np.tanh(y, out=y)
                y += 1.0
                y *= 0.5
            out.data = y.astype(np.float32)
            return
        out.data = np.take(node.user_data, table_index(x.data))

    return invoke


# -- SOFTMAX ---------------------------------------------------------------------------------

_SOFTMAX_OUTPUTS = {"INT8": ("INT8", "INT16"), "UINT8": ("UINT8", "INT16")}


@dataclass(frozen=True)
class _SoftmaxTable:
    exp_table: np.ndarray  # float32 expf(-input_scale * beta * d) for d = max - q in [0, 255]
    out_scale: np.float32
    out_zero_point: int
    round_up_half: bool  # uint8 output on x86: (int)(p + 0.5f) instead of std::round
    # Every table value in [0, 1] and 1 / out_scale small: each probability times 1 / out_scale
    # lies in [0, 2**22], where the int32 cast needs no NaN/overflow handling and float32 holds
    # the rounded value plus the zero point exactly.
    bounded: bool


def _softmax_prepare(ctx, node) -> None:
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(len(x.shape) >= 1, "SOFTMAX: the input must have at least one dimension")
    beta = _F32(node.options.beta)
    ctx.resize_tensor(out, x.shape)
    if x.type == "FLOAT32":
        check(out.type == "FLOAT32", f"SOFTMAX: FLOAT32 input needs a FLOAT32 output, not {out.type}")
        node.user_data = beta
        return
    allowed = _SOFTMAX_OUTPUTS.get(x.type)
    check(allowed is not None, f"SOFTMAX: input type {x.type} is not supported (supported: FLOAT32, INT8, UINT8)")
    check(out.type in allowed, f"SOFTMAX: {x.type} input needs an output of type {' or '.join(allowed)}, "
                               f"not {out.type}")
    _require_quantized("SOFTMAX", x, out)
    if x.type == "INT8" and out.type == "INT8":
        check(out.zero_point == -128, f"SOFTMAX: INT8 output zero point must be -128, got {out.zero_point}")
        check(abs(float(out.scale) - 1.0 / 256) <= 0.001 / 256,
              f"SOFTMAX: INT8 output scale must be 1/256, got {out.scale}")
    # PopulateSoftmaxLookupTable: table[255 - d] = expf(scale * d) with scale = -input_scale * beta.
    scale = -_F32(x.scale) * beta
    table = _f32_exp(scale * np.arange(256, dtype=np.float32))
    bounded = bool(np.all((table >= 0) & (table <= 1))) and float(_F32(1) / _F32(out.scale)) < 2.0**21
    node.user_data = _SoftmaxTable(table, _F32(out.scale), out.zero_point, out.type == "UINT8", bounded)


def _softmax_float(x: np.ndarray, beta: np.float32) -> np.ndarray:
    """(x - max) * beta in float as SoftmaxImpl does, then exp and normalization in double."""
    with np.errstate(invalid="ignore", over="ignore"):
        z = (x - x.max(axis=-1, keepdims=True)) * beta
        e = np.exp(z.astype(np.float64))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def _softmax_quantized(q: np.ndarray, p: _SoftmaxTable, dtype) -> np.ndarray:
    """optimized_ops::Softmax for 8-bit input (the float-table path LiteRT uses on x86)."""
    e = p.exp_table[np.subtract(q.max(axis=-1, keepdims=True), q, dtype=np.int16)]
    # The C++ sums the row left to right in float; cumsum keeps that order.
    sum_exp = np.cumsum(e, axis=-1, dtype=np.float32)[..., -1:]
    inv_sum_exp = _F32(1) / (sum_exp * p.out_scale)
    prob = e * inv_sum_exp
    info = np.iinfo(dtype)
    if p.bounded:
        # prob >= 0: std::round is floor(prob + 0.5), exact in double for a float prob.
        rounded = np.floor(prob + _F32(0.5)) if p.round_up_half else np.floor(np.add(prob, 0.5, dtype=np.float64))
        rounded += p.out_zero_point
        return rounded.clip(info.min, info.max, out=rounded).astype(dtype)
    rounded = np.floor(prob + _F32(0.5)) if p.round_up_half else tflite_round(prob)
    return np.clip(cast_to_int32(rounded) + p.out_zero_point, info.min, info.max).astype(dtype)


def _softmax_invoke(ctx, node) -> None:
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    if x.type == "FLOAT32":
        out.data = _softmax_float(x.data, node.user_data)
    else:
        out.data = _softmax_quantized(x.data, node.user_data, out.dtype)


def register(resolver) -> None:
    for op in ("RELU", "RELU6"):
        # v1 float, v2 int8/uint8, v3 int16 (zero points 0).
        resolver.add_builtin(op, Registration(prepare=_relu_prepare(op), invoke=_relu_invoke(op)), 1, 3)
    for op in ("LOGISTIC", "TANH"):
        # v1 float/uint8, v2 int8; v3 (int16 fixed point) is not implemented.
        resolver.add_builtin(op, Registration(prepare=_lut_prepare(op), invoke=_lut_invoke(op)), 1, 2)
    # v1 float/uint8, v2 int8; v3 (int16) and v4 (float16) are not implemented.
    resolver.add_builtin("SOFTMAX", Registration(prepare=_softmax_prepare, invoke=_softmax_invoke), 1, 2)
