"""Ops that pick parts of a tensor: SLICE, GATHER, GATHER_ND, SPLIT, SPLIT_V, UNPACK."""

from __future__ import annotations

import numpy as np

from runtime.errors import KernelError
from runtime.kernels.common import check, tensor_values
from runtime.kernels.tensor import (
    axis_value,
    check_same_quantization,
    check_types,
    int_values,
    node_outputs,
    size_outputs,
)
from runtime.resolver import Registration

_INDEX_TYPES = ("INT16", "INT32", "INT64")
# gather.cc / gather_nd.cc Prepare: the data types each kernel accepts.
_GATHER_TYPES = ("FLOAT32", "FLOAT16", "UINT8", "INT8", "INT16", "UINT16", "INT32", "INT64", "BOOL", "STRING")
# split.cc / split_v.cc / unpack.cc Prepare.
_SPLIT_TYPES = ("FLOAT32", "UINT8", "INT8", "INT16", "INT32", "INT64")
_SPLIT_V_TYPES = (*_SPLIT_TYPES, "UINT16")
_UNPACK_TYPES = ("FLOAT32", "INT32", "UINT8", "INT8", "INT16", "BOOL")


# -- SLICE ----------------------------------------------------------------------------------------

def _slice_window(x, begin, size) -> tuple[tuple[slice, ...], tuple[int, ...]]:
    """slice.cc CalculateOutputShapeVector: (NumPy index, output shape); begin >= 0, size -1 runs to
    the end of the axis."""
    index, shape = [], []
    for axis, (dim, b, s) in enumerate(zip(x.shape, tensor_values(begin).tolist(), tensor_values(size).tolist())):
        if s == -1:
            s = dim - b
        if not (0 <= b <= dim and 0 <= s <= dim - b):
            _slice_error(axis, dim, b, s)
        index.append(slice(b, b + s))
        shape.append(s)
    return tuple(index), tuple(shape)


def _slice_index(shape, begin: list, size: list) -> tuple[slice, ...]:
    """_slice_window's index alone, for invoke (begin and size as Python ints): a short loop, as
    the window of a converted LSTM's SLICE changes every step."""
    index = []
    for dim, b, s in zip(shape, begin, size):
        if s == -1:
            s = dim - b
        if not (0 <= b <= dim and 0 <= s <= dim - b):
            _slice_error(len(index), dim, b, s)
        index.append(slice(b, b + s))
    return tuple(index)


def _slice_error(axis: int, dim: int, b: int, s: int) -> None:
    """The message for a begin/size pair that does not fit the axis (only built on failure)."""
    check(b >= 0, f"SLICE: begin {b} for axis {axis} is negative")
    check(b <= dim, f"SLICE: begin {b} is past the end of axis {axis} (size {dim})")
    check(s >= 0, f"SLICE: size {s} for axis {axis} is invalid (must be >= 0 or -1)")
    raise KernelError(f"SLICE: begin {b} + size {s} exceeds axis {axis} of size {dim}")


class _SlicePlan:
    """SLICE's tensors, the NumPy index when begin and size are constants, and the shapes prepared for."""

    __slots__ = ("x", "begin", "size", "out", "index", "shapes", "out_shape", "begin_values", "size_values")

    def __init__(self, x, begin, size, out):
        self.x, self.begin, self.size, self.out, self.index = x, begin, size, out, None
        self.shapes = (x.shape, begin.shape, size.shape)
        self.out_shape = out.shape
        # A constant begin or size as Python ints, read once (the other one changes at run time).
        self.begin_values = tensor_values(begin).tolist() if begin.is_constant else None
        self.size_values = tensor_values(size).tolist() if size.is_constant else None

    def still_holds(self) -> bool:
        """No input shape changed, nor the output's unless invoke sets it (dynamic)."""
        return self.shapes == (self.x.shape, self.begin.shape, self.size.shape) and (
            self.out.dynamic or self.out.shape == self.out_shape)


def _slice_prepare(ctx, node) -> None:
    # Runs again whenever an upstream shape changes (every loop step in a converted LSTM): the
    # messages are only formatted on failure.
    plan: _SlicePlan | None = node.user_data
    if plan is not None and plan.still_holds():
        return
    check(len(node.inputs) == 3 and len(node.outputs) == 1, "SLICE takes 3 inputs and one output")
    x, begin, size = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)
    out = ctx.output(node, 0)
    if out.type != x.type:
        raise KernelError(f"SLICE: output type {out.type} differs from input type {x.type}")
    if begin.type not in ("INT32", "INT64") or size.type != begin.type:
        raise KernelError(f"SLICE: begin and size must both be INT32 or INT64, got {begin.type} and {size.type}")
    rank = len(x.shape)
    for name, t in (("begin", begin), ("size", size)):
        if len(t.shape) != 1 or t.shape[0] != rank:
            raise KernelError(f"SLICE: {name} must have shape [{rank}] for an input of rank {rank}, "
                              f"got {list(t.shape)}")
    plan = _SlicePlan(x, begin, size, out)
    constant = begin.is_constant and size.is_constant
    if out.shape and -1 not in out.shape_signature:
        # slice.cc: an output whose shape the model fully specifies keeps it; invoke checks the slice fits.
        pass
    elif not constant or -1 in x.shape_signature:
        # The output size depends on begin/size values (or an input shape) known only at invoke.
        ctx.set_dynamic(out)
        node.user_data = plan
        return
    else:
        ctx.resize_tensor(out, _slice_window(x, begin, size)[1])
        plan.out_shape = out.shape
    if constant:
        index, shape = _slice_window(x, begin, size)
        if shape == out.shape:
            plan.index = index
    node.user_data = plan


def _slice_invoke(ctx, node) -> None:
    plan: _SlicePlan = node.user_data
    out = plan.out
    if plan.index is not None:
        out.data = plan.x.data[plan.index]
        return
    x, begin, size = plan.x, plan.begin_values, plan.size_values
    if begin is None:
        begin = tensor_values(plan.begin).tolist()
    if size is None:
        size = tensor_values(plan.size).tolist()
    picked = x.data[_slice_index(x.shape, begin, size)]
    if not (out.dynamic or picked.shape == out.shape):
        raise KernelError(f"SLICE: the slice has shape {list(picked.shape)} but the output's shape is fixed at "
                          f"{list(out.shape)}")
    out.data = picked


# -- GATHER ---------------------------------------------------------------------------------------

def _gather_axes(node, x_rank: int, idx_shape) -> tuple[int, int]:
    """gather.cc Prepare: (axis, batch_dims) made non-negative and checked against the shapes."""
    opts = node.options
    axis = opts.axis + x_rank if opts.axis < 0 else opts.axis
    check(0 <= axis < x_rank, f"GATHER: axis {opts.axis} is out of range for an input of rank {x_rank}")
    batch_dims = opts.batch_dims + len(idx_shape) if opts.batch_dims < 0 else opts.batch_dims
    check(0 <= batch_dims <= len(idx_shape) and batch_dims < x_rank,
          f"GATHER: batch_dims {opts.batch_dims} is out of range for positions of rank {len(idx_shape)} "
          f"and an input of rank {x_rank}")
    check(batch_dims <= axis, f"GATHER: batch_dims {batch_dims} must not exceed axis {axis}")
    return axis, batch_dims


class _GatherPlan:
    """GATHER's tensors and axes; `prefix` indexes the axes before `axis` whole."""

    __slots__ = ("x", "positions", "out", "axis", "batch_dims", "prefix", "leading")

    def __init__(self, x, positions, out, axis: int, batch_dims: int):
        self.x, self.positions, self.out = x, positions, out
        self.axis, self.batch_dims = axis, batch_dims
        self.prefix = (slice(None),) * axis
        # One position along the first axis of an input of rank >= 2 (a converted RNN's step input):
        # x[i] is the output, a view of the output's dtype and shape.
        self.leading = axis == 0 and batch_dims == 0 and positions.shape == () and len(x.shape) > 1


def _gather_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "GATHER takes 2 inputs and one output")
    x, positions = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(positions.type in _INDEX_TYPES, f"GATHER: positions of type {positions.type} are not supported "
                                          f"({', '.join(_INDEX_TYPES)})")
    check(x.type in _GATHER_TYPES, f"GATHER: type {x.type} is not supported")
    check(out.type == x.type, f"GATHER: output type {out.type} differs from input type {x.type}")
    if x.type == "STRING":
        check(len(x.shape) == 1, f"GATHER: string input must be 1-D, got shape {list(x.shape)}")
    axis, batch_dims = _gather_axes(node, len(x.shape), positions.shape)
    for i in range(batch_dims):
        check(x.shape[i] == positions.shape[i], f"GATHER: batch dimension {i} differs: input {list(x.shape)}, "
                                                f"positions {list(positions.shape)}")
    node.user_data = _GatherPlan(x, positions, out, axis, batch_dims)
    # The output shape depends only on the shapes, so it is known here even for runtime positions.
    ctx.resize_tensor(out, x.shape[:axis] + positions.shape[batch_dims:] + x.shape[axis + 1:])


def _check_indices(op: str, idx: np.ndarray, bounds) -> None:
    """gather.cc / gather_nd.cc: a negative index or one past its dimension fails the invoke."""
    limit = np.broadcast_to(np.asarray(bounds, dtype=np.int64), idx.shape)
    bad = np.flatnonzero((idx < 0) | (idx >= limit))
    if bad.size:
        first = bad[0]
        raise KernelError(f"{op}: index {int(idx.reshape(-1)[first])} (element {first} of the indices) is out "
                          f"of bounds for a dimension of size {int(limit.reshape(-1)[first])}")


def _gather_invoke(ctx, node) -> None:
    plan: _GatherPlan = node.user_data
    x, out, axis = plan.x, plan.out, plan.axis
    if plan.leading:
        i = plan.positions.data[()]
        if 0 <= i < x.shape[0]:
            out._data = x.data[i]
            return
    positions = tensor_values(plan.positions)
    if plan.batch_dims == 0 and positions.ndim == 0:
        # One position: a view of that slice (the `...` keeps a 0-d array for a 1-D input).
        i = int(positions)
        if not 0 <= i < x.shape[axis]:
            _check_indices("GATHER", np.asarray(i, dtype=np.int64), x.shape[axis])
        out.data = x.data[(*plan.prefix, i, Ellipsis)]
        return
    idx = np.asarray(positions, dtype=np.int64)
    _check_indices("GATHER", idx, x.shape[axis])
    if plan.batch_dims == 0:
        out.data = np.take(x.data, idx, axis=axis)
        return
    batch_dims = plan.batch_dims
    # reference gather.h: out[b, o, c, i] = x[b, o, idx[b, c], i] over (batch, outer, coords, inner).
    batch = int(np.prod(x.shape[:batch_dims], dtype=np.int64))
    outer = int(np.prod(x.shape[batch_dims:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    data = x.data.reshape(batch, outer, x.shape[axis], inner)
    coords = idx.reshape(batch, int(np.prod(idx.shape[batch_dims:], dtype=np.int64)))
    picked = data[np.arange(batch)[:, None, None], np.arange(outer)[None, :, None], coords[:, None, :]]
    out.data = picked.reshape(out.shape)


# -- GATHER_ND ------------------------------------------------------------------------------------

def _gather_nd_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "GATHER_ND takes 2 inputs and one output")
    params, indices = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(params.type in _GATHER_TYPES, f"GATHER_ND: params of type {params.type} are not supported")
    check(indices.type in _INDEX_TYPES, f"GATHER_ND: indices of type {indices.type} are not supported "
                                        f"({', '.join(_INDEX_TYPES)})")
    check(out.type == params.type, f"GATHER_ND: output type {out.type} differs from params type {params.type}")
    check(len(params.shape) >= 1, "GATHER_ND: params must be at least a vector")
    check(len(indices.shape) >= 1, "GATHER_ND: indices must be at least a vector")
    nd = indices.shape[-1]
    check(nd <= len(params.shape), f"GATHER_ND: index depth {nd} (innermost dimension of indices) exceeds "
                                   f"params rank {len(params.shape)}")
    ctx.resize_tensor(out, indices.shape[:-1] + params.shape[nd:])


def _gather_nd_invoke(ctx, node) -> None:
    params, indices = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(params.data.size > 0 or int(np.prod(indices.shape, dtype=np.int64)) == 0,
          "GATHER_ND: params is empty but indices are not")
    nd = indices.shape[-1]
    idx = np.asarray(tensor_values(indices), dtype=np.int64)
    # LiteRT's kernel fails an index of depth 0 (each picking the whole params) as out of bounds.
    check(nd > 0 or 0 in indices.shape[:-1],
          "GATHER_ND: indices with an empty innermost dimension are out of bounds")
    lead = params.shape[:nd]
    _check_indices("GATHER_ND", idx, np.asarray(lead, dtype=np.int64))
    # reference_ops::GatherNd: each index row picks one contiguous slice of params.
    rows = int(np.prod(lead, dtype=np.int64))
    slice_size = int(np.prod(params.shape[nd:], dtype=np.int64))
    strides = np.asarray([int(np.prod(lead[j + 1:], dtype=np.int64)) for j in range(nd)], dtype=np.int64)
    flat = idx @ strides
    out.data = params.data.reshape(rows, slice_size)[flat].reshape(out.shape)


# -- SPLIT, SPLIT_V, UNPACK -----------------------------------------------------------------------

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
            out._data = part


def _part_indices(outs, axis: int, sizes) -> list[tuple]:
    """(output, NumPy index) pairs: output i takes the i-th run of `sizes` along the axis (reference_ops::Split)."""
    whole = (slice(None),) * axis
    parts, start = [], 0
    for out, size in zip(outs, sizes):
        parts.append((out, (*whole, slice(start, start + size))))
        start += size
    return parts


def _write_parts(ctx, node, x, axis: int, sizes) -> None:
    """Output i takes the i-th run of `sizes` along the axis (reference_ops::Split)."""
    data = x.data
    for out, index in _part_indices(node_outputs(ctx, node), axis, sizes):
        out.data = data[index]


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
    check(sizes_t.type in _INDEX_TYPES, f"SPLIT_V: size_splits must be INT32 or INT64, got {sizes_t.type}")
    check(axis_t.type == "INT32", f"SPLIT_V: axis must be INT32, got {axis_t.type}")
    check(sizes_t.shape == (count,), f"SPLIT_V: size_splits must have shape [{count}], got {list(sizes_t.shape)}")

    def shapes():
        axis, sizes = _split_v_sizes(x, sizes_t, axis_t)
        return [x.shape[:axis] + (s,) + x.shape[axis + 1:] for s in sizes]
    size_outputs(ctx, node, [sizes_t, axis_t], shapes)


def _split_v_invoke(ctx, node) -> None:
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


def _unpack_invoke(ctx, node) -> None:
    data = np.moveaxis(ctx.input(node, 0).data, node.user_data, 0)
    for out, part in zip(node_outputs(ctx, node), data):
        out.data = np.array(part)


def register(resolver) -> None:
    # SLICE: v2 int8, v3 string, v4 int16, v5 rank > 4, v6 uint32; v7 (int4) and v8 (float16) are not
    # implemented.
    resolver.add_builtin("SLICE", Registration(prepare=_slice_prepare, invoke=_slice_invoke), 1, 6)
    # GATHER: v2 int8, v3 bool, v4 int16, v5 batch_dims, v6 int16 positions; v7 (int4) and v8 (float8)
    # are not implemented.
    resolver.add_builtin("GATHER", Registration(prepare=_gather_prepare, invoke=_gather_invoke), 1, 6)
    # GATHER_ND: v2 string, v3 int16, v4 int16 indices, v5 bool; v6 (float8) is not implemented.
    resolver.add_builtin("GATHER_ND", Registration(prepare=_gather_nd_prepare, invoke=_gather_nd_invoke), 1, 5)
    # SPLIT: v2 int8, v3 int32, v4 int16; v5 (float8) is not implemented.
    resolver.add_builtin("SPLIT", Registration(prepare=_split_prepare, invoke=_split_invoke), 1, 4)
    # SPLIT_V: v2 int8; v3 (float8) is not implemented.
    resolver.add_builtin("SPLIT_V", Registration(prepare=_split_v_prepare, invoke=_split_v_invoke), 1, 2)
    # UNPACK: v2 int8/uint8, v3 bool, v4 int16; v5 (float16/bfloat16) and v6 (float8) are not implemented.
    resolver.add_builtin("UNPACK", Registration(prepare=_unpack_prepare, invoke=_unpack_invoke), 1, 4)
