"""FULLY_CONNECTED in float32, int8 (per-tensor or per-channel weights) and uint8, DEFAULT weights format.

`fully_connected` is the specification; the kernel below implements it (tests/runtime/test_references.py).
The input is read as [-1, input_size] rows (fully_connected.cc) and multiplied by the transposed
[units, input_size] weights through BLAS; quantized products are exact in the GEMM (see conv/conv2d.py) and
go through the same output stage as the convolutions. Sparse constant weights (version 8) are densified
once in prepare (sparse.py) and then take the dense path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, fast_clip, is_known, store_plan
from accelsim.runtime.kernels.conv.checks import check_bias, check_float_types, check_quantized_types
from accelsim.runtime.kernels.conv.reference import output_stage
from accelsim.runtime.kernels.conv.stage import (
    FLOAT_RANGES,
    OPTIMIZED_ROUNDING,
    REFERENCE_ROUNDING,
    ExactStage,
    Requantizer,
    accumulator_bound,
    channel_bounds,
    clamp_float,
    finish_quantized,
    gemm_dtype,
    read_bias,
    requantizer,
    row_period,
)
from accelsim.runtime.kernels.sparse import densify_constant
from accelsim.runtime.quant import activation_name
from accelsim.runtime.registration import Registration

_OP = "FULLY_CONNECTED"


@dataclass
class _FcPlan:
    rows: int
    quantized: bool
    activation: str
    input_zp: int = 0
    filter_zp: int = 0
    requant: Requantizer | None = None
    dtype: type = np.float32  # of the GEMM operands
    weights: np.ndarray | None = None  # [input_size, units], from a constant filter
    stage: ExactStage | None = None  # quantized output stage with the bias, when both are constant
    run: Callable[[], None] | None = None  # the invoke, specialized in prepare


def _weights(filter_data: np.ndarray, dtype, offset: int) -> np.ndarray:
    w = filter_data.astype(dtype)
    if offset:
        w -= offset
    return np.ascontiguousarray(w.T)


def _sparse_weights(ctx, f, x_type: str) -> np.ndarray:
    """The dense [units, input_size] weights of a sparse constant filter, in a format LiteRT accepts.

    fully_connected.cc SupportedSparsityFormat: a DENSE row level then a SPARSE_CSR column level. Float32
    weights are random sparse (2 levels) or 1x4 blocks; int8 weights are 1x16 blocks, symmetric.
    """
    levels = f.sparsity.dim_metadata
    check(len(levels) >= 2 and levels[0].format == "DENSE" and levels[1].format == "SPARSE_CSR",
          f"{_OP}: sparse weights must have a DENSE then a SPARSE_CSR dimension")
    block = levels[2].dense_size if len(levels) == 3 else None
    if x_type == "FLOAT32":
        check(len(levels) == 2 or block == 4, f"{_OP}: sparse float weights must be random sparse or 1x4 blocks")
    else:
        check(x_type == "INT8" and block == 16, f"{_OP}: sparse {x_type} weights are not supported "
                                                "(int8 needs 1x16 blocks)")
        check(not f.zero_points.any(), f"{_OP}: sparse int8 weights must be symmetric (zero point 0)")
    return densify_constant(ctx, f, _OP)


def _output_shape(x_shape, rows: int, units: int, keep_num_dims: bool) -> tuple[int, ...]:
    """keep_num_dims keeps the input's leading dims (the last becomes units); otherwise [rows, units]."""
    return (*x_shape[:-1], units) if keep_num_dims else (rows, units)


def _prepare(ctx, node) -> None:
    check(len(node.inputs) in (2, 3), f"{_OP}: expected 2 or 3 inputs, got {len(node.inputs)}")
    opts = node.options
    check(opts.weights_format == 0,
          f"{_OP}: weights_format {opts.weights_format} (SHUFFLED4x16INT8) is not supported; only DEFAULT (0)")
    check(len(node.outputs) == 1, f"{_OP}: expected 1 output, got {len(node.outputs)}")
    x, f, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
    check(len(f.shape) == 2, f"{_OP}: weights must be 2-D [units, input_size], got shape {list(f.shape)}")
    check(len(x.shape) >= 1, f"{_OP}: input must have at least one dimension")
    units, depth = f.shape
    size = int(np.prod(x.shape, dtype=np.int64))
    check(depth > 0 and size % depth == 0,
          f"{_OP}: input shape {list(x.shape)} ({size} elements) does not flatten to rows of the weights' "
          f"input_size {depth}")
    if opts.keep_num_dims:
        check(x.shape[-1] == depth,
              f"{_OP}: keep_num_dims needs the input's last dimension ({x.shape[-1]}) to equal input_size {depth}")
    # fully_connected.cc: outside the hybrid path FC takes only NONE and the clipping activations.
    act = activation_name(opts.fused_activation_function)
    check(act in ("NONE", "RELU", "RELU_N1_TO_1", "RELU6"), f"{_OP}: fused activation {act} is not supported")
    plan = _FcPlan(size // depth, x.type in ("INT8", "UINT8"), act)
    if x.type == "FLOAT32" and f.type in ("INT8", "INT4"):
        _hybrid_prepare(ctx, node, plan, x, f, b, out, units)
        return
    _check_types(plan.quantized, x, f, b, out, units)
    if ctx.shapes_only:  # nothing will invoke: no weights, stages or runner to prepare
        ctx.resize_tensor(out, _output_shape(x.shape, plan.rows, units, bool(opts.keep_num_dims)))
        return
    # Constant weights as a dense array (None when they are computed by another node).
    filter_data = _sparse_weights(ctx, f, x.type) if f.sparsity is not None else f.data if f.is_constant else None
    if plan.quantized:
        plan.input_zp = x.zero_point
        per_channel = f.scales.size > 1
        if not per_channel:
            plan.filter_zp = int(f.zero_points[0]) if f.zero_points.size else 0
        # Dense weights run cpu_backend_gemm -> ruy on x86; the per-tensor multiplier comes from
        # GetQuantizedConvolutionMultipler (float32 scale product, bias scale check). Sparse weights run
        # SparseMatrixBatchVectorMultiplyAccumulate1x16, whose output stage is the scalar
        # MultiplyByQuantizedMultiplier.
        exact = _weights(filter_data, np.float64, plan.filter_zp) if filter_data is not None else None
        plan.dtype = gemm_dtype(x, plan.input_zp, exact, axis=0)
        plan.weights = None if exact is None else exact.astype(plan.dtype)
        rounding = node.numerics.requant_rounding(REFERENCE_ROUNDING if f.sparsity is not None else OPTIMIZED_ROUNDING)
        plan.requant = requantizer(_OP, x, f, b, out, act, units, channel_axis=0, rounding=rounding,
                                   float_product=not per_channel,
                                   acc_bound=accumulator_bound(x, plan.input_zp, exact, 0, b))
        if exact is not None and (b is None or is_known(b)):
            plan.stage = plan.requant.exact_stage(read_bias(b, np.int64), channel_bounds(x, plan.input_zp, exact, 0),
                                                  plan.rows)
            if plan.stage is not None and plan.stage.shift is None:
                # The stage computes in float64: a float64 GEMM (exact as well) saves a conversion.
                plan.dtype, plan.weights = np.float64, exact
    elif filter_data is not None:
        plan.weights = _weights(filter_data, np.float32, 0)
    node.user_data = plan
    ctx.resize_tensor(out, _output_shape(x.shape, plan.rows, units, bool(opts.keep_num_dims)))
    plan.run = _quantized_runner(plan, x, f, b, out) if plan.quantized else _float_runner(plan, x, f, b, out)


def _row_quantized(rows: np.ndarray, asymmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each row as int8 values (their zero point removed) and its scale."""
    if asymmetric:  # tensor_utils::AsymmetricQuantizeFloats: [min(row, 0), max(row, 0)] onto [-128, 127]
        lo = np.minimum(rows.min(axis=1, keepdims=True), 0)
        hi = np.maximum(rows.max(axis=1, keepdims=True), 0)
        scale = np.where(hi > lo, (hi - lo) / 255.0, 1.0).astype(np.float32)
        zp = np.clip(np.round(-128 - lo / scale), -128, 127)
        return (np.clip(np.round(rows / scale) + zp, -128, 127) - zp).astype(np.int64), scale
    peak = np.abs(rows).max(axis=1, keepdims=True)  # tensor_utils::SymmetricQuantizeFloats: max|row| onto 127
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.clip(np.round(rows / scale), -127, 127).astype(np.int64), scale


def hybrid_fully_connected(x: np.ndarray, q: np.ndarray, scales: np.ndarray, block_size: int = 0,
                           b: np.ndarray | None = None, asymmetric: bool = False) -> np.ndarray:
    """FULLY_CONNECTED's hybrid path (float input, int8 or int4 weights, float output), [rows, units].

    As LiteRT's builtin kernel (fully_connected.cc EvalHybrid; what ai-edge-litert's reference resolver runs):
    each row of x is quantized on the fly to int8 and multiplied exactly in integers with the weights, the
    product scaled by the row's scale and the weights'. With one scale per output channel (`scales` [units], or
    one in all) the rows are quantized symmetrically (max|row| / 127), or asymmetrically with `asymmetric` (the
    node's asymmetric_quantize_inputs); with `block_size` (`scales` [units,
    depth / block_size] FLOAT16, litert-torch's blockwise int4) asymmetrically (the row's range / 255, with a
    zero point) and each block's integer sum is scaled by its own scale. (LiteRT's default XNNPACK delegate
    quantizes every row asymmetrically and keeps block scales in bfloat16: on litert-torch's files, whose block
    scales are bfloat16 values, the two agree on the blockwise models and differ by about 0.3% on per-channel
    ones.)
    """
    rows = x.reshape(-1, q.shape[1]).astype(np.float32)
    xq, row_scale = _row_quantized(rows, asymmetric=asymmetric or bool(block_size))
    w = q.astype(np.int64)
    if block_size:
        blocks = q.shape[1] // block_size
        sums = np.einsum("rbk,ubk->rub", xq.reshape(len(xq), blocks, block_size), w.reshape(len(w), blocks, block_size))
        acc = (sums.astype(np.float32) * np.asarray(scales, np.float32)[None]).sum(axis=2)
    else:
        acc = (xq @ w.T).astype(np.float32) * np.asarray(scales, np.float32).reshape(1, -1)
    out = acc * row_scale
    return out if b is None else out + b.reshape(1, -1)


def _hybrid_prepare(ctx, node, plan: _FcPlan, x, f, b, out, units: int) -> None:
    """Float input with constant int8/int4 weights (the dynamic-range quantization litert-torch writes)."""
    check(f.is_constant, f"{_OP}: hybrid ({f.type}) weights must be constant")
    check(out.type == "FLOAT32", f"{_OP}: the hybrid path gives FLOAT32, the output is {out.type}")
    check_bias(_OP, b, units, "FLOAT32")
    q = f.quantization
    blockwise = q is not None and q.blockwise
    check(blockwise or (q is not None and q.is_quantized),
          f"{_OP}: {f.type} weights with FLOAT32 input need per-channel or blockwise scales")
    if blockwise:
        check(q.block_zero_points < 0, f"{_OP}: blockwise weights with zero points are not supported (symmetric only)")
    else:
        check(not f.zero_points.any(), f"{_OP}: hybrid weights must be symmetric (zero point 0)")
    ctx.resize_tensor(out, _output_shape(x.shape, plan.rows, units, bool(node.options.keep_num_dims)))
    if ctx.shapes_only:
        return
    scales = ctx.tensors[q.block_scales].data if blockwise else f.scales
    block = q.block_size if blockwise else 0
    activation = plan.activation
    asymmetric = bool(node.options.asymmetric_quantize_inputs)

    def run() -> None:
        bias = None if b is None else b.data.reshape(-1)
        y = hybrid_fully_connected(x.data, f.data, scales, block, bias, asymmetric)
        out.data = clamp_float(y, activation).reshape(out.shape)

    plan.run = run
    node.user_data = plan


def _check_types(quantized: bool, x, f, b, out, units: int) -> None:
    """Every type check of prepare, done before (and without) its numeric preparation."""
    if not quantized:
        check_float_types(_OP, x, f, out, "3/9/12")
        check_bias(_OP, b, units, "FLOAT32")
        return
    check_quantized_types(_OP, x, f, b, out)
    check_bias(_OP, b, units, None)
    # Per-channel FC ignores the weights' zero point (lhs zero_point 0 in optimized_integer_ops),
    # so it must be 0; per-tensor int8/uint8 subtracts it (weights_offset).
    if f.scales.size > 1:
        check(not f.zero_points.any(), f"{_OP}: per-channel weights must be symmetric (zero point 0)")


def _float_runner(plan: _FcPlan, x, f, b, out) -> Callable[[], None]:
    """rows @ weights, + bias, the activation clamp (finish_float), in place."""
    rows, shape, depth = plan.rows, out.shape, f.shape[1]
    const_w = plan.weights
    const_bias = read_bias(b, np.float32) if b is not None and b.is_constant else None
    activation = plan.activation
    if const_w is not None and (b is None or const_bias is not None):
        return _constant_float_runner(x, out, rows, depth, const_w, const_bias, activation)

    def run() -> None:
        w = const_w if const_w is not None else _weights(f.data, np.float32, 0)
        acc = np.dot(x.data.reshape(rows, depth), w)  # cheaper per call than the matmul operator
        if b is not None:
            acc += const_bias if const_bias is not None else read_bias(b, np.float32)
        out.data = clamp_float(acc, activation).reshape(shape)

    return run


def _constant_float_runner(x, out, rows: int, depth: int, w: np.ndarray, bias: np.ndarray | None,
                           activation: str) -> Callable[[], None]:
    """The float path with constant weights and bias, in the fewest NumPy calls.

    The bias is tiled to the accumulator's rows (an add of equal shapes is cheaper per call than a
    broadcast one) and the clamp bounds are 0-d float32 arrays, which the clip ufunc takes without
    converting a scalar (measured, NumPy 2.4: about 0.4 us less per call on small arrays).
    """
    units = w.shape[1]
    period = row_period(rows, units)
    if bias is not None:
        bias = np.tile(bias, (period // units))
    lo, hi = (np.asarray(v) for v in FLOAT_RANGES[activation])
    shape, dot = out.shape, np.dot
    reshape_in = x.shape != (rows, depth)
    acc_shape = (-1, period) if period != units or shape != (rows, units) else None

    def compute() -> np.ndarray:
        acc = dot(x.data.reshape(rows, depth) if reshape_in else x.data, w)
        if acc_shape is not None:
            acc = acc.reshape(acc_shape)
        if bias is not None:
            acc += bias
        fast_clip(acc, lo, hi, acc)
        return acc if acc_shape is None else acc.reshape(shape)

    return store_plan(out, compute)


def _quantized_runner(plan: _FcPlan, x, f, b, out) -> Callable[[], None]:
    """(rows - input zp) @ weights through the plan's output stage (fused with the GEMM where that pays)."""
    fused = _fused_stage(plan, x, b, out)
    if fused is not None:
        return store_plan(out, fused)
    rows, shape, depth, dtype, zp = plan.rows, out.shape, f.shape[1], plan.dtype, plan.input_zp
    const_w, stage, requant, filter_zp = plan.weights, plan.stage, plan.requant, plan.filter_zp

    def run() -> None:
        w = const_w if const_w is not None else _weights(f.data, dtype, filter_zp)
        # A cast then an in-place subtraction is cheaper than a subtraction with a dtype (exact either way).
        lhs = x.data.reshape(rows, depth).astype(dtype)
        if zp:
            lhs -= zp
        acc = np.dot(lhs, w)
        if stage is not None:
            out.data = stage(acc).reshape(shape)
        else:
            out.data = finish_quantized(acc, read_bias(b, np.int64), requant).reshape(shape)

    return run


# The fused stage tiles its constants to the whole accumulator: only for small outputs.
_FUSED_MAX = 1 << 14


def _fused_stage(plan: _FcPlan, x, b, out):
    """plan.stage, with constant weights and bias, fused into the fewest NumPy calls: compute(), or None.

    The GEMM sums raw inputs, with the zero point's share zp * sum(w) folded into the bias (as conv/conv2d.py's
    _fold_conv_zero_point does), and ExactStage's per-channel constants are tiled to the whole
    accumulator. The clamp and the cast are one lookup, take(table, k, mode="clip") with
    table[k] = clamp(k + base): clip mode sends every k below the table to its first entry and every k
    above it to its last, which are the clamp's bounds.
    """
    stage = plan.stage
    units = plan.requant.multiplier.size
    rows = plan.rows
    if (stage is None or plan.weights is None or rows * units > _FUSED_MAX
            or (b is not None and not is_known(b))):
        return None
    exact = plan.weights.astype(np.float64)  # the same integers (minus the weights' zero point)
    raw = channel_bounds(x, 0, exact, 0)
    folded = (plan.input_zp * exact.sum(axis=0)).astype(np.int64)
    bias = read_bias(b, np.int64)
    raw_stage = plan.requant.exact_stage(-folded if bias is None else bias - folded, raw, rows)
    if raw_stage is None:
        return None
    reshape_in = x.shape != (rows, plan.weights.shape[0])
    shape, dot = out.shape, np.dot

    def lhs() -> np.ndarray:
        return x.data.reshape(rows, -1) if reshape_in else x.data

    lo, hi = raw_stage.lo, raw_stage.hi
    if raw_stage.shift is None:
        # Float form: floor(acc * m + offset) with m = q / 2**(31+r) per channel. m scales the weights'
        # columns instead: every product x * w * q / 2**(31+r) and every partial sum is a multiple of
        # 2**-(31+r) below 2**53 of them (exact_stage's bounds, from the raw sums), so the GEMM stays
        # exact in any order. The lifted value y >= 0 on the clamp's range; k = trunc(y) differs from the
        # floor only for -1 < y < 0, which clamps to the first entry either way.
        weights = exact * raw_stage.multiplier[:units]
        offset = np.tile(raw_stage.offset[:units], (rows, 1))
        table = (np.clip(np.arange(hi + 1), lo, hi) - raw_stage.lift).astype(out.dtype)
        f64, intp, lookup = np.float64, np.intp, table.take

        def compute() -> np.ndarray:
            acc = dot(lhs().astype(f64), weights)
            acc += offset
            return lookup(acc.astype(intp), mode="clip").reshape(shape)

        return compute
    # Int64 form: (acc * q + offset) >> shift, with -lo << shift in the offset so that k = y - lo.
    shifts = np.broadcast_to(raw_stage.shift, raw_stage.multiplier.shape)[:units]
    multiplier = np.tile(raw_stage.multiplier[:units], (rows, 1))
    offset = np.tile(raw_stage.offset[:units] - (np.int64(lo) << shifts), (rows, 1))
    shift = np.asarray(np.int64(raw_stage.shift)) if np.ndim(raw_stage.shift) == 0 else np.tile(shifts, (rows, 1))
    table = np.arange(lo, hi + 1).astype(out.dtype)
    gemm = np.float32 if float(raw.max(initial=0)) < 2**24 else np.float64  # exact sums either way
    weights = exact.astype(gemm)
    i64, lookup = np.int64, table.take

    def compute() -> np.ndarray:
        acc = dot(lhs().astype(gemm), weights).astype(i64)
        acc *= multiplier
        acc += offset
        acc >>= shift
        return lookup(acc, mode="clip").reshape(shape)

    return compute


def _invoke(ctx, node) -> None:
    node.user_data.run()


def fully_connected(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stage: str | Requantizer, input_zp: int = 0,
                    filter_zp: int = 0) -> np.ndarray:
    """FULLY_CONNECTED's specification: output_stage((rows of x - input_zp) @ (w - filter_zp).T, b), [rows, units].

    x is read as rows of w's input_size (fully_connected.cc); w is [units, input_size]. The stage is
    conv/reference.py's output_stage (reference_ops::FullyConnected, reference_integer_ops::FullyConnected
    with the rounding the node's Requantizer carries). Quantized sums are exact in int64.
    """
    acc_type = np.float32 if isinstance(stage, str) else np.int64
    rows = x.reshape(-1, w.shape[1]).astype(acc_type) - input_zp
    return output_stage(rows @ (w.astype(acc_type) - filter_zp).T, b, stage)


def _reference(ctx, node) -> None:
    """FULLY_CONNECTED through `fully_connected` (prepare checked the node and built its Requantizer)."""
    plan: _FcPlan = node.user_data
    x, f, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)
    if x.type == "FLOAT32" and f.type in ("INT8", "INT4"):  # hybrid: `hybrid_fully_connected` is the run
        plan.run()
        return
    w = _sparse_weights(ctx, f, x.type) if f.sparsity is not None else f.data
    stage = plan.requant if plan.quantized else plan.activation
    bias = None if b is None else b.data.reshape(-1)
    out.data = fully_connected(x.data, w, bias, stage, plan.input_zp, plan.filter_zp).reshape(out.shape)


def register(resolver) -> None:
    """FULLY_CONNECTED v1 (float32, uint8), v4 (int8), v5 (keep_num_dims), v6 (no bias), v8 (sparse weights).

    Not registered (op_version.cc): v2 (shuffled weights), v3/v9/v12 (hybrid), v7/v11/v13 (int16),
    v10/v14 (int4/int2 weights).
    """
    reg = Registration(prepare=_prepare, invoke=_invoke, reference=_reference, work=work.fully_connected)
    resolver.add_builtin(_OP, reg, 1, 1)
    resolver.add_builtin(_OP, reg, 4, 6)
    resolver.add_builtin(_OP, reg, 8, 8)
