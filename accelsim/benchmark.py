"""One model on one system, run and simulated: what `accelsim benchmark` measures and prints.

The interpreter runs the model on random inputs (host wall-clock times of the NumPy
interpreter, as TFLite's benchmark_model times its runs), and the run is simulated on the
system. The simulated numbers are the same typed record an experiment stores for a design point
(`accelsim.results.record`), its speed-up over the host alone filled in by the one function
that computes it (`accelsim.results.speedup`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from accelsim.assumptions import assumption_lines
from accelsim.compare import host_only
from accelsim.config import System
from accelsim.cost_only import cost_only_run
from accelsim.costing import simulate_interpreter
from accelsim.delegation import build_interpreter
from accelsim.diff import random_input
from accelsim.files import write_atomic
from accelsim.ops import require_kernels
from accelsim.partition_plot import partition_png
from accelsim.placement import cost_aware_interpreter
from accelsim.record import PointResult
from accelsim.results import layer_rows, record, speedup
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation import Simulation


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    """A benchmark run: wall-clock times (µs) and the simulated inference with its record.

    Args:
        model: the model's path.
        system: the system it ran on.
        init_us: wall-clock time to load the model and build the interpreter.
        warmup_us, runs_us: wall-clock time of each warm-up run and each timed run.
        host_only_us: simulated latency on the host alone, the speed-up's baseline.
        sim: the simulated inference.
        record: its results.json record (`accelsim.results.record`), speed-up filled in.
    """

    model: str
    system: System
    init_us: float
    warmup_us: tuple[float, ...]
    runs_us: tuple[float, ...]
    host_only_us: float
    sim: Simulation
    record: PointResult


def wallclock(interpreter, inputs: Sequence[np.ndarray], runs: int) -> list[float]:
    """Microseconds of each of `runs` invokes of `interpreter` on `inputs`."""
    for d, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], x)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        interpreter.invoke()
        times.append((time.perf_counter() - t0) * 1e6)
    return times


def _host_only_latency(model: Model, system: System, inputs, schedule: str, loops: LoopTrips) -> float:
    """Simulated seconds of the model on the host alone, run once on `inputs` so loops count the same trips."""
    baseline = host_only(system)
    interpreter, delegates = build_interpreter(model, baseline)
    wallclock(interpreter, inputs, 1)
    return simulate_interpreter(interpreter, delegates, baseline, schedule, loops=loops).latency


def run_benchmark(path: str, system: System, *, schedule: str = "sequential", loops: LoopTrips | None = None,
                  warmup_runs: int = 1, num_runs: int = 50) -> Benchmark:
    """Load, run and simulate the model at `path` on `system`.

    Partition policy 'cost' chooses before any run, cost-only (a loop's trips must be known or given).
    With `num_runs` 0 nothing runs: the model is costed as experiments cost it (`accelsim.cost_only`).

    Raises:
        ModelError, OpResolutionError, WorkError: the model cannot be read, resolved or costed.
    """
    loops = loops if loops is not None else LoopTrips()
    if num_runs == 0:  # cost only: no NumPy run, no numeric preparation (accelsim.cost_only)
        costed = cost_only_run(path, system, schedule, loops)
        sim, host_us, init_us = costed.simulation, costed.host_only.latency * 1e6, costed.setup_seconds * 1e6
        warmup, runs = [], []
    else:
        t0 = time.perf_counter()
        model = require_kernels(path)  # an unresolved custom op: the one line naming the model, the op and --ops
        interpreter, delegates, choice = cost_aware_interpreter(model, system, schedule, loops)
        init_us = (time.perf_counter() - t0) * 1e6
        rng = np.random.default_rng(0)
        inputs = [random_input(d, rng) for d in interpreter.get_input_details()]
        warmup = wallclock(interpreter, inputs, warmup_runs) if warmup_runs else []
        runs = wallclock(interpreter, inputs, num_runs)
        sim = simulate_interpreter(interpreter, delegates, system, schedule, path, loops, choice)
        host_us = _host_only_latency(model, system, inputs, schedule, loops) * 1e6
    rec = record(sim, point_id="", model=path, variant="", sweep={})
    if system.accelerators:
        rec["speedup"] = speedup(host_us, rec["latency_us"])
    return Benchmark(model=path, system=system, init_us=init_us, warmup_us=tuple(warmup), runs_us=tuple(runs),
                     host_only_us=host_us, sim=sim, record=rec)


def benchmark_data(run: Benchmark, *, op_profiling: bool = False, per_layer: bool = False) -> dict[str, Any]:
    """The run as plain data (`accelsim benchmark --json`): wall-clock times, and the record's simulated numbers."""
    rec, runs = run.record, run.runs_us
    data: dict[str, Any] = {
        "model": run.model,
        "host": rec["host"],
        "accelerators": rec["accelerators"],
        "wallclock_us": {"init": run.init_us, "warmup": list(run.warmup_us), "runs": list(runs),  # --num-runs 0: None
                         "avg": statistics.fmean(runs) if runs else None, "min": min(runs, default=None),
                         "max": max(runs, default=None)},
        "simulated_us": {"latency": rec["latency_us"], "init": rec["init_us"], "compute": rec["compute_us"],
                         "memory": rec["memory_us"], "transfer": rec["transfer_us"], "overhead": rec["overhead_us"]},
        "host_only_us": run.host_only_us,
        **{key: rec[key] for key in ("energy_uj", "speedup", "partition_overhead_pct", "partitions",
                                     "delegated_nodes", "total_nodes", "transfer_bytes", "loops",
                                     "partition_choice")},
        "energy_not_modelled": list(run.sim.energy_unmodelled),
        "init_param_bytes": run.sim.init.bytes_moved,
        "streamed_param_bytes": sum(p.streamed_param_bytes for p in run.sim.partitions),
        "assumptions": assumption_lines((run.system.host, *run.system.accelerators)),
    }
    if op_profiling:
        data["op_profile"], data["op_summary"] = rec["op_profile"], rec["op_summary"]
    if per_layer:
        data["layers"] = layer_rows(rec)
    return data


def write_partition_plot(run: Benchmark, path: str | Path) -> Path:
    """Draw the run's partitions (`accelsim.partition_plot`) into `path`.

    Raises:
        ValueError: the picture cannot be written there (says which option named the place).
    """
    title = f"{Path(run.model).stem} on {', '.join(run.record['accelerators']) or run.record['host']}"
    try:
        return write_atomic(Path(path), partition_png(run.record, title))
    except OSError as exc:
        raise ValueError(f"--partition-plot {path}: cannot write the picture there: {exc.strerror or exc}") from exc
