"""Cost models: pure functions from a device's node work and its hardware description to `Cost`s.

Each kind's module (see `accelsim.hardware.kinds`) exposes ``costs(works, hw) -> list[Cost]``: one Cost
per node, in model order. A `Cost` is a frozen value with addition, so costs sum per partition
and per run (tinygrad's `Estimates` idea). `cycles` count the device's own clock: only
`seconds` is comparable across devices. Every node says which bound set its time: "compute",
or the memory level (`accelsim.hardware.memory`) whose traffic took longest, and what energy it took
(`accelsim.hardware.energy`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from accelsim.core.feasibility import memory_refusal
from accelsim.hardware import energy, memory
from accelsim.hardware.memory import LINK, Level, Traffic
from accelsim.hardware.types import COMPUTE, Cost, Hardware
from accelsim.runtime.errors import ModelError
from accelsim.runtime.work import NodeWork

# Relative float slack so that a whole cycle count computed through seconds does not round up by one.
_SLACK = 1e-12


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
        Infeasible: the weights or a node's activations fit no memory level (see `accelsim.hardware.memory`).
    """
    levels = levels_of(hw)
    placed = memory.traffic(works, hw.memory, memory_refusal(hw.error), hw.name, hw.link is not None)
    watts = energy.static_power(hw)
    return [timed(w, compute_cycles(w), hw, t, levels, watts, fixed_cycles) for w, t in zip(works, placed)]


