"""Where a convolution's windows sit: TFLite's output size and padding (kernels/padding.h) and the
window views every conv strategy (and the reference) reads."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from accelsim.runtime.kernels.common import check

SAME, VALID = 0, 1  # schema enum Padding
INT16_MAX = 32767


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
