"""Ops that pick values by index tensors: GATHER, GATHER_ND."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.errors import KernelError
from accelsim.runtime.kernels.common import check, tensor_values
from accelsim.runtime.registration import Registration

_INDEX_TYPES = ("INT16", "INT32", "INT64")
# gather.cc / gather_nd.cc Prepare: the data types each kernel accepts.
_GATHER_TYPES = ("FLOAT32", "FLOAT16", "UINT8", "INT8", "INT16", "UINT16", "INT32", "INT64", "BOOL", "STRING")


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
            out.unchecked_data = x.data[i]
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


def gather_nd(params: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """GATHER_ND (reference_ops::GatherNd): each row of `indices`' last axis picks one contiguous slice of params.

    The output shape is indices.shape[:-1] + params.shape[indices.shape[-1]:]. Raises KernelError for
    an index out of bounds, non-empty indices into empty params, or an index of depth 0 (LiteRT's
    kernel fails those as out of bounds, though each would pick the whole params).
    """
    check(params.size > 0 or indices.size == 0, "GATHER_ND: params is empty but indices are not")
    nd = indices.shape[-1]
    check(nd > 0 or 0 in indices.shape[:-1],
          "GATHER_ND: indices with an empty innermost dimension are out of bounds")
    idx = indices.astype(np.int64)
    lead = params.shape[:nd]
    _check_indices("GATHER_ND", idx, np.asarray(lead, dtype=np.int64))
    strides = np.asarray([int(np.prod(lead[j + 1:], dtype=np.int64)) for j in range(nd)], dtype=np.int64)
    rows = params.reshape(int(np.prod(lead, dtype=np.int64)), int(np.prod(params.shape[nd:], dtype=np.int64)))
    return rows[idx @ strides].reshape(indices.shape[:-1] + params.shape[nd:])


def _gather_nd_node(ctx, node) -> None:
    """`gather_nd` on a node (the indices tensor's values, constant or not)."""
    indices = ctx.input(node, 1)
    out = ctx.output(node, 0)
    values = np.asarray(tensor_values(indices), dtype=np.int64).reshape(indices.shape)
    out.data = gather_nd(ctx.input(node, 0).data, values).reshape(out.shape)
def gather(x: np.ndarray, positions: np.ndarray, axis: int, batch_dims: int = 0) -> np.ndarray:
    """GATHER (reference gather.h) along resolved `axis`: out[b, o, c, i] = x[b, o, positions[b, c], i] over
    (batch_dims, the axes before `axis`, the positions' own axes, the axes after it); with no batch dims,
    np.take along the axis. Raises KernelError for a position outside the axis.
    """
    idx = positions.astype(np.int64)
    _check_indices("GATHER", idx, x.shape[axis])
    if batch_dims == 0:
        return np.take(x, idx, axis=axis)
    batch = int(np.prod(x.shape[:batch_dims], dtype=np.int64))
    outer = int(np.prod(x.shape[batch_dims:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    data = x.reshape(batch, outer, x.shape[axis], inner)
    coords = idx.reshape(batch, int(np.prod(idx.shape[batch_dims:], dtype=np.int64)))
    picked = data[np.arange(batch)[:, None, None], np.arange(outer)[None, :, None], coords[:, None, :]]
    return picked.reshape(x.shape[:axis] + idx.shape[batch_dims:] + x.shape[axis + 1:])


def _gather_reference(ctx, node) -> None:
    """`gather` on a node; prepare resolved the axis and batch dims."""
    plan: _GatherPlan = node.user_data
    positions = np.asarray(tensor_values(plan.positions)).reshape(plan.positions.shape)
    ctx.output(node, 0).data = gather(plan.x.data, positions, plan.axis, plan.batch_dims)


def register(resolver) -> None:
    # GATHER: v2 int8, v3 bool, v4 int16, v5 batch_dims, v6 int16 positions; v7 (int4) and v8 (float8)
    # are not implemented.
    resolver.add_builtin("GATHER", Registration(prepare=_gather_prepare, invoke=_gather_invoke,
                                                reference=_gather_reference, work=work.move), 1, 6)
    # GATHER_ND: v2 string, v3 int16, v4 int16 indices, v5 bool; v6 (float8) is not implemented.
    # GATHER_ND has no fast path: the node form of `gather_nd` is both the invoke and the reference.
    resolver.add_builtin("GATHER_ND", Registration(prepare=_gather_nd_prepare, invoke=_gather_nd_node,
                                                   reference=_gather_nd_node, work=work.move), 1, 5)
