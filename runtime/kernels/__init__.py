"""Builtin kernels, one module per op family; each module's `register` adds its ops explicitly."""

from __future__ import annotations

from runtime.kernels import (
    activations,
    control_flow,
    conv,
    conv3d,
    elementwise,
    fully_connected,
    gather,
    logical,
    lstm,
    math,
    matmul,
    normalization,
    pooling,
    quantize,
    reduce,
    resize,
    shape,
    slicing,
    sparse,
    tensor,
    transpose_conv,
    variables,
)

_FAMILIES = (shape, pooling, reduce, conv, fully_connected, quantize, slicing, activations, resize, elementwise,
             math, logical, control_flow, variables, lstm, tensor, gather,
             matmul, transpose_conv, normalization, sparse, conv3d)


def register_builtins(resolver) -> None:
    """Add every builtin kernel, each with the exact version range it implements."""
    for family in _FAMILIES:
        family.register(resolver)
