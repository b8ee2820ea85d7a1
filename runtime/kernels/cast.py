"""CAST: convert values between types as cast.cc does (float to integer saturates, as SafeCast)."""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, check_inputs, check_type
from accelsim.runtime.registration import Registration

_CAST_TYPES = ("INT64", "INT32", "UINT32", "UINT16", "INT16", "UINT8", "INT8", "FLOAT16", "FLOAT32", "FLOAT64",
               "BOOL", "COMPLEX64")


def _saturating_float_to_int(values: np.ndarray, dtype) -> np.ndarray:
    """quantization_util.h SafeCast as cast.cc uses it: truncate, saturate, NaN -> max."""
    info = np.iinfo(dtype)
    v = values.astype(np.float64)
    # The exclusive upper bound 2**bits (or 2**(bits-1)) is exact in every float type.
    too_high = np.isnan(v) | (v >= float(info.max) + 1.0)
    too_low = v < float(info.min)
    inside = np.where(too_high | too_low, 0.0, v)
    result = np.trunc(inside).astype(dtype)
    return np.where(too_high, info.max, np.where(too_low, info.min, result)).astype(dtype)


def cast(values: np.ndarray, out_dtype: np.dtype) -> np.ndarray:
    """CAST of `values` to `out_dtype` (cast.cc copyCast for one (input, output) dtype pair)."""
    if values.dtype.kind == "c" and out_dtype.kind != "c":
        values = values.real  # complex inputs cast their real part
    if out_dtype == np.bool_:
        return values != 0
    if out_dtype.kind in "iu" and values.dtype.kind == "f":
        return _saturating_float_to_int(values, out_dtype)
    with np.errstate(over="ignore"):
        if out_dtype == np.float16:
            # fp16_ieee_from_fp32_value(static_cast<float>(x)): through float32 first.
            return values.astype(np.float32).astype(np.float16)
        return values.astype(out_dtype)


def _cast_prepare(ctx, node) -> None:
    check_inputs(node, 1)
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    check_type("CAST", x, _CAST_TYPES)
    check(out.type in _CAST_TYPES, f"CAST: output type {out.type} is not supported "
                                   f"(supported: {', '.join(_CAST_TYPES)})")
    ctx.resize_tensor(out, x.shape)


def _cast_node(ctx, node) -> None:
    out = ctx.output(node, 0)
    out.data = cast(ctx.input(node, 0).data, out.dtype)


def register(resolver) -> None:
    # CAST has no fast path: the node form of `cast` is both the invoke and the reference.
    # CAST: v2 uint32, v3 int8, v4 uint16, v5 float16/float64; v6+ (int4, bfloat16, int2/uint4,
    # float8) are not implemented.
    resolver.add_builtin("CAST", Registration(prepare=_cast_prepare, invoke=_cast_node, reference=_cast_node,
                                              work=work.elementwise), 1, 5)
