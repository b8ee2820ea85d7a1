"""Ops that make a tensor from scalars or a shape: FILL, ZEROS_LIKE, RANGE.

An output whose shape depends on a non-constant input's values is marked dynamic in prepare and
takes its shape at invoke, as in TFLite."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    INDEX_TYPES,
    check,
    check_same_quantization,
    check_types,
    int_values,
    size_outputs,
)
from accelsim.runtime.registration import Registration

_RANGE_TYPES = ("INT32", "FLOAT32", "INT64")
_ZEROS_LIKE_TYPES = ("INT64", "INT32", "FLOAT32")


def _fill_shape(dims) -> tuple[int, ...]:
    values = int_values(dims)
    check(all(d >= 0 for d in values), f"FILL: dimensions {values} must be >= 0")
    return tuple(values)


def _fill_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "FILL takes 2 inputs and one output")
    dims, value = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check(len(dims.shape) == 1, f"FILL: dims must be 1-D, got shape {list(dims.shape)}")
    check(dims.type in INDEX_TYPES, f"FILL: dims must be INT32 or INT64, got {dims.type}")
    check(value.shape == (), f"FILL: value must be a scalar, got shape {list(value.shape)}")
    check_types("FILL", value, [out])
    # fill.cc: the value is copied as is, so it must already be in the output's quantization.
    check_same_quantization("FILL", value, [out])
    if value.type == "INT16":
        check(value.zero_point == 0, "FILL: int16 zero points must be 0")
    size_outputs(ctx, node, [dims], lambda: [_fill_shape(dims)])


def fill(dims: tuple[int, ...], value: np.ndarray) -> np.ndarray:
    """FILL (fill.cc): an array of shape `dims` holding the scalar `value` in its type (copied as is,
    so a quantized value is already in the output's quantization)."""
    return np.full(dims, value.reshape(())[()], dtype=value.dtype)


def _fill_node(ctx, node) -> None:
    """`fill` on a node: its dims tensor, checked non-negative."""
    out = ctx.output(node, 0)
    out.data = fill(_fill_shape(ctx.input(node, 0)), ctx.input(node, 1).data)


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


def range_values(start: np.generic, limit: np.generic, delta: np.generic) -> np.ndarray:
    """RANGE of NumPy scalars of one type (range.cc): start, start + delta, ... short of limit, in that type.

    Float32: range.cc CalculateRange adds delta to a running float32 value; a float32 cumsum repeats it.
    Integers: start + i * delta, wrapping in the type as the running sum does. Raises KernelError when
    delta is 0 or points away from limit.
    """
    count = _range_count(start, limit, delta)
    if isinstance(start, np.floating):
        steps = np.full(count, delta, dtype=np.float32)
        steps[:1] = start
        return np.cumsum(steps, dtype=np.float32)
    return (int(start) + np.arange(count, dtype=np.int64) * int(delta)).astype(np.asarray(start).dtype)


def _range_node(ctx, node) -> None:
    out = ctx.output(node, 0)
    out.data = range_values(*_range_scalars(ctx, node)).astype(out.dtype)


def _zeros_like_prepare(ctx, node) -> None:
    check(len(node.inputs) == 1 and len(node.outputs) == 1, "ZEROS_LIKE takes one input and one output")
    x = ctx.input(node, 0)
    check_types("ZEROS_LIKE", x, [ctx.output(node, 0)], _ZEROS_LIKE_TYPES)
    ctx.resize_tensor(ctx.output(node, 0), x.shape)


def zeros_like(x: np.ndarray) -> np.ndarray:
    """ZEROS_LIKE (zeros_like.cc): zeros of `x`'s shape and type."""
    return np.zeros(x.shape, dtype=x.dtype)


def _zeros_like_node(ctx, node) -> None:
    ctx.output(node, 0).data = zeros_like(ctx.input(node, 0).data)


def register(resolver) -> None:
    # FILL, ZEROS_LIKE and RANGE have no fast path: the node form of the array function (`fill`,
    # `zeros_like`, `range_values`) is both the invoke and the reference.
    # FILL: v2 bool/string, v3 int8/int16; v4 (float16) and v5 (float8) are not implemented.
    resolver.add_builtin("FILL", Registration(prepare=_fill_prepare, invoke=_fill_node, reference=_fill_node,
                                              work=work.move), 1, 3)
    resolver.add_builtin("ZEROS_LIKE", Registration(prepare=_zeros_like_prepare, invoke=_zeros_like_node,
                                                    reference=_zeros_like_node, work=work.move), 1, 1)
    # RANGE: v2 int64.
    resolver.add_builtin("RANGE", Registration(prepare=_range_prepare, invoke=_range_node,
                                               reference=_range_node, work=work.move), 1, 2)
