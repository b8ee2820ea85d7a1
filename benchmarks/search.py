"""Optuna's samplers at equal budget on one seeded problem: the hypervolume of the front found and the best latency.

Usage:
    python benchmarks/search.py [--budget N] [--seed S] [--jobs N] [--samplers random,tpe,nsga2,gp]

The problem: MobileNetV2-1.0-224 int8 on edgetpu_usb, sweeping compute.rows and compute.cols (8 to 256 in
steps of 8), link.bandwidth (40 MB/s to 4 GB/s, continuous, log), memory.levels.sram.size (2 to 16 MiB) and
clock (250 MHz to 1 GHz, continuous, log); objectives latency_us and area_macs (the area proxy: peak MACs per
cycle), both minimised. Each sampler
runs `accelsim run`'s search (accelsim.experiments.search) with the same budget and seed. The hypervolume is
the area the front dominates up to a reference point, the worst latency and area any sampler found, in
ms x MACs/cycle; larger is better. Run times are wall-clock on this machine (its load is printed).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

MOBILENET = ROOT / "tests" / "fixtures" / "models" / "mobilenet_v2_100_224_int8.tflite"
SAMPLERS = ("random", "tpe", "nsga2", "gp")
OBJECTIVES = ("latency_us", "area_macs")  # faster costs area: a front worth searching


def experiment_text(sampler: str, budget: int, seed: int) -> str:
    return f"""\
name: search_{sampler}
models: [{MOBILENET}]
host: host_cpu
variants: [{{name: edgetpu_usb, accelerators: [edgetpu_usb]}}]
sweeps:
  edgetpu_usb.compute.rows: {{from: 8, to: 256, step: 8}}
  edgetpu_usb.compute.cols: {{from: 8, to: 256, step: 8}}
  edgetpu_usb.link.bandwidth: {{from: 40 MB/s, to: 4 GB/s, log: true}}
  edgetpu_usb.memory.levels.sram.size: [2 MiB, 4 MiB, 8 MiB, 16 MiB]
  edgetpu_usb.clock: {{from: 250 MHz, to: 1 GHz, log: true}}
search: {{sampler: {sampler}, budget: {budget}, seed: {seed}, objectives: [{', '.join(OBJECTIVES)}]}}
reports: [json]
traces: none
"""


def front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other is at least as good as in both objectives and better in one, by the first objective."""
    out: list[tuple[float, float]] = []
    for x, y in sorted(set(points)):
        if not out or y < out[-1][1]:
            out.append((x, y))
    return out


def hypervolume(points: list[tuple[float, float]], reference: tuple[float, float]) -> float:
    """The area dominated by `points` (both minimised) and bounded by `reference`."""
    area, last_y = 0.0, reference[1]
    for x, y in front([p for p in points if p[0] < reference[0] and p[1] < reference[1]]):
        area += (reference[0] - x) * (last_y - y)
        last_y = y
    return area


def run(sampler: str, budget: int, seed: int, jobs: int, folder: Path) -> tuple[list[tuple[float, float]], float]:
    """(every ok point's (latency, area), seconds) of one sampler's search."""
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.run import run_experiment

    path = folder / f"{sampler}.yaml"
    path.write_text(experiment_text(sampler, budget, seed), encoding="utf-8")
    experiment = load_experiment(path)
    t0 = time.perf_counter()
    outcome = run_experiment(experiment, folder / sampler, jobs=jobs)
    seconds = time.perf_counter() - t0
    return [(r["latency_us"], r["area_macs"]) for r in outcome.records if r["status"] == "ok"], seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=200, help="trials per sampler (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="every sampler's seed (default 1)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--samplers", default=",".join(SAMPLERS), help="which samplers, comma-separated")
    args = parser.parse_args(argv)
    samplers = args.samplers.split(",")
    if "gp" in samplers and importlib.util.find_spec("torch") is None:
        print("gp left out: Optuna's GPSampler needs PyTorch, which is not installed")
        samplers.remove("gp")
    print(f"machine: load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    found: dict[str, tuple[list[tuple[float, float]], float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sampler in samplers:
            found[sampler] = run(sampler, args.budget, args.seed, args.jobs, Path(tmp))
    every = [p for points, _ in found.values() for p in points]
    reference = (max(p[0] for p in every), max(p[1] for p in every))
    print(f"\n{MOBILENET.stem} on edgetpu_usb, 5 swept keys, budget {args.budget} each, seed {args.seed}, "
          f"objectives {', '.join(OBJECTIVES)}; reference point {reference[0] / 1e3:,.2f} ms, "
          f"{reference[1]:,.0f} MACs/cycle")
    header = (f"{'sampler':<8} {'points':>6} {'front':>5} {'hypervolume (ms x MAC/c)':>25} {'best latency (us)':>18} "
              f"{'s':>6}")
    print(header)
    print("-" * len(header))
    for sampler, (points, seconds) in found.items():
        hv = hypervolume(points, reference) / 1e3  # us -> ms
        best = min(p[0] for p in points)
        print(f"{sampler:<8} {len(points):>6} {len(front(points)):>5} {hv:>25,.1f} {best:>18,.1f} {seconds:>6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
