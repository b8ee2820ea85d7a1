"""Comparisons, logical ops and SELECT / SELECT_V2.

Quantized comparisons rescale both inputs to a common fixed-point scale first, as
comparisons.cc ComparisonQuantized does; SELECT copies values without requantizing.
"""

from __future__ import annotations

import operator

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    QuantParams,
    broadcast_shape,
    check,
    check_inputs,
    check_type,
    integer_domain,
    is_quantized,
    table_index,
)
from accelsim.runtime.quant import multiply_by_quantized_multiplier, quantize_multiplier
from accelsim.runtime.registration import Registration

_COMPARE = {
    "EQUAL": np.equal,
    "NOT_EQUAL": np.not_equal,
    "LESS": np.less,
    "LESS_EQUAL": np.less_equal,
    "GREATER": np.greater,
    "GREATER_EQUAL": np.greater_equal,
}
# The same comparisons on NumPy scalars (the values of 0-d inputs): they give NumPy bools.
_SCALAR_COMPARE = {
    "EQUAL": operator.eq,
    "NOT_EQUAL": operator.ne,
    "LESS": operator.lt,
    "LESS_EQUAL": operator.le,
    "GREATER": operator.gt,
    "GREATER_EQUAL": operator.ge,
}
_SCALAR_LOGICAL = {"LOGICAL_AND": operator.and_, "LOGICAL_OR": operator.or_}
_ORDERED_TYPES = ("FLOAT32", "FLOAT16", "INT16", "INT32", "INT64", "UINT8", "INT8")
_COMPARE_TYPES = {
    "EQUAL": ("BOOL", *_ORDERED_TYPES),
    "NOT_EQUAL": ("BOOL", *_ORDERED_TYPES),
    "LESS": _ORDERED_TYPES,
    "LESS_EQUAL": _ORDERED_TYPES,
    "GREATER": _ORDERED_TYPES,
    "GREATER_EQUAL": _ORDERED_TYPES,
}
_LEFT_SHIFT = 8  # comparisons.cc: inputs are shifted left 8 bits before rescaling


def _check_output(op: str, out, expected: str) -> None:
    check(out.type == expected, f"{op}: the output must be {expected}, got {out.type}")


# -- EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL ------------------------------


def _rescaled_table(op: str, t) -> np.ndarray:
    """Every value of t's type rescaled (_rescaled); applied with np.take(table, table_index(q))."""
    return _rescaled(op, t, integer_domain(t.dtype))


def _rescaled(op: str, t, q: np.ndarray) -> np.ndarray:
    """The values q of tensor t as ComparisonQuantized rescales them: ((q - zero_point) << 8) times
    the input's own scale in fixed point."""
    # comparisons.cc quantizes the scale itself with QuantizeMultiplierSmallerThanOneExp, which is
    # only defined for scales in (0, 1).
    check(is_quantized(t) and 0.0 < t.scale < 1.0,
          f"{op}: quantized {t.type} input {t.name!r} needs a per-tensor scale in (0, 1), got {t.scale}")
    return _rescaled_values(q, t)


def _rescaled_values(q: np.ndarray, qp) -> np.ndarray:
    """ComparisonQuantized's rescale of values q with (scale, zero point) qp: ((q - zp) << 8) times the
    scale, quantized with QuantizeMultiplierSmallerThanOneExp."""
    shifted = (q.astype(np.int64) - qp.zero_point) << _LEFT_SHIFT
    return multiply_by_quantized_multiplier(shifted, *quantize_multiplier(qp.scale))


def compare(op: str, a: np.ndarray, b: np.ndarray,
            quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER or GREATER_EQUAL of broadcast `a` and `b`
    (comparisons.cc), as bools: of the raw values, or with (a, b) `quantization` (uint8/int8 always,
    quantized int16 for (NOT_)EQUAL) of both rescaled as ComparisonQuantized does (_rescaled_values)."""
    if quantization is not None:
        a, b = _rescaled_values(a, quantization[0]), _rescaled_values(b, quantization[1])
    return np.asarray(_COMPARE[op](a, b))


def _uses_rescaling(op: str, t) -> bool:
    """uint8/int8 always compare rescaled; int16 only for (NOT_)EQUAL when quantized."""
    if t.type in ("UINT8", "INT8"):
        return True
    return t.type == "INT16" and op in ("EQUAL", "NOT_EQUAL") and is_quantized(t)


def _comparison(op: str) -> Registration:
    def prepare(ctx, node) -> None:
        check_inputs(node, 2)
        a, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
        check(a.type == b.type, f"{op}: input types differ ({a.type} and {b.type})")
        check_type(op, a, _COMPARE_TYPES[op])
        _check_output(op, out, "BOOL")
        # comparisons.cc NotEqualEval writes nothing for an int16 input without quantization.
        check(not (op == "NOT_EQUAL" and a.type == "INT16" and not is_quantized(a)),
              "NOT_EQUAL: INT16 inputs must be quantized")
        tables = (_rescaled_table(op, a), _rescaled_table(op, b)) if _uses_rescaling(op, a) else None
        node.user_data = (a, b, out, tables)
        ctx.resize_tensor(out, broadcast_shape(a.shape, b.shape))

    fn = _COMPARE[op]

    def invoke(ctx, node) -> None:
        a_t, b_t, out, tables = node.user_data
        a, b = a_t.data, b_t.data
        if tables is not None:
            a, b = np.take(tables[0], table_index(a)), np.take(tables[1], table_index(b))
        elif not out.shape:
            # Two 0-d inputs: a NumPy scalar comparison (~0.3 us against the ufunc's ~0.9).
            out.unchecked_data = np.array(_SCALAR_COMPARE[op](a[()], b[()]))
            return
        # The ufunc broadcasts to the output's shape; of two 0-d arrays it gives a NumPy scalar,
        # which the data setter turns into a 0-d array.
        out.data = fn(a, b)

    def node_compare(ctx, node) -> None:
        """`compare` on a node: its inputs' quantization when they compare rescaled (prepare checked it)."""
        a, b = ctx.input(node, 0), ctx.input(node, 1)
        ctx.output(node, 0).data = compare(op, a.data, b.data, QuantParams.of(a, b) if _uses_rescaling(op, a) else None)

    return Registration(prepare=prepare, invoke=invoke, reference=node_compare, work=work.elementwise)


# -- LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT ----------------------------------------------------


def logical_and(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LOGICAL_AND (logical.cc): a && b of broadcast bools."""
    return np.asarray(np.logical_and(a, b))


def logical_or(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LOGICAL_OR (logical.cc): a || b of broadcast bools."""
    return np.asarray(np.logical_or(a, b))


def logical_not(x: np.ndarray) -> np.ndarray:
    """LOGICAL_NOT (logical.cc): !x of bools."""
    return np.asarray(np.logical_not(x))


def _logical_binary(op: str, fn, reference_fn) -> Registration:
    """LOGICAL_AND or LOGICAL_OR: the ufunc `fn` as the invoke, `reference_fn` on a node as the reference."""
    def prepare(ctx, node) -> None:
        check_inputs(node, 2)
        a, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
        check(a.type == "BOOL" and b.type == "BOOL", f"{op}: inputs must be BOOL, got {a.type} and {b.type}")
        _check_output(op, out, "BOOL")
        node.user_data = (a, b, out)
        ctx.resize_tensor(out, broadcast_shape(a.shape, b.shape))

    scalar_fn = _SCALAR_LOGICAL[op]

    def invoke(ctx, node) -> None:
        a, b, out = node.user_data
        if not out.shape:
            # Two 0-d inputs: NumPy bool scalars (~0.3 us against the ufunc's ~0.9).
            out.unchecked_data = np.array(scalar_fn(a.data[()], b.data[()]))
            return
        out.data = fn(a.data, b.data)

    def reference(ctx, node) -> None:
        """`reference_fn` on a node's two inputs."""
        ctx.output(node, 0).data = reference_fn(ctx.input(node, 0).data, ctx.input(node, 1).data)

    return Registration(prepare=prepare, invoke=invoke, reference=reference, work=work.elementwise)


def _logical_not_prepare(ctx, node) -> None:
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check(x.type == "BOOL", f"LOGICAL_NOT: the input must be BOOL, got {x.type}")
    _check_output("LOGICAL_NOT", out, "BOOL")
    ctx.resize_tensor(out, x.shape)


def _logical_not_node(ctx, node) -> None:
    ctx.output(node, 0).data = logical_not(ctx.input(node, 0).data)


# -- SELECT, SELECT_V2 -----------------------------------------------------------------------

_MAX_SELECT_RANK = 8


def _select_prepare(version_two: bool):
    op = "SELECT_V2" if version_two else "SELECT"

    def prepare(ctx, node) -> None:
        check_inputs(node, 3)
        cond, x, y, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
        check(cond.type == "BOOL", f"{op}: the condition must be BOOL, got {cond.type}")
        check(x.type == y.type, f"{op}: the value inputs differ in type ({x.type} and {y.type})")
        check(out.type == x.type, f"{op}: output type {out.type} differs from the values' type {x.type}")
        node.user_data = False  # whether a rank-1 condition selects along the first dimension
        shapes = [tuple(cond.shape), tuple(x.shape), tuple(y.shape)]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        # select.cc: all one-element tensors keep the output's own shape (mixed scalar forms).
        if all(n == 1 for n in sizes) and int(np.prod(out.shape, dtype=np.int64)) == 1:
            ctx.resize_tensor(out, out.shape)
            return
        if shapes[0] == shapes[1] == shapes[2]:
            ctx.resize_tensor(out, x.shape)
            return
        if version_two:
            shape = broadcast_shape(broadcast_shape(shapes[0], shapes[1]), shapes[2])
            check(len(shape) <= _MAX_SELECT_RANK,
                  f"SELECT_V2: the broadcast shape {list(shape)} has more than {_MAX_SELECT_RANK} dimensions")
            ctx.resize_tensor(out, shape)
            return
        # SELECT (v1): a scalar condition, or a rank-1 one matching the values' first dimension.
        rank_one = len(shapes[0]) == 1 and len(shapes[1]) >= 1 and shapes[0][0] == shapes[1][0]
        check(len(shapes[0]) == 0 or rank_one,
              f"SELECT: condition shape {list(shapes[0])} must equal the values' shape {list(shapes[1])}, "
              "be a scalar, or be rank 1 matching their first dimension (SELECT_V2 broadcasts)")
        check(shapes[1] == shapes[2], f"SELECT: the value inputs differ in shape ({list(shapes[1])} and "
                                      f"{list(shapes[2])})")
        node.user_data = rank_one
        ctx.resize_tensor(out, x.shape)

    return prepare


def select(cond: np.ndarray, x: np.ndarray, y: np.ndarray, shape: tuple[int, ...],
           rank_one: bool = False) -> np.ndarray:
    """SELECT or SELECT_V2 (select.cc): x where `cond`, else y, broadcast to the output `shape`.

    rank_one: SELECT's rank-1 condition picks whole slices along the first dimension (RankOneSelect).
    One-element tensors throughout keep the output's own shape (select.cc's mixed scalar forms).
    """
    if int(np.prod(shape, dtype=np.int64)) == 1 and cond.size == 1 and x.size == 1 and y.size == 1:
        return (x if cond.reshape(-1)[0] else y).reshape(shape).copy()
    if rank_one:
        cond = cond.reshape(cond.shape + (1,) * (x.ndim - 1))
    return np.broadcast_to(np.where(cond, x, y), shape).copy()


def _select_node(ctx, node) -> None:
    """`select` on a node; prepare stored whether SELECT's condition is rank one."""
    out = ctx.output(node, 0)
    out.data = select(ctx.input(node, 0).data, ctx.input(node, 1).data, ctx.input(node, 2).data, out.shape,
                      node.user_data)


# -- registration ----------------------------------------------------------------------------


def register(resolver) -> None:
    add = resolver.add_builtin
    comparisons = {op: _comparison(op) for op in _COMPARE}
    # EQUAL: v2 int8, v3 string (not implemented), v4 int16, v5 quantized int16.
    add("EQUAL", comparisons["EQUAL"], 1, 2)
    add("EQUAL", comparisons["EQUAL"], 4, 5)
    # NOT_EQUAL: v2 int8, v3 string (not implemented), v4 quantized int16.
    add("NOT_EQUAL", comparisons["NOT_EQUAL"], 1, 2)
    add("NOT_EQUAL", comparisons["NOT_EQUAL"], 4, 4)
    # LESS, GREATER_EQUAL: v2 int8, v3 int16. LESS_EQUAL, GREATER: v2 int8.
    add("LESS", comparisons["LESS"], 1, 3)
    add("GREATER_EQUAL", comparisons["GREATER_EQUAL"], 1, 3)
    add("LESS_EQUAL", comparisons["LESS_EQUAL"], 1, 2)
    add("GREATER", comparisons["GREATER"], 1, 2)
    add("LOGICAL_AND", _logical_binary("LOGICAL_AND", np.logical_and, logical_and), 1, 1)
    add("LOGICAL_OR", _logical_binary("LOGICAL_OR", np.logical_or, logical_or), 1, 1)
    # LOGICAL_NOT, SELECT and SELECT_V2 have no fast path: the node form of the array function
    # (`logical_not`, `select`) is both the invoke and the reference.
    add("LOGICAL_NOT", Registration(prepare=_logical_not_prepare, invoke=_logical_not_node,
                                    reference=_logical_not_node, work=work.elementwise), 1, 1)
    # SELECT: v2 int8, v3 5-D, v4 uint32. SELECT_V2: v2 uint32.
    add("SELECT", Registration(prepare=_select_prepare(False), invoke=_select_node, reference=_select_node,
                               work=work.elementwise), 1, 4)
    add("SELECT_V2", Registration(prepare=_select_prepare(True), invoke=_select_node, reference=_select_node,
                                  work=work.elementwise),
        1, 2)
