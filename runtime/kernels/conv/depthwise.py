"""DEPTHWISE_CONV_2D's fast kernel, implementing `reference.depthwise_conv2d`: one einsum over every kernel
tap of a plan-owned padded copy of the input (tapsum.TapSum); quantized, its sums are exact in float32
or float64 under the same bound as CONV_2D's GEMM, with the input zero point folded into the bias where
that stays exact, and the output stage precomputed with a constant bias (stage.ExactStage).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime.kernels.common import EIGHT_BIT, check, is_known
from accelsim.runtime.kernels.conv.checks import check_types, filter_zero_point
from accelsim.runtime.kernels.conv.geometry import Geometry
from accelsim.runtime.kernels.conv.stage import (
    ExactStage,
    FloatStage,
    Requantizer,
    accumulator_bound,
    channel_bounds,
    depthwise_int8_rounding,
    depthwise_uint8_rounding,
    finish_float,
    finish_quantized,
    fused_activation,
    gemm_dtype,
    precomputed_stage,
    read_bias,
    requantizer,
)
from accelsim.runtime.kernels.conv.tapsum import TapSum


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


def depthwise_prepare(ctx, node) -> None:
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
    plan = _DepthwisePlan(x.type in EIGHT_BIT, act)
    taps = None  # quantized: the zero-point-free weights [kh, kw, out_c] in int64, when known
    check_types(op, plan.quantized, x, f, b, out, cout, "4/6")
    out_shape = (x.shape[0], *geometry.out_hw, cout)
    if ctx.shapes_only:  # nothing will invoke: no weights, stages or tap sums to prepare
        ctx.resize_tensor(out, out_shape)
        return
    if plan.quantized:
        plan.input_zp = x.zero_point
        plan.filter_zp = filter_zero_point(op, f)
        rounding = node.numerics.requant_rounding(depthwise_int8_rounding(cout) if x.type == "INT8"
                                                  else depthwise_uint8_rounding(geometry.out_hw[1], cout))
        taps = f.data[0].astype(np.int64) - plan.filter_zp if is_known(f) else None
        # Tap sums of integers: float32 where every partial sum stays below 2**24 (gemm_dtype), else float64.
        plan.dtype = gemm_dtype(x, plan.input_zp, taps, (0, 1))
        plan.requant = requantizer(op, x, f, b, out, act, cout, channel_axis=3, rounding=rounding,
                                   float_product=x.type == "UINT8",
                                   acc_bound=accumulator_bound(x, plan.input_zp, taps, (0, 1), b))
    if 0 not in out_shape:
        pixels = out_shape[0] * out_shape[1] * out_shape[2]
        plan.stage = precomputed_stage(plan, x, b, cout, pixels, taps, axis=(0, 1))
        if plan.stage is not None and plan.quantized:
            _fold_zero_point(plan, x, b, taps, pixels)
        pad = 0 if plan.folded is None else plan.input_zp
        plan.taps = TapSum.of(geometry, x.shape, cout, cout // cin, plan.dtype, pad)
        if is_known(f):
            plan.weights = plan.taps.weights(f.data, plan.filter_zp, plan.dtype)
    node.user_data = plan
    ctx.resize_tensor(out, out_shape)


def depthwise_invoke(ctx, node) -> None:
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
        out.data = finish_quantized(acc, read_bias(b, np.int64), plan.requant)
    else:
        out.data = finish_float(acc, read_bias(b, np.float32), plan.activation)
