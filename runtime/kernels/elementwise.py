"""Binary elementwise ops ADD, SUB, MUL with broadcasting: float32, integer and 8-bit quantized.

Quantized ADD/MUL follow LiteRT's optimized kernels as its x86 wheel builds them (NEON
blocks compiled through NEON_2_SSE): inside each contiguous run of the output that one
inner call handles, whole SIMD blocks round slightly differently from the scalar tail.
`_lane_paths` reproduces which output element goes through which path; quantized SUB
always runs the scalar reference kernel (sub.cc). `binary` is the specification, computing
each element directly; the plans implement it (tests/runtime/test_references.py). An 8-bit
result depends only on the input pair and the path, so prepare evaluates the fixed-point rules
once for all 65536 pairs of each path and invoke gathers from that table.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from math import prod

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    EIGHT_BIT,
    broadcast_shape,
    check,
    check_inputs,
    fast_clip,
    run_plan,
    store_plan,
    tensor_values,
)
from accelsim.runtime.quant import (
    activation_name,
    activation_range_quantized,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)
from accelsim.runtime.registration import Registration

_F32 = np.float32
# Unquantized types each op's Eval accepts (add.cc, sub.cc, mul.cc); INT16 only without quantization.
_PLAIN_TYPES = {
    "ADD": ("FLOAT32", "INT32", "INT64", "INT16"),
    "SUB": ("FLOAT32", "INT32", "INT64"),
    "MUL": ("FLOAT32", "INT32", "INT64", "INT16", "UINT32", "COMPLEX64"),
}
_ADD_LEFT_SHIFT = 20  # add.cc / sub.cc: 8-bit inputs are scaled up by 2**20 before rescaling

# Lane kinds of an output element: which code path of the optimized kernel computes it.
_SCALAR, _ELEMENTWISE, _BROADCAST = 0, 1, 2


@dataclass(frozen=True)
class _Lane:
    """One SIMD loop of an optimized 8-bit kernel.

    width: values per block. rescale (ADD only): how an input's scale-down rounds:
    "pre_shift" folds the right shift into the left shift before the doubling high multiply,
    "floor" truncates after it (vshlq by a negative amount). narrow: int32 -> int16 narrowing
    before the output offset is added in int16 ("wrap" = vmovn, "saturate" = vqmovn).
    """

    width: int
    rescale: str | None
    narrow: str


# (op, type) -> (elementwise loop, scalar-broadcast loop); optimized/integer_ops/add.h, mul.h
# and optimized_ops.h AddElementwise / AddScalarBroadcast / MulElementwise / MulSimpleBroadcast.
_SIMD_LANES = {
    ("ADD", "INT8"): (_Lane(16, "pre_shift", "wrap"), _Lane(8, "floor", "wrap")),
    ("ADD", "UINT8"): (_Lane(8, "floor", "wrap"), _Lane(8, "floor", "wrap")),
    ("MUL", "INT8"): (_Lane(16, None, "saturate"), _Lane(16, None, "saturate")),
    ("MUL", "UINT8"): (_Lane(8, None, "saturate"), _Lane(8, None, "wrap")),
}


@dataclass(frozen=True)
class _AddSubParams:
    """PrepareInt8 / PrepareGeneralSubOp: each input rescaled to twice the larger input scale."""

    offsets: tuple[int, int]
    multipliers: tuple[int, int]
    shifts: tuple[int, int]
    out_multiplier: int
    out_shift: int
    out_offset: int


@dataclass(frozen=True)
class _MulParams:
    offsets: tuple[int, int]
    multiplier: int
    shift: int
    out_offset: int


# -- broadcasting layout of the optimized kernels -------------------------------------------


def _fivefold(shape1, shape2):
    """ProcessBroadcastShapes: ('none'|'generic'|'fivefold', y0..y4) for two input shapes."""
    n = max(len(shape1), len(shape2))
    a = (1,) * (n - len(shape1)) + tuple(shape1)
    b = (1,) * (n - len(shape2)) + tuple(shape2)
    if a == b:
        return "none", None
    for i in reversed(range(n)):
        if a[i] == b[i]:
            continue
        if b[i] == 1:
            a, b = b, a  # kSecondInputBroadcastsFast: the kernel swaps the inputs
        elif a[i] != 1:
            return "generic", None
        break
    y = [1] * 5
    i = n - 1
    for slot, test in ((4, "eq"), (3, "a1"), (2, "eq"), (1, "b1"), (0, "eq")):
        while i >= 0 and (a[i] == b[i] if test == "eq" else (a if test == "a1" else b)[i] == 1):
            y[slot] *= max(a[i], b[i])
            i -= 1
    return ("generic", None) if i >= 0 else ("fivefold", y)


@dataclass(frozen=True)
class LanePaths:
    """Which code path computes each flat output element: the output is cut into runs of `run`
    elements (the innermost loop of one kernel call); in each, the first `cut` take path `first`
    and the rest path `rest`."""

    run: int
    cut: int
    first: int
    rest: int

    @property
    def uniform(self) -> int | None:
        """The one path every element takes, or None when a run mixes two."""
        if self.cut == self.run or self.first == self.rest:
            return self.first
        return self.rest if self.cut == 0 else None


def _lane_paths(shape1, shape2, size: int, lanes: tuple[_Lane, _Lane]) -> LanePaths:
    """For each flat output index, the code path of BinaryBroadcastFiveFold that computes it.

    Whole SIMD blocks of a run take the vector path, its last run % width elements the scalar one.
    Described by the run rather than listed per element, it costs no memory (a list of the
    output's size took 9 bytes per element: 547 MB in prepare for a [131072, 4, 8, 8] int8 MUL).
    """
    category, y = _fivefold(shape1, shape2)
    if category == "generic" or size == 0:
        return LanePaths(1, 1, _SCALAR, _SCALAR)
    if category == "none":
        run, kind = size, _ELEMENTWISE
    elif y[4] > 1:
        run, kind = y[4], _ELEMENTWISE
    else:
        run, kind = y[3], _BROADCAST
    width = lanes[kind - 1].width
    return LanePaths(run, run - run % width, kind, _SCALAR)


# -- fixed-point pieces --------------------------------------------------------------------------


def _wrap(v: np.ndarray, bits: int) -> np.ndarray:
    half = 1 << (bits - 1)
    return ((v + half) & ((1 << bits) - 1)) - half


def _shift(v: np.ndarray, amount: int) -> np.ndarray:
    """vshlq_s32: a left shift for a positive amount, an arithmetic right shift otherwise."""
    return _wrap(v << amount, 32) if amount >= 0 else v >> min(-amount, 31)


def _rescale_input(q: np.ndarray, offset: int, multiplier: int, shift: int, how: str) -> np.ndarray:
    """An 8-bit ADD/SUB input scaled to the common 2**20-based fixed-point scale."""
    v = q.astype(np.int64) + offset
    if how == "pre_shift":
        return saturating_rounding_doubling_high_mul(_shift(v, _ADD_LEFT_SHIFT + shift), multiplier)
    high = saturating_rounding_doubling_high_mul(v << _ADD_LEFT_SHIFT, multiplier)
    if how == "floor":
        return _shift(high, shift)
    # "exact": the scalar MultiplyByQuantizedMultiplierSmallerThanOneExp, rounding twice.
    return rounding_divide_by_pot(high, -shift)


def _vector_output(raw: np.ndarray, out_offset: int, narrow: str, dtype) -> np.ndarray:
    """SIMD output stage: narrow to int16, add the offset in int16 (wraps), saturate to dtype."""
    narrowed = _wrap(raw, 16) if narrow == "wrap" else np.clip(raw, -(1 << 15), (1 << 15) - 1)
    info = np.iinfo(dtype)
    return np.clip(_wrap(narrowed + out_offset, 16), info.min, info.max)


def _add_sub_result(op: str, x1, x2, p: _AddSubParams, lane: _Lane | None, dtype) -> np.ndarray:
    """quantized ADD/SUB on one code path, before the activation clamp (AddFunc, SubElementwise)."""
    how = lane.rescale if lane is not None else "exact"
    a = _rescale_input(x1, p.offsets[0], p.multipliers[0], p.shifts[0], how)
    b = _rescale_input(x2, p.offsets[1], p.multipliers[1], p.shifts[1], how)
    raw_sum = _wrap(a + b if op == "ADD" else a - b, 32)
    raw = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(raw_sum, p.out_multiplier), -p.out_shift)
    return raw + p.out_offset if lane is None else _vector_output(raw, p.out_offset, lane.narrow, dtype)


def _mul_result(x1, x2, p: _MulParams, lane: _Lane | None, dtype) -> np.ndarray:
    """quantized MUL on one code path, before the activation clamp (MulElementwise)."""
    product = _wrap((x1.astype(np.int64) + p.offsets[0]) * (x2.astype(np.int64) + p.offsets[1]), 32)
    scaled = multiply_by_quantized_multiplier(product, p.multiplier, p.shift)
    return scaled + p.out_offset if lane is None else _vector_output(scaled, p.out_offset, lane.narrow, dtype)


def _pair_table(result, lanes, act_min: int, act_max: int, dtype) -> np.ndarray:
    """Every (q1, q2) result of the scalar path, then of each SIMD path: [path, q1 - lowest, q2 - lowest]."""
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1, dtype=np.int64)
    q1, q2 = values[:, None], values[None, :]
    paths = [result(q1, q2, None)] + [result(q1, q2, lane) for lane in lanes or ()]
    return np.clip(np.stack(paths), act_min, act_max).astype(dtype)


# -- activation ranges -------------------------------------------------------------------------


def _plain_activation_range(activation: str, dtype) -> tuple[np.ndarray, np.ndarray]:
    """CalculateActivationRange<T>: the clamp every float/integer result goes through (even NONE)."""
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    limits = {"RELU": (0, info.max), "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}
    lo, hi = limits.get(activation, (info.min, info.max))
    # The C++ converts the limits to T, so -1 wraps for unsigned types.
    return np.array(lo).astype(dtype), np.array(hi).astype(dtype)


# -- prepare -------------------------------------------------------------------------------------


def _check_types(op: str, x1, x2, out) -> bool:
    """Type rules of add.cc/sub.cc/mul.cc; returns whether the 8-bit quantized path applies."""
    check(x1.type == x2.type, f"{op}: input types differ ({x1.type} and {x2.type})")
    check(out.type == x1.type, f"{op}: output type {out.type} differs from input type {x1.type}")
    quantized_out = out.quantization is not None and out.quantization.is_quantized
    if x1.type in EIGHT_BIT:
        return True
    check(not (x1.type == "INT16" and quantized_out),
          f"{op}: quantized INT16 is not supported (TFLite's int16 versions are not implemented)")
    check(x1.type in _PLAIN_TYPES[op],
          f"{op}: type {x1.type} is not supported (supported: {', '.join(_PLAIN_TYPES[op] + EIGHT_BIT)})")
    return False


def _quantized_params(op: str, x1, x2, out) -> _AddSubParams | _MulParams:
    for t in (x1, x2, out):
        check(t.scale > 0, f"{op}: {t.type} tensor {t.name!r} needs a positive quantization scale")
    if op == "SUB":
        # PrepareGeneralSubOp checks that every zero point fits the type.
        info = np.iinfo(out.dtype)
        for t in (x1, x2, out):
            check(info.min <= t.zero_point <= info.max,
                  f"SUB: zero point {t.zero_point} of {t.name!r} is outside the {t.type} range")
    if op == "MUL":
        # mul.cc: input1_scale * input2_scale / output_scale, each step in float.
        mult, shift = quantize_multiplier(float(_F32(x1.scale) * _F32(x2.scale) / _F32(out.scale)))
        return _MulParams((-x1.zero_point, -x2.zero_point), mult, shift, out.zero_point)
    twice_max = 2.0 * max(x1.scale, x2.scale)
    real_out = twice_max / ((1 << _ADD_LEFT_SHIFT) * out.scale)
    check(real_out < 1.0 or op == "SUB",
          f"ADD: output scale {out.scale} is too small for input scales {x1.scale}, {x2.scale} "
          "(the output multiplier must be < 1)")
    m1, s1 = quantize_multiplier(x1.scale / twice_max)
    m2, s2 = quantize_multiplier(x2.scale / twice_max)
    mo, so = quantize_multiplier(real_out)
    return _AddSubParams((-x1.zero_point, -x2.zero_point), (m1, m2), (s1, s2), mo, so, out.zero_point)


def _quantized_table(op: str, x1, x2, out, activation: str) -> tuple[np.ndarray, LanePaths | None]:
    """The pair table of every code path, and which path computes each output element (None: path 0)."""
    params = _quantized_params(op, x1, x2, out)
    lo, hi = activation_range_quantized(activation, out.scale, out.zero_point, out.dtype)
    lanes = _SIMD_LANES.get((op, x1.type))
    if op == "MUL":
        def result(q1, q2, lane):
            return _mul_result(q1, q2, params, lane, out.dtype)
    else:
        def result(q1, q2, lane):
            return _add_sub_result(op, q1, q2, params, lane, out.dtype)
    table = _pair_table(result, lanes, lo, hi, out.dtype)
    if lanes is None:
        return table, None
    return table, _lane_paths(x1.shape, x2.shape, int(np.prod(out.shape, dtype=np.int64)), lanes)


# -- invoke plans: prepare leaves node.user_data a function of no arguments that computes the output --


_EIGHT = np.array(8, dtype=np.intp)  # a 0-d operand: cheaper for a ufunc than a Python int
# Constants broadcast to the output shape in prepare up to this size: NumPy's same-shape loops
# are several times faster than its broadcasting ones on small arrays.
_FULL_MAX_ELEMENTS = 1 << 16


def _contiguous(values: np.ndarray, shape) -> np.ndarray:
    """values broadcast to `shape` as a contiguous array, when that is small enough."""
    if values.shape == tuple(shape) or np.prod(shape) > _FULL_MAX_ELEMENTS:
        return values
    return np.ascontiguousarray(np.broadcast_to(values, shape))


def pair_table_plan(table: np.ndarray, x1, x2, out, paths: LanePaths | None = None) -> Callable[[], None]:
    """The invoke of an 8-bit binary op read from a table of every input pair.

    table[path, q1 - lowest, q2 - lowest] holds the result of code path `path`; `paths` says which
    path computes each output element (None: path 0). Inputs that are constants are folded in.
    """
    lowest = int(np.iinfo(x1.dtype).min)
    shape = out.shape
    path = 0 if paths is None else paths.uniform
    if path is None:
        # Index (q1 << 8) + q2 + the offset of the element's path block and of the lowest value,
        # added to each run's two parts.
        flat = table.reshape(-1)
        run, cut = paths.run, paths.cut
        first, rest = ((np.intp(p) << 16) - lowest * 257 for p in (paths.first, paths.rest))

        def add_offsets(i: np.ndarray) -> np.ndarray:
            runs = i.reshape(-1, run)  # a view: i is a fresh contiguous array
            runs[:, :cut] += first
            runs[:, cut:] += rest
            return i
        mixed = True
    else:
        # (q1 << 8) + q2 is negative for negative values; rolled, the table reads them through
        # NumPy's wrap-around of negative indices.
        flat = np.roll(table[path].reshape(-1), lowest * 257)
        mixed = False
    c1 = tensor_values(x1) if x1.is_constant else None
    c2 = tensor_values(x2) if x2.is_constant else None
    if not mixed and (c1 is None) != (c2 is None) and (c1 if c2 is None else c2).size == 1:
        # One constant value: a table over the other input's 256 values.
        rows = table[path]
        if c2 is not None:
            unary, x = rows[:, int(c2.reshape(-1)[0]) - lowest], x1
        else:
            unary, x = rows[int(c1.reshape(-1)[0]) - lowest, :], x2
        unary = np.roll(unary, lowest)
        if x.shape == shape:
            return store_plan(out, lambda: unary.take(x.data))
        return store_plan(out, lambda: unary.take(x.data).reshape(shape))
    if c1 is not None and c2 is not None:
        pairs = np.array(np.broadcast_to((c1.astype(np.intp) << 8) + c2, shape))  # a writable copy
        fixed = flat[add_offsets(pairs) if mixed else pairs]
        return store_plan(out, lambda: fixed.copy())
    if c1 is not None or c2 is not None:
        const = c1.astype(np.intp) << 8 if c1 is not None else c2.astype(np.intp)
        x, shift = (x2, None) if c1 is not None else (x1, _EIGHT)
        in_place = x.shape == shape
        if in_place:
            const = _contiguous(const, shape)

        def index() -> np.ndarray:
            i = x.data.astype(np.intp)
            if shift is not None:
                i <<= shift
            if in_place:
                i += const
            else:
                i = i + const
            return add_offsets(i) if mixed else i
    else:
        first_full, second_full = x1.shape == shape, x2.shape == shape

        def index() -> np.ndarray:
            i = x1.data.astype(np.intp)
            i <<= _EIGHT
            i2 = x2.data.astype(np.intp)
            if first_full:
                i += i2
            elif second_full:
                i2 += i
                i = i2
            else:
                i = i + i2
            return add_offsets(i) if mixed else i

    return store_plan(out, lambda: flat[index()])


def _plain_plan(op: str, x1, x2, out, activation: str) -> Callable[[], None]:
    """ufunc on the raw values (integers wrap like the C++), then CalculateActivationRange's clamp:
    for float32 even NONE clamps, turning infinities into +-FLT_MAX; an integer bound at the
    type's own limit is a no-op and skipped."""
    ufunc = _NUMPY_OPS[op]
    if x1.type == "COMPLEX64":
        return store_plan(out, lambda: ufunc(x1.data, x2.data))
    bottom, top = _plain_activation_range(activation, out.dtype)
    if out.dtype.kind != "f" and bottom == np.iinfo(out.dtype).min and top == np.iinfo(out.dtype).max:
        return _unclamped_plan(op, ufunc, x1, x2, out)
    if out.shape == ():
        # 0-d operands: NumPy scalar arithmetic (wrapping as the ufunc does), clamped by the ufunc.
        scalar_op = _SCALAR_OPS[op]

        def run_scalar() -> None:
            out.unchecked_data = np.array(fast_clip(scalar_op(x1.data[()], x2.data[()]), bottom, top))

        return run_scalar
    apply = _apply_plain(ufunc, x1, x2, out.shape)

    def run() -> None:
        # The clip ufunc with 0-d bounds: one vectorized call at any size (max then min against
        # output-shaped bounds took two), the same values, NaN kept.
        y = apply()
        fast_clip(y, bottom, top, out=y)
        out.unchecked_data = y

    return run


def _unclamped_plan(op: str, ufunc, x1, x2, out) -> Callable[[], None]:
    """An integer op whose activation range is the type's own: the wrapped result as it is."""
    if out.shape == ():
        scalar_op = _SCALAR_OPS[op]

        def run_scalar() -> None:
            # 0-d operands: NumPy scalar arithmetic, which wraps like the ufunc (~0.3 us instead of ~1.4).
            out.unchecked_data = np.array(scalar_op(x1.data[()], x2.data[()]))

        return run_scalar
    return store_plan(out, _apply_plain(ufunc, x1, x2, out.shape))


def _apply_plain(ufunc, x1, x2, shape) -> Callable[[], np.ndarray]:
    """ufunc of the two inputs; a constant one broadcast in prepare when the other has the output shape."""
    if x1.is_constant and x2.shape == shape:
        c1 = _contiguous(tensor_values(x1), shape)
        return lambda: ufunc(c1, x2.data)
    if x2.is_constant and x1.shape == shape:
        c2 = _contiguous(tensor_values(x2), shape)
        return lambda: ufunc(x1.data, c2)
    # An input with the output's size but fewer dimensions ([64] against [1, 64]): viewed in the
    # output's shape, NumPy takes its same-shape loop (0.75 us against 1.1 us for 64 floats).
    if x1.shape == shape and x2.shape != shape and _same_size(x2.shape, shape):
        return lambda: ufunc(x1.data, x2.data.reshape(shape))
    if x2.shape == shape and x1.shape != shape and _same_size(x1.shape, shape):
        return lambda: ufunc(x1.data.reshape(shape), x2.data)
    return lambda: ufunc(x1.data, x2.data)


def _same_size(shape, other) -> bool:
    size = prod(shape)
    return size > 0 and size == prod(other)


_NUMPY_OPS = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}
_SCALAR_OPS = {"ADD": operator.add, "SUB": operator.sub, "MUL": operator.mul}


def _prepare(op: str):
    def prepare(ctx, node) -> None:
        check_inputs(node, 2)
        x1, x2, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
        out_shape = broadcast_shape(x1.shape, x2.shape)
        activation = activation_name(node.options.fused_activation_function)
        quantized = _check_types(op, x1, x2, out)
        check(x1.type != "COMPLEX64" or activation == "NONE",
              f"{op}: a fused activation ({activation}) is not allowed for COMPLEX64")
        ctx.resize_tensor(out, out_shape)
        if ctx.shapes_only:  # nothing will invoke: no table or plan to prepare
            return
        if quantized:
            table, paths = _quantized_table(op, x1, x2, out, activation)
            node.user_data = pair_table_plan(table, x1, x2, out, paths)
        else:
            node.user_data = _plain_plan(op, x1, x2, out, activation)

    return prepare


# -- the specification: each element computed directly (the table plans above implement these) --


@dataclass(frozen=True)
class QuantizedStage:
    """What an 8-bit ADD/SUB/MUL computes with: its fixed-point parameters, clamp, and which code path
    (scalar or one of the SIMD `lanes`) LiteRT's x86 build runs for each output element (`paths`)."""

    params: _AddSubParams | _MulParams
    lanes: tuple[_Lane, _Lane] | None
    paths: LanePaths | None
    act_min: int
    act_max: int
    dtype: np.dtype


def binary(op: str, x1: np.ndarray, x2: np.ndarray, stage: str | QuantizedStage) -> np.ndarray:
    """ADD, SUB or MUL of broadcast x1 and x2 (add.cc, sub.cc, mul.cc), then the output stage.

    stage: an activation name for float and integer types: the NumPy op (integers wrap as the C++
    does), then CalculateActivationRange<T>'s clamp (complex64: none). Or a QuantizedStage: each
    element through the fixed-point rules of its code path (_add_sub_result, _mul_result), then the
    quantized activation clamp.
    """
    if isinstance(stage, str):
        y = np.asarray(_NUMPY_OPS[op](x1, x2))
        if y.dtype.kind == "c":
            return y
        lo, hi = _plain_activation_range(stage, y.dtype)
        return np.clip(y, lo, hi).astype(y.dtype)
    a, b = np.broadcast_arrays(x1.astype(np.int64), x2.astype(np.int64))
    p, dtype = stage.params, stage.dtype
    results = [_mul_result(a, b, p, lane, dtype) if op == "MUL" else _add_sub_result(op, a, b, p, lane, dtype)
               for lane in (None, *(stage.lanes or ()))]
    path = np.zeros(a.shape, np.intp)
    if stage.paths is not None:
        within_run = np.arange(a.size).reshape(a.shape) % stage.paths.run
        path = np.where(within_run < stage.paths.cut, stage.paths.first, stage.paths.rest)
    return np.clip(np.choose(path, results), stage.act_min, stage.act_max).astype(dtype)


def _reference(op: str):
    def reference(ctx, node) -> None:
        x1, x2, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
        activation = activation_name(node.options.fused_activation_function)
        stage = activation
        if x1.type in EIGHT_BIT:
            lanes = _SIMD_LANES.get((op, x1.type))
            size = int(np.prod(out.shape, dtype=np.int64))
            stage = QuantizedStage(_quantized_params(op, x1, x2, out), lanes,
                                   None if lanes is None else _lane_paths(x1.shape, x2.shape, size, lanes),
                                   *activation_range_quantized(activation, out.scale, out.zero_point, out.dtype),
                                   out.dtype)
        out.data = binary(op, x1.data, x2.data, stage)

    return reference


def register(resolver) -> None:
    def reg(op: str) -> Registration:
        return Registration(prepare=_prepare(op), invoke=run_plan, reference=_reference(op), work=work.elementwise)

    # ADD: v1 float/int32/uint8, v2 int8, v4 int64, v5 int16 (unquantized);
    # v3 (quantized int16) and v6 (float16) are not implemented.
    resolver.add_builtin("ADD", reg("ADD"), 1, 2)
    resolver.add_builtin("ADD", reg("ADD"), 4, 5)
    # SUB: v1 float/int32/uint8, v2 int8, v3 broadcasting beyond 4D, v4 int64;
    # v5 (quantized int16) is not implemented.
    resolver.add_builtin("SUB", reg("SUB"), 1, 4)
    # MUL: v1 float/int32/uint8, v2 int8, v3 output multiplier >= 1, v5 int64, v6 complex64,
    # v7 unquantized int16 and uint32; v4 (quantized int16) and v8 (float16) are not implemented.
    resolver.add_builtin("MUL", reg("MUL"), 1, 3)
    resolver.add_builtin("MUL", reg("MUL"), 5, 7)
