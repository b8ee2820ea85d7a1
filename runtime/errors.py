"""Error classes of the reference interpreter.

Each subclasses a built-in exception so callers that catch ``ValueError`` or
``RuntimeError`` (as LiteRT's Python API raises) keep working.
"""


class AccelsimError(Exception):
    """Base class of every error this project raises on purpose."""


class ModelError(AccelsimError, ValueError):
    """A model file or IR is malformed: says what is wrong and where."""


class OpResolutionError(AccelsimError, ValueError):
    """An operator (builtin code and version, or custom name) has no kernel."""


class KernelError(AccelsimError, RuntimeError):
    """A kernel's prepare or invoke failed; names the node and the op."""


class InterpreterStateError(AccelsimError, RuntimeError):
    """The interpreter was used out of order (e.g. invoke before allocate_tensors)."""


class DelegateError(AccelsimError, RuntimeError):
    """A delegate misbehaved while claiming, preparing or running nodes."""


class WorkError(AccelsimError, ValueError):
    """A node's work cannot be reported: no work hook, or a loop whose trip count nobody set."""
