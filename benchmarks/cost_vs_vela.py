"""Compare accelsim's Ethos-U cost model (kind npu) with Vela's performance estimate, per model and per layer.

Every int8 fixture (`tests/fixtures/models/*int8*.tflite`) is compiled by Vela (PyPI
`ethos-u-vela`, run as `python -m ethosu.vela` from this interpreter) for every shipped NPU
config, each with the system config it mirrors and memory mode Shared_Sram:

| hw config               | --accelerator-config | --system-config              |
|-------------------------|----------------------|------------------------------|
| ethos_u55_32.yaml       | ethos-u55-32         | Ethos_U55_High_End_Embedded  |
| ethos_u55_64.yaml       | ethos-u55-64         | Ethos_U55_High_End_Embedded  |
| ethos_u55_128.yaml      | ethos-u55-128        | Ethos_U55_High_End_Embedded  |
| ethos_u55_256.yaml      | ethos-u55-256        | Ethos_U55_High_End_Embedded  |
| ethos_u65_256.yaml      | ethos-u65-256        | Ethos_U65_High_End           |

The four U55 sizes differ only in the architecture parameters Vela's `ArchitectureConfig`
publishes (micro-blocks, elementwise units, SHRAM banks); the fit runs over the U55-128 and the
U65-256 (`FIT_CONFIGS`), and the other U55 sizes hold the U55-128's fitted values unchanged.

Like with like: Vela's `cycles_total` (summary CSV) covers only the operators it places on
the NPU (operators left to the CPU get no estimate), summed per layer as the longest of NPU
and memory-access cycles. Ours is the sum of `accelsim.hardware.cost.npu.costs` over the nodes the
config's claim rules take (the same ops Vela supports), in the NPU's cycles.

Usage:
    python benchmarks/cost_vs_vela.py [--layers] [--fit] [--cache DIR] [--vela-cache DIR] [MODEL.tflite ...]

Rows are `fit` (the model informed a number in the shipped YAMLs: the five int8 fixtures, over
which the rates are fitted, and DenseNet-121, from whose blocks the elementwise block rule and
the broadcast-operand rule were read), `shaped` (`SHAPED_ROWS`, each with its reason from the git
history: it informed no fitted number, but its misses were looked at when a mechanism was chosen
(ResNet-50 and Inception-v3: the convolution traversal rule; EfficientNet-B0: the per-unit
elementwise rates and the fused lookup; the lookup graph: the pooling path; the VGG-like graph:
the traversal rule and the weight decoder), or it is the same graph as a fit row (MobileNet v2 1.0
at 224)) or `held-out` (it never informed anything: of the models this benchmark has run, only
the MobileNet v1 variants of `cost_vs_coral.py`'s cache and the Pixel 3 table). A model named on the
command line that is in neither list is held out. Rows name their graph (`GRAPHS`: an architecture,
whatever its width and resolution), and each error counts a graph once, so the 13 MobileNet v1
variants are one held-out graph. The headline error of each config is over the held-out rows
only; the shaped and fit rows' errors are printed beside it, and a last table gives per config
the held-out geometric-mean error and worst ratio against the goal (`GOAL_GEOMEAN`, `GOAL_WORST`).

Prints per model and config: our cycles, Vela's, the ratio, how many operators each leaves
to the CPU (ours: nodes the claims refuse), the bytes each puts on the SRAM and on the
weights' level (flash or DRAM), and the share of our cycles in nodes bound by compute, the SRAM
(activations) or the weights' level; with --layers, each Vela layer group (the Vela
operators up to one writing a tensor of the original graph) next to our nodes that produce it;
with --fit, each config's fitted compute fields (`FITTED`) refitted to Vela on the fit rows
(`FIT_MODELS`), next to the YAML's values: what the YAML should hold, to its rounding (`GRID`).
The fit is deterministic: a descent on the YAML's grid from the YAML's own values, so the shipped
values are its fixed point and a test reruns it.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.delegates.accelerator import AcceleratorDelegate  # noqa: E402
from accelsim.hardware.config import accelerator_policy, load_hardware  # noqa: E402
from accelsim.hardware.cost import npu  # noqa: E402
from accelsim.hardware.cost.npu import NpuCompute  # noqa: E402
from accelsim.hardware.device import Device  # noqa: E402
from accelsim.hardware.types import Hardware  # noqa: E402
from accelsim.runtime.interpreter import Interpreter  # noqa: E402
from accelsim.runtime.work import NodeWork  # noqa: E402
from benchmarks.calibration import (  # noqa: E402
    FIT,
    HELD_OUT,
    SHAPED,
    error_lines,
    graph_geomean_error,
    worst_ratio,
)

FIXTURES = ROOT / "tests" / "fixtures" / "models"
CORAL_CACHE = Path.home() / ".cache" / "accelsim" / "coral"  # cost_vs_coral.py's default
VELA_CACHE = Path.home() / ".cache" / "accelsim" / "vela"
# Held-out models of --vela-cache, each with the command that builds it (TensorFlow only; PY is a Python with it).
VELA_MODELS = {
    "efficientnet_b0_int8": "PY benchmarks/keras_tflite.py {path} EfficientNetB0 224 int8",
    "lut_graph_int8": "PY benchmarks/lut_graph.py {path}",
    "vgg_like_96_int8": "PY benchmarks/vgg_like.py {path}",
}
# The rows the shipped rates are fitted over (both configs): every int8 fixture.
FIT_MODELS = ("dilated_cnn_int8", "interleaved_int8", "mobilenet_v2_035_96_int8", "mobilenet_v2_100_224_int8",
              "transformer_block_int8")
# Other rows that informed a number: DenseNet-121's elementwise blocks gave the SHRAM block rule
# (NpuCompute.elementwise_block_elements) and the broadcast-operand rule
# (accelsim.hardware.cost.npu.broadcast_operand_bytes).
FIT_ROWS = (*FIT_MODELS, "densenet121_int8")
# Rows that informed no fitted number but shaped a mechanism (git history, issue 31 part B5), or that are the
# same graph as a fit row: not independent checks, so not held out.
SHAPED_ROWS = {
    "resnet50_int8": "its deep 3x3 convolutions (1.12-1.18 of Vela) gave the convolution traversal rule (9ddb05f)",
    "resnet50_299_int8": "ResNet-50, whose deep 3x3 convolutions gave the convolution traversal rule (9ddb05f)",
    "inception_v3_int8": "its 3x3 convolutions (1.16-1.31 of Vela) gave the convolution traversal rule (9ddb05f)",
    "InceptionV3_1.0_299_int8": "Inception-v3, whose 3x3 convolutions gave the convolution traversal rule (9ddb05f)",
    "efficientnet_b0_int8": "its misses on the U55-32/256 (0.66/1.56) shaped the per-unit elementwise rates "
                            "(73159a1) and the fused lookup (278e3ac, 0.90 -> 1.03 on the U55-256)",
    "lut_graph_int8": "its 0.39 on the U55-32 shaped the pooling path of pools and standalone lookups (73159a1)",
    "vgg_like_96_int8": "its U65 miss (1.25-1.29) shaped the traversal rule and the weight decoder (1bad411)",
    "mobilenet_v2_int8": "the same graph as the fit row mobilenet_v2_100_224_int8",
    "MobileNetV2_1.0_224_int8": "the same graph as the fit row mobilenet_v2_100_224_int8",
}
# Each model's graph (its architecture at any width and resolution): an error counts a graph once.
GRAPHS = {
    "mobilenet_v1_int8": "MobileNet v1",
    **{f"MobileNet_{a}_{s}_int8": "MobileNet v1" for a in ("0.25", "0.5", "0.75", "1.0") for s in (128, 160, 192, 224)},
    "mobilenet_v2_int8": "MobileNet v2", "MobileNetV2_1.0_224_int8": "MobileNet v2",
    "mobilenet_v2_100_224_int8": "MobileNet v2", "mobilenet_v2_035_96_int8": "MobileNet v2",
    "resnet50_int8": "ResNet-50", "resnet50_299_int8": "ResNet-50",
    "inception_v3_int8": "Inception-v3", "InceptionV3_1.0_299_int8": "Inception-v3",
}
# cost_vs_coral.py's converter-made ImageNet models that Vela compiles (VGG16 and Inception-ResNet-V2 take
# it many minutes): held out unless listed in FIT_ROWS.
CORAL_MODELS = ("mobilenet_v1_int8", "mobilenet_v2_int8", "resnet50_299_int8", "densenet121_int8")
# (our config, Vela accelerator, Vela system config)
SYSTEMS = (
    ("ethos_u55_32", "ethos-u55-32", "Ethos_U55_High_End_Embedded"),
    ("ethos_u55_64", "ethos-u55-64", "Ethos_U55_High_End_Embedded"),
    ("ethos_u55_128", "ethos-u55-128", "Ethos_U55_High_End_Embedded"),
    ("ethos_u55_256", "ethos-u55-256", "Ethos_U55_High_End_Embedded"),
    ("ethos_u65_256", "ethos-u65-256", "Ethos_U65_High_End"),
)
# The configs the fit runs over; the other U55 sizes hold the U55-128's fitted values.
FIT_CONFIGS = ("ethos_u55_128", "ethos_u65_256")
# The weights' level of each system in Vela's summary CSV (Shared_Sram: the constant area's memory).
WEIGHTS_LEVEL = {"Ethos_U55_High_End_Embedded": "off_chip_flash", "Ethos_U65_High_End": "dram"}
# The goal at each size (issue 25), over the held-out rows: geometric-mean error and worst ratio either way.
GOAL_GEOMEAN, GOAL_WORST = 0.20, 1.5
MEMORY_MODE = "Shared_Sram"
BOUND = 0.20  # the goal: every model's total within 1.2x of Vela's either way (max(r, 1/r) <= 1.2)


@dataclass(frozen=True)
class VelaLayer:
    """One row of Vela's --verbose-performance table."""

    original_op: str
    vela_op: str
    cycles: int
    npu_cycles: int
    name: str


@dataclass(frozen=True)
class VelaRun:
    """Vela's estimate for one model and system: the summary CSV and the per-layer table."""

    summary: dict[str, str]
    layers: tuple[VelaLayer, ...]
    cpu_ops: int  # operators Vela leaves to the CPU ("CPU operators = N")

    @property
    def cycles(self) -> int:
        return int(float(self.summary["cycles_total"]))

    def level_bytes(self, level: str) -> int:
        """Bytes Vela moves on 'sram', 'dram' or 'off_chip_flash' per inference."""
        return int(float(self.summary[f"{level}_total_bytes"]))


@dataclass(frozen=True)
class OurNode:
    """One node the NPU config claims: its output tensor names and our cycles and bytes for it."""

    op: str
    outputs: tuple[str, ...]
    cycles: int
    sram_bytes: int  # on the activations level
    weight_bytes: int  # on the weights level
    bound: str  # "compute" or the level that set its time; "-" for a node the compiler removes


def parse_layers(text: str) -> tuple[VelaLayer, ...]:
    """The rows of the table Vela prints with --verbose-performance (columns as Vela 5.2 prints them)."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("-----"):
            inside = True
            continue
        fields = line.split()
        if not inside or len(fields) < 16 or not fields[5].isdigit():
            inside = inside and bool(fields) and not rows
            continue
        rows.append(VelaLayer(fields[0], fields[1], int(fields[5]), int(fields[7]), " ".join(fields[15:])))
    return tuple(rows)


def run_vela(model: Path, accelerator: str, system: str, out_dir: Path) -> VelaRun:
    """Compile `model` with Vela and read its estimate.

    Raises:
        RuntimeError: Vela failed; carries the end of its output.
    """
    command = [sys.executable, "-m", "ethosu.vela", "--accelerator-config", accelerator, "--system-config", system,
               "--memory-mode", MEMORY_MODE, "--output-dir", str(out_dir), "--verbose-performance", str(model)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}:\n{result.stdout[-3000:]}"
                           f"\n{result.stderr[-3000:]}")
    with (out_dir / f"{model.stem}_summary_{system}.csv").open() as f:
        summary = next(csv.DictReader(f))
    cpu_ops = re.search(r"^CPU operators = (\d+)", result.stdout, re.M)
    return VelaRun(summary, parse_layers(result.stdout), int(cpu_ops.group(1)) if cpu_ops else 0)


def our_nodes(model: Path, device: Device) -> tuple[list[OurNode], list[NodeWork], int]:
    """Our cost and work of every node the config claims, in execution order, and how many nodes it leaves
    to the CPU."""
    delegate = AcceleratorDelegate(accelerator_policy(device))
    hw = device.hardware
    interpreter = Interpreter(model_path=str(model), experimental_delegates=[delegate])
    interpreter.allocate_tensors()
    graph = interpreter.primary
    work = delegate.work_by_node()
    order = sorted(work)
    costs = npu.costs([work[i] for i in order], hw)
    nodes = [OurNode(work[i].op, tuple(graph.tensors[t].name for t in graph.nodes[i].outputs if t >= 0),
                     c.cycles, c.bytes_on(hw.memory.activations), c.bytes_on(hw.memory.weights), c.bound or "-")
             for i, c in zip(order, costs)]
    # The delegate replaced its nodes by delegate nodes: what else remains in the plan runs on the CPU.
    left = sum(1 for i in graph.execution_plan if graph.nodes[i].delegate is None)
    return nodes, [work[i] for i in order], left


def layer_groups(nodes: Sequence[OurNode], layers: Sequence[VelaLayer]) -> list[tuple[list[OurNode], list[VelaLayer]]]:
    """Our nodes in order, each run of them up to one that Vela's rows name, with those rows.

    Vela rewrites the graph (fuses activations and pads, splits softmax, ...) and may reorder
    it, but keeps the names of the original graph's output tensors on the operator that
    finally writes them: a row belongs to the node writing its name, and rows naming no tensor
    of ours (Vela's intermediates) to the next row that does. Rows naming nothing at the end
    form a last group without nodes.
    """
    producer = {name: i for i, node in enumerate(nodes) for name in node.outputs}
    rows: dict[int, list[VelaLayer]] = {}
    pending: list[VelaLayer] = []
    for layer in layers:
        pending.append(layer)
        if layer.name in producer:
            rows.setdefault(producer[layer.name], []).extend(pending)
            pending = []
    groups: list[tuple[list[OurNode], list[VelaLayer]]] = []
    run: list[OurNode] = []
    for i, node in enumerate(nodes):
        run.append(node)
        if i in rows:
            groups.append((run, rows[i]))
            run = []
    if run or pending:
        groups.append((run, pending))
    return groups


@dataclass(frozen=True)
class Comparison:
    """One model on one system: our nodes and Vela's run."""

    model: str
    config: str
    nodes: tuple[OurNode, ...]
    cpu_ops: int
    vela: VelaRun
    hw: Hardware
    works: tuple[NodeWork, ...]  # of `nodes`, for refitting

    @property
    def cycles(self) -> int:
        return sum(n.cycles for n in self.nodes)

    @property
    def ratio(self) -> float:
        return self.cycles / self.vela.cycles


def compare(model: Path, config: str, accelerator: str, system: str, work_dir: Path) -> Comparison:
    """Our estimate and Vela's for one model on one system."""
    device = load_hardware(ROOT / "hw_configs" / f"{config}.yaml")
    out_dir = work_dir / f"{model.stem}_{accelerator}"
    nodes, works, cpu_ops = our_nodes(model, device)
    return Comparison(model.stem, config, tuple(nodes), cpu_ops, run_vela(model, accelerator, system, out_dir),
                      device.hardware, tuple(works))


def row_set(model: str) -> str:
    """FIT when `model` (a file stem) informed a number in the shipped NPU configs, SHAPED when it shaped a
    mechanism (SHAPED_ROWS), else HELD_OUT."""
    return FIT if model in FIT_ROWS else SHAPED if model in SHAPED_ROWS else HELD_OUT


def graph(model: str) -> str:
    """`model`'s graph (GRAPHS; else the model itself)."""
    return GRAPHS.get(model, model)


def compare_all(models: Sequence[Path], jobs: int = 2, systems: Sequence[tuple[str, str, str]] = SYSTEMS
                ) -> list[Comparison]:
    """Every model on every system (default: all of SYSTEMS); Vela runs `jobs` at a time (each is a separate
    process)."""
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(compare, m, *system, Path(tmp)) for m in models for system in systems]
        return [f.result() for f in futures]


def vela_cache_models(cache: Path) -> list[Path]:
    """The held-out models of VELA_MODELS in `cache`.

    Raises:
        SystemExit: some are missing; the message gives the commands that build them.
    """
    paths = {name: cache / f"{name}.tflite" for name in VELA_MODELS}
    missing = [name for name, path in paths.items() if not path.exists()]
    if missing:
        commands = "; ".join(VELA_MODELS[name].format(path=paths[name]) for name in missing)
        raise SystemExit(f"cost_vs_vela: {', '.join(missing)} missing from {cache}; build them with a Python that "
                         f"has TensorFlow (PY): {commands}")
    return list(paths.values())


# The compute fields the shipped configs mark "fitted"; everything else is cited.
FITTED = ("window_efficiency", "add_cycles_per_element", "mul_cycles_per_element", "copy_cycles_per_element",
          "reduce_cycles_per_element", "matmul_cycles_per_mac", "mac_op_overhead_cycles",
          "elementwise_op_overhead_cycles", "sram_efficiency", "weight_efficiency")
# The rounding the YAMLs state for each fitted field, which is the grid the fit searches on.
GRID = {**{name: 0.01 for name in FITTED}, "mac_op_overhead_cycles": 10, "elementwise_op_overhead_cycles": 1}
_MOVES = (16, 8, 4, 2, 1)  # grid steps tried per field, coarse to fine


def misfit(results: Sequence[Comparison], compute: NpuCompute) -> float:
    """How far `compute` puts us from Vela: 20x the squared log ratio of each model's total plus the mean
    squared log ratio of its layer groups (100 cycles added on both sides so that tiny layers weigh less)."""
    error = 0.0
    for r in results:
        cycles = [c.cycles for c in npu.costs(r.works, dataclasses.replace(r.hw, compute=compute))]
        error += 20 * math.log(sum(cycles) / r.vela.cycles) ** 2
        position = {id(n): i for i, n in enumerate(r.nodes)}
        groups = [(sum(cycles[position[id(n)]] for n in nodes), sum(x.cycles for x in layers))
                  for nodes, layers in layer_groups(r.nodes, r.vela.layers)]
        error += sum(math.log((ours + 100) / (vela + 100)) ** 2 for ours, vela in groups) / len(groups)
    return error


def on_grid(name: str, value: float) -> float | int:
    """`value` rounded to the field's GRID step (a whole number for cycle counts)."""
    step = GRID[name]
    units = round(value / step)
    return units * step if isinstance(step, int) else round(units * step, 10)


def fit(results: Sequence[Comparison], compute: NpuCompute) -> NpuCompute:
    """The FITTED fields of `compute` moved on their GRID to a local minimum of `misfit`.

    Coordinate descent from `compute` rounded to the grid: each field in turn moves by 16, 8, 4, 2
    and 1 grid steps up or down while that strictly lowers the misfit, over and over until no
    single step of any field does. Deterministic, and a fixed point: refitting its result returns
    it unchanged. Fractions stay in (0, 1], rates above 0. The misfit is flat along some directions
    (matmul_cycles_per_mac is seen only in the transformer fixture's two BATCH_MATMULs), so another
    start can end in another minimum of nearly equal misfit: the YAML holds the one reached from
    its own values.
    """
    best = dataclasses.replace(compute, **{name: on_grid(name, getattr(compute, name)) for name in FITTED})
    error = misfit(results, best)
    improved = True
    while improved:
        improved = False
        for name in FITTED:
            for moves in _MOVES:
                while True:
                    trials = []
                    for sign in (1, -1):
                        value = on_grid(name, getattr(best, name) + sign * moves * GRID[name])
                        if value <= 0 or (name.endswith("efficiency") and value > 1):
                            continue
                        trial = dataclasses.replace(best, **{name: value})
                        trials.append((misfit(results, trial), -sign, trial))
                    if not trials:
                        break
                    trial_error, _, trial = min(trials, key=lambda t: t[:2])
                    if trial_error >= error:
                        break
                    best, error, improved = trial, trial_error, True
    return best


def fit_lines(config: str, results: Sequence[Comparison]) -> list[str]:
    """What `--fit` prints for one config: each fitted field's refitted value beside the YAML's.

    Raises:
        SystemExit: a fit row is missing from `results`.
    """
    mine = [r for r in results if r.config == config and r.model in FIT_MODELS]
    missing = sorted(set(FIT_MODELS) - {r.model for r in mine})
    if missing:
        raise SystemExit(f"cost_vs_vela --fit: the fit rows {', '.join(missing)} are not among the models")
    before = mine[0].hw.compute
    after = fit(mine, before)
    lines = [f"{config}: fit over {', '.join(FIT_MODELS)}; misfit {misfit(mine, before):.4f} (YAML) -> "
             f"{misfit(mine, after):.4f} (fit)"]
    for name in FITTED:
        fitted, shipped = getattr(after, name), getattr(before, name)
        lines.append(f"  {name}: {fitted:g}  (YAML {shipped:g}{', differs' if fitted != shipped else ''})")
    same = all(getattr(after, n) == getattr(before, n) for n in FITTED)
    lines.append(f"  the YAML holds the fit: {'yes' if same else 'no'}")
    return lines


def bound_shares(result: Comparison) -> str:
    """Percent of our cycles spent in nodes bound by compute, the activations level and the weights level: 'c/a/w'."""
    total = sum(n.cycles for n in result.nodes) or 1
    bounds = ("compute", result.hw.memory.activations, result.hw.memory.weights)
    return "/".join(f"{100 * sum(n.cycles for n in result.nodes if n.bound == b) / total:.0f}" for b in bounds)


def summary_table(results: Sequence[Comparison]) -> list[str]:
    weights_level = {config: WEIGHTS_LEVEL[system] for config, _, system in SYSTEMS}
    lines = [f"{'model':28} {'set':8} {'config':14} {'ours':>10} {'vela':>10} {'ratio':>6}  {'CPU ops ours/vela':>17}  "
             f"{'SRAM B ours':>11} {'vela':>9}  {'weights B ours':>14} {'vela':>9}  {'bound c/a/w %':>13}"]
    for r in results:
        level = weights_level[r.config]
        lines.append(f"{r.model:28} {row_set(r.model):8} {r.config:14} {r.cycles:10d} {r.vela.cycles:10d} "
                     f"{r.ratio:6.2f}  "
                     f"{f'{r.cpu_ops}/{r.vela.cpu_ops}':>17}  "
                     f"{sum(n.sram_bytes for n in r.nodes):11d} {r.vela.level_bytes('sram'):9d}  "
                     f"{sum(n.weight_bytes for n in r.nodes):14d} {r.vela.level_bytes(level):9d}  "
                     f"{bound_shares(r):>13}")
    return lines


def goal_table(results: Sequence[Comparison]) -> list[str]:
    """Per config: held-out, shaped and fit rows' count (rows/graphs), geometric-mean error (each graph once) and
    worst ratio, and whether the held-out rows meet the goal (geometric-mean error <= GOAL_GEOMEAN, every ratio
    within GOAL_WORST either way)."""
    lines = [f"{'config':14} {'held-out':>8} {'geomean':>8} {'worst':>6}  {'shaped':>6} {'geomean':>8} {'worst':>6}  "
             f"{'fit':>5} {'geomean':>8} {'worst':>6}  goal (<= {GOAL_GEOMEAN:.0%}, within {GOAL_WORST}x; "
             "rows/graphs)"]
    for config, *_ in SYSTEMS:
        cells, met = [], None
        for label, width in ((HELD_OUT, 8), (SHAPED, 6), (FIT, 5)):
            chosen = [r for r in results if r.config == config and row_set(r.model) == label]
            if not chosen:
                cells.append(f"{'0':>{width}} {'-':>8} {'-':>6}")
                continue
            ratios, graphs = [r.ratio for r in chosen], [graph(r.model) for r in chosen]
            error, worst = graph_geomean_error(ratios, graphs), worst_ratio(ratios)
            cells.append(f"{f'{len(ratios)}/{len(set(graphs))}':>{width}} {error:8.0%} {worst:6.2f}")
            if label == HELD_OUT:
                met = error <= GOAL_GEOMEAN and 1 / GOAL_WORST <= worst <= GOAL_WORST
        verdict = "no held-out row" if met is None else "met" if met else "NOT met"
        lines.append(f"{config:14} {cells[0]}  {cells[1]}  {cells[2]}  {verdict}")
    return lines


def layer_table(result: Comparison) -> list[str]:
    lines = [f"{result.model} on {result.config}",
             f"  {'our nodes':44} {'ours':>9} {'bound':>7} {'vela':>9} {'ratio':>6}  vela ops"]
    for nodes, layers in layer_groups(result.nodes, result.vela.layers):
        ours = sum(n.cycles for n in nodes)
        vela = sum(x.cycles for x in layers)
        bounds = sorted({n.bound for n in nodes if n.cycles})
        ratio = f"{ours / vela:6.2f}" if vela else "     -"
        ops = "+".join(n.op for n in nodes) or "-"
        vela_ops = "+".join(dict.fromkeys(x.vela_op for x in layers)) or "-"
        lines.append(f"  {ops[:44]:44} {ours:9d} {','.join(bounds) or '-':>7} {vela:9d} {ratio}  {vela_ops}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path,
                        help="models (default: every int8 fixture, the ImageNet models found in --cache and the "
                             "held-out models of --vela-cache)")
    parser.add_argument("--cache", type=Path, default=CORAL_CACHE,
                        help=f"cost_vs_coral.py's folder of converted models (default {CORAL_CACHE})")
    parser.add_argument("--vela-cache", type=Path, default=VELA_CACHE,
                        help=f"folder of this benchmark's own held-out models, VELA_MODELS (default {VELA_CACHE})")
    parser.add_argument("--layers", action="store_true", help="print the per-layer comparison too")
    parser.add_argument("--fit", action="store_true",
                        help="refit the fitted compute fields of FIT_CONFIGS (the U55-128, the U65-256) to the fit "
                             "rows and print them beside the YAML's")
    args = parser.parse_args(argv)
    models = args.models or [*sorted(FIXTURES.glob("*int8*.tflite")),
                             *(p for p in (args.cache / f"{m}.tflite" for m in CORAL_MODELS) if p.exists()),
                             *vela_cache_models(args.vela_cache)]
    stems = [m.stem for m in models]
    twice = sorted({stem for stem in stems if stems.count(stem) > 1})
    if twice:
        raise SystemExit(f"cost_vs_vela: more than one model named {', '.join(twice)}: Vela writes its output by "
                         "model name, so the runs would overwrite each other; pass one of each")
    results = compare_all(models)
    if args.layers:
        for r in results:
            print("\n".join(layer_table(r)), end="\n\n")
    print("\n".join(summary_table(results)))
    print()
    for config, *_ in SYSTEMS:
        print("\n".join(error_lines(f"{config} / Vela", [(row_set(r.model), r.ratio, graph(r.model))
                                                         for r in results if r.config == config])))
    shaped = sorted({r.model for r in results if row_set(r.model) == SHAPED})
    if shaped:
        print("\nshaped rows (not independent checks):")
        print("\n".join(f"  {m}: {SHAPED_ROWS[m]}" for m in shaped))
    print("\n" + "\n".join(goal_table(results)))
    if args.fit:
        for config in FIT_CONFIGS:
            print("\n" + "\n".join(fit_lines(config, results)))
    outside = [f"{r.model}/{r.config}" for r in results if max(r.ratio, 1 / r.ratio) - 1 > BOUND]
    print(f"\nwithin {1 + BOUND:.1f}x of Vela either way: {len(results) - len(outside)}/{len(results)}"
          + (f"; outside: {', '.join(outside)}" if outside else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
