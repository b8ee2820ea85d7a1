"""Compare accelsim's Cortex-M cost model (kind mcu) with MLPerf Tiny's published closed-division latencies.

The four MLPerf Tiny benchmarks' reference models (tests/fixtures/models/mlperf_tiny/, from
mlcommons/tiny, Apache-2.0): ic = ResNet-8 (pretrainedResnet_quant), kws = DS-CNN (kws_ref_model),
vww = MobileNetV1 0.25 at 96x96 (vww_96_int8), ad = FC autoencoder (ad01_int8). Published rows
(`benchmarks/mlperf_tiny_rows.csv`, copied from mlcommons/tiny_results_v1.0 ... v1.2, each with its repository,
commit and system description): latency = 1000 / median throughput (ms).

Row sets, decided before any number was fitted and never changed:
- `fit`: the microTVM + CMSIS-NN rows the issue names (OctoML v1.0, Krai v1.1, cTuning v1.1) on the
  NUCLEO-L4R5ZI (Cortex-M4, 120 MHz) and the nRF5340 DK (Cortex-M33, 128 MHz). These ran microTVM's AOT
  code, which calls the CMSIS-NN kernels directly: they are costed with node_cycles 0 (no interpreter).
- `held-out`: Renesas EK-RA8D1 (Cortex-M85, 480 MHz, TFLM + CMSIS-NN, v1.2): same kernels library, another
  core (Helium), another runtime (the TFLM interpreter). It informed no number or mechanism; the
  headline is over these rows.
- `other library`: rows of other inference engines on the shipped cores' boards (ST's X-CUBE-AI on the
  NUCLEO-L4R5ZI, NUCLEO-U575ZI-Q and NUCLEO-H7A3ZI-Q, Bosch's HALE on the NUCLEO-G0B1RE Cortex-M0+). Held out
  too, but they measure another library's kernels, so they are printed as a check of scale, outside the
  headline (accelsim models TFLM with CMSIS-NN).

Usage:
    python benchmarks/cost_vs_mlperf_tiny.py [--fit] [--no-vela]

Prints per row and benchmark: ours, published, ratio, set; the held-out headline against the goal
(geometric-mean error within 30%, worst ratio either way within 1.5x); with --fit, the fitted compute fields
(`FITTED`) refitted on the fit rows next to the YAMLs' values; then the five models on the Ethos-U configs
beside Vela's estimate (ops Vela leaves to the CPU costed on the Corstone host), and the time a cost-only
simulation of each model on a Corstone system takes (goal: under 0.2 s each).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.hardware.config import System, apply_overrides, load_hardware, load_system  # noqa: E402
from accelsim.simulation.analysis import analyze, simulate_analysis  # noqa: E402
from accelsim.tools.cost_only import cost_only_run  # noqa: E402
from accelsim.tools.systems import corstone_host  # noqa: E402
from benchmarks import cost_vs_vela  # noqa: E402  (how Vela is run and read)

CONFIGS = ROOT / "hw_configs"
MODELS_DIR = ROOT / "tests" / "fixtures" / "models" / "mlperf_tiny"
ROWS = Path(__file__).resolve().parent / "mlperf_tiny_rows.csv"
MODELS = {"ic": "pretrainedResnet_quant", "kws": "kws_ref_model", "vww": "vww_96_int8", "ad": "ad01_int8"}
# The fifth model of the Ethos-U table: no published microcontroller row.
EXTRA_MODELS = ("pretrainedResnet_large_int8",)
FIT, HELD_OUT, OTHER = "fit", "held-out", "other library"
FIT_SUBMITTERS = {("1.0", "OctoML"), ("1.1", "Krai"), ("1.1", "cTuning")}
GOAL_GEOMEAN, GOAL_WORST = 0.30, 1.5
SPEED_GOAL_S = 0.2
# The board of each row: the shipped config describing it, and overrides for boards clocked otherwise.
BOARDS = {
    "NUCLEO-L4R5ZI": ("cortex_m4", {}),
    "nRF5340 DK": ("cortex_m33", {}),
    "EK-RA8D1": ("renesas_ra8d1", {}),
    "NUCLEO-H7A3ZI-Q": ("cortex_m7", {}),
    # The STM32U575 at 160 MHz: cortex_m33's core, clocked as the row says (flash as the nRF5340's: an
    # other-library check of scale only).
    "NUCLEO-U575ZI-Q": ("cortex_m33", {"clock": "160 MHz", "compute.max_clock_mhz": 160}),
    "NUCLEO-G0B1RE": ("cortex_m0plus", {}),
}
# The fitted fields: one M4-equivalent value each, written into the configs by Dhrystone-per-MHz scaling
# (`SCALED`) or as is; nrf_wait_states is the nRF5340's flash wait states.
FITTED = ("efficiency", "im2col_cycles_per_element", "requant_cycles_per_output", "nrf_wait_states")
DMIPS = {"cortex_m4": 1.26, "cortex_m33": 1.54}  # Arm Cortex-M comparison table (doc 102787), DMIPS/MHz


@dataclass(frozen=True)
class Row:
    version: str
    submitter: str
    board: str
    core: str
    clock_mhz: float
    stack: str
    latency_ms: dict[str, float]
    source: str

    @property
    def label(self) -> str:
        if (self.version, self.submitter) in FIT_SUBMITTERS and "CMSIS-NN" in self.stack:
            return FIT
        return HELD_OUT if "CMSIS-NN" in self.stack else OTHER

    @property
    def aot(self) -> bool:
        """microTVM's ahead-of-time code: no interpreter between the kernels."""
        return "microTVM" in self.stack


def read_rows(path: Path = ROWS) -> list[Row]:
    out = []
    with path.open(encoding="utf-8") as f:
        for r in csv.DictReader(f):
            lat = {b: 1000 / float(r[f"{b}_ips"]) for b in MODELS if r[f"{b}_ips"]}
            out.append(Row(r["version"], r["submitter"], r["board"], r["core"], float(r["clock_mhz"]), r["stack"], lat,
                           f"{r['repo']}@{r['commit'][:8]}:{r['system_json']}"))
    return out


def board_device(row: Row, extra: dict | None = None):
    config, overrides = BOARDS[row.board]
    device = load_hardware(CONFIGS / f"{config}.yaml")
    changes = {**overrides, **({"compute.node_cycles": 0} if row.aot else {}), **(extra or {})}
    return apply_overrides(device, changes) if changes else device


_ANALYSES: dict[str, object] = {}


def analysis(bench: str):
    """The model analysed once on a host alone (host nodes' work does not depend on the host's numbers)."""
    if bench not in _ANALYSES:
        host = load_system(CONFIGS / "cortex_m4.yaml", [])
        _ANALYSES[bench] = analyze(str(MODELS_DIR / f"{MODELS[bench]}.tflite"), host)
    return _ANALYSES[bench]


def ours_ms(row: Row, bench: str, extra: dict | None = None) -> float:
    return simulate_analysis(analysis(bench), System(board_device(row, extra), ())).latency * 1e3


def ratio_err(ratios: Sequence[float]) -> tuple[float, float]:
    """(geometric-mean error, worst ratio either way)."""
    logs = [abs(math.log(r)) for r in ratios]
    return math.exp(statistics.fmean(logs)) - 1, math.exp(max(logs))


def table(rows: Sequence[Row]) -> tuple[list[str], dict[str, list[float]]]:
    lines = [f"{'set':14s} {'ver':4s} {'submitter':19s} {'board':16s} {'core':11s} {'MHz':>4s} {'bench':5s} "
             f"{'ours ms':>9s} {'published':>9s} {'ratio':>6s}"]
    ratios: dict[str, list[float]] = {FIT: [], HELD_OUT: [], OTHER: []}
    for row in rows:
        for bench, published in row.latency_ms.items():
            ours = ours_ms(row, bench)
            ratios[row.label].append(ours / published)
            lines.append(f"{row.label:14s} {row.version:4s} {row.submitter:19s} {row.board:16s} {row.core:11s} "
                         f"{row.clock_mhz:4.0f} {bench:5s} {ours:9.2f} {published:9.2f} {ours / published:6.2f}")
    return lines, ratios


def headline(ratios: dict[str, list[float]]) -> list[str]:
    out = []
    for label in (HELD_OUT, FIT, OTHER):
        if not ratios[label]:
            continue
        geo, worst = ratio_err(ratios[label])
        goal = ""
        if label == HELD_OUT:
            met = geo <= GOAL_GEOMEAN and worst <= GOAL_WORST
            goal = (f" (goal {GOAL_GEOMEAN:.0%} geomean, {GOAL_WORST}x worst: {'met' if met else 'NOT met'})")
        out.append(f"{label}: {len(ratios[label])} rows, geometric-mean error {geo:.1%}, "
                   f"worst ratio {worst:.2f}x{goal}")
    return out


def _fit_extra(params: Sequence[float], config: str) -> dict:
    eff, im2col, requant, wait = params
    scale = DMIPS["cortex_m4"] / DMIPS[config]
    extra = {"compute.efficiency": min(1.0, eff), "compute.im2col_cycles_per_element": im2col * scale,
             "compute.requant_cycles_per_output": requant * scale}
    if config == "cortex_m33":
        extra["compute.flash_wait_states"] = max(0, round(wait))
    return extra


def misfit(params: Sequence[float], rows: Sequence[Row]) -> float:
    err = 0.0
    for row in rows:
        config = BOARDS[row.board][0]
        for bench, published in row.latency_ms.items():
            err += math.log(ours_ms(row, bench, _fit_extra(params, config)) / published) ** 2
    return err


def fit(rows: Sequence[Row]) -> list[str]:
    """The fitted fields refitted on the fit rows (a grid descent from the YAMLs' values), next to the YAMLs'."""
    m4 = load_hardware(CONFIGS / "cortex_m4.yaml").hardware.compute
    m33 = load_hardware(CONFIGS / "cortex_m33.yaml").hardware.compute
    start = [m4.efficiency, m4.im2col_cycles_per_element, m4.requant_cycles_per_output, m33.flash_wait_states]
    steps = [0.01, 0.05, 0.5, 1]
    fit_rows = [r for r in rows if r.label == FIT]
    best, best_err = list(start), misfit(start, fit_rows)
    improved = True
    while improved:
        improved = False
        for i, step in enumerate(steps):
            for move in (16, 8, 4, 2, 1):
                for sign in (1, -1):
                    trial = list(best)
                    trial[i] = round(trial[i] + sign * move * step, 4)
                    if trial[i] <= 0 and i != 3 or trial[i] < 0:
                        continue
                    err = misfit(trial, fit_rows)
                    if err < best_err - 1e-12:
                        best, best_err, improved = trial, err, True
    out = [f"fit over {sum(len(r.latency_ms) for r in fit_rows)} fit-row latencies: squared log error "
           f"{misfit(start, fit_rows):.4f} at the YAMLs' values, {best_err:.4f} at the fit"]
    for name, was, now in zip(FITTED, start, best):
        scale = DMIPS["cortex_m4"] / DMIPS["cortex_m33"]
        out.append(f"  {name:28s} YAML {was:8.3f}  fit {now:8.3f}  (cortex_m33: x {scale:.3f} where scaled)")
    return out


def vela_lines(models: Sequence[Path]) -> list[str]:
    """The five models on the Ethos-U configs beside Vela's estimate, with what each leaves to the host."""
    out = [f"{'model':28s} {'config':14s} {'ours cyc':>10s} {'Vela cyc':>10s} {'ratio':>6s} {'CPU ops':>7s}  "
           "host of the rest"]
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for config, accelerator, system in cost_vs_vela.SYSTEMS:
                if config not in ("ethos_u55_128", "ethos_u55_256", "ethos_u65_256"):
                    continue
                try:
                    c = cost_vs_vela.compare(model, config, accelerator, system, Path(tmp))
                except RuntimeError as exc:
                    out.append(f"{model.stem:28s} {config:14s} Vela failed: {str(exc).splitlines()[0][:60]}")
                    continue
                host = corstone_host([config])
                sim = cost_only_run(str(model), load_system(CONFIGS / f"{host}.yaml",
                                                            [CONFIGS / f"{config}.yaml"])).simulation
                on_host = [n for n in sim.nodes if n.unit == "host"]
                rest = (f"{len(on_host)} nodes on {host}: {sum(n.seconds for n in on_host) * 1e6:.1f} us"
                        if on_host else f"none ({host})")
                out.append(f"{model.stem:28s} {config:14s} {c.cycles:10d} {c.vela.cycles:10d} {c.ratio:6.2f} "
                           f"{c.cpu_ops:7d}  {rest}")
    return out


def speed_lines(models: Sequence[Path]) -> list[str]:
    """Seconds of a cost-only simulation (read, analyse, cost, schedule; host-alone baseline too) per model on
    each Corstone system."""
    out = []
    for system_name, host, accel in (("corstone_300", "cortex_m55", "ethos_u55_128"),
                                     ("corstone_310", "cortex_m85", "ethos_u65_256")):
        system = load_system(CONFIGS / f"{host}.yaml", [CONFIGS / f"{accel}.yaml"])
        for model in models:
            cost_only_run(str(model), system)  # warm: imports and caches outside the measurement
            t0 = time.perf_counter()
            cost_only_run(str(model), system)
            seconds = time.perf_counter() - t0
            out.append(f"{system_name} ({host} + {accel}) {model.stem:28s} {seconds:6.3f} s  "
                       f"{'ok' if seconds < SPEED_GOAL_S else 'OVER'} (goal < {SPEED_GOAL_S} s)")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="refit the fitted fields on the fit rows")
    parser.add_argument("--no-vela", action="store_true", help="skip the Ethos-U table (Vela runs take a while)")
    args = parser.parse_args(argv)
    rows = read_rows()
    lines, ratios = table(rows)
    print("MLPerf Tiny closed division: latency per inference (ms), ours against published")
    print("\n".join(lines))
    print("\n".join(headline(ratios)))
    if args.fit:
        print("\n".join(fit(rows)))
    models = [MODELS_DIR / f"{m}.tflite" for m in (*MODELS.values(), *EXTRA_MODELS)]
    if not args.no_vela:
        print("\nEthos-U (Vela's Shared_Sram systems) on the MLPerf Tiny models, NPU cycles, ours against Vela's:")
        print("\n".join(vela_lines(models)))
    print("\nCost-only simulation time per model on a Corstone system:")
    print("\n".join(speed_lines(models)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
