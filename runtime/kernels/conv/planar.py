"""PlanarPatches: CONV_2D's im2col for inputs with few channels, copied from channel planes in long runs.

Implements `reference.conv2d`'s window sums; tests/runtime/test_references.py checks it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime.kernels.conv.geometry import Geometry


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
