"""The conv family's specification: plain NumPy functions that take and return arrays.

Every fast path of this package (conv2d.py with im2col.py, planar.py and scaled.py; depthwise.py with
tapsum.py; stage.ExactStage and stage.FloatStage) implements one of these, and
tests/runtime/test_references.py checks that property; `Interpreter(reference=True)` runs these
alone. The rules are TFLite's reference kernels: reference_ops::Conv and
reference_integer_ops::ConvPerChannel (conv.h), the DepthwiseConv kernels (depthwiseconv_float.h,
depthwiseconv_uint8.h, integer_ops/depthwise_conv.h) and the output stage of kernel_util.cc and
common.h; which rounding a quantized stage uses is the Requantizer's (LiteRT's on x86 by default,
see stage.py and runtime/numerics.py).
"""

from __future__ import annotations

import numpy as np

from accelsim.runtime.kernels.conv.geometry import Geometry
from accelsim.runtime.kernels.conv.stage import FLOAT_RANGES, Requantizer


def output_stage(acc: np.ndarray, bias: np.ndarray | None, stage: str | Requantizer) -> np.ndarray:
    """acc + bias (channels last), then the output stage.

    stage: a float op's fused activation name (a clamp to kernel_util.cc CalculateActivationRange,
    FLOAT_RANGES), or a quantized op's Requantizer: its rounding of acc * multiplier * 2**(shift - 31),
    plus the output zero point, clamped to the activation range (CalculateActivationRangeQuantized).
    """
    if bias is not None:
        acc = acc + bias
    if isinstance(stage, str):
        lo, hi = FLOAT_RANGES[stage]
        return np.clip(acc, lo, hi).astype(np.float32)
    y = stage.rounding(acc, stage.multiplier, stage.shift) + stage.zero_point
    return np.clip(y, stage.act_min, stage.act_max).astype(stage.dtype)


def conv2d(x, w, b, geometry: Geometry, stage: str | Requantizer, input_zp: int = 0, filter_zp: int = 0):
    """CONV_2D: out[n, y, x, o] = output_stage(sum of (x - input_zp) * (w[o] - filter_zp) over o's window, b).

    x [batch, h, w, in], w [out, kh, kw, in / groups]: with fewer weight channels than input channels
    the conv is grouped (conv.cc v6), output channel o reading group o // (out / groups). Padded pixels
    read as x == input_zp. Quantized sums are exact in int64; float sums run in float32.
    """
    acc_type = np.float32 if isinstance(stage, str) else np.int64
    groups = x.shape[3] // w.shape[3]
    windows = geometry.windows(geometry.padded(x, acc_type, input_zp), groups)  # [n, oh, ow, kh, kw, g, c]
    out, kh, kw, cg = w.shape
    taps = (w.astype(acc_type) - filter_zp).reshape(groups, out // groups, kh, kw, cg)
    acc = np.einsum("nyxhwgc,gohwc->nyxgo", windows, taps)
    return output_stage(acc.reshape(*acc.shape[:3], out), b, stage)


def depthwise_conv2d(x, w, b, geometry: Geometry, stage: str | Requantizer, input_zp: int = 0,
                     filter_zp: int = 0):
    """DEPTHWISE_CONV_2D: out[n, y, x, c*m + j] = output_stage(sum of (x[c] - input_zp) * (w[c*m + j] - filter_zp), b).

    x [batch, h, w, c], w [1, kh, kw, c * m]: the multiplier m comes from the shapes
    (depthwise_conv.cc ComputeDepthMultiplier), not from the options.
    """
    acc_type = np.float32 if isinstance(stage, str) else np.int64
    windows = geometry.windows(geometry.padded(x, acc_type, input_zp))[..., 0, :]  # [n, oh, ow, kh, kw, c]
    kh, kw, channels = w.shape[1:]
    taps = (w[0].astype(acc_type) - filter_zp).reshape(kh, kw, x.shape[3], channels // x.shape[3])
    acc = np.einsum("nyxhwc,hwcm->nyxcm", windows, taps)
    return output_stage(acc.reshape(*acc.shape[:3], channels), b, stage)


# ---------------------------------------------------------------------------------------------
# Registration.reference hooks: a node's tensors and prepared parameters into the functions above


def _bias(t) -> np.ndarray | None:
    return None if t is None else t.data.reshape(-1)


def conv2d_node(ctx, node) -> None:
    """CONV_2D through `conv2d` (prepare checked the node and computed its geometry and output stage)."""
    plan = node.user_data
    x, f, b = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)
    stage = plan.requant if plan.quantized else plan.activation
    ctx.output(node, 0).data = conv2d(x.data, f.data, _bias(b), plan.geometry, stage, plan.input_zp, plan.filter_zp)


def depthwise_conv2d_node(ctx, node) -> None:
    """DEPTHWISE_CONV_2D through `depthwise_conv2d`."""
    plan = node.user_data
    x, f, b = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)
    geometry = Geometry.of(node.options, x.shape[1:3], f.shape[1:3])
    stage = plan.requant if plan.quantized else plan.activation
    ctx.output(node, 0).data = depthwise_conv2d(x.data, f.data, _bias(b), geometry, stage, plan.input_zp,
                                                plan.filter_zp)
