"""accelsim's NumPy reference interpreter for TensorFlow Lite models (usable on its own)."""

from accelsim.runtime.errors import InterpreterStateError, KernelError, ModelError, OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.runtime.resolver import BuiltinOpResolver, MutableOpResolver, Registration, resolver_for_model
from accelsim.runtime.write import save_model

__all__ = [
    "BuiltinOpResolver",
    "Interpreter",
    "InterpreterStateError",
    "KernelError",
    "Model",
    "ModelError",
    "MutableOpResolver",
    "OpResolutionError",
    "Registration",
    "load_model",
    "resolver_for_model",
    "save_model",
]
