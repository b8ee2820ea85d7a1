"""Cost of a node on a host CPU core: per-class compute against a cache-or-DRAM roofline, plus dispatch.

A node takes node_cycles (the runtime's per-node dispatch) plus the longer of compute and memory:

- compute, by the class of its work (`accelsim.runtime.work`):
  - gemm: MACs / (macs_per_cycle[dtype] * efficiency), plus row_cycles[dtype] per output row
    (M of the GEMM: the per-pixel work of a convolution driver — indirection, requantizing
    and storing one row of outputs — which dominates layers with few channels), plus
    pack_cycles[dtype] per element of the GEMM's input matrix (M x K: a kernel that copies its
    input into packed blocks first — im2col of a spatial window, then packing — pays per
    element it copies, which weighs on layers with wide windows and few output channels);
  - depthwise, window, reduce, elementwise and a fused activation: ops / vector_per_cycle[dtype];
  - lookup: lookups / lookups_per_cycle[dtype];
  - move: output elements / move_per_cycle[dtype] (nothing when the dtype is not listed).
  A dtype missing from macs_per_cycle gets one SIMD register of lanes per cycle (simd_bits /
  element bits); one missing from vector_per_cycle runs at the GEMM rate (macs_per_cycle *
  efficiency); one missing from lookups_per_cycle is costed as a vector op.
- threads: TFLite runs its GEMMs (ruy, for CONV_2D and FULLY_CONNECTED) and its optimized
  depthwise convolution on `threads` worker threads, splitting the output among them
  (tensorflow/lite/kernels/cpu_backend_context.h: SetMaxNumThreads; depthwise_conv.cc runs
  DepthwiseConvWorkerTask per thread); every other kernel runs on the calling thread. So gemm and
  depthwise compute (their row and fused-activation work included) is divided by `threads`, one per
  core (`threads` above `cores` is a ConfigError); memory bandwidth is the cores' shared one.
- memory: the config's levels (`accelsim.hardware.memory`). A core's cache is a bounded level that
  weights and activations both live on, above DRAM: a node whose bytes fit it moves them at
  its bandwidth, any other at DRAM's; weights that do not all fit it spill, and what it cannot keep
  is read from DRAM on every inference.

Left at their defaults (no row, pack, vector, lookup or move rates, no dispatch) with one DRAM level,
a node costs max(ops / macs_per_cycle, bytes / DRAM bandwidth): the plain roofline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.hardware.roofline import dtype_itemsize, roofline
from accelsim.hardware.types import Cost, Hardware, Kind, spec
from accelsim.runtime.work import NodeWork

_VECTOR_KINDS = ("depthwise", "window", "reduce", "elementwise")
# The work classes TFLite's CPU kernels split among threads (see the module docstring).
_THREADED_KINDS = ("gemm", "depthwise")


@dataclass(frozen=True)
class CpuCompute:
    """The `compute:` block of a `kind: cpu` config."""

    simd_bits: int = spec("count", "SIMD register width in bits", minimum=8, multiple_of=8, example=128)
    macs_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "peak GEMM MACs per cycle by dtype (e.g. float32: 8, int8: 32); others get one SIMD register")
    efficiency: float = spec("fraction", "fraction of peak reached", default=1.0)
    row_cycles: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "cycles per GEMM output row (pixel) by dtype, on top of the MACs", default=())
    pack_cycles: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "cycles per element of a GEMM's M x K input (im2col and packing) by dtype", default=())
    vector_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "elementwise/window/reduce/depthwise ops per cycle by dtype (default: as macs_per_cycle)",
        default=())
    lookups_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "table lookups per cycle by dtype (default: as vector ops)", default=())
    move_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "elements a data-movement op writes per cycle by dtype (default: bytes only)", default=())
    node_cycles: int = spec("count", "cycles of dispatch per node the runtime runs", default=0, minimum=0,
                            example=300)
    cores: int = spec("count", "cores of this kind the host has for the runtime's threads", default=1, example=4)
    threads: int = spec("count", "threads the runtime runs GEMM and depthwise kernels on (at most cores)",
                        default=1, example=4)


def simd_lanes(dtype: str, hw: Hardware) -> int:
    """Lanes of one SIMD register for `dtype` (at least one)."""
    return max(1, hw.compute.simd_bits // (8 * dtype_itemsize(dtype)))


def macs_per_cycle(dtype: str, hw: Hardware) -> float:
    """Peak GEMM MACs per cycle for `dtype` on this core."""
    return dict(hw.compute.macs_per_cycle).get(dtype) or simd_lanes(dtype, hw)


def compute_cycles(work: NodeWork, hw: Hardware) -> float:
    """Cycles of the node's compute alone, by the class of its work (see the module docstring)."""
    c, dtype = hw.compute, work.dtype
    vector = dict(c.vector_per_cycle).get(dtype) or macs_per_cycle(dtype, hw) * c.efficiency
    cycles = work.activation_ops / vector
    if work.kind == "gemm":
        rows = work.gemm.m * work.gemm.batch if work.gemm is not None else 0
        packed = rows * work.gemm.k if work.gemm is not None else 0
        cycles += (work.macs / (macs_per_cycle(dtype, hw) * c.efficiency) + rows * dict(c.row_cycles).get(dtype, 0)
                   + packed * dict(c.pack_cycles).get(dtype, 0))
    elif work.kind in _VECTOR_KINDS:
        cycles += work.macs / vector
    elif work.kind == "lookup":
        cycles += work.macs / (dict(c.lookups_per_cycle).get(dtype) or vector)
    elif work.kind == "move" and dtype in dict(c.move_per_cycle):
        cycles += work.elements / dict(c.move_per_cycle)[dtype]
    return cycles / c.threads if work.kind in _THREADED_KINDS else cycles


# The dtypes nearly every model computes in; a host without a rate for one of them is told so.
COMMON_DTYPES = ("float32", "int8")


def notes(hw: Hardware) -> list[str]:
    """One line per common dtype that compute.macs_per_cycle leaves to the SIMD-width rule."""
    rates = dict(hw.compute.macs_per_cycle)
    return [f"compute.macs_per_cycle has no {dtype}: {dtype} nodes get one SIMD register per cycle, "
            f"simd_bits / {8 * dtype_itemsize(dtype)} = {macs_per_cycle(dtype, hw):g} MACs per cycle"
            for dtype in COMMON_DTYPES if dtype not in rates]


def costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """Costs of a core's nodes in model order: the roofline of compute and memory, plus dispatch."""
    return roofline(works, hw, lambda w: math.ceil(compute_cycles(w, hw)), fixed_cycles=hw.compute.node_cycles)


def cost(work: NodeWork, hw: Hardware) -> Cost:
    """The Cost of one node alone on a `kind: cpu` host."""
    return costs([work], hw)[0]


def peak_macs_per_cycle(work: NodeWork, hw: Hardware) -> float:
    """Peak GEMM MACs per cycle of the node's dtype on every thread it runs on (for utilisation)."""
    return macs_per_cycle(work.dtype, hw) * (hw.compute.threads if work.kind in _THREADED_KINDS else 1)


def check(hw: Hardware) -> list[tuple[tuple, str]]:
    """compute.threads within compute.cores: one runtime thread per core."""
    c = hw.compute
    if c.threads > c.cores:
        return [(("compute", "threads"), f"{c.threads} threads above the {c.cores} cores compute.cores declares "
                                         f"(one runtime thread per core); use threads <= {c.cores} or more cores")]
    return []


KIND = Kind("cpu", "host", "host CPU core: per-class compute (GEMM, vector, lookup, move) against a cache/DRAM "
            "roofline, plus per-node dispatch", CpuCompute, costs=costs,
            macs_per_cycle="compute.macs_per_cycle per dtype, times efficiency; a dtype it does not list gets "
                           "simd_bits / element bits (one SIMD register per cycle)", notes=notes,
            peak_macs_per_cycle=peak_macs_per_cycle, check=check)
