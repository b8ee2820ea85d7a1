"""im2col: a convolution's patches as a matrix for one GEMM (CONV_2D's main strategy), filled run by run
from the padded input, or phase by phase for a stride-1 dilated window (the phased strategy)."""

from __future__ import annotations

import numpy as np

from accelsim.runtime.kernels.conv.geometry import Geometry


def im2col(g: Geometry, xp: np.ndarray, groups: int) -> np.ndarray:
    """Patches [groups, batch*oh*ow, kh*kw*channels_per_group] of the padded input (one copy)."""
    n, h, w, c = xp.shape
    (oh, ow), (kh, kw) = g.out_hw, g.kernel
    if groups == 1 and (kh, kw, oh, ow) == (1, 1, h, w) and xp.flags.c_contiguous:
        return xp.reshape(1, n * oh * ow, c)  # pointwise, stride 1: the input already is the matrix
    view = g.windows(xp, groups)
    if groups == 1:
        return view.reshape(1, n * oh * ow, kh * kw * c)
    return view.transpose(5, 0, 1, 2, 3, 4, 6).reshape(groups, n * oh * ow, kh * kw * (c // groups))


def phases(g: Geometry) -> tuple[tuple[int, int, Geometry], ...]:
    """A stride-1 dilated window as undilated windows over each (row, column) phase of the input.

    Output pixel (y, x) with y % dilation_h == a and x % dilation_w == b reads only input rows
    a + dilation_h * i and columns b + dilation_w * j: a plain convolution over that phase
    image, whose windows are runs of kw * channels instead of one short run per tap.
    """
    (oh, ow), (dy, dx) = g.out_hw, g.dilation
    return tuple(
        (a, b, Geometry((1, 1), (1, 1), g.kernel, ((oh - a + dy - 1) // dy, (ow - b + dx - 1) // dx), (0, 0)))
        for a in range(min(dy, oh)) for b in range(min(dx, ow)))


def phased_im2col(g: Geometry, xp: np.ndarray, parts) -> np.ndarray:
    """im2col (groups 1) of a stride-1 dilated window, filled phase by phase (see `phases`).

    The same matrix as im2col, copied in runs of kw * channels rather than of channels.
    """
    n, c = xp.shape[0], xp.shape[3]
    (oh, ow), (kh, kw), (dy, dx) = g.out_hw, g.kernel, g.dilation
    cols = np.empty((n, oh, ow, kh, kw, 1, c), xp.dtype)
    for a, b, sub in parts:
        cols[:, a::dy, b::dx] = sub.windows(xp[:, a::dy, b::dx, :])
    return cols.reshape(1, n * oh * ow, kh * kw * c)
