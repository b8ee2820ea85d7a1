"""Convolutions: CONV_2D and DEPTHWISE_CONV_2D in float32, int8 (per-tensor or per-channel weights) and uint8.

CONV_2D is im2col (a strided view of the padded input, copied once into a matrix) times the weight
matrix through BLAS. Quantized, the GEMM multiplies (x - input_zp) by (w - filter_zp) in float32 when
that is exact for the node's weights, else in float64 (exact below 2**53); the integer accumulators
then go through TFLite's fixed-point output stage, which prepare folds with a constant bias into one
exact float64 multiply-add where it can (ExactStage). A stride-1 dilated CONV_2D builds its im2col
matrix phase by phase (Geometry.phases); with few input channels the (transposed) im2col matrix is
copied from channel planes instead, in long runs (PlanarPatches). DEPTHWISE_CONV_2D is one einsum
over a view of every kernel tap of a plan-owned padded copy of the input (TapSum), laid out so that
each tap's output rows are contiguous runs; quantized, its sums are exact in float32 or float64
under the same bound as the GEMM.

The bias input is optional (2 inputs, or index -1) and reads as zeros, as in TFLite's reference
kernels; LiteRT's builtin conv kernels reject a missing bias (and its DEPTHWISE_CONV_2D crashes on a
2-input node), so the tests compare against LiteRT with an explicit zero bias.

The quantized output stage (Requantizer, ExactStage and friends) is shared with FULLY_CONNECTED.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from runtime import work
from runtime.kernels.common import check, fast_clip, is_known
from runtime.quant import (
    INT32_MAX,
    activation_name,
    activation_range_quantized,
    dtype_range,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_half_up,
    quantize_multipliers,
    rounding_divide_by_pot,
)
from runtime.registration import Registration

SAME, VALID = 0, 1  # schema enum Padding
INT16_MAX = 32767
_QUANTIZED = ("INT8", "UINT8")

# ---------------------------------------------------------------------------------------------
# Geometry


def out_size_and_padding(padding: int, in_size: int, filter_size: int, stride: int,
                         dilation: int) -> tuple[int, int]:
    """(output size, padding before) along one spatial axis, as kernels/padding.h computes them.

    ComputeOutSizeChecked: SAME gives ceil(in / stride), VALID gives (in + stride - effective) / stride
    with C's truncating division, effective = (filter - 1) * dilation + 1. ComputePaddingWithOffsetChecked
    (ComputePaddingHeightWidth): total = max(0, (out - 1) * stride + effective - in); the kernels pad
    total // 2 before the data and read the rest (the odd remainder) as zeros after it.
    """
    check(padding in (SAME, VALID), f"unknown padding {padding} (expected SAME=0 or VALID=1)")
    check(stride > 0 and dilation > 0, f"stride {stride} and dilation {dilation} must be positive")
    effective = (filter_size - 1) * dilation + 1
    if padding == SAME:
        out = (in_size + stride - 1) // stride
    else:
        num = in_size + stride - effective
        out = num // stride if num >= 0 else -((-num) // stride)
    check(out >= 0, f"window {effective} does not fit input size {in_size}")
    total = max(0, (out - 1) * stride + effective - in_size)
    return out, total // 2


@dataclass(frozen=True)
class Geometry:
    """Where each output pixel's window sits in the input."""

    stride: tuple[int, int]
    dilation: tuple[int, int]
    kernel: tuple[int, int]
    out_hw: tuple[int, int]
    pad_before: tuple[int, int]
    # How far the windows reach along each axis from the first (padded) row and column.
    reach: tuple[int, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "reach", tuple(
            (o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(self.out_hw, self.stride, self.kernel, self.dilation)))

    @classmethod
    def of(cls, options, in_hw, kernel_hw) -> Geometry:
        stride = (int(options.stride_h), int(options.stride_w))
        dilation = (int(options.dilation_h_factor), int(options.dilation_w_factor))
        check(min(stride) > 0, f"strides must be positive, got stride_h={stride[0]} stride_w={stride[1]}")
        check(min(dilation) > 0, f"dilation factors must be positive, got h={dilation[0]} w={dilation[1]}")
        # conv.cc / depthwise_conv.cc Prepare: strides and dilation factors must fit int16 (the kernels store them so).
        check(max(dilation) <= INT16_MAX,
              f"dilation factors must be at most {INT16_MAX}, got h={dilation[0]} w={dilation[1]}")
        check(max(stride) <= INT16_MAX, f"strides must be at most {INT16_MAX}, got stride_h={stride[0]} "
                                        f"stride_w={stride[1]}")
        oh, ph = out_size_and_padding(options.padding, in_hw[0], kernel_hw[0], stride[0], dilation[0])
        ow, pw = out_size_and_padding(options.padding, in_hw[1], kernel_hw[1], stride[1], dilation[1])
        # Along an axis with one output the stride moves nothing: call it 1, so that layouts sized by
        # the stride (phase buffers, tap views) stay the input's size for any stride, 2**31 - 1 included.
        stride = (1 if oh == 1 else stride[0], 1 if ow == 1 else stride[1])
        return cls(stride, dilation, tuple(kernel_hw), (oh, ow), (ph, pw))

    def padded(self, x: np.ndarray, dtype, offset: int = 0, fill: int = 0) -> np.ndarray:
        """(x - offset) as `dtype`, with rows/columns of `fill` wherever a window reads outside x.

        Quantized, a padded pixel is x == input_zp: it contributes nothing to the sum, as in TFLite
        (fill 0 after subtracting the zero point, or fill input_zp for raw sums with it folded out).
        """
        n, h, w, c = x.shape
        top, left = self.pad_before
        bottom, right = max(0, self.reach[0] - h - top), max(0, self.reach[1] - w - left)
        if not (top or bottom or left or right):
            return x.astype(dtype, copy=False) if offset == 0 else np.subtract(x, offset, dtype=dtype)
        shape = (n, h + top + bottom, w + left + right, c)
        out = np.full(shape, fill, dtype) if fill else np.zeros(shape, dtype)
        if offset:
            np.subtract(x, offset, out=out[:, top:top + h, left:left + w, :], dtype=dtype)
        else:
            out[:, top:top + h, left:left + w, :] = x
        return out

    def windows(self, xp: np.ndarray, groups: int = 1) -> np.ndarray:
        """Every output pixel's window, [batch, oh, ow, kh, kw, groups, channels_per_group]: a strided view."""
        xp = np.ascontiguousarray(xp)
        n, _, _, c = xp.shape
        cg = c // groups
        sn, sy, sx, sc = xp.strides
        # np.lib.stride_tricks.as_strided without its per-call overhead (these views are read only).
        return np.ndarray(
            (n, *self.out_hw, *self.kernel, groups, cg), xp.dtype, xp, 0,
            (sn, sy * self.stride[0], sx * self.stride[1], sy * self.dilation[0], sx * self.dilation[1], sc * cg, sc),
        )

    def im2col(self, xp: np.ndarray, groups: int) -> np.ndarray:
        """Patches [groups, batch*oh*ow, kh*kw*channels_per_group] of the padded input (one copy)."""
        n, h, w, c = xp.shape
        (oh, ow), (kh, kw) = self.out_hw, self.kernel
        if groups == 1 and (kh, kw, oh, ow) == (1, 1, h, w) and xp.flags.c_contiguous:
            return xp.reshape(1, n * oh * ow, c)  # pointwise, stride 1: the input already is the matrix
        view = self.windows(xp, groups)
        if groups == 1:
            return view.reshape(1, n * oh * ow, kh * kw * c)
        return view.transpose(5, 0, 1, 2, 3, 4, 6).reshape(groups, n * oh * ow, kh * kw * (c // groups))

    def phases(self) -> tuple[tuple[int, int, Geometry], ...]:
        """A stride-1 dilated window as undilated windows over each (row, column) phase of the input.

        Output pixel (y, x) with y % dilation_h == a and x % dilation_w == b reads only input rows
        a + dilation_h * i and columns b + dilation_w * j: a plain convolution over that phase
        image, whose windows are runs of kw * channels instead of one short run per tap.
        """
        (oh, ow), (dy, dx) = self.out_hw, self.dilation
        return tuple(
            (a, b, Geometry((1, 1), (1, 1), self.kernel, ((oh - a + dy - 1) // dy, (ow - b + dx - 1) // dx), (0, 0)))
            for a in range(min(dy, oh)) for b in range(min(dx, ow)))

    def phased_im2col(self, xp: np.ndarray, phases) -> np.ndarray:
        """im2col (groups 1) of a stride-1 dilated window, filled phase by phase (see `phases`).

        The same matrix as im2col, copied in runs of kw * channels rather than of channels.
        """
        n, c = xp.shape[0], xp.shape[3]
        (oh, ow), (kh, kw), (dy, dx) = self.out_hw, self.kernel, self.dilation
        cols = np.empty((n, oh, ow, kh, kw, 1, c), xp.dtype)
        for a, b, sub in phases:
            cols[:, a::dy, b::dx] = sub.windows(xp[:, a::dy, b::dx, :])
        return cols.reshape(1, n * oh * ow, kh * kw * c)


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


@dataclass(frozen=True)
class ScaledGemm:
    """A small pointwise quantized conv's GEMM with ExactStage's float form folded in: GEMM, cast, clamp, cast.

    ExactStage computes floor(acc * m + offset) with m = q / 2**(31+r) per channel. Here m scales
    the weights' columns instead, and the GEMM runs in float64: every product x * w * q / 2**(31+r)
    and every partial sum is an integer multiple of 2**-(31+r), fewer than 2**53 of them under the
    bounds Requantizer.exact_stage checks (max|x| * sum|w| per channel), so the sums are exact in any
    order. That saves the float32 -> float64 cast and the multiply after the GEMM, at the price of
    a float64 GEMM (about twice a float32 one). The lift is a multiple of 256 (or 0 for uint8),
    so that the clamped integers, cast to the output type, wrap to the output itself; their
    truncating cast from float64 floors on the clamp's range (lo >= 0), as in ExactStage.

    The input (its own im2col matrix) is copied into a plan-owned [pixels, depth + 1] buffer whose
    last column holds ones, and the offset rides in the GEMM as one more weight row (exact under
    the same bounds, which include |offset|): that saves the addition's pass and a few calls for
    the cost of a strided copy.
    """

    stage: ExactStage  # the output stage this replaces: a delegate that swaps plan.stage disables it
    weights: np.ndarray  # [cin + 1, out] float64: each column times its channel's m, then the offset row
    buffer: np.ndarray  # the GEMM's [pixels, cin + 1] input (plan-owned), last column ones
    lo: int
    hi: int
    cast: np.dtype  # int16 where the lifted values provably fit it (a cheaper clamp), else int32
    dtype: np.dtype

    @classmethod
    def of(cls, requant: Requantizer, stage: ExactStage, weights: np.ndarray, bias: np.ndarray | None,
           bounds: np.ndarray, pixels: int) -> ScaledGemm | None:
        """The scaled GEMM for `stage` (built from the same bias and bounds); None where not exact."""
        lift = 256 if requant.dtype == np.int8 else 0
        lifted = requant.exact_stage(bias, bounds, pixels, lift=lift)
        if lifted is None or lifted.shift is not None:
            return None
        depth, channels = weights.shape
        # The offset rides in the GEMM as the last weight row, against the buffer's column of ones.
        scaled = np.concatenate([weights * lifted.multiplier[:channels], lifted.offset[None, :channels]])
        # |acc * m + offset| is below y_bound < 2**22 (numerators < 2**53, shifts >= 31): int32 always holds it.
        cast = np.dtype(np.int16 if lifted.narrow else np.int32)
        return cls(stage, scaled, np.ones((pixels, depth + 1)), lifted.lo, lifted.hi, cast, np.dtype(requant.dtype))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Output integers [pixels, out] of a pointwise conv's raw input [batch, h, w, cin]."""
        np.copyto(self.buffer[:, :-1], x.reshape(self.buffer.shape[0], -1))
        k = np.dot(self.buffer, self.weights).astype(self.cast)
        fast_clip(k, self.lo, self.hi, out=k)
        return k.astype(self.dtype)


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


def check_quantized_types(op: str, input_t, filter_t, bias_t, output_t) -> None:
    """Same quantized type in and out, weights of that type, int32 bias with zero point 0."""
    check(output_t.type == input_t.type, f"{op}: output type {output_t.type} differs from input type {input_t.type}")
    check(filter_t.type == input_t.type,
          f"{op}: {input_t.type} input needs {input_t.type} weights, got {filter_t.type}")
    check(input_t.scales.size == 1 and output_t.scales.size == 1,
          f"{op}: quantized input and output need one scale each")
    check(filter_t.scales.size >= 1, f"{op}: quantized weights have no scale")
    if bias_t is not None:
        check(bias_t.type == "INT32", f"{op}: quantized bias must be INT32, got {bias_t.type}")
        check(not bias_t.zero_points.any(), f"{op}: bias zero point must be 0")


def check_float_types(op: str, input_t, filter_t, output_t, hybrid_versions: str) -> None:
    """Float input, weights and output; float input with quantized weights is the unimplemented hybrid path."""
    check(input_t.type == "FLOAT32", f"{op}: input type {input_t.type} is not supported (FLOAT32, INT8, UINT8)")
    check(filter_t.type == "FLOAT32",
          f"{op}: {filter_t.type} weights with FLOAT32 input (hybrid, versions {hybrid_versions}) are not supported")
    check(output_t.type == "FLOAT32", f"{op}: output type {output_t.type} differs from input type FLOAT32")


def check_bias(op: str, bias_t, channels: int, float_type: str | None) -> None:
    """One bias value per output channel; a float op's bias has the input's type."""
    if bias_t is None:
        return
    count = int(np.prod(bias_t.shape, dtype=np.int64))
    check(count == channels, f"{op}: bias has {count} elements, expected {channels} (one per output channel)")
    if float_type is not None:
        check(bias_t.type == float_type, f"{op}: bias type {bias_t.type} differs from input type {float_type}")


def filter_zero_point(op: str, filter_t) -> int:
    """The weights' zero point: any value for uint8, 0 for int8 (TFLite requires symmetric int8 weights)."""
    zps = filter_t.zero_points
    if filter_t.type == "INT8":
        check(not zps.any(), f"{op}: int8 weights must be symmetric (zero point 0), got {zps.tolist()}")
        return 0
    return int(zps[0]) if zps.size else 0


def read_bias(bias_t, dtype) -> np.ndarray | None:
    """The bias as a flat `dtype` array; None when the optional bias is omitted."""
    return None if bias_t is None else bias_t.data.reshape(-1).astype(dtype, copy=False)


# ---------------------------------------------------------------------------------------------
# CONV_2D


@dataclass(frozen=True)
class PlanarPatches:
    """im2col for inputs with few channels, built from channel planes so that every copy is a long run.

    With channels last, a window row of few channels is a short run and im2col copies it run by run.
    Here the plan owns a zero-padded copy of the input as planes [batch, channels, stride_h, stride_w,
    rows, cols] (padded pixel (r, q) at phase (r % stride_h, q % stride_w), position (r // stride_h,
    q // stride_w)): tap (ky, kx) of every output pixel (y, x) then sits at one fixed offset from
    (y, x) in one plane, so the transposed patch matrix [kh*kw*channels, batch*out_h*cols] is copied
    one tap (or, at unit strides, all taps) at a time in runs of out_h*cols values. The GEMM
    computes `cols - out_w` extra output columns per row, which `crop` drops. Quantized, a padded
    pixel is x == input_zp, a zero after the zero point is subtracted, as in im2col.
    """

    buffer: np.ndarray
    fills: tuple  # (destination planes, input row index, input column index)
    sources: tuple  # (destination rows of the patch matrix, source view of the buffer)
    patches: np.ndarray  # [kh*kw*channels, batch*out_h*cols], rewritten every invoke
    out_w: int

    @classmethod
    def of(cls, g: Geometry, in_shape, dtype) -> PlanarPatches:
        n, h, w, c = in_shape
        (oh, ow), (sy, sx), (dy, dx), (kh, kw) = g.out_hw, g.stride, g.dilation, g.kernel
        top, left = g.pad_before
        reach_y, reach_x = ((kh - 1) * dy) // sy, ((kw - 1) * dx) // sx
        cols = max(ow + reach_x, (left + w - 1) // sx + 1)
        # One spare row: the last run of a tap reads up to reach_x values past its last output row.
        rows = max(oh + reach_y, (top + h - 1) // sy + 1) + 1
        buffer = np.zeros((n, c, sy, sx, rows, cols), dtype)
        fills = []
        for py in range(sy):
            for px in range(sx):
                i0, j0 = (py - top) % sy, (px - left) % sx  # the first input row / column of this phase
                if i0 < h and j0 < w:
                    r0, c0 = (top + i0) // sy, (left + j0) // sx
                    dst = buffer[:, :, py, px, r0:r0 + len(range(i0, h, sy)), c0:c0 + len(range(j0, w, sx))]
                    fills.append((dst, slice(i0, None, sy), slice(j0, None, sx)))
        run = oh * cols
        patches = np.empty((kh, kw, c, n, run), dtype)
        bn, bc, bpy, bpx, br, bi = buffer.strides
        if (sy, sx) == (1, 1):
            view = np.ndarray((kh, kw, c, n, run), dtype, buffer, 0, (br * dy, bi * dx, bc, bn, bi))
            sources = ((patches, view),)
        else:
            sources = []
            for ky in range(kh):
                for kx in range(kw):
                    (oy, py), (ox, px) = divmod(ky * dy, sy), divmod(kx * dx, sx)
                    start = py * bpy + px * bpx + oy * br + ox * bi
                    sources.append((patches[ky, kx], np.ndarray((c, n, run), dtype, buffer, start, (bc, bn, bi))))
            sources = tuple(sources)
        return cls(buffer, tuple(fills), sources, patches.reshape(kh * kw * c, n * run), ow)

    def __call__(self, x: np.ndarray, offset: int) -> np.ndarray:
        """The patch matrix of (x - offset), transposed: [kh*kw*channels, batch*out_h*cols] (plan-owned)."""
        for dst, rows, cols in self.fills:
            src = x[:, rows, cols, :].transpose(0, 3, 1, 2)
            if offset:
                np.subtract(src, offset, out=dst, dtype=dst.dtype)
            else:
                np.copyto(dst, src)
        for dst, src in self.sources:
            np.copyto(dst, src)
        return self.patches

    def crop(self, y: np.ndarray, out_shape) -> np.ndarray:
        """The real output pixels of a [batch*out_h*cols, channels] result, as a contiguous `out_shape` array."""
        n, oh, ow, c = out_shape
        return np.ascontiguousarray(y.reshape(n, oh, -1, c)[:, :, :ow])


@dataclass
class _ConvPlan:
    geometry: Geometry
    groups: int
    quantized: bool
    activation: str
    input_zp: int = 0
    filter_zp: int = 0
    requant: Requantizer | None = None
    dtype: type = np.float32  # of the GEMM operands
    weights: np.ndarray | None = None  # [groups, kh*kw*cin_per_group, out_per_group], from a constant filter
    empty: bool = False  # the output has no elements
    stage: ExactStage | FloatStage | None = None  # the output stage, when the bias is constant
    phases: tuple | None = None  # Geometry.phases, for an ungrouped dilated conv with unit strides
    planar: PlanarPatches | None = None  # im2col from channel planes, for few input channels
    folded: np.ndarray | None = None  # input_zp * sum(w) per output channel, when the GEMM sums raw inputs
    scaled: ScaledGemm | None = None  # the GEMM with `stage` folded in, where that pays


def _conv_weights(filter_data: np.ndarray, groups: int, dtype, offset: int) -> np.ndarray:
    """[out, kh, kw, cin_g] weights as a [groups, kh*kw*cin_g, out_g] GEMM operand, minus the zero point.

    float32 weights stay a (transposed) view of the model's buffer: BLAS reads either layout.
    """
    w = filter_data.reshape(groups, filter_data.shape[0] // groups, -1)
    if w.dtype == dtype and not offset:
        return w.transpose(0, 2, 1)
    w = w.astype(dtype)
    if offset:
        w -= offset
    return np.ascontiguousarray(w.transpose(0, 2, 1))


def _output_stage(plan, x, bias_t, channels: int, pixels: int, weights: np.ndarray | None,
                  axis) -> ExactStage | FloatStage | None:
    """A conv plan's precomputed output stage, when the bias is constant (or absent).

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


def _conv_prepare(ctx, node) -> None:
    op = "CONV_2D"
    check(len(node.inputs) in (2, 3), f"{op}: expected 2 or 3 inputs, got {len(node.inputs)}")
    x, f, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
    check(len(x.shape) == 4, f"{op}: input must be 4-D [batch, height, width, channels], got shape {list(x.shape)}")
    check(len(f.shape) == 4,
          f"{op}: filter must be 4-D [out_channels, height, width, in_channels], got shape {list(f.shape)}")
    check(min(x.shape[1:]) > 0 and min(f.shape) > 0, f"{op}: empty input {list(x.shape)} or filter {list(f.shape)}")
    cin, fin, cout = x.shape[3], f.shape[3], f.shape[0]
    check(cin % fin == 0,
          f"{op}: input has {cin} channels but the filter expects {fin} (or a divisor of {cin} for grouped conv)")
    groups = cin // fin
    check(cout % groups == 0, f"{op}: {cout} output channels do not split into {groups} groups")
    act = fused_activation(node)
    geometry = Geometry.of(node.options, x.shape[1:3], f.shape[1:3])
    plan = _ConvPlan(geometry, groups, x.type in _QUANTIZED, act)
    exact = None  # quantized: the zero-point-free weights in float64, when known
    if plan.quantized:
        check_quantized_types(op, x, f, b, out)
        check_bias(op, b, cout, None)
        plan.input_zp = x.zero_point
        plan.filter_zp = filter_zero_point(op, f)
        # conv.cc: ungrouped int8/uint8 run optimized_ops (im2col + cpu_backend_gemm -> ruy); grouped
        # convolutions fall back to the reference kernels.
        rounding = OPTIMIZED_ROUNDING if groups == 1 else REFERENCE_ROUNDING
        exact = _conv_weights(f.data, groups, np.float64, plan.filter_zp) if is_known(f) else None
        plan.dtype = gemm_dtype(x, plan.input_zp, exact, axis=1)
        plan.weights = None if exact is None else exact.astype(plan.dtype)
        plan.requant = requantizer(op, x, f, b, out, act, cout, channel_axis=0, rounding=rounding,
                                   float_product=x.type == "UINT8",
                                   acc_bound=accumulator_bound(x, plan.input_zp, exact, 1, b))
    else:
        check_float_types(op, x, f, out, "2/5")
        check_bias(op, b, cout, "FLOAT32")
        if is_known(f):
            plan.weights = _conv_weights(f.data, groups, np.float32, 0)
    out_shape = (x.shape[0], *geometry.out_hw, cout)
    plan.empty = 0 in out_shape
    if not plan.empty:
        pixels = out_shape[0] * out_shape[1] * out_shape[2]
        if groups == 1 and _planar_pays(geometry, x.shape):
            plan.planar = PlanarPatches.of(geometry, x.shape, plan.dtype)
            pixels = plan.planar.patches.shape[1]  # the stage runs on the GEMM's wider rows, before the crop
        elif groups == 1 and geometry.stride == (1, 1) and geometry.dilation != (1, 1):
            plan.phases = geometry.phases()
        plan.stage = _output_stage(plan, x, b, cout, pixels, exact, axis=1)
        if plan.planar is None and groups == 1 and isinstance(plan.stage, ExactStage):
            _fold_conv_zero_point(plan, x, b, exact, pixels)
            if _scaled_pays(geometry, x.shape, cout) and (plan.folded is not None or not plan.input_zp):
                _scale_gemm(plan, x, b, exact, pixels)  # on raw inputs
    node.user_data = plan
    ctx.resize_tensor(out, out_shape)


def _fold_conv_zero_point(plan: _ConvPlan, x, bias_t, exact: np.ndarray, pixels: int) -> None:
    """im2col of raw inputs, the input zero point's share folded into the bias, where that stays exact.

    sum((x - zp) * w) = sum(x * w) - zp * sum(w), padded pixels included (they hold x = zp): the
    input is then cast rather than cast-and-subtracted (about twice as fast, measured), under the
    same conditions as the depthwise fold (_fold_zero_point): raw sums, bounded by max|x| * sum|w|,
    keep the GEMM's dtype exact, and the output stage accepts the folded bias under those bounds.
    """
    raw = channel_bounds(x, 0, exact, 1)
    if not plan.input_zp or (plan.dtype == np.float32 and float(raw.max(initial=0)) >= 2**24):
        return
    folded = (plan.input_zp * exact[0].sum(axis=0)).astype(np.int64)
    bias = read_bias(bias_t, np.int64)
    stage = plan.requant.exact_stage(-folded if bias is None else bias - folded, raw, pixels)
    if stage is not None:
        plan.stage, plan.folded = stage, folded


def _scale_gemm(plan: _ConvPlan, x, bias_t, exact: np.ndarray, pixels: int) -> None:
    """plan.scaled for plan.stage, from the same bias and bounds (raw sums when the zero point is folded)."""
    bias = read_bias(bias_t, np.int64)
    if plan.folded is None:
        bounds = channel_bounds(x, plan.input_zp, exact, 1)
    else:
        bounds = channel_bounds(x, 0, exact, 1)
        bias = -plan.folded if bias is None else bias - plan.folded
    plan.scaled = ScaledGemm.of(plan.requant, plan.stage, exact[0], bias, bounds, pixels)


def _scaled_pays(g: Geometry, in_shape, channels: int) -> bool:
    """Whether ScaledGemm beats the float32 GEMM and ExactStage (measured): pointwise convs whose input
    is the im2col matrix (Geometry.im2col copies nothing), with small inputs and GEMMs.

    The float64 GEMM's extra cost grows with pixels * depth * channels and the strided copy into
    the buffer with pixels * depth; the stage saves two float64 passes and several calls. Measured
    per node (pixels x depth x channels, ScaledGemm / float32 GEMM + ExactStage, back to back):
    576x8x48 0.82, 144x48x16 0.72, 144x16x96 0.68, 144x96x16 0.95, 36x24x144 0.65, 36x144x24 0.78,
    36x192x32 0.95, 9x56x336 0.79, 9x336x112 0.95, 256x8x8 0.59; but 576x48x8 1.05, 9x112x1280 1.26,
    2304x16x8 1.18, and (with the offset added after the GEMM instead) 2304x8x48 0.9-1.0,
    12544x16x96 1.15, 3136x24x144 1.2, 784x32x192 1.28.
    """
    n, h, w, depth = in_shape
    pixels = n * h * w
    return (g.kernel == (1, 1) and g.out_hw == (h, w)
            and pixels * depth <= 8192 and pixels * depth * channels <= 1 << 19)


def _planar_pays(g: Geometry, in_shape) -> bool:
    """Whether PlanarPatches beats im2col (measured): unit strides with runs under 32 values, or large
    strided outputs with runs under 16.

    im2col copies a window row as one run of kw * channels values at dilation_w 1 (and phase by phase
    at unit strides), else as kw runs of `channels`; a 1x1 kernel at unit strides needs no copy at all.
    Strided, PlanarPatches copies tap by tap, which pays only for many output pixels.
    """
    if g.kernel == (1, 1) and g.stride == (1, 1):
        return False
    unit = g.stride == (1, 1)
    run = in_shape[3] * (g.kernel[1] if g.dilation[1] == 1 or unit else 1)
    return run < 32 if unit else run < 16 and in_shape[0] * g.out_hw[0] * g.out_hw[1] >= 1024


def _conv_invoke(ctx, node) -> None:
    plan: _ConvPlan = node.user_data
    out = ctx.output(node, 0)
    if plan.empty:
        out.data = np.zeros(out.shape, out.dtype)
        return
    x = ctx.input(node, 0).data
    scaled = plan.scaled
    if scaled is not None and plan.stage is scaled.stage:  # else a delegate replaced the stage after prepare
        out.data = scaled(x).reshape(out.shape)
        return
    w = plan.weights
    if w is None:
        w = _conv_weights(ctx.input(node, 1).data, plan.groups, plan.dtype, plan.filter_zp)
    if plan.planar is not None:
        acc = plan.planar(x, plan.input_zp).T @ w[0]
    else:
        acc = _gemm(plan, x, w)
    if plan.stage is not None:
        y = plan.stage(acc)
    elif plan.quantized:
        bias = read_bias(ctx.input(node, 2), np.int64)
        if plan.folded is not None:  # a delegate dropped the stage (with the folded bias) after prepare
            bias = -plan.folded if bias is None else bias - plan.folded
        y = finish_quantized(acc, bias, plan.requant)
    else:
        y = finish_float(acc, read_bias(ctx.input(node, 2), np.float32), plan.activation)
    out.data = y.reshape(out.shape) if plan.planar is None else plan.planar.crop(y, out.shape)


def _gemm(plan: _ConvPlan, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The conv's accumulators [batch*out_h*out_w, out_c] through im2col of a padded copy of x."""
    if plan.folded is None:
        xp = plan.geometry.padded(x, plan.dtype, plan.input_zp)
    else:
        xp = plan.geometry.padded(x, plan.dtype, fill=plan.input_zp)
    if plan.phases is not None:
        return plan.geometry.phased_im2col(xp, plan.phases)[0] @ w[0]
    if plan.groups == 1:
        return plan.geometry.im2col(xp, 1)[0] @ w[0]
    cols = plan.geometry.im2col(xp, plan.groups)
    return np.matmul(cols, w).transpose(1, 0, 2).reshape(cols.shape[1], -1)


# ---------------------------------------------------------------------------------------------
# DEPTHWISE_CONV_2D


def _column_cells(kw: int, stride_w: int, dilation_w: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """Per kernel column kx, its (kb, kq) cell in a TapSum view, and the kb axis' step in stored columns."""
    if stride_w == 1:
        return tuple((kx, 0) for kx in range(kw)), dilation_w
    return tuple(divmod(kx * dilation_w, stride_w) for kx in range(kw)), 1


@dataclass(frozen=True)
class TapSum:
    """A depthwise sum over the kernel taps as one einsum whose inner loops run along whole output rows.

    The plan owns a zero-padded copy of the input, [batch, rows, stride_w, columns, channels], that
    stores padded column j at phase j % stride_w, position j // stride_w. The columns one tap reads
    for consecutive output pixels (stride_w apart in the input) are then adjacent, so a tap's
    pixels are [batch, out_h, out_w * channels] with the last axis contiguous, and all taps are one
    strided view [batch, kh, kb, kq, out_h, out_w * channels]: kernel column kx sits at
    (kb, kq) = divmod(kx * dilation_w, stride_w) (cells no column uses get zero weights). The
    padding is written once, at prepare: `pad`, the value a padded pixel holds (zeros, or the
    input zero point when the sum runs over raw quantized values). Each invoke rewrites only the interior.
    """

    buffer: np.ndarray
    view: np.ndarray
    fills: tuple  # (destination view of the buffer, index of the input columns it holds)
    cells: tuple  # per kernel column, its (kb, kq)
    grid: tuple[int, int]  # the (kb, kq) extents
    multiplier: int
    out_w: int

    @classmethod
    def of(cls, g: Geometry, in_shape, channels: int, multiplier: int, dtype, pad: int = 0) -> TapSum:
        n, h, w, _ = in_shape
        (oh, ow), (sy, sx), (dy, dx), kh = g.out_hw, g.stride, g.dilation, g.kernel[0]
        top, left = g.pad_before
        cells, step = _column_cells(g.kernel[1], sx, dx)
        grid = (max(b for b, _ in cells) + 1, max(q for _, q in cells) + 1)
        rows, cols = max(top + h, g.reach[0]), max((left + w - 1) // sx + 1, ow + (grid[0] - 1) * step)
        buffer = np.full((n, rows, sx, cols, channels), pad, dtype)
        sn, sr, sp, sc, si = buffer.strides
        view = np.ndarray((n, kh, *grid, oh, ow * channels), dtype, buffer, 0,
                          (sn, sr * dy, sc * step, sp, sr * sy, si))
        fills = []
        for phase in range(sx):
            first = (phase - left) % sx  # the first input column this phase stores
            if first < w:
                start, count = (left + first) // sx, len(range(first, w, sx))
                dst = buffer[:, top:top + h, phase, start:start + count, :]
                if multiplier > 1:  # output channel c * multiplier + m reads input channel c
                    dst = dst.reshape(*dst.shape[:3], channels // multiplier, multiplier)
                fills.append((dst, (slice(None), slice(None), slice(first, None, sx))))
        return cls(buffer, view, tuple(fills), cells, grid, multiplier, ow)

    def weights(self, filter_data: np.ndarray, offset: int, dtype) -> np.ndarray:
        """[1, kh, kw, channels] weights minus `offset` as the einsum's [kh, kb, kq, out_w * channels] operand."""
        taps = filter_data[0].astype(dtype)
        if offset:
            taps -= offset
        grid = np.zeros((taps.shape[0], *self.grid, taps.shape[2]), dtype)
        for kx, (b, q) in enumerate(self.cells):
            grid[:, b, q] = taps[:, kx]
        return np.tile(grid, (1, 1, 1, self.out_w))

    def __call__(self, x: np.ndarray, weights: np.ndarray, offset: int) -> np.ndarray:
        """sum over taps of (x - offset) * weights, [batch, out_h, out_w * channels] (a new array)."""
        for dst, index in self.fills:
            src = x[index] if self.multiplier == 1 else x[index][..., None]
            if offset:
                np.subtract(src, offset, out=dst, dtype=dst.dtype)
            else:
                np.copyto(dst, src)
        return np.einsum("nabcyq,abcq->nyq", self.view, weights)


@dataclass
class _DepthwisePlan:
    quantized: bool
    activation: str
    input_zp: int = 0
    filter_zp: int = 0
    requant: Requantizer | None = None
    dtype: type = np.float32  # of the tap sums
    taps: TapSum | None = None  # None when the output has no elements
    weights: np.ndarray | None = None  # TapSum.weights of a constant filter
    stage: ExactStage | FloatStage | None = None  # the output stage, when the bias is constant
    # Quantized, when the taps sum raw inputs (see _fold_zero_point): input_zp * sum(weights) per channel.
    folded: np.ndarray | None = None


def _fold_zero_point(plan: _DepthwisePlan, x, bias_t, taps: np.ndarray, pixels: int) -> None:
    """Sum raw inputs, with the input zero point's share folded into the bias, where that stays exact.

    sum((x - zp) * w) = sum(x * w) - zp * sum(w), padded pixels included (they hold x = zp): the
    taps then copy the input with a cast instead of a subtraction, about twice as fast (measured).
    Raw sums are bounded by max|x| * sum|w|; the fold applies when they keep the tap sums' dtype
    and the output stage (exact for the folded bias under these bounds, or None) still applies.
    """
    raw = channel_bounds(x, 0, taps, (0, 1))
    if not plan.input_zp or (plan.dtype == np.float32 and float(raw.max(initial=0)) >= 2**24):
        return
    folded = plan.input_zp * taps.sum(axis=(0, 1)).reshape(-1)
    bias = read_bias(bias_t, np.int64)
    stage = plan.requant.exact_stage(-folded if bias is None else bias - folded, raw, pixels)
    if stage is not None:
        plan.stage, plan.folded = stage, folded


def _depthwise_prepare(ctx, node) -> None:
    op = "DEPTHWISE_CONV_2D"
    check(len(node.inputs) in (2, 3), f"{op}: expected 2 or 3 inputs, got {len(node.inputs)}")
    x, f, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
    check(len(x.shape) == 4, f"{op}: input must be 4-D [batch, height, width, channels], got shape {list(x.shape)}")
    check(len(f.shape) == 4 and f.shape[0] == 1,
          f"{op}: filter must be 4-D [1, height, width, out_channels], got shape {list(f.shape)}")
    check(min(x.shape[1:]) > 0 and min(f.shape) > 0, f"{op}: empty input {list(x.shape)} or filter {list(f.shape)}")
    cin, cout = x.shape[3], f.shape[3]
    # depthwise_conv.cc ComputeDepthMultiplier: the multiplier comes from the shapes, not the options.
    check(cout % cin == 0, f"{op}: filter has {cout} output channels, not a multiple of the input's {cin} channels")
    act = fused_activation(node)
    geometry = Geometry.of(node.options, x.shape[1:3], f.shape[1:3])
    plan = _DepthwisePlan(x.type in _QUANTIZED, act)
    taps = None  # quantized: the zero-point-free weights [kh, kw, out_c] in int64, when known
    if plan.quantized:
        check_quantized_types(op, x, f, b, out)
        check_bias(op, b, cout, None)
        plan.input_zp = x.zero_point
        plan.filter_zp = filter_zero_point(op, f)
        rounding = (depthwise_int8_rounding(cout) if x.type == "INT8"
                    else depthwise_uint8_rounding(geometry.out_hw[1], cout))
        taps = f.data[0].astype(np.int64) - plan.filter_zp if is_known(f) else None
        # Tap sums of integers: float32 where every partial sum stays below 2**24 (gemm_dtype), else float64.
        plan.dtype = gemm_dtype(x, plan.input_zp, taps, (0, 1))
        plan.requant = requantizer(op, x, f, b, out, act, cout, channel_axis=3, rounding=rounding,
                                   float_product=x.type == "UINT8",
                                   acc_bound=accumulator_bound(x, plan.input_zp, taps, (0, 1), b))
    else:
        check_float_types(op, x, f, out, "4/6")
        check_bias(op, b, cout, "FLOAT32")
    out_shape = (x.shape[0], *geometry.out_hw, cout)
    if 0 not in out_shape:
        pixels = out_shape[0] * out_shape[1] * out_shape[2]
        plan.stage = _output_stage(plan, x, b, cout, pixels, taps, axis=(0, 1))
        if plan.stage is not None and plan.quantized:
            _fold_zero_point(plan, x, b, taps, pixels)
        pad = 0 if plan.folded is None else plan.input_zp
        plan.taps = TapSum.of(geometry, x.shape, cout, cout // cin, plan.dtype, pad)
        if is_known(f):
            plan.weights = plan.taps.weights(f.data, plan.filter_zp, plan.dtype)
    node.user_data = plan
    ctx.resize_tensor(out, out_shape)


def _depthwise_invoke(ctx, node) -> None:
    plan: _DepthwisePlan = node.user_data
    out = ctx.output(node, 0)
    if plan.taps is None:
        out.data = np.zeros(out.shape, out.dtype)
        return
    w = plan.weights
    if w is None:
        w = plan.taps.weights(ctx.input(node, 1).data, plan.filter_zp, plan.dtype)
    folded = plan.folded
    acc = plan.taps(ctx.input(node, 0).data, w, plan.input_zp if folded is None else 0)
    if plan.stage is not None:
        out.data = plan.stage(acc).reshape(out.shape)
        return
    acc = acc.reshape(out.shape)
    b = ctx.input(node, 2)
    if plan.quantized:
        bias = read_bias(b, np.int64)
        if folded is not None:  # a delegate dropped the stage (with the folded bias) after prepare
            bias = -folded if bias is None else bias - folded
        out.data = finish_quantized(acc, bias, plan.requant)
    else:
        out.data = finish_float(acc, read_bias(b, np.float32), plan.activation)


def register(resolver) -> None:
    """CONV_2D v1 (float32, uint8), v3 (int8), v6 (grouped); DEPTHWISE_CONV_2D v1-v3 (float32/uint8, dilation, int8).

    Not registered (op_version.cc): CONV_2D v2/v5 and DEPTHWISE v4/v6 (hybrid float x int8), CONV_2D v4/v8
    and DEPTHWISE v5 (int16 activations), CONV_2D and DEPTHWISE v7 (int4 weights).
    """
    conv = Registration(prepare=_conv_prepare, invoke=_conv_invoke, work=work.conv)
    resolver.add_builtin("CONV_2D", conv, 1, 1)
    resolver.add_builtin("CONV_2D", conv, 3, 3)
    resolver.add_builtin("CONV_2D", conv, 6, 6)
    depthwise = Registration(prepare=_depthwise_prepare, invoke=_depthwise_invoke, work=work.depthwise_conv)
    resolver.add_builtin("DEPTHWISE_CONV_2D", depthwise, 1, 3)
