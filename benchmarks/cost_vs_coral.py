"""Compare simulated latency with Coral's published benchmark table: the Edge TPU and the Dev Board's CPU.

Coral's "Edge TPU performance benchmarks" page (coral.ai/docs/edgetpu/benchmarks, Table 1,
"Time per inference, in milliseconds") lists ImageNet classifiers on the USB Accelerator
(USB 3.0, desktop host), on the Dev Board's CPU alone ("Embedded CPU": the i.MX 8M's
Cortex-A53 cores) and on the Dev Board's Edge TPU (PCIe Gen2 x1). This script builds the same
architectures with `tf.keras.applications` (`benchmarks/keras_tflite.py`: random weights,
batch 1, full-integer int8 with int8 input and output) and simulates each column:

    cortex_a53_cpu   the model on `cortex_a53_cpu` alone         vs  Embedded CPU
    edgetpu_usb      `edgetpu_usb` with the `host_cpu` host       vs  USB Accelerator
    edgetpu_pcie     `edgetpu_pcie` with the `cortex_a53_cpu` host vs  Dev Board

It prints simulated against published milliseconds with their ratio, and per column the
geometric-mean error exp(mean |ln(simulated / published)|) - 1 and the worst row. Every row is
marked per column: "fit" (the config's fitted values were chosen on it), "held" (held out:
never used to choose anything; the headline error is over these) or "retired" (printed, in no
error, with the reason below the table).

The .tflite files are cached in ~/.cache/accelsim/coral/ (or --cache DIR) and reused: building
them needs TensorFlow and takes minutes for VGG16 and Inception-ResNet-V2; with a full cache
nothing imports TensorFlow.

Usage:
    python benchmarks/cost_vs_coral.py [--cache DIR] [--models KEY ...] [--detail] [--fit]

--fit refits cortex_a53_cpu's fitted compute values (`CPU_FITTED`) on the Embedded CPU column's
fit rows and prints them, which is how the shipped config's "fitted" numbers were set.
--detail adds, per model and Edge TPU config, what decides the time: weight bytes, the largest
activation working set (one node's inputs and outputs), the parameter cache left beside it,
the weight bytes streamed over the link per inference, simulated accelerator and I/O
milliseconds, and "needs MB/s": the link rate at which the streamed weights alone would
fill Coral's whole time (above the link's line rate, the published time cannot come from
streaming that many bytes).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim import memory  # noqa: E402
from accelsim.analysis import analyze, simulate_analysis  # noqa: E402
from accelsim.config import HardwareConfig, System, apply_overrides, load_hardware  # noqa: E402
from accelsim.costing import simulate_interpreter  # noqa: E402
from accelsim.delegation import build_interpreter  # noqa: E402
from accelsim.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.runtime.work import NodeWork  # noqa: E402
from accelsim.simulation import HOST, Simulation  # noqa: E402
from benchmarks import calibration  # noqa: E402
from benchmarks.keras_tflite import build_tflite  # noqa: E402

CACHE = Path.home() / ".cache" / "accelsim" / "coral"
CPU = "cortex_a53_cpu"
CONFIGS = (CPU, "edgetpu_usb", "edgetpu_pcie")
# The host each column's accelerator is attached to (the CPU column has none).
HOSTS = {CPU: CPU, "edgetpu_usb": "host_cpu", "edgetpu_pcie": CPU}
# cortex_a53_cpu's values marked "fitted", as key paths (`accelsim.config.apply_overrides`).
CPU_FITTED = ("compute.efficiency", "compute.row_cycles.int8", "compute.pack_cycles.int8")


@dataclass(frozen=True)
class CoralRow:
    """One row of Coral's Table 1: a keras.applications builder, its input size, published ms per column.

    held_out: the columns where this row was never used to fit anything; retired: column -> why
    the row is in no error of that column.
    """

    key: str
    label: str
    application: str
    size: int
    cpu_ms: float
    usb_ms: float
    pcie_ms: float
    held_out: frozenset[str] = frozenset()
    retired: Mapping[str, str] = field(default_factory=dict)

    def published(self, config: str) -> float:
        return {CPU: self.cpu_ms, "edgetpu_usb": self.usb_ms, "edgetpu_pcie": self.pcie_ms}[config]

    def role(self, config: str) -> str:
        """'retired', 'held' (held out) or 'fit' in `config`'s column."""
        return "retired" if config in self.retired else "held" if config in self.held_out else "fit"


_RETIRED_IRV2 = ("Coral's row contradicts its Inception v4 row over the same link: 57 ms (USB) for 55.9 M "
                 "parameters against 85 ms for 42.7 M; streaming 55.9 M in 57 ms needs about twice Inception "
                 "v4's rate")

# Coral "Edge TPU performance benchmarks", Table 1: the "Embedded CPU", "Desktop CPU + USB
# Accelerator (USB 3.0) with Edge TPU" and "Dev Board with Edge TPU" columns.
ROWS = (
    CoralRow("mobilenet_v1", "MobileNet v1 (224)", "MobileNet", 224, 164.0, 2.4, 2.4),
    CoralRow("mobilenet_v2", "MobileNet v2 (224)", "MobileNetV2", 224, 122.0, 2.6, 2.6),
    CoralRow("densenet121", "DenseNet-121 (224)", "DenseNet121", 224, 1032.0, 20.0, 25.0, held_out=frozenset({CPU})),
    CoralRow("resnet50_299", "ResNet-50 V1 (299)", "ResNet50", 299, 1763.0, 49.0, 56.0),
    CoralRow("inception_resnet_v2", "Inception-ResNet V2 (299)", "InceptionResNetV2", 299, 2852.0, 57.0, 69.0,
             held_out=frozenset({CPU}), retired={"edgetpu_usb": _RETIRED_IRV2, "edgetpu_pcie": _RETIRED_IRV2}),
    CoralRow("vgg16", "VGG16 (224)", "VGG16", 224, 4595.0, 296.0, 343.0),
)


def ensure_models(rows: Sequence[CoralRow], cache: Path) -> dict[str, Path]:
    """Path of each row's cached .tflite, building the missing ones.

    Raises:
        SystemExit: models are missing and TensorFlow is not installed (the message gives the
            commands that build them in a TensorFlow-only environment).
    """
    paths = {r.key: cache / f"{r.key}_int8.tflite" for r in rows}
    missing = [r for r in rows if not paths[r.key].exists()]
    if not missing:
        return paths
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        commands = "; ".join(f"python benchmarks/keras_tflite.py {paths[r.key]} {r.application} {r.size} int8"
                             for r in missing)
        raise SystemExit(f"cost_vs_coral: {', '.join(r.key for r in missing)} missing from {cache}; building them "
                         f"needs TensorFlow: pip install -e '.[fixtures]', or in an environment with TensorFlow run: "
                         f"{commands}") from None
    cache.mkdir(parents=True, exist_ok=True)
    for r in missing:
        print(f"building {r.label} -> {paths[r.key]} ...", flush=True)
        tmp = paths[r.key].with_suffix(".tmp")
        tmp.write_bytes(build_tflite(r.application, r.size, "int8"))
        tmp.replace(paths[r.key])
    return paths


@dataclass(frozen=True)
class Detail:
    """What decides one simulated inference on the accelerator."""

    weight_bytes: int
    working_set: int  # the largest node's inputs + outputs, which must be on chip together
    cache_left: int  # parameter cache left for weights after that working set
    streamed_bytes: int  # weights that cross the link every inference
    accel_ms: float
    io_ms: float  # input/output transfers and call overhead


def detail(works: Sequence[NodeWork], sim: Simulation, accel: HardwareConfig) -> Detail:
    """Summarize one accelerator's part of a simulation."""
    nodes = [n for n in sim.nodes if n.unit != HOST]
    return Detail(weight_bytes=sum(w.weight_bytes for w in works),
                  working_set=max(w.input_bytes + w.output_bytes for w in works),
                  cache_left=memory.weight_cache(works, accel.memory) or 0,
                  streamed_bytes=sum(n.cost.param_bytes_streamed for n in nodes),
                  accel_ms=sum(n.seconds for n in nodes) * 1e3,
                  io_ms=sum(p.transfer + p.overhead for p in sim.partitions) * 1e3)


def systems(cpu: HardwareConfig) -> dict[str, System]:
    """Each column's system, with `cpu` as the Dev Board's CPU."""
    def config(name: str) -> HardwareConfig:
        return cpu if name == CPU else load_hardware(SHIPPED_CONFIGS / f"{name}.yaml")

    return {c: System(config(HOSTS[c]), () if c == CPU else (config(c),)) for c in CONFIGS}


def cpu_values(cpu: HardwareConfig) -> dict[str, float]:
    """The current CPU_FITTED values of `cpu`."""
    c = cpu.compute
    return {"compute.efficiency": c.efficiency, "compute.row_cycles.int8": dict(c.row_cycles)["int8"],
            "compute.pack_cycles.int8": dict(c.pack_cycles)["int8"]}


def refit_cpu(rows: Sequence[CoralRow], paths: Mapping[str, Path], cpu: HardwareConfig) -> dict[str, float]:
    """CPU_FITTED values chosen on the Embedded CPU column's fit rows (held-out rows never enter)."""
    fit_rows = [r for r in rows if r.role(CPU) == "fit"]
    host_only = System(cpu, ())
    analyses = [(r, analyze(load_model(str(paths[r.key])), host_only)) for r in fit_rows]

    def ratios(values: Mapping[str, float]) -> list[float]:
        trial = System(apply_overrides(cpu, values), ())
        return [simulate_analysis(a, trial).latency * 1e3 / r.cpu_ms for r, a in analyses]

    return calibration.fit(ratios, cpu_values(cpu), upper={"compute.efficiency": 1.0})


def summary_lines(rows: Sequence[CoralRow], ratios: Mapping[tuple[str, str], float]) -> list[str]:
    """Held-out and fit errors per column (a group with no rows prints as '-')."""
    lines = []
    for role, label in (("held", "held-out"), ("fit", "fit rows")):
        for what, measure in (("geomean error", calibration.geomean_error), ("worst row", calibration.worst_error)):
            line = f"{label + ' ' + what:<27}"
            for c in CONFIGS:
                group = [ratios[r.key, c] for r in rows if r.role(c) == role and (r.key, c) in ratios]
                text = f"{measure(group) * 100:.0f}% of {len(group)}" if group else "-"
                line += f"{text:>40}"
            lines.append(line)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help=f"folder of the converted .tflite models (default {CACHE})")
    parser.add_argument("--models", nargs="+", choices=[r.key for r in ROWS], metavar="KEY",
                        help=f"only these rows: {', '.join(r.key for r in ROWS)}")
    parser.add_argument("--detail", action="store_true", help="also print bytes and where the Edge TPU time goes")
    parser.add_argument("--fit", action="store_true",
                        help=f"refit {CPU}'s fitted values on the Embedded CPU fit rows and print them")
    args = parser.parse_args(argv)
    rows = [r for r in ROWS if not args.models or r.key in args.models]
    paths = ensure_models(rows, args.cache)
    cpu = load_hardware(SHIPPED_CONFIGS / f"{CPU}.yaml")
    if args.fit:
        before, after = cpu_values(cpu), refit_cpu(rows, paths, cpu)
        print(f"{CPU}: fitted on {', '.join(r.key for r in rows if r.role(CPU) == 'fit')}")
        for key in CPU_FITTED:
            print(f"  {key}: {before[key]:g} -> {after[key]:.4g}")
        cpu = apply_overrides(cpu, after)
        print()
    columns = systems(cpu)
    header = f"{'model':<27}" + "".join(f"{c + ' ms':>18} {'Coral ms':>9} {'ratio':>6} {'row':>4}" for c in CONFIGS)
    print(header)
    print("-" * len(header))
    ratios: dict[tuple[str, str], float] = {}
    details: list[tuple[CoralRow, str, Detail]] = []
    for r in rows:
        model = load_model(str(paths[r.key]))
        line = f"{r.label:<27}"
        for c in CONFIGS:
            system = columns[c]
            interpreter, delegates = build_interpreter(model, system)
            sim = simulate_interpreter(interpreter, delegates, system, name=r.key)
            if delegates:
                works = [w for _, w in sorted(delegates[0].work_by_node().items())]
                details.append((r, c, detail(works, sim, system.accelerators[0])))
            ms = sim.latency * 1e3
            ratio = ms / r.published(c)
            if r.role(c) != "retired":
                ratios[r.key, c] = ratio
            line += f"{ms:18.1f} {r.published(c):9.1f} {ratio:6.2f} {r.role(c):>4}"
        print(line, flush=True)
    print("\n".join(summary_lines(rows, ratios)))
    for r in rows:
        for reason in dict.fromkeys(r.retired.values()):
            columns_text = ", ".join(c for c in CONFIGS if r.retired.get(c) == reason)
            print(f"retired: {r.label} in {columns_text}: {reason}")
    if args.detail:
        # "needs MB/s": the link rate at which the streamed weights alone would take Coral's whole time.
        print()
        print(f"{'model':<20} {'config':<13} {'weights':>8} {'act set':>8} {'cache':>8} {'streamed':>9} "
              f"{'accel ms':>9} {'io ms':>6} {'needs MB/s':>10}")
        for r, c, d in details:
            needs = d.streamed_bytes / (r.published(c) * 1e-3) / 1e6
            print(f"{r.key:<20} {c:<13} {d.weight_bytes / 1e6:7.2f}M {d.working_set / 1e6:7.2f}M "
                  f"{d.cache_left / 1e6:7.2f}M {d.streamed_bytes / 1e6:8.2f}M {d.accel_ms:9.2f} {d.io_ms:6.2f} "
                  f"{needs:10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
