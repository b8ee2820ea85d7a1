"""One model on one system, run and simulated: what `accelsim benchmark` measures and prints.

The interpreter runs the model on random inputs (host wall-clock times of the NumPy
interpreter, as TFLite's benchmark_model times its runs), and the run is simulated on the
system. The simulated numbers are the same typed record an experiment stores for a design point
(`accelsim.reports.results.record`), its speed-up over the host alone filled in by the one function
that computes it (`accelsim.reports.results.speedup`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from accelsim.core.files import write_atomic
from accelsim.core.record import PointResult
from accelsim.core.units import counted
from accelsim.hardware.assumptions import assumption_lines
from accelsim.hardware.config import System
from accelsim.ops import require_kernels
from accelsim.reports.exports import layers_csv, op_profile_text
from accelsim.reports.partition_plot import partition_png
from accelsim.reports.results import layer_rows, record, speedup
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.costing import simulate_interpreter
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.diff import random_input
from accelsim.simulation.inference import Simulation
from accelsim.simulation.placement import cost_aware_interpreter
from accelsim.tools.compare import host_only
from accelsim.tools.cost_only import cost_only_run


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
        record: its results.json record (`accelsim.reports.results.record`), speed-up filled in.
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
    With `num_runs` 0 nothing runs: the model is costed as experiments cost it (`accelsim.tools.cost_only`).

    Raises:
        ModelError, OpResolutionError, WorkError: the model cannot be read, resolved or costed.
    """
    loops = loops if loops is not None else LoopTrips()
    if num_runs == 0:  # cost only: no NumPy run, no numeric preparation (accelsim.tools.cost_only)
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
        "host_calibration": run.system.host.hardware.calibration,
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
        "warnings": list(run.sim.notes),
    }
    if op_profiling:
        data["op_profile"], data["op_summary"] = rec["op_profile"], rec["op_summary"]
    if per_layer:
        data["layers"] = layer_rows(rec)
    return data


def _stats_line(times: Sequence[float]) -> str:
    std = statistics.pstdev(times) if len(times) > 1 else 0.0
    return (f"count={len(times)} first={times[0]:.0f} curr={times[-1]:.0f} min={min(times):.0f} "
            f"max={max(times):.0f} avg={statistics.fmean(times):.0f} std={std:.0f}")


def benchmark_lines(run: Benchmark, data: dict[str, Any]) -> list[str]:
    """What `accelsim benchmark` prints of `run` (`data`: its `benchmark_data`, with the partition plot's path
    under "partition_plot" when one was drawn), in benchmark_model's layout where the two overlap."""
    sim, warmup, runs, init_us, host_us = run.sim, run.warmup_us, run.runs_us, run.init_us, run.host_only_us
    out = [f"Graph: [{run.model}]",
           f"Host: [{run.system.host.name}]  Accelerators: [{', '.join(data['accelerators']) or 'none'}]",
           f"Host {run.system.host.name}: {run.system.host.hardware.calibration}"]
    if not runs:
        out.append(f"Cost only (--num-runs 0): analysed shapes and work in {init_us / 1e3:.3f}ms; the NumPy "
                   "interpreter did not run.")
    else:
        out.append(f"Initialized session in {init_us / 1e3:.3f}ms.")
        if warmup:
            out += [f"Running benchmark for {len(warmup)} warm-up iterations:", _stats_line(warmup)]
        out += [f"Running benchmark for {len(runs)} iterations:", _stats_line(runs)]
        warm = f"{statistics.fmean(warmup):.0f}" if warmup else "-"
        out.append(f"Inference timings in µs (host wall clock of the NumPy interpreter): Init: {init_us:.0f}, "
                   f"First inference: {(warmup or runs)[0]:.0f}, Warmup (avg): {warm}, Inference (avg): "
                   f"{statistics.fmean(runs):.0f}")
    sim_us = data["simulated_us"]
    out.append(f"Simulated latency in µs: {sim_us['latency']:.1f} (compute {sim_us['compute']:.1f}, memory "
               f"{sim_us['memory']:.1f}, transfer {sim_us['transfer']:.1f}, call overhead {sim_us['overhead']:.1f}; "
               f"partition overhead {data['partition_overhead_pct']:.1f}%); initialization {sim_us['init']:.1f}")
    if data["energy_uj"] is None:
        out.append(f"Simulated energy per inference: not modelled (no energy.mac for "
                   f"{', '.join(sim.energy_unmodelled)})")
    else:
        out.append(f"Simulated energy per inference: {data['energy_uj']:.3f} uJ")
    if run.system.accelerators:
        out.append(f"Host alone ({run.system.host.name}, simulated): {host_us:.1f} µs; speed-up "
                   f"{data['speedup']:.2f}x")
    out.append(f"Delegated {sim.delegated_nodes} of {counted(len(sim.nodes), 'node')} in "
               f"{counted(len(sim.partitions), 'partition')}; "
               f"{sim.transfer_bytes} bytes over links per inference")
    if data["streamed_param_bytes"] or data["init_param_bytes"]:
        # Two different acts, never both said of the same bytes: a copy over the link at initialization (into a
        # cache, or onto the accelerator's own memory where the weights live) and a read on every inference.
        out.append(f"Weights: {data['streamed_param_bytes']} bytes read on every inference from the level they live "
                   f"on (not cached); {data['init_param_bytes']} bytes copied over the link once at initialization")
    out += [f"Warning: {note}" for note in data["warnings"]]
    if data["assumptions"]:
        out.append("Assumptions (cost numbers the configs leave out, and what is used instead):")
        out += [f"  {line}" for line in data["assumptions"]]
    chosen = data["partition_choice"]
    if chosen is not None:
        out.append(f"Partition policy cost ({chosen['objective']}, {chosen['search']} search): kept "
                   f"{len(chosen['host_partitions'])} of TFLite's {chosen['tflite_partitions']} partitions on the "
                   f"host; TFLite's choice {chosen['tflite_latency_us']:.1f} µs, {chosen['tflite_energy_uj']:.3f} uJ; "
                   f"this one {sim_us['latency']:.1f} µs, {data['energy_uj']:.3f} uJ (saves "
                   f"{chosen['saved_us']:.1f} µs, {chosen['saved_energy_uj']:.3f} uJ)")
    if data.get("partition_plot"):
        out.append(f"Partition picture: {data['partition_plot']}")
    out += [f"  {loop.op} node {loop.where}: {loop.trips} trips ({loop.source})" for loop in sim.loops]
    out += [f"  partition {p.index} on {p.unit}: {counted(len(p.nodes), 'node')}, compute {p.compute * 1e6:.1f} µs, "
            f"memory {p.memory * 1e6:.1f} µs, transfer {p.transfer * 1e6:.1f} µs, overhead "
            f"{p.overhead * 1e6:.1f} µs, energy "
            + ("not modelled" if p.unit in sim.energy_unmodelled else f"{p.energy * 1e6:.3f} uJ")
            for p in sim.partitions]
    if "op_profile" in data:
        # benchmark_model's layout, the same text as a report's op profile (µs: simulated nodes are often < 1 µs).
        out.append(op_profile_text(run.record))
    if "layers" in data:
        out.append("Per-layer (simulated; the columns of a report's layers/<point>.csv):")
        out.append(layers_csv(run.record).removesuffix("\n"))
    return out


def write_partition_plot(run: Benchmark, path: str | Path) -> Path:
    """Draw the run's partitions (`accelsim.reports.partition_plot`) into `path`.

    Raises:
        ValueError: the picture cannot be written there (says which option named the place).
    """
    title = f"{Path(run.model).stem} on {', '.join(run.record['accelerators']) or run.record['host']}"
    try:
        return write_atomic(Path(path), partition_png(run.record, title))
    except OSError as exc:
        raise ValueError(f"--partition-plot {path}: cannot write the picture there: {exc.strerror or exc}") from exc
