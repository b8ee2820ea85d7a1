"""Time `accelsim benchmark MODEL --num-runs 0` against its floor: start-up plus one cost-only simulation.

Usage:
    python benchmarks/cost_only.py [--model PATH] [--hw CFG] [--runs N]

All in one run, median wall-clock seconds of N repetitions:
  (a) start-up: a fresh Python importing the command line and the cost-only path (`import accelsim.cli.main,
      accelsim.tools.cost_only`), in a subprocess;
  (b) one cost-only simulation in this process (`accelsim.simulation.analysis.simulate_model` from the file:
      read, delegate, prepare shapes and work, cost, schedule);
  (c) the command `accelsim benchmark MODEL --hw CFG --num-runs 0`, in a subprocess (it also
      simulates the host alone, for the speed-up);
  (d) the command with one NumPy run (`--num-runs 1 --warmup-runs 0`), the path `--num-runs 0` avoids.
The ratio (c) / ((a) + (b)) is the cost-only command against its floor; (d) / (c) what it saves.
With `--vs-vela` (an Ethos-U config as --hw), also
  (e) Arm's Vela compiling the same model for the same NPU (`python -m ethosu.vela`, in a subprocess, with the
      accelerator and system configs of benchmarks/cost_vs_vela.py), timed in alternation with (c);
(c) / (e) is the cost-only estimate against Vela's own time (issue 36's goal: under 0.1).
The default model is VGG16 (224, int8; 138 M parameters) from cost_vs_coral.py's cache, built there
with `python benchmarks/cost_vs_coral.py --models vgg16` by a Python that has TensorFlow.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VGG16 = Path.home() / ".cache" / "accelsim" / "coral" / "vgg16_int8.tflite"  # cost_vs_coral.py's CACHE


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    """Median wall-clock seconds of `runs` calls of `fn`."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _command(argv: list[str]) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(argv, check=True, capture_output=True)
    return run


def alternating_medians(first: Callable[[], object], second: Callable[[], object], runs: int
                        ) -> tuple[float, float]:
    """Median seconds of `first` and of `second`, run in alternation (so a change in the machine's load
    falls on both)."""
    a, b = [], []
    for _ in range(runs):
        for fn, times in ((first, a), (second, b)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b)


def vela_command(model: str, hw: str, out_dir: str) -> list[str]:
    """Vela compiling `model` for `hw`'s NPU, as benchmarks/cost_vs_vela.py runs it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks.cost_vs_vela import MEMORY_MODE, SYSTEMS

    configs = {name: (accelerator, system) for name, accelerator, system in SYSTEMS}
    if hw not in configs:
        raise SystemExit(f"cost_only --vs-vela: --hw {hw} is not an Ethos-U config; choose one of "
                         f"{', '.join(configs)}")
    accelerator, system = configs[hw]
    return [sys.executable, "-m", "ethosu.vela", "--accelerator-config", accelerator, "--system-config", system,
            "--memory-mode", MEMORY_MODE, "--output-dir", out_dir, model]


def rows(model: str, hw: str, runs: int) -> list[tuple[str, float]]:
    """(label, median seconds) of (a) start-up, (b) one cost-only simulation, (c) the command, (d) with one run."""
    from accelsim.experiments.experiment import resolve_config
    from accelsim.hardware.config import load_system
    from accelsim.simulation.analysis import simulate_model

    system = load_system(resolve_config("host_cpu", ROOT), [resolve_config(hw, ROOT)])
    cli = [sys.executable, "-m", "accelsim", "benchmark", model, "--hw", hw]
    return [
        ("(a) start-up: python importing what the command imports",
         median_seconds(_command([sys.executable, "-c", "import accelsim.cli.main, accelsim.tools.cost_only"]), runs)),
        ("(b) one cost-only simulate_model, in process", median_seconds(lambda: simulate_model(model, system), runs)),
        ("(c) accelsim benchmark --num-runs 0", median_seconds(_command([*cli, "--num-runs", "0"]), runs)),
        ("(d) accelsim benchmark --num-runs 1 --warmup-runs 0",
         median_seconds(_command([*cli, "--num-runs", "1", "--warmup-runs", "0"]), runs)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(VGG16), help="a .tflite file (default: %(default)s)")
    parser.add_argument("--hw", default="edgetpu_usb", help="the accelerator (default %(default)s)")
    parser.add_argument("--runs", type=int, default=3, help="repetitions, the median is shown (default 3)")
    parser.add_argument("--vs-vela", action="store_true",
                        help="only (c) against Vela compiling the same model, in alternation (Ethos-U --hw)")
    args = parser.parse_args(argv)
    if not Path(args.model).is_file():
        print(f"cost_only: {args.model} is not there; build it with `python benchmarks/cost_vs_coral.py --models "
              "vgg16` (needs TensorFlow) or pass --model", file=sys.stderr)
        return 2
    size = Path(args.model).stat().st_size
    if args.vs_vela:
        return vs_vela(args.model, args.hw, args.runs, size)
    print(f"model: {args.model} ({size / 1e6:.1f} MB), --hw {args.hw}, median of {args.runs} run(s), seconds")
    measured = rows(args.model, args.hw, args.runs)
    for label, seconds in measured:
        print(f"{label:<58} {seconds:8.2f}")
    (_, start), (_, sim), (_, cost_only), (_, with_run) = measured
    print(f"(c) / ((a) + (b)) = {cost_only / (start + sim):.2f}: the cost-only command against start-up plus one "
          "simulation (it simulates the host alone too)")
    print(f"(d) / (c) = {with_run / cost_only:.2f}: one NumPy run and its numeric preparation against none")
    return 0


def vs_vela(model: str, hw: str, runs: int, size: int) -> int:
    """Print (c) and (e), run in alternation, and their ratio."""
    import tempfile

    with tempfile.TemporaryDirectory() as out_dir:
        vela = vela_command(model, hw, out_dir)
        # host_cpu: the Corstone hosts' SRAM cannot hold an ImageNet model's arena (infeasible, memory); Vela
        # estimates the NPU side alone, so the host only runs what the NPU leaves and the host-alone baseline
        ours = [sys.executable, "-m", "accelsim", "benchmark", model, "--hw", hw, "--host", "host_cpu",
                "--num-runs", "0"]
        print(f"model: {model} ({size / 1e6:.1f} MB), --hw {hw}, median of {runs} alternating run(s), seconds; "
              f"load average {os.getloadavg()[0]:.1f}")
        cost_only, vela_s = alternating_medians(_command(ours), _command(vela), runs)
    print(f"{'(c) accelsim benchmark --host host_cpu --num-runs 0':<58} {cost_only:8.2f}")
    print(f"{'(e) vela (python -m ethosu.vela), same model and NPU':<58} {vela_s:8.2f}")
    print(f"(c) / (e) = {cost_only / vela_s:.3f}: the cost-only estimate against Vela's own time (goal < 0.1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
