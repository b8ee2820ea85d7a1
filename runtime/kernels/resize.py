"""Image resizing over NHWC tensors: RESIZE_BILINEAR (float32, uint8, int8), RESIZE_NEAREST_NEIGHBOR."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, store_plan
from accelsim.runtime.quant import tflite_round, trunc_div
from accelsim.runtime.registration import Registration


def _output_size(size, op: str = "RESIZE_BILINEAR") -> tuple[int, int]:
    values = [int(v) for v in np.asarray(size.data).reshape(-1)]
    check(values[0] > 0 and values[1] > 0, f"{op}: output size must be positive, got {values}")
    return values[0], values[1]


def _check_inputs(ctx, node, op: str, types) -> None:
    """(input, size) -> output: a 4-D input, an INT32 size of 2, one supported type in and out."""
    check(len(node.inputs) == 2 and len(node.outputs) == 1, f"{op} takes (input, size) and one output")
    x, size, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    check(len(x.shape) == 4, f"{op}: input must be 4-D NHWC, got shape {list(x.shape)}")
    check(size.shape == (2,) and size.type == "INT32",
          f"{op}: size must be an INT32 vector of 2, got {size.type}{list(size.shape)}")
    check(x.type in types, f"{op}: type {x.type} is not supported ({', '.join(types)})")
    check(out.type == x.type, f"{op}: output type {out.type} differs from input type {x.type}")


def _resize_output(ctx, node, op: str) -> None:
    """Size the output from a constant size tensor; otherwise it is sized at invoke."""
    x, size, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    if not size.is_constant:
        ctx.set_dynamic(out)
        return
    out_h, out_w = _output_size(size, op)
    ctx.resize_tensor(out, (x.shape[0], out_h, out_w, x.shape[3]))


def _resize_prepare(ctx, node) -> None:
    _check_inputs(ctx, node, "RESIZE_BILINEAR", _KERNELS)
    if ctx.input(node, 1).is_constant:
        opts = node.options
        check(not (opts.half_pixel_centers and opts.align_corners),
              "RESIZE_BILINEAR: if half_pixel_centers is True, align_corners must be False")
    _resize_output(ctx, node, "RESIZE_BILINEAR")
    # A constant size fixes the interpolation taps: compute them once.
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    if out.dynamic:
        node.user_data = None
        return
    kernel, taps = _KERNELS[x.type], _TAPS[x.type](x.shape, out.shape[1], out.shape[2], node.options)
    node.user_data = store_plan(out, lambda: kernel(x.data, taps))


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


def _float_weights(shape, out_h: int, out_w: int, opts):
    """Per-axis (lower, upper, 1 - fraction, fraction) taps, the fractions shaped to broadcast over NHWC."""
    _, in_h, in_w, _ = shape
    y0, y1, dy = _float_taps(out_h, in_h, opts.align_corners, opts.half_pixel_centers)
    x0, x1, dx = _float_taps(out_w, in_w, opts.align_corners, opts.half_pixel_centers)
    dy, dx = dy.reshape(1, -1, 1, 1), dx.reshape(1, 1, -1, 1)
    return (y0, y1, np.float32(1) - dy, dy), (x0, x1, np.float32(1) - dx, dx)


def _resize_float(data: np.ndarray, taps) -> np.ndarray:
    """Float32 bilinear, separably: along x, then along y.

    LiteRT sums the four weighted corners; the separable order differs only by float32
    rounding (well inside the float tolerance) and reads each input row once.
    """
    (y0, y1, ky, dy), (x0, x1, kx, dx) = taps
    rows = data.take(x0, axis=2)
    rows *= kx
    rows += data.take(x1, axis=2) * dx
    out = rows.take(y0, axis=1)
    out *= ky
    out += rows.take(y1, axis=1) * dy
    return out


def _resize_uint8(data: np.ndarray, taps) -> np.ndarray:
    """optimized ResizeBilinearGenericSmallChannel<uint8_t>: float32 corners summed in order, + 0.5, truncated.

    The weights are float32 products; the sum runs (y0,x0), (y0,x1), (y1,x0), (y1,x1),
    so it is computed exactly that way to stay bit-exact.
    """
    f32 = np.float32
    (y0, y1, ky, dy), (x0, x1, kx, dx) = taps
    out_h, out_w = y0.size, x0.size
    weights = (ky * kx, ky * dx, dy * kx, dy * dx)
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
    lower = np.maximum(trunc_div(pos, 1 << 10), 0)
    upper = np.minimum(trunc_div(pos + (1 << 10) - 1, 1 << 10), in_size - 1)
    return lower, upper, pos - (1 << 10) * lower


def _integer_weights(shape, out_h: int, out_w: int, opts):
    """The int8 kernel's gathers and weights (see _resize_int8), from the 10-bit taps along each axis.

    x: both columns' indices (lower, then upper) and their weights tiled over the channels, int32;
    y: both rows' indices and their weights times 2**27 + 1, int64, one per gathered row.
    """
    _, in_h, in_w, channels = shape
    y0, y1, wy = _integer_taps(out_h, in_h, opts.align_corners, opts.half_pixel_centers)
    x0, x1, wx = _integer_taps(out_w, in_w, opts.align_corners, opts.half_pixel_centers)
    x_weights = np.repeat(np.concatenate([(1 << 10) - wx, wx]), channels).astype(np.int32)
    y_weights = (np.concatenate([(1 << 10) - wy, wy]) * _TIE_SCALE).astype(np.int64).reshape(-1, 1)
    return np.concatenate([x0, x1]), x_weights, np.concatenate([y0, y1]), y_weights


# reference_ops::ResizeBilinearInteger divides the 20-bit sum t by 2**20 rounding half away from zero.
# With T = t * (2**27 + 1), floor((T + 2**46) / 2**47) = floor(t / 2**20 + 1/2 + t / 2**47): for
# |t| <= 2**27 the last term is below 2**-20 in magnitude, so it moves no value that is not a tie
# across an integer (those sit at least 2**-20 from one) and breaks every tie toward t's sign.
_TIE_SCALE = (1 << 27) + 1
_TIE_ROUND = np.asarray(np.int64(1 << 46))
_TIE_SHIFT = np.asarray(np.int64(47))


def _resize_int8(data: np.ndarray, taps) -> np.ndarray:
    """reference_ops::ResizeBilinearInteger (LiteRT's int8 kernel): 10-bit weights, a 20-bit sum.

    Integer sums do not depend on order, so the corners are combined separably: both columns of every
    output column in one gather and one multiply (|row sum| <= 2**17, int32), then both rows the same
    way, in int64 with the tie-breaking factor of _TIE_SCALE (|T| < 2**55).
    """
    x01, x_weights, y01, y_weights = taps
    batch, in_h, _, channels = data.shape
    half_w, half_h = x_weights.size // 2, y01.size // 2
    cols = np.multiply(data.take(x01, axis=2).reshape(batch * in_h, -1), x_weights)
    rows = np.add(cols[:, :half_w], cols[:, half_w:]).reshape(batch, in_h, half_w)
    both = np.multiply(rows.take(y01, axis=1), y_weights)
    total = np.add(both[:, :half_h], both[:, half_h:])
    total += _TIE_ROUND
    total >>= _TIE_SHIFT
    return total.astype(np.int8).reshape(batch, half_h, -1, channels)


_KERNELS = {"FLOAT32": _resize_float, "UINT8": _resize_uint8, "INT8": _resize_int8}
_TAPS = {"FLOAT32": _float_weights, "UINT8": _float_weights, "INT8": _integer_weights}


def _resize_invoke(ctx, node) -> None:
    if node.user_data is not None:  # the plan for a constant size
        node.user_data()
        return
    _resize_reference(ctx, node)


@dataclass(frozen=True)
class ResizeOptions:
    """A resize's options (ResizeBilinearOptions, ResizeNearestNeighborOptions)."""

    align_corners: bool = False
    half_pixel_centers: bool = False

    @classmethod
    def of(cls, options) -> ResizeOptions:
        """The flags of a node's parsed options."""
        return cls(bool(options.align_corners), bool(options.half_pixel_centers))


def resize_bilinear(x: np.ndarray, size: tuple[int, int], options: ResizeOptions) -> np.ndarray:
    """RESIZE_BILINEAR (resize_bilinear.cc) of NHWC `x` to `size` (height, width).

    Taps from ComputeInterpolationValues (float32 positions); float32 weights the four corners,
    uint8 sums them in float32 and truncates + 0.5 (ResizeBilinearGenericSmallChannel), int8 takes
    reference_ops::ResizeBilinearInteger's 10-bit weights. Raises KernelError when both flags are set.
    """
    check(not (options.half_pixel_centers and options.align_corners),
          "RESIZE_BILINEAR: if half_pixel_centers is True, align_corners must be False")
    kind = x.dtype.name.upper()
    return _KERNELS[kind](x, _TAPS[kind](x.shape, size[0], size[1], options))


def _resize_reference(ctx, node) -> None:
    """`resize_bilinear` on a node: its size tensor and options (the general path of the invoke)."""
    ctx.output(node, 0).data = resize_bilinear(ctx.input(node, 0).data, _output_size(ctx.input(node, 1)),
                                               ResizeOptions.of(node.options))


# ---------------------------------------------------------------------------------------------
# RESIZE_NEAREST_NEIGHBOR

_NEAREST = "RESIZE_NEAREST_NEIGHBOR"
_NEAREST_TYPES = ("FLOAT32", "UINT8", "INT8", "INT16", "INT32")


def _nearest_prepare(ctx, node) -> None:
    _check_inputs(ctx, node, _NEAREST, _NEAREST_TYPES)
    _resize_output(ctx, node, _NEAREST)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    node.user_data = None if out.dynamic else _nearest_taps(x, out.shape[1], out.shape[2], node.options)


def _nearest_taps(x, out_h: int, out_w: int, opts) -> tuple[np.ndarray, np.ndarray]:
    """The input row and column each output row and column copies."""
    _, in_h, in_w, _ = x.shape
    return _nearest_indices(out_h, in_h, x.type, opts), _nearest_indices(out_w, in_w, x.type, opts)


def _nearest_float(out_size: int, in_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """reference_ops GetNearestNeighbor: (i + offset) * scale in float32, rounded (align_corners) or floored."""
    f32 = np.float32
    scale = _float_scale(in_size, out_size, align_corners)
    pos = (np.arange(out_size, dtype=f32) + f32(0.5 if half_pixel else 0.0)) * scale
    index = tflite_round(pos) if align_corners else np.floor(pos)
    index = np.minimum(index.astype(np.int64), in_size - 1)
    return np.maximum(index, 0) if half_pixel else index


def _nearest_fixed_point(out_size: int, in_size: int) -> np.ndarray:
    """optimized_ops 8-bit ResizeNearestNeighbor: a 16.16 fixed-point scale (in << 16) / out + 1, floored."""
    scale = (in_size << 16) // out_size + 1
    return np.minimum((np.arange(out_size, dtype=np.int64) * scale) >> 16, in_size - 1)


def _nearest_indices(out_size: int, in_size: int, x_type: str, opts) -> np.ndarray:
    # resize_nearest_neighbor.cc: 8-bit types without align_corners or half_pixel_centers take the
    # optimized fixed-point kernel; everything else the float reference.
    if x_type in ("UINT8", "INT8") and not (opts.align_corners or opts.half_pixel_centers):
        return _nearest_fixed_point(out_size, in_size)
    return _nearest_float(out_size, in_size, bool(opts.align_corners), bool(opts.half_pixel_centers))


def resize_nearest_neighbor(x: np.ndarray, size: tuple[int, int], options: ResizeOptions) -> np.ndarray:
    """RESIZE_NEAREST_NEIGHBOR (resize_nearest_neighbor.cc) of NHWC `x` to `size` (height, width): each
    output pixel copies the input pixel _nearest_indices picks (8-bit without flags: the optimized
    kernel's 16.16 fixed-point scale; otherwise reference_ops GetNearestNeighbor in float32)."""
    _, in_h, in_w, _ = x.shape
    kind = x.dtype.name.upper()
    rows = _nearest_indices(size[0], in_h, kind, options)
    return x.take(_nearest_indices(size[1], in_w, kind, options), axis=2).take(rows, axis=1)


def _nearest_reference(ctx, node) -> None:
    """`resize_nearest_neighbor` on a node: its size tensor and options."""
    ctx.output(node, 0).data = resize_nearest_neighbor(ctx.input(node, 0).data,
                                                       _output_size(ctx.input(node, 1), _NEAREST),
                                                       ResizeOptions.of(node.options))


def _nearest_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    taps = node.user_data
    if taps is None:
        taps = _nearest_taps(x, *_output_size(ctx.input(node, 1), _NEAREST), node.options)
    rows, cols = taps
    # Columns first: the row gather then copies whole output rows.
    ctx.output(node, 0).data = x.data.take(cols, axis=2).take(rows, axis=1)


def register(resolver) -> None:
    # op_version.cc: v2 int8, v3 half_pixel_centers; v4 (int16) is not implemented.
    resolver.add_builtin("RESIZE_BILINEAR", Registration(prepare=_resize_prepare, invoke=_resize_invoke,
                                                         reference=_resize_reference, work=work.per_output(4)), 1, 3)
    # RESIZE_NEAREST_NEIGHBOR: v2 int8, v3 align_corners/half_pixel_centers, v4 int16.
    resolver.add_builtin(_NEAREST, Registration(prepare=_nearest_prepare, invoke=_nearest_invoke,
                                                reference=_nearest_reference, work=work.move), 1, 4)
