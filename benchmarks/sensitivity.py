"""`accelsim sensitivity` against 200 cost-only design points of the same model, measured in the same run.

Usage:
    python benchmarks/sensitivity.py [--model PATH] [--points 200] [--repeats 3]

Sensitivity varies every design parameter of every device at x0.5 and x2 and re-costs one analysis
(issue 21: all of it should cost no more than 200 cost-only design points of the same model). The
peer is what an experiment does for 200 points that differ only in costs: one analysis shared by
all, each point re-costed (`accelsim.simulation.analysis.simulate_analysis`) over a sweep of the Edge TPU's link
bandwidth. Both include their one analysis. The table gives the best of `--repeats` wall-clock
times and the ratio; absolute times move between machines, the ratio is what to compare.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.hardware.config import apply_overrides, load_system  # noqa: E402
from accelsim.insight.sensitivity import sensitivity  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.simulation.analysis import analyze, simulate_analysis  # noqa: E402

HW = ROOT / "hw_configs"
MODEL = ROOT / "tests" / "fixtures" / "models" / "mobilenet_v2_100_224_int8.tflite"


def design_points(model, system, n: int) -> float:
    """Seconds for n cost-only points (link bandwidth swept) sharing one analysis."""
    accel = system.accelerators[0]
    systems = [type(system)(system.host, (apply_overrides(accel, {"link.bandwidth": f"{100 + 10 * k} MB/s"}),
                                          *system.accelerators[1:]), system.assign) for k in range(n)]
    t0 = time.perf_counter()
    analysis = analyze(model, system)
    for s in systems:
        simulate_analysis(analysis, s)
    return time.perf_counter() - t0


def one_sensitivity(model, system) -> tuple[float, int]:
    t0 = time.perf_counter()
    result = sensitivity(model, system)
    costed = sum(1 for v in result.variations for e in v.effects if e.status != "skipped")
    return time.perf_counter() - t0, costed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(MODEL))
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    model = load_model(args.model)
    system = load_system(HW / "host_cpu.yaml", [HW / "edgetpu_usb.yaml", HW / "hexagon_dsp.yaml"])
    sens, costed = min(one_sensitivity(model, system) for _ in range(args.repeats))
    points = min(design_points(model, system, args.points) for _ in range(args.repeats))
    print(f"model: {Path(args.model).name}; system: host_cpu + edgetpu_usb + hexagon_dsp; best of {args.repeats}")
    print(f"{'run':<44} {'costings':>9} {'seconds':>9}")
    print(f"{'sensitivity (every parameter x0.5 and x2)':<44} {costed:>9} {sens:>9.3f}")
    print(f"{f'{args.points} cost-only design points':<44} {args.points:>9} {points:>9.3f}")
    print(f"ratio sensitivity / {args.points} points: {sens / points:.2f} (issue 21 asks for <= 1)")


if __name__ == "__main__":
    main()
