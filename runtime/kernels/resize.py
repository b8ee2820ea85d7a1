"""Image resizing: RESIZE_BILINEAR over NHWC tensors (float32, uint8, int8)."""

from __future__ import annotations

import numpy as np

from runtime.kernels.common import check
from runtime.resolver import Registration


def _output_size(size) -> tuple[int, int]:
    values = [int(v) for v in np.asarray(size.data).reshape(-1)]
    check(values[0] > 0 and values[1] > 0, f"RESIZE_BILINEAR: output size must be positive, got {values}")
    return values[0], values[1]


def _resize_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "RESIZE_BILINEAR takes (input, size) and one output")
    x = ctx.input(node, 0)
    size = ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(len(x.shape) == 4, f"RESIZE_BILINEAR: input must be 4-D NHWC, got shape {list(x.shape)}")
    check(size.shape == (2,) and size.type == "INT32",
          f"RESIZE_BILINEAR: size must be an INT32 vector of 2, got {size.type}{list(size.shape)}")
    check(x.type in _KERNELS, f"RESIZE_BILINEAR: type {x.type} is not supported ({', '.join(_KERNELS)})")
    check(out.type == x.type, f"RESIZE_BILINEAR: output type {out.type} differs from input type {x.type}")
    if not size.is_constant:
        ctx.set_dynamic(out)
        return
    opts = node.options
    check(not (opts.half_pixel_centers and opts.align_corners),
          "RESIZE_BILINEAR: if half_pixel_centers is True, align_corners must be False")
    out_h, out_w = _output_size(size)
    ctx.resize_tensor(out, (x.shape[0], out_h, out_w, x.shape[3]))


def _float_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """resize_bilinear.h: in/out as float, or (in-1)/(out-1) with align_corners."""
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _float_taps(out_size: int, in_size: int, align_corners: bool, half_pixel: bool):
    """ComputeInterpolationValues along one axis: (lower index, upper index, float32 fraction)."""
    f32 = np.float32
    scale = _float_scale(in_size, out_size, align_corners)
    pos = np.arange(out_size, dtype=f32)
    scaled = (pos + f32(0.5)) * scale - f32(0.5) if half_pixel else pos * scale
    lower = np.maximum(np.floor(scaled).astype(np.int64), 0)
    upper = np.minimum(np.ceil(scaled).astype(np.int64), in_size - 1)
    return lower, upper, (scaled - lower.astype(f32)).astype(f32)


def _float_weights(data: np.ndarray, out_h: int, out_w: int, opts):
    """Per-axis (lower, upper, fraction) taps, the fractions shaped to broadcast over NHWC."""
    _, in_h, in_w, _ = data.shape
    y0, y1, dy = _float_taps(out_h, in_h, opts.align_corners, opts.half_pixel_centers)
    x0, x1, dx = _float_taps(out_w, in_w, opts.align_corners, opts.half_pixel_centers)
    return (y0, y1, dy.reshape(1, -1, 1, 1)), (x0, x1, dx.reshape(1, 1, -1, 1))


def _resize_float(data: np.ndarray, out_h: int, out_w: int, opts) -> np.ndarray:
    """Float32 bilinear, separably: along x, then along y.

    LiteRT sums the four weighted corners; the separable order differs only by float32
    rounding (well inside the float tolerance) and reads each input row once.
    """
    f32 = np.float32
    (y0, y1, dy), (x0, x1, dx) = _float_weights(data, out_h, out_w, opts)
    rows = data[:, :, x0] * (f32(1) - dx) + data[:, :, x1] * dx
    return (rows[:, y0] * (f32(1) - dy) + rows[:, y1] * dy).astype(f32)


def _resize_uint8(data: np.ndarray, out_h: int, out_w: int, opts) -> np.ndarray:
    """optimized ResizeBilinearGenericSmallChannel<uint8_t>: float32 corners summed in order, + 0.5, truncated.

    The weights are float32 products; the sum runs (y0,x0), (y0,x1), (y1,x0), (y1,x1),
    so it is computed exactly that way to stay bit-exact.
    """
    f32 = np.float32
    (y0, y1, dy), (x0, x1, dx) = _float_weights(data, out_h, out_w, opts)
    weights = ((f32(1) - dy) * (f32(1) - dx), (f32(1) - dy) * dx, dy * (f32(1) - dx), dy * dx)
    top, bottom = data[:, y0], data[:, y1]
    corners = (top[:, :, x0], top[:, :, x1], bottom[:, :, x0], bottom[:, :, x1])
    total = np.zeros((data.shape[0], out_h, out_w, data.shape[3]), dtype=f32)
    for corner, weight in zip(corners, weights):
        total += corner.astype(f32) * weight
    return (total + f32(0.5)).astype(np.uint8)


def _integer_taps(out_size: int, in_size: int, align_corners: bool, half_pixel: bool):
    """ComputeInterpolationValuesInteger: positions in 1/1024ths; (lower, upper, upper weight)."""
    if align_corners and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    else:
        scale = ((1 << 10) * in_size + out_size // 2) // out_size
    pos = np.arange(out_size, dtype=np.int64) * scale
    if half_pixel:
        pos = pos + scale // 2 - (1 << 9)
    lower = np.maximum(_trunc_div(pos, 1 << 10), 0)
    upper = np.minimum(_trunc_div(pos + (1 << 10) - 1, 1 << 10), in_size - 1)
    return lower, upper, pos - (1 << 10) * lower


def _trunc_div(a: np.ndarray, b: int) -> np.ndarray:
    """C++ integer division by a positive constant (rounds toward zero)."""
    return np.sign(a) * (np.abs(a) // b)


def _resize_int8(data: np.ndarray, out_h: int, out_w: int, opts) -> np.ndarray:
    """reference_ops::ResizeBilinearInteger (LiteRT's int8 kernel): 10-bit weights, a 20-bit sum.

    Integer sums do not depend on order, so the corners are combined separably (x, then y);
    |sum| < 2**27 fits int32.
    """
    _, in_h, in_w, _ = data.shape
    y0, y1, wy = _integer_taps(out_h, in_h, opts.align_corners, opts.half_pixel_centers)
    x0, x1, wx = _integer_taps(out_w, in_w, opts.align_corners, opts.half_pixel_centers)
    one = 1 << 10
    wy = wy.astype(np.int32).reshape(1, -1, 1, 1)
    wx = wx.astype(np.int32).reshape(1, 1, -1, 1)
    wide = data.astype(np.int32)
    rows = wide[:, :, x0] * (one - wx) + wide[:, :, x1] * wx
    total = rows[:, y0] * (one - wy) + rows[:, y1] * wy
    # Double-rounding build: (total +- 2**19) / 2**20 in C++, i.e. round half away from zero, which is
    # floor((total + 2**19 - [total < 0]) / 2**20).
    total += (1 << 19) - (total < 0)
    return (total >> 20).astype(np.int8)


_KERNELS = {"FLOAT32": _resize_float, "UINT8": _resize_uint8, "INT8": _resize_int8}


def _resize_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    opts = node.options
    check(not (opts.half_pixel_centers and opts.align_corners),
          "RESIZE_BILINEAR: if half_pixel_centers is True, align_corners must be False")
    out_h, out_w = _output_size(ctx.input(node, 1))
    out.data = _KERNELS[x.type](x.data, out_h, out_w, opts)


def register(resolver) -> None:
    # op_version.cc: v2 int8, v3 half_pixel_centers; v4 (int16) is not implemented.
    resolver.add_builtin("RESIZE_BILINEAR", Registration(prepare=_resize_prepare, invoke=_resize_invoke), 1, 3)
