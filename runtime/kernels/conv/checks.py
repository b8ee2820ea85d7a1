"""Type and shape checks the conv-family kernels share (conv.cc, depthwise_conv.cc, fully_connected.cc Prepare)."""

from __future__ import annotations

import numpy as np

from accelsim.runtime.kernels.common import check


def check_quantized_types(op: str, input_t, filter_t, bias_t, output_t) -> None:
    """Same quantized type in and out, weights of that type, int32 bias with zero point 0."""
    check(output_t.type == input_t.type, f"{op}: output type {output_t.type} differs from input type {input_t.type}")
    check(filter_t.type == input_t.type,
          f"{op}: {input_t.type} input needs {input_t.type} weights, got {filter_t.type}")
    check(input_t.scales.size == 1 and output_t.scales.size == 1,
          f"{op}: quantized input and output need one scale each")
    check(filter_t.scales.size >= 1, f"{op}: quantized weights have no scale")
    if bias_t is not None:
        check(bias_t.type == "INT32", f"{op}: quantized bias must be INT32, got {bias_t.type}")
        check(not bias_t.zero_points.any(), f"{op}: bias zero point must be 0")


def check_float_types(op: str, input_t, filter_t, output_t, hybrid_versions: str) -> None:
    """Float input, weights and output; float input with quantized weights is the unimplemented hybrid path."""
    check(input_t.type == "FLOAT32", f"{op}: input type {input_t.type} is not supported (FLOAT32, INT8, UINT8)")
    check(filter_t.type == "FLOAT32",
          f"{op}: {filter_t.type} weights with FLOAT32 input (hybrid, versions {hybrid_versions}) are not supported")
    check(output_t.type == "FLOAT32", f"{op}: output type {output_t.type} differs from input type FLOAT32")


def check_bias(op: str, bias_t, channels: int, float_type: str | None) -> None:
    """One bias value per output channel; a float op's bias has the input's type."""
    if bias_t is None:
        return
    count = int(np.prod(bias_t.shape, dtype=np.int64))
    check(count == channels, f"{op}: bias has {count} elements, expected {channels} (one per output channel)")
    if float_type is not None:
        check(bias_t.type == float_type, f"{op}: bias type {bias_t.type} differs from input type {float_type}")


def filter_zero_point(op: str, filter_t) -> int:
    """The weights' zero point: any value for uint8, 0 for int8 (TFLite requires symmetric int8 weights)."""
    zps = filter_t.zero_points
    if filter_t.type == "INT8":
        check(not zps.any(), f"{op}: int8 weights must be symmetric (zero point 0), got {zps.tolist()}")
        return 0
    return int(zps[0]) if zps.size else 0


def check_types(op: str, quantized: bool, input_t, filter_t, bias_t, output_t, channels: int,
                float_versions: str) -> None:
    """Every type check of a convolution's prepare, done before (and without) its numeric preparation.

    Args:
        float_versions: the op versions that take float32, for the error message.
    """
    if quantized:
        check_quantized_types(op, input_t, filter_t, bias_t, output_t)
        check_bias(op, bias_t, channels, None)
        filter_zero_point(op, filter_t)
    else:
        check_float_types(op, input_t, filter_t, output_t, float_versions)
        check_bias(op, bias_t, channels, "FLOAT32")
