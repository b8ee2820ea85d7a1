"""CUMSUM: running sums along an axis, added in the input's own type."""

from __future__ import annotations

import numpy as np

from runtime import work
from runtime.kernels.common import axis_value, check, check_types
from runtime.registration import Registration

_CUMSUM_TYPES = ("INT32", "FLOAT32", "INT64")


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


def register(resolver) -> None:
    # CUMSUM has no fast path: its invoke is already the plain rule, its own reference.
    resolver.add_builtin("CUMSUM", Registration(prepare=_cumsum_prepare, invoke=_cumsum_invoke,
                                                reference=_cumsum_invoke, work=work.reduce), 1, 1)
