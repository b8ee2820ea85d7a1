"""Ops that move values between the spatial, depth and batch dimensions: SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH."""

from __future__ import annotations

import numpy as np

from runtime import work
from runtime.kernels.common import check, check_types, tensor_values
from runtime.registration import Registration


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


def _space_to_batch_invoke(ctx, node) -> None:
    x, block, pads = _block_inputs(ctx, node, "paddings")
    out = ctx.output(node, 0)
    shape = _space_to_batch_shape(x, block, pads) if out.dynamic else out.shape
    bh, bw = (block + [1])[:2]
    pad_hw = np.vstack([pads, np.zeros((2 - len(block), 2), np.int64)])
    # space_to_batch_nd.cc pads with the output zero point for 8/16-bit types, else 0.
    fill = out.zero_point if x.dtype.itemsize <= 2 else 0
    padded = np.pad(_as_4d(x.data), ((0, 0), tuple(pad_hw[0]), tuple(pad_hw[1]), (0, 0)),
                    constant_values=np.asarray(fill, dtype=x.dtype))
    n, h, w, c = padded.shape
    # Output batch (sh * bw + sw) * N + n holds padded[n, y * bh + sh, x * bw + sw].
    blocks = padded.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    out.data = blocks.reshape(shape)


def _batch_to_space_invoke(ctx, node) -> None:
    x, block, crops = _block_inputs(ctx, node, "crops")
    out = ctx.output(node, 0)
    shape = _batch_to_space_shape(x, block, crops) if out.dynamic else out.shape
    bh, bw = (block + [1])[:2]
    crop_hw = np.vstack([crops, np.zeros((2 - len(block), 2), np.int64)])
    data = _as_4d(x.data)
    nb, h, w, c = data.shape
    n = nb // (bh * bw)
    full = data.reshape(bh, bw, n, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(n, h * bh, w * bw, c)
    top, left = int(crop_hw[0, 0]), int(crop_hw[1, 0])
    out_h, out_w = shape[1], (shape[2] if len(shape) == 4 else 1)
    out.data = full[:, top:top + out_h, left:left + out_w, :].reshape(shape)


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


def _depth_to_space_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    n, h, w, c = x.shape
    b = node.options.block_size
    # Input depth index (dy * b + dx) * C_out + c moves to pixel (h * b + dy, w * b + dx).
    blocks = x.data.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
    out.data = blocks.reshape(out.shape)


def _space_to_depth_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    n, h, w, c = x.shape
    b = node.options.block_size
    blocks = x.data.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    out.data = blocks.reshape(out.shape)


def register(resolver) -> None:
    # These ops have no fast path: each invoke is already the plain rule, its own reference.
    # SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: v2 int8, v3 3-D inputs, v4 int16.
    resolver.add_builtin("SPACE_TO_BATCH_ND", Registration(
        prepare=_space_batch_prepare(_space_to_batch_shape, "paddings"), invoke=_space_to_batch_invoke,
        reference=_space_to_batch_invoke, work=work.move), 1, 4)
    resolver.add_builtin("BATCH_TO_SPACE_ND", Registration(
        prepare=_space_batch_prepare(_batch_to_space_shape, "crops"), invoke=_batch_to_space_invoke,
        reference=_batch_to_space_invoke, work=work.move), 1, 4)
    # DEPTH_TO_SPACE / SPACE_TO_DEPTH: v2 int8.
    resolver.add_builtin("DEPTH_TO_SPACE", Registration(
        prepare=_block_prepare("DEPTH_TO_SPACE", _depth_to_space_shape), invoke=_depth_to_space_invoke,
        reference=_depth_to_space_invoke, work=work.move), 1, 2)
    resolver.add_builtin("SPACE_TO_DEPTH", Registration(
        prepare=_block_prepare("SPACE_TO_DEPTH", _space_to_depth_shape), invoke=_space_to_depth_invoke,
        reference=_space_to_depth_invoke, work=work.move), 1, 2)
