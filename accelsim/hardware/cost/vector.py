"""Cost of a node on a wide-vector DSP (Hexagon-HVX-like).

compute.lanes counts 8-bit lanes; a wider dtype gets proportionally fewer (16-bit: half,
32-bit: a quarter). Every hardware context (thread with its own vector unit) works in
parallel, at compute.efficiency of peak, so compute takes
    MACs / (lanes_for_dtype * contexts * efficiency) cycles.
Memory traffic follows the config's levels (`accelsim.hardware.memory`); the node takes the longest
of compute and each level's time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.hardware.roofline import dtype_itemsize, roofline
from accelsim.hardware.types import Cost, Hardware, Kind, spec
from accelsim.runtime.work import NodeWork


@dataclass(frozen=True)
class VectorCompute:
    """The `compute:` block of a `kind: vector` config."""

    lanes: int = spec("count", "8-bit lanes of one vector unit", example=128)
    contexts: int = spec("count", "vector units working in parallel", example=128)
    efficiency: float = spec("fraction", "fraction of peak reached", default=1.0)


def lanes_for(dtype: str, lanes_8bit: int) -> int:
    """Lanes of `dtype` in a vector of `lanes_8bit` bytes (at least one)."""
    return max(1, lanes_8bit // dtype_itemsize(dtype))


def node_cycles(work: NodeWork, compute: VectorCompute) -> int:
    """Cycles of one node on every context's vector unit at the configured efficiency."""
    return math.ceil(work.macs / (lanes_for(work.dtype, compute.lanes) * compute.contexts * compute.efficiency))


def costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """Costs of a device's nodes in model order."""
    return roofline(works, hw, lambda w: node_cycles(w, hw.compute))


def cost(work: NodeWork, hw: Hardware) -> Cost:
    """The Cost of one node alone on a `kind: vector` accelerator."""
    return costs([work], hw)[0]


def peak_macs_per_cycle(work: NodeWork, hw: Hardware) -> float:
    """Lanes of the node's dtype on every context."""
    return lanes_for(work.dtype, hw.compute.lanes) * hw.compute.contexts


KIND = Kind("vector", "accelerator", "wide-vector DSP (Hexagon-HVX-like) sharing DRAM with the host",
            VectorCompute, costs=costs,
            macs_per_cycle="lanes x contexts 8-bit MACs per cycle (16-bit: half, 32-bit: a quarter), times "
                           "efficiency; 128 MACs: e.g. lanes: 64, contexts: 2", peak_macs_per_cycle=peak_macs_per_cycle)
