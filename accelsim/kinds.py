"""Hardware kinds: one record per kind, with its compute fields, role and cost function.

A kind lives in one module (the built-in ones in `accelsim/cost/`): a frozen dataclass of its
`compute:` fields, each declared with `spec(type, meaning, ...)` so that the YAML checks, the
key table (`schema_rows`) and the field itself come from one place; a
`costs(works, hw) -> list[Cost]` function, where `hw` is the device's `accelsim.device.Hardware`
(its hardware facts alone: a cost model never sees claims, partitioning or numerics); and a `Kind`
record named ``KIND`` that ties them together. `accelsim.config` checks files and `accelsim.costing`
costs nodes through the record alone, so adding a kind is one module plus a YAML file that names it:

- built in: one more entry in `BUILTIN`;
- in another package: an entry point in the group ``accelsim.kinds`` whose value is
  ``package.module:KIND`` (imported only when a file names that kind);
- in a script or a test: ``default_registry.with_kinds(my_kind)`` passed as ``kinds=`` to
  `accelsim.config.load_hardware` / `load_system`.

Memory levels, energy and the link are described the same way for every kind
(`accelsim.memory`, `accelsim.energy`). Registries are immutable: `with_kinds` returns a new one.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelsim.cost import Cost
    from accelsim.delegates.spec import DelegationPolicy
    from accelsim.device import Hardware
    from accelsim.runtime.work import NodeWork

ENTRY_POINT_GROUP = "accelsim.kinds"
ROLES = ("host", "accelerator")
# Value types a compute field may have; accelsim.config has one checker for each.
FIELD_TYPES = ("count", "fraction", "number", "choice", "dtype_rates")

BUILTIN = {
    "systolic": "accelsim.cost.systolic:KIND",
    "vector": "accelsim.cost.vector:KIND",
    "cpu": "accelsim.cost.cpu:KIND",
    "npu": "accelsim.cost.npu:KIND",
    "gpu": "accelsim.cost.gpu:KIND",
    "tensor": "accelsim.cost.tensor:KIND",
}


@dataclass(frozen=True)
class Field:
    """How one `compute:` key is written and checked.

    Args:
        type: one of FIELD_TYPES: count (a whole number >= minimum, a multiple of
            multiple_of), fraction (a number in (0, 1]), number (a number above 0), choice (one of `choices`) or
            dtype_rates (a mapping lower-case dtype -> number above 0).
        meaning: one line for the key table.
        example: the number an error message shows for a count.
        name, default: filled in from the dataclass field (`Kind.fields`); `required` is
            True when the dataclass gives no default.
    """

    type: str
    meaning: str
    minimum: int = 1
    multiple_of: int = 1
    example: int = 64
    choices: tuple[str, ...] = ()
    name: str = ""
    default: Any = None
    required: bool = True

    def __post_init__(self) -> None:
        if self.type not in FIELD_TYPES:
            raise ValueError(f"field type must be one of {', '.join(FIELD_TYPES)}, got {self.type!r}")
        if self.type == "choice" and not self.choices:
            raise ValueError("a choice field needs its choices")

    def value_text(self) -> str:
        """What the key accepts, as the key table says it ('whole number >= 1', 'os, ws or is')."""
        if self.type == "count":
            text = f"whole number >= {self.minimum}"
            if self.multiple_of > 1:
                text += f", multiple of {self.multiple_of}"
        elif self.type == "fraction":
            text = "number in (0, 1]"
        elif self.type == "number":
            text = "number above 0"
        elif self.type == "choice":
            text = or_list(self.choices)
        else:
            text = "mapping dtype -> number above 0"
        return text if self.required else f"{text} (default {self.default!r})"


def spec(type: str, meaning: str, default: Any = dataclasses.MISSING, **checks: Any) -> Any:
    """A dataclass field of a kind's compute record, carrying its `Field` (type, meaning, checks).

    Used as ``rows: int = spec("count", "rows of MAC cells")``.
    """
    return dataclasses.field(default=default, metadata={"accelsim": Field(type, meaning, **checks)})


def no_notes(hw: Hardware) -> list[str]:
    """The default `Kind.notes`: a kind without silent rules has nothing to say."""
    return []


def no_problems(part: Hardware | DelegationPolicy) -> list[tuple[tuple, str]]:
    """The default `Kind.check` and `Kind.check_policy`: a kind whose keys are checked one by one has no rules
    across them."""
    return []


@dataclass(frozen=True)
class Kind:
    """One hardware kind.

    Args:
        name: what a YAML file writes as `kind:`.
        role: host (runs what no accelerator takes; `link` and `claims` optional) or
            accelerator (`link` and `claims` required).
        summary: one line for listings.
        compute: frozen dataclass of the `compute:` block; every field made with `spec`.
        costs: the cost of a device's nodes, in model order (one Cost per NodeWork), from its hardware.
        macs_per_cycle: how the compute fields give peak MACs per cycle, one line for the
            reference (a user who knows "128 MACs per cycle" reads here which fields to set).
        notes: what a config leaves to a silent rule (e.g. a dtype without its own rate),
            one line each; `accelsim validate` prints them.
        peak_macs_per_cycle: the most MACs per cycle the unit running a node can do (for its
            utilisation in per-layer reports); None leaves utilisation unknown.
        check: rules across the hardware keys of a config otherwise valid (e.g. threads within
            cores): (key path, what is wrong) each, reported at the key's file:line as a ConfigError.
        check_policy: the same for its delegation policy (e.g. claims within what the delegate
            takes).
    """

    name: str
    role: str
    summary: str
    compute: type
    costs: Callable[[Sequence[NodeWork], Hardware], list[Cost]]
    macs_per_cycle: str = ""
    notes: Callable[[Hardware], list[str]] = no_notes
    peak_macs_per_cycle: Callable[[NodeWork, Hardware], float] | None = None
    check: Callable[[Hardware], list[tuple[tuple, str]]] = no_problems
    check_policy: Callable[[DelegationPolicy], list[tuple[tuple, str]]] = no_problems

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"kind {self.name!r}: role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if not dataclasses.is_dataclass(self.compute):
            raise TypeError(f"kind {self.name!r}: compute must be a dataclass, got {self.compute!r}")
        bare = [f.name for f in dataclasses.fields(self.compute) if "accelsim" not in f.metadata]
        if bare:
            raise TypeError(f"kind {self.name!r}: compute fields {bare} are not declared with accelsim.kinds.spec")

    @property
    def is_accelerator(self) -> bool:
        return self.role == "accelerator"

    @property
    def fields(self) -> tuple[Field, ...]:
        """The compute fields in declaration order, with their names and defaults."""
        return tuple(dataclasses.replace(f.metadata["accelsim"], name=f.name,
                                         default=None if f.default is dataclasses.MISSING else f.default,
                                         required=f.default is dataclasses.MISSING)
                     for f in dataclasses.fields(self.compute))


class KindRegistry:
    """Kinds by name: given ones (Kind records or 'module:attribute' targets), then entry points."""

    def __init__(self, kinds: Mapping[str, Kind | str], group: str | None = ENTRY_POINT_GROUP):
        self._kinds = dict(kinds)
        self._group = group
        self._plugins: tuple[tuple[str, ...], dict[str, str]] | None = None

    def _entry_points(self) -> dict[str, str]:
        """The installed plugins' kinds. Reading package metadata takes ~2 ms and every config check
        (each design point's overrides) asks, so it is read again only when sys.path, where the
        metadata is found, has changed; a package installed into an unchanged path is seen by a new process."""
        if self._group is None:
            return {}
        where = tuple(sys.path)
        if self._plugins is None or self._plugins[0] != where:
            self._plugins = (where, {ep.name: ep.value for ep in importlib.metadata.entry_points(group=self._group)})
        return self._plugins[1]

    def names(self) -> tuple[str, ...]:
        """Every kind name, given ones first, without importing any module."""
        return tuple(dict.fromkeys([*self._kinds, *self._entry_points()]))

    def get(self, name: str) -> Kind | None:
        """The kind called `name` (its module is imported here), or None.

        Raises:
            TypeError: the target is not a Kind of that name (a broken plugin).
        """
        target = self._kinds.get(name) or self._entry_points().get(name)
        if target is None or isinstance(target, Kind):
            return target
        module, _, attribute = target.partition(":")
        kind = getattr(importlib.import_module(module), attribute)
        if not isinstance(kind, Kind) or kind.name != name:
            raise TypeError(f"{target} is {kind!r}, not the Kind named {name!r}")
        return kind

    def kinds(self) -> tuple[Kind, ...]:
        """Every kind, imported."""
        return tuple(self.get(n) for n in self.names())

    def with_kinds(self, *kinds: Kind) -> KindRegistry:
        """A registry with `kinds` added (a kind of the same name is replaced)."""
        if all(self._kinds.get(k.name) is k for k in kinds):
            return self  # each design point's overrides ask for the kind its config already has
        registry = KindRegistry({**self._kinds, **{k.name: k for k in kinds}}, self._group)
        registry._plugins = self._plugins  # the same installed plugins
        return registry

    def names_with_role(self, role: str) -> tuple[str, ...]:
        return tuple(k.name for k in self.kinds() if k.role == role)


default_registry = KindRegistry(BUILTIN)


def or_list(words: Sequence[str]) -> str:
    """['a', 'b', 'c'] -> 'a, b or c'."""
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def schema_rows(registry: KindRegistry = default_registry) -> list[tuple[str, str, str]]:
    """(key, kinds, value and meaning) for every compute key of every kind, for the key table.

    A key that several kinds share with the same meaning is one row naming them all.
    """
    rows: dict[tuple[str, str], list[str]] = {}
    for kind in registry.kinds():
        for f in kind.fields:
            text = f"{f.value_text()}: {f.meaning}"
            rows.setdefault((f"compute.{f.name}", text), []).append(kind.name)
    return [(key, ", ".join(names), text) for (key, text), names in rows.items()]
