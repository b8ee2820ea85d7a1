"""Cost of a node on a host CPU core: a roofline of MAC throughput and DRAM bandwidth.

Compute: MACs / (macs_per_cycle[dtype] * efficiency) cycles. A dtype missing from
compute.macs_per_cycle gets one SIMD register of lanes per cycle (simd_bits / element bits).
Memory: every byte the node reads or writes crosses memory.dram_bandwidth once. The node
takes the longer of the two.
"""

from __future__ import annotations

import math

from accelsim.config import HardwareConfig
from accelsim.cost import Cost, bounded, dtype_itemsize
from runtime.work import NodeWork


def macs_per_cycle(dtype: str, hw: HardwareConfig) -> float:
    """Peak MACs per cycle for `dtype` on this core."""
    rates = dict(hw.compute.macs_per_cycle)
    if dtype in rates:
        return rates[dtype]
    return max(1, hw.compute.simd_bits // (8 * dtype_itemsize(dtype)))


def cost(work: NodeWork, hw: HardwareConfig) -> Cost:
    """The Cost of one node on a `kind: cpu` host."""
    cycles = math.ceil(work.macs / (macs_per_cycle(work.dtype, hw) * hw.compute.efficiency))
    return bounded(work, cycles, hw.clock, (work.bytes_moved, hw.memory.dram_bandwidth))
