"""Registrations and op resolvers: which kernel runs an (op, version) pair.

Mirrors TFLite's MutableOpResolver: a registration is stored once per version
in [min_version, max_version]; lookups match the pair exactly, so a model whose
operator carries a version the resolver does not hold is caught before
anything runs (forward-incompatibility detection).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accelsim.runtime.errors import OpResolutionError
from accelsim.runtime.ir import BUILTIN_OP_NAMES, BUILTIN_OPS


@dataclass(frozen=True)
class Registration:
    """A kernel's hooks, as TfLiteRegistration has them; every hook is optional but invoke.

    Args:
        invoke: ``invoke(context, node)`` computes the node's outputs.
        prepare: ``prepare(context, node)`` checks inputs and sets output shapes;
            runs at ``allocate_tensors`` and again after every resize.
        init: ``init(context, buffer) -> user_data`` runs once per node; ``buffer``
            is the raw custom options for custom ops, the parsed options for builtins.
        free: ``free(context, user_data)`` runs once for every ``init``.
        reference: ``reference(context, node)`` computes the outputs with the op's plain reference
            function (the specification the fast `invoke` implements), after the same prepare;
            `Interpreter(reference=True)` runs these.
        work: ``work(context, node) -> runtime.work.NodeWork`` reports the prepared node's work
            from shapes, options and constant sizes (never tensor values); a node whose
            registration has none cannot be costed (`accelsim.runtime.work.node_work` raises).
    """

    invoke: Callable[[Any, Any], None]
    prepare: Callable[[Any, Any], None] | None = None
    init: Callable[[Any, Any], Any] | None = None
    free: Callable[[Any, Any], None] | None = None
    builtin_code: int | None = None
    custom_name: str | None = None
    version: int = 1
    work: Callable[[Any, Any], Any] | None = None
    reference: Callable[[Any, Any], None] | None = None

    @property
    def op_name(self) -> str:
        if self.custom_name is not None:
            return self.custom_name
        if self.builtin_code is not None:
            return BUILTIN_OP_NAMES.get(self.builtin_code, str(self.builtin_code))
        return "<unregistered>"


def builtin_code(op: int | str) -> int:
    """The BuiltinOperator code of an op given by name ('CONV_2D') or code."""
    if isinstance(op, str):
        try:
            return BUILTIN_OPS[op]
        except KeyError:
            raise OpResolutionError(f"unknown builtin op {op!r}") from None
    code = int(op)
    if code not in BUILTIN_OP_NAMES:
        raise OpResolutionError(f"unknown builtin op code {code}")
    return code


def _check_range(what: str, min_version: int, max_version: int) -> None:
    if min_version < 1 or max_version < min_version:
        raise ValueError(f"{what}: invalid version range [{min_version}, {max_version}]")


class MutableOpResolver:
    """A resolver that kernels are added to; later additions override earlier ones."""

    def __init__(self) -> None:
        self._builtins: dict[tuple[int, int], Registration] = {}
        self._customs: dict[tuple[str, int], Registration] = {}

    def add_builtin(self, op: int | str, registration: Registration, min_version: int = 1,
                    max_version: int = 1) -> None:
        """Register `registration` for builtin `op` at every version in [min_version, max_version]."""
        code = builtin_code(op)
        _check_range(BUILTIN_OP_NAMES[code], min_version, max_version)
        for v in range(min_version, max_version + 1):
            self._builtins[(code, v)] = dataclasses.replace(
                registration, builtin_code=code, custom_name=None, version=v
            )

    def add_custom(self, name: str, registration: Registration, min_version: int = 1,
                   max_version: int = 1) -> None:
        """Register a custom op under `name` at every version in [min_version, max_version]."""
        if not name:
            raise ValueError("a custom op needs a non-empty name")
        _check_range(name, min_version, max_version)
        for v in range(min_version, max_version + 1):
            self._customs[(name, v)] = dataclasses.replace(
                registration, builtin_code=BUILTIN_OPS["CUSTOM"], custom_name=name, version=v
            )

    def add_all(self, other: MutableOpResolver) -> None:
        """Copy every registration of `other` into this resolver (overriding on conflict)."""
        self._builtins.update(other._builtins)
        self._customs.update(other._customs)

    def find_op(self, op: int | str, version: int) -> Registration | None:
        return self._builtins.get((builtin_code(op), int(version)))

    def find_custom(self, name: str, version: int) -> Registration | None:
        return self._customs.get((name, int(version)))

    def builtin_versions(self, op: int | str) -> list[int]:
        code = builtin_code(op)
        return sorted(v for c, v in self._builtins if c == code)

    def custom_versions(self, name: str) -> list[int]:
        return sorted(v for n, v in self._customs if n == name)

    def reference_ops(self) -> list[str]:
        """The builtin ops (by name) whose every registered version has a reference function."""
        ops: dict[str, bool] = {}
        for (code, _), reg in self._builtins.items():
            name = BUILTIN_OP_NAMES[code]
            ops[name] = ops.get(name, True) and reg.reference is not None
        return sorted(name for name, has in ops.items() if has)

    def custom_names(self) -> list[str]:
        return sorted({n for n, _ in self._customs})

    def registrations(self) -> list[tuple[str, bool, int, int]]:
        """(op or custom name, is_custom, min_version, max_version) for each contiguous range held."""
        rows: list[tuple[str, bool, int, int]] = []
        by_op: dict[tuple[str, bool], list[int]] = {}
        for code, v in self._builtins:
            by_op.setdefault((BUILTIN_OP_NAMES[code], False), []).append(v)
        for name, v in self._customs:
            by_op.setdefault((name, True), []).append(v)
        for (name, custom), versions in sorted(by_op.items()):
            versions.sort()
            start = prev = versions[0]
            for v in versions[1:] + [None]:
                if v is not None and v == prev + 1:
                    prev = v
                    continue
                rows.append((name, custom, start, prev))
                if v is not None:
                    start = prev = v
        return rows

    def resolve_builtin(self, op: str, version: int) -> Registration:
        """find_op, raising TFLite's error when the pair is missing."""
        reg = self.find_op(op, version)
        if reg is None:
            raise OpResolutionError(
                f"Didn't find op for builtin opcode '{op}' version '{version}'. An older version of "
                "this builtin might be supported. Are you using an old TFLite binary with a newer model?"
            )
        return reg
