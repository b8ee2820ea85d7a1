"""Cost-aware delegation against TFLite's choice, over every fixture x shipped accelerator config.

Usage:
    python benchmarks/cost_policy.py [--host host_cpu] [--objective latency|energy] [MODEL ...]

For each model and each shipped accelerator (alone, with host_cpu): the simulated latency and
energy of TFLite's choice (every claimed partition delegated) and of `partition: {policy: cost}`,
how many of TFLite's partitions the cost policy kept on the host, and what it saved. The last
line counts the pairs where the two choices differ; by construction the cost policy is never
worse on its objective (tests/accelsim/test_cost_policy.py checks that on every pair).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.hardware.config import apply_overrides, load_hardware, load_system  # noqa: E402
from accelsim.ops import using_ops  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.simulation.analysis import simulate_model  # noqa: E402

HW = ROOT / "hw_configs"
FIXTURES = ROOT / "tests" / "fixtures" / "models"
# Fixtures with custom ops simulate with the op module that holds their kernels (as `--ops` does).
OP_MODULES = {"atan_custom": str(ROOT / "examples" / "custom_op_atan.py"),
              "selfie_like_float": "accelsim.ops.mediapipe"}


@dataclasses.dataclass(frozen=True)
class Row:
    model: str
    accelerator: str
    tflite_us: float
    cost_us: float
    tflite_uj: float
    cost_uj: float
    partitions: int  # TFLite's
    moved: int  # kept on the host by the cost policy


def compare(model: Path, accelerator: str, host: str = "host_cpu", objective: str = "latency") -> Row:
    """Simulate `model` with TFLite's choice and with policy cost on `accelerator` (cost-only)."""
    base = load_system(HW / f"{host}.yaml", [])
    hw = load_hardware(HW / f"{accelerator}.yaml")
    loaded = load_model(model)
    sims = {}
    for policy in ("tflite", "cost"):
        overrides = {"partition.policy": policy} | ({"partition.objective": objective} if policy == "cost" else {})
        system = dataclasses.replace(base, accelerators=(apply_overrides(hw, overrides),))
        sims[policy] = simulate_model(loaded, system)
    choice = sims["cost"].choice
    return Row(model.stem, accelerator, sims["tflite"].latency * 1e6, sims["cost"].latency * 1e6,
               sims["tflite"].energy * 1e6, sims["cost"].energy * 1e6, len(sims["tflite"].partitions),
               len(choice.host) if choice else 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="example: python benchmarks/cost_policy.py interleaved_int8")
    parser.add_argument("models", nargs="*", help="fixture names (default: every fixture a system can simulate)")
    parser.add_argument("--host", default="host_cpu", help="shipped host config (default host_cpu)")
    parser.add_argument("--objective", default="latency", choices=["latency", "energy"])
    args = parser.parse_args(argv)
    names = args.models or sorted(p.stem for p in FIXTURES.glob("*.tflite"))
    accelerators = sorted(p.stem for p in HW.glob("*.yaml") if load_hardware(p).is_accelerator)
    print(f"{'accelerator':<15} {'model':<27} {'moved':>7} {'TFLite us':>11} {'cost us':>11} {'saved us':>10} "
          f"{'TFLite uJ':>10} {'cost uJ':>10}")
    differ = total = 0
    for accelerator in accelerators:
        for name in names:
            with using_ops([OP_MODULES[name]] if name in OP_MODULES else []):
                r = compare(FIXTURES / f"{name}.tflite", accelerator, args.host, args.objective)
            total += 1
            differ += r.moved > 0
            print(f"{r.accelerator:<15} {r.model:<27} {f'{r.moved}/{r.partitions}':>7} {r.tflite_us:>11.1f} "
                  f"{r.cost_us:>11.1f} {r.tflite_us - r.cost_us:>10.1f} {r.tflite_uj:>10.3f} {r.cost_uj:>10.3f}")
    print(f"policy cost ({args.objective}) chose differently from TFLite on {differ} of {total} pairs; "
          "never worse on its objective")
    return 0


if __name__ == "__main__":
    sys.exit(main())
