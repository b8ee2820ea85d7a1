"""Assumptions: every cost number a config leaves out, the value used instead and where that value is documented.

No cost parameter silently means zero. A key a config does not give takes the default that
`accelsim configs --schema` documents (the `default` column of `accelsim.hardware.config.KEYS`); this
module lists each one used, per device, so `benchmark`, `validate` and reports can show them
under "Assumptions". Energy is the exception: a device without `energy.mac` has no energy model
and its energy is "not modelled" (`accelsim.hardware.energy`), so its per-byte and static-power terms are
not listed as zeros either. A kind's own silent rules (its `notes`) are listed too.

The config's YAML after overrides (`Device.document`) tells given from left out; a config
built in memory, without a document, has nothing to list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.hardware.config import KEYS
from accelsim.hardware.device import Device

SOURCE = "the schema's default: accelsim configs --schema"


@dataclass(frozen=True, kw_only=True)
class Assumption:
    """One default a device's costs use: the key left out, the value taken and why that value."""

    device: str
    key: str
    value: str
    source: str

    def line(self) -> str:
        return f"{self.device}: {self.key} = {self.value} (not given; {self.source})"


_DEFAULTS = {k.path: k.default for k in KEYS}
# Cost terms: (key path under the section, whether it is an energy term, shown only with an energy model).
_LEVEL_KEYS = (("size", False), ("latency", False), ("energy", True), ("static_power", True))
_LINK_KEYS = (("latency", False), ("call_overhead", False), ("energy", True))


def _given(data: Any, *path: str) -> bool:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True


def assumptions(config: Device, given: Iterable[str] = (), *, with_notes: bool = True) -> list[Assumption]:
    """The defaults `config`'s costs use, in key order; `given` names key paths set elsewhere (a sweep sets them).

    With `with_notes`, the kind's silent rules (`Hardware.notes`' part) end the list.
    """
    if config.document is None:
        return []
    data, given, hw = config.document.data, set(given), config.hardware
    modelled = bool(hw.energy.mac)
    out: list[Assumption] = []

    def check(path: tuple[str, ...], default_key: str, energy_term: bool) -> None:
        key = ".".join(path)
        if (energy_term and not modelled) or key in given or _given(data, *path):
            return
        out.append(Assumption(device=config.name, key=key, value=_DEFAULTS[default_key], source=SOURCE))

    if modelled:
        check(("energy", "static_power"), "energy.static_power", True)
    for level in hw.memory.levels:
        for name, energy_term in _LEVEL_KEYS:
            check(("memory", "levels", level.name, name), f"memory.levels.NAME.{name}", energy_term)
    if hw.link is not None:
        for name, energy_term in _LINK_KEYS:
            check(("link", name), f"link.{name}", energy_term)
    if with_notes:
        out += [Assumption(device=config.name, key=f"compute ({hw.kind})", value="see note", source=note)
                for note in hw.kind_record.notes(hw)]
    return out


def not_modelled(configs: Sequence[Device]) -> list[str]:
    """One line per device without an energy model."""
    return [f"{c.name}: energy not modelled (no energy.mac): its energy, and any total including it, is left "
            "empty, never 0" for c in configs if not c.hardware.energy.mac]


def assumption_lines(configs: Sequence[Device], given: Iterable[str] = ()) -> list[str]:
    """Every device's assumptions and energy not modelled, one line each (`given`: '<device>.<key path>' set by sweeps).

    Devices of the same name are listed once (the first).
    """
    given = set(given)
    seen: dict[str, Device] = {}
    for c in configs:
        seen.setdefault(c.name, c)
    lines = [a.line() for c in seen.values()
             for a in assumptions(c, {g.split(".", 1)[1] for g in given if g.split(".", 1)[0] == c.name})]
    return lines + not_modelled(list(seen.values()))
