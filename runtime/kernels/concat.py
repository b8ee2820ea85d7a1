"""Ops that join tensors: CONCATENATION, PACK."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.errors import KernelError
from accelsim.runtime.kernels.common import check
from accelsim.runtime.quant import activation_name, tflite_round
from accelsim.runtime.registration import Registration

_PACK_TYPES = ("FLOAT32", "INT32", "UINT8", "INT64", "INT8", "INT16", "UINT32")


def _same_quantization(t, out) -> bool:
    return t.scale == out.scale and t.zero_point == out.zero_point


def _pack_prepare(ctx, node) -> None:
    count = node.options.values_count
    check(len(node.inputs) == count, f"PACK: values_count is {count} but the node has {len(node.inputs)} inputs")
    check(len(node.outputs) == 1, "PACK takes one output")
    inputs = [ctx.input(node, i) for i in range(count)]
    first = inputs[0]
    rank = len(first.shape) + 1
    axis = node.options.axis + rank if node.options.axis < 0 else node.options.axis
    check(0 <= axis < rank, f"PACK: axis {node.options.axis} is out of range for inputs of rank {rank - 1}")
    check(first.type in _PACK_TYPES, f"PACK: type {first.type} is not supported ({', '.join(_PACK_TYPES)})")
    out = ctx.output(node, 0)
    check(out.type == first.type, f"PACK: output type {out.type} differs from input type {first.type}")
    for i, t in enumerate(inputs):
        check(t.shape == first.shape, f"PACK: input {i} has shape {list(t.shape)}, input 0 {list(first.shape)}")
        check(t.type == first.type, f"PACK: input {i} is {t.type}, input 0 {first.type}")
        # pack.cc: every input must carry the output's scale and zero point (no requantization).
        check(_same_quantization(t, out), f"PACK: input {i} quantization ({t.scale}, {t.zero_point}) differs "
                                          f"from the output's ({out.scale}, {out.zero_point})")
    node.user_data = axis
    ctx.resize_tensor(out, first.shape[:axis] + (count,) + first.shape[axis:])


def pack(values: list[np.ndarray], axis: int) -> np.ndarray:
    """PACK (pack.cc, reference_ops Pack): same-shape `values` stacked along a new dimension at
    resolved `axis`; no requantization (every input shares the output's quantization)."""
    return np.stack(values, axis=axis)


def _pack_node(ctx, node) -> None:
    """`pack` on a node: prepare resolved its axis."""
    ctx.output(node, 0).data = pack([ctx.input(node, i).data for i in range(len(node.inputs))], node.user_data)


_CONCAT_TYPES = ("FLOAT32", "UINT8", "INT8", "INT16", "INT32", "INT64", "BOOL", "UINT32")


class _ConcatPlan:
    """CONCATENATION's inputs and axis, with the input and output shapes its last prepare checked."""

    __slots__ = ("axis", "inputs", "in_shapes", "out_shape", "plain")

    def __init__(self, axis: int, inputs: list, out_shape: tuple[int, ...], plain: bool):
        self.axis, self.inputs, self.out_shape = axis, inputs, out_shape
        self.in_shapes = tuple(t.shape for t in inputs)
        self.plain = plain  # a plain np.concatenate of non-scalars into a static output


def _concat_prepare(ctx, node) -> None:
    if len(node.outputs) != 1:
        raise KernelError("CONCATENATION takes one output")
    out = ctx.output(node, 0)
    plan: _ConcatPlan | None = node.user_data
    if plan is None:
        inputs = [ctx.input(node, i) for i in range(len(node.inputs))]
        _check_concat_types(node, inputs, out)
    elif plan.out_shape == out.shape and plan.in_shapes == tuple(t.shape for t in plan.inputs):
        # Prepared again after an upstream resize, with the input shapes it was prepared for.
        return
    else:
        # The same tensors, whose types and quantization were checked: only shapes can have changed
        # (every loop step of a converted LSTM, so this path is kept short).
        inputs = plan.inputs
    first = inputs[0]
    rank = len(first.shape)
    axis = node.options.axis
    axis += rank if axis < 0 else 0
    if not (0 <= axis < rank or (rank == 0 and axis == 0)):
        raise KernelError(f"CONCATENATION: axis {node.options.axis} is out of range for inputs of rank {rank}")
    if rank == 0:
        # concatenation.cc: scalars concatenate only when all are constants, into a vector.
        check(all(t.is_constant and not t.shape for t in inputs),
              "CONCATENATION: scalar inputs are only supported when they are all constants")
        shape = (len(inputs),)
    else:
        before, after = first.shape[:axis], first.shape[axis + 1:]
        total = 0
        for i, t in enumerate(inputs):
            s = t.shape
            if len(s) != rank:
                raise KernelError(f"CONCATENATION: input {i} is {t.type}{list(s)}, input 0 "
                                  f"{first.type}{list(first.shape)}")
            if s[:axis] != before or s[axis + 1:] != after:
                raise KernelError(f"CONCATENATION: input {i} shape {list(s)} differs from input 0 shape "
                                  f"{list(first.shape)} outside axis {axis}")
            total += s[axis]
        shape = (*before, total, *after)
    if plan is None or out.shape != shape:
        ctx.resize_tensor(out, shape)
    node.user_data = _ConcatPlan(axis, inputs, out.shape, rank > 0 and out.type != "UINT8" and not out.dynamic)


def _check_concat_types(node, inputs, out) -> None:
    """concatenation.cc Prepare's type, quantization and activation rules (shapes are checked apart)."""
    act = node.options.fused_activation_function
    if act:
        raise KernelError(f"CONCATENATION: fused activation {activation_name(act)} is not supported "
                          "(concatenation.cc needs NONE)")
    first = inputs[0]
    if first.type not in _CONCAT_TYPES:
        raise KernelError(f"CONCATENATION: type {first.type} is not supported")
    if out.type != first.type:
        raise KernelError(f"CONCATENATION: output type {out.type} differs from input type {first.type}")
    for i, t in enumerate(inputs):
        if t.type != first.type:
            raise KernelError(f"CONCATENATION: input {i} is {t.type}{list(t.shape)}, input 0 "
                              f"{first.type}{list(first.shape)}")
        if first.type == "INT8" and not _same_quantization(t, out):
            # concatenation.cc: int8 inputs must already be in the output's scale and zero point.
            raise KernelError(f"CONCATENATION: int8 input {i} quantization ({t.scale}, {t.zero_point}) differs "
                              f"from the output's ({out.scale}, {out.zero_point})")
        if first.type == "INT16":
            check(t.zero_point == 0 and out.zero_point == 0, "CONCATENATION: int16 zero points must be 0")


def _rescale_uint8(q: np.ndarray, source: tuple[float, int], target: tuple[float, int]) -> np.ndarray:
    """concatenation.h ConcatenationWithScaling: float32 q * (s_in / s_out) - z_in * ratio, rounded, + z_out."""
    if source == target:
        return q
    f32 = np.float32
    ratio = f32(source[0]) * (f32(1.0) / f32(target[0]))
    bias = f32(-source[1]) * ratio
    value = tflite_round(q.astype(f32) * ratio + bias) + target[1]
    return np.clip(value, 0, 255).astype(np.uint8)


def concatenation(values: list[np.ndarray], axis: int, quantization: list[tuple[float, int]] | None = None,
                  out_quantization: tuple[float, int] | None = None) -> np.ndarray:
    """CONCATENATION (concatenation.h Concatenation) of `values` along resolved `axis`.

    uint8 inputs whose (scale, zero point) in `quantization` differ from `out_quantization` are
    rescaled to it first (ConcatenationWithScaling); other types share the output's quantization.
    Rank-0 inputs join into a vector.
    """
    if not values[0].shape:
        return np.asarray(values)
    if out_quantization is not None:
        values = [_rescale_uint8(v, q, out_quantization) for v, q in zip(values, quantization)]
    return np.concatenate(values, axis=axis)


def _concat_invoke(ctx, node) -> None:
    plan: _ConcatPlan = node.user_data
    if plan.plain:
        # The inputs' shapes are the ones prepare derived the output's from, and they share its
        # dtype: the result is stored without the setter's checks.
        ctx.output(node, 0).unchecked_data = np.concatenate([t.data for t in plan.inputs], plan.axis)
        return
    _concat_reference(ctx, node)


def _concat_reference(ctx, node) -> None:
    """`concatenation` on a node: its inputs and, for uint8, every (scale, zero point)."""
    plan: _ConcatPlan = node.user_data
    out = ctx.output(node, 0)
    uint8 = out.type == "UINT8"
    out.data = concatenation([t.data for t in plan.inputs], plan.axis,
                             [(t.scale, t.zero_point) for t in plan.inputs] if uint8 else None,
                             (out.scale, out.zero_point) if uint8 else None).astype(out.dtype, copy=False)


def register(resolver) -> None:
    # CONCATENATION: v2 int8, v3 int16, v4 uint32; v5 int4, v6 float16, v7 float8 are not implemented.
    resolver.add_builtin("CONCATENATION", Registration(prepare=_concat_prepare, invoke=_concat_invoke,
                                                       reference=_concat_reference, work=work.move), 1, 4)
    # PACK: v2 int8, v3 int16, v4 uint32; v5 (float8) is not implemented.
    # PACK has no fast path: the node form of `pack` is both the invoke and the reference.
    resolver.add_builtin("PACK", Registration(prepare=_pack_prepare, invoke=_pack_node, reference=_pack_node,
                                              work=work.move),
                         1, 4)
