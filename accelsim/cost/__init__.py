"""Cost models: pure functions from a device's node work and its hardware description to `Cost`s.

Each kind's module (see `accelsim.kinds`) exposes ``costs(works, hw) -> list[Cost]``: one Cost
per node, in model order. A `Cost` is a frozen value with addition, so costs sum per partition
and per run (tinygrad's `Estimates` idea). `cycles` count the device's own clock: only
`seconds` is comparable across devices. Every node says which bound set its time: "compute",
or the memory level (`accelsim.memory`) whose traffic took longest, and what energy it took
(`accelsim.energy`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from accelsim import energy, memory
from accelsim.feasibility import memory_refusal
from accelsim.memory import LINK, Level, Traffic
from accelsim.runtime.errors import ModelError
from accelsim.runtime.work import NodeWork

if TYPE_CHECKING:
    from accelsim.device import Hardware

# Relative float slack so that a whole cycle count computed through seconds does not round up by one.
_SLACK = 1e-12
COMPUTE = "compute"


def _merged(a: tuple, b: tuple) -> tuple:
    """(key, amount) pairs of `a` and `b` summed by key, keys in order of first appearance."""
    out = dict(a)
    for key, amount in b:
        out[key] = out.get(key, 0) + amount
    return tuple(out.items())


@dataclass(frozen=True)
class Cost:
    """Time and traffic of some work; `+` adds field by field, `sum(costs, Cost())` totals them.

    Args:
        cycles: device clock cycles (the slowest of compute and every level).
        seconds: wall time.
        macs: multiply-accumulates done.
        bytes_read, bytes_written: bytes the work reads (inputs, weights) and writes (outputs).
        param_bytes_streamed: weight bytes fetched from below the weights level this time.
        compute_seconds: time the compute units alone need; `seconds - compute_seconds` is time
            spent waiting on memory (`stall_seconds`).
        level_bytes: (level name, bytes moved on it), "link" for host memory over the link.
        bound_seconds: (bound, seconds): a node's whole time under the bound that set it
            ("compute" or a level name); sums give the time spent under each bound.
        energy: joules: dynamic (MACs, bytes per level) plus static power over `seconds`.
        static_energy: the static part of `energy`.
    """

    cycles: int = 0
    seconds: float = 0.0
    macs: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    param_bytes_streamed: int = 0
    compute_seconds: float = 0.0
    level_bytes: tuple[tuple[str, int], ...] = ()
    bound_seconds: tuple[tuple[str, float], ...] = ()
    energy: float = 0.0
    static_energy: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        # Written out field by field (a loop over fields() costs ~4x more): costing a design point
        # adds a Cost per node. A test checks every field is summed.
        return Cost(self.cycles + other.cycles, self.seconds + other.seconds, self.macs + other.macs,
                    self.bytes_read + other.bytes_read, self.bytes_written + other.bytes_written,
                    self.param_bytes_streamed + other.param_bytes_streamed,
                    self.compute_seconds + other.compute_seconds, _merged(self.level_bytes, other.level_bytes),
                    _merged(self.bound_seconds, other.bound_seconds), self.energy + other.energy,
                    self.static_energy + other.static_energy)

    def times(self, count: int) -> Cost:
        """This cost `count` times over (a loop body's cost times its trips)."""
        return Cost(*(tuple((k, v * count) for k, v in value) if isinstance(value, tuple) else value * count
                      for value in (getattr(self, f.name) for f in fields(Cost))))

    @property
    def stall_seconds(self) -> float:
        """Time beyond compute: waiting on the slowest memory level."""
        return self.seconds - self.compute_seconds

    @property
    def bound(self) -> str:
        """The bound that took the most time ("compute" or a level name; "" for no work)."""
        return max(self.bound_seconds, key=lambda kv: kv[1], default=("", 0.0))[0]

    def bytes_on(self, level: str) -> int:
        return dict(self.level_bytes).get(level, 0)


# Bytes per element of the tensor types a cost model can be asked about, as TFLite's
# TfLiteTypeGetSize (tensorflow/lite/core/c/common.cc) sizes them: bfloat16 and float16 are 2.
# The packed sub-byte types (int4, uint4, int2) are unpacked to one int8 per element before
# TFLite's kernels compute on them, so a lane holds one byte; float8 types are one byte.
_ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "int4": 1, "uint4": 1, "int2": 1, "float8_e4m3fn": 1,
             "float8_e5m2": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4,
             "float32": 4, "int64": 8, "uint64": 8, "float64": 8, "complex64": 8, "complex128": 16}


def dtype_itemsize(dtype: str) -> int:
    """Bytes per element of a lower-case tensor type name ('int8' -> 1, 'bfloat16' -> 2).

    Raises:
        ModelError: a type with no fixed element size (string, resource, variant) or no TFLite type at all.
    """
    try:
        return _ITEMSIZE[dtype]
    except KeyError:
        raise ModelError(f"tensor type {dtype!r} has no element size a cost model can use; "
                         f"types with one: {', '.join(sorted(_ITEMSIZE))}") from None


def cycles_for(seconds: float, clock_hz: float) -> int:
    """Whole clock cycles covering `seconds` at `clock_hz`."""
    return math.ceil(seconds * clock_hz * (1 - _SLACK))


def levels_of(hw: Hardware) -> dict[str, Level]:
    """The device's memory levels by name, plus "link" when it has a link."""
    levels = {lvl.name: lvl for lvl in hw.memory.levels}
    if hw.link is not None:
        levels[LINK] = Level(LINK, hw.link.bandwidth, None, hw.link.latency, hw.link.energy)
    return levels


def timed(work: NodeWork, compute_cycles: int, hw: Hardware, traffic: Traffic,
          levels: Mapping[str, Level], static_power: float, fixed_cycles: int = 0) -> Cost:
    """The Cost of `work` when compute overlaps the traffic on every level: the slowest wins.

    A level with bytes to move takes its latency plus bytes / bandwidth; on a tie compute is the bound.
    `static_power` (W) is the device's, burnt over the node's time; `fixed_cycles` (a runtime's
    per-node dispatch) come on top, outside the overlap, and count as compute.
    """
    bound, cycles = COMPUTE, compute_cycles
    for name, nbytes in traffic.level_bytes:
        level = levels[name]
        level_cycles = cycles_for(level.latency + nbytes / level.bandwidth, hw.clock)
        if level_cycles > cycles:
            bound, cycles = name, level_cycles
    cycles += fixed_cycles
    seconds = cycles / hw.clock
    static = static_power * seconds
    return Cost(cycles=cycles, seconds=seconds, macs=work.macs, bytes_read=work.input_bytes + work.weight_bytes,
                bytes_written=work.output_bytes, param_bytes_streamed=traffic.streamed,
                compute_seconds=min(seconds, (compute_cycles + fixed_cycles) / hw.clock),
                level_bytes=traffic.level_bytes,
                bound_seconds=((bound, seconds),),
                energy=energy.dynamic_energy(work, traffic.level_bytes, hw, levels) + static, static_energy=static)


def roofline(works: Sequence[NodeWork], hw: Hardware, compute_cycles: Callable[[NodeWork], int],
             fixed_cycles: int = 0) -> list[Cost]:
    """Costs of a device's nodes (model order): compute overlapped with memory traffic, plus fixed cycles.

    Args:
        compute_cycles: a node's cycles of compute alone.
        fixed_cycles: cycles every node pays outside the overlap (a runtime's dispatch).

    Raises:
        Infeasible: the weights or a node's activations fit no memory level (see `accelsim.memory`).
    """
    levels = levels_of(hw)
    placed = memory.traffic(works, hw.memory, memory_refusal(hw.error), hw.name, hw.link is not None)
    watts = energy.static_power(hw)
    return [timed(w, compute_cycles(w), hw, t, levels, watts, fixed_cycles) for w, t in zip(works, placed)]


def total(costs: Sequence[Cost]) -> Cost:
    """The sum of `costs` in one pass: what `sum(costs, Cost())` gives, without a Cost per addition."""
    if not costs:
        return Cost()
    sums: dict[str, object] = {}
    for f in fields(Cost):
        values = [getattr(c, f.name) for c in costs]
        sums[f.name] = _merged((), tuple(pair for pairs in values for pair in pairs)) \
            if isinstance(f.default, tuple) else sum(values)
    return Cost(**sums)
