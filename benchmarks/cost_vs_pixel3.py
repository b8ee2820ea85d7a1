"""Compare simulated Pixel 3 latency with TensorFlow Lite's hosted-models table (GPU, CPU float, CPU quant).

TFLite's hosted-models page (Android 10, Pixel 3) lists, in ms, image classifiers on the GPU
delegate (float models), on the CPU with 4 threads (float models) and on the CPU with 4 threads
(quantized models). This script builds the same architectures with `tf.keras.applications`
(random weights, batch 1; float32 files for the GPU and CPU float columns, full-integer int8 for
the CPU quant column; `benchmarks/pixel3_models.py`) and simulates them:

- GPU: kryo385_cpu + adreno630_gpu, float model;
- CPU float: kryo385_cpu alone, float model;  CPU quant: kryo385_cpu alone, int8 model.

Each row was marked `fit` or not before any fitting; a row not fitted on is `shaped` when its
graph (the architecture, whatever its width and resolution) is a fit row's (the MobileNet V1 0.50
rows lie between the fitted 0.25 and 1.00 widths of the same graph: interpolation, no independent
check) and `held-out` otherwise (Inception V3) (`benchmarks/calibration.py`). Per column the script
prints the geometric-mean error, exp(mean |ln(simulated / published)|) - 1, and the worst row
(max(r, 1/r)), the held-out rows' first and the shaped and fit rows' beside it; the goal is held-out
geometric-mean error <= 20% and every held-out row within 1.35x either way.

Models are cached in ~/.cache/accelsim/pixel3/ (or --cache DIR); missing ones are built by running
`pixel3_models.py` with --tf-python (an interpreter that has TensorFlow; default: this one).

`--fit` refits the fitted values (`PARAMS`: adreno630_gpu's on the GPU column, kryo385_cpu's on the
two CPU columns) on the fit rows alone, by `calibration.fit`'s descent on the YAMLs' grid (4
significant digits, kernel_cycles whole) from the YAMLs' own values, and prints each value beside
the YAML's and whether the YAMLs hold the fit (it writes nothing). It reads the committed
summaries of the fit rows' models (`benchmarks/pixel3_fit_rows/*.tflite.xz`: weights zeroed, all a
cost-only simulation reads), so it needs neither TensorFlow nor the cache, and a test reruns it.
`--summarize` writes those summaries from the cache, after checking that each simulates exactly as
its model on every column.

Usage:
    python benchmarks/cost_vs_pixel3.py [--cache DIR] [--tf-python PY]
    python benchmarks/cost_vs_pixel3.py --fit
    python benchmarks/cost_vs_pixel3.py --summarize [--cache DIR] [--tf-python PY]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.experiments.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.hardware.config import System, apply_overrides, load_hardware  # noqa: E402
from accelsim.hardware.device import Device  # noqa: E402
from accelsim.runtime.ir import Model  # noqa: E402
from accelsim.simulation.analysis import analyze, simulate_analysis  # noqa: E402
from benchmarks import calibration  # noqa: E402
from benchmarks.calibration import FIT, HELD_OUT, SHAPED, error_lines, geomean_error, worst_error  # noqa: E402

CACHE = Path.home() / ".cache" / "accelsim" / "pixel3"
SUMMARIES = ROOT / "benchmarks" / "pixel3_fit_rows"
BUILDER = Path(__file__).resolve().parent / "pixel3_models.py"
COLUMNS = ("gpu", "cpu_float", "cpu_quant")
TITLES = {"gpu": "GPU", "cpu_float": "CPU float", "cpu_quant": "CPU quant"}
COLUMN_CONFIG = {"gpu": "adreno630_gpu", "cpu_float": "kryo385_cpu", "cpu_quant": "kryo385_cpu"}  # what each fits
GOAL_GEOMEAN, GOAL_WORST = 0.20, 0.35


@dataclass(frozen=True)
class Row:
    """One row of the hosted-models table: a keras.applications builder, alpha, size, published ms per column."""

    label: str
    application: str
    alpha: float
    size: int
    gpu: float
    cpu_float: float
    cpu_quant: float
    held_out: bool

    @property
    def role(self) -> str:
        """FIT; SHAPED when not fitted on but its graph (application) is a fit row's; else HELD_OUT."""
        if not self.held_out:
            return FIT
        return SHAPED if any(r.application == self.application and not r.held_out for r in ROWS) else HELD_OUT

    def key(self, quantized: bool) -> str:
        """The model's cache key (pixel3_models.parse_key reads it)."""
        return f"{self.application}_{self.alpha}_{self.size}_{'int8' if quantized else 'float'}"

    def published(self, column: str) -> float:
        return getattr(self, column)


def _mobilenet_v1(alpha: float, gpu: Sequence[float], cpu: Sequence[float], quant: Sequence[float],
                  held_out: bool) -> list[Row]:
    return [Row(f"MobileNet V1 {alpha:.2f} {size}", "MobileNet", alpha, size, g, c, q, held_out)
            for size, g, c, q in zip((128, 160, 192, 224), gpu, cpu, quant)]


# TensorFlow Lite hosted models (tensorflow.org/lite/guide/hosted_models, Pixel 3, Android 10), ms.
# Held out before fitting: the MobileNet V1 0.50 rows and Inception V3 (issue 25).
ROWS = (
    *_mobilenet_v1(0.25, (1.6, 1.7, 1.8, 1.8), (1.2, 1.7, 2.4, 3.3), (0.8, 1.3, 1.8, 2.3), held_out=False),
    *_mobilenet_v1(0.5, (1.7, 2.0, 2.5, 2.8), (3.0, 4.4, 6.0, 7.9), (1.7, 2.6, 3.6, 4.7), held_out=True),
    *_mobilenet_v1(1.0, (4.4, 5.0, 6.3, 6.5), (9.0, 13.4, 18.1, 24.0), (4.8, 7.3, 9.9, 13.0), held_out=False),
    Row("MobileNet V2 1.0 224", "MobileNetV2", 1.0, 224, 6.2, 17.5, 12.0, held_out=False),
    Row("Inception V3 299", "InceptionV3", 1.0, 299, 56.0, 249.0, 148.0, held_out=True),
)


@dataclass(frozen=True)
class Param:
    """One fitted number: which config, which key path, its search bounds, whether a whole number."""

    config: str
    key: str
    low: float
    high: float
    whole: bool = False


# What --fit adjusts: one set per config, shared by every model (mechanisms, not per-model constants).
PARAMS = {
    "gpu": (Param("adreno630_gpu", "compute.efficiency", 0.02, 1.0),
            Param("adreno630_gpu", "compute.kernel_cycles", 100, 100_000, whole=True),
            Param("adreno630_gpu", "link.call_overhead", 1e-5, 5e-3)),
    "cpu": (Param("kryo385_cpu", "compute.efficiency", 0.05, 1.0),
            Param("kryo385_cpu", "compute.row_cycles.float32", 0.5, 2000),
            Param("kryo385_cpu", "compute.row_cycles.int8", 0.5, 2000),
            Param("kryo385_cpu", "compute.vector_per_cycle.float32", 0.2, 8),
            Param("kryo385_cpu", "compute.vector_per_cycle.int8", 0.2, 32)),
}


def ensure_models(cache: Path, tf_python: str) -> dict[str, Path]:
    """Path of every row's cached .tflite, building the missing ones with `tf_python`."""
    keys = [r.key(q) for r in ROWS for q in (False, True)]
    paths = {k: cache / f"{k}.tflite" for k in keys}
    missing = [k for k in keys if not paths[k].exists()]
    if missing:
        print(f"building {len(missing)} models into {cache} with {tf_python} ...", flush=True)
        if subprocess.run([tf_python, str(BUILDER), str(cache), *missing]).returncode != 0:
            raise SystemExit(f"cost_vs_pixel3: building {len(missing)} models into {cache} failed (see above)")
    return paths


class Bench:
    """Each (row, column)'s analysed model, simulated again for any values of the fitted keys.

    models: cache key (`Row.key`) -> its .tflite path or loaded model; rows whose models are absent are
    left out (`rows`).
    """

    def __init__(self, models: Mapping[str, Path | Model]):
        self.configs = {name: load_hardware(SHIPPED_CONFIGS / f"{name}.yaml")
                        for name in ("kryo385_cpu", "adreno630_gpu")}
        self.rows = [r for r in ROWS if all(r.key(q) in models for q in (False, True))]
        self.analyses = {}
        for r in self.rows:
            for column in COLUMNS:
                model = models[r.key(column == "cpu_quant")]
                model = str(model) if isinstance(model, Path) else model
                self.analyses[(r.label, column)] = analyze(model, self.system(column, self.configs))

    @staticmethod
    def system(column: str, configs: Mapping[str, Device]) -> System:
        gpu = (configs["adreno630_gpu"],) if column == "gpu" else ()
        return System(configs["kryo385_cpu"], gpu)

    def configured(self, values: Mapping[Param, float]) -> dict[str, Device]:
        """The configs with `values` written over their keys."""
        out = dict(self.configs)
        for name in out:
            changes = {p.key: _yaml_value(p, v) for p, v in values.items() if p.config == name}
            if changes:
                out[name] = apply_overrides(out[name], changes)
        return out

    def ms(self, row: Row, column: str, configs: Mapping[str, Device]) -> float:
        return simulate_analysis(self.analyses[(row.label, column)], self.system(column, configs)).latency * 1e3


def _yaml_value(p: Param, value: float):
    """How a fitted value is written in the YAML: whole, plain, or a time in microseconds."""
    if p.whole:
        return round(value)
    return f"{value * 1e6:.4g} us" if p.key.startswith("link.") else float(f"{value:.4g}")


def fit(bench: Bench, params: Sequence[Param], columns: Sequence[str]) -> dict[Param, float]:
    """`params`' values fitted on the fit rows of `columns` (held-out rows never enter): `calibration.fit`, the
    descent on the YAMLs' grid from their current values, within each Param's bounds."""
    names = {f"{p.config}.{p.key}": p for p in params}
    rows = [r for r in ROWS if not r.held_out]

    def ratios(values: Mapping[str, float]) -> list[float]:
        configs = bench.configured({names[k]: v for k, v in values.items()})
        return [bench.ms(r, c, configs) / r.published(c) for r in rows for c in columns]

    start = {k: _current(bench.configs[p.config], p.key) for k, p in names.items()}
    best = calibration.fit(ratios, start, frozenset(k for k, p in names.items() if p.whole),
                           upper={k: p.high for k, p in names.items()}, lower={k: p.low for k, p in names.items()})
    return {names[k]: v for k, v in best.items()}


def summary_path(key: str) -> Path:
    return SUMMARIES / f"{key}.tflite.xz"


def fit_keys() -> list[str]:
    """The cache keys of the fit rows' models (both numerics): what --summarize commits."""
    return [r.key(q) for r in ROWS if not r.held_out for q in (False, True)]


def summarize(paths: Mapping[str, Path]) -> list[str]:
    """Write the fit rows' summaries from the cached models; each must simulate as its model on every column."""
    configs = {name: load_hardware(SHIPPED_CONFIGS / f"{name}.yaml") for name in ("kryo385_cpu", "adreno630_gpu")}

    def latencies(model: Model) -> list[float]:
        systems = [Bench.system(c, configs) for c in COLUMNS]
        return [simulate_analysis(analyze(model, s), s).latency for s in systems]

    return [calibration.write_summary(paths[k], summary_path(k), latencies, "cost_vs_pixel3") for k in fit_keys()]


def fit_lines() -> list[str]:
    """What --fit prints: each fitted value, refitted from the committed summaries, beside the YAML's."""
    bench = Bench({k: calibration.read_summary(summary_path(k), "cost_vs_pixel3") for k in fit_keys()})
    values = {**fit(bench, PARAMS["gpu"], ("gpu",)), **fit(bench, PARAMS["cpu"], ("cpu_float", "cpu_quant"))}
    lines = [f"fit rows: {', '.join(r.label for r in ROWS if not r.held_out)}"]
    same = True
    for p, v in values.items():
        ours, shipped = _yaml_value(p, v), _yaml_value(p, _current(bench.configs[p.config], p.key))
        same &= ours == shipped
        lines.append(f"  {p.config}: {p.key}: {ours}  (YAML {shipped}{', differs' if ours != shipped else ''})")
    lines.append(f"  the YAMLs hold the fit: {'yes' if same else 'no'}")
    return lines


def _current(config: Device, key: str) -> float:
    """A config's value at a dotted key path (compute fields, dtype rates, link fields)."""
    section, field, *rest = key.split(".")
    value = getattr(getattr(config.hardware, section), field)
    return dict(value)[rest[0]] if rest else value


def table(bench: Bench, configs: Mapping[str, Device], out: Callable[[str], None] = print) -> dict:
    """Print the per-row table and the per-column errors; return {column: {FIT|SHAPED|HELD_OUT: ratios}}."""
    header = f"{'model':<24} {'rows':<9}" + "".join(f"{TITLES[c] + ' ms':>14} {'pub':>6} {'ratio':>6}"
                                                   for c in COLUMNS)
    out(header)
    out("-" * len(header))
    ratios: dict[str, dict[str, list[float]]] = {c: {FIT: [], SHAPED: [], HELD_OUT: []} for c in COLUMNS}
    marked: dict[str, list[tuple[str, float, str]]] = {c: [] for c in COLUMNS}
    for r in bench.rows:
        kind = r.role
        line = f"{r.label:<24} {kind:<9}"
        for c in COLUMNS:
            ms = bench.ms(r, c, configs)
            ratios[c][kind].append(ms / r.published(c))
            marked[c].append((kind, ms / r.published(c), r.application))
            line += f"{ms:14.2f} {r.published(c):6.1f} {ratios[c][kind][-1]:6.2f}"
        out(line)
    for c in COLUMNS:
        out("\n".join(error_lines(f"{COLUMN_CONFIG[c]} / Pixel 3 {TITLES[c]}", marked[c])))
    met = all(geomean_error(ratios[c][HELD_OUT]) <= GOAL_GEOMEAN
              and worst_error(ratios[c][HELD_OUT]) <= GOAL_WORST for c in COLUMNS)
    out(f"goal (held-out: geomean <= {GOAL_GEOMEAN:.0%}, every row within {1 + GOAL_WORST:.2f}x either way): "
        f"{'met' if met else 'NOT met'}")
    return ratios


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"folder of the .tflite models (default {CACHE})")
    parser.add_argument("--tf-python", default=sys.executable,
                        help="a Python with TensorFlow, to build missing models (default: this one)")
    parser.add_argument("--fit", action="store_true",
                        help="refit the configs' fitted values on the fit rows' committed summaries and print them "
                             "beside the YAMLs' (writes nothing; needs no models)")
    parser.add_argument("--summarize", action="store_true",
                        help=f"write the fit rows' summaries into {SUMMARIES.relative_to(ROOT)} from the cache")
    args = parser.parse_args(argv)
    if args.fit:
        print("\n".join(fit_lines()))
        return 0
    paths = ensure_models(args.cache, args.tf_python)
    if args.summarize:
        print("\n".join(summarize(paths)))
        return 0
    bench = Bench(paths)
    table(bench, bench.configs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
