"""Compare simulated Edge TPU latency with Coral's published benchmark table.

Coral's "Edge TPU performance benchmarks" page (coral.ai/docs/edgetpu/benchmarks, Table 1,
"Time per inference, in milliseconds") lists ImageNet classifiers on the USB Accelerator
(USB 3.0, desktop host) and on the Dev Board (Edge TPU over PCIe Gen2 x1). This script
builds the same architectures with `tf.keras.applications` (random weights, batch 1 so
that Flatten is one static RESHAPE, full-integer int8 with int8 input and output, a few
random calibration samples), simulates them on `edgetpu_usb` and `edgetpu_pcie` and
prints simulated against published milliseconds with their ratio, plus the
geometric-mean error per config: exp(mean |ln(simulated / published)|) - 1.

The .tflite files are cached in ~/.cache/accelsim/coral/ (or --cache DIR) and reused:
building them needs TensorFlow (`pip install -e '.[fixtures]'`) and takes minutes for
VGG16 and Inception-ResNet-V2; with a full cache nothing imports TensorFlow.

Rows are `fit` (they informed a number in the shipped YAMLs: the array shape is fitted over
MobileNet v1 and v2, DenseNet-121 and ResNet-50 on both columns, each config's link bandwidth over
VGG16) or `held-out` (Inception-ResNet-V2, whose row contradicts Coral's Inception v4 row and is
retired from the goals: see the README). The headline error is over the held-out rows, the fit rows'
beside it.

`--fit` refits the shape and the link bandwidths from the committed summaries of the fit rows'
models (`benchmarks/coral_fit_rows/*.tflite.xz`: each model's graph with its weights zeroed and
its quantization made constant, all a cost-only simulation reads; written whenever a fit row's
model is built, or by `--summarize` from the cache, after checking that each simulates exactly as
its full model) and prints each value
beside the YAML's: it needs neither TensorFlow nor the cache, and a test reruns it.

Usage:
    python benchmarks/cost_vs_coral.py [--cache DIR] [--models KEY ...] [--detail]
    python benchmarks/cost_vs_coral.py --fit
    python benchmarks/cost_vs_coral.py --summarize [--cache DIR]

--detail adds, per model and config, what decides the time: weight bytes, the largest
activation working set (one node's inputs and outputs), the parameter cache left beside it,
the weight bytes streamed over the link per inference, simulated accelerator and I/O
milliseconds, and "needs MB/s": the link rate at which the streamed weights alone would
fill Coral's whole time (above the link's line rate, the published time cannot come from
streaming that many bytes).
"""

from __future__ import annotations

import argparse
import dataclasses
import lzma
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from accelsim import memory  # noqa: E402
from accelsim.analysis import analyze  # noqa: E402
from accelsim.config import HardwareConfig, System, apply_overrides, load_system  # noqa: E402
from accelsim.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.runtime.ir import Model  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.runtime.work import NodeWork  # noqa: E402
from accelsim.runtime.write import save_model  # noqa: E402
from accelsim.system import HOST, Simulation, build_interpreter, simulate_analysis, simulate_interpreter  # noqa: E402
from benchmarks.calibration import FIT, HELD_OUT, error_lines  # noqa: E402

CACHE = Path.home() / ".cache" / "accelsim" / "coral"
CONFIGS = ("edgetpu_usb", "edgetpu_pcie")
CALIBRATION_SAMPLES = 4
SUMMARIES = ROOT / "benchmarks" / "coral_fit_rows"
# The fit rows: the array shape (rows x cols, 4096 MACs) over the first four on both columns, each
# config's link bandwidth over VGG16 (the most link-bound row) with that shape.
SHAPE_ROWS = ("mobilenet_v1", "mobilenet_v2", "densenet121", "resnet50_299")
LINK_ROW = "vgg16"
FIT_ROWS = (*SHAPE_ROWS, LINK_ROW)
SHAPES = tuple((2**k, 4096 // 2**k) for k in range(13))  # every power-of-two shape of 4096 MACs
LINK_STEP = 10e6  # the YAMLs state link bandwidths to 10 MB/s
LINK_RANGE = (100e6, 1000e6)


@dataclass(frozen=True)
class CoralRow:
    """One row of Coral's Table 1: a keras.applications builder, its input size, published ms."""

    key: str
    label: str
    application: str
    size: int
    usb_ms: float
    pcie_ms: float

    def published(self, config: str) -> float:
        return self.usb_ms if config == "edgetpu_usb" else self.pcie_ms


# Coral "Edge TPU performance benchmarks", Table 1: "Desktop CPU + USB Accelerator (USB 3.0)
# with Edge TPU" and "Dev Board with Edge TPU" columns.
ROWS = (
    CoralRow("mobilenet_v1", "MobileNet v1 (224)", "MobileNet", 224, 2.4, 2.4),
    CoralRow("mobilenet_v2", "MobileNet v2 (224)", "MobileNetV2", 224, 2.6, 2.6),
    CoralRow("densenet121", "DenseNet-121 (224)", "DenseNet121", 224, 20.0, 25.0),
    CoralRow("resnet50_299", "ResNet-50 V1 (299)", "ResNet50", 299, 49.0, 56.0),
    CoralRow("inception_resnet_v2", "Inception-ResNet V2 (299)", "InceptionResNetV2", 299, 57.0, 69.0),
    CoralRow("vgg16", "VGG16 (224)", "VGG16", 224, 296.0, 343.0),
)


def row_set(key: str) -> str:
    """FIT when the row informed a number in the shipped Edge TPU configs, else HELD_OUT."""
    return FIT if key in FIT_ROWS else HELD_OUT


def summary_model(model: Model) -> Model:
    """`model` with what a cost-only simulation does not read made constant: buffers over 64 bytes (weights,
    biases) zeroed, per-channel scales and zero points set to their first value. Shapes, types, the graph and
    small constants (shapes, paddings, permutations) stay."""
    def constant_quantization(tensor):
        q = tensor.quantization
        if q is None or not q.scales:
            return tensor
        q = dataclasses.replace(q, scales=(q.scales[0],) * len(q.scales), min=(), max=(),
                                zero_points=(q.zero_points[0],) * len(q.zero_points) if q.zero_points else ())
        return dataclasses.replace(tensor, quantization=q)

    subgraphs = tuple(dataclasses.replace(sg, tensors=tuple(map(constant_quantization, sg.tensors)))
                      for sg in model.subgraphs)
    buffers = tuple(b if len(b) <= 64 else bytes(len(b)) for b in model.buffers)
    return dataclasses.replace(model, subgraphs=subgraphs, buffers=buffers)


def summarize(paths: dict[str, Path], systems: dict[str, System]) -> list[str]:
    """Write the fit rows' summaries (xz-compressed) from the cached models; each must simulate as its model.

    Raises:
        SystemExit: a summary simulates differently from its model on a config.
    """
    SUMMARIES.mkdir(exist_ok=True)
    lines = []
    for key in FIT_ROWS:
        full = load_model(str(paths[key]))
        data = save_model(summary_model(full))
        for c, system in systems.items():
            ours, theirs = [simulate_analysis(analyze(m, system), system).latency for m in (load_model(data), full)]
            if ours != theirs:
                raise SystemExit(f"cost_vs_coral --summarize: {key}'s summary simulates {ours * 1e3:.3f} ms on {c}, "
                                 f"its model {theirs * 1e3:.3f} ms")
        out = SUMMARIES / f"{key}_int8.tflite.xz"
        out.write_bytes(lzma.compress(data, preset=9))
        lines.append(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size} bytes)")
    return lines


def _latency(analysis, system: System, overrides: dict) -> float:
    accelerator = apply_overrides(system.accelerators[0], overrides)
    return simulate_analysis(analysis, System(system.host, (accelerator,))).latency


def fit(systems: dict[str, System]) -> dict[str, object]:
    """The array shape and each config's link bandwidth, refitted from the committed summaries.

    The shape: among `SHAPES`, the one with the least sum of squared log ratios simulated / published over
    SHAPE_ROWS on every config (link as in the YAML). Then per config, the link bandwidth on the YAMLs'
    10 MB/s grid within LINK_RANGE whose VGG16 time is closest to Coral's (|log ratio|), with that shape.
    Ties go to the first (the narrower array, the slower link). Deterministic: no TensorFlow, no timing.
    """
    rows = {r.key: r for r in ROWS}
    analyses = {(key, c): analyze(load_model(lzma.decompress((SUMMARIES / f"{key}_int8.tflite.xz").read_bytes())),
                                  system)
                for key in FIT_ROWS for c, system in systems.items()}

    def shape_error(shape: tuple[int, int]) -> float:
        overrides = {"compute.rows": shape[0], "compute.cols": shape[1]}
        return sum(math.log(_latency(analyses[key, c], system, overrides) * 1e3 / rows[key].published(c)) ** 2
                   for key in SHAPE_ROWS for c, system in systems.items())

    shape = min(SHAPES, key=shape_error)
    out: dict[str, object] = {"compute.rows": shape[0], "compute.cols": shape[1]}
    steps = range(round(LINK_RANGE[0] / LINK_STEP), round(LINK_RANGE[1] / LINK_STEP) + 1)
    for c, system in systems.items():
        def link_error(step: int, c=c, system=system) -> float:
            overrides = {"compute.rows": shape[0], "compute.cols": shape[1],
                         "link.bandwidth": f"{step * LINK_STEP / 1e6:g} MB/s"}
            return abs(math.log(_latency(analyses[LINK_ROW, c], system, overrides) * 1e3 / rows[LINK_ROW].published(c)))

        out[f"{c}.link.bandwidth"] = min(steps, key=link_error) * LINK_STEP
    return out


def fit_lines(systems: dict[str, System]) -> list[str]:
    """What --fit prints: each fitted value beside the YAML's, and whether the YAMLs hold the fit."""
    fitted = fit(systems)
    lines, same = [f"fit rows: shape over {', '.join(SHAPE_ROWS)} (both columns); link over {LINK_ROW}"], True
    for c, system in systems.items():
        hw = system.accelerators[0]
        shipped = {"compute.rows": hw.compute.rows, "compute.cols": hw.compute.cols,
                   f"{c}.link.bandwidth": hw.link.bandwidth}
        for key, value in shipped.items():
            ours = fitted[key]
            same &= ours == value
            shown = (lambda v: f"{v / 1e6:g} MB/s") if key.endswith("bandwidth") else str
            lines.append(f"  {c}: {key.removeprefix(c + '.')}: {shown(ours)}  (YAML {shown(value)}"
                         f"{', differs' if ours != value else ''})")
    lines.append(f"  the YAMLs hold the fit: {'yes' if same else 'no'}")
    return lines


def build_tflite(row: CoralRow) -> bytes:
    """Build `row`'s architecture with random weights and convert it to full-integer int8 (needs TensorFlow)."""
    import numpy as np
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    shape = (row.size, row.size, 3)
    model = getattr(tf.keras.applications, row.application)(
        input_tensor=tf.keras.Input(shape, batch_size=1), weights=None)

    @tf.function(input_signature=[tf.TensorSpec((1, *shape), tf.float32, name="input")])
    def serve(x):
        return model(x, training=False)

    # Keras 3 variables are not tf.Module-tracked: hand the converter their tf.Variables to freeze.
    holder = tf.Module()
    holder.variables_to_freeze = [v.value for v in model.weights]
    converter = tf.lite.TFLiteConverter.from_concrete_functions([serve.get_concrete_function()], holder)

    def calibration():
        rng = np.random.default_rng(0)
        for _ in range(CALIBRATION_SAMPLES):
            yield [rng.uniform(-1.0, 1.0, (1, *shape)).astype(np.float32)]

    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = calibration
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    return converter.convert()


def ensure_models(rows: Sequence[CoralRow], cache: Path) -> dict[str, Path]:
    """Path of each row's cached .tflite, building the missing ones.

    Raises:
        SystemExit: models are missing and TensorFlow is not installed.
    """
    paths = {r.key: cache / f"{r.key}_int8.tflite" for r in rows}
    missing = [r for r in rows if not paths[r.key].exists()]
    if not missing:
        return paths
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        raise SystemExit(f"cost_vs_coral: building {', '.join(r.key for r in missing)} into {cache} needs "
                         "TensorFlow: pip install -e '.[fixtures]'") from None
    cache.mkdir(parents=True, exist_ok=True)
    for r in missing:
        print(f"building {r.label} -> {paths[r.key]} ...", flush=True)
        tmp = paths[r.key].with_suffix(".tmp")
        tmp.write_bytes(build_tflite(r))
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help=f"folder of the converted .tflite models (default {CACHE})")
    parser.add_argument("--models", nargs="+", choices=[r.key for r in ROWS], metavar="KEY",
                        help=f"only these rows: {', '.join(r.key for r in ROWS)}")
    parser.add_argument("--detail", action="store_true", help="also print bytes and where the time goes")
    parser.add_argument("--fit", action="store_true",
                        help="refit the array shape and link bandwidths from the committed summaries and print them")
    parser.add_argument("--summarize", action="store_true",
                        help=f"write the fit rows' summaries into {SUMMARIES.relative_to(ROOT)} from the cache")
    args = parser.parse_args(argv)
    systems = {c: load_system(SHIPPED_CONFIGS / "host_cpu.yaml", [SHIPPED_CONFIGS / f"{c}.yaml"]) for c in CONFIGS}
    if args.fit:
        print("\n".join(fit_lines(systems)))
        return 0
    if args.summarize:
        print("\n".join(summarize(ensure_models([r for r in ROWS if r.key in FIT_ROWS], args.cache), systems)))
        return 0
    rows = [r for r in ROWS if not args.models or r.key in args.models]
    built = [r.key for r in rows if not (args.cache / f"{r.key}_int8.tflite").exists()]
    paths = ensure_models(rows, args.cache)
    if set(built) & set(FIT_ROWS):  # a fit row was (re)built: its committed summary follows the new model
        print("\n".join(summarize(ensure_models([r for r in ROWS if r.key in FIT_ROWS], args.cache), systems)))
    header = f"{'model':<27} {'set':<8}" + "".join(f"{c + ' ms':>17} {'Coral ms':>9} {'ratio':>6}" for c in CONFIGS)
    print(header)
    print("-" * len(header))
    ratios: dict[str, list[float]] = {c: [] for c in CONFIGS}
    details: list[tuple[CoralRow, str, Detail]] = []
    for r in rows:
        model = load_model(str(paths[r.key]))
        line = f"{r.label:<27} {row_set(r.key):<8}"
        for c in CONFIGS:
            system = systems[c]
            interpreter, delegates = build_interpreter(model, system)
            sim = simulate_interpreter(interpreter, delegates, system, name=r.key)
            works = [w for _, w in sorted(delegates[0].work_by_node().items())]
            details.append((r, c, detail(works, sim, system.accelerators[0])))
            ms = sim.latency * 1e3
            ratios[c].append(ms / r.published(c))
            line += f"{ms:17.1f} {r.published(c):9.1f} {ratios[c][-1]:6.2f}"
        print(line, flush=True)
    for c in CONFIGS:
        print("\n".join(error_lines(f"{c} / Coral", [(row_set(r.key), x) for r, x in zip(rows, ratios[c])])))
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
