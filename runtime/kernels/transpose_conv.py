"""TRANSPOSE_CONV in float32, int8 (per-tensor or per-channel weights) and uint8.

As LiteRT's optimized TransposeConvV2: one GEMM of the input pixels with the [in_c, kh*kw*out_c] weights
gives every pixel's contribution through every kernel tap; col2im then scatter-adds tap (ky, kx) of input
pixel (y, x) onto output pixel (y * stride - pad_top + ky, x * stride - pad_left + kx), one strided
slice per tap. Quantized, the products are exact in the float GEMM and the int32 sums go through the
optimized Quantize output stage (conv.py's Requantizer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from runtime.kernels.common import check
from runtime.kernels.conv import (
    OPTIMIZED_ROUNDING,
    REFERENCE_ROUNDING,
    SAME,
    VALID,
    Requantizer,
    check_bias,
    check_float_types,
    check_quantized_types,
    depthwise_int8_rounding,
    filter_zero_point,
    finish_float,
    finish_quantized,
    fused_activation,
    gemm_dtype,
    read_bias,
    requantizer,
)
from runtime.resolver import Registration

_OP = "TRANSPOSE_CONV"
_QUANTIZED = ("INT8", "UINT8")


@dataclass(frozen=True)
class _Geometry:
    """Where the scatter lands: strides, kernel size, output size and the padding cut off its top/left."""

    stride: tuple[int, int]
    kernel: tuple[int, int]
    out_hw: tuple[int, int]
    pad_before: tuple[int, int]

    def buffer_hw(self, in_hw) -> tuple[int, int]:
        """The scatter target: every tap's reach, and at least the padded output."""
        return tuple(max((i - 1) * s + k, p + o)
                     for i, s, k, p, o in zip(in_hw, self.stride, self.kernel, self.pad_before, self.out_hw))


def _padding(padding: int, out_size: int, kernel: int, stride: int) -> tuple[int, int]:
    """(input size the output implies, padding before) along one axis (transpose_conv.cc ComputePaddingHeightWidth).

    The output plays the convolution's input: SAME gives ceil(out / stride), VALID (out - k + stride) / stride;
    total padding = max(0, (in - 1) * stride + k - out), of which total // 2 comes before.
    """
    check(padding in (SAME, VALID), f"{_OP}: unknown padding {padding} (expected SAME=0 or VALID=1)")
    if padding == SAME:
        implied = (out_size + stride - 1) // stride
    else:
        implied = (out_size - kernel + stride) // stride if out_size + stride >= kernel else 0
    return implied, max(0, (implied - 1) * stride + kernel - out_size) // 2


def _geometry(options, in_hw, kernel_hw, out_hw) -> _Geometry:
    stride = (int(options.stride_h), int(options.stride_w))
    check(min(stride) > 0, f"{_OP}: strides must be positive, got stride_h={stride[0]} stride_w={stride[1]}")
    check(min(out_hw) > 0, f"{_OP}: output height and width must be positive, got {list(out_hw)}")
    pads = []
    for axis, name in enumerate(("height", "width")):
        implied, pad = _padding(options.padding, out_hw[axis], kernel_hw[axis], stride[axis])
        check(implied == in_hw[axis],
              f"{_OP}: output {name} {out_hw[axis]} with kernel {kernel_hw[axis]}, stride {stride[axis]} and "
              f"{'SAME' if options.padding == SAME else 'VALID'} padding needs input {name} {implied}, "
              f"got {in_hw[axis]}")
        pads.append(pad)
    return _Geometry(stride, tuple(kernel_hw), tuple(out_hw), tuple(pads))


def _col2im(cols: np.ndarray, g: _Geometry, out_c: int) -> np.ndarray:
    """Scatter-add [n, h, w, kh, kw, out_c] tap contributions into the [n, oh, ow, out_c] output, tap by tap."""
    n, h, w = cols.shape[:3]
    (sy, sx), (kh, kw), (oh, ow), (top, left) = g.stride, g.kernel, g.out_hw, g.pad_before
    bh, bw = g.buffer_hw((h, w))
    buf = np.zeros((n, bh, bw, out_c), cols.dtype)
    for ky in range(kh):
        for kx in range(kw):
            buf[:, ky:ky + (h - 1) * sy + 1:sy, kx:kx + (w - 1) * sx + 1:sx] += cols[:, :, :, ky, kx]
    return buf[:, top:top + oh, left:left + ow]


def _uint8_rounding(total_size: int) -> Callable:
    """optimized_ops::Quantize for uint8: blocks of 16 flat values go through the NEON form (half-up twice,
    emulated with SSE on x86); the last total_size % 16 values through the scalar MultiplyByQuantizedMultiplier.
    """
    vector = total_size - total_size % 16

    def rounding(acc, multiplier, shift):
        flat = acc.reshape(-1)
        head = OPTIMIZED_ROUNDING(flat[:vector], multiplier[0], shift[0])
        tail = REFERENCE_ROUNDING(flat[vector:], multiplier[0], shift[0])
        return np.concatenate([head, tail]).reshape(acc.shape)

    return rounding


@dataclass
class _Plan:
    quantized: bool
    activation: str
    geometry: _Geometry | None = None  # known once the output shape is
    input_zp: int = 0
    filter_zp: int = 0
    requant: Requantizer | None = None
    dtype: type = np.float32  # of the GEMM operands
    weights: np.ndarray | None = None  # [in_c, kh*kw*out_c], from a constant filter


def _weights(filter_data: np.ndarray, dtype, offset: int) -> np.ndarray:
    """[out_c, kh, kw, in_c] weights as the GEMM's [in_c, kh*kw*out_c] operand (LiteRT's HWOI order), minus zp."""
    w = filter_data.transpose(3, 1, 2, 0).reshape(filter_data.shape[3], -1).astype(dtype)
    if offset:
        w -= offset
    return np.ascontiguousarray(w)


def _output_shape(shape_t) -> tuple[int, ...]:
    """The output shape the first input asks for."""
    return tuple(int(d) for d in shape_t.data)


def _check_output(out_shape, x, f) -> None:
    check(out_shape[0] == x.shape[0], f"{_OP}: output batch {out_shape[0]} differs from input batch {x.shape[0]}")
    check(out_shape[3] == f.shape[0],
          f"{_OP}: output has {out_shape[3]} channels but the weights have {f.shape[0]} output channels")


def _prepare(ctx, node) -> None:
    check(len(node.inputs) in (3, 4) and len(node.outputs) == 1,
          f"{_OP} takes (output_shape, weights, input[, bias]) and one output")
    f, x, b, out = ctx.input(node, 1), ctx.input(node, 2), ctx.input(node, 3), ctx.output(node, 0)
    check(len(x.shape) == 4, f"{_OP}: input must be 4-D [batch, height, width, channels], got {list(x.shape)}")
    check(len(f.shape) == 4,
          f"{_OP}: weights must be 4-D [out_channels, height, width, in_channels], got {list(f.shape)}")
    check(min(x.shape[1:]) > 0 and min(f.shape[:3]) > 0, f"{_OP}: empty input {list(x.shape)} or weights "
                                                         f"{list(f.shape)}")
    check(x.shape[3] == f.shape[3],
          f"{_OP}: input has {x.shape[3]} channels but the weights expect {f.shape[3]}")
    check(x.type != "INT16", f"{_OP}: INT16 input (16x8, version 5) is not supported")
    cout = f.shape[0]
    act = fused_activation(node)
    plan = _Plan(x.type in _QUANTIZED, act)
    if plan.quantized:
        check_quantized_types(_OP, x, f, b, out)
        check_bias(_OP, b, cout, None)
        plan.input_zp = x.zero_point
        plan.filter_zp = filter_zero_point(_OP, f)
        exact = _weights(f.data, np.float64, plan.filter_zp) if f.is_constant else None
        plan.dtype = gemm_dtype(x, plan.input_zp, exact, axis=0)
        plan.weights = None if exact is None else exact.astype(plan.dtype)
    else:
        check_float_types(_OP, x, f, out, "1-4")
        check_bias(_OP, b, cout, "FLOAT32")
        if f.is_constant:
            plan.weights = _weights(f.data, np.float32, 0)
    node.user_data = plan
    shape_t = ctx.input(node, 0)
    check(shape_t.type == "INT32", f"{_OP}: output shape tensor is {shape_t.type}, not INT32")
    check(shape_t.shape == (4,), f"{_OP}: output shape must be a vector of 4, got shape {list(shape_t.shape)}")
    if not shape_t.is_constant:
        ctx.set_dynamic(out)
        return
    out_shape = _output_shape(shape_t)
    _configure(plan, node, x, f, b, out, out_shape)
    ctx.resize_tensor(out, out_shape)


def _configure(plan: _Plan, node, x, f, b, out, out_shape) -> None:
    """The geometry and output stage, which depend on the output shape."""
    _check_output(out_shape, x, f)
    plan.geometry = _geometry(node.options, x.shape[1:3], f.shape[1:3], out_shape[1:3])
    if not plan.quantized:
        return
    cout = f.shape[0]
    # transpose_conv.cc: int8 runs optimized_integer_ops::TransposeConvV2, whose Quantize takes 8 channels
    # at a time through NEON code (half-up on x86) and the rest through MultiplyByQuantizedMultiplier;
    # uint8 runs optimized_ops::TransposeConvV2, whose Quantize splits the flat output into 16s.
    if x.type == "INT8":
        rounding = depthwise_int8_rounding(cout)
    else:
        rounding = _uint8_rounding(int(np.prod(out_shape, dtype=np.int64)))
    plan.requant = requantizer(_OP, x, f, b, out, plan.activation, cout, channel_axis=0, rounding=rounding,
                               float_product=x.type == "UINT8")


def _invoke(ctx, node) -> None:
    plan: _Plan = node.user_data
    f, x, b, out = ctx.input(node, 1), ctx.input(node, 2), ctx.input(node, 3), ctx.output(node, 0)
    if out.dynamic:
        _configure(plan, node, x, f, b, out, _output_shape(ctx.input(node, 0)))
    g = plan.geometry
    w = plan.weights if plan.weights is not None else _weights(f.data, plan.dtype, plan.filter_zp)
    n, h, wd, cin = x.shape
    rows = np.subtract(x.data, plan.input_zp, dtype=plan.dtype) if plan.quantized else x.data
    cols = (rows.reshape(-1, cin) @ w).reshape(n, h, wd, *g.kernel, -1)
    if plan.quantized:
        acc = _col2im(cols.astype(np.int64), g, f.shape[0])
        out.data = finish_quantized(np.ascontiguousarray(acc), read_bias(b, np.int64), plan.requant)
    else:
        acc = np.ascontiguousarray(_col2im(cols, g, f.shape[0]))
        out.data = finish_float(acc, read_bias(b, np.float32), plan.activation)


def register(resolver) -> None:
    """TRANSPOSE_CONV v1 (float32, uint8), v2 (int8), v3 (bias input), v4 (fused activation).

    Not registered (op_version.cc): v5 (int16 activations with quantized_bias_type); 16x8 models of
    v1-v4 are rejected in prepare.
    """
    resolver.add_builtin(_OP, Registration(prepare=_prepare, invoke=_invoke), 1, 4)
