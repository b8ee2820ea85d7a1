"""2-D pooling: AVERAGE_POOL_2D and MAX_POOL_2D over NHWC tensors (float32, uint8, int8).

Both reductions are separable: every window is folded along the height (one strided view of whole
rows per filter row), then the row results along the width, so a window of fh x fw taps costs
(fh - 1) + (fw - 1) passes instead of fh * fw - 1. Max is order-independent; the int32 sums of the average are
exact in any order, and the float32 sums differ from LiteRT's order only by rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import EIGHT_BIT, check
from accelsim.runtime.kernels.conv.geometry import Geometry, out_size_and_padding
from accelsim.runtime.quant import activation_name, activation_range_quantized
from accelsim.runtime.registration import Registration


@dataclass(frozen=True)
class _PoolPlan:
    """Per-node constants computed in prepare."""

    buffer: np.ndarray | None  # the padded input (padding written once), when the windows reach outside it
    interior: np.ndarray | None  # the buffer's view where the input goes
    row_taps: tuple[tuple[slice, ...], ...]  # per filter row, its (N, out_h, columns, C) view of the padded input
    column_taps: tuple[tuple[slice, ...], ...]  # per filter column, its (N, out_h, out_w, C) view of the row folds
    counts_ok: bool  # no window lies entirely in the padding
    divisor: np.ndarray | np.number  # in-bounds taps per output pixel (out_h, out_w, 1), or their common value
    table: np.ndarray | None  # quantized average with one divisor: output per (sum - table_base)
    table_base: int
    act_min: float | int
    act_max: float | int
    clamps: bool  # whether the activation range is narrower than the type's
    max_floor: float | int  # where MAX_POOL's running max starts
    max_clamps: bool  # whether [max_floor, act_max] is narrower than the type's range (always, for float)


def _valid_taps(out_size: int, stride: int, pad: int, filter_size: int, in_size: int) -> np.ndarray:
    """For each output position, how many of the window's taps fall inside the input."""
    origin = np.arange(out_size) * stride - pad
    start = np.maximum(0, -origin)
    end = np.minimum(filter_size, in_size - origin)
    return np.maximum(end - start, 0)


def _out_size_and_padding(padding: int, in_size: int, filter_size: int, stride: int) -> tuple[int, int]:
    """padding.h arithmetic; a VALID window wider than the input gives size 0, as ComputePaddingHeightWidth does.

    pooling.cc ignores ComputePaddingHeightWidthChecked's status, so such a pool yields an
    empty output instead of failing (the width is computed first; if it fails, so does the height).
    """
    if padding == 1 and stride > 0 and in_size + stride - filter_size < 0:
        return 0, 0
    return out_size_and_padding(padding, in_size, filter_size, stride, 1)


def _activation_range(code: int, out) -> tuple[float | int, float | int]:
    """CalculateActivationRange(Quantized): the fused activation as a clamp; other codes do not clamp.

    Float: kernel_util.h bounds NONE and RELU by numeric_limits<float>::lowest() / max(), and the
    optimized pooling kernels clamp every output to the range, so +-inf come out as +-FLT_MAX.
    """
    name = activation_name(code)
    if name not in ("RELU", "RELU6", "RELU_N1_TO_1"):
        name = "NONE"
    if out.type in EIGHT_BIT:
        return activation_range_quantized(name, out.scale, out.zero_point, out.dtype)
    big = float(np.finfo(np.float32).max)
    return {"NONE": (-big, big), "RELU": (0.0, big), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}[name]


def _average_table(divisor: int, dtype, act_min: int, act_max: int) -> tuple[np.ndarray, int]:
    """Every possible window sum's output, for one divisor: (table, smallest sum).

    integer_ops/pooling.h: (sum +- divisor / 2) / divisor, rounding half away from zero, then the clamp.
    """
    info = np.iinfo(dtype)
    sums = np.arange(divisor * int(info.min), divisor * int(info.max) + 1, dtype=np.int64)
    rounded = (np.abs(sums) + divisor // 2) // divisor * np.sign(sums)
    return np.clip(rounded, act_min, act_max).astype(dtype), divisor * int(info.min)


def _pool_prepare(ctx, node, fill_max: bool) -> None:
    check(len(node.inputs) == 1 and len(node.outputs) == 1, "pooling takes one input and one output")
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    check(len(x.shape) == 4, f"input must be 4-D NHWC, got shape {list(x.shape)}")
    check(x.type == out.type, f"input type {x.type} differs from output type {out.type}")
    check(x.type in ("FLOAT32", *EIGHT_BIT), f"type {x.type} is not supported (FLOAT32, UINT8, INT8)")
    o = node.options
    check(o.filter_height > 0 and o.filter_width > 0,
          f"filter size {o.filter_height}x{o.filter_width} must be positive")
    batch, height, width, channels = x.shape
    out_w, pad_left = _out_size_and_padding(o.padding, width, o.filter_width, o.stride_w)
    out_h, pad_top = _out_size_and_padding(o.padding, height, o.filter_height, o.stride_h) if out_w else (0, 0)
    # The windows reach (out - 1) * stride + filter - 1 - pad; pad the far side up to there.
    reach_h, reach_w = (out_h - 1) * o.stride_h + o.filter_height, (out_w - 1) * o.stride_w + o.filter_width
    pad_bottom, pad_right = max(0, reach_h - pad_top - height), max(0, reach_w - pad_left - width)
    rows = _valid_taps(out_h, o.stride_h, pad_top, o.filter_height, height)
    cols = _valid_taps(out_w, o.stride_w, pad_left, o.filter_width, width)
    counts = (rows[:, None] * cols[None, :])[..., None]
    act_min, act_max = _activation_range(o.fused_activation_function, out)
    quantized = out.type in EIGHT_BIT
    info = np.iinfo(out.dtype) if quantized else np.finfo(np.float32)
    # integer_ops pooling.h starts MAX_POOL's running max at the activation minimum, optimized_ops
    # MaxPool (float) at numeric_limits<float>::lowest() (so -inf comes out as lowest): a final
    # clamp from there gives the same result.
    lowest = info.min
    type_min, type_max = (lowest, info.max) if quantized else (-np.inf, np.inf)
    clamps = act_min > type_min or act_max < type_max
    max_floor = max(act_min, lowest)
    divisor = counts.astype(np.int32 if quantized else np.float32)
    if counts.size and (counts == counts.flat[0]).all():
        divisor = divisor.flat[0]
    table, table_base = None, 0
    if quantized and np.ndim(divisor) == 0 and divisor > 0:
        table, table_base = _average_table(int(divisor), out.dtype, act_min, act_max)
    buffer = interior = None
    row_taps = column_taps = ()
    if out_h and out_w:
        if pad_top or pad_bottom or pad_left or pad_right:
            # Padding never wins a max (lowest) and adds nothing to a sum (0).
            buffer = np.full((batch, height + pad_top + pad_bottom, width + pad_left + pad_right, channels),
                             lowest if fill_max else 0, x.dtype)
            interior = buffer[:, pad_top:pad_top + height, pad_left:pad_left + width, :]
        w_span, h_span = (out_w - 1) * o.stride_w + 1, (out_h - 1) * o.stride_h + 1
        row_taps = tuple((slice(None), slice(fy, fy + h_span, o.stride_h), slice(0, reach_w))
                         for fy in range(o.filter_height))
        column_taps = tuple((slice(None), slice(None), slice(fx, fx + w_span, o.stride_w))
                            for fx in range(o.filter_width))
    node.user_data = _PoolPlan(buffer, interior, row_taps, column_taps, bool(np.all(counts > 0)), divisor, table,
                               table_base, act_min, act_max, bool(clamps), max_floor,
                               bool(not quantized or max_floor > type_min or act_max < type_max))
    ctx.resize_tensor(out, (batch, out_h, out_w, channels))


def _average_prepare(ctx, node) -> None:
    _pool_prepare(ctx, node, fill_max=False)


def _max_prepare(ctx, node) -> None:
    _pool_prepare(ctx, node, fill_max=True)


def _fold(op, views, dtype=None) -> np.ndarray:
    """op(op(v0, v1), v2)... into a new array (a copy of the only view, if there is one)."""
    if len(views) == 1:
        return np.array(views[0], dtype=dtype)
    acc = op(views[0], views[1], dtype=dtype)
    for view in views[2:]:
        op(acc, view, out=acc)
    return acc


def _window_fold(x: np.ndarray, plan: _PoolPlan, op, dtype) -> np.ndarray:
    """`op` over every window (N, out_h, out_w, C), along the height first (long runs): a new `dtype` array."""
    padded = x
    if plan.buffer is not None:
        np.copyto(plan.interior, x)
        padded = plan.buffer
    rows = _fold(op, [padded[index] for index in plan.row_taps], dtype)
    return _fold(op, [rows[index] for index in plan.column_taps])


def _average_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    plan: _PoolPlan = node.user_data
    check(plan.counts_ok, "a pooling window lies entirely in the padding")
    if not plan.row_taps:
        out.data = np.zeros(out.shape, out.dtype)
        return
    if plan.table is not None:
        # |sum| <= taps * 255 fits int32; the table holds the rounded, clamped average of every sum.
        acc = _window_fold(x.data, plan, np.add, np.int32)
        acc -= plan.table_base
        out.data = plan.table.take(acc)
        return
    if x.type in EIGHT_BIT:
        # integer_ops/pooling.h: (acc +- count/2) / count, rounding half away from zero.
        acc = _window_fold(x.data, plan, np.add, np.int32)
        negative = acc < 0
        avg = np.abs(acc)
        avg += plan.divisor // 2
        avg //= plan.divisor
        np.negative(avg, out=avg, where=negative)
    else:
        avg = _window_fold(x.data, plan, np.add, np.float32)
        avg /= plan.divisor
    if plan.clamps:
        avg.clip(plan.act_min, plan.act_max, out=avg)
    out.data = avg.astype(out.dtype, copy=False)


def _max_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    plan: _PoolPlan = node.user_data
    if not plan.row_taps:
        out.data = np.full(out.shape, plan.max_floor, out.dtype)
        return
    # reference_ops::MaxPool folds std::max(max, x) from the type's lowest value: a NaN never wins
    # (max < NaN is false) and -inf never goes below -FLT_MAX. np.fmax ignores NaNs, and the final
    # fmax with max_floor >= lowest turns an all-NaN window into the clamped lowest value.
    acc = _window_fold(x.data, plan, np.fmax, None)
    if plan.max_clamps:
        np.fmax(acc, plan.max_floor, out=acc)
        np.fmin(acc, plan.act_max, out=acc)
    out.data = acc


# ---------------------------------------------------------------------------------------------
# The specification: plain window reductions (the kernels above implement these; tests/runtime/test_references.py)


def average_pool2d(x: np.ndarray, g: Geometry, act_min, act_max) -> np.ndarray:
    """AVERAGE_POOL_2D: each window's sum over its in-bounds taps divided by their count, then the clamp.

    Float: sum / count (reference_ops::AveragePool). Integer (integer_ops/pooling.h): (sum +- count / 2)
    / count, rounding half away from zero. A window with no tap inside the input is an error there.
    """
    quantized = x.dtype.kind in "iu"
    acc_type = np.int64 if quantized else np.float32
    sums = g.windows(g.padded(x, acc_type)).sum(axis=(3, 4), dtype=acc_type)[..., 0, :]
    counts = g.windows(g.padded(np.ones((1, *x.shape[1:3], 1), np.int64), np.int64)).sum(axis=(3, 4))[..., 0, :]
    check(counts.all(), "a pooling window lies entirely in the padding")
    if quantized:
        mean = np.sign(sums) * ((np.abs(sums) + counts // 2) // counts)
    else:
        mean = sums / counts.astype(np.float32)
    return np.clip(mean, act_min, act_max).astype(x.dtype)


def max_pool2d(x: np.ndarray, g: Geometry, floor, act_max) -> np.ndarray:
    """MAX_POOL_2D: each window's largest in-bounds value (reference_ops::MaxPool folds std::max from `floor`,
    the type's lowest or the activation minimum, so NaN never wins), then clamped to act_max."""
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    taps = g.windows(g.padded(x, x.dtype, fill=lowest))[..., 0, :]
    best = np.fmax.reduce(taps.reshape(*taps.shape[:3], -1, taps.shape[-1]), axis=3)
    return np.fmin(np.fmax(best, floor), act_max).astype(x.dtype)


def _geometry(node, x_shape, out_shape) -> Geometry:
    o = node.options
    pad = tuple(_out_size_and_padding(o.padding, size, f, s)[1]
                for size, f, s in zip(x_shape[1:3], (o.filter_height, o.filter_width), (o.stride_h, o.stride_w)))
    return Geometry((o.stride_h, o.stride_w), (1, 1), (o.filter_height, o.filter_width), out_shape[1:3], pad)


def _average_reference(ctx, node) -> None:
    x, out, plan = ctx.input(node, 0), ctx.output(node, 0), node.user_data
    if 0 in out.shape:
        out.data = np.zeros(out.shape, out.dtype)
        return
    out.data = average_pool2d(x.data, _geometry(node, x.shape, out.shape), plan.act_min, plan.act_max)


def _max_reference(ctx, node) -> None:
    x, out, plan = ctx.input(node, 0), ctx.output(node, 0), node.user_data
    if 0 in out.shape:
        out.data = np.full(out.shape, plan.max_floor, out.dtype)
        return
    out.data = max_pool2d(x.data, _geometry(node, x.shape, out.shape), plan.max_floor, plan.act_max)


def register(resolver) -> None:
    # op_version.cc: v2 adds int8, v3 adds int16 (not implemented).
    resolver.add_builtin("AVERAGE_POOL_2D", Registration(prepare=_average_prepare, invoke=_average_invoke,
                                                         reference=_average_reference, work=work.window), 1, 2)
    resolver.add_builtin("MAX_POOL_2D", Registration(prepare=_max_prepare, invoke=_max_invoke,
                                                     reference=_max_reference, work=work.window), 1, 2)
