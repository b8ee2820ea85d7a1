"""Simulated host latency against LiteRT's measured one, on every fixture model, on this machine.

LiteRT runs with its default delegate (XNNPACK) and num_threads=1; accelsim simulates the same
model cost-only on a host config that describes this machine (default `native`: the shipped x86
profile of this CPU's instruction set, `accelsim.experiments.hosts`; pass `--host` for another).
Both are measured in the same run, so the ratio simulated/measured is
what the host model explains; its spread (max/min over the models) says whether one set of
numbers serves CNNs, recurrent and transformer models alike. Loop trip counts used by the
simulation are printed with where they came from.

Usage:
    python benchmarks/cost_vs_litert.py [--host CFG|native] [--rounds R] [--runs N] [--min-time S] [--only NAME ...]

Prints the machine and date, then one row per model: whether it is a fit row of host_x86
(`benchmarks/fit_host_x86.py` fits on FIT_ROWS, the 14 fixtures of its last fit; a fixture added
since is held out),
LiteRT's invoke time (us), the simulated latency (us), their ratio (simulated / measured), then
the spread. The machine is shared, and another job slows a model by
up to 3x for seconds at a time, so the models are timed in --rounds alternating rounds (each at
least --runs invokes and --min-time seconds) and a model's time is its fastest round's median.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.experiments.experiment import resolve_config  # noqa: E402
from accelsim.experiments.hosts import NATIVE, read_native_host  # noqa: E402
from accelsim.hardware.config import load_system  # noqa: E402
from accelsim.ops import using_ops  # noqa: E402
from accelsim.simulation.analysis import simulate_model  # noqa: E402
from benchmarks.calibration import FIT, HELD_OUT, error_lines  # noqa: E402
from benchmarks.interpreter import _inputs  # noqa: E402  (the same seeded inputs as the interpreter benchmark)

FIXTURES = ROOT / "tests" / "fixtures" / "models"
# Models LiteRT cannot run as they are: the custom op "Atan" has no kernel in LiteRT.
SKIPPED = {"atan_custom": "custom op Atan has no LiteRT kernel"}
# host_x86's fit rows (benchmarks/fit_host_x86.py fits on these alone): the 14 fixtures LiteRT ran when the
# YAML's rates were fitted. A fixture added since is held out until a refit takes it in.
FIT_ROWS = frozenset({
    "dilated_cnn_float", "dilated_cnn_int8", "interleaved_float", "interleaved_int8", "lstm_gru_float",
    "lstm_gru_steps20_float", "mobilenet_v2_035_96_float", "mobilenet_v2_035_96_fp16", "mobilenet_v2_035_96_int8",
    "mobilenet_v2_100_224_int8", "segmentation_float", "sparse_float", "transformer_block_float",
    "transformer_block_int8"})
# Fixtures whose custom ops accelsim runs with an op pack (LiteRT's builtin resolver has these kernels).
OP_MODULES = {"selfie_like_float": "accelsim.ops.mediapipe"}


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


def runnable_fixtures(only: list[str] | None = None) -> tuple[list[Path], list[str]]:
    """The fixture models LiteRT can run (filtered by file stem), and a line for each one skipped."""
    paths, skipped = [], []
    for path in sorted(FIXTURES.glob("*.tflite")):
        if only and path.stem not in only:
            continue
        if path.stem in SKIPPED:
            skipped.append(f"skipped {path.stem}: {SKIPPED[path.stem]}")
            continue
        paths.append(path)
    return paths, skipped


def measure(paths: list[Path], rounds: int, runs: int, min_time: float) -> dict[Path, list[float]]:
    """Each model's median seconds per invoke in each of `rounds` alternating rounds (LiteRT, one thread)."""
    interpreters = {p: litert_interpreter(p) for p in paths}
    medians: dict[Path, list[float]] = {p: [] for p in paths}
    for _ in range(rounds):
        for p in paths:
            medians[p].append(round_median(interpreters[p], runs, min_time))
    return medians


def machine() -> str:
    """This machine and today's date, as the host YAML records them."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    isa = ", ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "amx_int8") if f in flags) or "no AVX flags read"
    return (f"{model} ({isa}; {os.cpu_count()} cores), {platform.system()} {platform.release()}, "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}")


def simulated(path: Path, host: str) -> tuple[float, str]:
    """(simulated latency in us, the loop trip counts used) of `path` on the host alone."""
    module = OP_MODULES.get(path.stem)
    with using_ops([module] if module else []):
        sim = simulate_model(str(path), load_system(resolve_config(host, ROOT), []))
    loops = ", ".join(f"{c.where}: {c.trips} ({c.source})" for c in sim.loops)
    return sim.latency * 1e6, loops


def spread(rows: list[Row]) -> float:
    """max/min of the ratios: 1.0 when one factor explains every model."""
    ratios = [r.ratio for r in rows]
    return max(ratios) / min(ratios)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=NATIVE,
                        help="host config: path, shipped name, or native (the default: the shipped x86 profile of "
                             "this CPU's instruction set)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds over the models (default 5)")
    parser.add_argument("--runs", type=int, default=20, help="at least this many invokes per model and round")
    parser.add_argument("--min-time", type=float, default=0.2, help="and at least this many seconds of them")
    parser.add_argument("--only", nargs="*", help="model names (file stems) to run")
    args = parser.parse_args(argv)
    if args.host == NATIVE:
        args.host = read_native_host()
        print(f"--host native: {args.host} (this CPU's instruction set; accelsim.experiments.hosts)")
    paths, skipped = runnable_fixtures(args.only)
    print("\n".join(skipped))
    medians = measure(paths, args.rounds, args.runs, args.min_time)
    rows = []
    for p in paths:
        sim_us, loops = simulated(p, args.host)
        rows.append(Row(p.stem, min(medians[p]) * 1e6, max(medians[p]) * 1e6, sim_us, loops))
    print(f"machine: {machine()}")
    print(f"host config: {args.host}; LiteRT XNNPACK, num_threads=1, thread CPU time; {args.rounds} rounds")
    print(f"{'model':<28} {'set':<8} {'LiteRT us':>10} {'(slowest)':>10} {'simulated':>10} {'sim/LiteRT':>10}  loops")
    fit_rows = FIT_ROWS if args.host == "host_x86" else set()
    for r in rows:
        kind = FIT if r.model in fit_rows else HELD_OUT
        print(f"{r.model:<28} {kind:<8} {r.measured_us:10.1f} {r.slowest_us:10.1f} {r.simulated_us:10.1f} "
              f"{r.ratio:10.2f}  {r.loops or '-'}")
    if rows:
        low, high = min(rows, key=lambda r: r.ratio), max(rows, key=lambda r: r.ratio)
        print(f"ratio spread (max/min): {spread(rows):.2f}x  (lowest {low.model} {low.ratio:.2f}, "
              f"highest {high.model} {high.ratio:.2f})")
        print("\n".join(error_lines(f"{args.host} / LiteRT", [(FIT if r.model in fit_rows else HELD_OUT, r.ratio)
                                                             for r in rows])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
