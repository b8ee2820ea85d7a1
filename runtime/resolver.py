"""The public resolver API: Registration, MutableOpResolver, BuiltinOpResolver and selective registration.

`Registration` and `MutableOpResolver` live in `accelsim.runtime.registration` (below the kernels, which
register into them); `BuiltinOpResolver` lives next to the kernels in `accelsim.runtime.kernels`.
"""

from __future__ import annotations

from collections.abc import Iterable

from accelsim.runtime.ir import Model
from accelsim.runtime.kernels import BuiltinOpResolver
from accelsim.runtime.registration import MutableOpResolver, Registration

__all__ = ["BuiltinOpResolver", "MutableOpResolver", "Registration", "resolver_for_model"]


def resolver_for_model(model: Model, base: MutableOpResolver | None = None) -> MutableOpResolver:
    """A resolver holding only the (op, version) pairs `model` uses (selective registration).

    Builtins are taken from `base` (default: BuiltinOpResolver); custom ops must be
    in `base` too, otherwise they are left out and reported when the model is prepared.
    """
    base = base if base is not None else BuiltinOpResolver()
    out = MutableOpResolver()
    for op in _model_ops(model):
        if op.op == "CUSTOM":
            reg = base.find_custom(op.custom_code or "", op.version)
            if reg is not None:
                out.add_custom(op.custom_code, reg, op.version, op.version)
        else:
            out.add_builtin(op.op, base.resolve_builtin(op.op, op.version), op.version, op.version)
    return out


def _model_ops(model: Model) -> Iterable:
    for sg in model.subgraphs:
        yield from sg.operators
