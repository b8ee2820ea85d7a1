"""Compare the simulated Hexagon NPU with Qualcomm AI Hub's published Galaxy S24 times.

Qualcomm AI Hub publishes, per model, the time of one inference on real phones
(`quic/ai-hub-models` at commit 52c080d, 2026-02-12, `qai_hub_models/models/<name>/perf.yaml`:
device "Samsung Galaxy S24" (Snapdragon 8 Gen 3), runtime `tflite` (the QNN delegate), every
layer on the NPU). Its models are torchvision ports; this script builds the Keras architectures
of the same name at 224x224 (`benchmarks/keras_tflite.py`: random weights, batch 1) as float32
files for the "float" column (the NPU runs them in fp16) and full-integer int8 files for the
"w8a8" column, and simulates each on `hexagon_v75_npu` (host `host_cpu`, which runs only what
the NPU leaves: the "cpu nodes" column says how many; AI Hub ran none on the CPU).

It prints simulated against published milliseconds with their ratio, each row marked `fit`
(`hexagon_v75_npu`'s fitted values were chosen on it) or `held-out` (never used to choose
anything; `benchmarks/calibration.py`), and per group the geometric-mean error
exp(mean |ln(simulated / published)|) - 1 and the worst row, max(r, 1/r); the held-out error is the headline.

The .tflite files are cached in ~/.cache/accelsim/aihub/ (or --cache DIR); building them needs
TensorFlow, and with a full cache nothing imports TensorFlow.

Usage:
    python benchmarks/cost_vs_aihub.py [--cache DIR]
    python benchmarks/cost_vs_aihub.py --fit
    python benchmarks/cost_vs_aihub.py --summarize [--cache DIR]

--fit refits the config's fitted values (`FITTED`) on the fit rows alone, by `calibration.fit`'s
descent on the YAML's grid (4 significant digits, node_cycles whole) from the YAML's own values,
and prints each beside the YAML's and whether the YAML holds the fit (it writes nothing). It reads
the committed summaries of the fit rows' models (`benchmarks/aihub_fit_rows/*.tflite.xz`: weights
zeroed, all a cost-only simulation reads), so it needs neither TensorFlow nor the cache, and a test
reruns it. --summarize writes those summaries from the cache, after checking that each simulates
exactly as its model.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.experiments.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.hardware.config import System, apply_overrides, load_hardware  # noqa: E402
from accelsim.hardware.device import Device  # noqa: E402
from accelsim.runtime.ir import Model  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.simulation.analysis import analyze, simulate_analysis  # noqa: E402
from accelsim.simulation.inference import HOST  # noqa: E402
from benchmarks import calibration  # noqa: E402
from benchmarks.keras_tflite import build_tflite  # noqa: E402

CACHE = Path.home() / ".cache" / "accelsim" / "aihub"
SUMMARIES = ROOT / "benchmarks" / "aihub_fit_rows"
NPU = "hexagon_v75_npu"
HOST_CONFIG = "host_cpu"
SIZE = 224
# The table's columns: (column title, model file dtype).
COLUMNS = (("float", "float32"), ("w8a8", "int8"))
# hexagon_v75_npu's values marked "fitted" (key paths; bandwidth in GB/s). The vector unit's
# float16 rate is not fitted: HVX vectors are 128 bytes, so they hold half as many 16-bit lanes.
FITTED = ("compute.macs_per_cycle.int8", "compute.macs_per_cycle.float16", "compute.vector_per_cycle.int8",
          "compute.node_cycles", "memory.levels.dram.bandwidth")
INTEGERS = frozenset({"compute.node_cycles"})
# The fit keeps DRAM bandwidth at or below the LPDDR5x peak: 4800 MHz, 9.6 GT/s on 64 bits
# (Snapdragon 8 Gen 3 product brief).
UPPER = {"memory.levels.dram.bandwidth": 76.8}


@dataclass(frozen=True)
class HubRow:
    """One model of the table: a keras.applications builder and AI Hub's ms per column (None: not published)."""

    key: str
    label: str
    application: str
    float_ms: float | None
    int8_ms: float | None
    held_out: bool = False

    def published(self, dtype: str) -> float | None:
        return self.float_ms if dtype == "float32" else self.int8_ms

    @property
    def role(self) -> str:
        """HELD_OUT or FIT (`benchmarks.calibration`)."""
        return calibration.HELD_OUT if self.held_out else calibration.FIT


# quic/ai-hub-models @ 52c080d, perf.yaml, Samsung Galaxy S24, tflite, inference_time_milliseconds.
ROWS = (
    HubRow("mobilenet_v2", "MobileNet-v2", "MobileNetV2", 0.593, 0.289),
    HubRow("resnet50", "ResNet50", "ResNet50", 1.600, 0.576),
    HubRow("efficientnet_b0", "EfficientNet-B0", "EfficientNetB0", 1.073, None),
    HubRow("inception_v3", "Inception-v3 (224)", "InceptionV3", 1.026, 0.484, held_out=True),
)


def model_path(cache: Path, row: HubRow, dtype: str) -> Path:
    return cache / f"{row.key}_{dtype}.tflite"


def ensure_models(cache: Path) -> None:
    """Build every missing model file into `cache`.

    Raises:
        SystemExit: models are missing and TensorFlow is not installed (the message gives the
            commands that build them in a TensorFlow-only environment).
    """
    missing = [(r, d) for r in ROWS for _, d in COLUMNS
               if r.published(d) is not None and not model_path(cache, r, d).exists()]
    if not missing:
        return
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        commands = "; ".join(f"python benchmarks/keras_tflite.py {model_path(cache, r, d)} {r.application} "
                             f"{SIZE} {d}" for r, d in missing)
        raise SystemExit(f"cost_vs_aihub: models missing from {cache}; building them needs TensorFlow: "
                         f"pip install -e '.[fixtures]', or in an environment with TensorFlow run: "
                         f"{commands}") from None
    cache.mkdir(parents=True, exist_ok=True)
    for r, d in missing:
        print(f"building {r.label} {d} -> {model_path(cache, r, d)} ...", flush=True)
        tmp = model_path(cache, r, d).with_suffix(".tmp")
        tmp.write_bytes(build_tflite(r.application, SIZE, d))
        tmp.replace(model_path(cache, r, d))


def values_of(npu: Device) -> dict[str, float]:
    """The current FITTED values of `npu` (bandwidth in GB/s)."""
    c = npu.hardware.compute
    dram = next(level for level in npu.hardware.memory.levels if level.name == "dram")
    return {"compute.macs_per_cycle.int8": dict(c.macs_per_cycle)["int8"],
            "compute.macs_per_cycle.float16": dict(c.macs_per_cycle)["float16"],
            "compute.vector_per_cycle.int8": dict(c.vector_per_cycle)["int8"],
            "compute.node_cycles": c.node_cycles, "memory.levels.dram.bandwidth": dram.bandwidth / 1e9}


def with_values(npu: Device, values: Mapping[str, float]) -> Device:
    """`npu` with FITTED `values`; the vector unit's float16 rate follows its int8 rate (half the lanes)."""
    overrides = {k: (f"{v:.6g} GB/s" if k == "memory.levels.dram.bandwidth" else v) for k, v in values.items()}
    overrides["compute.vector_per_cycle.float16"] = values["compute.vector_per_cycle.int8"] / 2
    return apply_overrides(npu, overrides)


@dataclass(frozen=True)
class Case:
    """One published number and the analysed model it is compared with."""

    row: HubRow
    column: str
    dtype: str
    analysis: object

    @property
    def published(self) -> float:
        return self.row.published(self.dtype)


def cases(cache: Path, system: System) -> list[Case]:
    return [Case(r, title, d, analyze(load_model(str(model_path(cache, r, d))), system))
            for r in ROWS for title, d in COLUMNS if r.published(d) is not None]


def fit_models() -> list[tuple[HubRow, str, str]]:
    """(row, column title, dtype) of every fit row's published number: what --summarize commits."""
    return [(r, title, d) for r in ROWS if not r.held_out for title, d in COLUMNS if r.published(d) is not None]


def summary_path(row: HubRow, dtype: str) -> Path:
    return SUMMARIES / f"{row.key}_{dtype}.tflite.xz"


def summarize(cache: Path, system: System) -> list[str]:
    """Write the fit rows' summaries from the cached models; each must simulate as its model."""
    def latencies(model: Model) -> list[float]:
        return [simulate_analysis(analyze(model, system), system).latency]

    return [calibration.write_summary(model_path(cache, r, d), summary_path(r, d), latencies, "cost_vs_aihub")
            for r, _, d in fit_models()]


def refit(found: Sequence[Case], host: Device, npu: Device) -> dict[str, float]:
    """FITTED values chosen on the fit rows (held-out rows never enter)."""
    fit_cases = [c for c in found if not c.row.held_out]

    def ratios(values: Mapping[str, float]) -> list[float]:
        system = System(host, (with_values(npu, values),))
        return [simulate_analysis(c.analysis, system).latency * 1e3 / c.published for c in fit_cases]

    return calibration.fit(ratios, values_of(npu), INTEGERS, UPPER)


def fit_lines(host: Device, npu: Device) -> list[str]:
    """What --fit prints: each FITTED value, refitted from the committed summaries, beside the YAML's."""
    system = System(host, (npu,))
    found = [Case(r, title, d, analyze(calibration.read_summary(summary_path(r, d), "cost_vs_aihub"), system))
             for r, title, d in fit_models()]
    before, after = values_of(npu), refit(found, host, npu)
    lines = [f"{NPU}: fit rows: {', '.join(f'{c.row.key} {c.column}' for c in found)}"]
    same = True
    for key in FITTED:
        whole = key in INTEGERS
        ours, shipped = calibration.on_grid(after[key], whole), calibration.on_grid(before[key], whole)
        same &= ours == shipped
        lines.append(f"  {key}: {ours:g}  (YAML {shipped:g}{', differs' if ours != shipped else ''})")
    lines.append(f"  the YAML holds the fit: {'yes' if same else 'no'}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help=f"folder of the converted .tflite models (default {CACHE})")
    parser.add_argument("--fit", action="store_true",
                        help=f"refit {NPU}'s fitted values on the fit rows' committed summaries and print them "
                             "beside the YAML's (writes nothing; needs no models)")
    parser.add_argument("--summarize", action="store_true",
                        help=f"write the fit rows' summaries into {SUMMARIES.relative_to(ROOT)} from the cache")
    args = parser.parse_args(argv)
    host = load_hardware(SHIPPED_CONFIGS / f"{HOST_CONFIG}.yaml")
    npu = load_hardware(SHIPPED_CONFIGS / f"{NPU}.yaml")
    if args.fit:
        print("\n".join(fit_lines(host, npu)))
        return 0
    ensure_models(args.cache)
    if args.summarize:
        print("\n".join(summarize(args.cache, System(host, (npu,)))))
        return 0
    found = cases(args.cache, System(host, (npu,)))
    system = System(host, (npu,))
    header = (f"{'model':<20} {'column':<7} {'simulated ms':>12} {'AI Hub ms':>9} {'ratio':>6} {'row':<8} "
              f"{'cpu nodes':>9}")
    print(header)
    print("-" * len(header))
    marked: list[tuple[str, float]] = []
    for c in found:
        sim = simulate_analysis(c.analysis, system)
        ms = sim.latency * 1e3
        marked.append((c.row.role, ms / c.published))
        on_cpu = sum(1 for n in sim.nodes if n.unit == HOST)
        print(f"{c.row.label:<20} {c.column:<7} {ms:12.3f} {c.published:9.3f} {ms / c.published:6.2f} "
              f"{c.row.role:<8} {on_cpu:9d}")
    print("\n".join(calibration.error_lines(f"{NPU} / AI Hub", marked)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
