"""TFLite's sparse tensor format (SparsityParameters) and DENSIFY.

A sparse tensor of rank r is stored as a traversal of r + len(block_map) levels: the r (blocked) original
dimensions and one level per block dimension, in `traversal_order`. Each level is DENSE (every index,
dense_size of them) or SPARSE_CSR (for each position of the level above, the indices
array_indices[array_segments[p]:array_segments[p + 1]]). Every complete path holds one stored value.
`densify` expands the paths level by level, vectorized over all paths of a level
(sparsity_format_converter.cc FormatConverter::SparseToDense).
"""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check
from accelsim.runtime.registration import Registration

_DENSIFY_TYPES = ("FLOAT32", "FLOAT16", "INT8")


def _block_sizes(shape, sparsity) -> list[int]:
    """Block b's size: the dense_size of level traversal_order[rank + b] (as FormatConverter reads it)."""
    rank, levels = len(shape), sparsity.dim_metadata
    sizes = []
    for b, dim in enumerate(sparsity.block_map):
        check(0 <= dim < rank, f"sparsity block_map entry {dim} is not a dimension of a rank-{rank} tensor")
        level = sparsity.traversal_order[rank + b]
        check(0 <= level < len(levels), f"sparsity traversal_order entry {level} has no dim_metadata")
        size = levels[level].dense_size
        check(size > 0 and shape[dim] % size == 0,
              f"sparsity block size {size} does not divide dimension {dim} of shape {list(shape)}")
        sizes.append(size)
    return sizes


def _expand_sparse_level(parents: np.ndarray, segments: np.ndarray, indices: np.ndarray, level: int):
    """For each parent position, its children's positions in `indices` and their coordinates."""
    check(parents.size == 0 or int(parents.max()) + 1 < segments.size,
          f"sparsity level {level}: array_segments has {segments.size} entries, too few for its parents")
    starts, ends = segments[parents], segments[parents + 1]
    counts = ends - starts
    check(bool(np.all(counts >= 0)), f"sparsity level {level}: array_segments must not decrease")
    owner = np.repeat(np.arange(parents.size), counts)
    first = np.cumsum(counts) - counts
    positions = starts[owner] + np.arange(int(counts.sum())) - first[owner]
    check(positions.size == 0 or int(positions.max()) < indices.size,
          f"sparsity level {level}: array_segments point past the {indices.size} array_indices")
    return owner, positions, indices[positions]


def _level_size(dim: int, shape, sparsity, block_sizes) -> int:
    """How many positions traversal dimension `dim` has: a block size, or a (blocked) original dimension."""
    rank = len(shape)
    if dim >= rank:
        return int(block_sizes[dim - rank])
    size = int(shape[dim])
    if dim in sparsity.block_map:
        size //= int(block_sizes[list(sparsity.block_map).index(dim)])
    return size


def sparse_coordinates(shape, sparsity) -> tuple[np.ndarray, ...]:
    """The dense index, per original dimension, of every stored value (in storage order)."""
    rank = len(shape)
    check(rank >= 1, "a sparse tensor needs at least one dimension")
    order, levels = list(sparsity.traversal_order), sparsity.dim_metadata
    check(len(order) == len(levels) == rank + len(sparsity.block_map) and sorted(order) == list(range(len(order))),
          f"sparsity of a rank-{rank} tensor with {len(sparsity.block_map)} block dimensions needs "
          f"{rank + len(sparsity.block_map)} levels, got traversal_order {order} and {len(levels)} dim_metadata")
    block_sizes = _block_sizes(shape, sparsity)
    parents = np.zeros(1, dtype=np.int64)  # each path's position in its last level (prev_idx)
    coords: list[np.ndarray] = []
    for level, meta in enumerate(levels):
        if meta.format == "DENSE":
            n = meta.dense_size
            # A dense level walks a whole dimension (or block): its size is known from the shape, and
            # trusting a corrupted one would expand to any size.
            expected = _level_size(order[level], shape, sparsity, block_sizes)
            check(n == expected, f"sparsity level {level} (DENSE) has dense_size {n}, but the dimension it "
                                 f"traverses has size {expected}")
            owner = np.repeat(np.arange(parents.size), n)
            local = np.tile(np.arange(n, dtype=np.int64), parents.size)
            parents = parents[owner] * n + local
        else:
            segments = np.asarray(meta.array_segments, dtype=np.int64)
            indices = np.asarray(meta.array_indices, dtype=np.int64)
            owner, parents, local = _expand_sparse_level(parents, segments, indices, level)
        coords = [c[owner] for c in coords] + [local]
    index = [np.zeros(parents.size, dtype=np.int64) for _ in range(rank)]
    for level in range(rank):
        index[order[level]] = coords[level]
    for level in range(rank, len(order)):
        block = order[level] - rank
        dim = sparsity.block_map[block]
        index[dim] = index[dim] * block_sizes[block] + coords[level]
    for dim, (idx, size) in enumerate(zip(index, shape)):
        check(idx.size == 0 or (int(idx.min()) >= 0 and int(idx.max()) < size),
              f"sparsity addresses index {int(idx.max()) if idx.size else 0} of dimension {dim} (size {size})")
    return tuple(index)


def densify(values: np.ndarray, shape, sparsity) -> np.ndarray:
    """DENSIFY (densify.cc, sparsity FormatConverter): the dense tensor of `shape` whose stored values,
    in the traversal order `sparsity` describes, are `values` (zeros elsewhere)."""
    index = sparse_coordinates(shape, sparsity)
    values = np.asarray(values).reshape(-1)
    check(values.size == index[0].size,
          f"sparse tensor stores {values.size} values but its sparsity describes {index[0].size}")
    dense = np.zeros(tuple(shape), dtype=values.dtype)
    dense[index] = values
    return dense


def stored_values(ctx, tensor) -> np.ndarray | None:
    """A sparse constant's stored values, read from its model buffer (None if the tensor has no data).

    The loader gives sparse tensors no dense data (their buffers do not hold the dense shape); TFLite
    keeps the compressed values as such a tensor's data, and these are they.
    """
    model = ctx.interpreter.model
    buffer = model.buffer_bytes(model.subgraphs[ctx.subgraph_index].tensors[tensor.index].buffer)
    if len(buffer) == 0:
        return None
    return np.frombuffer(buffer, dtype=tensor.dtype)


def densify_constant(ctx, tensor, op: str) -> np.ndarray:
    """The dense values of a sparse constant input of `op`."""
    values = stored_values(ctx, tensor)
    check(values is not None, f"{op}: sparse tensor {tensor.name!r} must be a constant")
    return densify(values, tensor.shape, tensor.sparsity)


def _densify_prepare(ctx, node) -> None:
    op = "DENSIFY"
    check(len(node.inputs) == 1 and len(node.outputs) == 1, f"{op} takes one input and one output")
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(x.sparsity is not None, f"{op}: input {x.name!r} has no sparsity parameters")
    check(x.type in _DENSIFY_TYPES, f"{op}: type {x.type} is not supported ({', '.join(_DENSIFY_TYPES)})")
    check(out.type == x.type, f"{op}: output type {out.type} differs from input type {x.type}")
    # densify.cc: the input is constant, so the dense tensor is computed once.
    node.user_data = densify_constant(ctx, x, op)
    ctx.resize_tensor(out, x.shape)


def _densify_invoke(ctx, node) -> None:
    ctx.output(node, 0).data = node.user_data


def _densify_reference(ctx, node) -> None:
    """DENSIFY's specification: the dense values of the sparse constant (computed once in prepare otherwise)."""
    ctx.output(node, 0).data = densify_constant(ctx, ctx.input(node, 0), "DENSIFY")


def _densify_work(ctx, node) -> work.NodeWork:
    """densify.cc densifies constant weights once, at the first invoke: nothing per inference after it."""
    if ctx.input(node, 0).is_constant:
        return work.done_at_prepare(ctx, node)
    return work.move(ctx, node)


def register(resolver) -> None:
    resolver.add_builtin("DENSIFY", Registration(prepare=_densify_prepare, invoke=_densify_invoke,
                                                 reference=_densify_reference, work=_densify_work), 1, 1)
