"""Energy: per MAC by dtype and static power of a compute unit, per byte and static power of memory levels.

A config may give (optional; every shipped number cites its source):

    energy: {mac: {int8: 0.23 pJ, float32: 4.6 pJ}, static_power: 50 mW}   # the compute unit
    memory.levels.NAME: {..., energy: 20 pJ/B, static_power: 5 mW}          # each level
    link: {..., energy: 100 pJ/B}                                            # bytes over the link

A node's energy is its dynamic energy (MACs x energy per MAC of its dtype, plus bytes x energy
per byte on every level it touches) plus the device's static power (compute unit and levels)
over the node's time. A dtype without an entry is charged the dearest listed MAC (an upper bound
rather than a silent zero). A device without `energy.mac` has no energy model: a run that uses
it reports its energy as "not modelled" (`energy_unmodelled`), never 0. The other terms, when
left out, are 0 and listed under "Assumptions" (`accelsim.hardware.assumptions`). Transfers pay the
link's energy per byte, and every device also burns its static power while idle during an
inference (`accelsim.simulation.costing`), so per-node, per-partition and per-run energies add up.
"""

from __future__ import annotations

from collections.abc import Mapping

from accelsim.hardware.memory import Level
from accelsim.hardware.types import Hardware
from accelsim.runtime.work import NodeWork


def energy_unmodelled(system) -> tuple[str, ...]:
    """Names of the devices of `system` (an accelsim.hardware.config.System) without an energy model (no energy.mac)."""
    return tuple(d.name for d in (system.host, *system.accelerators) if not d.hardware.energy.mac)


def static_power(hw: Hardware) -> float:
    """Watts a device burns whether busy or idle: its compute unit plus every memory level."""
    return hw.energy.static_power + sum(level.static_power for level in hw.memory.levels)


def dynamic_energy(work: NodeWork, level_bytes: tuple[tuple[str, int], ...], hw: Hardware,
                   levels: Mapping[str, Level]) -> float:
    """Joules of a node's MACs and of the bytes it moves on each level (the link included)."""
    moved = sum(nbytes * levels[name].energy for name, nbytes in level_bytes)
    return work.macs * hw.energy.per_mac(work.dtype) + moved
