"""Cost of a node on a systolic array, after SCALE-Sim's analytical compute model.

A GEMM-shaped layer (M output pixels x K window x N filters; see runtime.work) is mapped
on an R x C array as SCALE-Sim's operand matrices are (scalesim/compute/systolic_compute_*.py):

| dataflow | on rows (Sr) | on cols (Sc) | streamed in time (T) | cycles per fold |
|----------|--------------|--------------|----------------------|-----------------|
| os       | M            | N            | K                    | T + R + C - 2   |
| ws       | K            | N            | M                    | 2R + C + T - 2  |
| is       | K            | M            | N                    | 2R + C + T - 2  |

There are ceil(Sr/R) * ceil(Sc/C) folds, run one after another; each pays the full
array's fill and drain (a partly used fold is as slow as a full one), as SCALE-Sim's
demand matrices do. SCALE-Sim's COMPUTE_REPORT prints one cycle less than this count
(its "Total Cycles" is the zero-based index of the last cycle).

Depthwise convolutions, pools, elementwise ops and reductions run on the array's vector
path: MACs / compute.vector_lanes cycles. Memory traffic follows the config's levels
(`accelsim.hardware.memory`): activations and cached weights on their levels, weights that do not
fit the cache streamed from the level below (or over the link) every inference. Traffic
overlaps compute, so the node takes the longest of compute and each level's time.

A node's program (compute.instruction_bytes) crosses the link before the node can start, on
every invocation: the Edge TPU runtime sends the instruction stream with each inference. It
adds bytes / link bandwidth to the node's time and its bytes to the link's traffic; the
stream goes as one transfer per invocation, so it pays no per-node link latency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.hardware import energy
from accelsim.hardware.memory import LINK
from accelsim.hardware.roofline import cycles_for, roofline
from accelsim.hardware.types import Cost, Hardware, Kind, spec
from accelsim.runtime.work import Gemm, NodeWork

DATAFLOWS = ("os", "ws", "is")


@dataclass(frozen=True)
class SystolicCompute:
    """The `compute:` block of a `kind: systolic` config."""

    rows: int = spec("count", "rows of MAC cells")
    cols: int = spec("count", "columns of MAC cells")
    dataflow: str = spec("choice", "SCALE-Sim's output, weight or input stationary dataflow", choices=DATAFLOWS)
    vector_lanes: int = spec("count", "lanes of the array's vector path (depthwise, pools, elementwise)")
    instruction_bytes: int = spec("count", "bytes of program per node sent over the link every invocation",
                                  default=0, minimum=0, example=1750)


def fold_shape(gemm: Gemm, rows: int, cols: int, dataflow: str) -> tuple[int, int]:
    """(number of folds, cycles per fold) of one GEMM on a rows x cols array."""
    if dataflow == "os":
        sr, sc, t = gemm.m, gemm.n, gemm.k
        per_fold = t + rows + cols - 2
    elif dataflow == "ws":
        sr, sc, t = gemm.k, gemm.n, gemm.m
        per_fold = 2 * rows + cols + t - 2
    elif dataflow == "is":
        sr, sc, t = gemm.k, gemm.m, gemm.n
        per_fold = 2 * rows + cols + t - 2
    else:
        raise ValueError(f"dataflow must be one of {', '.join(DATAFLOWS)}, got {dataflow!r}")
    return math.ceil(sr / rows) * math.ceil(sc / cols), per_fold


def compute_cycles(gemm: Gemm, rows: int, cols: int, dataflow: str) -> int:
    """Cycles to compute `gemm` (all its batches) on the array, ignoring memory."""
    folds, per_fold = fold_shape(gemm, rows, cols, dataflow)
    return gemm.batch * folds * per_fold


def node_cycles(work: NodeWork, compute: SystolicCompute) -> int:
    """Cycles of one node on the array (GEMM-shaped) or on its vector path (everything else)."""
    if work.gemm is not None:
        return compute_cycles(work.gemm, compute.rows, compute.cols, compute.dataflow)
    return math.ceil(work.macs / compute.vector_lanes)


def program(hw: Hardware) -> Cost:
    """The time, link bytes and energy of sending one node's program (compute.instruction_bytes) over the link."""
    nbytes = hw.compute.instruction_bytes
    if not nbytes:
        return Cost()
    cycles = cycles_for(nbytes / hw.link.bandwidth, hw.clock)
    seconds = cycles / hw.clock
    static = energy.static_power(hw) * seconds
    return Cost(cycles=cycles, seconds=seconds, level_bytes=((LINK, nbytes),),
                bound_seconds=((LINK, seconds),), energy=nbytes * hw.link.energy + static, static_energy=static)


def costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """Costs of a device's nodes in model order (they share the weights level as the Edge TPU compiler does)."""
    each = program(hw)
    return [c + each for c in roofline(works, hw, lambda w: node_cycles(w, hw.compute))]


def cost(work: NodeWork, hw: Hardware) -> Cost:
    """The Cost of one node alone on a systolic accelerator (its weights cached if the whole layer fits)."""
    return costs([work], hw)[0]


def peak_macs_per_cycle(work: NodeWork, hw: Hardware) -> float:
    """The array's MACs per cycle for a GEMM-shaped node, the vector path's lanes for any other."""
    return hw.compute.rows * hw.compute.cols if work.gemm is not None else hw.compute.vector_lanes


KIND = Kind("systolic", "accelerator", "MAC array timed as SCALE-Sim does, with a parameter cache",
            SystolicCompute, costs=costs,
            macs_per_cycle="rows x cols MACs per cycle on GEMMs (128 MACs: e.g. rows: 8, cols: 16; the shape "
                           "matters, a GEMM dimension that is not a multiple of it leaves cells idle); "
                           "vector_lanes per cycle on other ops", peak_macs_per_cycle=peak_macs_per_cycle)
