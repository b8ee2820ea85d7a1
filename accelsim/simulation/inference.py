"""What one simulated inference produced: per-node timings, delegate partitions, loop counts, the
placement choice, and the `Simulation` that holds them (with its derived energy and byte totals)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelsim.core.schedule import SimResult
from accelsim.hardware.types import Cost

HOST = "host"


@dataclass(frozen=True, kw_only=True)
class NodeTiming:
    """One original node: where it runs and what it costs there."""

    index: int
    op: str
    unit: str  # "host" or an accelerator name
    partition: int | None  # delegate partition ordinal (None on the host)
    seconds: float
    macs: int
    cost: Cost
    utilization: float | None = None  # MACs / (cycles x the unit's peak MACs per cycle); None if unknown
    note: str = ""  # what the unit's kind says of the kernel that ran it (a fallback kernel); '' for nothing


@dataclass(frozen=True, kw_only=True)
class LoopCount:
    """A control-flow node's trip count as costed: `where` is "<subgraph>:<node>", `source` how it was known."""

    where: str
    op: str
    trips: int
    source: str  # runtime.work.TRIPS_FROM


@dataclass(frozen=True, kw_only=True)
class PartitionSummary:
    """One delegate partition: its nodes and where its time went (seconds) in the simulated run."""

    index: int
    unit: str
    delegate_node: int
    nodes: tuple[int, ...]
    ops: tuple[str, ...]
    input_bytes: int
    output_bytes: int
    streamed_param_bytes: int
    compute: float
    transfer: float
    overhead: float
    memory: float  # node time waiting on memory levels beyond compute
    cost: Cost  # its nodes' costs summed: bytes per level, time per bound, energy
    transfer_energy: float  # joules of its input and output copies over the link

    @property
    def energy(self) -> float:
        """Joules of the partition: its nodes (dynamic and static while busy) and its transfers."""
        return self.cost.energy + self.transfer_energy


@dataclass(frozen=True, kw_only=True)
class PartitionChoice:
    """What partition policy 'cost' decided, next to TFLite's choice (every claimed partition delegated).

    Partitions are (accelerator, partition ordinal) in TFLite's delegation; `host` lists those
    kept on the host. The cost-aware figures are the `Simulation`'s own.
    """

    objective: str
    # "exact" (every subset) or "greedy" (drop the best partition while it helps); with `assign: cost`,
    # "assign exact" or "assign greedy" (how the shared runs were handed out) and `host` lists TFLite's
    # partitions none of whose nodes the chosen assignment delegates
    search: str
    tflite: tuple[tuple[str, int], ...]
    host: tuple[tuple[str, int], ...]
    tflite_latency: float
    tflite_energy: float


@dataclass(frozen=True, kw_only=True)
class Simulation:
    """Everything one simulated inference produced."""

    model: str
    host: str
    accelerators: tuple[str, ...]
    schedule: str
    result: SimResult
    init: SimResult
    nodes: tuple[NodeTiming, ...]
    partitions: tuple[PartitionSummary, ...]
    delegation: tuple[Mapping[str, Any], ...]
    idle_energy: tuple[tuple[str, float], ...] = ()  # (unit, joules of static power while not running nodes)
    init_energy: float = 0.0  # joules of the parameter loads at initialization
    loops: tuple[LoopCount, ...] = ()
    choice: PartitionChoice | None = None  # set when an accelerator's partition policy is 'cost'
    # devices whose energy is not modelled (no energy.mac): the run's energy is "not modelled", never a quiet 0
    energy_unmodelled: tuple[str, ...] = ()
    # warnings a reader must see beside the numbers: weights that spill below their level, custom ops the host
    # has no cost for (accelsim.simulation.costing)
    notes: tuple[str, ...] = ()

    @property
    def latency(self) -> float:
        return self.result.latency

    def energy_by_unit(self) -> dict[str, float]:
        """Joules of one inference per device (host and accelerator names): nodes, transfers, idle static."""
        out = dict.fromkeys((self.host, *self.accelerators), 0.0)
        for n in self.nodes:
            if n.unit == HOST:
                out[self.host] += n.cost.energy
        for p in self.partitions:
            out[p.unit] += p.energy
        for unit, joules in self.idle_energy:
            out[unit] += joules
        return out

    @property
    def energy(self) -> float:
        """Joules of one inference, every device included."""
        return sum(self.energy_by_unit().values())

    @property
    def modelled_energy(self) -> float | None:
        """`energy`, or None ("not modelled") when a device has no energy model."""
        return None if self.energy_unmodelled else self.energy

    @property
    def static_energy(self) -> float:
        """The static part of `energy`: every device's static power over the whole inference."""
        return sum(n.cost.static_energy for n in self.nodes) + sum(j for _, j in self.idle_energy)

    @property
    def partition_overhead(self) -> float:
        return self.result.partition_overhead

    @property
    def delegated_nodes(self) -> int:
        return sum(1 for n in self.nodes if n.unit != HOST)

    @property
    def transfer_bytes(self) -> int:
        return sum(e.bytes for e in self.result.events if e.kind == "transfer")

    def level_bytes(self) -> dict[str, int]:
        """Bytes moved on each memory level by the nodes, keyed 'unit.level' (unit: host or accelerator name)."""
        out: dict[str, int] = {}
        for n in self.nodes:
            unit = self.host if n.unit == HOST else n.unit
            for level, nbytes in n.cost.level_bytes:
                out[f"{unit}.{level}"] = out.get(f"{unit}.{level}", 0) + nbytes
        return out
