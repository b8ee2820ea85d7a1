"""CONV_3D (float32): im2col over a strided view of the padded [batch, depth, height, width, channels] input.

conv3d.cc: input [N, D, H, W, Cin], filter [KD, KH, KW, Cin, Cout] (the filter's channel axis must equal the
input's: no grouping), optional bias of Cout elements, float32 only; the output is [N, OD, OH, OW, Cout]
with each axis sized and padded as CONV_2D's (ComputePadding3DValues applies ComputePaddingWithOffset per
axis), and the result clamped to the fused activation's range (CalculateActivationRange: [lowest, FLT_MAX] for NONE;
NaN becomes the upper bound).

The filter is already the [KD*KH*KW*Cin, Cout] GEMM operand in its own layout, so the kernel is one copy of
the windows into a matrix and one BLAS matmul; it implements `conv3d`, the specification
(tests/runtime/test_references.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, is_known
from accelsim.runtime.kernels.conv.geometry import out_size_and_padding
from accelsim.runtime.kernels.conv.stage import FLOAT_RANGES, fused_activation
from accelsim.runtime.registration import Registration


@dataclass
class _Plan:
    stride: tuple[int, int, int]
    dilation: tuple[int, int, int]
    kernel: tuple[int, int, int]
    out: tuple[int, int, int]
    pad_before: tuple[int, int, int]
    padded: tuple[int, int, int]  # the padded input's depth, height, width
    activation: str
    weights: np.ndarray | None  # [KD*KH*KW*Cin, Cout], when the filter is constant
    bias: np.ndarray | None  # when the bias is constant (or absent: None with has_bias False)
    has_bias: bool


def _prepare(ctx, node) -> None:
    op = "CONV_3D"
    check(len(node.inputs) in (2, 3), f"{op}: expected 2 or 3 inputs, got {len(node.inputs)}")
    check(len(node.outputs) == 1, f"{op}: expected 1 output, got {len(node.outputs)}")
    x, f, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
    check(len(x.shape) == 5, f"{op}: input must be 5-D [batch, depth, height, width, channels], "
                             f"got shape {list(x.shape)}")
    check(len(f.shape) == 5, f"{op}: filter must be 5-D [depth, height, width, in_channels, out_channels], "
                             f"got shape {list(f.shape)}")
    check(x.shape[4] == f.shape[3],
          f"{op}: input has {x.shape[4]} channels but the filter expects {f.shape[3]}")
    for name, t in (("input", x), ("filter", f), ("output", out)):
        check(t.type == "FLOAT32", f"{op}: {name} must be FLOAT32, got {t.type}")
    cout = f.shape[4]
    if b is not None:
        check(b.type == "FLOAT32", f"{op}: bias must be FLOAT32, got {b.type}")
        check(int(np.prod(b.shape)) == cout, f"{op}: bias has {int(np.prod(b.shape))} elements, expected {cout}")
    o = node.options
    stride = (int(o.stride_d), int(o.stride_h), int(o.stride_w))
    dilation = (int(o.dilation_d_factor), int(o.dilation_h_factor), int(o.dilation_w_factor))
    sizes = [out_size_and_padding(o.padding, n, k, s, d)
             for n, k, s, d in zip(x.shape[1:4], f.shape[:3], stride, dilation)]
    out_dhw = tuple(s for s, _ in sizes)
    pad_before = tuple(p for _, p in sizes)
    # The padded extent each axis's windows read: before + data + whatever the last window overhangs.
    padded = tuple(max(n + p, (od - 1) * s + (k - 1) * d + 1) if od else n + p
                   for n, p, od, s, k, d in zip(x.shape[1:4], pad_before, out_dhw, stride, f.shape[:3], dilation))
    weights = f.data.reshape(-1, cout) if is_known(f) else None
    bias = _bias(b) if b is None or is_known(b) else None
    node.user_data = _Plan(stride, dilation, tuple(f.shape[:3]), out_dhw, pad_before, padded, fused_activation(node),
                           weights, bias, b is not None)
    ctx.resize_tensor(out, (x.shape[0], *out_dhw, cout))


def _bias(b) -> np.ndarray | None:
    return None if b is None else b.data.reshape(-1)


def _windows(plan: _Plan, x: np.ndarray) -> np.ndarray:
    """The [N*OD*OH*OW, KD*KH*KW*Cin] im2col matrix of the zero-padded input (one copy)."""
    n, d, h, w, c = x.shape
    if plan.padded != (d, h, w) or any(plan.pad_before):
        xp = np.zeros((n, *plan.padded, c), np.float32)
        (fd, fh, fw) = plan.pad_before
        xp[:, fd:fd + d, fh:fh + h, fw:fw + w] = x
    else:
        xp = np.ascontiguousarray(x)
    sn, sd, sh, sw, sc = xp.strides
    (od, oh, ow), (kd, kh, kw) = plan.out, plan.kernel
    (td, th, tw), (dd, dh, dw) = plan.stride, plan.dilation
    view = np.lib.stride_tricks.as_strided(
        xp, (n, od, oh, ow, kd, kh, kw, c),
        (sn, sd * td, sh * th, sw * tw, sd * dd, sh * dh, sw * dw, sc), writeable=False)
    return view.reshape(n * od * oh * ow, kd * kh * kw * c)


def _invoke(ctx, node) -> None:
    plan: _Plan = node.user_data
    x, f, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
    if 0 in out.shape:
        out.data = np.zeros(out.shape, np.float32)
        return
    weights = plan.weights if plan.weights is not None else f.data.reshape(-1, f.shape[4])
    acc = _windows(plan, x.data) @ weights
    bias = plan.bias if plan.bias is not None or not plan.has_bias else _bias(b)
    if bias is not None:
        acc += bias
    # LiteRT's CONV_3D clamps in its GEMM's output stage, which (measured) turns NaN into the range's
    # upper bound: NaN-ignoring fmin to the top first, then fmax to the bottom.
    lo, hi = FLOAT_RANGES[plan.activation]
    np.fmin(acc, hi, out=acc)
    np.fmax(acc, lo, out=acc)
    out.data = acc.reshape(out.shape)


def conv3d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride, dilation, pad_before, out_dhw,
           activation: str) -> np.ndarray:
    """CONV_3D's specification (reference_ops::Conv3D): out[n, z, y, x, o] = sum over taps (a, b, c) and
    input channels i of xp[n, z*sd + a*dd, y*sh + b*dh, x*sw + c*dw, i] * w[a, b, c, i, o], xp the input
    zero-padded by pad_before, + bias, then the activation's clamp (NaN becomes its top, as measured)."""
    n, cin = x.shape[0], x.shape[4]
    reach = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(out_dhw, stride, w.shape[:3], dilation)]
    xp = np.zeros((n, *(max(size + p, r) for size, p, r in zip(x.shape[1:4], pad_before, reach)), cin), np.float32)
    (pd, ph, pw), (d, h, wd) = pad_before, x.shape[1:4]
    xp[:, pd:pd + d, ph:ph + h, pw:pw + wd] = x
    acc = np.zeros((n, *out_dhw, w.shape[4]), np.float32)
    for tap in np.ndindex(*w.shape[:3]):  # every kernel tap over all output pixels at once
        window = tuple(slice(t * dl, t * dl + (o - 1) * s + 1, s)
                       for t, dl, o, s in zip(tap, dilation, out_dhw, stride))
        acc += xp[(slice(None), *window)] @ w[tap]
    if b is not None:
        acc += b
    lo, hi = FLOAT_RANGES[activation]
    return np.fmax(np.fmin(acc, hi), lo)


def _reference(ctx, node) -> None:
    """CONV_3D through `conv3d` (prepare checked the node and sized and padded each axis)."""
    plan: _Plan = node.user_data
    x, f, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
    if 0 in out.shape:
        out.data = np.zeros(out.shape, np.float32)
        return
    out.data = conv3d(x.data, f.data, _bias(b), plan.stride, plan.dilation, plan.pad_before, plan.out, plan.activation)


def register(resolver) -> None:
    """CONV_3D v1 (float32; the only version op_version.cc defines)."""
    resolver.add_builtin("CONV_3D", Registration(prepare=_prepare, invoke=_invoke, reference=_reference,
                                                 work=work.conv3d), 1, 1)
