"""The output stage every conv-family kernel ends with: the bias, then the fused activation clamp (float) or
TFLite's fixed-point requantization (quantized), and which rounding LiteRT uses where.

`Requantizer` is the plain stage (the reference's, and the fallback of every fast path); `ExactStage` is
ruy's half-up stage with the bias folded into one exact multiply-add, and `FloatStage` the float one
with its constants tiled (both implement `Requantizer` / `finish_float` and are tested against them).
Shared with FULLY_CONNECTED, TRANSPOSE_CONV and CONV_3D.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from accelsim.runtime.kernels.common import check, fast_clip, is_known
from accelsim.runtime.quant import (
    INT32_MAX,
    activation_name,
    activation_range_quantized,
    dtype_range,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_half_up,
    quantize_multipliers,
    rounding_divide_by_pot,
)

# ---------------------------------------------------------------------------------------------
# Fused activations

_RELU_RANGES = {"RELU": (0.0, np.inf), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}
_FLT_MAX = np.finfo(np.float32).max
# kernel_util.cc CalculateActivationRange(float): the ReLU family's range, and [lowest, FLT_MAX] for
# every other activation, NONE included: LiteRT's float conv, depthwise, transpose-conv, CONV_3D and
# FULLY_CONNECTED kernels all clamp, so an overflow to +-inf comes out as +-FLT_MAX (measured).
FLOAT_RANGES = {
    "NONE": (np.float32(-_FLT_MAX), np.float32(_FLT_MAX)),
    "RELU": (np.float32(0.0), np.float32(_FLT_MAX)),
    "RELU6": (np.float32(0.0), np.float32(6.0)),
    "RELU_N1_TO_1": (np.float32(-1.0), np.float32(1.0)),
}


def fused_activation(node) -> str:
    """The node's fused activation as these kernels apply it.

    kernel_util.h CalculateActivationRange(Quantized) clamps only for the ReLU family; any other
    code (TANH, SIGN_BIT) leaves conv and FC outputs unclamped in LiteRT (measured), so it reads NONE.
    """
    name = activation_name(node.options.fused_activation_function)
    return name if name in _RELU_RANGES else "NONE"


def clamp_float(acc: np.ndarray, activation: str) -> np.ndarray:
    """acc clamped in place to FLOAT_RANGES[activation] (NaN stays NaN, as std::min/std::max leave it).

    ndarray.clip with two scalar bounds runs a vectorized loop; np.maximum/np.minimum against a scalar
    do not (measured, NumPy 2.4: 110k float32 values, clip 20 us, maximum then minimum 110 us).
    """
    lo, hi = FLOAT_RANGES[activation]
    return fast_clip(acc, lo, hi, out=acc)


def finish_float(acc: np.ndarray, bias: np.ndarray | None, activation: str) -> np.ndarray:
    """Add the bias and clamp to the activation range, in place (channels last)."""
    if bias is not None:
        acc += bias
    return clamp_float(acc, activation)

# ---------------------------------------------------------------------------------------------
# Quantized output stage: which rounding LiteRT uses where (measured against ai-edge-litert on x86)


# ruy's x86 GEMM kernels (int8/uint8 CONV_2D and FULLY_CONNECTED) round half-up twice; the
# reference kernels, which grouped convolutions fall back to, use TFLite's MultiplyByQuantizedMultiplier.
OPTIMIZED_ROUNDING = multiply_by_quantized_multiplier_half_up
REFERENCE_ROUNDING = multiply_by_quantized_multiplier


def depthwise_int8_rounding(channels: int) -> Callable:
    """The int8 depthwise output stage (optimized_ops::Quantize).

    Vector code (NEON intrinsics, emulated with SSE on x86) handles 8 channels at a time and rounds
    half-up twice; the channels % 8 left over go through the scalar MultiplyByQuantizedMultiplier.
    """
    vector = channels - channels % 8
    if vector == channels:
        return OPTIMIZED_ROUNDING

    def rounding(acc, multiplier, shift):
        head = OPTIMIZED_ROUNDING(acc[..., :vector], multiplier[:vector], shift[:vector])
        tail = REFERENCE_ROUNDING(acc[..., vector:], multiplier[vector:], shift[vector:])
        return np.concatenate([head, tail], axis=-1)

    return rounding


def _high_half_up_then_away(acc, multiplier, shift):
    """vqrdmulh (rounds half-up) then gemmlowp's RoundingDivideByPOT (half away from zero)."""
    acc = np.asarray(acc, dtype=np.int64)
    left = np.maximum(shift, 0)
    shifted = ((acc << left) + (1 << 31)) % (1 << 32) - (1 << 31)  # vmulq_n_s32 by 2**left wraps
    high = (shifted * multiplier + (1 << 30)) >> 31
    return rounding_divide_by_pot(high, np.maximum(-shift, 0))


def depthwise_uint8_rounding(out_width: int, channels: int) -> Callable:
    """The uint8 depthwise output stage (depthwiseconv_uint8.h DepthwiseConvGeneral).

    Each output row is cut into chunks of 2048 // channels pixels (the accumulator buffer); a chunk's
    values, flattened pixel-major, go through vector code 16/8/4 at a time (vqrdmulh, then a
    round-half-away shift) and the last len % 4 through the scalar MultiplyByQuantizedMultiplier.
    """
    per_chunk = max(2048 // channels, 1)
    scalar = np.zeros((out_width, channels), bool)
    for start in range(0, out_width, per_chunk):
        n = min(per_chunk, out_width - start) * channels
        scalar[start:start + per_chunk].reshape(-1)[n - n % 4:] = True

    def rounding(acc, multiplier, shift):
        vector = _high_half_up_then_away(acc, multiplier, shift)
        return np.where(scalar, REFERENCE_ROUNDING(acc, multiplier, shift), vector) if scalar.any() else vector

    return rounding


@dataclass(frozen=True)
class Requantizer:
    """int32 accumulators -> output integers: fixed-point multiply, output zero point, activation clamp."""

    multiplier: np.ndarray
    shift: np.ndarray
    zero_point: int
    act_min: int
    act_max: int
    dtype: np.dtype
    rounding: Callable
    acc_bound: float = np.inf  # a bound on |accumulator| when the weights and bias are known
    # The hot path's constants (see _half_up_in_place), derived once.
    _fast: bool = field(init=False, repr=False)
    _right: np.ndarray = field(init=False, repr=False)
    _offset: np.ndarray = field(init=False, repr=False)
    _limit: int | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        right = np.maximum(-self.shift, 0)
        nudge = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)
        fast = self.rounding is multiply_by_quantized_multiplier_half_up and not (self.shift > 0).any()
        object.__setattr__(self, "_fast", bool(fast))
        object.__setattr__(self, "_right", right)
        object.__setattr__(self, "_offset", nudge + (np.int64(self.zero_point) << right))
        # (acc * q + 2**30) >> 31 is at most |acc| + 1 (q < 2**31): past the limit only for huge sums.
        limit = int(INT32_MAX - nudge.max(initial=0))
        object.__setattr__(self, "_limit", limit if self.acc_bound + 1 > limit else None)

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        """Requantize int64 accumulators (channels last); `acc` may be overwritten."""
        if self._fast:
            return self._half_up_in_place(acc)
        y = self.rounding(acc, self.multiplier, self.shift) + self.zero_point
        return np.clip(y, self.act_min, self.act_max).astype(self.dtype)

    def _half_up_in_place(self, acc: np.ndarray) -> np.ndarray:
        """multiply_by_quantized_multiplier_half_up for right shifts, in place: the hot path.

        The output zero point rides along with the rounding nudge: (h + n + zp * 2**r) >> r equals
        ((h + n) >> r) + zp exactly.
        """
        acc *= self.multiplier
        acc += 1 << 30
        acc >>= 31
        if self._limit is not None and acc.size and acc.max() > self._limit:
            # ruy's int32 overflow case: out of reach of real accumulators, kept exact anyway.
            nudge = self._offset - (np.int64(self.zero_point) << self._right)
            y = np.where(acc > INT32_MAX - nudge, np.int64(1) << (31 - self._right), (acc + nudge) >> self._right)
            return np.clip(y + self.zero_point, self.act_min, self.act_max).astype(self.dtype)
        acc += self._offset
        acc >>= self._right
        fast_clip(acc, self.act_min, self.act_max, out=acc)  # vectorized, unlike maximum/minimum against scalars
        return acc.astype(self.dtype)

    def exact_stage(self, bias: np.ndarray | None, bounds: np.ndarray, pixels: int,
                    lift: int | None = None) -> ExactStage | None:
        """This output stage with `bias` folded in, as an ExactStage; None where it does not apply.

        bounds: per output channel, a bound on |sum((x - zp) * w)| (channel_bounds). lift: the float
        form's (see ExactStage), -min of the output type by default; ExactStage itself needs that
        default, other lifts serve callers that only read its constants (ScaledGemm).
        """
        if not self._fast or self._limit is not None or self._right.max(initial=0) > 21:
            return None
        q, right = self.multiplier, self._right
        b = np.zeros(q.size, np.int64) if bias is None else bias.astype(np.int64)
        # The float form yields the output plus `lift` (>= 0 once clamped, so truncation floors).
        if lift is None:
            lift = -int(np.iinfo(self.dtype).min)
        # The rounding terms 2**30 and 2**(30+r), and zero point + lift, over the denominator 2**(31+r).
        const = ((1 << 30) + np.where(right > 0, np.int64(1) << (30 + right), 0)
                 + (np.int64(self.zero_point + lift) << (31 + right)))
        # Python integers: the bound itself must not round.
        numerators = [(int(a) + abs(int(c))) * int(m) + abs(int(k)) for a, c, m, k in zip(bounds, b, q, const)]
        numerator = max(numerators)
        if numerator >= 1 << 62:
            return None
        # The float form's |acc * scale + offset|, from the same bounds (the right shifts are exact).
        y_bound = max(n >> (31 + int(r)) for n, r in zip(numerators, right)) + 1
        reps = row_period(pixels, q.size) // q.size
        offset = b * q + const
        if numerator < 1 << 53:
            scale = np.ldexp(q.astype(np.float64), -(31 + right))
            offset = np.ldexp(offset.astype(np.float64), -(31 + right))
            return ExactStage(np.tile(scale, reps), np.tile(offset, reps), None, self.act_min + lift,
                              self.act_max + lift, self.dtype, lift, y_bound < np.iinfo(np.int16).max)
        offset -= np.int64(lift) << (31 + right)
        shift = 31 + right
        shift = int(shift[0]) if (shift == shift[0]).all() else np.tile(shift, reps)  # a scalar shift is faster
        return ExactStage(np.tile(q, reps), np.tile(offset, reps), shift, self.act_min, self.act_max, self.dtype, 0)


@dataclass(frozen=True)
class ExactStage:
    """ruy's half-up output stage with the bias folded in: one multiply-add, a clamp and a floor.

    ruy rounds twice, h = (acc * q + 2**30) >> 31 then (h + 2**(r-1)) >> r; two floors of integer
    ratios compose into one, out = floor((acc * q + 2**30 + 2**(30+r)) / 2**(31+r)) (no 2**(30+r)
    when r = 0). Adding bias * q + zero_point * 2**(31+r) to the numerator folds in the bias and
    the output zero point. While every |numerator| < 2**53 (Requantizer.exact_stage checks that
    per channel) each product and sum is exact in float64, which NumPy computes much faster than
    int64 (no 64-bit multiply in AVX2); up to 2**62 the same numerator is formed in int64.
    The float form adds `lift` (128 for int8) so that the clamped values are >= 0: the cast to
    the unsigned type then truncates, which is the floor, and flipping the top bit maps
    unsigned v back to the signed v - 128. For large outputs whose values provably fit int16
    (`narrow`), the clamp runs on the int16 cast instead, which is cheaper than on float64 (measured):
    the cast truncates toward zero, which differs from the floor only below 0, where both clamp to
    lo >= 0.
    """

    multiplier: np.ndarray  # per channel, tiled to a row of `row_period` values: float64 q / 2**(31+r), or int64 q
    offset: np.ndarray  # float64 (bias * q + terms) / 2**(31+r), or int64 bias * q + terms, tiled
    shift: np.ndarray | int | None  # 31 + r (tiled, or one int if uniform) for the int64 form
    lo: int  # the activation clamp, plus `lift`
    hi: int
    dtype: np.dtype
    lift: int
    narrow: bool = False  # every multiply-add result (float form) lies within int16
    unsigned: np.dtype = field(init=False, repr=False)  # the unsigned type of dtype's size

    def __post_init__(self) -> None:
        object.__setattr__(self, "unsigned", np.dtype(f"u{np.dtype(self.dtype).itemsize}"))

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        """Exact accumulators (any numeric dtype, channels last, contiguous; overwritten) -> output integers."""
        rows = acc.reshape(-1, self.multiplier.size)
        if self.shift is not None:
            y = rows.astype(np.int64)
            y *= self.multiplier
            y += self.offset
            y >>= self.shift
            fast_clip(y, self.lo, self.hi, out=y)
            return y.astype(self.dtype)
        y = rows if rows.dtype == np.float64 else rows.astype(np.float64)  # faster than a mixed-type multiply
        y *= self.multiplier
        y += self.offset
        if self.narrow and y.size >= 16384:
            z = y.astype(np.int16)
            fast_clip(z, self.lo, self.hi, out=z)
            if self.lift:
                z -= self.lift
            return z.astype(self.dtype)
        fast_clip(y, self.lo, self.hi, out=y)
        if not self.lift:
            return y.astype(self.dtype)
        unsigned = y.astype(self.unsigned)
        unsigned ^= self.unsigned.type(self.lift)
        return unsigned.view(self.dtype)


def row_period(pixels: int, channels: int, target: int = 16384) -> int:
    """A row length k * channels, k dividing `pixels`, up to about `target` values.

    NumPy applies a per-channel vector much faster along long rows than along rows of a few
    channels, so per-channel constants are tiled k times and the data viewed as [-1, k * channels].
    Each row still costs about 0.25 us when one operand is broadcast (measured): the target keeps
    the row count small while a tiled float64 constant stays within 128 KiB.
    """
    k = max(1, min(pixels, target // max(channels, 1)))
    while pixels % k:
        k -= 1
    return k * channels


def channel_bounds(input_t, input_zp: int, weights: np.ndarray, axis) -> np.ndarray:
    """Per output channel, a bound on |sum((x - zp) * w)| for any input: max|x - zp| * sum|w| over `axis`."""
    lo, hi = dtype_range(input_t.dtype)
    return max(hi - input_zp, input_zp - lo) * np.abs(weights.astype(np.float64)).sum(axis=axis).reshape(-1)


@dataclass(frozen=True)
class FloatStage:
    """A float op's constant bias and fused activation, tiled along rows of `row_period` values."""

    bias: np.ndarray | None
    activation: str

    @classmethod
    def of(cls, bias_t, channels: int, pixels: int, activation: str) -> FloatStage:
        bias = read_bias(bias_t, np.float32)
        reps = row_period(pixels, channels) // channels
        return cls(None if bias is None else np.tile(bias, reps), activation)

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        """finish_float on a contiguous float32 accumulator (channels last), in place."""
        period = self.bias.size if self.bias is not None else acc.shape[-1]
        return finish_float(acc.reshape(-1, period), self.bias, self.activation)


def requantizer(op: str, input_t, filter_t, bias_t, output_t, activation: str, channels: int,
                channel_axis: int, rounding: Callable, float_product: bool = False,
                acc_bound: float = np.inf) -> Requantizer:
    """Per-channel multipliers and the activation clamp (kernel_util.cc PopulateConvolutionQuantizationParams).

    Effective scale of output channel c = input_scale * filter_scale[c] / output_scale, computed in
    double from the float32 scales; a single filter scale is broadcast over the channels. Per-channel
    scales are int8-only and must run along the weights' `channel_axis`.

    float_product: the uint8 and per-tensor FULLY_CONNECTED paths (GetQuantizedConvolutionMultipler)
    multiply input_scale * filter_scale in float32 first, and check that the bias scale matches it.
    acc_bound: a bound on |sum + bias| (see accumulator_bound), or inf.
    """
    scales = filter_t.scales
    check(scales.size in (1, channels),
          f"{op}: weights have {scales.size} scales, expected 1 or one per output channel ({channels})")
    if scales.size > 1:
        check(input_t.type == "INT8", f"{op}: per-channel quantized weights need INT8 input, got {input_t.type}")
        axis = filter_t.quantization.quantized_dimension
        check(axis == channel_axis and filter_t.shape[axis] == channels,
              f"{op}: per-channel weights must be quantized along dimension {channel_axis} "
              f"(the {channels} output channels), got quantized_dimension {axis}")
    in_scale, out_scale = input_t.scale, output_t.scale
    if float_product:
        if bias_t is not None:
            # kernel_util.cc: |input_scale * filter_scale - bias_scale| / output_scale <= 0.02, where
            # bias_scale is the tensor's legacy single scale (0 when it carries several).
            bias_scale = bias_t.scale if bias_t.scales.size == 1 else 0.0
            expected = in_scale * float(scales[0])
            check(abs(expected - bias_scale) / out_scale <= 0.02,
                  f"{op}: bias scale {bias_scale} does not match input_scale * filter_scale {expected}")
        real = np.full(channels, float(np.float32(in_scale) * np.float32(scales[0])) / out_scale)
    else:
        real = in_scale * np.broadcast_to(scales, (channels,)) / out_scale
    multiplier, shift = quantize_multipliers(real)
    act_min, act_max = activation_range_quantized(activation, out_scale, output_t.zero_point, output_t.dtype)
    return Requantizer(multiplier, shift, output_t.zero_point, act_min, act_max, output_t.dtype, rounding,
                       acc_bound)


def accumulator_bound(input_t, input_zp: int, weights: np.ndarray | None, axis, bias_t=None) -> float:
    """A bound on |sum((x - zp) * w) + bias| for any input: max|x - zp| * sum|w| along `axis`, plus max|bias|.

    inf when the weights (or a bias that is present) are not constants.
    """
    if weights is None or (bias_t is not None and not bias_t.is_constant):
        return np.inf
    lo, hi = dtype_range(input_t.dtype)
    bound = max(hi - input_zp, input_zp - lo) * float(np.abs(weights).sum(axis=axis).max(initial=0))
    return bound + (float(np.abs(bias_t.data.astype(np.int64)).max(initial=0)) if bias_t is not None else 0.0)


def gemm_dtype(input_t, input_zp: int, weights: np.ndarray | None, axis: int) -> type:
    """float32 when a float32 GEMM is exact for these weights, else float64.

    Every partial sum of (x - zp) * w is an integer no larger than accumulator_bound; below 2**24
    float32 holds all of them exactly, in any summation order.
    """
    return np.float32 if accumulator_bound(input_t, input_zp, weights, axis) < 2**24 else np.float64


def finish_quantized(acc: np.ndarray, bias: np.ndarray | None, requant: Requantizer) -> np.ndarray:
    """Exact integer accumulators (any numeric dtype) plus int32 bias, requantized to the output type."""
    acc = acc.astype(np.int64)
    if bias is not None:
        acc += bias
    return requant(acc)


def read_bias(bias_t, dtype) -> np.ndarray | None:
    """The bias as a flat `dtype` array; None when the optional bias is omitted."""
    return None if bias_t is None else bias_t.data.reshape(-1).astype(dtype, copy=False)


def precomputed_stage(plan, x, bias_t, channels: int, pixels: int, weights: np.ndarray | None,
                  axis) -> ExactStage | FloatStage | None:
    """A conv plan's output stage, precomputed, when the bias is constant (or absent).

    weights: the quantized plan's zero-point-free weights (None if not constant), summed over `axis`
    for the accumulator bounds.
    """
    if not (bias_t is None or is_known(bias_t)):
        return None
    if not plan.quantized:
        return FloatStage.of(bias_t, channels, pixels, plan.activation)
    if weights is None:
        return None
    return plan.requant.exact_stage(read_bias(bias_t, np.int64), channel_bounds(x, plan.input_zp, weights, axis),
                                    pixels)
