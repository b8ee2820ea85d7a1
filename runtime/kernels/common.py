"""The helper library every builtin kernel shares (TFLite's kernels/internal/common.h plays this part).

Kernels import these names publicly; no kernel reaches into another kernel's private names
(tests/runtime/test_kernel_imports.py). Sections: checks and prepare helpers; (de)quantization;
invoke plans; tables over a whole 8/16-bit domain and LiteRT's LUTs (LUTPopulate, LUTLookup); the
unary-op registration shape. The gemmlowp fixed-point arithmetic (SaturatingRoundingDoublingHighMul,
RoundingDivideByPOT, MultiplyByQuantizedMultiplier and their relatives) is `accelsim.runtime.quant`, which the
delegates and the rest of the runtime share too; kernels import it as publicly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from accelsim.runtime.errors import KernelError
from accelsim.runtime.quant import cast_to_int32, tflite_round
from accelsim.runtime.registration import Registration
from accelsim.runtime.tensor import PERSISTENT_RO

# fast_clip(x, lo, hi, out=...) is the ufunc ndarray.clip and np.clip end in, without their ~1-3 us of
# Python argument handling (measured, NumPy 2.4: 64 float32 values 1.4 -> 0.9 us; 64 int32 with int
# bounds 3.9 -> 1.1 us). The same results, NaN propagation included: for small kernels' per-call floor.
try:
    from numpy._core import umath as _umath
except ImportError:  # NumPy 1.x
    from numpy.core import umath as _umath
fast_clip = _umath.clip

# The index types TFLite accepts for shape-like inputs (paddings, multiples, dims, axis).
INDEX_TYPES = ("INT32", "INT64")
# The 8-bit quantized types, which many kernels treat alike (one table entry per value).
EIGHT_BIT = ("INT8", "UINT8")
_F32 = np.float32


@dataclass(frozen=True)
class QuantParams:
    """One tensor's per-tensor quantization (real = scale * (q - zero_point)), as reference functions
    take it; the rescaling helpers read `.scale` and `.zero_point`, which runtime tensors also have."""

    scale: float
    zero_point: int

    @classmethod
    def of(cls, *tensors) -> tuple[QuantParams, ...]:
        """Each tensor's scale and zero point, in order."""
        return tuple(cls(t.scale, t.zero_point) for t in tensors)


def check(condition: bool, message: str) -> None:
    """TF_LITE_ENSURE: fail the node's prepare/invoke with `message`."""
    if not condition:
        raise KernelError(message)


def check_inputs(node, count_min: int, count_max: int | None = None) -> None:
    n = len(node.inputs)
    hi = count_min if count_max is None else count_max
    check(count_min <= n <= hi, f"expected {count_min}..{hi} inputs, got {n}")


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """NumPy/TFLite broadcasting of two shapes, with a clear error when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise KernelError(f"shapes {list(a)} and {list(b)} are not broadcastable") from None


def dequantize(tensor, values: np.ndarray | None = None) -> np.ndarray:
    """real = scale * (q - zero_point), per tensor or along quantized_dimension; float32."""
    q = tensor.data if values is None else values
    qp = tensor.quantization
    if qp is None or not qp.scales:
        return q.astype(np.float32)
    scales = np.asarray(qp.scales, dtype=np.float32)
    zps = np.asarray(qp.zero_points or (0,) * len(scales), dtype=np.int32)
    if len(scales) > 1:
        shape = [1] * q.ndim
        shape[qp.quantized_dimension] = -1
        scales, zps = scales.reshape(shape), zps.reshape(shape)
    return ((q.astype(np.int32) - zps).astype(np.float32) * scales).astype(np.float32)


def quantize(values: np.ndarray, scale: float, zero_point: int, dtype) -> np.ndarray:
    """q = clamp(round(real / scale) + zero_point), rounding half away from zero (TfLiteRound)."""
    info = np.iinfo(dtype)
    q = tflite_round(np.asarray(values, dtype=np.float32) / np.float32(scale)) + zero_point
    return np.clip(q, info.min, info.max).astype(dtype)


def tensor_values(tensor) -> np.ndarray | None:
    """The tensor's data, or an empty array for a zero-element tensor that has no buffer.

    A zero-element constant (e.g. the shape [] of a scalar RESHAPE) is stored with an
    empty buffer, which the loader reads as "no data"; LiteRT gives it a zero-byte
    allocation instead.
    """
    if tensor.data is None and 0 in tensor.shape:
        return np.zeros(tensor.shape, dtype=tensor.dtype)
    return tensor.data


def integer_domain(dtype) -> np.ndarray:
    """Every value of an 8- or 16-bit integer type, ordered by its unsigned bit pattern.

    A kernel that tabulates a quantized function over this domain applies it with
    `np.take(table, table_index(q))` (LiteRT's LUT layout: an int8 indexes as uint8).
    """
    dtype = np.dtype(dtype)
    return np.arange(1 << (8 * dtype.itemsize), dtype=np.int64).astype(f"u{dtype.itemsize}").view(dtype)


def table_index(q: np.ndarray) -> np.ndarray:
    """The unsigned view of 8/16-bit integers: their position in `integer_domain`."""
    return q.view(f"u{q.dtype.itemsize}")


def is_known(tensor) -> bool:
    """Whether the tensor's data is fixed once prepared (TFLite's IsConstantOrPersistentTensor).

    True for constants and for PERSISTENT_RO tensors, which a prepare computed from constants
    (e.g. DEQUANTIZE of float16 weights), so later prepares may precompute from them.
    """
    return tensor.is_constant or tensor.allocation == PERSISTENT_RO


def store_plan(out, compute):
    """An invoke plan (a function of no arguments) that stores compute() as `out`'s data.

    compute() must give the output's dtype and shape by construction (prepare checked them and
    the output is not dynamic), so the array is stored without the setter's checks; a 0-d result
    may be a NumPy scalar, which the setter wraps.
    """
    if out.shape == ():
        def run() -> None:
            out.data = compute()
    else:
        def run() -> None:
            out.unchecked_data = compute()
    return run


def run_plan(ctx, node) -> None:
    """The invoke of a kernel whose prepare left an invoke plan in node.user_data."""
    node.user_data()


def int_values(t) -> list[int]:
    """A tensor's values as Python ints, flattened."""
    return [int(v) for v in np.asarray(tensor_values(t)).reshape(-1)]


def node_outputs(ctx, node) -> list:
    """Every output tensor of the node."""
    return [ctx.output(node, i) for i in range(len(node.outputs))]


def size_outputs(ctx, node, inputs, shapes_fn) -> None:
    """Resize the outputs to shapes_fn() when `inputs` are constants; otherwise defer to invoke."""
    outs = node_outputs(ctx, node)
    if not all(t.is_constant for t in inputs):
        for out in outs:
            ctx.set_dynamic(out)
        return
    for out, shape in zip(outs, shapes_fn()):
        ctx.resize_tensor(out, shape)


def axis_value(op: str, t, rank: int) -> int:
    """A one-element axis tensor, made non-negative and checked against [-rank, rank)."""
    check(int(np.prod(t.shape, dtype=np.int64)) == 1, f"{op}: axis must hold one value, got shape {list(t.shape)}")
    value = int_values(t)[0]
    axis = value + rank if value < 0 else value
    check(0 <= axis < rank, f"{op}: axis {value} is out of range [-{rank}, {rank})")
    return axis


def check_types(op: str, x, outs, allowed=None) -> None:
    """x's type is one of `allowed` (when given) and every output has it."""
    check(allowed is None or x.type in allowed, f"{op}: type {x.type} is not supported ({', '.join(allowed or ())})")
    for i, out in enumerate(outs):
        check(out.type == x.type, f"{op}: output {i} type {out.type} differs from input type {x.type}")


def check_same_quantization(op: str, x, outs) -> None:
    """Every output carries x's scale and zero point (values are copied, never rescaled)."""
    for i, out in enumerate(outs):
        check(x.scale == out.scale and x.zero_point == out.zero_point,
              f"{op}: output {i} quantization ({out.scale}, {out.zero_point}) differs from the input's "
              f"({x.scale}, {x.zero_point})")


# -- checks and prepare helpers shared by the elementwise kernels -----------------------------------


def is_quantized(t) -> bool:
    """Whether the tensor carries quantization scales (per tensor or per channel)."""
    q = t.quantization
    return q is not None and bool(q.scales)


def check_type(op: str, t, supported) -> None:
    """t's type is one of `supported` (TF_LITE_KERNEL_LOG "Type %s is not supported")."""
    check(t.type in supported, f"{op}: type {t.type} is not supported (supported: {', '.join(supported)})")


def require_per_tensor_quantized(op: str, *tensors) -> None:
    """Each tensor is quantized with a positive scale (the kernels read one scale and zero point)."""
    for t in tensors:
        check(is_quantized(t) and t.scale > 0,
              f"{op}: {t.type} tensor {t.name!r} needs per-tensor quantization with a positive scale")


def require_positive_scales(op: str, *tensors) -> None:
    """Quantized kernels divide by the scales; TFLite would produce inf/NaN multipliers."""
    for t in tensors:
        check(t.scale > 0, f"{op}: {t.type} tensor {t.name!r} needs a positive quantization scale")


def require_zero_points(op: str, *tensors) -> None:
    """Each tensor's zero point is 0 (TFLite's int16 kernels: TF_LITE_ENSURE_EQ(zero_point, 0))."""
    for t in tensors:
        check(t.zero_point == 0, f"{op}: {t.type} tensor {t.name!r} needs zero point 0, got {t.zero_point}")


def unary_prepare(ctx, node, op: str, supported):
    """One input, one output of the same supported type; the output takes the input's shape."""
    check_inputs(node, 1)
    check(len(node.outputs) == 1, f"{op} takes one output")
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check_type(op, x, supported)
    check(out.type == x.type, f"{op}: output type {out.type} differs from input type {x.type}")
    ctx.resize_tensor(out, x.shape)
    return x, out


def binary_prepare(ctx, node, op: str, supported):
    """Two inputs of one type, broadcast against each other; the output takes their type."""
    check_inputs(node, 2)
    check(len(node.outputs) == 1, f"{op} takes one output")
    a, b, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    check(a.type == b.type, f"{op}: input types differ ({a.type} and {b.type})")
    check_type(op, a, supported)
    check(out.type == a.type, f"{op}: output type {out.type} differs from input type {a.type}")
    ctx.resize_tensor(out, broadcast_shape(a.shape, b.shape))
    return a, b, out


def check_output_quantization(op: str, out, scale: float, zero_points: dict[str, int]) -> None:
    """The kernels hard-wire the output range: an exact scale and a per-type zero point."""
    zp = zero_points[out.type]
    check(float(_F32(out.scale)) == scale and out.zero_point == zp,
          f"{op}: {out.type} output must have scale {scale} and zero point {zp}, got ({out.scale}, {out.zero_point})")


def options_field(node, name: str, default):
    """A field of the node's builtin options, or `default` for a node without options."""
    return getattr(node.options, name) if node.options is not None else default


def clamp_to(values, dtype) -> np.ndarray:
    """Values clamped to dtype's range and cast to it (the kernels' final saturating store)."""
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def in_float64(fn, x: np.ndarray) -> np.ndarray:
    """fn evaluated in double and rounded once to float32 (a correctly rounded libm float call)."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(np.asarray(x, dtype=np.float64))).astype(np.float32)


def expf(x: np.ndarray) -> np.ndarray:
    """expf, correctly rounded (in double, rounded once to float; overflow gives inf): it matched glibc
    in every one of 6000 random LUT parameter sets."""
    return in_float64(np.exp, x)


# -- tables over a whole 8/16-bit domain, applied with np.take ----------------------------------


def tabulate(fn, dtype) -> np.ndarray:
    """`fn` (int64 values -> results) over every value of an 8/16-bit type, in `integer_domain` order."""
    with np.errstate(all="ignore"):
        return clamp_to(fn(integer_domain(dtype).astype(np.int64)), dtype)


def lookup(table: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """A function of input arrays that reads `tabulate`'s table."""
    # In `integer_domain` order a negative value's entry is where NumPy's negative indices wrap to.
    return table.take


def pair_table(fn, dtype) -> np.ndarray:
    """`fn(a, b)` over all 65536 pairs of 8-bit values: table[0, a - lowest, b - lowest]."""
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1, dtype=np.int64)
    with np.errstate(all="ignore"):
        return clamp_to(fn(values[:, None], values[None, :]), dtype)[None]


def pair_lookup(fn, dtype) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """`fn(a, b)` over all 65536 pairs of 8-bit values, applied to input arrays that broadcast."""
    lowest = int(np.iinfo(dtype).min)
    # (a << 8) + b is negative for negative values; rolled, the table reads them through wrap-around.
    flat = np.roll(pair_table(fn, dtype).reshape(-1), lowest * 257)
    return lambda a, b: flat[(a.astype(np.intp) << 8) + b]


# -- LiteRT's LUTs (common.h LUTPopulate, LUTLookup) ----------------------------------------------


def lut_apply(transform, q: np.ndarray, in_scale: float, in_zp: int, out_scale: float, out_zp: int,
              dtype) -> np.ndarray:
    """An 8-bit LUT op's specification on the values `q` themselves: LUTPopulateInt8's arithmetic in float32
    (dequantize, `transform`, divide by the output scale, std::round, + zero point, clamp to dtype)."""
    info = np.iinfo(dtype)
    q = q.astype(np.int64)
    dequantized = _F32(in_scale) * (q - in_zp).astype(np.float32)
    inverse_scale = _F32(1) / _F32(out_scale)
    rescaled = tflite_round(transform(dequantized) * inverse_scale).astype(np.float32)
    quantized = cast_to_int32(rescaled + _F32(out_zp))
    return np.clip(quantized, info.min, info.max).astype(dtype)


def lut_populate(transform, in_scale: float, in_zp: int, out_scale: float, out_zp: int, dtype) -> np.ndarray:
    """LUTPopulateInt8, reproduced in float32, over `integer_domain(dtype)`."""
    return lut_apply(transform, integer_domain(dtype), in_scale, in_zp, out_scale, out_zp, dtype)


def lut_int16(transform, in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """LUTPopulateInt16<float>: 512 samples over the input range plus an end point, biased so
    that interpolating between samples best matches the midpoints; every step in float32."""
    f = _F32
    in_min = f(in_scale) * f(-32768 - in_zp)
    in_max = f(in_scale) * f(32767 - in_zp)
    out_min = f(out_scale) * f(-32768 - out_zp)
    out_max = f(out_scale) * f(32767 - out_zp)
    step = (in_max - in_min) / f(512)
    inv = f(65536) / (out_max - out_min)

    def rnd(v):
        return tflite_round(v).astype(np.float32)

    start = in_min + np.arange(512, dtype=np.float32) * step
    val = transform(start)
    mid = transform(start + step / f(2))
    nxt = transform(in_min + np.arange(1, 513, dtype=np.float32) * step)
    interpolated = rnd((nxt * inv + rnd(val * inv)) / f(2))
    bias = rnd((interpolated - rnd(mid * inv)) / f(2))
    last = rnd(transform(np.asarray([in_max], dtype=np.float32)) * inv)
    table = np.concatenate([rnd(val * inv) - bias, last])
    return np.clip(table, -32768, 32767).astype(np.int64)


def lut_lookup_int16(v: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """LUTLookup: the top 9 bits pick a segment, the low 7 interpolate within it."""
    index = 256 + (v >> 7)
    base = lut[index]
    return base + (((lut[index + 1] - base) * (v & 0x7F) + 64) >> 7)


def lut_table(transform, x, out) -> np.ndarray:
    """The LUT of `transform` for x's type, expanded to a table over x's whole domain."""
    if x.type == "INT16":
        lut = lut_int16(transform, x.scale, x.zero_point, out.scale, out.zero_point)
        return tabulate(partial(lut_lookup_int16, lut=lut), np.int16)
    return lut_populate(transform, x.scale, x.zero_point, out.scale, out.zero_point, x.dtype)


def lut_values(float_fn, transform, x: np.ndarray, quantization: tuple[QuantParams, QuantParams] | None) -> np.ndarray:
    """A LUT op on `x`: float32 `float_fn` directly; with (input, output) `quantization`, int8/uint8
    through `lut_apply` on the values themselves, int16 through LUTLookup of LUTPopulateInt16 of
    `transform` (that interpolation is the int16 rule)."""
    if quantization is None:
        return float_fn(x.reshape(-1).copy()).reshape(x.shape)
    qin, qout = quantization
    if x.dtype == np.int16:
        lut = lut_int16(transform, qin.scale, qin.zero_point, qout.scale, qout.zero_point)
        return clamp_to(lut_lookup_int16(x.astype(np.int64), lut), np.int16)
    return lut_apply(transform, x, qin.scale, qin.zero_point, qout.scale, qout.zero_point, x.dtype)


# -- unary ops: the LUT-op description, the registration shape, the reference's node form ---------


@dataclass(frozen=True)
class LutOp:
    """A unary op computed in float for float32 and through LUTPopulate's table when quantized."""

    name: str
    types: tuple[str, ...]
    float_fn: Callable  # (node, input tensor) -> (float32 array -> float32 array)
    transform_for: Callable  # (node, output tensor) -> the float32 transform the LUT samples
    int16_zero_points: bool  # the int16 form needs zero points of 0


def lut_op_prepare(spec: LutOp):
    """The prepare of a `LutOp`: leaves `unary_plan` a function of the input array."""
    def prepare(ctx, node) -> None:
        x, out = unary_prepare(ctx, node, spec.name, spec.types)
        if x.type == "FLOAT32":
            fn = spec.float_fn(node, x)
            # NumPy gives scalars for 0-d operands, which the in-place steps cannot write to.
            node.user_data = fn if x.shape else lambda v: fn(v.reshape(1)).reshape(())
            return
        require_per_tensor_quantized(spec.name, x, out)
        if x.type == "INT16" and spec.int16_zero_points:
            require_zero_points(spec.name, x, out)
        node.user_data = lookup(lut_table(spec.transform_for(node, out), x, out))

    return prepare


def unary_plan(prepare, estimate, reference=None) -> Registration:
    """A unary op whose prepare leaves a function of the input array (of the output's dtype and shape)
    in node.user_data; it becomes the invoke plan that applies it. `estimate` is its work hook,
    `reference` its reference hook."""
    def prepare_plan(ctx, node) -> None:
        prepare(ctx, node)
        fn, x, out = node.user_data, ctx.input(node, 0), ctx.output(node, 0)
        if not out.shape:
            node.user_data = store_plan(out, lambda: fn(x.data))
            return

        def run() -> None:
            out.unchecked_data = fn(x.data)  # store_plan's rule

        node.user_data = run

    return Registration(prepare=prepare_plan, invoke=run_plan, reference=reference, work=estimate)


def unary_node(fn, quantized_types=("INT8", "UINT8", "INT16")):
    """The node form of a unary reference `fn(x, quantization)`: (input, output) QuantParams for the
    `quantized_types` when the input carries a quantization, else None."""
    def node_form(ctx, node) -> None:
        x, out = ctx.input(node, 0), ctx.output(node, 0)
        quantization = QuantParams.of(x, out) if x.type in quantized_types and is_quantized(x) else None
        out.data = np.asarray(fn(x.data, quantization))

    return node_form
