"""Slicing ops: SLICE (begin and size) and STRIDED_SLICE (begin, end, strides and masks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.errors import KernelError
from accelsim.runtime.kernels.common import check, tensor_values
from accelsim.runtime.registration import Registration


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
            self.out.unchecked_data = data
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
    _strided_slice_reference(ctx, node)


@dataclass(frozen=True)
class StridedSliceMasks:
    """STRIDED_SLICE's options (StridedSliceOptions): bit i of a mask concerns index i of begin/end/strides."""

    begin_mask: int = 0
    end_mask: int = 0
    ellipsis_mask: int = 0
    new_axis_mask: int = 0
    shrink_axis_mask: int = 0
    offset: bool = False

    @classmethod
    def of(cls, options) -> StridedSliceMasks:
        """The masks of a node's parsed options."""
        return cls(options.begin_mask, options.end_mask, options.ellipsis_mask, options.new_axis_mask,
                   options.shrink_axis_mask, bool(options.offset))


def strided_slice(x: np.ndarray, begin, end, strides, masks: StridedSliceMasks) -> np.ndarray:
    """STRIDED_SLICE (strided_slice.cc, reference_ops::StridedSlice): `x` indexed per effective dimension
    (new axes inserted, the ellipsis expanded) from StartForAxis to EndForAxis by the stride, the
    shrunk axes dropped. With `offset`, end is relative to begin. Raises KernelError for a shrunk
    index out of range (LiteRT would leave the output unwritten; TensorFlow rejects it)."""
    p = _build_slice_params(x.shape, begin, end, strides, masks, with_indices=True)
    for axis, size in enumerate(p.shape):
        check(not _bit(p.shrink_mask, axis) or _start_for_axis(p, axis) < size,
              f"STRIDED_SLICE: shrink_axis_mask index {p.begin[axis]} is out of range for axis {axis} of size {size}")
    picked = x.reshape(p.shape)[tuple(_axis_slice(p, a) for a in range(len(p.shape)))]
    return picked.reshape(tuple(d for a, d in enumerate(picked.shape) if not _bit(p.shrink_mask, a)))


def _strided_slice_reference(ctx, node) -> None:
    """`strided_slice` on a node: its begin/end/strides tensors and masks; _SlicePlan implements it."""
    x, begin, end, strides = _slice_inputs(ctx, node)
    out = ctx.output(node, 0)
    shape = _strided_slice_shape(ctx, node) if out.dynamic else out.shape
    picked = strided_slice(x.data, *(tensor_values(t) for t in (begin, end, strides)),
                           StridedSliceMasks.of(node.options))
    check(picked.size == int(np.prod(shape, dtype=np.int64)),
          f"STRIDED_SLICE: the slice holds {picked.size} elements but the output shape is {list(shape)}")
    out.data = picked.reshape(shape)


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


class _SliceWindowPlan:
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
    plan: _SliceWindowPlan | None = node.user_data
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
    plan = _SliceWindowPlan(x, begin, size, out)
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
    plan: _SliceWindowPlan = node.user_data
    out = plan.out
    if plan.index is not None:
        out.data = plan.x.data[plan.index]
        return
    _slice_reference(ctx, node)


def slice_(x: np.ndarray, begin: list[int], size: list[int]) -> np.ndarray:
    """SLICE (slice.cc, reference_ops::Slice): along each axis, size[i] values from begin[i] (size -1:
    to the end of the axis). Raises KernelError naming the axis whose window does not fit."""
    return x[_slice_index(x.shape, begin, size)]


def _slice_reference(ctx, node) -> None:
    """`slice_` on a node: its begin and size (read at prepare when constant); a fixed output shape must
    match the slice."""
    plan: _SliceWindowPlan = node.user_data
    out = plan.out
    begin, size = plan.begin_values, plan.size_values
    if begin is None:
        begin = tensor_values(plan.begin).tolist()
    if size is None:
        size = tensor_values(plan.size).tolist()
    picked = slice_(plan.x.data, begin, size)
    if not (out.dynamic or picked.shape == out.shape):
        raise KernelError(f"SLICE: the slice has shape {list(picked.shape)} but the output's shape is fixed at "
                          f"{list(out.shape)}")
    out.data = picked


def register(resolver) -> None:
    # SLICE: v2 int8, v3 string, v4 int16, v5 rank > 4, v6 uint32; v7 (int4) and v8 (float16) are not
    # implemented.
    slice_ = Registration(prepare=_slice_prepare, invoke=_slice_invoke, reference=_slice_reference, work=work.move)
    resolver.add_builtin("SLICE", slice_, 1, 6)
    # STRIDED_SLICE: v2 int8, v3 bool, v4 rank > 4, v5 string, v6 ellipsis/new-axis masks, v7 uint32,
    # v8 offset.
    resolver.add_builtin("STRIDED_SLICE", Registration(prepare=_strided_slice_prepare, invoke=_strided_slice_invoke,
                                                       reference=_strided_slice_reference, work=work.move), 1, 8)
