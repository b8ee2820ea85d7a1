"""CONV_2D's fast kernel, implementing `reference.conv2d`: im2col (or phased im2col for stride-1 dilated
windows, or PlanarPatches for few input channels) times the weight matrix through BLAS.

Quantized, the GEMM multiplies (x - input_zp) by (w - filter_zp) in float32 when that is exact for the
node's weights, else in float64 (exact below 2**53); the integer accumulators then go through the
output stage, which prepare folds with a constant bias into one exact float64 multiply-add where it
can (stage.ExactStage), with the input zero point folded into the bias where that stays exact, and
for small pointwise convs into the GEMM itself (scaled.ScaledGemm). Which rounding the stage uses
comes from the node's numerics profile (runtime/numerics.py); only LiteRT's takes the folded forms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime.kernels.common import EIGHT_BIT, check, is_known
from accelsim.runtime.kernels.conv.checks import check_types, filter_zero_point
from accelsim.runtime.kernels.conv.geometry import Geometry
from accelsim.runtime.kernels.conv.im2col import im2col, phased_im2col, phases
from accelsim.runtime.kernels.conv.planar import PlanarPatches
from accelsim.runtime.kernels.conv.scaled import ScaledGemm
from accelsim.runtime.kernels.conv.stage import (
    OPTIMIZED_ROUNDING,
    REFERENCE_ROUNDING,
    ExactStage,
    FloatStage,
    Requantizer,
    accumulator_bound,
    channel_bounds,
    finish_float,
    finish_quantized,
    fused_activation,
    gemm_dtype,
    precomputed_stage,
    read_bias,
    requantizer,
)


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
    phases: tuple | None = None  # im2col.phases, for an ungrouped dilated conv with unit strides
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


def conv_prepare(ctx, node) -> None:
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
    plan = _ConvPlan(geometry, groups, x.type in EIGHT_BIT, act)
    check_types(op, plan.quantized, x, f, b, out, cout, "2/5")
    out_shape = (x.shape[0], *geometry.out_hw, cout)
    if ctx.shapes_only:  # nothing will invoke: no weights, stages or patches to prepare
        ctx.resize_tensor(out, out_shape)
        return
    exact = None  # quantized: the zero-point-free weights in float64, when known
    if plan.quantized:
        plan.input_zp = x.zero_point
        plan.filter_zp = filter_zero_point(op, f)
        # conv.cc: ungrouped int8/uint8 run optimized_ops (im2col + cpu_backend_gemm -> ruy); grouped
        # convolutions fall back to the reference kernels.
        rounding = node.numerics.requant_rounding(OPTIMIZED_ROUNDING if groups == 1 else REFERENCE_ROUNDING)
        exact = _conv_weights(f.data, groups, np.float64, plan.filter_zp) if is_known(f) else None
        plan.dtype = gemm_dtype(x, plan.input_zp, exact, axis=1)
        plan.weights = None if exact is None else exact.astype(plan.dtype)
        plan.requant = requantizer(op, x, f, b, out, act, cout, channel_axis=0, rounding=rounding,
                                   float_product=x.type == "UINT8",
                                   acc_bound=accumulator_bound(x, plan.input_zp, exact, 1, b))
    elif is_known(f):
        plan.weights = _conv_weights(f.data, groups, np.float32, 0)
    plan.empty = 0 in out_shape
    if not plan.empty:
        pixels = out_shape[0] * out_shape[1] * out_shape[2]
        if groups == 1 and _planar_pays(geometry, x.shape):
            plan.planar = PlanarPatches.of(geometry, x.shape, plan.dtype)
            pixels = plan.planar.patches.shape[1]  # the stage runs on the GEMM's wider rows, before the crop
        elif groups == 1 and geometry.stride == (1, 1) and geometry.dilation != (1, 1):
            plan.phases = phases(geometry)
        plan.stage = precomputed_stage(plan, x, b, cout, pixels, exact, axis=1)
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


def conv_invoke(ctx, node) -> None:
    plan: _ConvPlan = node.user_data
    out = ctx.output(node, 0)
    if plan.empty:
        out.data = np.zeros(out.shape, out.dtype)
        return
    x = ctx.input(node, 0).data
    if plan.scaled is not None:
        out.data = plan.scaled(x).reshape(out.shape)
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
        y = finish_quantized(acc, read_bias(ctx.input(node, 2), np.int64), plan.requant)
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
        return phased_im2col(plan.geometry, xp, plan.phases)[0] @ w[0]
    if plan.groups == 1:
        return im2col(plan.geometry, xp, 1)[0] @ w[0]
    cols = im2col(plan.geometry, xp, plan.groups)
    return np.matmul(cols, w).transpose(1, 0, 2).reshape(cols.shape[1], -1)
