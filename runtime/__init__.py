"""accelsim's NumPy reference interpreter for TensorFlow Lite models (usable on its own).

A name is imported from its module when first used (PEP 562), as accelsim's own names are: importing
a lower module such as accelsim.runtime.errors runs this file, and must not load the interpreter,
its kernels and the flatc schema modules with it (start-up of `accelsim --help`, issue 36).
"""

from __future__ import annotations

import importlib

# Every public name and the module that defines it.
_NAMES = {
    "BuiltinOpResolver": "accelsim.runtime.resolver",
    "Interpreter": "accelsim.runtime.interpreter",
    "InterpreterStateError": "accelsim.runtime.errors",
    "KernelError": "accelsim.runtime.errors",
    "Model": "accelsim.runtime.ir",
    "ModelError": "accelsim.runtime.errors",
    "MutableOpResolver": "accelsim.runtime.resolver",
    "OpResolutionError": "accelsim.runtime.errors",
    "Registration": "accelsim.runtime.resolver",
    "load_model": "accelsim.runtime.read",
    "resolver_for_model": "accelsim.runtime.resolver",
    "save_model": "accelsim.runtime.write",
}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    """The public name `name`, imported from its module on first use."""
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'accelsim.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
