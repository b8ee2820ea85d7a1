"""accelsim's NumPy reference interpreter for TensorFlow Lite models (usable on its own)."""

from runtime.errors import InterpreterStateError, KernelError, ModelError, OpResolutionError
from runtime.interpreter import Interpreter
from runtime.ir import Model
from runtime.read import load_model
from runtime.resolver import BuiltinOpResolver, MutableOpResolver, Registration, resolver_for_model
from runtime.write import save_model

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
