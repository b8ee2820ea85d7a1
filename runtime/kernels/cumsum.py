"""CUMSUM: running sums along an axis, added in the input's own type."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import axis_value, check, check_types
from accelsim.runtime.registration import Registration

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


def cumsum(x: np.ndarray, axis: int, exclusive: bool = False, reverse: bool = False) -> np.ndarray:
    """CUMSUM of `x` along resolved `axis` (reference_ops::CumSum, cumsum.h), in x's dtype.

    cumsum.h adds one element at a time along the axis (integers wrap): NumPy's accumulate. Exclusive:
    element i sums the elements before it; summing [0, x0, ..., x_{n-2}] keeps the running-sum rounding
    (subtracting x from the inclusive sum would not). Reverse runs from the axis' end.
    """
    data = np.flip(x, axis) if reverse else x
    if exclusive:
        lead = np.zeros_like(np.take(data, [0], axis=axis))
        data = np.concatenate([lead, np.take(data, np.arange(data.shape[axis] - 1), axis=axis)], axis=axis)
    summed = np.cumsum(data, axis=axis, dtype=x.dtype)
    return np.flip(summed, axis) if reverse else summed


def _cumsum_node(ctx, node) -> None:
    x = ctx.input(node, 0)
    axis = axis_value("CUMSUM", ctx.input(node, 1), len(x.shape))
    ctx.output(node, 0).data = cumsum(x.data, axis, node.options.exclusive, node.options.reverse)


def register(resolver) -> None:
    # CUMSUM has no fast path: the node form of `cumsum` is both the invoke and the reference.
    resolver.add_builtin("CUMSUM", Registration(prepare=_cumsum_prepare, invoke=_cumsum_node,
                                                reference=_cumsum_node, work=work.reduce), 1, 1)
