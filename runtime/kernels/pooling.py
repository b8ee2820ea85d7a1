"""2-D pooling: AVERAGE_POOL_2D and MAX_POOL_2D over NHWC tensors (float32, uint8, int8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runtime.kernels.common import check
from runtime.kernels.conv import out_size_and_padding
from runtime.quant import activation_name, activation_range_quantized
from runtime.resolver import Registration

_QUANTIZED = ("UINT8", "INT8")


@dataclass(frozen=True)
class _PoolPlan:
    """Per-node constants computed in prepare."""

    pads: tuple[int, int, int, int]  # top, bottom, left, right
    taps: tuple[tuple[slice, ...], ...]  # per filter tap, its (N, out_h, out_w, C) view of the padded input
    counts_ok: bool  # no window lies entirely in the padding
    divisor: np.ndarray | np.number  # in-bounds taps per output pixel (out_h, out_w, 1), or their common value
    lowest: float | int  # MAX_POOL's padding value
    act_min: float | int
    act_max: float | int
    clamps: bool  # whether the activation range is narrower than the type's
    max_floor: float | int  # where MAX_POOL's running max starts
    max_clamps: bool  # whether [max_floor, act_max] is narrower than the type's range


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
    """CalculateActivationRange(Quantized): the fused activation as a clamp; other codes do not clamp."""
    name = activation_name(code)
    if name not in ("RELU", "RELU6", "RELU_N1_TO_1"):
        name = "NONE"
    if out.type in _QUANTIZED:
        return activation_range_quantized(name, out.scale, out.zero_point, out.dtype)
    lo, hi = {"NONE": (-np.inf, np.inf), "RELU": (0.0, np.inf), "RELU6": (0.0, 6.0),
              "RELU_N1_TO_1": (-1.0, 1.0)}[name]
    return lo, hi


def _pool_prepare(ctx, node) -> None:
    check(len(node.inputs) == 1 and len(node.outputs) == 1, "pooling takes one input and one output")
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    check(len(x.shape) == 4, f"input must be 4-D NHWC, got shape {list(x.shape)}")
    check(x.type == out.type, f"input type {x.type} differs from output type {out.type}")
    check(x.type in ("FLOAT32", *_QUANTIZED), f"type {x.type} is not supported (FLOAT32, UINT8, INT8)")
    o = node.options
    check(o.filter_height > 0 and o.filter_width > 0,
          f"filter size {o.filter_height}x{o.filter_width} must be positive")
    batch, height, width, channels = x.shape
    out_w, pad_left = _out_size_and_padding(o.padding, width, o.filter_width, o.stride_w)
    out_h, pad_top = _out_size_and_padding(o.padding, height, o.filter_height, o.stride_h) if out_w else (0, 0)
    # The windows reach (out - 1) * stride + filter - 1 - pad; pad the far side up to there.
    pad_bottom = max(0, (out_h - 1) * o.stride_h + o.filter_height - pad_top - height)
    pad_right = max(0, (out_w - 1) * o.stride_w + o.filter_width - pad_left - width)
    rows = _valid_taps(out_h, o.stride_h, pad_top, o.filter_height, height)
    cols = _valid_taps(out_w, o.stride_w, pad_left, o.filter_width, width)
    counts = (rows[:, None] * cols[None, :])[..., None]
    act_min, act_max = _activation_range(o.fused_activation_function, out)
    quantized = out.type in _QUANTIZED
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
    h_span, w_span = (out_h - 1) * o.stride_h + 1, (out_w - 1) * o.stride_w + 1
    taps = () if out_h == 0 or out_w == 0 else tuple(
        (slice(None), slice(fy, fy + h_span, o.stride_h), slice(fx, fx + w_span, o.stride_w), slice(None))
        for fy in range(o.filter_height) for fx in range(o.filter_width))
    node.user_data = _PoolPlan((pad_top, pad_bottom, pad_left, pad_right), taps, bool(np.all(counts > 0)), divisor,
                               lowest, act_min, act_max, bool(clamps), max_floor,
                               bool(max_floor > type_min or act_max < type_max))
    ctx.resize_tensor(out, (batch, out_h, out_w, channels))


def _windows(x: np.ndarray, plan: _PoolPlan, fill):
    """Yield, per filter tap, the (N, out_h, out_w, C) strided view of the padded input under that tap."""
    padded = x
    top, bottom, left, right = plan.pads
    if plan.taps and (top or bottom or left or right):
        n, h, w, c = x.shape
        padded = np.full((n, h + top + bottom, w + left + right, c), fill, x.dtype)
        padded[:, top:top + h, left:left + w, :] = x
    for index in plan.taps:
        yield padded[index]


def _average_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    plan: _PoolPlan = node.user_data
    check(plan.counts_ok, "a pooling window lies entirely in the padding")
    quantized = x.type in _QUANTIZED
    acc_dtype = np.int32 if quantized else np.float32  # |sum| <= taps * 255 fits int32
    acc = None
    for window in _windows(x.data, plan, 0):
        if acc is None:
            acc = np.add(window, acc_dtype(0), dtype=acc_dtype)  # 0 + first tap: a +0.0 start, as the C++
        else:
            acc += window
    if acc is None:
        acc = np.zeros(out.shape, dtype=acc_dtype)
    if quantized:
        # integer_ops/pooling.h: (acc +- count/2) / count, rounding half away from zero.
        negative = acc < 0
        avg = np.abs(acc)
        avg += plan.divisor // 2
        avg //= plan.divisor
        np.negative(avg, out=avg, where=negative)
    else:
        avg = acc / plan.divisor
    if plan.clamps:
        avg.clip(plan.act_min, plan.act_max, out=avg)
    out.data = avg.astype(out.dtype, copy=False)


def _max_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    plan: _PoolPlan = node.user_data
    # reference_ops::MaxPool folds std::max(max, x) from the type's lowest value: a NaN never wins
    # (max < NaN is false) and -inf never goes below -FLT_MAX. np.fmax from `lowest` is that fold.
    acc = np.full(out.shape, plan.lowest, dtype=out.dtype)
    for window in _windows(x.data, plan, plan.lowest):
        np.fmax(acc, window, out=acc)
    if plan.max_clamps:
        acc.clip(plan.max_floor, plan.act_max, out=acc)
    out.data = acc


def register(resolver) -> None:
    # op_version.cc: v2 adds int8, v3 adds int16 (not implemented).
    resolver.add_builtin("AVERAGE_POOL_2D", Registration(prepare=_pool_prepare, invoke=_average_invoke), 1, 2)
    resolver.add_builtin("MAX_POOL_2D", Registration(prepare=_pool_prepare, invoke=_max_invoke), 1, 2)
