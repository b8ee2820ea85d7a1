"""Tensor-manipulation ops: PADV2, MIRROR_PAD, TRANSPOSE, TILE, BROADCAST_TO, EXPAND_DIMS, FILL, RANGE,
ZEROS_LIKE, CUMSUM, DEPTH_TO_SPACE, SPACE_TO_DEPTH (SLICE, GATHER, SPLIT and friends are in gather.py).

These ops move values without arithmetic (CUMSUM and RANGE add in their own type), so quantized
tensors pass through unchanged. An output whose shape depends on a non-constant input's values is
marked dynamic in prepare and takes its shape at invoke, as in TFLite.
"""

from __future__ import annotations

import numpy as np

from runtime.kernels.common import check, tensor_values
from runtime.kernels.slicing import _pad_invoke, _pad_prepare
from runtime.resolver import Registration

_INDEX_TYPES = ("INT32", "INT64")
_MIRROR_REFLECT = 0  # schema MirrorPadMode: REFLECT = 0, SYMMETRIC = 1
_TRANSPOSE_MAX_DIMS = 8  # transpose.cc kTransposeMaxDimensions
_RANGE_TYPES = ("INT32", "FLOAT32", "INT64")
_ZEROS_LIKE_TYPES = ("INT64", "INT32", "FLOAT32")
_CUMSUM_TYPES = ("INT32", "FLOAT32", "INT64")
_DEPTH_SPACE_TYPES = ("FLOAT32", "UINT8", "INT8", "INT32", "INT64", "UINT16")


def int_values(t) -> list[int]:
    """A tensor's values as Python ints, flattened."""
    return [int(v) for v in np.asarray(tensor_values(t)).reshape(-1)]


def node_outputs(ctx, node) -> list:
    """Every output tensor of the node."""
    return [ctx.output(node, i) for i in range(len(node.outputs))]


def size_outputs(ctx, node, inputs, shapes_fn) -> None:
    """Resize the outputs to shapes_fn() when `inputs` are constants; otherwise defer to invoke."""
    outs = node_outputs(ctx, node)
    if not all(t.is_constant for t in inputs):
        for out in outs:
            ctx.set_dynamic(out)
        return
    for out, shape in zip(outs, shapes_fn()):
        ctx.resize_tensor(out, shape)


def axis_value(op: str, t, rank: int) -> int:
    """A one-element axis tensor, made non-negative and checked against [-rank, rank)."""
    check(int(np.prod(t.shape, dtype=np.int64)) == 1, f"{op}: axis must hold one value, got shape {list(t.shape)}")
    value = int_values(t)[0]
    axis = value + rank if value < 0 else value
    check(0 <= axis < rank, f"{op}: axis {value} is out of range [-{rank}, {rank})")
    return axis


def check_types(op: str, x, outs, allowed=None) -> None:
    """x's type is one of `allowed` (when given) and every output has it."""
    check(allowed is None or x.type in allowed, f"{op}: type {x.type} is not supported ({', '.join(allowed or ())})")
    for i, out in enumerate(outs):
        check(out.type == x.type, f"{op}: output {i} type {out.type} differs from input type {x.type}")


def check_same_quantization(op: str, x, outs) -> None:
    """Every output carries x's scale and zero point (values are copied, never rescaled)."""
    for i, out in enumerate(outs):
        check(x.scale == out.scale and x.zero_point == out.zero_point,
              f"{op}: output {i} quantization ({out.scale}, {out.zero_point}) differs from the input's "
              f"({x.scale}, {x.zero_point})")


# -- MIRROR_PAD -----------------------------------------------------------------------------------

def _mirror_amounts(x, paddings, mode: int) -> np.ndarray:
    """mirror_pad.cc: [rank, 2] pads, each at most the dimension (minus one for REFLECT)."""
    rank = len(x.shape)
    check(paddings.type in _INDEX_TYPES, f"MIRROR_PAD: paddings type {paddings.type} is not supported")
    check(paddings.shape == (rank, 2), f"MIRROR_PAD: paddings must have shape [{rank}, 2], got {list(paddings.shape)}")
    amounts = np.asarray(tensor_values(paddings), dtype=np.int64).reshape(rank, 2)
    offset = 1 if mode == _MIRROR_REFLECT else 0
    for axis, (dim, (before, after)) in enumerate(zip(x.shape, amounts.tolist())):
        check(min(before, after) >= 0, f"MIRROR_PAD: paddings must be >= 0, got {amounts.tolist()}")
        check(max(before, after) <= dim - offset,
              f"MIRROR_PAD: padding ({before}, {after}) of axis {axis} exceeds its size {dim}"
              f"{' minus 1 (REFLECT)' if offset else ''}")
    return amounts


def _mirror_pad_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "MIRROR_PAD takes 2 inputs and one output")
    x, paddings = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check_types("MIRROR_PAD", x, [out])
    check(x.type != "STRING", "MIRROR_PAD: type STRING is not supported")
    if x.type in ("UINT8", "INT8", "INT16"):
        check_same_quantization("MIRROR_PAD", x, [out])
    if x.type == "INT16":
        check(x.zero_point == 0, "MIRROR_PAD: int16 zero points must be 0")
    mode = node.options.mode
    size_outputs(ctx, node, [paddings],
                  lambda: [tuple(np.asarray(x.shape) + _mirror_amounts(x, paddings, mode).sum(axis=1))])


def _mirror_pad_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    mode = node.options.mode
    amounts = _mirror_amounts(x, ctx.input(node, 1), mode)
    # REFLECT excludes the edge value (offset 1), SYMMETRIC repeats it: NumPy's reflect/symmetric.
    ctx.output(node, 0).data = np.pad(x.data, amounts, mode="reflect" if mode == _MIRROR_REFLECT else "symmetric")


# -- TRANSPOSE ------------------------------------------------------------------------------------

def _transpose_perm(x, perm) -> list[int]:
    """transpose.cc ResizeOutputTensor: a permutation of [0, rank), negative entries counted from the end."""
    rank = len(x.shape)
    check(perm.shape == (rank,), f"TRANSPOSE: perm must have shape [{rank}], got {list(perm.shape)}")
    values = int_values(perm)
    check(all(-rank <= p < rank for p in values), f"TRANSPOSE: perm {values} is out of bounds for rank {rank}")
    resolved = [p + rank if p < 0 else p for p in values]
    check(len(set(resolved)) == rank, f"TRANSPOSE: perm {values} has duplicate values")
    return resolved


def _transpose_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "TRANSPOSE takes 2 inputs and one output")
    x, perm = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(len(x.shape) <= _TRANSPOSE_MAX_DIMS, f"TRANSPOSE supports up to {_TRANSPOSE_MAX_DIMS} dimensions, "
                                               f"got {len(x.shape)}")
    check_types("TRANSPOSE", x, [out])
    check(x.type != "STRING", "TRANSPOSE: type STRING is not supported")
    check(perm.type == "INT32", f"TRANSPOSE: perm must be INT32, got {perm.type}")
    size_outputs(ctx, node, [perm], lambda: [tuple(x.shape[p] for p in _transpose_perm(x, perm))])
    # A constant perm is resolved once (the input's rank is fixed until the next prepare), and the
    # output, of the input's type and a shape known here, is stored without the setter's checks.
    node.user_data = (x, out, tuple(_transpose_perm(x, perm))) if perm.is_constant else None


def _transpose_invoke(ctx, node) -> None:
    if node.user_data is not None:
        x, out, perm = node.user_data
        out._data = x.data.transpose(perm).copy()  # a C-ordered copy, ~1.3 us below np.transpose's
        return
    x = ctx.input(node, 0)
    perm = _transpose_perm(x, ctx.input(node, 1))
    ctx.output(node, 0).data = np.ascontiguousarray(np.transpose(x.data, perm))


# -- TILE, BROADCAST_TO, EXPAND_DIMS --------------------------------------------------------------

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
    check(multiples.type in _INDEX_TYPES, f"TILE: multiples of type {multiples.type} are not supported")
    size_outputs(ctx, node, [multiples], lambda: [_tile_shape(x, multiples)])


def _tile_invoke(ctx, node) -> None:
    x, multiples = ctx.input(node, 0), ctx.input(node, 1)
    _tile_shape(x, multiples)
    ctx.output(node, 0).data = np.tile(x.data, int_values(multiples))


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
    check(shape_t.type in _INDEX_TYPES, f"BROADCAST_TO: shape must be INT32 or INT64, got {shape_t.type}")
    size_outputs(ctx, node, [shape_t], lambda: [_broadcast_shape(x, shape_t)])


def _broadcast_to_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    shape = _broadcast_shape(x, ctx.input(node, 1))
    ctx.output(node, 0).data = np.broadcast_to(x.data, shape).copy()


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
    check(axis_t.type in _INDEX_TYPES, f"EXPAND_DIMS: axis must be INT32 or INT64, got {axis_t.type}")
    size_outputs(ctx, node, [axis_t], lambda: [_expanded_shape(x, axis_t)])


def _expand_dims_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    ctx.output(node, 0).data = x.data.reshape(_expanded_shape(x, ctx.input(node, 1)))


# -- FILL, RANGE, ZEROS_LIKE ----------------------------------------------------------------------

def _fill_shape(dims) -> tuple[int, ...]:
    values = int_values(dims)
    check(all(d >= 0 for d in values), f"FILL: dimensions {values} must be >= 0")
    return tuple(values)


def _fill_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "FILL takes 2 inputs and one output")
    dims, value = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(len(dims.shape) == 1, f"FILL: dims must be 1-D, got shape {list(dims.shape)}")
    check(dims.type in _INDEX_TYPES, f"FILL: dims must be INT32 or INT64, got {dims.type}")
    check(value.shape == (), f"FILL: value must be a scalar, got shape {list(value.shape)}")
    check_types("FILL", value, [out])
    # fill.cc: the value is copied as is, so it must already be in the output's quantization.
    check_same_quantization("FILL", value, [out])
    if value.type == "INT16":
        check(value.zero_point == 0, "FILL: int16 zero points must be 0")
    size_outputs(ctx, node, [dims], lambda: [_fill_shape(dims)])


def _fill_invoke(ctx, node) -> None:
    value = ctx.input(node, 1)
    out = ctx.output(node, 0)
    out.data = np.full(_fill_shape(ctx.input(node, 0)), value.data.reshape(())[()], dtype=out.dtype)


def _range_count(start, limit, delta) -> int:
    """range.cc GetSize: delta != 0 and pointing from start to limit; integer or float32 ceil division."""
    check(delta != 0, "RANGE: delta must not be 0")
    check((start >= limit and delta < 0) or (start <= limit and delta > 0),
          f"RANGE: delta {delta} does not lead from start {start} to limit {limit}")
    if isinstance(start, np.floating):
        return int(np.ceil(np.abs((limit - start) / delta)))
    return int((abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta)))


def _range_scalars(ctx, node) -> tuple:
    return tuple(ctx.input(node, i).data.reshape(())[()] for i in range(3))


def _range_prepare(ctx, node) -> None:
    check(len(node.inputs) == 3 and len(node.outputs) == 1, "RANGE takes 3 inputs and one output")
    start, limit, delta = (ctx.input(node, i) for i in range(3))
    for name, t in (("start", start), ("limit", limit), ("delta", delta)):
        check(t.shape == (), f"RANGE: {name} must be a scalar, got shape {list(t.shape)}")
        check(t.type == start.type, f"RANGE: {name} is {t.type} but start is {start.type}")
    check_types("RANGE", start, [ctx.output(node, 0)], _RANGE_TYPES)
    size_outputs(ctx, node, [start, limit, delta], lambda: [(_range_count(*_range_scalars(ctx, node)),)])


def _range_invoke(ctx, node) -> None:
    start, limit, delta = _range_scalars(ctx, node)
    out = ctx.output(node, 0)
    count = _range_count(start, limit, delta)
    if out.type == "FLOAT32":
        # range.cc CalculateRange adds delta to a running float32 value; a float32 cumsum repeats it.
        steps = np.full(count, delta, dtype=np.float32)
        steps[:1] = start
        out.data = np.cumsum(steps, dtype=np.float32)
        return
    # Integers: start + i * delta, wrapping in the output type as the running sum does.
    out.data = (int(start) + np.arange(count, dtype=np.int64) * int(delta)).astype(out.dtype)


def _zeros_like_prepare(ctx, node) -> None:
    check(len(node.inputs) == 1 and len(node.outputs) == 1, "ZEROS_LIKE takes one input and one output")
    x = ctx.input(node, 0)
    check_types("ZEROS_LIKE", x, [ctx.output(node, 0)], _ZEROS_LIKE_TYPES)
    ctx.resize_tensor(ctx.output(node, 0), x.shape)


def _zeros_like_invoke(ctx, node) -> None:
    out = ctx.output(node, 0)
    out.data = np.zeros(ctx.input(node, 0).shape, dtype=out.dtype)


# -- CUMSUM ---------------------------------------------------------------------------------------

def _cumsum_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "CUMSUM takes 2 inputs and one output")
    x, axis_t = ctx.input(node, 0), ctx.input(node, 1)
    check_types("CUMSUM", x, [ctx.output(node, 0)], _CUMSUM_TYPES)
    check(axis_t.type == "INT32", f"CUMSUM: axis must be INT32, got {axis_t.type}")
    check(int(np.prod(axis_t.shape, dtype=np.int64)) == 1, f"CUMSUM: axis must hold one value, got shape "
                                                           f"{list(axis_t.shape)}")
    check(len(x.shape) >= 1, "CUMSUM: input must have at least one dimension")
    ctx.resize_tensor(ctx.output(node, 0), x.shape)


def _cumsum_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    axis = axis_value("CUMSUM", ctx.input(node, 1), len(x.shape))
    data = np.flip(x.data, axis) if node.options.reverse else x.data
    if node.options.exclusive:
        # Exclusive: element i sums the elements before it; summing [0, x0, ..., x_{n-2}] keeps the
        # running-sum rounding of cumsum.h (subtracting x from the inclusive sum would not).
        lead = np.zeros_like(np.take(data, [0], axis=axis))
        data = np.concatenate([lead, np.take(data, np.arange(data.shape[axis] - 1), axis=axis)], axis=axis)
    # cumsum.h adds one element at a time along the axis (wrapping for integers): NumPy's accumulate.
    summed = np.cumsum(data, axis=axis, dtype=x.dtype)
    ctx.output(node, 0).data = np.flip(summed, axis) if node.options.reverse else summed


# -- DEPTH_TO_SPACE, SPACE_TO_DEPTH ---------------------------------------------------------------

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
    # PADV2 is PAD's kernel with a constant_values input (pad.cc): v2 int8, v3 int16, v4 rank 5, v5 bool;
    # v6 (float8) is not implemented.
    resolver.add_builtin("PADV2", Registration(prepare=_pad_prepare, invoke=_pad_invoke), 1, 5)
    # MIRROR_PAD: v2 int8, v3 int16.
    resolver.add_builtin("MIRROR_PAD", Registration(prepare=_mirror_pad_prepare, invoke=_mirror_pad_invoke), 1, 3)
    # TRANSPOSE: v2 int8, v3 bool, v4 rank 5, v5 int16, v6 rank 6; v7 (int4), v8 (bfloat16, rank > 6) and
    # v9 (float16) are not implemented.
    resolver.add_builtin("TRANSPOSE", Registration(prepare=_transpose_prepare, invoke=_transpose_invoke), 1, 6)
    # TILE: v2 string, v3 int8.
    resolver.add_builtin("TILE", Registration(prepare=_tile_prepare, invoke=_tile_invoke), 1, 3)
    # BROADCAST_TO starts at v2 (v1 was rolled back upstream); v3 int8/int16; v4 (float8) is not implemented.
    resolver.add_builtin("BROADCAST_TO", Registration(prepare=_broadcast_to_prepare, invoke=_broadcast_to_invoke),
                         2, 3)
    resolver.add_builtin("EXPAND_DIMS", Registration(prepare=_expand_dims_prepare, invoke=_expand_dims_invoke), 1, 1)
    # FILL: v2 bool/string, v3 int8/int16; v4 (float16) and v5 (float8) are not implemented.
    resolver.add_builtin("FILL", Registration(prepare=_fill_prepare, invoke=_fill_invoke), 1, 3)
    # RANGE: v2 int64.
    resolver.add_builtin("RANGE", Registration(prepare=_range_prepare, invoke=_range_invoke), 1, 2)
    resolver.add_builtin("ZEROS_LIKE", Registration(prepare=_zeros_like_prepare, invoke=_zeros_like_invoke), 1, 1)
    resolver.add_builtin("CUMSUM", Registration(prepare=_cumsum_prepare, invoke=_cumsum_invoke), 1, 1)
    # DEPTH_TO_SPACE / SPACE_TO_DEPTH: v2 int8.
    resolver.add_builtin("DEPTH_TO_SPACE", Registration(
        prepare=_block_prepare("DEPTH_TO_SPACE", _depth_to_space_shape), invoke=_depth_to_space_invoke), 1, 2)
    resolver.add_builtin("SPACE_TO_DEPTH", Registration(
        prepare=_block_prepare("SPACE_TO_DEPTH", _space_to_depth_shape), invoke=_space_to_depth_invoke), 1, 2)
