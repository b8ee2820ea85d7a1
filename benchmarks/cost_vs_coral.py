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

It prints simulated against published milliseconds with their ratio. Every row is marked per
column (`benchmarks/calibration.py`): `fit` (it informed a number in that column's YAML),
`shaped` (it informed no number but shaped a mechanism: DenseNet-121 on the Embedded CPU column,
whose wide-window 32-channel layers gave the cpu kind's pack_cycles in the commit that declared it
held out, b0367b6), `held-out` (it never informed anything) or `retired` (outside the column's goal:
printed, in no error, with the reason below the table). Per column the headline error is over the
held-out rows, the shaped and fit rows' beside it. The fit rows: on the Edge TPU columns the
array shape over MobileNet v1 and v2, DenseNet-121 and ResNet-50 (both columns), each config's
link bandwidth over VGG16; Inception-ResNet-V2 is retired there (its row contradicts Coral's Inception v4 row: see the
README), so the Edge TPU columns have no held-out row. On the Embedded CPU column
cortex_a53_cpu's compute values over MobileNet v1 and v2, ResNet-50 and VGG16; DenseNet-121 is
shaped and Inception-ResNet-V2 is the one held-out row.

The .tflite files are cached in ~/.cache/accelsim/coral/ (or --cache DIR) and reused: building
them needs TensorFlow and takes minutes for VGG16 and Inception-ResNet-V2; with a full cache
nothing imports TensorFlow.

`--fit` refits the Edge TPU shape and link bandwidths and cortex_a53_cpu's fitted compute values
(`CPU_FITTED`) from the committed summaries of the fit rows' models
(`benchmarks/coral_fit_rows/*.tflite.xz`: each model's graph with its weights zeroed and its
quantization made constant, all a cost-only simulation reads; written whenever a fit row's model
is built, or by `--summarize` from the cache, after checking that each simulates exactly as its
full model on every column) and prints each value beside the YAML's: it needs neither TensorFlow
nor the cache, and a test reruns it.

Usage:
    python benchmarks/cost_vs_coral.py [--cache DIR] [--models KEY ...] [--detail]
    python benchmarks/cost_vs_coral.py --fit
    python benchmarks/cost_vs_coral.py --summarize [--cache DIR]

--detail adds, per model and Edge TPU config, what decides the time: weight bytes, the largest
activation working set (one node's inputs and outputs), the parameter cache left beside it,
the weight bytes streamed over the link per inference, simulated accelerator and I/O
milliseconds, and "needs MB/s": the link rate at which the streamed weights alone would
fill Coral's whole time (above the link's line rate, the published time cannot come from
streaming that many bytes).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.experiments.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.hardware import memory  # noqa: E402
from accelsim.hardware.config import System, apply_overrides, load_hardware  # noqa: E402
from accelsim.hardware.device import Device  # noqa: E402
from accelsim.runtime.ir import Model  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.runtime.work import NodeWork  # noqa: E402
from accelsim.simulation.analysis import analyze, simulate_analysis  # noqa: E402
from accelsim.simulation.costing import simulate_interpreter  # noqa: E402
from accelsim.simulation.delegation import build_interpreter  # noqa: E402
from accelsim.simulation.inference import HOST, Simulation  # noqa: E402
from benchmarks import calibration  # noqa: E402
from benchmarks.calibration import FIT, HELD_OUT, RETIRED, SHAPED, error_lines  # noqa: E402
from benchmarks.keras_tflite import build_tflite  # noqa: E402

CACHE = Path.home() / ".cache" / "accelsim" / "coral"
CPU = "cortex_a53_cpu"
EDGETPU = ("edgetpu_usb", "edgetpu_pcie")
CONFIGS = (CPU, *EDGETPU)
# The host each column's accelerator is attached to (the CPU column has none).
HOSTS = {CPU: CPU, "edgetpu_usb": "host_cpu", "edgetpu_pcie": CPU}
# cortex_a53_cpu's fitted values, as key paths (`accelsim.hardware.config.apply_overrides`).
CPU_FITTED = ("compute.efficiency", "compute.row_cycles.int8", "compute.pack_cycles.int8")
SUMMARIES = ROOT / "benchmarks" / "coral_fit_rows"
# The Edge TPU fit rows: the array shape (rows x cols, 4096 MACs) over the first four on both columns,
# each config's link bandwidth over VGG16 (the most link-bound row) with that shape.
SHAPE_ROWS = ("mobilenet_v1", "mobilenet_v2", "densenet121", "resnet50_299")
LINK_ROW = "vgg16"
FIT_ROWS = (*SHAPE_ROWS, LINK_ROW)
SHAPES = tuple((2**k, 4096 // 2**k) for k in range(13))  # every power-of-two shape of 4096 MACs
LINK_STEP = 10e6  # the YAMLs state link bandwidths to 10 MB/s
LINK_RANGE = (100e6, 1000e6)


@dataclass(frozen=True)
class CoralRow:
    """One row of Coral's Table 1: a keras.applications builder, its input size, published ms per column.

    held_out: the columns where this row was never used to fit anything; shaped: column -> the mechanism the row
    shaped there (so it is not held out); retired: column -> why the row is in no error of that column.
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
    shaped: Mapping[str, str] = field(default_factory=dict)

    def published(self, config: str) -> float:
        return {CPU: self.cpu_ms, "edgetpu_usb": self.usb_ms, "edgetpu_pcie": self.pcie_ms}[config]

    def role(self, config: str) -> str:
        """RETIRED, SHAPED, HELD_OUT or FIT in `config`'s column."""
        if config in self.retired:
            return RETIRED
        return SHAPED if config in self.shaped else HELD_OUT if config in self.held_out else FIT


_RETIRED_IRV2 = ("Coral's row contradicts its Inception v4 row over the same link: 57 ms (USB) for 55.9 M "
                 "parameters against 85 ms for 42.7 M; streaming 55.9 M in 57 ms needs about twice Inception "
                 "v4's rate")

# Coral "Edge TPU performance benchmarks", Table 1: the "Embedded CPU", "Desktop CPU + USB
# Accelerator (USB 3.0) with Edge TPU" and "Dev Board with Edge TPU" columns.
ROWS = (
    CoralRow("mobilenet_v1", "MobileNet v1 (224)", "MobileNet", 224, 164.0, 2.4, 2.4),
    CoralRow("mobilenet_v2", "MobileNet v2 (224)", "MobileNetV2", 224, 122.0, 2.6, 2.6),
    CoralRow("densenet121", "DenseNet-121 (224)", "DenseNet121", 224, 1032.0, 20.0, 25.0,
             shaped={CPU: "its wide-window, 32-channel layers gave the cpu kind's pack_cycles (b0367b6), "
                          "though no number was fitted on it"}),
    CoralRow("resnet50_299", "ResNet-50 V1 (299)", "ResNet50", 299, 1763.0, 49.0, 56.0),
    CoralRow("inception_resnet_v2", "Inception-ResNet V2 (299)", "InceptionResNetV2", 299, 2852.0, 57.0, 69.0,
             held_out=frozenset({CPU}), retired={"edgetpu_usb": _RETIRED_IRV2, "edgetpu_pcie": _RETIRED_IRV2}),
    CoralRow("vgg16", "VGG16 (224)", "VGG16", 224, 4595.0, 296.0, 343.0),
)
# Every row fit on some column has a committed summary (the CPU's fit rows are among the Edge TPU's).
SUMMARY_ROWS = tuple(r.key for r in ROWS if any(r.role(c) == FIT for c in CONFIGS))


def systems(cpu: Device) -> dict[str, System]:
    """Each column's system, with `cpu` as the Dev Board's CPU."""
    def config(name: str) -> Device:
        return cpu if name == CPU else load_hardware(SHIPPED_CONFIGS / f"{name}.yaml")

    return {c: System(config(HOSTS[c]), () if c == CPU else (config(c),)) for c in CONFIGS}


def summarize(paths: Mapping[str, Path], columns: Mapping[str, System]) -> list[str]:
    """Write the fit rows' summaries (xz-compressed) from the cached models; each must simulate as its model
    on every column (`calibration.write_summary`)."""
    def latencies(model: Model) -> list[float]:
        return [simulate_analysis(analyze(model, system), system).latency for system in columns.values()]

    return [calibration.write_summary(paths[key], SUMMARIES / f"{key}_int8.tflite.xz", latencies, "cost_vs_coral")
            for key in SUMMARY_ROWS]


def summary(key: str) -> Model:
    """A fit row's committed summary."""
    return calibration.read_summary(SUMMARIES / f"{key}_int8.tflite.xz", "cost_vs_coral")


def _latency(analysis, system: System, overrides: dict) -> float:
    accelerator = apply_overrides(system.accelerators[0], overrides)
    return simulate_analysis(analysis, System(system.host, (accelerator,))).latency


def fit(columns: Mapping[str, System]) -> dict[str, object]:
    """The Edge TPU array shape and each config's link bandwidth, refitted from the committed summaries.

    The shape: among `SHAPES`, the one with the least sum of squared log ratios simulated / published over
    SHAPE_ROWS on both Edge TPU columns (link as in the YAML). Then per config, the link bandwidth on the YAMLs'
    10 MB/s grid within LINK_RANGE whose VGG16 time is closest to Coral's (|log ratio|), with that shape.
    Ties go to the first (the narrower array, the slower link). Deterministic: no TensorFlow, no timing.
    """
    rows = {r.key: r for r in ROWS}
    tpu = {c: columns[c] for c in EDGETPU}
    analyses = {(key, c): analyze(summary(key), system) for key in FIT_ROWS for c, system in tpu.items()}

    def shape_error(shape: tuple[int, int]) -> float:
        overrides = {"compute.rows": shape[0], "compute.cols": shape[1]}
        return sum(math.log(_latency(analyses[key, c], system, overrides) * 1e3 / rows[key].published(c)) ** 2
                   for key in SHAPE_ROWS for c, system in tpu.items())

    shape = min(SHAPES, key=shape_error)
    out: dict[str, object] = {"compute.rows": shape[0], "compute.cols": shape[1]}
    steps = range(round(LINK_RANGE[0] / LINK_STEP), round(LINK_RANGE[1] / LINK_STEP) + 1)
    for c, system in tpu.items():
        def link_error(step: int, c=c, system=system) -> float:
            overrides = {"compute.rows": shape[0], "compute.cols": shape[1],
                         "link.bandwidth": f"{step * LINK_STEP / 1e6:g} MB/s"}
            return abs(math.log(_latency(analyses[LINK_ROW, c], system, overrides) * 1e3 / rows[LINK_ROW].published(c)))

        out[f"{c}.link.bandwidth"] = min(steps, key=link_error) * LINK_STEP
    return out


def cpu_values(cpu: Device) -> dict[str, float]:
    """The current CPU_FITTED values of `cpu`."""
    c = cpu.hardware.compute
    return {"compute.efficiency": c.efficiency, "compute.row_cycles.int8": dict(c.row_cycles)["int8"],
            "compute.pack_cycles.int8": dict(c.pack_cycles)["int8"]}


def refit_cpu(cpu: Device) -> dict[str, float]:
    """CPU_FITTED values chosen on the Embedded CPU column's fit rows (held-out rows never enter), from their
    committed summaries; a local descent from `cpu`'s values."""
    fit_rows = [r for r in ROWS if r.role(CPU) == FIT]
    host_only = System(cpu, ())
    analyses = [(r, analyze(summary(r.key), host_only)) for r in fit_rows]

    def ratios(values: Mapping[str, float]) -> list[float]:
        trial = System(apply_overrides(cpu, values), ())
        return [simulate_analysis(a, trial).latency * 1e3 / r.cpu_ms for r, a in analyses]

    return calibration.fit(ratios, cpu_values(cpu), upper={"compute.efficiency": 1.0})


def fit_lines(columns: Mapping[str, System]) -> list[str]:
    """What --fit prints: each fitted value beside the YAML's, and whether the YAMLs hold the fit.

    The Edge TPU values are on grids and must be equal; cortex_a53_cpu's to the 4 significant digits its YAML
    states."""
    fitted = fit(columns)
    lines, same = [f"Edge TPU fit rows: shape over {', '.join(SHAPE_ROWS)} (both columns); link over {LINK_ROW}"], True
    for c in EDGETPU:
        hw = columns[c].accelerators[0].hardware
        shipped = {"compute.rows": hw.compute.rows, "compute.cols": hw.compute.cols,
                   f"{c}.link.bandwidth": hw.link.bandwidth}
        for key, value in shipped.items():
            ours = fitted[key]
            same &= ours == value
            shown = (lambda v: f"{v / 1e6:g} MB/s") if key.endswith("bandwidth") else str
            lines.append(f"  {c}: {key.removeprefix(c + '.')}: {shown(ours)}  (YAML {shown(value)}"
                         f"{', differs' if ours != value else ''})")
    cpu = columns[CPU].host
    before, after = cpu_values(cpu), refit_cpu(cpu)
    lines.append(f"{CPU} fit rows: {', '.join(r.key for r in ROWS if r.role(CPU) == FIT)}")
    for key in CPU_FITTED:
        ours, value = float(f"{after[key]:.4g}"), float(f"{before[key]:.4g}")
        same &= ours == value
        lines.append(f"  {CPU}: {key}: {ours:g}  (YAML {value:g}{', differs' if ours != value else ''})")
    lines.append(f"  the YAMLs hold the fit: {'yes' if same else 'no'}")
    return lines


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


def detail(works: Sequence[NodeWork], sim: Simulation, accel: Device) -> Detail:
    """Summarize one accelerator's part of a simulation."""
    nodes = [n for n in sim.nodes if n.unit != HOST]
    return Detail(weight_bytes=sum(w.weight_bytes for w in works),
                  working_set=max(w.input_bytes + w.output_bytes for w in works),
                  cache_left=memory.weight_cache(works, accel.hardware.memory) or 0,
                  streamed_bytes=sum(n.cost.param_bytes_streamed for n in nodes),
                  accel_ms=sum(n.seconds for n in nodes) * 1e3,
                  io_ms=sum(p.transfer + p.overhead for p in sim.partitions) * 1e3)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help=f"folder of the converted .tflite models (default {CACHE})")
    parser.add_argument("--models", nargs="+", choices=[r.key for r in ROWS], metavar="KEY",
                        help=f"only these rows: {', '.join(r.key for r in ROWS)}")
    parser.add_argument("--detail", action="store_true", help="also print bytes and where the Edge TPU time goes")
    parser.add_argument("--fit", action="store_true",
                        help=f"refit the Edge TPU shape and link bandwidths and {CPU}'s fitted values from the "
                             "committed summaries and print them beside the YAMLs'")
    parser.add_argument("--summarize", action="store_true",
                        help=f"write the fit rows' summaries into {SUMMARIES.relative_to(ROOT)} from the cache")
    args = parser.parse_args(argv)
    columns = systems(load_hardware(SHIPPED_CONFIGS / f"{CPU}.yaml"))
    if args.fit:
        print("\n".join(fit_lines(columns)))
        return 0
    fit_rows = [r for r in ROWS if r.key in SUMMARY_ROWS]
    if args.summarize:
        print("\n".join(summarize(ensure_models(fit_rows, args.cache), columns)))
        return 0
    rows = [r for r in ROWS if not args.models or r.key in args.models]
    built = [r.key for r in rows if not (args.cache / f"{r.key}_int8.tflite").exists()]
    paths = ensure_models(rows, args.cache)
    if set(built) & set(SUMMARY_ROWS):  # a fit row was (re)built: its committed summary follows the new model
        print("\n".join(summarize(ensure_models(fit_rows, args.cache), columns)))
    columns_text = "".join(f"{c + ' ms':>18} {'Coral ms':>9} {'ratio':>6} {'row':<8}" for c in CONFIGS)
    header = f"{'model':<27}{columns_text}".rstrip()
    print(header)
    print("-" * len(header))
    marked: dict[str, list[tuple[str, float]]] = {c: [] for c in CONFIGS}
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
            marked[c].append((r.role(c), ratio))
            line += f"{ms:18.1f} {r.published(c):9.1f} {ratio:6.2f} {r.role(c):<8}"
        print(line.rstrip(), flush=True)
    for c in CONFIGS:
        print("\n".join(error_lines(f"{c} / Coral", marked[c])))
    for r in rows:
        for reason in dict.fromkeys(r.retired.values()):
            columns_text = ", ".join(c for c in CONFIGS if r.retired.get(c) == reason)
            print(f"retired: {r.label} in {columns_text}: {reason}")
        for c, reason in r.shaped.items():
            print(f"shaped: {r.label} in {c}: {reason}")
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
