"""Time `invoke` of accelsim's interpreter next to LiteRT's kernels on the same inputs.

Single-threaded on both sides: LiteRT with num_threads=1, NumPy's BLAS pinned to one
thread (set before NumPy loads). LiteRT's reference kernels (BUILTIN_REF) can abort the
process on some int8 models, so each BUILTIN_REF measurement runs in a subprocess.

Usage:
    python benchmarks/interpreter.py [--runs N] [--warmup N] [--only NAME ...] [--no-ref]
    python benchmarks/interpreter.py --memory [--only NAME ...]

Prints one row per fixture model: median invoke time of ours, LiteRT builtin and LiteRT
reference (ms), and the ratios ours/builtin and ours/reference. With --memory, prints instead
each model's peak resident memory in a fresh process (ru_maxrss after construct + allocate_tensors
+ one invoke), next to that process's resident memory once NumPy and the runtime are imported.
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


def time_invoke(interpreter, inputs, runs: int, warmup: int) -> float:
    """Median seconds of invoke() after warm-up, inputs set once."""
    interpreter.allocate_tensors()
    for d, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], x)
    for _ in range(warmup):
        interpreter.invoke()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        interpreter.invoke()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def litert(path: Path, resolver: str):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    return Interpreter(model_path=str(path), num_threads=1,
                       experimental_op_resolver_type=getattr(OpResolverType, resolver))


def _ref_in_subprocess(path: Path, runs: int, warmup: int) -> float | None:
    """BUILTIN_REF median in a child process (it can abort); None if the child died."""
    cmd = [sys.executable, __file__, "--ref-worker", str(path), "--runs", str(runs), "--warmup", str(warmup)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def _rss_mb() -> float:
    """This process's peak resident set so far, in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _memory_worker(path: Path) -> dict[str, float]:
    """Peak RSS after importing the runtime, and after construct + allocate_tensors + one invoke."""
    from runtime import Interpreter

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
    parser.add_argument("--runs", type=int, default=10, help="timed invokes per model (median is reported)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed invokes first")
    parser.add_argument("--only", nargs="*", help="fixture names (file stems) to run")
    parser.add_argument("--no-ref", action="store_true", help="skip LiteRT's reference kernels (slow)")
    parser.add_argument("--memory", action="store_true", help="print peak resident memory per model instead")
    parser.add_argument("--ref-worker", help=argparse.SUPPRESS)
    parser.add_argument("--memory-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ref_worker:
        it = litert(Path(args.ref_worker), "BUILTIN_REF")
        print(json.dumps(time_invoke(it, _inputs(it.get_input_details()), args.runs, args.warmup)))
        return 0
    if args.memory_worker:
        print(json.dumps(_memory_worker(Path(args.memory_worker))))
        return 0

    from runtime import Interpreter
    from runtime.errors import AccelsimError

    paths = [p for p in sorted(FIXTURES.glob("*.tflite")) if p.stem != "atan_custom"]
    if args.only:
        paths = [p for p in paths if p.stem in args.only]
    if args.memory:
        _memory_table(paths)
        return 0
    header = f"{'model':<28} {'ours ms':>9} {'builtin ms':>10} {'ref ms':>9} {'ours/builtin':>12} {'ours/ref':>9}"
    print(header)
    print("-" * len(header))
    ratios = []
    for path in paths:
        builtin_it = litert(path, "BUILTIN_WITHOUT_DEFAULT_DELEGATES")
        inputs = _inputs(builtin_it.get_input_details())
        try:
            ours = time_invoke(Interpreter(model_path=path, num_threads=1), inputs, args.runs, args.warmup)
        except AccelsimError as exc:
            print(f"{path.stem:<28} failed: {str(exc).splitlines()[0]}")
            continue
        builtin = time_invoke(builtin_it, inputs, args.runs, args.warmup)
        ref = None if args.no_ref else _ref_in_subprocess(path, max(3, args.runs // 3), 1)
        ref_txt = f"{ref * 1e3:9.2f}" if ref else f"{'abort' if not args.no_ref else '-':>9}"
        ratio_ref = f"{ours / ref:9.2f}" if ref else f"{'-':>9}"
        ratios.append(ours / builtin)
        print(f"{path.stem:<28} {ours * 1e3:9.2f} {builtin * 1e3:10.2f} {ref_txt} {ours / builtin:12.2f} {ratio_ref}")
    if ratios:
        print(f"median ours/builtin over {len(ratios)} models: {statistics.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
