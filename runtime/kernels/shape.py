"""Ops that change or read a shape without moving values: RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE."""

from __future__ import annotations

from math import prod

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.errors import KernelError
from accelsim.runtime.kernels.common import (
    INDEX_TYPES,
    axis_value,
    check,
    check_same_quantization,
    check_types,
    size_outputs,
    tensor_values,
)
from accelsim.runtime.registration import Registration

# schema TensorType codes accepted by ShapeOptions.out_type.
_SHAPE_OUT_TYPES = {2: "INT32", 4: "INT64"}


def _reshape_target(ctx, node, at_invoke: bool) -> tuple[int, ...] | None:
    """The requested shape (reshape.cc GetOutputShape); None while a shape tensor's values are unknown.

    A 1-D INT32 second input wins; otherwise options.new_shape, where the legacy [0]
    means a scalar and a missing field means no dimensions at all.
    """
    shape_t = ctx.input(node, 1)
    if shape_t is not None and len(shape_t.shape) == 1 and shape_t.type == "INT32":
        if not (shape_t.is_constant or at_invoke):
            return None
        return tuple(tensor_values(shape_t).tolist())
    if shape_t is not None and not (shape_t.is_constant or at_invoke):
        return None
    new_shape = tuple(node.options.new_shape or ()) if node.options is not None else ()
    return () if new_shape == (0,) else new_shape


def _resolve_shape(in_shape, target) -> tuple[int, ...]:
    """reshape_utils.h ResolveOutputShape: one -1 is inferred from the non-zero dimensions."""
    target = list(target)
    unknown = [i for i, d in enumerate(target) if d == -1]
    if len(unknown) > 1:
        raise KernelError(f"RESHAPE: at most one -1 allowed in new shape {target}")
    if any(d < -1 for d in target):
        raise KernelError(f"RESHAPE: new shape {target} has a negative dimension")
    count = prod(in_shape)
    if unknown:
        known = [d for i, d in enumerate(target) if i != unknown[0]]
        if count == 0 and prod(known) != 0:
            target[unknown[0]] = 0
        else:
            non_zero_in = prod(d for d in in_shape if d != 0)
            non_zero_out = prod(d for d in known if d != 0)
            target[unknown[0]] = non_zero_in // non_zero_out
    if prod(target) != count:
        raise KernelError(f"RESHAPE: cannot reshape {list(in_shape)} ({count} elements) into {target}")
    return tuple(target)


class _ReshapePlan:
    """A RESHAPE's tensors and the shapes its last prepare set (`static`: the output shape is known)."""

    __slots__ = ("x", "out", "in_shape", "out_shape", "static")

    def __init__(self, x, out, static: bool):
        self.x, self.out, self.static = x, out, static
        self.in_shape, self.out_shape = x.shape, out.shape


def _reshape_prepare(ctx, node) -> None:
    check(len(node.inputs) in (1, 2) and len(node.outputs) == 1, "RESHAPE takes 1 or 2 inputs and one output")
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    plan: _ReshapePlan | None = node.user_data
    if plan is not None and plan.static and plan.in_shape == x.shape and plan.out_shape == out.shape:
        # Prepared again after an upstream resize, with the input shape it was prepared for: the
        # target comes from constants and options, so the output shape stands.
        return
    target = _reshape_target(ctx, node, at_invoke=False)
    if target is None:
        ctx.set_dynamic(out)
        node.user_data = _ReshapePlan(x, out, static=False)
        return
    ctx.resize_tensor(out, _resolve_shape(x.shape, target))
    # A view of the input in the output's shape: stored without the setter's checks when the
    # dtypes agree (reshape itself fails on a size mismatch); otherwise the setter reports it.
    node.user_data = _ReshapePlan(x, out, static=x.dtype == out.dtype and not out.dynamic)


def _reshape_invoke(ctx, node) -> None:
    plan: _ReshapePlan = node.user_data
    if plan.static:
        plan.out.unchecked_data = plan.x.data.reshape(plan.out_shape)
        return
    x, out = plan.x, plan.out
    shape = out.shape if not out.dynamic else _resolve_shape(x.shape, _reshape_target(ctx, node, at_invoke=True))
    out.data = x.data.reshape(shape)


def reshape(x: np.ndarray, new_shape) -> np.ndarray:
    """RESHAPE (reshape.cc): `x`'s values, in order, in `new_shape`, where one -1 is inferred
    (reshape_utils.h ResolveOutputShape). Raises KernelError when the element counts differ."""
    return x.reshape(_resolve_shape(x.shape, new_shape))


def _reshape_reference(ctx, node) -> None:
    """`reshape` on a node: the output's shape, or the shape input / new_shape option when dynamic."""
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    out.data = reshape(x.data, out.shape if not out.dynamic else _reshape_target(ctx, node, at_invoke=True))


def _squeeze_prepare(ctx, node) -> None:
    check(len(node.inputs) == 1 and len(node.outputs) == 1, "SQUEEZE takes one input and one output")
    shape = ctx.input(node, 0).shape
    rank = len(shape)
    check(rank <= 8, f"SQUEEZE supports up to 8 dimensions, got {rank}")
    dims = tuple(node.options.squeeze_dims or ()) if node.options is not None else ()
    if not dims:
        squeezed = {i for i, d in enumerate(shape) if d == 1}
    else:
        squeezed = set()
        for d in dims:
            axis = d + rank if d < 0 else d
            check(0 <= axis < rank and shape[axis] == 1,
                  f"SQUEEZE: squeeze_dims {list(dims)}: dimension {d} of shape {list(shape)} is not of size 1")
            squeezed.add(axis)
    ctx.resize_tensor(ctx.output(node, 0), tuple(d for i, d in enumerate(shape) if i not in squeezed))


def squeeze(x: np.ndarray, squeeze_dims=()) -> np.ndarray:
    """SQUEEZE (squeeze.cc): `x` without the size-1 dimensions `squeeze_dims` (negative ones count
    from the rank), or without every size-1 dimension when none are given."""
    dims = tuple(d + x.ndim if d < 0 else d for d in squeeze_dims) or tuple(
        i for i, d in enumerate(x.shape) if d == 1)
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in dims))


def _squeeze_node(ctx, node) -> None:
    """`squeeze` on a node: its squeeze_dims option."""
    dims = tuple(node.options.squeeze_dims or ()) if node.options is not None else ()
    ctx.output(node, 0).data = squeeze(ctx.input(node, 0).data, dims)


def _shape_prepare(ctx, node) -> None:
    check(len(node.inputs) == 1 and len(node.outputs) == 1, "SHAPE takes one input and one output")
    out = ctx.output(node, 0)
    out_type = _SHAPE_OUT_TYPES.get(int(node.options.out_type))
    check(out_type is not None, f"SHAPE: unknown output data type {node.options.out_type} (INT32=2, INT64=4)")
    check(out.type == out_type, f"SHAPE: out_type is {out_type} but the output tensor is {out.type}")
    ctx.resize_tensor(out, (len(ctx.input(node, 0).shape),))


def shape_of(x: np.ndarray, dtype) -> np.ndarray:
    """SHAPE (shape.cc): the 1-D `dtype` (int32 or int64, ShapeOptions.out_type) array of `x`'s dimensions."""
    return np.asarray(x.shape, dtype=dtype).reshape(x.ndim)


def _shape_node(ctx, node) -> None:
    """`shape_of` on a node: the output's type."""
    out = ctx.output(node, 0)
    out.data = shape_of(ctx.input(node, 0).data, out.dtype)


def _expanded_shape(x, axis_t) -> tuple[int, ...]:
    """expand_dims.cc ExpandTensorDim: a negative axis counts from rank + 1."""
    axis = axis_value("EXPAND_DIMS", axis_t, len(x.shape) + 1)
    return x.shape[:axis] + (1,) + x.shape[axis:]


def _expand_dims_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "EXPAND_DIMS takes 2 inputs and one output")
    x, axis_t = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check_types("EXPAND_DIMS", x, [out])
    check_same_quantization("EXPAND_DIMS", x, [out])
    check(axis_t.type in INDEX_TYPES, f"EXPAND_DIMS: axis must be INT32 or INT64, got {axis_t.type}")
    size_outputs(ctx, node, [axis_t], lambda: [_expanded_shape(x, axis_t)])


def expand_dims(x: np.ndarray, axis: int) -> np.ndarray:
    """EXPAND_DIMS (expand_dims.cc): `x` with a size-1 dimension inserted at resolved `axis` in [0, rank]."""
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


def _expand_dims_node(ctx, node) -> None:
    """`expand_dims` on a node: its axis tensor, a negative value counting from rank + 1."""
    x = ctx.input(node, 0)
    ctx.output(node, 0).data = expand_dims(x.data, axis_value("EXPAND_DIMS", ctx.input(node, 1), len(x.shape) + 1))


def register(resolver) -> None:
    resolver.add_builtin("RESHAPE", Registration(prepare=_reshape_prepare, invoke=_reshape_invoke,
                                                 reference=_reshape_reference, work=work.move), 1, 1)
    # SQUEEZE, EXPAND_DIMS and SHAPE have no fast path: the node form of the array function (`squeeze`,
    # `expand_dims`, `shape_of`) is both the invoke and the reference.
    # op_version.cc: SQUEEZE v2 adds string inputs (a reshape of the object array).
    resolver.add_builtin("SQUEEZE", Registration(prepare=_squeeze_prepare, invoke=_squeeze_node,
                                                 reference=_squeeze_node, work=work.move), 1, 2)
    resolver.add_builtin("EXPAND_DIMS", Registration(prepare=_expand_dims_prepare, invoke=_expand_dims_node,
                                                     reference=_expand_dims_node, work=work.move), 1, 1)
    resolver.add_builtin("SHAPE", Registration(prepare=_shape_prepare, invoke=_shape_node,
                                               reference=_shape_node, work=work.move), 1, 1)
