"""Simulated host latency against LiteRT's measured one, on every fixture model, on this machine.

LiteRT runs with its default delegate (XNNPACK) and num_threads=1; accelsim simulates the same
model cost-only on a host config that describes this machine (default `hw_configs/host_x86.yaml`;
pass `--host` for another). Both are measured in the same run, so the ratio simulated/measured is
what the host model explains; its spread (max/min over the models) says whether one set of
numbers serves CNNs, recurrent and transformer models alike. Loop trip counts used by the
simulation are printed with where they came from.

Usage:
    python benchmarks/cost_vs_litert.py [--host CFG] [--rounds R] [--runs N] [--min-time S] [--only NAME ...]

Prints one row per model: LiteRT's invoke time (us), the simulated latency (us), their ratio
(simulated / measured), then the spread. The machine is shared, and another job slows a model by
up to 3x for seconds at a time, so the models are timed in --rounds alternating rounds (each at
least --runs invokes and --min-time seconds) and a model's time is its fastest round's median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.analysis import simulate_model  # noqa: E402
from accelsim.config import load_system  # noqa: E402
from accelsim.experiment import resolve_config  # noqa: E402
from benchmarks.interpreter import _inputs  # noqa: E402  (the same seeded inputs as the interpreter benchmark)

FIXTURES = ROOT / "tests" / "fixtures" / "models"
# Models LiteRT cannot run as they are: the custom op "Atan" has no kernel in LiteRT.
SKIPPED = {"atan_custom": "custom op Atan has no LiteRT kernel"}


@dataclass(frozen=True)
class Row:
    model: str
    measured_us: float  # LiteRT: the fastest round's median
    slowest_us: float  # LiteRT: the slowest round's median (how much the machine moved)
    simulated_us: float
    loops: str

    @property
    def ratio(self) -> float:
        return self.simulated_us / self.measured_us


def litert_interpreter(path: Path, warmup: int = 5):
    """LiteRT on `path` with its default delegates (XNNPACK) on one thread, inputs set, warmed up."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), num_threads=1, experimental_op_resolver_type=OpResolverType.AUTO)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), _inputs(it.get_input_details())):
        it.set_tensor(d["index"], x)
    for _ in range(warmup):
        it.invoke()
    return it


def round_median(interpreter, runs: int, min_time: float) -> float:
    """Median CPU seconds of this thread per invoke, over at least `runs` invokes and `min_time` wall seconds."""
    times: list[float] = []
    cpu, wall = time.thread_time, time.perf_counter
    start = wall()
    while len(times) < runs or wall() - start < min_time:
        t0 = cpu()
        interpreter.invoke()
        times.append(cpu() - t0)
    return statistics.median(times)


def simulated(path: Path, host: str) -> tuple[float, str]:
    """(simulated latency in us, the loop trip counts used) of `path` on the host alone."""
    sim = simulate_model(str(path), load_system(resolve_config(host, ROOT), []))
    loops = ", ".join(f"{c.where}: {c.trips} ({c.source})" for c in sim.loops)
    return sim.latency * 1e6, loops


def spread(rows: list[Row]) -> float:
    """max/min of the ratios: 1.0 when one factor explains every model."""
    ratios = [r.ratio for r in rows]
    return max(ratios) / min(ratios)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="host_x86", help="host config: path or shipped name (default host_x86)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds over the models (default 5)")
    parser.add_argument("--runs", type=int, default=20, help="at least this many invokes per model and round")
    parser.add_argument("--min-time", type=float, default=0.2, help="and at least this many seconds of them")
    parser.add_argument("--only", nargs="*", help="model names (file stems) to run")
    args = parser.parse_args(argv)
    paths = []
    for path in sorted(FIXTURES.glob("*.tflite")):
        if args.only and path.stem not in args.only:
            continue
        if path.stem in SKIPPED:
            print(f"skipped {path.stem}: {SKIPPED[path.stem]}")
            continue
        paths.append(path)
    interpreters = {p: litert_interpreter(p) for p in paths}
    medians: dict[Path, list[float]] = {p: [] for p in paths}
    for _ in range(args.rounds):
        for p in paths:
            medians[p].append(round_median(interpreters[p], args.runs, args.min_time))
    rows = []
    for p in paths:
        sim_us, loops = simulated(p, args.host)
        rows.append(Row(p.stem, min(medians[p]) * 1e6, max(medians[p]) * 1e6, sim_us, loops))
    print(f"host config: {args.host}; LiteRT XNNPACK, num_threads=1, thread CPU time; {args.rounds} rounds")
    print(f"{'model':<28} {'LiteRT us':>10} {'(slowest)':>10} {'simulated':>10} {'sim/LiteRT':>10}  loops")
    for r in rows:
        print(f"{r.model:<28} {r.measured_us:10.1f} {r.slowest_us:10.1f} {r.simulated_us:10.1f} {r.ratio:10.2f}  "
              f"{r.loops or '-'}")
    if rows:
        low, high = min(rows, key=lambda r: r.ratio), max(rows, key=lambda r: r.ratio)
        print(f"ratio spread (max/min): {spread(rows):.2f}x  (lowest {low.model} {low.ratio:.2f}, "
              f"highest {high.model} {high.ratio:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
