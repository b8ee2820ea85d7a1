"""Cost of a node on a tensor NPU (Hexagon-NPU-like): a matrix unit, a vector unit, per-op dispatch.

A phone NPU driven as a TFLite delegate (Qualcomm's QNN delegate on the Hexagon NPU) runs
GEMM-shaped layers (convolutions, fully connected) on a matrix unit and everything else
(depthwise convolutions, pools, elementwise ops, activations, reductions, table lookups, data
movement) on a vector unit. A node takes node_cycles (the NPU's per-op dispatch) plus the longer
of its compute and its memory traffic (the config's levels, `accelsim.hardware.memory`):

- gemm: MACs / (macs_per_cycle[dtype] * efficiency), with the GEMM's N (output channels) and K
  (its reduction) rounded up to `channel_block` first: the matrix unit works on whole tiles, so
  a layer with 24 output channels pays for 32 on a 32-channel tile;
- any other class, and a fused activation: ops / vector_per_cycle[dtype]; a data-movement op
  counts its output elements.

Float models run at `float_precision`: the QNN delegate's HTP backend computes float graphs in
fp16 (its release notes: "The default HTP precision is changed to HtpFp16"), so a float32 node
takes the float16 rates and moves half the bytes: weights are converted at prepare and
activations are kept in fp16. uint8 runs at int8's rates. A dtype the config gives no rate is
costed at its slowest listed rate (`notes` says so).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.hardware import energy
from accelsim.hardware import memory as mem
from accelsim.hardware.roofline import dtype_itemsize, levels_of, timed
from accelsim.hardware.types import Cost, Hardware, Kind, spec
from accelsim.runtime.work import Gemm, NodeWork

FLOAT_PRECISIONS = ("float16", "float32")
# What a node's dtype runs as, before float_precision applies.
_SAME_RATES = {"uint8": "int8"}


@dataclass(frozen=True)
class TensorCompute:
    """The `compute:` block of a `kind: tensor` config."""

    macs_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "matrix-unit MACs per cycle by dtype (e.g. int8: 4096, float16: 2048)")
    vector_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "vector-unit ops per cycle by dtype: depthwise, pools, elementwise, activations, moves")
    efficiency: float = spec("fraction", "fraction of peak reached", default=1.0)
    channel_block: int = spec("count", "GEMM output channels and reduction rounded up to this (the matrix tile)",
                              default=1, example=32)
    node_cycles: int = spec("count", "cycles of dispatch per node the NPU runs", default=0, minimum=0, example=2000)
    float_precision: str = spec("choice", "the precision float32 nodes run in", choices=FLOAT_PRECISIONS,
                                default="float16")
    prefetch_bytes: int = spec("count", "weight bytes fetched ahead, while earlier nodes compute", default=0,
                               minimum=0, example=4194304)


def runs_as(dtype: str, compute: TensorCompute) -> str:
    """The dtype whose rates a node of `dtype` takes."""
    return compute.float_precision if dtype == "float32" else _SAME_RATES.get(dtype, dtype)


def _rate(rates: tuple[tuple[str, float], ...], dtype: str) -> float:
    table = dict(rates)
    return table.get(dtype) or min(table.values())


def executed(work: NodeWork, compute: TensorCompute) -> NodeWork:
    """`work` as the NPU runs it: a float32 node at `float_precision` moves that many bytes per element."""
    dtype = runs_as(work.dtype, compute)
    if dtype == work.dtype or work.dtype != "float32":
        return work
    scale = dtype_itemsize(dtype) / dtype_itemsize(work.dtype)
    return dataclasses.replace(work, dtype=dtype, weight_bytes=math.ceil(work.weight_bytes * scale),
                               input_bytes=math.ceil(work.input_bytes * scale),
                               output_bytes=math.ceil(work.output_bytes * scale))


def tiled_macs(gemm: Gemm, block: int) -> int:
    """MACs of `gemm` with N and K rounded up to whole `block`s."""
    return gemm.batch * gemm.m * math.ceil(gemm.k / block) * block * math.ceil(gemm.n / block) * block


def compute_cycles(work: NodeWork, hw: Hardware) -> float:
    """Cycles of the node's compute alone (see the module docstring)."""
    c = hw.compute
    dtype = runs_as(work.dtype, c)
    vector = _rate(c.vector_per_cycle, dtype)
    if work.kind == "gemm":  # its fused activation is applied in the matrix unit's output stage
        macs = tiled_macs(work.gemm, c.channel_block) if work.gemm is not None else work.macs
        return macs / (_rate(c.macs_per_cycle, dtype) * c.efficiency)
    return (work.elements if work.kind == "move" else work.macs + work.activation_ops) / vector


def notes(hw: Hardware) -> list[str]:
    """One line per common dtype without its own rates (costed at the slowest listed rate)."""
    c = hw.compute
    # key by key, in the order a config writes them (macs_per_cycle, then vector_per_cycle)
    return [f"compute.{name} has no {dtype}: {dtype} nodes get its slowest rate, {_rate(rates, dtype):g}"
            for name, rates in (("macs_per_cycle", c.macs_per_cycle), ("vector_per_cycle", c.vector_per_cycle))
            for dtype in dict.fromkeys(runs_as(d, c) for d in ("int8", "float32"))
            if dtype not in dict(rates)]


def costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """Costs of the NPU's nodes in model order: compute against memory, weights prefetched, plus dispatch.

    Weights are known before the graph runs, so the NPU's DMA fetches them ahead of the node that
    uses them while earlier nodes compute, up to `prefetch_bytes` held on chip: a node's weight
    bytes fetched earlier leave its time (they still count as its traffic). Time the weights
    level is idle during a node is credit for later nodes' weights; activations are never fetched ahead.
    """
    run = [executed(w, hw.compute) for w in works]
    levels, watts = levels_of(hw), energy.static_power(hw)
    weights_level = hw.memory.weights
    bandwidth = levels[weights_level].bandwidth
    ahead = 0.0  # bytes fetched ahead of their node, waiting on chip
    out: list[Cost] = []
    for work, traffic in zip(run, mem.traffic(run, hw.memory, hw.error)):
        on_level = dict(traffic.level_bytes).get(weights_level, 0)
        used = min(ahead, work.weight_bytes, on_level)
        timing = mem.Traffic(tuple((name, n - used if name == weights_level else n)
                                   for name, n in traffic.level_bytes), traffic.streamed)
        cost = timed(work, math.ceil(compute_cycles(work, hw)), hw, timing, levels, watts, hw.compute.node_cycles)
        busy = (on_level - used) / bandwidth
        idle = max(0.0, cost.seconds - hw.compute.node_cycles / hw.clock - busy)
        ahead = min(hw.compute.prefetch_bytes, ahead - used + idle * bandwidth)
        dynamic = energy.dynamic_energy(work, traffic.level_bytes, hw, levels)
        out.append(dataclasses.replace(cost, level_bytes=traffic.level_bytes, energy=dynamic + cost.static_energy))
    return out


def cost(work: NodeWork, hw: Hardware) -> Cost:
    """The Cost of one node alone on a `kind: tensor` accelerator."""
    return costs([work], hw)[0]


def peak_macs_per_cycle(work: NodeWork, hw: Hardware) -> float:
    """The matrix unit's rate for a GEMM-shaped node, the vector unit's for any other."""
    dtype = runs_as(work.dtype, hw.compute)
    rates = hw.compute.macs_per_cycle if work.kind == "gemm" else hw.compute.vector_per_cycle
    return _rate(rates, dtype)


KIND = Kind("tensor", "accelerator", "tensor NPU (Hexagon-NPU-like): matrix unit for GEMMs, vector unit for the "
            "rest, per-node dispatch, floats at a configured precision", TensorCompute, costs=costs,
            macs_per_cycle="compute.macs_per_cycle per dtype on GEMMs (times efficiency, N and K in whole "
                           "channel_blocks), compute.vector_per_cycle on everything else; float32 nodes take "
                           "float_precision's rates", notes=notes, peak_macs_per_cycle=peak_macs_per_cycle)
