"""Ops that move values between the spatial, depth and batch dimensions: SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, check_types, tensor_values
from accelsim.runtime.registration import Registration


def _block_inputs(ctx, node, what: str):
    """(input, block_shape values, paddings/crops values) with the shared shape checks."""
    x, block, pads = (ctx.input(node, i) for i in range(3))
    spatial = len(x.shape) - 2
    check(block.type == "INT32" and pads.type == "INT32", f"block_shape and {what} must be INT32")
    check(block.shape == (spatial,), f"block_shape must have shape [{spatial}], got {list(block.shape)}")
    check(pads.shape == (spatial, 2), f"{what} must have shape [{spatial}, 2], got {list(pads.shape)}")
    block_values = [int(v) for v in tensor_values(block)]
    check(all(v > 0 for v in block_values), f"block_shape values must be positive, got {block_values}")
    return x, block_values, np.asarray(tensor_values(pads), dtype=np.int64).reshape(spatial, 2)


def _space_batch_prepare(shape_fn, what: str):
    """A prepare for SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: 3-D or 4-D input, same quantization in and out."""
    def prepare(ctx, node) -> None:
        check(len(node.inputs) == 3 and len(node.outputs) == 1, "takes 3 inputs and one output")
        x = ctx.input(node, 0)
        out = ctx.output(node, 0)
        check(3 <= len(x.shape) <= 4, f"input must be 3-D or 4-D, got shape {list(x.shape)}")
        check(out.type == x.type, f"output type {out.type} differs from input type {x.type}")
        check(x.dtype != np.dtype(object), f"type {x.type} is not supported")
        if x.type in ("UINT8", "INT8", "INT16"):
            check(x.scale == out.scale and x.zero_point == out.zero_point,
                  "input and output must share scale and zero point")
        if x.type == "INT16":
            check(x.zero_point == 0 and out.zero_point == 0, "int16 zero points must be 0")
        if not (ctx.input(node, 1).is_constant and ctx.input(node, 2).is_constant):
            ctx.set_dynamic(out)
            return
        ctx.resize_tensor(out, shape_fn(*_block_inputs(ctx, node, what)))
    return prepare


def _space_to_batch_shape(x, block, pads) -> tuple[int, ...]:
    batch, *spatial, depth = x.shape
    check(bool(np.all(pads >= 0)), f"paddings must be >= 0, got {pads.tolist()}")
    out_spatial = []
    for size, b, (before, after) in zip(spatial, block, pads.tolist()):
        padded = size + before + after
        check(padded % b == 0, f"padded size {padded} is not a multiple of block size {b}")
        out_spatial.append(padded // b)
    return (batch * int(np.prod(block)), *out_spatial, depth)


def _batch_to_space_shape(x, block, crops) -> tuple[int, ...]:
    batch, *spatial, depth = x.shape
    check(bool(np.all(crops >= 0)), f"crops must be >= 0, got {crops.tolist()}")
    total = int(np.prod(block))
    check(batch % total == 0, f"batch {batch} is not divisible by the block shape product {total}")
    out_spatial = [size * b - before - after for size, b, (before, after) in zip(spatial, block, crops.tolist())]
    return (batch // total, *out_spatial, depth)


def _as_4d(data: np.ndarray) -> np.ndarray:
    """space_to_batch_nd.h ExtendShapeSpaceToBatch: NHC is handled as NH1C."""
    return data if data.ndim == 4 else data[:, :, None, :]


def space_to_batch_nd(x: np.ndarray, block: list[int], pads: np.ndarray, fill) -> np.ndarray:
    """SPACE_TO_BATCH_ND (reference_ops::SpaceToBatchND) of a 3-D or 4-D `x` (3-D as NH1C).

    The spatial dims, padded by `pads` [spatial, 2] with `fill` (the output zero point for 8/16-bit
    types, else 0), split into `block` tiles; output batch (sh * bw + sw) * N + n holds
    padded[n, y * bh + sh, x * bw + sw].
    """
    shape = _space_to_batch_shape(x, block, pads)
    bh, bw = (block + [1])[:2]
    pad_hw = np.vstack([pads, np.zeros((2 - len(block), 2), np.int64)])
    padded = np.pad(_as_4d(x), ((0, 0), tuple(pad_hw[0]), tuple(pad_hw[1]), (0, 0)),
                    constant_values=np.asarray(fill, dtype=x.dtype))
    n, h, w, c = padded.shape
    return padded.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5).reshape(shape)


def _space_to_batch_node(ctx, node) -> None:
    x, block, pads = _block_inputs(ctx, node, "paddings")
    out = ctx.output(node, 0)
    # space_to_batch_nd.cc pads with the output zero point for 8/16-bit types, else 0.
    out.data = space_to_batch_nd(x.data, block, pads, out.zero_point if x.dtype.itemsize <= 2 else 0)


def batch_to_space_nd(x: np.ndarray, block: list[int], crops: np.ndarray) -> np.ndarray:
    """BATCH_TO_SPACE_ND (reference_ops::BatchToSpaceND) of a 3-D or 4-D `x`: SPACE_TO_BATCH_ND's
    inverse interleaving of batches into `block` tiles, then `crops` [spatial, 2] cut from each side."""
    shape = _batch_to_space_shape(x, block, crops)
    bh, bw = (block + [1])[:2]
    crop_hw = np.vstack([crops, np.zeros((2 - len(block), 2), np.int64)])
    nb, h, w, c = _as_4d(x).shape
    n = nb // (bh * bw)
    full = _as_4d(x).reshape(bh, bw, n, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(n, h * bh, w * bw, c)
    top, left = int(crop_hw[0, 0]), int(crop_hw[1, 0])
    out_h, out_w = shape[1], (shape[2] if len(shape) == 4 else 1)
    return full[:, top:top + out_h, left:left + out_w, :].reshape(shape)


def _batch_to_space_node(ctx, node) -> None:
    x, block, crops = _block_inputs(ctx, node, "crops")
    ctx.output(node, 0).data = batch_to_space_nd(x.data, block, crops)


_DEPTH_SPACE_TYPES = ("FLOAT32", "UINT8", "INT8", "INT32", "INT64", "UINT16")


def _block_prepare(op: str, shape_fn):
    """A prepare for the NHWC block rearrangements: 4-D input, block_size > 0, supported type."""
    def prepare(ctx, node) -> None:
        check(len(node.inputs) == 1 and len(node.outputs) == 1, f"{op} takes one input and one output")
        x = ctx.input(node, 0)
        out = ctx.output(node, 0)
        check(len(x.shape) == 4, f"{op}: input must be 4-D, got shape {list(x.shape)}")
        check_types(op, x, [out], _DEPTH_SPACE_TYPES)
        block = node.options.block_size
        check(block > 0, f"{op}: block_size must be > 0, got {block}")
        ctx.resize_tensor(out, shape_fn(x.shape, block))
    return prepare


def _depth_to_space_shape(shape, block: int) -> tuple[int, ...]:
    n, h, w, c = shape
    check(c % (block * block) == 0, f"DEPTH_TO_SPACE: depth {c} is not divisible by block_size^2 = {block * block}")
    return n, h * block, w * block, c // (block * block)


def _space_to_depth_shape(shape, block: int) -> tuple[int, ...]:
    n, h, w, c = shape
    check(h % block == 0 and w % block == 0,
          f"SPACE_TO_DEPTH: height {h} and width {w} must be multiples of block_size {block}")
    return n, h // block, w // block, c * block * block


def depth_to_space(x: np.ndarray, block: int) -> np.ndarray:
    """DEPTH_TO_SPACE (reference_ops::DepthToSpace) of NHWC `x`: input depth index
    (dy * b + dx) * C_out + c moves to pixel (h * b + dy, w * b + dx)."""
    n, h, w, c = x.shape
    blocks = x.reshape(n, h, w, block, block, c // (block * block)).transpose(0, 1, 3, 2, 4, 5)
    return blocks.reshape(n, h * block, w * block, c // (block * block))


def space_to_depth(x: np.ndarray, block: int) -> np.ndarray:
    """SPACE_TO_DEPTH (reference_ops::SpaceToDepth) of NHWC `x`: DEPTH_TO_SPACE's inverse."""
    n, h, w, c = x.shape
    blocks = x.reshape(n, h // block, block, w // block, block, c).transpose(0, 1, 3, 2, 4, 5)
    return blocks.reshape(n, h // block, w // block, c * block * block)


def _block_node(fn):
    """The node form of `depth_to_space` or `space_to_depth` (block_size from the options)."""
    def node_block(ctx, node) -> None:
        ctx.output(node, 0).data = fn(ctx.input(node, 0).data, node.options.block_size)

    return node_block


def register(resolver) -> None:
    # These ops have no fast path: the node form of each array function above is both the invoke
    # and the reference.
    # SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: v2 int8, v3 3-D inputs, v4 int16.
    resolver.add_builtin("SPACE_TO_BATCH_ND", Registration(
        prepare=_space_batch_prepare(_space_to_batch_shape, "paddings"), invoke=_space_to_batch_node,
        reference=_space_to_batch_node, work=work.move), 1, 4)
    resolver.add_builtin("BATCH_TO_SPACE_ND", Registration(
        prepare=_space_batch_prepare(_batch_to_space_shape, "crops"), invoke=_batch_to_space_node,
        reference=_batch_to_space_node, work=work.move), 1, 4)
    # DEPTH_TO_SPACE / SPACE_TO_DEPTH: v2 int8.
    for op, fn, shape_fn in (("DEPTH_TO_SPACE", depth_to_space, _depth_to_space_shape),
                             ("SPACE_TO_DEPTH", space_to_depth, _space_to_depth_shape)):
        node_fn = _block_node(fn)
        resolver.add_builtin(op, Registration(prepare=_block_prepare(op, shape_fn), invoke=node_fn, reference=node_fn,
                                              work=work.move), 1, 2)
