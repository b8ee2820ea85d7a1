"""Cost of a node on a host CPU core: a roofline of MAC throughput and DRAM bandwidth.

Compute: MACs / (macs_per_cycle[dtype] * efficiency) cycles. A dtype missing from
compute.macs_per_cycle gets one SIMD register of lanes per cycle (simd_bits / element bits).
Memory traffic follows the config's levels (`accelsim.memory`); the node takes the longest
of compute and each level's time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelsim.cost import Cost, dtype_itemsize, roofline
from accelsim.kinds import Kind, spec
from delegates.work import NodeWork

if TYPE_CHECKING:
    from accelsim.config import HardwareConfig


@dataclass(frozen=True)
class CpuCompute:
    """The `compute:` block of a `kind: cpu` config."""

    simd_bits: int = spec("count", "SIMD register width in bits", minimum=8, multiple_of=8, example=128)
    macs_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "peak MACs per cycle by dtype (e.g. float32: 8, int8: 32); others get one SIMD register")
    efficiency: float = spec("fraction", "fraction of peak reached", default=1.0)


def macs_per_cycle(dtype: str, hw: HardwareConfig) -> float:
    """Peak MACs per cycle for `dtype` on this core."""
    rates = dict(hw.compute.macs_per_cycle)
    if dtype in rates:
        return rates[dtype]
    return max(1, hw.compute.simd_bits // (8 * dtype_itemsize(dtype)))


def node_cycles(work: NodeWork, hw: HardwareConfig) -> int:
    """Cycles of one node's MACs at the core's peak rate for its dtype times efficiency."""
    return math.ceil(work.macs / (macs_per_cycle(work.dtype, hw) * hw.compute.efficiency))


# The dtypes nearly every model computes in; a host without a rate for one of them is told so.
COMMON_DTYPES = ("float32", "int8")


def notes(hw: HardwareConfig) -> list[str]:
    """One line per common dtype that compute.macs_per_cycle leaves to the SIMD-width rule."""
    rates = dict(hw.compute.macs_per_cycle)
    return [f"compute.macs_per_cycle has no {dtype}: {dtype} nodes get one SIMD register per cycle, "
            f"simd_bits / {8 * dtype_itemsize(dtype)} = {macs_per_cycle(dtype, hw):g} MACs per cycle"
            for dtype in COMMON_DTYPES if dtype not in rates]


def costs(works: Sequence[NodeWork], hw: HardwareConfig) -> list[Cost]:
    """Costs of a core's nodes in model order."""
    return roofline(works, hw, lambda w: node_cycles(w, hw))


def cost(work: NodeWork, hw: HardwareConfig) -> Cost:
    """The Cost of one node alone on a `kind: cpu` host."""
    return costs([work], hw)[0]


def peak_macs_per_cycle(work: NodeWork, hw: HardwareConfig) -> float:
    """Peak MACs per cycle of the node's dtype (for utilisation)."""
    return macs_per_cycle(work.dtype, hw)


KIND = Kind("cpu", "host", "host CPU core: a roofline of SIMD MAC throughput and DRAM bandwidth",
            CpuCompute, costs=costs,
            macs_per_cycle="compute.macs_per_cycle per dtype, times efficiency; a dtype it does not list gets "
                           "simd_bits / element bits (one SIMD register per cycle)", notes=notes,
            peak_macs_per_cycle=peak_macs_per_cycle)
