"""Time the simulator: cost-only path from file to totals, and what simulation adds to numerics.

Usage:
    python benchmarks/simulate.py [--model PATH] [--runs N]

For each shipped accelerator config (and CPU only): the median wall-clock seconds of
`simulate_model` (load the file, delegate, prepare shapes only, cost every node, the sequential
schedule in closed form; nothing invoked), then, with numerics, the interpreter's own invoke
time next to invoke plus simulation (an interpreter fully prepared), and the share simulation
adds.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.hardware.config import load_system  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.simulation.analysis import simulate_model  # noqa: E402
from accelsim.simulation.costing import simulate_interpreter  # noqa: E402
from accelsim.simulation.delegation import build_interpreter  # noqa: E402

CONFIGS = [[], ["edgetpu_usb"], ["edgetpu_pcie"], ["hexagon_dsp"]]


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(ROOT / "tests/fixtures/models/mobilenet_v2_100_224_int8.tflite"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    hw = ROOT / "hw_configs"
    print(f"model: {args.model}")
    header = (f"{'system':<16} {'cost-only s':>11} {'sim latency ms':>14} {'invoke ms':>10} "
              f"{'invoke+sim ms':>13} {'sim adds':>8}")
    print(header)
    print("-" * len(header))
    for accels in CONFIGS:
        system = load_system(hw / "host_cpu.yaml", [hw / f"{a}.yaml" for a in accels])
        cost_only = _median(lambda system=system: simulate_model(args.model, system), args.runs)
        sim = simulate_model(args.model, system)
        interpreter, delegates = build_interpreter(load_model(args.model), system)
        detail = interpreter.get_input_details()[0]
        x = np.random.default_rng(0).integers(-128, 128, detail["shape"]).astype(detail["dtype"])
        interpreter.set_tensor(detail["index"], x)
        invoke = _median(interpreter.invoke, args.runs)
        replay = _median(lambda i=interpreter, d=delegates, s=system: simulate_interpreter(i, d, s), args.runs)
        name = "+".join(accels) or "cpu only"
        print(f"{name:<16} {cost_only:11.3f} {sim.latency * 1e3:14.3f} {invoke * 1e3:10.1f} "
              f"{(invoke + replay) * 1e3:13.1f} {replay / invoke * 100:7.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
