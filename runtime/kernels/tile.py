"""Ops that repeat a tensor: TILE, BROADCAST_TO."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import INDEX_TYPES, check, check_types, int_values, size_outputs
from accelsim.runtime.registration import Registration


def _tile_shape(x, multiples) -> tuple[int, ...]:
    """tile.cc MultiplyShapeDims: one non-negative multiple per dimension."""
    values = int_values(multiples)
    check(len(values) == len(x.shape), f"TILE: {len(values)} multiples for an input of rank {len(x.shape)}")
    check(all(m >= 0 for m in values), f"TILE: multiples {values} must be >= 0")
    return tuple(d * m for d, m in zip(x.shape, values))


def _tile_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "TILE takes 2 inputs and one output")
    x, multiples = ctx.input(node, 0), ctx.input(node, 1)
    check_types("TILE", x, [ctx.output(node, 0)])
    check(multiples.type in INDEX_TYPES, f"TILE: multiples of type {multiples.type} are not supported")
    size_outputs(ctx, node, [multiples], lambda: [_tile_shape(x, multiples)])


def tile(x: np.ndarray, multiples: list[int]) -> np.ndarray:
    """TILE (tile.cc, reference_ops Tile): `x` repeated multiples[i] times along each axis i."""
    return np.tile(x, multiples)


def _tile_node(ctx, node) -> None:
    """`tile` on a node: its multiples tensor, checked against the input's rank."""
    x, multiples = ctx.input(node, 0), ctx.input(node, 1)
    _tile_shape(x, multiples)
    ctx.output(node, 0).data = tile(x.data, int_values(multiples))


def _broadcast_shape(x, shape_t) -> tuple[int, ...]:
    """broadcast_to.cc ResizeOutputTensor: each input dimension is 1 or the target's trailing one."""
    check(len(shape_t.shape) == 1, f"BROADCAST_TO: shape must be 1-D, got shape {list(shape_t.shape)}")
    target = int_values(shape_t)
    check(all(d >= 0 for d in target), f"BROADCAST_TO: shape {target} has a negative dimension")
    extra = len(target) - len(x.shape)
    check(extra >= 0 and all(d in (1, target[extra + i]) for i, d in enumerate(x.shape)),
          f"BROADCAST_TO: shape {target} is not broadcastable from input shape {list(x.shape)}")
    return tuple(target)


def _broadcast_to_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "BROADCAST_TO takes 2 inputs and one output")
    x, shape_t = ctx.input(node, 0), ctx.input(node, 1)
    check_types("BROADCAST_TO", x, [ctx.output(node, 0)])
    check(x.type != "STRING", "BROADCAST_TO: type STRING is not supported")
    check(shape_t.type in INDEX_TYPES, f"BROADCAST_TO: shape must be INT32 or INT64, got {shape_t.type}")
    size_outputs(ctx, node, [shape_t], lambda: [_broadcast_shape(x, shape_t)])


def broadcast_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """BROADCAST_TO (broadcast_to.cc, reference_ops BroadcastTo): `x` broadcast to `shape`, NumPy's
    rule (each input dimension 1 or the target's trailing one), as a new array."""
    return np.broadcast_to(x, shape).copy()


def _broadcast_to_node(ctx, node) -> None:
    """`broadcast_to` on a node: its shape tensor, checked against the input's shape."""
    x = ctx.input(node, 0)
    ctx.output(node, 0).data = broadcast_to(x.data, _broadcast_shape(x, ctx.input(node, 1)))


def register(resolver) -> None:
    # TILE and BROADCAST_TO have no fast path: the node form of the array function (`tile`,
    # `broadcast_to`) is both the invoke and the reference.
    # TILE: v2 string, v3 int8.
    resolver.add_builtin("TILE", Registration(prepare=_tile_prepare, invoke=_tile_node, reference=_tile_node,
                                              work=work.move), 1, 3)
    # BROADCAST_TO starts at v2 (v1 was rolled back upstream); v3 int8/int16; v4 (float8) is not implemented.
    resolver.add_builtin("BROADCAST_TO", Registration(prepare=_broadcast_to_prepare, invoke=_broadcast_to_node,
                                                      reference=_broadcast_to_node, work=work.move), 2, 3)
