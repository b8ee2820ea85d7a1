"""Ops that cut a tensor into several along an axis: SPLIT, SPLIT_V, UNPACK."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    axis_value,
    check,
    check_same_quantization,
    check_types,
    int_values,
    node_outputs,
    size_outputs,
)
from accelsim.runtime.registration import Registration

# split.cc / split_v.cc / unpack.cc Prepare.
_SPLIT_TYPES = ("FLOAT32", "UINT8", "INT8", "INT16", "INT32", "INT64")
_SPLIT_V_TYPES = (*_SPLIT_TYPES, "UINT16")
_UNPACK_TYPES = ("FLOAT32", "INT32", "UINT8", "INT8", "INT16", "BOOL")
# SPLIT_V's size_splits, as this kernel has always accepted them (INT16 included).
_SIZE_SPLITS_TYPES = ("INT16", "INT32", "INT64")


def _split_shapes(x, axis_t, count: int) -> list[tuple[int, ...]]:
    """split.cc ResizeOutputTensors: `count` equal parts along the axis."""
    axis = axis_value("SPLIT", axis_t, len(x.shape))
    size = x.shape[axis]
    check(count != 0 and size % count == 0, f"SPLIT: axis {axis} of size {size} is not an even split into {count}")
    return [x.shape[:axis] + (size // count,) + x.shape[axis + 1:]] * count


def _split_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2, "SPLIT takes 2 inputs (axis, value)")
    axis_t, x = ctx.input(node, 0), ctx.input(node, 1)
    count = node.options.num_splits
    check(len(node.outputs) == count, f"SPLIT: num_splits is {count} but the node has {len(node.outputs)} outputs")
    outs = node_outputs(ctx, node)
    check_types("SPLIT", x, outs, _SPLIT_TYPES)
    check(axis_t.type == "INT32", f"SPLIT: axis must be INT32, got {axis_t.type}")
    size_outputs(ctx, node, [axis_t], lambda: _split_shapes(x, axis_t, count))
    node.user_data = None
    if axis_t.is_constant:
        axis = axis_value("SPLIT", axis_t, len(x.shape))
        node.user_data = _SplitPlan(x, outs, axis, count)


class _SplitPlan:
    """A SPLIT along a constant axis: the input viewed with that axis as (count, part), moved first,
    so that iterating over the view gives the outputs (of the input's dtype, shapes set by prepare)."""

    __slots__ = ("x", "outs", "split_shape", "order")

    def __init__(self, x, outs, axis: int, count: int):
        self.x, self.outs = x, outs
        shape = x.shape
        self.split_shape = (*shape[:axis], count, shape[axis] // count, *shape[axis + 1:])
        self.order = None if axis == 0 else (axis, *range(axis), *range(axis + 1, len(shape) + 1))

    def run(self) -> None:
        parts = self.x.data.reshape(self.split_shape)
        if self.order is not None:
            parts = parts.transpose(self.order)
        for out, part in zip(self.outs, parts):
            out.unchecked_data = part


def split(x: np.ndarray, axis: int, sizes) -> list[np.ndarray]:
    """SPLIT and SPLIT_V (reference_ops::Split): part i is the i-th run of `sizes` along resolved `axis`.

    The parts are views of `x` (a kernel never writes into its input).
    """
    bounds = np.cumsum([0, *sizes]).tolist()
    whole = (slice(None),) * axis
    return [x[(*whole, slice(start, stop))] for start, stop in zip(bounds[:-1], bounds[1:])]


def _write_parts(ctx, node, x, axis: int, sizes) -> None:
    """The node's outputs are `split`'s parts."""
    for out, part in zip(node_outputs(ctx, node), split(x.data, axis, sizes)):
        out.data = part


def _split_invoke(ctx, node) -> None:
    if node.user_data is not None:
        node.user_data.run()
        return
    axis_t, x = ctx.input(node, 0), ctx.input(node, 1)
    axis = axis_value("SPLIT", axis_t, len(x.shape))
    shapes = _split_shapes(x, axis_t, node.options.num_splits)
    _write_parts(ctx, node, x, axis, [s[axis] for s in shapes])


def _split_v_sizes(x, sizes_t, axis_t) -> tuple[int, list[int]]:
    """split_v.cc ResizeOutputTensors: (axis, sizes) with at most one -1 taking the remainder."""
    axis = axis_value("SPLIT_V", axis_t, len(x.shape))
    sizes = int_values(sizes_t)
    check(sizes.count(-1) <= 1, f"SPLIT_V: size_splits {sizes} contains more than one -1")
    check(all(s >= -1 for s in sizes), f"SPLIT_V: size_splits {sizes} has a negative size")
    dim = x.shape[axis]
    known = sum(s for s in sizes if s != -1)
    if -1 in sizes:
        check(known <= dim, f"SPLIT_V: size_splits {sizes} sum past axis {axis} of size {dim}")
        sizes[sizes.index(-1)] = dim - known
    check(sum(sizes) == dim, f"SPLIT_V: size_splits {sizes} must sum to axis {axis} of size {dim}")
    return axis, sizes


def _split_v_prepare(ctx, node) -> None:
    check(len(node.inputs) == 3, "SPLIT_V takes 3 inputs (value, size_splits, axis)")
    x, sizes_t, axis_t = (ctx.input(node, i) for i in range(3))
    count = node.options.num_splits
    check(len(node.outputs) == count, f"SPLIT_V: num_splits is {count} but the node has {len(node.outputs)} outputs")
    check_types("SPLIT_V", x, node_outputs(ctx, node), _SPLIT_V_TYPES)
    check(sizes_t.type in _SIZE_SPLITS_TYPES, f"SPLIT_V: size_splits must be INT32 or INT64, got {sizes_t.type}")
    check(axis_t.type == "INT32", f"SPLIT_V: axis must be INT32, got {axis_t.type}")
    check(sizes_t.shape == (count,), f"SPLIT_V: size_splits must have shape [{count}], got {list(sizes_t.shape)}")

    def shapes():
        axis, sizes = _split_v_sizes(x, sizes_t, axis_t)
        return [x.shape[:axis] + (s,) + x.shape[axis + 1:] for s in sizes]
    size_outputs(ctx, node, [sizes_t, axis_t], shapes)


def _split_v_node(ctx, node) -> None:
    x, sizes_t, axis_t = (ctx.input(node, i) for i in range(3))
    axis, sizes = _split_v_sizes(x, sizes_t, axis_t)
    _write_parts(ctx, node, x, axis, sizes)


def _unpack_prepare(ctx, node) -> None:
    check(len(node.inputs) == 1, "UNPACK takes one input")
    x = ctx.input(node, 0)
    outs = node_outputs(ctx, node)
    count = node.options.num
    check(len(outs) == count, f"UNPACK: num is {count} but the node has {len(outs)} outputs")
    check(int(np.prod(x.shape, dtype=np.int64)) > 0, f"UNPACK: input shape {list(x.shape)} has no elements")
    rank = len(x.shape)
    axis = node.options.axis + rank if node.options.axis < 0 else node.options.axis
    check(0 <= axis < rank, f"UNPACK: axis {node.options.axis} is out of range for rank {rank}")
    check_types("UNPACK", x, outs, _UNPACK_TYPES)
    check(x.shape[axis] == count, f"UNPACK: num {count} differs from dimension {axis} of shape {list(x.shape)}")
    # unpack.cc: no rescaling, so every output carries the input's scale and zero point.
    check_same_quantization("UNPACK", x, outs)
    node.user_data = axis
    for out in outs:
        ctx.resize_tensor(out, x.shape[:axis] + x.shape[axis + 1:])


def unpack(x: np.ndarray, axis: int) -> list[np.ndarray]:
    """UNPACK (reference_ops::Unpack): the slices of `x` along resolved `axis`, that axis dropped."""
    return [np.array(part) for part in np.moveaxis(x, axis, 0)]


def _unpack_node(ctx, node) -> None:
    """`unpack` on a node; prepare resolved the axis."""
    for out, part in zip(node_outputs(ctx, node), unpack(ctx.input(node, 0).data, node.user_data)):
        out.data = part


def _split_reference(ctx, node) -> None:
    """SPLIT's specification (reference_ops::Split): num_splits equal runs along the axis."""
    axis_t, x = ctx.input(node, 0), ctx.input(node, 1)
    axis = axis_value("SPLIT", axis_t, len(x.shape))
    _write_parts(ctx, node, x, axis, [s[axis] for s in _split_shapes(x, axis_t, node.options.num_splits)])


def register(resolver) -> None:
    # SPLIT: v2 int8, v3 int32, v4 int16; v5 (float8) is not implemented.
    split = Registration(prepare=_split_prepare, invoke=_split_invoke, reference=_split_reference, work=work.move)
    resolver.add_builtin("SPLIT", split, 1, 4)
    # SPLIT_V and UNPACK have no fast path: the node form of `split` and `unpack` is both the invoke and the
    # reference.
    # SPLIT_V: v2 int8; v3 (float8) is not implemented.
    resolver.add_builtin("SPLIT_V", Registration(prepare=_split_v_prepare, invoke=_split_v_node,
                                                 reference=_split_v_node, work=work.move), 1, 2)
    # UNPACK: v2 int8/uint8, v3 bool, v4 int16; v5 (float16/bfloat16) and v6 (float8) are not implemented.
    resolver.add_builtin("UNPACK", Registration(prepare=_unpack_prepare, invoke=_unpack_node,
                                                reference=_unpack_node, work=work.move), 1, 4)
