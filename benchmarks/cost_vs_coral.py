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

Usage:
    python benchmarks/cost_vs_coral.py [--cache DIR] [--models KEY ...] [--detail]

--detail adds, per model and config, what decides the time: weight bytes, the largest
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim import memory  # noqa: E402
from accelsim.config import HardwareConfig, load_system  # noqa: E402
from accelsim.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.runtime.work import NodeWork  # noqa: E402
from accelsim.system import HOST, Simulation, build_interpreter, simulate_interpreter  # noqa: E402

CACHE = Path.home() / ".cache" / "accelsim" / "coral"
CONFIGS = ("edgetpu_usb", "edgetpu_pcie")
CALIBRATION_SAMPLES = 4


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


def geomean_error(ratios: Sequence[float]) -> float:
    """exp(mean |ln r|) - 1: the typical factor by which simulated and published differ."""
    return math.exp(sum(abs(math.log(r)) for r in ratios) / len(ratios)) - 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help=f"folder of the converted .tflite models (default {CACHE})")
    parser.add_argument("--models", nargs="+", choices=[r.key for r in ROWS], metavar="KEY",
                        help=f"only these rows: {', '.join(r.key for r in ROWS)}")
    parser.add_argument("--detail", action="store_true", help="also print bytes and where the time goes")
    args = parser.parse_args(argv)
    rows = [r for r in ROWS if not args.models or r.key in args.models]
    paths = ensure_models(rows, args.cache)
    systems = {c: load_system(SHIPPED_CONFIGS / "host_cpu.yaml", [SHIPPED_CONFIGS / f"{c}.yaml"]) for c in CONFIGS}
    header = f"{'model':<27}" + "".join(f"{c + ' ms':>17} {'Coral ms':>9} {'ratio':>6}" for c in CONFIGS)
    print(header)
    print("-" * len(header))
    ratios: dict[str, list[float]] = {c: [] for c in CONFIGS}
    details: list[tuple[CoralRow, str, Detail]] = []
    for r in rows:
        model = load_model(str(paths[r.key]))
        line = f"{r.label:<27}"
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
    print(f"{'geomean error':<27}" + "".join(f"{geomean_error(ratios[c]) * 100:32.0f}%" for c in CONFIGS))
    print(f"{'worst row':<27}" + "".join(f"{max(abs(x - 1) for x in ratios[c]) * 100:32.0f}%" for c in CONFIGS))
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
