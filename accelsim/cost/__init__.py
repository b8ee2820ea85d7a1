"""Cost models: pure functions from a node's work and a hardware description to a `Cost`.

`systolic.cost`, `vector.cost` and `cpu.cost` share one shape: (NodeWork, HardwareConfig) -> Cost.
A `Cost` is a frozen value with addition, so costs sum per partition and per run
(tinygrad's `Estimates` idea). `cycles` count the device's own clock: only `seconds`
is comparable across devices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from delegates.work import NodeWork
from runtime.errors import ModelError
from runtime.ir import numpy_dtype

# Relative float slack so that a whole cycle count computed through seconds does not round up by one.
_SLACK = 1e-12


@dataclass(frozen=True)
class Cost:
    """Time and traffic of some work; `+` adds field by field, `sum(costs, Cost())` totals them."""

    cycles: int = 0
    seconds: float = 0.0
    macs: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    param_bytes_streamed: int = 0

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(Cost)))


def dtype_itemsize(dtype: str) -> int:
    """Bytes per element of a lower-case tensor type name ('int8' -> 1); 1 when unknown."""
    try:
        return numpy_dtype(dtype.upper()).itemsize
    except ModelError:
        return 1


def cycles_for(seconds: float, clock_hz: float) -> int:
    """Whole clock cycles covering `seconds` at `clock_hz`."""
    return math.ceil(seconds * clock_hz * (1 - _SLACK))


def bounded(work: NodeWork, compute_cycles: int, clock_hz: float, *transfers: tuple[int, float],
            streamed: int = 0) -> Cost:
    """The Cost of `work` when compute overlaps every memory transfer (bytes, bytes/s): the slowest wins."""
    cycles = max([compute_cycles, *(cycles_for(b / bw, clock_hz) for b, bw in transfers if b > 0)])
    return Cost(cycles=cycles, seconds=cycles / clock_hz, macs=work.macs,
                bytes_read=work.input_bytes + work.weight_bytes, bytes_written=work.output_bytes,
                param_bytes_streamed=streamed)


def streamed_parameters(works: Sequence[NodeWork], cache_bytes: int) -> tuple[int, ...]:
    """Bytes of each node's weights that must be streamed every inference, given an on-chip cache.

    The cache is filled in model order, a whole layer at a time, until the next layer's
    weights do not fit; that layer and every later one stream all their weights. This is
    how the Edge TPU compiler reports "on-chip memory used for caching model parameters"
    versus "off-chip memory used for streaming uncached model parameters".
    """
    streamed = []
    free = cache_bytes
    full = False
    for work in works:
        if not full and work.weight_bytes <= free:
            free -= work.weight_bytes
            streamed.append(0)
        else:
            full = True
            streamed.append(work.weight_bytes)
    return tuple(streamed)
