"""GELU (gelu.cc), float32 and 8/16-bit quantized.

Float32 is reference_ops::Gelu, which LiteRT runs through Eigen: 0.5 * x * erfc(-x / sqrt 2) with erfc
from the erfcc Chebyshev fit in float32 (gelu_float_for), or the tanh form when the `approximate` option
is set. Quantized GELU reads LUTPopulate's table of gelu.h's GeluTransform(Approximate), whose erfcf and
tanhf are computed in double and rounded once (common.LutOp).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    LutOp,
    QuantParams,
    in_float64,
    lut_op_prepare,
    lut_values,
    options_field,
    unary_plan,
)

_F32 = np.float32


def _erfc_exact(v: np.ndarray) -> np.ndarray:
    """erfcf of float32 values, correctly rounded (math.erfc over at most 1539 table points)."""
    flat = np.asarray(v, dtype=np.float64).reshape(-1)
    return np.array([math.erfc(float(t)) for t in flat], dtype=np.float64).reshape(np.shape(v)).astype(np.float32)


_SQRT1_2 = _F32(-math.sqrt(0.5))  # static_cast<float>(-M_SQRT1_2)
_SQRT_2_OVER_PI = _F32(2.0 / math.sqrt(math.pi) * math.sqrt(0.5))  # kSqrt2dPi = M_2_SQRTPI * M_SQRT1_2


def _gelu_transform(v: np.ndarray) -> np.ndarray:
    """gelu.h GeluTransform: 0.5f * in * erfc(in * -M_SQRT1_2) in float32."""
    return (_F32(0.5) * v) * _erfc_exact(v * _SQRT1_2)


def _gelu_approximate_transform(v: np.ndarray) -> np.ndarray:
    """gelu.h GeluTransformApproximate: 0.5f*in*(1+tanh(sqrt(2/pi)*(in+0.044715f*in^3))) in float32."""
    cube = ((_F32(0.044715) * v) * v) * v
    inner = in_float64(np.tanh, _SQRT_2_OVER_PI * (v + cube))
    return (_F32(0.5) * v) * (_F32(1) + inner)


def _f32_constants(*values) -> tuple[np.ndarray, ...]:
    # 0-d float32 arrays: the cheapest scalar operand of a float32 ufunc call.
    return tuple(np.array(v, dtype=np.float32) for v in values)


_HALF, _ONE, _TWO, _ZERO, _NEG_SQRT1_2, _GELU_CUBIC, _GELU_TANH_SCALE = _f32_constants(
    0.5, 1, 2, 0, -_SQRT1_2, 0.044715, _SQRT_2_OVER_PI)


# Numerical Recipes' Chebyshev fit erfcc: erfc(z) = t * exp(-z^2 + P(t)), t = 1 / (1 + z / 2) for
# z >= 0, relative error below 1.2e-7 in exact arithmetic. Here the coefficients of t^0..t^9, with
# ln 2 taken from the constant one so that the exponential gives erfc(z) / 2, and a last -1 for z^2.
_HALF_ERFCC = np.array([-1.26551223 - math.log(2.0), 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                        0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277, -1.0], dtype=np.float32)


# How t^2..t^9 are built from lower powers (rows of the scratch): two products per power at most.
_POWER_FACTORS = ((2, 1, 1), (3, 2, 1), (4, 2, 2), (5, 4, 1), (6, 3, 3), (7, 6, 1), (8, 4, 4), (9, 8, 1))


# GELU's scratch holds 11 rows of at most this many values (704 KiB): larger inputs go block by block,
# so that prepare never allocates a multiple of the tensor (11 rows of a 67M-value input were 2.9 GB).
_GELU_BLOCK = 16384


def gelu_float_for(size: int) -> Callable[[np.ndarray], np.ndarray]:
    """reference_ops::Gelu (Eigen, float32): 0.5f * x * erfc(x * -M_SQRT1_2), erfc from erfcc in
    float32 (within a few ulps of erfcf), for inputs of `size` values.

    Few NumPy calls: the powers of t fill the rows of a scratch array owned by this node (never
    handed out), and one matrix-vector product sums the polynomial and -z^2 (about 16 us for
    1024 values against 24 for Horner's 18 calls). Inputs over _GELU_BLOCK values run in blocks.
    """
    block = max(1, min(size, _GELU_BLOCK))
    scratch = np.empty((len(_HALF_ERFCC), block), dtype=np.float32)
    scratch[0] = 1
    full = (scratch, list(scratch))

    def gelu_block(v: np.ndarray, out: np.ndarray) -> None:
        """out = GELU(v) for a flat block of at most `block` values."""
        rows, row = full if v.size == block else (scratch[:, :v.size], list(scratch[:, :v.size]))
        t, square = row[1], row[-1]
        z = np.multiply(v, _NEG_SQRT1_2)  # w = x * -M_SQRT1_2, made |w| after its square is taken
        np.multiply(z, z, out=square)
        np.abs(z, out=z)
        # t = 1 / (1 + z / 2), computed as 2 / (2 + z): scaling by 2 is exact, so the bits are the same.
        np.add(z, _TWO, out=t)
        np.divide(_TWO, t, out=t)
        for k, i, j in _POWER_FACTORS:
            np.multiply(row[i], row[j], out=row[k])
        half = np.dot(_HALF_ERFCC, rows)
        np.exp(half, out=half)
        half *= t  # erfc(|w|) / 2, in [0, 1/2]
        # erfc(w) = 2 - erfc(-w): for x > 0 (w < 0) the half is 1 - half, which |1 - half| gives
        # exactly as |0 - half| gives half itself otherwise (a bool operand is 0 or 1).
        np.subtract(np.greater(v, _ZERO), half, out=half)
        np.abs(half, out=half)
        np.multiply(v, half, out=out)

    def gelu(x: np.ndarray) -> np.ndarray:
        v = x.reshape(-1)
        y = np.empty(v.shape, np.float32)
        if v.size == block:
            gelu_block(v, y)
        else:
            for start in range(0, v.size, block):
                gelu_block(v[start:start + block], y[start:start + block])
        return y.reshape(x.shape)

    return gelu


def _gelu_approximate_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::Gelu with approximate: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),
    each step in float32 in the C++'s order, in place."""
    inner = np.multiply(x, _GELU_CUBIC)
    inner *= x
    inner *= x
    inner += x
    inner *= _GELU_TANH_SCALE
    np.tanh(inner, out=inner)
    inner += _ONE
    y = np.multiply(x, _HALF)
    y *= inner
    return y


def _gelu_approximate(node) -> bool:
    return bool(options_field(node, "approximate", False))


def gelu(x: np.ndarray, approximate: bool = False,
         quantization: tuple[QuantParams, QuantParams] | None = None) -> np.ndarray:
    """GELU (gelu.cc): float32 reference_ops::Gelu, 0.5 * x * erfc(-x / sqrt 2) (erfc from erfcc,
    gelu_float_for) or its tanh form when `approximate`; 8/16-bit with (input, output)
    `quantization`, LUTPopulate's table of gelu.h's GeluTransform(Approximate) (common.lut_values)."""
    float_fn = _gelu_approximate_float if approximate else gelu_float_for(x.size)
    return lut_values(float_fn, _gelu_approximate_transform if approximate else _gelu_transform, x, quantization)


def _gelu_node(ctx, node) -> None:
    """`gelu` on a node: its approximate option and, when quantized, its tensors' quantization."""
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    out.data = gelu(x.data, _gelu_approximate(node), None if x.type == "FLOAT32" else QuantParams.of(x, out))


def _float_for(node, x) -> Callable[[np.ndarray], np.ndarray]:
    return _gelu_approximate_float if _gelu_approximate(node) else gelu_float_for(math.prod(x.shape))


def _transform_for(node, out) -> Callable[[np.ndarray], np.ndarray]:
    return _gelu_approximate_transform if _gelu_approximate(node) else _gelu_transform


# Float32 computed directly, quantized through LUTPopulate's table.
_GELU = LutOp("GELU", ("FLOAT32", "INT8", "UINT8", "INT16"), _float_for, _transform_for, False)


def register(resolver) -> None:
    # GELU: v2 int8/uint8; v3 (float16) is not implemented. 8-bit GELU reads a table, as TFLite's
    # LUTPopulate kernel does.
    resolver.add_builtin("GELU", unary_plan(lut_op_prepare(_GELU), work.lookup_if_quantized, _gelu_node), 1, 2)
