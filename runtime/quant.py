"""TFLite's fixed-point arithmetic, vectorized over NumPy int64 arrays.

The rules follow tensorflow/lite/kernels/internal/quantization_util.cc and
common.h (gemmlowp's fixedpoint). Every function accepts scalars or arrays;
intermediate values are carried in int64 so that the 32x32->64 products of
the C++ code are exact.
"""

from __future__ import annotations

import math

import numpy as np

from accelsim.runtime.errors import KernelError

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

_ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")


def tflite_round(x):
    """std::round / TfLiteRound: halves round away from zero (NumPy rounds to even)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_multiplier(real_multiplier: float) -> tuple[int, int]:
    """QuantizeMultiplier: real = q * 2**(shift - 31) with q in [2**30, 2**31).

    Rule (quantization_util.cc): frexp, then q = round(fraction * 2**31) with
    round-half-away; q == 2**31 becomes 2**30 with shift + 1; shift < -31 means
    every bit would be shifted out, so the multiplier is 0.
    """
    if real_multiplier == 0.0:
        return 0, 0
    fraction, shift = math.frexp(real_multiplier)
    q = int(tflite_round(fraction * (1 << 31)))
    if q == (1 << 31):
        q //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q, shift


def quantize_multipliers(real_multipliers) -> tuple[np.ndarray, np.ndarray]:
    """quantize_multiplier over an array (per-channel multipliers)."""
    flat = np.asarray(real_multipliers, dtype=np.float64).reshape(-1)
    pairs = [quantize_multiplier(float(m)) for m in flat]
    mult = np.array([p[0] for p in pairs], dtype=np.int64)
    shift = np.array([p[1] for p in pairs], dtype=np.int64)
    return mult, shift


def _trunc_div_pow2_31(v):
    """C++ integer division by 2**31 (truncates toward zero)."""
    return np.where(v >= 0, v >> 31, -((-v) >> 31))


def saturating_rounding_doubling_high_mul(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul for int32 operands held in int64."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    high = _trunc_div_pow2_31(ab + nudge)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    return np.where(overflow, INT32_MAX, high)


def rounding_divide_by_pot(x, exponent):
    """gemmlowp RoundingDivideByPOT: x / 2**exponent rounding half away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier, TFLite's default (double-rounding) form.

    left shift first (positive shift), then the rounding doubling high multiply,
    then a rounding right shift (negative shift), as in common.h.
    """
    x = np.asarray(x, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    # The C++ multiplies in int32 (x * (1 << left_shift)); wrap the same way.
    shifted = wrap32(x << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right)


def wrap32(v) -> np.ndarray:
    """Two's-complement wrap to int32 (a C++ int32 result that overflowed), as int64."""
    return ((np.asarray(v, dtype=np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def trunc_div(a, d: int) -> np.ndarray:
    """C++ integer division by a positive constant (truncates toward zero)."""
    a = np.asarray(a, dtype=np.int64)
    return np.where(a >= 0, a // d, -((-a) // d))


def saturating_shift_left(x, amount: int, bits: int = 32) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT with a positive exponent (Rescale to fewer integer
    bits): x << amount, saturated to a `bits`-wide signed integer."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.clip(np.asarray(x, dtype=np.int64) << amount, lo, hi)


def rounding_half_sum(a, b) -> np.ndarray:
    """gemmlowp RoundingHalfSum: (a + b) / 2 rounded half away from zero."""
    s = np.asarray(a, dtype=np.int64) + b
    return trunc_div(s + np.where(s >= 0, 1, -1), 2)


def one_over_one_plus_x(a) -> np.ndarray:
    """gemmlowp one_over_one_plus_x_for_x_in_0_1: Newton-Raphson 1/(1+a), a and result Q0.31."""
    srdhm = saturating_rounding_doubling_high_mul
    half_denominator = rounding_half_sum(a, INT32_MAX)
    # Q2.29 constants 48/17 and -32/17; F2::One() is 1 << 29.
    x = 1515870810 + srdhm(half_denominator, -1010580540)
    for _ in range(3):
        one_minus = (1 << 29) - srdhm(half_denominator, x)
        x = x + saturating_shift_left(srdhm(x, one_minus), 2)
    return saturating_shift_left(x, 1)


def clz32(x) -> np.ndarray:
    """Count leading zeros of non-negative values below 2**32 (32 for zero)."""
    x = np.asarray(x, dtype=np.int64)
    return np.where(x == 0, 32, 32 - np.frexp(x.astype(np.float64))[1])


def clrsb32(x) -> np.ndarray:
    """GCC __builtin_clrsb on int32 (CountLeadingSignBits): 31 for 0 and -1."""
    x = np.asarray(x, dtype=np.int64)
    return clz32(np.where(x < 0, ~x, x)) - 1


def srdhm16(a, b) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul for int16 operands held in int64."""
    ab = np.asarray(a, dtype=np.int64) * b
    high = trunc_div(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 1 << 15)
    return np.where((np.asarray(a) == -32768) & (b == -32768), 32767, high)


def rounding_divide_by_pot_x86(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT on int32 as x86 executes it for any exponent: the mask is
    (1 << e) - 1 truncated to 32 bits and the arithmetic shift count is taken mod 32."""
    mask = wrap32((np.int64(1) << np.clip(exponent, 0, 62)) - 1)
    threshold = (mask >> 1) + (x < 0)
    return (x >> (exponent & 31)) + ((x & mask) > threshold)


def dtype_range(dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def activation_range_quantized(activation: str, scale: float, zero_point: int, dtype):
    """CalculateActivationRangeQuantized: the fused activation as a clamp in the output's units."""
    qmin, qmax = dtype_range(dtype)

    def q(v):
        # kernel_util.cc Quantize: the division is float32 (it changes the clamp for some scales),
        # and the rounded value must fit int32 (TF_LITE_ENSURE there).
        rounded = float(tflite_round(np.float32(v) / np.float32(scale)))
        if not INT32_MIN <= rounded <= INT32_MAX:
            raise KernelError(f"activation limit {v} overflows int32 at output scale {scale}")
        return zero_point + int(rounded)

    if activation == "RELU":
        return max(qmin, q(0.0)), qmax
    if activation == "RELU6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if activation == "RELU_N1_TO_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    # CalculateActivationRangeQuantizedImpl: any other activation (NONE, TANH, SIGN_BIT) clamps
    # to the type's range only.
    return qmin, qmax


def activation_name(code) -> str:
    """The ActivationFunctionType name for an options field value."""
    code = int(code)
    if not 0 <= code < len(_ACTIVATIONS):
        raise ValueError(f"unknown fused activation function code {code}")
    return _ACTIVATIONS[code]


def apply_float_activation(x: np.ndarray, activation) -> np.ndarray:
    """ActivationFunctionWithMinMax for float outputs."""
    name = activation if isinstance(activation, str) else activation_name(activation)
    if name == "NONE":
        return x
    if name == "RELU":
        return np.maximum(x, 0)
    if name == "RELU6":
        return np.clip(x, 0, 6)
    if name == "RELU_N1_TO_1":
        return np.clip(x, -1, 1)
    if name == "TANH":
        return np.tanh(x)
    if name == "SIGN_BIT":
        return np.signbit(x).astype(x.dtype)
    raise ValueError(f"unknown fused activation {name}")


def multiply_by_quantized_multiplier_half_up(x, multiplier, shift):
    """The x86 optimized kernels' form: two roundings, each half-up (toward +inf), not away from zero.

    ruy's AVX2 8-bit kernel (kernel_avx2_fma.cc, used by LiteRT's int8/uint8 CONV_2D and
    FULLY_CONNECTED on x86) computes ((x << left) * q + 2**30) >> 31, then a rounding right shift
    (v + 2**(right - 1)) >> right; a sum that would overflow int32 becomes 2**(31 - right). LiteRT's
    x86 depthwise output stage matches it bit for bit (measured against ai-edge-litert 2.3.0).
    """
    x = np.asarray(x, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    high = (wrap32(x << left) * np.asarray(multiplier, dtype=np.int64) + (1 << 30)) >> 31
    nudge = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)
    return np.where(high > INT32_MAX - nudge, np.int64(1) << (31 - right), (high + nudge) >> right)


def cast_to_int32(x) -> np.ndarray:
    """static_cast<int32_t> of a float as x86 computes it (cvttss2si/cvttsd2si): truncation
    toward zero, and INT32_MIN for NaN, infinities and values outside the int32 range."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ok = (x > -(2.0**31) - 1) & (x < 2.0**31)  # False for NaN
    return np.where(ok, np.trunc(np.where(ok, x, 0.0)), INT32_MIN).astype(np.int64)


def multiply_by_quantized_multiplier_int64(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier(int64_t x, ...) (common.cc), used by the int16 kernels' int64 sums.

    The multiplier is first rounded to 16 bits (q + 2**15) >> 16 (0x7FFF from 0x7FFF0000 up), then
    one round-half-up shift: (x * q16 + 2**(14 - shift)) >> (15 - shift).
    """
    x = np.asarray(x, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - np.asarray(shift, dtype=np.int64)
    return (x * reduced + (np.int64(1) << (total - 1))) >> total


def inv_sqrt_quantized_multiplier_exp(v) -> tuple[np.ndarray, np.ndarray]:
    """GetInvSqrtQuantizedMultiplierExp(v, kReverseShift) (common.h) for int32 v >= 0, elementwise.

    1/sqrt(v) as (multiplier, shift) with shift <= 0 (a right shift): v is scaled by powers of 4 into
    [2**27, 2**29), five Newton-Raphson steps x <- 1.5x - (v/2)x^3 run in gemmlowp's Q3.28, and the
    result is multiplied by sqrt(2)/2. v <= 1 (0 included) gives (INT32_MAX, 0).
    """
    v = np.asarray(v, dtype=np.int64)
    small = v <= 1
    v = np.maximum(v, 2)
    big = v >= (1 << 29)  # an int32 needs at most one division by 4 to get below 2**29
    shift = 11 + big.astype(np.int64)
    v = np.where(big, v // 4, v)
    clz = 32 - np.frexp(v.astype(np.float64))[1]  # exact: v < 2**29
    pairs = (clz - 1) // 2 - 1
    shift = shift - pairs
    v = v << (2 * pairs)
    srdhm = saturating_rounding_doubling_high_mul
    half_input = rounding_divide_by_pot(v >> 1, 1)
    x = np.full(v.shape, 1 << 28, dtype=np.int64)  # 1.0 in Q3.28
    for _ in range(5):
        x3 = saturating_shift_left(srdhm(srdhm(x, x), x), 6)
        x = saturating_shift_left(wrap32(srdhm(3 << 27, x) - srdhm(half_input, x3)), 3)
    x = srdhm(x, 1518500250)  # sqrt(2)/2 in Q0.31
    x = np.where(shift < 0, wrap32(x << np.maximum(-shift, 0)), x)
    shift = -np.maximum(shift, 0)
    return np.where(small, INT32_MAX, x), np.where(small, 0, shift)
