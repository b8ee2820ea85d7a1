"""TRANSPOSE_CONV in float32, int8 (per-tensor or per-channel weights) and uint8.

As LiteRT's optimized TransposeConvV2: a GEMM of the input pixels with the weights gives every pixel's
contribution through every kernel tap; col2im then scatter-adds tap (ky, kx) of input pixel (y, x) onto
output pixel (y * stride - pad_top + ky, x * stride - pad_left + kx). The taps of one kernel row whose
columns kx = stride_w * b + p (p < stride_w) differ only in p land side by side, so each (ky, b) group is
its own GEMM whose rows, [out_w_span, out_c] per input row, are added to the output rows as contiguous
runs. Quantized, the products are exact in the float GEMM, the sums exact in the float64 buffer, and the
int32 sums go through the optimized Quantize output stage (conv/stage.py's Requantizer). `transpose_conv`
is the specification this implements (tests/runtime/test_references.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import EIGHT_BIT, check, is_known
from accelsim.runtime.kernels.conv.checks import check_bias, check_float_types, check_quantized_types, filter_zero_point
from accelsim.runtime.kernels.conv.geometry import INT16_MAX, SAME, VALID
from accelsim.runtime.kernels.conv.reference import output_stage
from accelsim.runtime.kernels.conv.stage import (
    OPTIMIZED_ROUNDING,
    REFERENCE_ROUNDING,
    FloatStage,
    Requantizer,
    depthwise_int8_rounding,
    finish_float,
    finish_quantized,
    fused_activation,
    gemm_dtype,
    read_bias,
    requantizer,
)
from accelsim.runtime.registration import Registration

_OP = "TRANSPOSE_CONV"


@dataclass(frozen=True)
class _Geometry:
    """Where the scatter lands: strides, kernel size, output size and the padding cut off its top/left."""

    stride: tuple[int, int]
    kernel: tuple[int, int]
    out_hw: tuple[int, int]
    pad_before: tuple[int, int]

    @property
    def column_groups(self) -> int:
        """How many groups of stride_w adjacent kernel columns cover the kernel width."""
        return -(-self.kernel[1] // self.stride[1])

    def buffer_hw(self, in_hw) -> tuple[int, int]:
        """The scatter target: every tap group's reach, and at least the padded output."""
        (h, w), (sy, sx), (kh, _), (top, left), (oh, ow) = in_hw, self.stride, self.kernel, self.pad_before, self.out_hw
        return max((h - 1) * sy + kh, top + oh), max(sx * (w + self.column_groups - 1), left + ow)


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


def _scatter_gemm(rows: np.ndarray, weights: np.ndarray, g: _Geometry, in_shape, dtype) -> np.ndarray:
    """sum over taps of the [n*h*w, in_c] input rows times the grouped weights, scattered: [n, oh, ow, out_c].

    Group (ky, b) holds kernel columns stride_w * b + p: its GEMM gives, per input row y, the run of
    w * stride_w output pixels it adds to output row y * stride_h + ky, starting at column stride_w * b.
    """
    n, h, w, _ = in_shape
    (sy, sx), kh, (oh, ow), (top, left) = g.stride, g.kernel[0], g.out_hw, g.pad_before
    out_c = weights.shape[-1] // sx
    bh, bw = g.buffer_hw((h, w))
    buf = np.zeros((n, bh, bw, out_c), dtype)
    for ky in range(kh):
        for b in range(g.column_groups):
            run = (rows @ weights[ky, b]).reshape(n, h, w * sx, out_c)
            buf[:, ky:ky + (h - 1) * sy + 1:sy, sx * b:sx * (b + w)] += run
    return np.ascontiguousarray(buf[:, top:top + oh, left:left + ow])


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
    weights: np.ndarray | None = None  # _weights of a constant filter (known with the output shape)
    stage: FloatStage | None = None  # a float op's bias and activation, when the bias is constant


def _weights(filter_data: np.ndarray, sx: int, dtype, offset: int) -> np.ndarray:
    """[out_c, kh, kw, in_c] weights minus zp as the grouped GEMM operands [kh, groups, in_c, sx*out_c].

    Kernel column kx = sx * b + p (sx = stride_w) is group b, slot p; slots past the kernel width hold zeros.
    """
    out_c, kh, kw, in_c = filter_data.shape
    groups = -(-kw // sx)
    w = filter_data.transpose(1, 2, 3, 0).astype(dtype)
    if offset:
        w -= offset
    grouped = np.zeros((kh, groups * sx, in_c, out_c), dtype)
    grouped[:, :kw] = w
    return np.ascontiguousarray(grouped.reshape(kh, groups, sx, in_c, out_c).transpose(0, 1, 3, 2, 4)
                                .reshape(kh, groups, in_c, sx * out_c))


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
    stride_w = int(node.options.stride_w)
    check(stride_w > 0 and node.options.stride_h > 0,
          f"{_OP}: strides must be positive, got stride_h={node.options.stride_h} stride_w={stride_w}")
    # transpose_conv.cc Prepare: strides must fit int16 (checked before the weights are grouped by stride_w).
    check(max(stride_w, node.options.stride_h) <= INT16_MAX,
          f"{_OP}: strides must be at most {INT16_MAX}, got stride_h={node.options.stride_h} stride_w={stride_w}")
    plan = _Plan(x.type in EIGHT_BIT, act)
    if plan.quantized:
        check_quantized_types(_OP, x, f, b, out)
        check_bias(_OP, b, cout, None)
        plan.input_zp = x.zero_point
        plan.filter_zp = filter_zero_point(_OP, f)
        exact = _weights(f.data, stride_w, np.float64, plan.filter_zp) if f.is_constant else None
        # Each group's GEMM sums over the input channels only (axis 2).
        plan.dtype = gemm_dtype(x, plan.input_zp, exact, axis=2)
        plan.weights = None if exact is None else exact.astype(plan.dtype)
    else:
        check_float_types(_OP, x, f, out, "1-4")
        check_bias(_OP, b, cout, "FLOAT32")
        if f.is_constant:
            plan.weights = _weights(f.data, stride_w, np.float32, 0)
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
        if b is None or is_known(b):
            plan.stage = FloatStage.of(b, f.shape[0], int(np.prod(out_shape[:3], dtype=np.int64)), plan.activation)
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
    x, out = ctx.input(node, 2), ctx.output(node, 0)
    if out.dynamic:
        _configure(plan, node, x, ctx.input(node, 1), ctx.input(node, 3), out, _output_shape(ctx.input(node, 0)))
    w = plan.weights
    if w is None:
        w = _weights(ctx.input(node, 1).data, int(node.options.stride_w), plan.dtype, plan.filter_zp)
    rows = np.subtract(x.data, plan.input_zp, dtype=plan.dtype) if plan.quantized else x.data
    rows = rows.reshape(-1, x.shape[3])
    if plan.quantized:
        # Each GEMM entry is an exact integer; their float64 sums stay exact (far below 2**53).
        acc = _scatter_gemm(rows, w, plan.geometry, x.shape, np.float64)
        out.data = finish_quantized(acc, read_bias(ctx.input(node, 3), np.int64), plan.requant)
        return
    acc = _scatter_gemm(rows, w, plan.geometry, x.shape, np.float32)
    if plan.stage is not None:
        out.data = plan.stage(acc).reshape(out.shape)
    else:
        out.data = finish_float(acc, read_bias(ctx.input(node, 3), np.float32), plan.activation)


def transpose_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, g: _Geometry, stage: str | Requantizer,
                   input_zp: int = 0, filter_zp: int = 0) -> np.ndarray:
    """TRANSPOSE_CONV's specification (reference_ops::TransposeConv, reference_integer_ops::TransposeConv):
    input pixel (y, x) adds (x - input_zp) . (w[o, ky, kx] - filter_zp) to output pixel
    (y * stride_h - pad_top + ky, x * stride_w - pad_left + kx) for every tap; then bias and output stage.
    """
    acc_type = np.float32 if isinstance(stage, str) else np.int64
    n, h, wd, _ = x.shape
    out_c, kh, kw, _ = w.shape
    (sy, sx), (top, left), (oh, ow) = g.stride, g.pad_before, g.out_hw
    taps = np.einsum("nyxc,ohwc->nyxhwo", x.astype(acc_type) - input_zp, w.astype(acc_type) - filter_zp)
    full = np.zeros((n, max((h - 1) * sy + kh, top + oh), max((wd - 1) * sx + kw, left + ow), out_c), acc_type)
    for ky, kx in np.ndindex(kh, kw):  # every kernel tap scatters all input pixels at once
        full[:, ky:ky + (h - 1) * sy + 1:sy, kx:kx + (wd - 1) * sx + 1:sx] += taps[:, :, :, ky, kx]
    return output_stage(full[:, top:top + oh, left:left + ow], b, stage)


def _reference(ctx, node) -> None:
    """TRANSPOSE_CONV through `transpose_conv` (prepare, or here a dynamic output shape, set the geometry)."""
    plan: _Plan = node.user_data
    f, x, b, out = ctx.input(node, 1), ctx.input(node, 2), ctx.input(node, 3), ctx.output(node, 0)
    if out.dynamic:
        _configure(plan, node, x, f, b, out, _output_shape(ctx.input(node, 0)))
    stage = plan.requant if plan.quantized else plan.activation
    bias = None if b is None else b.data.reshape(-1)
    out.data = transpose_conv(x.data, f.data, bias, plan.geometry, stage, plan.input_zp, plan.filter_zp)


def register(resolver) -> None:
    """TRANSPOSE_CONV v1 (float32, uint8), v2 (int8), v3 (bias input), v4 (fused activation).

    Not registered (op_version.cc): v5 (int16 activations with quantized_bias_type); 16x8 models of
    v1-v4 are rejected in prepare.
    """
    resolver.add_builtin(_OP, Registration(prepare=_prepare, invoke=_invoke, reference=_reference,
                                           work=work.transpose_conv), 1, 4)
