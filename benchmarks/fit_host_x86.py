"""Fit host_x86's rates to LiteRT on this machine: the command behind hw_configs/host_x86.yaml's fitted numbers.

Times LiteRT (XNNPACK, num_threads=1, thread CPU time; `cost_vs_litert.py`'s measurement, fastest
round's median) on the fit rows, `cost_vs_litert.FIT_ROWS`. Then moves the fitted fields
(`FITTED`) on the grid the YAML rounds them to, from the YAML's own values, to a local minimum of
the sum over the fit rows of the squared log ratio simulated / measured (coordinate descent by
16, 8, 4, 2 and 1 grid steps until no single step lowers it), per-cycle rates bounded by the
core's two vector ports (`ceiling`). The GEMM peaks, the clock, the L2
size and the DRAM bandwidth stay as the YAML cites them.

Prints the machine and date, each model's measured and simulated time before and after, the
fitted values beside the YAML's, and the spread (max/min of simulated / measured) before and
after: what the YAML would hold on this machine, and how well the shipped values transfer to it.
Writes nothing. The result depends on the machine and on what else runs on it; the YAML records
where and when its values were fitted.

Usage:
    python benchmarks/fit_host_x86.py [--host CFG] [--rounds R] [--runs N] [--min-time S]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.core import units  # noqa: E402
from accelsim.experiments.experiment import resolve_config  # noqa: E402
from accelsim.hardware.config import System, apply_overrides, load_hardware  # noqa: E402
from accelsim.hardware.device import Device  # noqa: E402
from accelsim.hardware.roofline import dtype_itemsize  # noqa: E402
from accelsim.simulation.analysis import analyze, simulate_analysis  # noqa: E402
from benchmarks.cost_vs_litert import FIT_ROWS, machine, measure, runnable_fixtures  # noqa: E402

# The fitted fields (override key paths) and the grid the YAML rounds each to.
FITTED = {
    "compute.row_cycles.float32": 1, "compute.row_cycles.int8": 1,
    "compute.vector_per_cycle.float32": 1, "compute.vector_per_cycle.int8": 1,
    "compute.lookups_per_cycle.int8": 0.1,
    "compute.move_per_cycle.float32": 0.05, "compute.move_per_cycle.int8": 0.05,
    "compute.node_cycles": 10,
    "memory.levels.l2.bandwidth": 1,  # GB/s
}
_MOVES = (16, 8, 4, 2, 1)


def ceiling(path: str, host: Device) -> float:
    """The most a fitted rate may reach: per-cycle rates stay within the core's two vector ports of one
    SIMD register each (simd_bits / 8 / itemsize lanes, as the YAML's ISA facts give); other fields are free.
    Whole-model times alone leave some rates unbounded (a model with few such ops barely feels them)."""
    section, dtype = path.split(".")[-2:] if path.count(".") == 2 else ("", "")
    if section not in ("vector_per_cycle", "lookups_per_cycle", "move_per_cycle"):
        return math.inf
    return 2 * host.hardware.compute.simd_bits // (8 * dtype_itemsize(dtype))


def current(host: Device) -> dict[str, float]:
    """The YAML's value of every FITTED field (the L2 bandwidth in GB/s)."""
    out = {}
    for path in FITTED:
        node = host.document.data
        for key in path.split("."):
            node = node[key]
        out[path] = units.parse_rate(node) / 1e9 if path.endswith("bandwidth") else node
    return out


def with_values(host: Device, values: Mapping[str, float]) -> Device:
    """`host` with the FITTED fields set to `values` (checked as a YAML file is)."""
    return apply_overrides(host, {p: f"{v:g} GB/s" if p.endswith("bandwidth") else v for p, v in values.items()})


def on_grid(path: str, value: float) -> float:
    step = FITTED[path]
    units_ = round(value / step)
    return int(units_ * step) if isinstance(step, int) else round(units_ * step, 10)


def latencies(analyses: Sequence, host: Device) -> list[float]:
    """Simulated seconds of each analysed model on `host` alone."""
    system = System(host, ())
    return [simulate_analysis(a, system).latency for a in analyses]


def error(analyses: Sequence, host: Device, measured: Sequence[float]) -> float:
    """Sum of squared log ratios simulated / measured."""
    return sum(math.log(s / m) ** 2 for s, m in zip(latencies(analyses, host), measured))


def fit(analyses: Sequence, host: Device, measured: Sequence[float]) -> dict[str, float]:
    """The FITTED values at a local minimum of `error` on the grid, from `host`'s own values (within `ceiling`)."""
    best = {p: min(on_grid(p, v), ceiling(p, host)) for p, v in current(host).items()}
    best_error = error(analyses, with_values(host, best), measured)
    improved = True
    while improved:
        improved = False
        for path in FITTED:
            for moves in _MOVES:
                while True:
                    trials = []
                    for sign in (1, -1):
                        value = on_grid(path, best[path] + sign * moves * FITTED[path])
                        if value <= 0 or value > ceiling(path, host):
                            continue
                        trial = {**best, path: value}
                        trials.append((error(analyses, with_values(host, trial), measured), -sign, trial))
                    if not trials:
                        break
                    trial_error, _, trial = min(trials, key=lambda t: t[:2])
                    if trial_error >= best_error:
                        break
                    best, best_error, improved = trial, trial_error, True
    return best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="host_x86", help="host config: path or shipped name (default host_x86)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds over the models (default 5)")
    parser.add_argument("--runs", type=int, default=20, help="at least this many invokes per model and round")
    parser.add_argument("--min-time", type=float, default=0.2, help="and at least this many seconds of them")
    args = parser.parse_args(argv)
    host = load_hardware(resolve_config(args.host, ROOT))
    paths, skipped = runnable_fixtures(sorted(FIT_ROWS))
    print("\n".join(skipped))
    medians = measure(paths, args.rounds, args.runs, args.min_time)
    measured = [min(medians[p]) for p in paths]
    analyses = [analyze(str(p), System(host, ())) for p in paths]
    fitted = fit(analyses, host, measured)
    before, after = latencies(analyses, host), latencies(analyses, with_values(host, fitted))
    print(f"machine: {machine()}")
    print(f"fit rows: the {len(paths)} fixtures of FIT_ROWS (benchmarks/cost_vs_litert.py); LiteRT XNNPACK, "
          f"num_threads=1, thread CPU time, "
          f"fastest of {args.rounds} rounds' medians")
    print(f"{'model':<28} {'LiteRT us':>10} {'YAML us':>10} {'ratio':>6} {'fit us':>10} {'ratio':>6}")
    for p, m, b, a in zip(paths, measured, before, after):
        print(f"{p.stem:<28} {m * 1e6:10.1f} {b * 1e6:10.1f} {b / m:6.2f} {a * 1e6:10.1f} {a / m:6.2f}")
    spread_before = max(b / m for b, m in zip(before, measured)) / min(b / m for b, m in zip(before, measured))
    spread_after = max(a / m for a, m in zip(after, measured)) / min(a / m for a, m in zip(after, measured))
    print(f"spread (max/min of simulated / measured): YAML {spread_before:.2f}x, fit {spread_after:.2f}x")
    shipped = current(host)
    grid = ", ".join(f"{k} {v}" for k, v in FITTED.items())
    print(f"{args.host}: what the YAML would hold on this machine (grid: {grid})")
    for path in FITTED:
        unit = " GB/s" if path.endswith("bandwidth") else ""
        mark = ", differs" if fitted[path] != shipped[path] else ""
        print(f"  {path}: {fitted[path]:g}{unit}  (YAML {shipped[path]:g}{unit}{mark})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
