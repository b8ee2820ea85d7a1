"""TRANSPOSE: permute a tensor's dimensions."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, check_types, int_values, size_outputs
from accelsim.runtime.registration import Registration

_TRANSPOSE_MAX_DIMS = 8  # transpose.cc kTransposeMaxDimensions


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
        out.unchecked_data = x.data.transpose(perm).copy()  # a C-ordered copy, ~1.3 us below np.transpose's
        return
    x = ctx.input(node, 0)
    perm = _transpose_perm(x, ctx.input(node, 1))
    ctx.output(node, 0).data = np.ascontiguousarray(np.transpose(x.data, perm))


def transpose(x: np.ndarray, perm) -> np.ndarray:
    """TRANSPOSE (transpose.cc, reference_ops::Transpose): output dimension i is input dimension
    perm[i], for a resolved permutation `perm` of [0, rank)."""
    return np.ascontiguousarray(np.transpose(x, perm))


def _transpose_reference(ctx, node) -> None:
    """`transpose` on a node: its perm tensor, checked and resolved (negative entries from the end)."""
    x = ctx.input(node, 0)
    ctx.output(node, 0).data = transpose(x.data, _transpose_perm(x, ctx.input(node, 1)))


def register(resolver) -> None:
    # TRANSPOSE: v2 int8, v3 bool, v4 rank 5, v5 int16, v6 rank 6; v7 (int4), v8 (bfloat16, rank > 6) and
    # v9 (float16) are not implemented.
    resolver.add_builtin("TRANSPOSE", Registration(prepare=_transpose_prepare, invoke=_transpose_invoke,
                                                   reference=_transpose_reference, work=work.move), 1, 6)
