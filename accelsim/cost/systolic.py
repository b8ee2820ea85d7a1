"""Cost of a node on a systolic array, after SCALE-Sim's analytical compute model.

A GEMM-shaped layer (M output pixels x K window x N filters; see delegates.work) is mapped
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
path: MACs / compute.vector_lanes cycles. Memory: the node's activations and cached
weights move at memory.onchip_bandwidth; weights that do not fit the parameter cache
come over the link at link.bandwidth every inference. Transfers overlap compute, so the
node takes the longest of the three.

What the parameter cache holds (`costs`): activations come first. The largest working set
of any node (its inputs and outputs, which must be on chip together) takes whatever it
needs beyond memory.onchip out of memory.param_cache; the rest is filled with weights in
model order (see `accelsim.cost.streamed_parameters`). The Edge TPU compiler behaves so: its
"on-chip memory available for caching model parameters" is 7-8 MiB for most models, as low
as 1.1-1.9 MiB for some, and a model whose activations do not fit fails to compile.

The node's program (compute.instruction_bytes) crosses the link before it runs, at every
invocation; the Edge TPU's runtime sends the instruction stream with each inference.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelsim.cost import Cost, bounded, cycles_for, streamed_parameters
from accelsim.kinds import Kind, spec
from delegates.work import Gemm, NodeWork

if TYPE_CHECKING:
    from accelsim.config import HardwareConfig

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


def cost(work: NodeWork, hw: HardwareConfig, *, streamed_bytes: int | None = None) -> Cost:
    """The Cost of one node on a systolic accelerator.

    Args:
        work: the node's work.
        hw: a `kind: systolic` config.
        streamed_bytes: weight bytes fetched over the link this inference; default: whatever
            of this node's weights exceeds the whole parameter cache.
    """
    compute = hw.compute
    if streamed_bytes is None:
        streamed_bytes = max(0, work.weight_bytes - hw.memory.param_cache)
    if work.gemm is not None:
        cycles = compute_cycles(work.gemm, compute.rows, compute.cols, compute.dataflow)
    else:
        cycles = math.ceil(work.macs / compute.vector_lanes)
    onchip = work.input_bytes + work.output_bytes + work.weight_bytes - streamed_bytes
    run = bounded(work, cycles, hw.clock, (onchip, hw.memory.onchip_bandwidth),
                  (streamed_bytes, hw.link.bandwidth), streamed=streamed_bytes)
    # The program arrives before the node can start, so its transfer adds to the node's time.
    total = run.cycles + cycles_for(compute.instruction_bytes / hw.link.bandwidth, hw.clock)
    return dataclasses.replace(run, cycles=total, seconds=total / hw.clock)


def parameter_cache_left(works: Sequence[NodeWork], hw: HardwareConfig) -> int:
    """Bytes of memory.param_cache left for weights once the largest activation working set is on chip."""
    working_set = max((w.input_bytes + w.output_bytes for w in works), default=0)
    return max(0, hw.memory.param_cache - max(0, working_set - hw.memory.onchip))


def costs(works: Sequence[NodeWork], hw: HardwareConfig) -> list[Cost]:
    """Costs of a model's nodes in order, sharing the parameter cache as the Edge TPU compiler does."""
    streamed = streamed_parameters(works, parameter_cache_left(works, hw))
    return [cost(w, hw, streamed_bytes=s) for w, s in zip(works, streamed)]


KIND = Kind("systolic", "accelerator", "MAC array timed as SCALE-Sim does, with a parameter cache",
            SystolicCompute, memory=("param_cache", "onchip_bandwidth"), costs=costs,
            macs_per_cycle="rows x cols MACs per cycle on GEMMs (128 MACs: e.g. rows: 8, cols: 16; the shape "
                           "matters, a GEMM dimension that is not a multiple of it leaves cells idle); "
                           "vector_lanes per cycle on other ops")
