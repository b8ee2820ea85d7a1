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

import numpy as np

from runtime.kernels.common import check, check_inputs, integer_domain, store_plan, table_index
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


def _run_plan(ctx, node) -> None:
    """Invoke the closure that prepare specialized for this node."""
    node.user_data()


def _relu_range(op: str, out) -> tuple[int, int]:
    """QuantizedReluX: zero_point + (int)roundf(limit / scale) in float, within the type's range."""
    info = np.iinfo(out.dtype)
    act_min, act_max = _RELU_LIMITS[op]
    scale = _F32(out.scale)
    lo = max(int(info.min), out.zero_point + int(cast_to_int32(tflite_round(_F32(act_min) / scale))))
    if act_max is None:
        return lo, int(info.max)
    return lo, min(int(info.max), out.zero_point + int(cast_to_int32(tflite_round(_F32(act_max) / scale))))


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


# Float TANH/LOGISTIC: LiteRT's optimized kernels evaluate Eigen's float32 approximations, so
# float32 NumPy (a few ulp from the exact value, like Eigen's) stays well inside the float bound.
def _float_tanh(x, out):
    def tanh() -> None:
        out.data = np.tanh(x.data)

    return tanh


def _float_logistic(x, out):
    """1 / (1 + exp(-x)) in float32, in place (exp overflows to inf for x < -88: the result is 0)."""
    one = np.asarray(_F32(1))  # a 0-d operand: no scalar conversion per call

    def logistic() -> np.ndarray:
        y = np.negative(x.data)
        np.exp(y, out=y)
        np.add(y, one, out=y)
        return np.reciprocal(y, out=y)

    return store_plan(out, logistic)


# -- SOFTMAX ---------------------------------------------------------------------------------

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
    _require_quantized("SOFTMAX", x, out)
    if x.type == "INT8" and out.type == "INT8":
        check(out.zero_point == -128, f"SOFTMAX: INT8 output zero point must be -128, got {out.zero_point}")
        check(abs(float(out.scale) - 1.0 / 256) <= 0.001 / 256,
              f"SOFTMAX: INT8 output scale must be 1/256, got {out.scale}")
    # PopulateSoftmaxLookupTable: table[255 - d] = expf(scale * d) with scale = -input_scale * beta.
    scale = -_F32(x.scale) * beta
    table = _f32_exp(scale * np.arange(256, dtype=np.float32))
    node.user_data = _softmax_quantized(x, out, table)


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


def register(resolver) -> None:
    for op in ("RELU", "RELU6"):
        # v1 float, v2 int8/uint8, v3 int16 (zero points 0).
        resolver.add_builtin(op, Registration(prepare=_relu_prepare(op), invoke=_run_plan), 1, 3)
    for op in ("LOGISTIC", "TANH"):
        # v1 float/uint8, v2 int8; v3 (int16 fixed point) is not implemented.
        resolver.add_builtin(op, Registration(prepare=_lut_prepare(op), invoke=_run_plan), 1, 2)
    # v1 float/uint8, v2 int8; v3 (int16) and v4 (float16) are not implemented.
    resolver.add_builtin("SOFTMAX", Registration(prepare=_softmax_prepare, invoke=_run_plan), 1, 2)
