"""Padding and slicing ops: PAD, STRIDED_SLICE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runtime.kernels.common import check, tensor_values
from runtime.resolver import Registration

_PAD_MAX_DIMS = 5  # reference_ops::PadKernelMaxDimensionCount
_PAD_TYPES = ("FLOAT32", "UINT8", "INT8", "INT16", "INT32", "INT64", "BOOL")
_PADDING_TYPES = ("INT32", "INT64", "INT8", "INT16", "BOOL")


def _is_quantized(t) -> bool:
    return t.quantization is not None and len(t.quantization.scales) > 0


def _pad_amounts(paddings, rank: int) -> np.ndarray:
    """The (rank, 2) [before, after] amounts, checked as pad.cc GetPadParams checks them."""
    check(paddings.type in _PADDING_TYPES, f"PAD: paddings type {paddings.type} is not supported")
    check(len(paddings.shape) == 2 and paddings.shape[1] == 2 and paddings.shape[0] == rank,
          f"PAD: paddings must have shape [{rank}, 2], got {list(paddings.shape)}")
    amounts = np.asarray(tensor_values(paddings), dtype=np.int64).reshape(rank, 2)
    check(bool(np.all(amounts >= 0)), f"PAD: paddings must be >= 0, got {amounts.tolist()}")
    return amounts


def _pad_prepare(ctx, node) -> None:
    check(len(node.inputs) in (2, 3) and len(node.outputs) == 1, "PAD takes 2 or 3 inputs and one output")
    x = ctx.input(node, 0)
    paddings = ctx.input(node, 1)
    value = ctx.input(node, 2)
    out = ctx.output(node, 0)
    rank = len(x.shape)
    check(rank <= _PAD_MAX_DIMS, f"PAD supports up to {_PAD_MAX_DIMS} dimensions, got {rank}")
    check(x.type in _PAD_TYPES, f"PAD: type {x.type} is not supported ({', '.join(_PAD_TYPES)})")
    check(out.type == x.type, f"PAD: output type {out.type} differs from input type {x.type}")
    if value is not None:
        check(value.type == x.type, f"PAD: constant_values type {value.type} differs from input type {x.type}")
        check(int(np.prod(value.shape, dtype=np.int64)) == 1, "PAD: constant_values must hold one value")
        if _is_quantized(x) or x.type == "UINT8":
            check(value.scale == out.scale and value.zero_point == out.zero_point,
                  "PAD: constant_values must share the output's scale and zero point")
    node.user_data = None
    if rank == 0 or not paddings.is_constant:
        ctx.set_dynamic(out)
        return
    amounts = _pad_amounts(paddings, rank)
    ctx.resize_tensor(out, tuple(int(d) for d in np.asarray(x.shape) + amounts.sum(axis=1)))
    if value is None or value.is_constant:
        fill = _pad_value(x, value, out)
        zeros = fill == 0 and not np.signbit(fill)
        node.user_data = _PadPlan(_interior(x.shape, amounts), fill, bool(zeros))


@dataclass(frozen=True)
class _PadPlan:
    """A static PAD's constants: where the input goes in the output, and the fill value."""

    interior: tuple[slice, ...]
    fill: object
    zeros: bool  # the fill is +0 (np.zeros gets pre-zeroed memory, faster than np.full)


def _interior(shape, amounts: np.ndarray) -> tuple[slice, ...]:
    return tuple(slice(int(before), int(before) + d) for d, before in zip(shape, amounts[:, 0]))


def _pad_value(x, value, out):
    """pad.cc: an explicit constant_values, else the output zero point for quantized 8/16-bit, else 0."""
    if value is not None:
        return value.data.reshape(-1)[0]
    if x.type == "UINT8" or (x.type in ("INT8", "INT16") and _is_quantized(x)):
        info = np.iinfo(out.dtype)
        check(info.min <= out.zero_point <= info.max, f"PAD: zero point {out.zero_point} is out of range")
        return out.zero_point
    return 0


def _pad_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    plan: _PadPlan | None = node.user_data
    if plan is not None:
        padded = np.zeros(out.shape, out.dtype) if plan.zeros else np.full(out.shape, plan.fill, dtype=out.dtype)
        padded[plan.interior] = x.data
        out.data = padded
        return
    amounts = _pad_amounts(ctx.input(node, 1), len(x.shape))
    fill = _pad_value(x, ctx.input(node, 2), out)
    out.data = np.pad(x.data, amounts, constant_values=np.asarray(fill, dtype=out.dtype))


@dataclass(frozen=True)
class _SliceParams:
    """strided_slice.cc BuildStridedSliceParams, resolved over the effective (ellipsis/new-axis) dimensions."""

    shape: tuple[int, ...]  # the input shape with new axes inserted
    begin: tuple[int, ...]
    end: tuple[int, ...]
    strides: tuple[int, ...]
    begin_mask: int
    end_mask: int
    shrink_mask: int
    offset: bool


def _bit(mask: int, i: int) -> bool:
    return bool(mask >> i & 1)


def _expand_masks(opts, rank: int, count: int) -> tuple[int, int, int, int, int]:
    """(dims, ellipsis bits, new-axis bits, first ellipsis dim, extra dims the ellipsis covers) over the
    effective dimensions: the input's plus one per new axis (strided_slice.cc BuildStridedSliceParams)."""
    add = sum(1 for i in range(count) if not _bit(opts.ellipsis_mask, i) and _bit(opts.new_axis_mask, i))
    dims = rank + add
    ellipsis_dims = new_axis_dims = expanded = 0
    ellipsis_start = dims
    i = 0
    while i < dims:
        if _bit(opts.ellipsis_mask, i):
            ellipsis_start = i
            stop = max(i + 1, min(i + 1 + add + rank - count, dims))
            expanded = stop - ellipsis_start - 1
            while i < stop:
                ellipsis_dims |= 1 << i
                i += 1
            continue
        if _bit(opts.new_axis_mask, i - expanded):
            new_axis_dims |= 1 << i
        i += 1
    return dims, ellipsis_dims, new_axis_dims, ellipsis_start, expanded


def _build_slice_params(in_shape, begin, end, strides, opts, with_indices: bool) -> _SliceParams:
    """Per effective dimension begin/end/stride and masks; `with_indices` False leaves begin/end at 0."""
    count = len(begin)
    dims, ellipsis_dims, new_axis_dims, ellipsis_start, expanded = _expand_masks(opts, len(in_shape), count)
    shape, b, e, s = [], [], [], []
    begin_mask = end_mask = shrink_mask = 0
    added_ellipsis = added_axes = 0
    for i in range(dims):
        full_range = _bit(ellipsis_dims, i) or (i >= count + expanded and not _bit(new_axis_dims, i))
        if _bit(ellipsis_dims, i):
            added_ellipsis = max(0, i - ellipsis_start)
        if full_range:
            # Ellipsis dimensions and those past the last index take the whole axis.
            begin_mask |= 1 << i
            end_mask |= 1 << i
            first, last, step, size = 0, 0, 1, in_shape[i - added_axes]
        elif _bit(new_axis_dims, i):
            first, last, step, size = 0, 1, 1, 1
            added_axes += 1
        else:
            j = i - added_ellipsis
            first = int(begin[j]) if with_indices else 0
            last = int(end[j]) if with_indices else 0
            step, size = int(strides[j]), in_shape[i - added_axes]
            begin_mask |= _bit(opts.begin_mask, j) << i
            end_mask |= _bit(opts.end_mask, j) << i
            shrink_mask |= _bit(opts.shrink_axis_mask, j) << i
        b.append(first)
        e.append(last)
        s.append(step)
        shape.append(size)
    return _SliceParams(tuple(shape), tuple(b), tuple(e), tuple(s), begin_mask, end_mask, shrink_mask,
                        bool(opts.offset))


def _start_for_axis(p: _SliceParams, axis: int) -> int:
    """reference strided_slice.h StartForAxis: wrap negatives, clamp, then apply begin_mask."""
    size, start, stride = p.shape[axis], p.begin[axis], p.strides[axis]
    if start < 0:
        start += size
    start = min(max(start, 0), size) if stride > 0 else min(max(start, -1), size - 1)
    if _bit(p.begin_mask, axis):
        start = 0 if stride > 0 else size - 1
    return start


def _end_for_axis(p: _SliceParams, axis: int, start: int) -> int:
    """reference strided_slice.h EndForAxis: shrink takes one element; offset makes end relative to start."""
    size, stride = p.shape[axis], p.strides[axis]
    if _bit(p.shrink_mask, axis):
        return start if start >= size else start + 1
    end = p.end[axis] + (start if p.offset else 0)
    if end < 0:
        end += size
    end = min(max(end, 0), size) if stride > 0 else min(max(end, -1), size - 1)
    if _bit(p.end_mask, axis):
        end = size if stride > 0 else -1
    return end


def _slice_output_shape(p: _SliceParams, end_data) -> tuple[int, ...]:
    """strided_slice.cc ResizeOutputTensor: element counts per kept axis (offset: the end value is the size)."""
    out = []
    for axis, stride in enumerate(p.strides):
        check(stride != 0, "STRIDED_SLICE: stride value has to be non-zero")
        if _bit(p.shrink_mask, axis):
            continue
        if p.offset:
            check(axis < len(end_data), f"STRIDED_SLICE: offset mode needs an end value for axis {axis}")
            span = int(end_data[axis])
        else:
            start = _start_for_axis(p, axis)
            span = _end_for_axis(p, axis, start) - start
        if (span < 0) != (stride < 0):
            out.append(0)
        elif stride < 0:
            out.append((span + 1) // stride + 1)
        else:
            out.append(0 if span == 0 else (span - 1) // stride + 1)
    return tuple(out)


def _axis_slice(p: _SliceParams, axis: int) -> slice:
    """The NumPy slice visiting what StridedSlice's loop visits (start, start+stride, ... before end)."""
    start = _start_for_axis(p, axis)
    end = _end_for_axis(p, axis, start)
    stride = p.strides[axis]
    if stride < 0:
        if start < 0:
            return slice(0, 0)
        return slice(start, end if end >= 0 else None, stride)
    return slice(start, end, stride)


def _slice_inputs(ctx, node):
    x, begin, end, strides = (ctx.input(node, i) for i in range(4))
    return x, begin, end, strides


def _strided_slice_prepare(ctx, node) -> None:
    check(len(node.inputs) == 4 and len(node.outputs) == 1, "STRIDED_SLICE takes 4 inputs and one output")
    x, begin, end, strides = _slice_inputs(ctx, node)
    out = ctx.output(node, 0)
    for name, t in (("begin", begin), ("end", end), ("strides", strides)):
        check(len(t.shape) == 1, f"STRIDED_SLICE: {name} must be 1-D, got shape {list(t.shape)}")
        check(t.type == "INT32", f"STRIDED_SLICE: {name} must be INT32, got {t.type}")
    check(begin.shape == end.shape == strides.shape,
          f"STRIDED_SLICE: begin, end and strides differ in length ({begin.shape[0]}, {end.shape[0]}, "
          f"{strides.shape[0]})")
    check(begin.shape[0] <= 31, "STRIDED_SLICE: at most 31 indices are supported")
    check(out.type == x.type, f"STRIDED_SLICE: output type {out.type} differs from input type {x.type}")
    opts = node.options
    node.user_data = None
    known = strides.is_constant and (opts.offset or (begin.is_constant and end.is_constant))
    if not known:
        ctx.set_dynamic(out)
        return
    ctx.resize_tensor(out, _strided_slice_shape(ctx, node))
    if begin.is_constant and end.is_constant:
        node.user_data = _static_slice(x, [tensor_values(t) for t in (begin, end, strides)], opts, out)


class _SlicePlan:
    """A STRIDED_SLICE with constant indices: the input reshaped to `pre` (new axes added; None when
    that is its own shape), indexed with `index`, then reshaped to `post` (None when already the output's)."""

    __slots__ = ("x", "pre", "index", "post", "out")

    def __init__(self, x, pre, index, post, out):
        self.x, self.pre, self.index, self.post, self.out = x, pre, index, post, out

    def run(self) -> None:
        data = self.x.data
        if self.pre is not None:
            data = data.reshape(self.pre)
        data = data[self.index]
        if self.post is not None:
            data = data.reshape(self.post)
        if self.out.shape:
            # The output's dtype and shape, by the prepare that built this plan: no setter checks.
            self.out._data = data
        else:
            self.out.data = data  # indexing down to 0-d gives a NumPy scalar, which the setter wraps


def _static_slice(x, values, opts, out) -> _SlicePlan | None:
    """The slice of a node whose indices are constants; None if invoke must report a problem."""
    out_shape = out.shape
    p = _build_slice_params(x.shape, *values, opts, with_indices=True)
    if any(_bit(p.shrink_mask, axis) and _start_for_axis(p, axis) >= size for axis, size in enumerate(p.shape)):
        return None
    index = tuple(_axis_slice(p, a) for a in range(len(p.shape)))
    count = int(np.prod([len(range(*sl.indices(size))) for sl, size in zip(index, p.shape)], dtype=np.int64))
    if count != int(np.prod(out_shape, dtype=np.int64)):
        return None
    # The shape the index gives, found on a zero-stride stand-in for the input.
    picked = np.broadcast_to(np.zeros((), np.int8), p.shape)[index].shape
    return _SlicePlan(x, None if p.shape == x.shape else p.shape, index, None if picked == out_shape else out_shape,
                      out)


def _strided_slice_shape(ctx, node) -> tuple[int, ...]:
    x, begin, end, strides = _slice_inputs(ctx, node)
    opts = node.options
    values = [tensor_values(t) for t in (begin, end, strides)]
    p = _build_slice_params(x.shape, *values, opts, with_indices=not opts.offset)
    return _slice_output_shape(p, values[1])


def _strided_slice_invoke(ctx, node) -> None:
    plan: _SlicePlan | None = node.user_data
    if plan is not None:
        plan.run()
        return
    x, begin, end, strides = _slice_inputs(ctx, node)
    out = ctx.output(node, 0)
    shape = _strided_slice_shape(ctx, node) if out.dynamic else out.shape
    values = [tensor_values(t) for t in (begin, end, strides)]
    p = _build_slice_params(x.shape, *values, node.options, with_indices=True)
    for axis, size in enumerate(p.shape):
        # LiteRT would leave the output unwritten; TensorFlow rejects the index.
        check(not _bit(p.shrink_mask, axis) or _start_for_axis(p, axis) < size,
              f"STRIDED_SLICE: shrink_axis_mask index {p.begin[axis]} is out of range for axis {axis} of size {size}")
    picked = x.data.reshape(p.shape)[tuple(_axis_slice(p, a) for a in range(len(p.shape)))]
    check(picked.size == int(np.prod(shape, dtype=np.int64)),
          f"STRIDED_SLICE: the slice holds {picked.size} elements but the output shape is {list(shape)}")
    out.data = picked.reshape(shape)


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


def register(resolver) -> None:
    # PAD: v2 int8, v3 int16, v4 rank 5, v5 bool; v6 (float8) is not implemented.
    resolver.add_builtin("PAD", Registration(prepare=_pad_prepare, invoke=_pad_invoke), 1, 5)
    # STRIDED_SLICE: v2 int8, v3 bool, v4 rank > 4, v5 string, v6 ellipsis/new-axis masks, v7 uint32,
    # v8 offset.
    resolver.add_builtin("STRIDED_SLICE", Registration(prepare=_strided_slice_prepare,
                                                       invoke=_strided_slice_invoke), 1, 8)
    # SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: v2 int8, v3 3-D inputs, v4 int16.
    resolver.add_builtin("SPACE_TO_BATCH_ND", Registration(
        prepare=_space_batch_prepare(_space_to_batch_shape, "paddings"), invoke=_space_to_batch_invoke), 1, 4)
    resolver.add_builtin("BATCH_TO_SPACE_ND", Registration(
        prepare=_space_batch_prepare(_batch_to_space_shape, "crops"), invoke=_batch_to_space_invoke), 1, 4)
