"""Compare simulated Pixel 3 / Pixel 4 latency with TensorFlow's "Performance benchmarks" table: CPU, GPU, NNAPI.

TensorFlow's tensorflow/lite/g3doc/performance/benchmarks.md (Android 10; `benchmark_model --num_threads=4`,
`--use_gpu=true`, `--use_nnapi=true`) lists, in ms, per phone: CPU with 4 threads, the GPU delegate and the
NNAPI delegate. Simulated here:

- CPU: kryo385_cpu (Pixel 3) / kryo485_cpu (Pixel 4) alone;
- GPU: the host + adreno630_gpu / adreno640_gpu (TFLite's GPU delegate, float16);
- NNAPI: the host + nnapi_pixel3 / nnapi_pixel4 (TFLite's NNAPI delegate and the phone's NNAPI drivers).

Fit rows (issue 35): the NNAPI column's MobileNet 1.0 224 float and quant rows on both phones (each driver's
compute.efficiency) and the Pixel 4 CPU column's MobileNet rows (kryo485_cpu's compute.efficiency). Rows marked
"prior fit" informed kryo385_cpu and adreno630_gpu through TFLite's hosted-models table (cost_vs_pixel3.py: the
same MobileNet 1.0 224 on the same phone): they are neither fitted here nor held out. Every other row is
held out. The MobileNet models are the committed fit-row summaries of cost_vs_pixel3.py (weights zeroed;
Keras MobileNet V1, random weights; "quant" is full-integer int8 where the table's is a uint8 TF1 model);
NASNet mobile, SqueezeNet and Inception-ResNet-V2 are built by benchmarks/nnapi_models.py (needs TensorFlow)
into the cache; Inception-V4 is not in Keras and is not simulated.

For every NNAPI row the script says why it takes the time it does: nodes NNAPI delegated, the partitions and
drivers they ran on, nodes left on the CPU, and the time in copies and per-execution overheads.

Usage:
    python benchmarks/cost_vs_nnapi.py [--cache DIR] [--tf-python PY]
    python benchmarks/cost_vs_nnapi.py --fit      # refit on the fit rows, print beside the YAMLs' values
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from accelsim.experiments.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.hardware.config import System, apply_overrides, load_system  # noqa: E402
from accelsim.simulation.analysis import analyze, simulate_placed  # noqa: E402
from accelsim.simulation.inference import Simulation  # noqa: E402
from benchmarks import calibration  # noqa: E402
from benchmarks.calibration import FIT, HELD_OUT, error_lines  # noqa: E402

CACHE = Path.home() / ".cache" / "accelsim" / "nnapi"
SUMMARIES = ROOT / "benchmarks" / "pixel3_fit_rows"
BUILDER = Path(__file__).resolve().parent / "nnapi_models.py"
PRIOR = "prior fit"
PHONES = {"Pixel 3": ("kryo385_cpu", "adreno630_gpu", "nnapi_pixel3"),
          "Pixel 4": ("kryo485_cpu", "adreno640_gpu", "nnapi_pixel4")}
COLUMNS = ("cpu", "gpu", "nnapi")


@dataclass(frozen=True)
class Row:
    """One model on one phone: published ms per column (None: '---' in the table), and each column's label."""

    model: str
    key: str
    phone: str
    cpu: float
    gpu: float | None
    nnapi: float
    labels: tuple[str, str, str]  # cpu, gpu, nnapi: FIT, HELD_OUT or PRIOR


def _rows() -> tuple[Row, ...]:
    # benchmarks.md lines 45-134 (TF @ 00f0938a); research notes /work/research/nnapi.md section 5.
    h = HELD_OUT
    return (
        Row("MobileNet 1.0 224 float", "MobileNet_1.0_224_float", "Pixel 3", 23.9, 6.45, 13.8, (PRIOR, PRIOR, FIT)),
        Row("MobileNet 1.0 224 float", "MobileNet_1.0_224_float", "Pixel 4", 14.0, 9.0, 14.8, (FIT, h, FIT)),
        Row("MobileNet 1.0 224 quant", "MobileNet_1.0_224_int8", "Pixel 3", 13.4, None, 6.0, (PRIOR, h, FIT)),
        Row("MobileNet 1.0 224 quant", "MobileNet_1.0_224_int8", "Pixel 4", 5.0, None, 3.2, (FIT, h, FIT)),
        Row("NASNet mobile", "NASNetMobile_224", "Pixel 3", 56, None, 102, (h, h, h)),
        Row("NASNet mobile", "NASNetMobile_224", "Pixel 4", 34.5, None, 99.0, (h, h, h)),
        Row("SqueezeNet", "SqueezeNet_224", "Pixel 3", 35.8, 9.5, 18.5, (h, h, h)),
        Row("SqueezeNet", "SqueezeNet_224", "Pixel 4", 23.9, 11.1, 19.0, (h, h, h)),
        Row("Inception-ResNet-V2", "InceptionResNetV2_299", "Pixel 3", 422, 99.8, 201, (h, h, h)),
        Row("Inception-ResNet-V2", "InceptionResNetV2_299", "Pixel 4", 272.6, 87.2, 171.1, (h, h, h)),
        Row("Inception-V4", "InceptionV4_299", "Pixel 3", 486, 93, 292, (h, h, h)),
        Row("Inception-V4", "InceptionV4_299", "Pixel 4", 324.1, 97.6, 186.9, (h, h, h)),
    )


ROWS = _rows()
BUILT = ("NASNetMobile_224", "SqueezeNet_224", "InceptionResNetV2_299")  # what nnapi_models.py can build


def systems() -> dict[tuple[str, str], System]:
    """(phone, column) -> the system simulated."""
    out = {}
    for phone, (host, gpu, nnapi) in PHONES.items():
        cfg = {n: str(SHIPPED_CONFIGS / f"{n}.yaml") for n in (host, gpu)}
        cfg[nnapi] = str(SHIPPED_CONFIGS / "nnapi" / f"{nnapi}.yaml")
        out[(phone, "cpu")] = load_system(cfg[host], [])
        out[(phone, "gpu")] = load_system(cfg[host], [cfg[gpu]])
        out[(phone, "nnapi")] = load_system(cfg[host], [cfg[nnapi]])
    return out


def models(cache: Path, tf_python: str | None) -> dict[str, object]:
    """Model key -> loaded summary or cached path; builds missing held-out models with `tf_python` if given."""
    out: dict[str, object] = {}
    for key in ("MobileNet_1.0_224_float", "MobileNet_1.0_224_int8"):
        out[key] = calibration.read_summary(SUMMARIES / f"{key}.tflite.xz", "cost_vs_pixel3")
    missing = [k for k in BUILT if not (cache / f"{k}.tflite").exists()]
    if missing and tf_python:
        subprocess.run([tf_python, str(BUILDER), str(cache), *missing], cwd=BUILDER.parent)
    for key in BUILT:
        if (cache / f"{key}.tflite").exists():
            out[key] = str(cache / f"{key}.tflite")
    return out


class Bench:
    """Every (row, column)'s analysis, re-costed for other driver and host values."""

    def __init__(self, found: dict[str, object], rows=ROWS):
        self.systems = systems()
        self.rows = [r for r in rows if r.key in found]
        self.analyses = {(r.key, r.phone, c): analyze(found[r.key], self.systems[(r.phone, c)])
                         for r in self.rows for c in COLUMNS if c != "gpu" or r.gpu is not None}

    def simulate(self, row: Row, column: str, system: System | None = None) -> Simulation:
        system = system or self.systems[(row.phone, column)]
        return simulate_placed(self.analyses[(row.key, row.phone, column)], system)


def with_value(system: System, device: str, key: str, value: float) -> System:
    """`system` with one device's key (a driver or the host, by name) set to `value`."""
    if system.host.name == device:
        return replace(system, host=apply_overrides(system.host, {key: value}))
    accels = tuple(apply_overrides(a, {key: value}).with_policy(claims=a.policy.claims) if a.name == device else a
                   for a in system.accelerators)
    return replace(system, accelerators=accels)


# What --fit adjusts: (phone, column, device, key, rows' models) - one value per device, its own fit rows.
PARAMS = (
    ("Pixel 3", "nnapi", "qti-dsp", "compute.efficiency", ("MobileNet_1.0_224_int8",)),
    ("Pixel 3", "nnapi", "qti-gpu", "compute.efficiency", ("MobileNet_1.0_224_float",)),
    ("Pixel 4", "nnapi", "qti-dsp", "compute.efficiency", ("MobileNet_1.0_224_int8",)),
    ("Pixel 4", "nnapi", "qti-gpu", "compute.efficiency", ("MobileNet_1.0_224_float",)),
    ("Pixel 4", "cpu", "kryo485_cpu", "compute.efficiency", ("MobileNet_1.0_224_float", "MobileNet_1.0_224_int8")),
)


def _current(system: System, device: str, key: str) -> float:
    dev = system.host if system.host.name == device else next(a for a in system.accelerators if a.name == device)
    return getattr(dev.hardware.compute, key.split(".")[1])


def fit_lines(bench: Bench) -> list[str]:
    lines = []
    same = True
    for phone, column, device, key, keys in PARAMS:
        rows = [r for r in bench.rows if r.phone == phone and r.key in keys]
        assert all(r.labels[COLUMNS.index(column)] == FIT for r in rows)
        base = bench.systems[(phone, column)]

        def ratios(values, rows=rows, base=base, column=column, device=device, key=key):
            system = with_value(base, device, key, values[key])
            return [bench.simulate(r, column, system).latency * 1e3 / getattr(r, column) for r in rows]

        start = {key: _current(base, device, key)}
        got = calibration.fit(ratios, start, upper={key: 1.0}, lower={key: 0.01})[key]
        same &= got == calibration.on_grid(start[key])
        lines.append(f"  {phone} {column} {device}: {key}: {got:.4g}  (YAML {start[key]:.4g})  fit rows: "
                     + ", ".join(f"{r.model} {getattr(r, column)} ms" for r in rows))
    lines.append(f"  the YAMLs hold the fit: {'yes' if same else 'no'}")
    return lines


def why(sim: Simulation) -> str:
    """What an NNAPI simulation did: delegated nodes, executions per driver, CPU nodes, copies and overheads."""
    host = sum(1 for t in sim.nodes if t.partition is None)
    parts = {}
    for p in sim.partitions:
        parts[p.unit] = parts.get(p.unit, 0) + 1
    copies = sum(p.transfer for p in sim.partitions) * 1e3
    overhead = sum(p.overhead for p in sim.partitions) * 1e3
    runs = ", ".join(f"{n} on {u}" for u, n in parts.items()) or "none"
    return (f"{len(sim.nodes) - host}/{len(sim.nodes)} nodes delegated; executions: {runs}; {host} on CPU; "
            f"copies {copies:.2f} ms, overheads {overhead:.2f} ms")


def table(bench: Bench, out=print) -> dict[str, list[tuple[str, float]]]:
    header = f"{'model':<26}{'phone':<9}" + "".join(f"{c.upper() + ' ms':>11}{'pub':>7}{'ratio':>7} {'row':<10}"
                                                    for c in COLUMNS)
    out(header)
    out("-" * len(header))
    ratios: dict[str, list[tuple[str, float]]] = {c: [] for c in COLUMNS}
    notes = []
    for r in bench.rows:
        line = f"{r.model:<26}{r.phone:<9}"
        for c, label in zip(COLUMNS, r.labels):
            published = getattr(r, c)
            if published is None:
                line += f"{'':>11}{'---':>7}{'':>7} {'':<10}"
                continue
            sim = bench.simulate(r, c)
            ms = sim.latency * 1e3
            ratios[c].append((label, ms / published))
            line += f"{ms:11.2f}{published:7.1f}{ms / published:7.2f} {label:<10}"
            if c == "nnapi":
                cpu = bench.simulate(r, "cpu").latency * 1e3
                verdict = "slower than" if ms > cpu else "faster than"
                notes.append(f"  {r.model}, {r.phone}: NNAPI {ms:.1f} ms {verdict} CPU {cpu:.1f} ms "
                             f"(published {r.nnapi} vs {r.cpu}): {why(sim)}")
        out(line)
    missing = sorted({f"{r.model} ({r.key})" for r in ROWS} - {f"{r.model} ({r.key})" for r in bench.rows})
    if missing:
        out(f"not simulated (no model): {', '.join(missing)}")
    out("why, per NNAPI row:")
    for n in notes:
        out(n)
    for c in COLUMNS:
        rows = [(k, x) for k, x in ratios[c] if k in (FIT, HELD_OUT)]
        if rows:
            out("\n".join(error_lines(f"{c.upper()} column", rows)))
    return ratios


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"folder of the built models (default {CACHE})")
    parser.add_argument("--tf-python", default=None, help="a Python with TensorFlow, to build missing models")
    parser.add_argument("--fit", action="store_true", help="refit on the fit rows (MobileNet summaries only)")
    args = parser.parse_args(argv)
    if args.fit:
        bench = Bench(models(args.cache, None), [r for r in ROWS if r.key.startswith("MobileNet")])
        print("\n".join(fit_lines(bench)))
        return 0
    table(Bench(models(args.cache, args.tf_python)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
