"""The public resolver API: Registration, MutableOpResolver, BuiltinOpResolver and selective registration.

`Registration` and `MutableOpResolver` live in `accelsim.runtime.registration` (below the kernels, which
register into them); `BuiltinOpResolver` lives next to the kernels in `accelsim.runtime.kernels`.

`extra_custom_ops` scopes a set of custom kernels to a block of code: inside it, every interpreter
built without an explicit `op_resolver` (`default_resolver`) holds them too. That is how a
command-line `--ops` module or an experiment's `ops:` reaches the interpreters that the costing
stack builds several layers down, without a resolver argument on each function between them. The
scope is a `contextvars.ContextVar`, as `decimal.localcontext` scopes precision: it ends with the
block, so one caller's kernels never leak into another's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from accelsim.runtime.ir import Model
from accelsim.runtime.kernels import BuiltinOpResolver
from accelsim.runtime.registration import MutableOpResolver, Registration

__all__ = ["BuiltinOpResolver", "MutableOpResolver", "Registration", "default_resolver", "extra_custom_ops",
           "resolver_for_model"]

_EXTRA: ContextVar[MutableOpResolver | None] = ContextVar("accelsim_extra_custom_ops", default=None)


@contextmanager
def extra_custom_ops(resolver: MutableOpResolver) -> Iterator[None]:
    """Within the block, `default_resolver()` also holds `resolver`'s kernels (on top of any outer block's)."""
    merged = MutableOpResolver()
    outer = _EXTRA.get()
    if outer is not None:
        merged.add_all(outer)
    merged.add_all(resolver)
    token = _EXTRA.set(merged)
    try:
        yield
    finally:
        _EXTRA.reset(token)


def default_resolver() -> MutableOpResolver:
    """A fresh BuiltinOpResolver plus the custom kernels of the enclosing `extra_custom_ops` blocks."""
    resolver = BuiltinOpResolver()
    extra = _EXTRA.get()
    if extra is not None:
        resolver.add_all(extra)
    return resolver


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
