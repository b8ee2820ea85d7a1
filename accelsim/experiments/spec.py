"""An experiment as loaded: its variants, sweeps, limits and options (`accelsim.experiments.experiment` reads the
file into an `Experiment`; `accelsim.experiments.points` turns one into design points).

A worker unpickling design points needs this module only, not the file's checks or the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from accelsim.core.pareto import DEFAULT_BEST
from accelsim.hardware.device import Device
from accelsim.hardware.sweeps import Limit, Search
from accelsim.runtime.work import LoopTrips

# The most design points `run` accepts unless told more (`--max-points`, or `limits: {points: N}` in the file): a
# sweep's cross product grows fast, and a typo in a range should be refused with its count, not run for hours.
MAX_POINTS = 100_000
# The partition options an experiment variant or sweep may set on every accelerator of a point.
OPTION_KEYS = ("max_delegated_partitions", "min_nodes_per_partition")


# The keys of a `generate:` block (LLM generation, accelsim.workloads) and their defaults (None: required).
GENERATE_KEYS = {"prefill": None, "decode": None, "context": 0, "quant": "int4", "kv_buffers": 1}


@dataclass(frozen=True)
class Variant:
    name: str
    accelerators: tuple[str, ...]  # config file paths, applied in order
    options: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Streams:
    """An experiment's `streams:` block as checked: the settings, each stream's own, the stream sweeps.

    `settings` holds mode, count, segmentation, frames, rate, max_in_flight, max_in_queue (rate from a period
    already); `graph` is each stream's name, model path, depends_on and own settings (empty: each point's model).
    """

    settings: Mapping[str, Any]
    graph: tuple[Mapping[str, Any], ...] = ()
    sweeps: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # ('count', (1, 2, 4)): keys of the block


@dataclass(frozen=True, kw_only=True)
class Experiment:
    name: str
    source: str
    models: tuple[str, ...]
    host: str
    variants: tuple[Variant, ...]
    sweeps: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    schedule: str = "sequential"
    numerics_runs: int = 0
    reports: tuple[str, ...] | None = None  # report formats (accelsim.reports.report.RENDERERS); None: all
    loops: LoopTrips = field(default_factory=LoopTrips)
    search: Search = Search()
    limits: tuple[Limit, ...] = ()
    traces: str = "pareto"  # accelsim.core.pareto.TRACES
    best: int = DEFAULT_BEST  # with traces pareto: the fastest `best` points are traced too
    pareto_color: str | None = None  # the swept key colouring the Pareto plot; None: the first swept key
    # The hardware configs its files name, by path, as loading read them: design points reuse them rather than
    # read every file again (accelsim.hardware.config.load_system's `loaded`).
    configs: dict[str, Device] = field(default_factory=dict, compare=False, repr=False)
    # `generate:`: every point is an LLM generating (prefill, decode, context 0 = prefill + decode, quant,
    # kv_buffers), models are architecture names or LLM files; None: one inference per point.
    generate: Mapping[str, Any] | None = None
    max_points: int = MAX_POINTS  # `limits: {points: N}`: the most design points `run` accepts
    ops: tuple[str, ...] = ()  # custom-op modules (accelsim.ops.resolve_spec: names, or absolute .py paths)
    streams: Streams | None = None  # the `streams:` block (accelsim.workloads.streams), None without one
