"""Hardware kinds: one record per kind, with its compute fields, role and cost function.

A kind lives in one module (the built-in ones in `accelsim/hardware/cost/`): a frozen dataclass of its
`compute:` fields, each declared with `spec(type, meaning, ...)` so that the YAML checks, the
key table (`schema_rows`) and the field itself come from one place; a
`costs(works, hw) -> list[Cost]` function, where `hw` is the device's `accelsim.hardware.types.Hardware`
(its hardware facts alone: a cost model never sees claims, partitioning or numerics); and a `Kind`
record named ``KIND`` that ties them together. `accelsim.hardware.config` checks files and `accelsim.simulation.costing`
costs nodes through the record alone, so adding a kind is one module plus a YAML file that names it:

- built in: one more entry in `BUILTIN`;
- in another package: an entry point in the group ``accelsim.kinds`` whose value is
  ``package.module:KIND`` (imported only when a file names that kind);
- in a script or a test: ``default_registry.with_kinds(my_kind)`` passed as ``kinds=`` to
  `accelsim.hardware.config.load_hardware` / `load_system`.

Memory levels, energy and the link are described the same way for every kind
(`accelsim.hardware.memory`, `accelsim.hardware.energy`). Registries are immutable: `with_kinds` returns a new one.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from collections.abc import Mapping

from accelsim.hardware.types import Kind

ENTRY_POINT_GROUP = "accelsim.kinds"  # the plugin group users declare (unchanged by the layout)

BUILTIN = {
    "systolic": "accelsim.hardware.cost.systolic:KIND",
    "vector": "accelsim.hardware.cost.vector:KIND",
    "cpu": "accelsim.hardware.cost.cpu:KIND",
    "npu": "accelsim.hardware.cost.npu:KIND",
    "gpu": "accelsim.hardware.cost.gpu:KIND",
    "tensor": "accelsim.hardware.cost.tensor:KIND",
    "mcu": "accelsim.hardware.cost.mcu:KIND",
}


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
