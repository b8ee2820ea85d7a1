"""TapSum: DEPTHWISE_CONV_2D's window sums as one einsum over a view of every kernel tap.

Implements `reference.depthwise_conv2d`'s window sums; tests/runtime/test_references.py checks it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime.kernels.conv.geometry import Geometry


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
