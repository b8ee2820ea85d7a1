"""Design-space exploration speed: cost-only design points per minute, and simulate_model from file.

Usage:
    python benchmarks/dse.py [--jobs N] [--tiny] [--sample N] [--runs N] [--points-only]
    python benchmarks/dse.py --build    # any Python with TensorFlow: builds ResNet-152

(0) The whole command, as a user runs it (issue 36's workload): `accelsim run` of a 5,000-point
experiment, MobileNetV2-1.0-224 int8 on edgetpu_usb sweeping compute.rows x compute.cols x
link.bandwidth x memory.levels.sram.size x clock (5 x 5 x 5 x 4 x 10), --jobs 2, cost only, reports
json and csv (traces: none), in a fresh process: start-up and report included; points per minute
from its wall-clock time. Then where the time goes, the same run's stages timed in this process:
start-up (a fresh Python importing the command line and `run`), building the design points,
analysis (one analysis of the model; each worker makes one), per-point costing (the executor's
time less the analyses), storing (the results store's commits) and the report.

(a) Cost-only design points per minute: MobileNetV2-1.0-224 int8 on edgetpu_usb over rows x
cols x link bandwidth x parameter cache (the SRAM that caches weights) x clock, a grid of 2,160
points, run by the experiment executors (the process pool with --jobs, each worker analysing
the model once per batch and costing every point of it), each record committed to a results
store as `accelsim run` does (the report is not written). Next to it, the old path measured in
the same run: a sample of the same points each through a fresh `simulate_model` (parse,
delegate, prepare every kernel, cost, schedule) and its record, scaled to points per minute on
as many cores (ideal scaling, which flatters the old path), and the ratio.

(b) Cost-only `simulate_model` from file (parse, delegate, size every node, cost, schedule):
median seconds for MobileNetV2-1.0-224 int8 and a ~500-node ResNet-152 int8 (batch 1, random
weights, full-integer with a representative dataset), on the host alone and on edgetpu_usb.
ResNet-152 is cached in ~/.cache/accelsim/dse/ (built once with --build by a Python that has
TensorFlow; without it that row says how).

Absolute times depend on the machine and on what else runs on it (the load is printed);
compare the ratios, measured in the same run.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

MOBILENET = ROOT / "tests" / "fixtures" / "models" / "mobilenet_v2_100_224_int8.tflite"
CACHE = Path.home() / ".cache" / "accelsim" / "dse"
RESNET = CACHE / "resnet152_int8.tflite"
ACCELERATOR = "edgetpu_usb"
# The grid: 6 x 6 x 5 x 4 x 3 = 2,160 points (--tiny: 2 x 2 = 4).
GRID = {
    "compute.rows": [8, 16, 32, 64, 128, 256],
    "compute.cols": [8, 16, 32, 64, 128, 256],
    "link.bandwidth": ["40 MB/s", "120 MB/s", "480 MB/s", "1 GB/s", "4 GB/s"],
    "memory.levels.sram.size": ["2 MiB", "4 MiB", "8 MiB", "16 MiB"],
    "clock": ["250 MHz", "500 MHz", "1 GHz"],
}
TINY_GRID = {"compute.rows": [8, 64], "compute.cols": [16, 256]}
# The whole command's grid: 5 x 5 x 5 x 4 x 10 = 5,000 points (issue 36).
RUN_GRID = {
    "compute.rows": [8, 16, 32, 64, 128],
    "compute.cols": [8, 16, 32, 64, 128],
    "link.bandwidth": ["40 MB/s", "120 MB/s", "480 MB/s", "1 GB/s", "4 GB/s"],
    "memory.levels.sram.size": ["2 MiB", "4 MiB", "8 MiB", "16 MiB"],
    "clock": ["100 MHz", "200 MHz", "250 MHz", "300 MHz", "400 MHz", "500 MHz", "600 MHz", "750 MHz", "1 GHz",
              "1.2 GHz"],
}


def build_resnet152(path: Path = RESNET) -> None:
    """Build ResNet-152 (random weights, 224x224, batch 1) as full-integer int8 .tflite at `path` (needs TensorFlow)."""
    from benchmarks.keras_tflite import write

    write(path, "ResNet152", 224, "int8")  # the calibration benchmarks' converter


def experiment_file(folder: Path, grid: dict[str, list], extra: str = "") -> Path:
    """An experiment YAML sweeping `grid` over edgetpu_usb on MobileNetV2-1.0-224, cost only."""
    sweeps = "\n".join(f"  {ACCELERATOR}.{key}: [{', '.join(str(v) for v in values)}]" for key, values in grid.items())
    path = folder / "dse.yaml"
    path.write_text(f"name: dse\nmodels: [{MOBILENET}]\nhost: host_cpu\n"
                    f"variants:\n  - {{name: {ACCELERATOR}, accelerators: [{ACCELERATOR}]}}\n"
                    f"sweeps:\n{sweeps}\nnumerics: false\n{extra}", encoding="utf-8")
    return path


def whole_run(folder: Path, grid: dict[str, list], jobs: int) -> tuple[int, float, dict[str, float]]:
    """(points, points/min of `accelsim run` in a fresh process, seconds by stage of the same run in this one)."""
    import subprocess

    import accelsim.experiments.run as run_module
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.points import point_count
    from accelsim.simulation.analysis import analyze

    path = experiment_file(folder, grid, "traces: none\nreports: [json, csv]\n")
    command = [sys.executable, "-m", "accelsim", "run", str(path), "--jobs", str(jobs), "--no-cache",
               "--out", str(folder / "cli")]
    t0 = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import accelsim.cli.main, accelsim.cli.experiment_verbs"], check=True,
                   cwd=ROOT)
    stages = {"start-up": time.perf_counter() - t0}
    # The same run in this process, each stage timed by wrapping the function run_experiment calls for it.
    spent = {"points": 0.0, "storing": 0.0, "report": 0.0}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start
        return wrapper

    saved = (run_module.experiment_points, run_module.ResultStore.put_many, run_module._report)
    run_module.experiment_points = timed("points", saved[0])
    run_module.ResultStore.put_many = timed("storing", saved[1])
    run_module._report = timed("report", saved[2])
    try:
        t0 = time.perf_counter()
        experiment = load_experiment(path)
        loaded = time.perf_counter() - t0
        t0 = time.perf_counter()
        run_module.run_experiment(experiment, folder / "in_process", jobs=jobs, use_cache=False)
        total = time.perf_counter() - t0
    finally:
        run_module.experiment_points, run_module.ResultStore.put_many, run_module._report = saved
    t0 = time.perf_counter()
    analyze(str(MOBILENET), _system(experiment))
    analysis = (time.perf_counter() - t0) * jobs  # each worker analyses the model once
    costing = total - spent["points"] - spent["storing"] - spent["report"]
    stages.update({"loading the experiment, building the points": loaded + spent["points"],
                   f"analysis ({jobs} worker(s), one each)": analysis,
                   "per-point costing (the workers, less the analyses)": max(0.0, costing - analysis / jobs),
                   "storing (results store commits)": spent["storing"], "report (json, csv)": spent["report"]})
    return point_count(experiment), point_count(experiment) * 60 / wall, stages


def _system(experiment):
    """The experiment's first variant's system as its files give it."""
    from accelsim.hardware.config import load_system

    variant = experiment.variants[0]
    return load_system(experiment.host, variant.accelerators, loaded=experiment.configs)


def points_per_minute(points, options, jobs: int, folder: Path) -> tuple[float, int]:
    """(points per minute, failed points) of the executor `accelsim run` would use, committing to a store."""
    from accelsim.experiments.executors import PoolExecutor, SerialExecutor
    from accelsim.experiments.store import ResultStore

    executor = SerialExecutor() if jobs <= 1 else PoolExecutor(jobs)
    failed = 0
    t0 = time.perf_counter()
    with ResultStore(folder) as store:
        for batch in executor.run(points, options):
            store.put_many(batch)
            failed += sum(1 for r in batch if r["status"] != "ok")
    return len(points) * 60 / (time.perf_counter() - t0), failed


def fresh_per_minute(points, sample: int, full_prepare: bool) -> float:
    """Points per minute on one core when each point is simulated from its file afresh, and its record made.

    Args:
        full_prepare: every kernel's numeric preparation too, as simulate_model did before analyses
            prepared shapes only (the SimPy replay of the sequential schedule is not restored).
    """
    from accelsim.reports.results import record
    from accelsim.runtime.read import load_model
    from accelsim.simulation.analysis import simulate_model
    from accelsim.simulation.costing import simulate_interpreter
    from accelsim.simulation.delegation import build_interpreter

    def full(p):
        interpreter, delegates = build_interpreter(load_model(p.model), p.system)
        return simulate_interpreter(interpreter, delegates, p.system, p.schedule, p.model, p.loops)

    step = max(1, len(points) // sample)
    chosen = points[::step][:sample]
    t0 = time.perf_counter()
    for p in chosen:
        sim = full(p) if full_prepare else simulate_model(p.model, p.system, p.schedule, p.loops)
        record(sim, point_id=p.id, model=p.model, variant=p.variant, sweep=dict(p.sweep))
    return len(chosen) * 60 / (time.perf_counter() - t0)


def from_file_seconds(model: Path, accelerators: list[str], runs: int) -> float:
    """Median seconds of cost-only simulate_model from the file on host_cpu with `accelerators`."""
    from accelsim.experiments.experiment import SHIPPED_CONFIGS
    from accelsim.hardware.config import load_system
    from accelsim.simulation.analysis import simulate_model

    system = load_system(SHIPPED_CONFIGS / "host_cpu.yaml", [SHIPPED_CONFIGS / f"{a}.yaml" for a in accelerators])
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        simulate_model(str(model), system)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages and the core count, as uptime says them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for the design points (default 2)")
    parser.add_argument("--tiny", action="store_true", help="a 4-point grid and one run of each (a smoke test)")
    parser.add_argument("--sample", type=int, default=8, help="points the old path runs (default 8)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each simulate_model from file (default 5)")
    parser.add_argument("--build", action="store_true", help=f"build ResNet-152 into {RESNET} (needs TensorFlow)")
    parser.add_argument("--run-only", action="store_true", help="only (0), the whole command and its stages")
    args = parser.parse_args(argv)
    if args.build:
        build_resnet152()
        print(f"built {RESNET}")
        return 0
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.points import design_points

    grid = TINY_GRID if args.tiny else GRID
    runs = 1 if args.tiny else args.runs
    sample = 1 if args.tiny else args.sample
    print(f"machine: {load_average()} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        n, rate, stages = whole_run(Path(tmp), TINY_GRID if args.tiny else RUN_GRID, args.jobs)
    print(f"\n(0) `accelsim run`, {n} points, {MOBILENET.stem} on {ACCELERATOR} ({', '.join(RUN_GRID)}), "
          f"--jobs {args.jobs}, cost only, json + csv report, in a fresh process: {rate:,.0f} points/min")
    print(f"    where the time goes (the same run's stages, in this process; {load_average()}):")
    for label, seconds in stages.items():
        print(f"    {label:<56} {seconds:7.2f} s")
    if args.run_only:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        experiment = load_experiment(experiment_file(Path(tmp), grid))
        t0 = time.perf_counter()
        points = design_points(experiment)
        built = time.perf_counter() - t0
        options = {v.name: dict(v.options) for v in experiment.variants}
        new, failed = points_per_minute(points, options, args.jobs, Path(tmp) / "run")
        fresh = fresh_per_minute(points, sample, full_prepare=False) * max(1, args.jobs)
        before = fresh_per_minute(points, sample, full_prepare=True) * max(1, args.jobs)
    print(f"\n(a) cost-only design points per minute, {MOBILENET.stem} on {ACCELERATOR}, "
          f"{len(points)} points ({' x '.join(str(len(v)) for v in grid.values())}: {', '.join(grid)}), "
          f"{args.jobs} job(s)")
    header = f"{'path':<58} {'points/min':>11} {'new is':>7}"
    print(header)
    print("-" * len(header))
    rows = (("old: fresh simulate_model per point, full kernel prepare", before),
            ("old: fresh simulate_model per point (shapes only)", fresh),
            ("new: one analysis per batch, each point costed", new))
    for label, rate in rows:
        print(f"{label:<58} {rate:11.0f} {new / rate:6.1f}x")
    print(f"(old paths: {sample} points on one core, times {args.jobs} jobs; {failed} of the new run's points "
          f"failed)\nbuilding the design points (loading the experiment's sweeps) took {built:.2f} s more: "
          f"{len(points) * 60 / built if built else 0:.0f} points/min; the points with it: "
          f"{len(points) * 60 / (built + len(points) * 60 / new):.0f} points/min")
    print(f"\n(b) cost-only simulate_model from file, median of {runs} run(s)")
    header = f"{'model':<28} {'system':<22} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    for model in (MOBILENET, RESNET):
        for accels in ([], [ACCELERATOR]):
            system = "+".join(["host_cpu", *accels])
            if not model.exists():
                print(f"{model.stem:<28} {system:<22} {'absent':>8}  build it once with: "
                      f"python benchmarks/dse.py --build (with a Python that has TensorFlow)")
                continue
            print(f"{model.stem:<28} {system:<22} {from_file_seconds(model, accels, runs):8.3f}")
    print(f"\nmachine: {load_average()} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
