"""Builtin kernels, one module per op family; each module's `register` adds its ops explicitly."""

from __future__ import annotations

from runtime.kernels import activations, elementwise, pooling, quantize, reduce, resize, shape, slicing

_FAMILIES = (shape, pooling, reduce, slicing, resize, activations, elementwise, quantize)


def register_builtins(resolver) -> None:
    """Add every builtin kernel, each with the exact version range it implements."""
    for family in _FAMILIES:
        family.register(resolver)
