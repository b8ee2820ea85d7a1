"""BATCH_MATMUL: float32, int8 (int8 or int32 output) and int16 (int16 or int8 right-hand side).

out[..., i, j] = sum_k adj(lhs)[..., i, k] * adj(rhs)[..., k, j] with NumPy broadcasting of the batch
dims (batch_matmul.cc). LiteRT runs the quantized types through reference_ops::BatchMatMul: the sums are
exact in a float GEMM here (see _gemm_dtype) and go through its output stage, MultiplyByQuantizedMultiplier
(int8, double rounding) or the int64 overload (int16), which matched LiteRT bit for bit. `batch_matmul` is
the specification the plans implement (tests/runtime/test_references.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, fast_clip, integer_domain, store_plan
from accelsim.runtime.quant import (
    dtype_range,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_int64,
    quantize_multiplier,
)
from accelsim.runtime.registration import Registration

_OP = "BATCH_MATMUL"
# (lhs, rhs) -> allowed output types; float32 x int8 is the hybrid path (not implemented).
_TYPES = {
    ("FLOAT32", "FLOAT32"): ("FLOAT32",),
    ("INT8", "INT8"): ("INT8", "INT32"),
    ("INT16", "INT16"): ("INT16",),
    ("INT16", "INT8"): ("INT16",),
}


@dataclass
class _Plan:
    out_shape: tuple[int, ...]
    dtype: type  # of the GEMM operands
    lhs_zp: int = 0
    rhs_zp: int = 0
    requantize: Callable | None = None  # int sums -> output values; None for float and int32 outputs
    rhs: np.ndarray | None = None  # the adjusted, offset right-hand side of a constant input


def _matrix(x: np.ndarray, adjoint: bool) -> np.ndarray:
    return np.swapaxes(x, -1, -2) if adjoint else x


def _output_shape(lhs_shape, rhs_shape, adj_x: bool, adj_y: bool) -> tuple[int, ...]:
    """batch_matmul.cc Prepare: ranks 2..5, broadcastable batch dims, matching accumulation depth."""
    for name, shape in (("lhs", lhs_shape), ("rhs", rhs_shape)):
        check(2 <= len(shape) <= 5, f"{_OP}: {name} must have rank 2 to 5, got shape {list(shape)}")
    rank = max(len(lhs_shape), len(rhs_shape))
    lhs = (1,) * (rank - len(lhs_shape)) + tuple(lhs_shape)
    rhs = (1,) * (rank - len(rhs_shape)) + tuple(rhs_shape)
    batch = []
    for a, b in zip(lhs[:-2], rhs[:-2]):
        check(a == b or a == 1 or b == 1,
              f"{_OP}: batch dimensions of {list(lhs_shape)} and {list(rhs_shape)} do not broadcast")
        batch.append(b if a == 1 else a)
    depth_lhs = lhs[-2] if adj_x else lhs[-1]
    depth_rhs = rhs[-1] if adj_y else rhs[-2]
    check(depth_lhs == depth_rhs, f"{_OP}: lhs {list(lhs_shape)} (adj_x={adj_x}) and rhs {list(rhs_shape)} "
                                  f"(adj_y={adj_y}) have accumulation depths {depth_lhs} and {depth_rhs}")
    rows = lhs[-1] if adj_x else lhs[-2]
    cols = rhs[-2] if adj_y else rhs[-1]
    return (*batch, rows, cols)


def _gemm_dtype(lhs_t, rhs_t, depth: int, lhs_zp: int, rhs_zp: int) -> type:
    """float32 when every partial sum of (lhs - zp) * (rhs - zp) is below 2**24 (exact), else float64."""
    def span(t, zp):
        lo, hi = dtype_range(t.dtype)
        return max(hi - zp, zp - lo)

    return np.float32 if depth * span(lhs_t, lhs_zp) * span(rhs_t, rhs_zp) < 2**24 else np.float64


def _requantizer(lhs_t, rhs_t, out_t) -> Callable:
    """The output stage: GetQuantizedConvolutionMultipler (float32 scale product, then / output scale in double).

    int8 sums (int32) use MultiplyByQuantizedMultiplier; int16 sums are int64 and use its int64 overload.
    BATCH_MATMUL has no fused activation: the clamp is the output type's range.
    """
    real = float(np.float32(lhs_t.scale) * np.float32(rhs_t.scale)) / out_t.scale
    multiplier, shift = quantize_multiplier(real)
    lo, hi = dtype_range(out_t.dtype)
    zp = out_t.zero_point
    if lhs_t.type == "INT8" and shift <= 0:
        return _right_shift_requantizer(multiplier, -shift, zp, lo, hi, out_t.dtype)
    rescale = multiply_by_quantized_multiplier if lhs_t.type == "INT8" else multiply_by_quantized_multiplier_int64

    def requantize(acc: np.ndarray) -> np.ndarray:
        return np.clip(rescale(acc.astype(np.int64), multiplier, shift) + zp, lo, hi).astype(out_t.dtype)

    return requantize


def _right_shift_requantizer(multiplier: int, right: int, zp: int, lo: int, hi: int, dtype) -> Callable:
    """MultiplyByQuantizedMultiplier for int32 sums and a right shift, in a few in-place int64 steps.

    SaturatingRoundingDoublingHighMul is (x * q + 2**30) >> 31 for every sign (its nudge 1 - 2**30 for
    negative products makes C++'s truncating division round half up too; q > 0 never saturates).
    RoundingDivideByPOT rounds half away from zero: (h + 2**(r-1) - [h < 0]) >> r, where h >> 63 is
    -[h < 0]; the output zero point rides along as zp * 2**r. The constants are 0-d int64 arrays,
    which ufuncs take without converting a Python integer per call.
    """
    i64 = np.int64
    q, nudge, high = np.asarray(i64(multiplier)), np.asarray(i64(1 << 30)), np.asarray(i64(31))
    offset = np.asarray(i64((1 << (right - 1)) + (zp << right) if right else zp))
    shift, sign = np.asarray(i64(right)), np.asarray(i64(63))
    bounds = np.asarray(i64(lo)), np.asarray(i64(hi))

    def requantize(acc: np.ndarray) -> np.ndarray:
        y = acc.astype(i64)
        y *= q
        y += nudge
        y >>= high
        if right:
            y += y >> sign
            y += offset
            y >>= shift
        else:
            y += offset
        fast_clip(y, *bounds, y)
        return y.astype(dtype)

    return requantize


def _operand(data: np.ndarray, adjoint: bool, dtype, zero_point: int) -> np.ndarray:
    m = _matrix(data, adjoint)
    return m.astype(dtype, copy=False) if zero_point == 0 else np.subtract(m, zero_point, dtype=dtype)


def _prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, f"{_OP} takes (lhs, rhs) and one output")
    lhs, rhs, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    allowed = _TYPES.get((lhs.type, rhs.type))
    check((lhs.type, rhs.type) != ("FLOAT32", "INT8"), f"{_OP}: FLOAT32 x INT8 (hybrid) is not supported")
    check(allowed is not None, f"{_OP}: input types {lhs.type} x {rhs.type} are not supported "
                               f"({', '.join(f'{a} x {b}' for a, b in _TYPES)})")
    check(out.type in allowed, f"{_OP}: {lhs.type} inputs need a {' or '.join(allowed)} output, got {out.type}")
    adj_x, adj_y = bool(node.options.adj_x), bool(node.options.adj_y)
    out_shape = _output_shape(lhs.shape, rhs.shape, adj_x, adj_y)
    depth = lhs.shape[-2] if adj_x else lhs.shape[-1]
    plan = _Plan(out_shape, np.float32)
    if lhs.type != "FLOAT32":
        if lhs.type == "INT16":
            check(lhs.zero_point == 0 and rhs.zero_point == 0 and out.zero_point == 0,
                  f"{_OP}: int16 inputs and output need zero point 0")
        # EvalInt8Int32 sums the raw values: the zero points are not applied for an int32 output.
        if out.type != "INT32":
            plan.lhs_zp, plan.rhs_zp = lhs.zero_point, rhs.zero_point
            plan.requantize = _requantizer(lhs, rhs, out)
        plan.dtype = _gemm_dtype(lhs, rhs, depth, plan.lhs_zp, plan.rhs_zp)
    if rhs.is_constant:
        plan.rhs = _operand(rhs.data, adj_y, plan.dtype, plan.rhs_zp)
    node.user_data = _plan_runner(lhs, rhs, out, plan, adj_x, adj_y)
    ctx.resize_tensor(out, out_shape)


def _plan_runner(lhs, rhs, out, plan: _Plan, adj_x: bool, adj_y: bool) -> Callable:
    """The invoke for this node: operands (with zero points), one batched matmul, the output stage."""
    dtype, lhs_zp, rhs_zp, requantize, shape = plan.dtype, plan.lhs_zp, plan.rhs_zp, plan.requantize, plan.out_shape
    const_rhs = plan.rhs
    # 8-bit operands minus their zero points are lookups of the raw values (a negative value indexes
    # from the table's end, where integer_domain holds it): one call instead of a cast and a subtraction.
    lhs_of = _operand_table(lhs, dtype, lhs_zp, adj_x)
    rhs_of = _operand_table(rhs, dtype, rhs_zp, adj_y)

    def operand(t, of, adjoint: bool, zp: int) -> np.ndarray:
        return of(t.data) if of is not None else _operand(t.data, adjoint, dtype, zp)

    if out.type == "FLOAT32":
        finish = None
    elif requantize is None:
        def finish(acc: np.ndarray) -> np.ndarray:
            return acc.astype(np.int32)
    else:
        finish = requantize
    matmul = np.matmul

    def compute() -> np.ndarray:
        b = const_rhs if const_rhs is not None else operand(rhs, rhs_of, adj_y, rhs_zp)
        acc = matmul(operand(lhs, lhs_of, adj_x, lhs_zp), b).reshape(shape)
        return acc if finish is None else finish(acc)

    return store_plan(out, compute)


def _operand_table(t, dtype, zero_point: int, adjoint: bool) -> Callable | None:
    """For an 8-bit, non-adjoint operand: take(table) mapping each raw value to value - zero point in `dtype`."""
    if adjoint or t.dtype.itemsize != 1:
        return None
    return (integer_domain(t.dtype).astype(np.int64) - zero_point).astype(dtype).take


def _invoke(ctx, node) -> None:
    node.user_data()


def batch_matmul(lhs: np.ndarray, rhs: np.ndarray, adj_x: bool, adj_y: bool, lhs_zp: int = 0, rhs_zp: int = 0,
                 stage: Callable | None = None) -> np.ndarray:
    """BATCH_MATMUL's specification (reference_ops::BatchMatMul): adj(lhs - lhs_zp) @ adj(rhs - rhs_zp) with the
    batch dims broadcast; integer sums exact in int64, then `stage` (int sums -> output values) if given."""
    acc_type = np.float32 if lhs.dtype == np.float32 else np.int64
    acc = np.matmul(_matrix(lhs, adj_x).astype(acc_type) - lhs_zp, _matrix(rhs, adj_y).astype(acc_type) - rhs_zp)
    return acc if stage is None else stage(acc)


def _reference(ctx, node) -> None:
    """BATCH_MATMUL through `batch_matmul`, with the output stage of batch_matmul.cc: the raw int32 sums for an
    int32 output, else MultiplyByQuantizedMultiplier (its int64 overload for int16) and the type's clamp."""
    lhs, rhs, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    adj_x, adj_y = bool(node.options.adj_x), bool(node.options.adj_y)
    if lhs.type == "FLOAT32" or out.type == "INT32":
        acc = batch_matmul(lhs.data, rhs.data, adj_x, adj_y)
        out.data = acc.astype(out.dtype).reshape(out.shape)
        return
    multiplier, shift = quantize_multiplier(float(np.float32(lhs.scale) * np.float32(rhs.scale)) / out.scale)
    rescale = multiply_by_quantized_multiplier if lhs.type == "INT8" else multiply_by_quantized_multiplier_int64
    lo, hi = dtype_range(out.dtype)

    def stage(acc: np.ndarray) -> np.ndarray:
        return np.clip(rescale(acc, multiplier, shift) + out.zero_point, lo, hi).astype(out.dtype)

    out.data = batch_matmul(lhs.data, rhs.data, adj_x, adj_y, lhs.zero_point, rhs.zero_point, stage).reshape(out.shape)


def register(resolver) -> None:
    """BATCH_MATMUL v1 (float32), v2 (int8), v3 (int16); v4 (hybrid, asymmetric inputs) is not implemented."""
    resolver.add_builtin(_OP, Registration(prepare=_prepare, invoke=_invoke, reference=_reference,
                                           work=work.batch_matmul), 1, 3)
