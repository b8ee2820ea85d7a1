"""Time `invoke` of accelsim's interpreter next to LiteRT's kernels on the same inputs.

Single-threaded on both sides: LiteRT with num_threads=1, NumPy's BLAS pinned to one
thread (set before NumPy loads). LiteRT's reference kernels (BUILTIN_REF) can abort the
process on some int8 models, so each BUILTIN_REF measurement runs in a subprocess.

Usage:
    python benchmarks/interpreter.py [--runs N] [--min-time S] [--warmup N] [--only NAME ...] [--no-ref]
    python benchmarks/interpreter.py --ops [--top N] [--only NAME ...]
    python benchmarks/interpreter.py --memory [--only NAME ...]

Prints one row per fixture model: median invoke time of ours, LiteRT builtin and LiteRT
reference (ms), and the ratios ours/builtin and ours/reference. Each median is over at least
--runs invokes and at least --min-time seconds of them (small models get thousands of runs); ours
and builtin are timed in alternating rounds so that the machine's drift hits both sides.
With --ops, prints instead where our invoke time goes: per op type, the host time per invoke,
kernel calls per invoke and microseconds per call (ops inside WHILE/IF bodies included; a
control-flow op's own row includes its bodies). With --memory, prints each model's peak
resident memory in a fresh process (ru_maxrss after construct + allocate_tensors + one invoke),
next to that process's resident memory once NumPy and the runtime are imported.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "models"
ROUNDS = 10  # alternating measurement rounds per model (see time_side_by_side)
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))


def _inputs(details, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for d in details:
        dtype = np.dtype(d["dtype"])
        shape = tuple(int(x) for x in d["shape"])
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype))
    return out


def _prepared(interpreter, inputs, warmup: int):
    """`interpreter` allocated, with `inputs` set and `warmup` untimed invokes run."""
    interpreter.allocate_tensors()
    for d, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], x)
    for _ in range(warmup):
        interpreter.invoke()
    return interpreter


def _sample(interpreter, times: list[float], runs: int, seconds: float) -> None:
    """Append the duration of each invoke to `times`: at least `runs` invokes and `seconds` of them."""
    clock = time.perf_counter
    start, n = clock(), 0
    while n < runs or clock() - start < seconds:
        t0 = clock()
        interpreter.invoke()
        times.append(clock() - t0)
        n += 1


def time_invoke(interpreter, inputs, runs: int, warmup: int, min_time: float = 0.0) -> float:
    """Median seconds of invoke() after warm-up, inputs set once: at least `runs` and `min_time` seconds."""
    times: list[float] = []
    _sample(_prepared(interpreter, inputs, warmup), times, runs, min_time)
    return statistics.median(times)


def time_side_by_side(interpreters, inputs, runs: int, warmup: int, min_time: float,
                      rounds: int = ROUNDS) -> list[float]:
    """Median seconds of invoke() of each interpreter, measured in alternating rounds.

    The machine's speed drifts (other tenants, frequency): timing one interpreter after the other
    puts a drift into the ratio, alternating short rounds spreads it over both sides.
    """
    prepared = [_prepared(it, inputs, warmup) for it in interpreters]
    times: list[list[float]] = [[] for _ in prepared]
    for _ in range(rounds):
        for it, acc in zip(prepared, times):
            _sample(it, acc, max(1, runs // rounds), min_time / rounds)
    return [statistics.median(t) for t in times]


def op_profile(path: Path, min_time: float) -> tuple[float, list[tuple[str, float, float]]]:
    """(ms per invoke, [(op, seconds per invoke, calls per invoke)]) of our interpreter on `path`.

    Every node's registration is swapped for one whose invoke is timed (registrations are frozen
    dataclasses, shared between nodes: each node gets its own timed copy).
    """
    import dataclasses
    from collections import Counter

    from accelsim.runtime import Interpreter

    it = Interpreter(model_path=path, num_threads=1)
    total, calls = Counter(), Counter()
    clock = time.perf_counter

    def timed(invoke, op):
        def run(ctx, node):
            t0 = clock()
            try:
                return invoke(ctx, node)
            finally:
                total[op] += clock() - t0
                calls[op] += 1
        return run

    for i in range(it.num_subgraphs()):
        for node in it.subgraph(i).nodes:
            reg = node.registration
            if reg is not None and reg.invoke is not None:
                node.registration = dataclasses.replace(reg, invoke=timed(reg.invoke, node.op_name))
    inputs = _inputs(it.get_input_details())
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    total.clear()
    calls.clear()
    n, start = 0, clock()
    while n < 20 or clock() - start < min_time:
        it.invoke()
        n += 1
    elapsed = (clock() - start) / n
    rows = sorted(((op, t / n, calls[op] / n) for op, t in total.items()), key=lambda r: -r[1])
    return elapsed * 1e3, rows


def _ops_table(paths, min_time: float, top: int) -> None:
    for path in paths:
        ms, rows = op_profile(path, min_time)
        print(f"{path.stem}: {ms:.3f} ms per invoke (with timing wrappers)")
        print(f"  {'op':<26} {'ms/invoke':>10} {'%':>6} {'calls/invoke':>13} {'us/call':>9}")
        for op, seconds, calls in rows[:top]:
            print(f"  {op:<26} {seconds * 1e3:10.4f} {100 * seconds * 1e3 / ms:6.1f} {calls:13.1f} "
                  f"{seconds / calls * 1e6:9.2f}")


def litert(path: Path, resolver: str):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    return Interpreter(model_path=str(path), num_threads=1,
                       experimental_op_resolver_type=getattr(OpResolverType, resolver))


def _ref_in_subprocess(path: Path, runs: int, warmup: int, min_time: float) -> float | None:
    """BUILTIN_REF median in a child process (it can abort); None if the child died."""
    cmd = [sys.executable, __file__, "--ref-worker", str(path), "--runs", str(runs), "--warmup", str(warmup),
           "--min-time", str(min_time)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def _rss_mb() -> float:
    """This process's peak resident set so far, in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _memory_worker(path: Path) -> dict[str, float]:
    """Peak RSS after importing the runtime, and after construct + allocate_tensors + one invoke."""
    from accelsim.runtime import Interpreter

    imported = _rss_mb()
    it = Interpreter(model_path=path, num_threads=1)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), _inputs(it.get_input_details())):
        it.set_tensor(d["index"], x)
    it.invoke()
    return {"imported": imported, "peak": _rss_mb()}


def _memory_table(paths) -> None:
    header = f"{'model':<28} {'model MB':>9} {'import MB':>10} {'peak MB':>9} {'peak - import':>14}"
    print(header)
    print("-" * len(header))
    for path in paths:
        cmd = [sys.executable, __file__, "--memory-worker", str(path)]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        size = path.stat().st_size / 2**20
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            print(f"{path.stem:<28} {size:9.1f} failed: {lines[-1] if lines else result.returncode}")
            continue
        m = json.loads(result.stdout.strip().splitlines()[-1])
        print(f"{path.stem:<28} {size:9.1f} {m['imported']:10.1f} {m['peak']:9.1f} {m['peak'] - m['imported']:14.1f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="at least this many timed invokes per model")
    parser.add_argument("--min-time", type=float, default=0.5,
                        help="and at least this many seconds of timed invokes per measurement (default 0.5)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed invokes first")
    parser.add_argument("--only", nargs="*", help="fixture names (file stems) to run")
    parser.add_argument("--no-ref", action="store_true", help="skip LiteRT's reference kernels (slow)")
    parser.add_argument("--memory", action="store_true", help="print peak resident memory per model instead")
    parser.add_argument("--ops", action="store_true", help="print our per-op host time per model instead")
    parser.add_argument("--top", type=int, default=12, help="with --ops: op types shown per model")
    parser.add_argument("--ref-worker", help=argparse.SUPPRESS)
    parser.add_argument("--memory-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ref_worker:
        it = litert(Path(args.ref_worker), "BUILTIN_REF")
        print(json.dumps(time_invoke(it, _inputs(it.get_input_details()), args.runs, args.warmup, args.min_time)))
        return 0
    if args.memory_worker:
        print(json.dumps(_memory_worker(Path(args.memory_worker))))
        return 0

    from accelsim.runtime import Interpreter
    from accelsim.runtime.errors import AccelsimError

    paths = [p for p in sorted(FIXTURES.glob("*.tflite")) if p.stem != "atan_custom"]
    if args.only:
        paths = [p for p in paths if p.stem in args.only]
    if args.memory:
        _memory_table(paths)
        return 0
    if args.ops:
        _ops_table(paths, args.min_time, args.top)
        return 0
    header = f"{'model':<28} {'ours ms':>9} {'builtin ms':>10} {'ref ms':>9} {'ours/builtin':>12} {'ours/ref':>9}"
    slower_than_ref = []
    print(header)
    print("-" * len(header))
    ratios = []
    for path in paths:
        builtin_it = litert(path, "BUILTIN_WITHOUT_DEFAULT_DELEGATES")
        inputs = _inputs(builtin_it.get_input_details())
        try:
            ours, builtin = time_side_by_side([Interpreter(model_path=path, num_threads=1), builtin_it], inputs,
                                              args.runs, args.warmup, args.min_time)
        except AccelsimError as exc:
            print(f"{path.stem:<28} failed: {str(exc).splitlines()[0]}")
            continue
        ref = None if args.no_ref else _ref_in_subprocess(path, max(3, args.runs // 3), 1, args.min_time)
        ref_txt = f"{ref * 1e3:9.3f}" if ref else f"{'abort' if not args.no_ref else '-':>9}"
        if ref and ours > ref:
            slower_than_ref.append(path.stem)
        ratio_ref = f"{ours / ref:9.2f}" if ref else f"{'-':>9}"
        ratios.append(ours / builtin)
        print(f"{path.stem:<28} {ours * 1e3:9.3f} {builtin * 1e3:10.3f} {ref_txt} {ours / builtin:12.2f} {ratio_ref}")
    if ratios:
        print(f"median ours/builtin over {len(ratios)} models: {statistics.median(ratios):.2f}")
    if not args.no_ref:
        print(f"slower than LiteRT's reference kernels: {', '.join(slower_than_ref) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
