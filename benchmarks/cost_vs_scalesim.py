"""Compare accelsim's systolic cost model with SCALE-Sim on a handful of layer shapes.

SCALE-Sim (PyPI `scalesim`) needs NumPy < 2, so it runs in its own virtual environment,
`<repo>/.venv-scalesim`, created on first use (`python -m venv` + `pip install scalesim
"numpy<2"`) and reused afterwards. Each dataflow is one SCALE-Sim run over all layers, on
a 32 x 16 array with ample SRAM and bandwidth (InterfaceBandwidth CALC), so its "Total
Cycles" are compute cycles; the three runs go in parallel.

Usage:
    python benchmarks/cost_vs_scalesim.py

Prints, per layer and dataflow, our cycles, SCALE-Sim's and the difference in percent;
then, per dataflow, the wall time SCALE-Sim took and the time our model took.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.hardware.config import apply_overrides, load_hardware  # noqa: E402
from accelsim.hardware.cost import systolic  # noqa: E402
from accelsim.hardware.cost.systolic import DATAFLOWS  # noqa: E402
from accelsim.hardware.types import Hardware  # noqa: E402
from accelsim.runtime.work import NodeWork, conv_work  # noqa: E402

VENV = ROOT / ".venv-scalesim"
ROWS, COLS = 32, 16


@dataclass(frozen=True)
class Layer:
    """One SCALE-Sim topology row: an unpadded (VALID) convolution."""

    name: str
    ifmap_h: int
    ifmap_w: int
    filter_h: int
    filter_w: int
    channels: int
    filters: int
    stride: int

    def work(self) -> NodeWork:
        return conv_work(1, self.ifmap_h, self.ifmap_w, self.channels, self.filters, self.filter_h, self.filter_w,
                         stride=self.stride, padding="VALID")


LAYERS = (
    Layer("pw_1x1", 14, 14, 1, 1, 32, 48, 1),
    Layer("conv3x3_s1", 12, 12, 3, 3, 16, 32, 1),
    Layer("conv3x3_s2", 21, 21, 3, 3, 16, 24, 2),
    Layer("wide_3x3", 5, 5, 3, 3, 128, 96, 1),
    Layer("fc_as_1x1", 1, 1, 1, 1, 512, 100, 1),
    Layer("stem_7x7_s2", 23, 23, 7, 7, 3, 16, 2),
)

_CONFIG = """[general]
run_name = accelsim_{dataflow}

[architecture_presets]
ArrayHeight: {rows}
ArrayWidth: {cols}
IfmapSramSzkB: 8192
FilterSramSzkB: 8192
OfmapSramSzkB: 8192
IfmapOffset: 0
FilterOffset: 10000000
OfmapOffset: 20000000
Bandwidth: 100
Dataflow: {dataflow}
MemoryBanks: 1
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false
SparseRep: ellpack_block
OptimizedMapping: false
BlockSize: 8
RandomNumberGeneratorSeed: 40

[run_presets]
InterfaceBandwidth: CALC
UseRamulatorTrace: False
"""


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _usable(python: Path) -> bool:
    if not python.exists():
        return False
    probe = "import numpy, scalesim.scale; assert int(numpy.__version__.split('.')[0]) < 2"
    return subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0


def ensure_scalesim(venv: Path = VENV) -> Path:
    """The python of a venv where SCALE-Sim runs, creating the venv if needed.

    Raises:
        RuntimeError: venv creation or `pip install scalesim "numpy<2"` failed; carries their output.
    """
    python = _venv_python(venv)
    if _usable(python):
        return python
    steps = ([sys.executable, "-m", "venv", "--clear", str(venv)],
             [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "scalesim", "numpy<2"])
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(step)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    if not _usable(python):
        raise RuntimeError(f"SCALE-Sim installed in {venv} but `import scalesim.scale` with NumPy < 2 fails")
    return python


def _topology(layers) -> str:
    rows = ["Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,"]
    rows += [f"{x.name}, {x.ifmap_h}, {x.ifmap_w}, {x.filter_h}, {x.filter_w}, {x.channels}, {x.filters}, "
             f"{x.stride}," for x in layers]
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class ScaleSimRun:
    """SCALE-Sim's COMPUTE_REPORT for one dataflow: per-layer (total cycles, stall cycles), wall time."""

    cycles: tuple[int, ...]
    stalls: tuple[int, ...]
    seconds: float


def run_scalesim(python: Path, layers, rows: int, cols: int, workdir: Path,
                 dataflows=DATAFLOWS) -> dict[str, ScaleSimRun]:
    """Run SCALE-Sim once per dataflow (in parallel) and read its COMPUTE_REPORT.csv files.

    The topology file is passed as the layout file too (-l); custom layouts are off, so
    SCALE-Sim does not read it as a layout.
    """
    topology = workdir / "topology.csv"
    topology.write_text(_topology(layers))
    started = {}
    for dataflow in dataflows:
        cfg = workdir / f"{dataflow}.cfg"
        cfg.write_text(_CONFIG.format(rows=rows, cols=cols, dataflow=dataflow))
        command = [str(python), "-m", "scalesim.scale", "-t", str(topology), "-l", str(topology), "-c", str(cfg),
                   "-p", str(workdir / dataflow), "-s", "N"]
        started[dataflow] = (time.perf_counter(), subprocess.Popen(
            command, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    runs = {}
    for dataflow, (start, process) in started.items():
        output, _ = process.communicate()
        seconds = time.perf_counter() - start
        if process.returncode != 0:
            raise RuntimeError(f"SCALE-Sim ({dataflow}) exited with {process.returncode}:\n{output[-4000:]}")
        report = workdir / dataflow / f"accelsim_{dataflow}" / "COMPUTE_REPORT.csv"
        with report.open() as f:
            rows_read = list(csv.DictReader(f, skipinitialspace=True))
        runs[dataflow] = ScaleSimRun(tuple(int(r["Total Cycles"]) for r in rows_read),
                                     tuple(int(r["Stall Cycles"]) for r in rows_read), seconds)
    return runs


def array_config(dataflow: str, rows: int = ROWS, cols: int = COLS) -> Hardware:
    """The shipped Edge-TPU-like config resized to rows x cols, given `dataflow`, ample on-chip bandwidth and
    no program transfer (SCALE-Sim times the array alone)."""
    base = load_hardware(ROOT / "hw_configs" / "edgetpu_usb.yaml")
    return apply_overrides(base, {"compute.rows": rows, "compute.cols": cols, "compute.dataflow": dataflow,
                                  "compute.instruction_bytes": 0, "memory.levels.sram.bandwidth": "1000 TB/s"}).hardware


def our_cycles(layers, dataflow: str) -> tuple[tuple[int, ...], float]:
    """Our cycles per layer through the public cost function, and the seconds that took."""
    hw = array_config(dataflow)
    works = [layer.work() for layer in layers]
    start = time.perf_counter()
    cycles = tuple(systolic.cost(w, hw).cycles for w in works)
    return cycles, time.perf_counter() - start


def main() -> int:
    setup_start = time.perf_counter()
    python = ensure_scalesim()
    setup = time.perf_counter() - setup_start
    with tempfile.TemporaryDirectory(prefix="scalesim-") as tmp:
        runs = run_scalesim(python, LAYERS, ROWS, COLS, Path(tmp))
    print(f"SCALE-Sim venv ready in {setup:.1f} s ({VENV}); array {ROWS} x {COLS}")
    print(f"{'layer':<13} {'df':<3} {'ours':>8} {'scalesim':>9} {'diff %':>7}")
    timings = []
    for dataflow in DATAFLOWS:
        ours, our_seconds = our_cycles(LAYERS, dataflow)
        theirs = runs[dataflow]
        for layer, mine, other in zip(LAYERS, ours, theirs.cycles):
            print(f"{layer.name:<13} {dataflow:<3} {mine:>8} {other:>9} {100 * (mine - other) / other:>+7.3f}")
        timings.append((dataflow, theirs.seconds, our_seconds))
    print(f"{'df':<3} {'scalesim s':>10} {'ours ms':>8} {'ratio':>9}")
    for dataflow, theirs_s, ours_s in timings:
        print(f"{dataflow:<3} {theirs_s:>10.2f} {1e3 * ours_s:>8.3f} {theirs_s / ours_s:>9.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
