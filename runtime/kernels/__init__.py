"""Builtin kernels, one module per op family; each module's `register` adds its ops explicitly."""

from __future__ import annotations

from runtime.kernels import (
    activations,
    conv,
    elementwise,
    fully_connected,
    gather,
    logical,
    math,
    pooling,
    quantize,
    reduce,
    resize,
    shape,
    slicing,
    tensor,
)

_FAMILIES = (shape, pooling, reduce, conv, fully_connected, quantize, slicing, activations, resize, elementwise,
             math, logical, tensor, gather)


def register_builtins(resolver) -> None:
    """Add every builtin kernel, each with the exact version range it implements."""
    for family in _FAMILIES:
        family.register(resolver)
