"""Helpers shared by the builtin kernels: checks, broadcasting, (de)quantization."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from accelsim.runtime.errors import KernelError
from accelsim.runtime.quant import tflite_round
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
