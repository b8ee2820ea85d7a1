"""Every key of an experiment file, in one table: `load_experiment` checks keys against it and
`accelsim experiment --schema` prints it (docs/experiments.md is the same text; a test compares them).

Adding a key is one `ExperimentKey` entry in `KEYS` (its parsing goes in `accelsim.experiments.experiment`).
A key path names a key of a mapping with a dot (`loops.default_trips`) and a key of every entry of
a list with `[]` (`variants[].name`); `<...>` stands for a key the user chooses.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import accelsim.default_experiment
from accelsim.core.pareto import TRACES
from accelsim.core.schedule import SCHEDULES
from accelsim.delegates.spec import OBJECTIVES
from accelsim.hardware.config import ASSIGN_POLICIES
from accelsim.hardware.config_yaml import ConfigError
from accelsim.hardware.sweeps import LIMITS, SAMPLERS, SEARCH_OBJECTIVES, STRATEGIES
from accelsim.reports.report import RENDERERS  # the renderers' own table
from accelsim.workloads.segments import SEGMENTATIONS
from accelsim.workloads.streams import MODES as STREAM_MODES

# examples/default/ at the repository top, installed as the package data `accelsim.default_experiment`: `accelsim run`
# with no argument runs it from a checkout and from the wheel alike.
DEFAULT_EXPERIMENT = Path(str(resources.files(accelsim.default_experiment))) / "default.yaml"


def default_experiment() -> Path:
    """The experiment `accelsim run` runs when given none (DEFAULT_EXPERIMENT).

    Raises:
        ConfigError: it is missing (a broken installation): says to reinstall or pass an experiment.
    """
    path = DEFAULT_EXPERIMENT
    if not path.is_file():
        raise ConfigError([f"no experiment given, and the default {path} is missing from this installation "
                           "(reinstall accelsim); pass an experiment YAML"])
    return path

REQUIRED = "required"


@dataclass(frozen=True, kw_only=True)
class ExperimentKey:
    """One key of an experiment file: what it takes, its default ('required' if none), an example line.

    `choices` names a vocabulary of `vocabularies()`, appended to `value` where the text is shown: the
    names come from the tables the loader checks values against.
    """

    path: str
    value: str
    default: str
    example: str
    meaning: str
    choices: str = ""


def _choices(values) -> str:
    return " | ".join(f"`{v}`" for v in values)


def vocabularies() -> dict[str, str]:
    """The allowed values of the keys with `choices`, from the modules that check them."""
    return {"assign": f"policy {_choices(ASSIGN_POLICIES)}; objective {_choices(OBJECTIVES)}",
            "formats": _choices(RENDERERS), "limits": _choices(LIMITS), "schedules": _choices(SCHEDULES),
            "strategies": _choices(STRATEGIES), "traces": _choices(TRACES), "samplers": _choices(SAMPLERS),
            "objectives": _choices(SEARCH_OBJECTIVES), "stream_modes": _choices(STREAM_MODES),
            "segmentations": _choices(SEGMENTATIONS)}


KEYS: tuple[ExperimentKey, ...] = (
    ExperimentKey(path="name", value="folder-safe text", default="the file's stem", example="name: usb_sweep",
                  meaning="the report goes to reports/<name>/"),
    ExperimentKey(path="models", value="non-empty list of .tflite paths", default=REQUIRED,
                  example="models: [model.tflite, ../other.tflite]",
                  meaning="relative to the experiment file; every model runs on every variant"),
    ExperimentKey(path="host", value="hardware config", default=REQUIRED, example="host: host_cpu",
                  meaning="the host: a YAML path (relative to the file) or a shipped name (`accelsim configs`)"),
    ExperimentKey(path="variants", value="non-empty list of mappings", default=REQUIRED,
                  example="variants: [{name: cpu_only, accelerators: []}, {name: usb, accelerators: [edgetpu_usb]}]",
                  meaning="the systems compared; each is a host plus accelerators"),
    ExperimentKey(path="variants[].name", value="text, unique", default=REQUIRED, example="name: usb",
                  meaning="the variant's name in reports"),
    ExperimentKey(path="variants[].accelerators", value="list of hardware configs", default="[]",
                  example="accelerators: [edgetpu_usb, hexagon_dsp]",
                  meaning="applied in order, each claims from the nodes the ones before left; [] is the CPU-only "
                          "baseline"),
    ExperimentKey(path="variants[].max_delegated_partitions", value="whole number >= 0",
                  default="each accelerator's partition.max_delegated_partitions",
                  example="max_delegated_partitions: 1", meaning="overrides every accelerator's limit"),
    ExperimentKey(path="variants[].min_nodes_per_partition", value="whole number >= 0",
                  default="each accelerator's partition.min_nodes_per_partition",
                  example="min_nodes_per_partition: 2", meaning="overrides every accelerator's minimum"),
    ExperimentKey(path="variants[].assign",
                  value="a policy, or {policy: ..., objective: ...}", choices="assign", default="order",
                  example="assign: {policy: cost, objective: energy}",
                  meaning="order: TFLite's, the first claimer takes a node; cost: each claimed run of nodes goes to "
                          "the cheapest target, the host included"),
    ExperimentKey(path="sweeps", value="mapping key path -> list of values or range", default="{} (one point)",
                  example="sweeps: {edgetpu_usb.link.bandwidth: [40 MB/s, 320 MB/s, 1 GB/s]}",
                  meaning="the design points are the cross product of the swept values"),
    ExperimentKey(path="sweeps.<accelerator>.<key>", value="list, or range {from, to, step | steps, log}",
                  default="", example="edgetpu_usb.compute.rows: {from: 8, to: 256, step: 8}",
                  meaning="a key path of an accelerator's config (`accelsim configs --schema`), by its name; applies "
                          "to the variants that contain it"),
    ExperimentKey(path="sweeps.host.<key>", value="list or range", default="",
                  example="host.clock: [1 GHz, 2 GHz]", meaning="a key path of the host's config"),
    ExperimentKey(path="sweeps.max_delegated_partitions", value="list of whole numbers >= 0", default="",
                  example="max_delegated_partitions: [1, 2, 4]",
                  meaning="an option of every variant with accelerators (so is min_nodes_per_partition)"),
    ExperimentKey(path="sweeps.schedule", value="list of schedules", choices="schedules", default="",
                  example="schedule: [sequential, dataflow]", meaning="both schedules, side by side"),
    ExperimentKey(path="search", value="mapping", default="{strategy: grid}",
                  example="search: {strategy: random, samples: 1000, seed: 7}",
                  meaning="how the sweeps' combinations are chosen"),
    ExperimentKey(path="search.strategy", value="one of", choices="strategies", default="grid",
                  example="strategy: random",
                  meaning="grid: every combination; random: `samples` combinations drawn with `seed`"),
    ExperimentKey(path="search.samples", value="whole number >= 1", default="required with random",
                  example="samples: 1000", meaning="combinations to draw"),
    ExperimentKey(path="search.seed", value="whole number >= 0", default="0", example="seed: 7",
                  meaning="the draw's seed, or the sampler's: the same seed gives the same search"),
    ExperimentKey(path="search.sampler", value="one of", choices="samplers", default="grid",
                  example="search: {sampler: nsga2, budget: 200, seed: 1, objectives: [latency_us, energy_uj]}",
                  meaning="an Optuna sampler chooses `budget` points per model and variant, minimising `objectives` "
                  "(pip install -e '.[search]'); its study is kept in the report folder (study.sqlite) and a "
                  "run continues it; grid: every combination"),
    ExperimentKey(path="search.budget", value="whole number >= 1", default="required with a sampler",
                  example="budget: 200", meaning="trials per model and variant"),
    ExperimentKey(path="search.objectives", value="list of results columns", choices="objectives",
                  default="[latency_us]", example="objectives: [latency_us, energy_uj]",
                  meaning="numeric results columns the sampler minimises, one or several (a Pareto search)"),
    ExperimentKey(path="limits", value="mapping limit -> {min, max}", choices="limits", default="{} (no limits)",
                  example="limits: {peak_macs_per_cycle: {max: 8192}, onchip_bytes: {max: 16 MiB}}",
                  meaning="points over a limit are infeasible, never run; by accelerator (the host is not limited)"),
    ExperimentKey(path="limits.points", value="whole number >= 1", default="100000",
                  example="limits: {points: 1000000}",
                  meaning="the most design points `run` accepts; more are refused at once with their count "
                  "(as `--max-points N`); `validate` prints the count"),
    ExperimentKey(path="schedule", value="one of", choices="schedules", default="sequential",
                  example="schedule: dataflow",
                  meaning="sequential: one node after another; dataflow: host, links and accelerators overlap"),
    ExperimentKey(path="numerics", value="`false` | `true` | {runs: N}", default="false",
                  example="numerics: {runs: 20}",
                  meaning="inference_diff per point (true: 5 runs): accelerator numerics against the reference"),
    ExperimentKey(path="loops", value="mapping", default="{}", example="loops: {default_trips: 16}",
                  meaning="trip counts of WHILE loops the model does not fix"),
    ExperimentKey(path="loops.default_trips", value="whole number >= 0",
                  default="none: a loop nobody can count is an error naming its node", example="default_trips: 16",
                  meaning="trips of every loop whose count neither constants nor shapes fix"),
    ExperimentKey(path="loops.nodes", value="mapping '<subgraph>:<node>' -> whole number", default="{}",
                  example="nodes: {'0:1': 10}", meaning="trips of one loop node; overrides any count"),
    ExperimentKey(path="reports", value="list of formats", choices="formats", default="every format",
                  example="reports: [md, html]", meaning="which files the report folder gets"),
    ExperimentKey(path="traces", value="one of", choices="traces", default="pareto", example="traces: all",
                  meaning="which points get Gantt charts, Chrome traces and layers/*.csv: the Pareto fronts and "
                          "the `best` fastest, every point, or none"),
    ExperimentKey(path="best", value="whole number >= 0", default="5", example="best: 10",
                  meaning="with traces: pareto, the fastest points traced too"),
    ExperimentKey(path="pareto", value="mapping", default="{}", example="pareto: {color: edgetpu_usb.compute.rows}",
                  meaning="the Pareto plot's options"),
    ExperimentKey(path="pareto.color", value="a swept key", default="the first swept key",
                  example="color: edgetpu_usb.compute.rows", meaning="the swept key colouring the Pareto plot"),
    ExperimentKey(path="generate", value="mapping", default="none: each point is one inference",
                  example="generate: {prefill: 1024, decode: 256, context: 4096}",
                  meaning="each point is an LLM generating (accelsim llm): prefill then decode; models may be "
                          "architecture names (gemma3-1b, llama3.2-1b, ...) or LLM .tflite files; records add `llm` "
                          "(ttft_s, tokens/s, memory, bounds) and their latency_us is the time to first token"),
    ExperimentKey(path="generate.prefill", value="whole number >= 1", default="required with generate",
                  example="prefill: 1024", meaning="prompt tokens (sweep it as generate.prefill)"),
    ExperimentKey(path="generate.decode", value="whole number >= 1", default="required with generate",
                  example="decode: 256", meaning="generated tokens"),
    ExperimentKey(path="generate.context", value="whole number >= 1", default="prefill + decode",
                  example="context: 4096", meaning="KV cache positions a built architecture's graph has"),
    ExperimentKey(path="generate.quant", value="int8 | int4 | int4-block32 | int4-block128 | float32",
                  default="int4", example="quant: int4-block32", meaning="a built architecture's weights"),
    ExperimentKey(path="generate.kv_buffers", value="whole number >= 1", default="1", example="kv_buffers: 2",
                  meaning="KV caches the runtime keeps (LiteRT-LM: 1 on the CPU, 2 on the GPU)"),
    ExperimentKey(path="sweeps.generate.<key>", value="list or range", default="",
                  example="generate.prefill: [128, 512, 1024]", meaning="a key of the generate block, swept"),
    ExperimentKey(path="streams", value="mapping", default="none (one inference per point)",
                  example="streams: {mode: pipeline, count: 4, segmentation: balanced, frames: 200}",
                  meaning="also simulate a stream of frames on every design point's system (`accelsim stream`): "
                          "throughput, latency p50/p90/p99, dropped frames, per-unit utilisation; the report gets "
                          "a Streams section, streams.json and streams.csv"),
    ExperimentKey(path="streams.mode", value="one of", choices="stream_modes", default="single",
                  example="mode: replicas",
                  meaning="single: the system as given; replicas: `count` copies of its one accelerator, each "
                          "frame to the next free one; pipeline: the model cut into `count` segments, one per copy"),
    ExperimentKey(path="streams.count", value="whole number >= 1", default="1", example="count: 4",
                  meaning="copies of the variant's one accelerator (replicas, pipeline)"),
    ExperimentKey(path="streams.segmentation", value="one of", choices="segmentations", default="balanced",
                  example="segmentation: profiled",
                  meaning="compiler: the Edge TPU compiler's split (libcoral's parameter count rule); profiled: "
                          "libcoral's partition_with_profiling on simulated times; balanced: ours, never worse"),
    ExperimentKey(path="streams.shared_link", value="true | false", default="false", example="shared_link: true",
                  meaning="the copies share one link (one USB bus, one AXI port) instead of one each"),
    ExperimentKey(path="streams.frames", value="whole number >= 1", default="100", example="frames: 1000",
                  meaning="frames offered per stream"),
    ExperimentKey(path="streams.rate", value="frames per second > 0", default="back-to-back", example="rate: 30",
                  meaning="arrivals, frame k at k / rate; without rate or period frames come back-to-back"),
    ExperimentKey(path="streams.period", value="time > 0", default="back-to-back", example="period: 33 ms",
                  meaning="arrivals, frame k at k x period (instead of rate)"),
    ExperimentKey(path="streams.max_in_flight", value="whole number >= 1",
                  default="none with a rate; one per copy back-to-back", example="max_in_flight: 1",
                  meaning="the flow limit (MediaPipe's FlowLimiterCalculator): frames in flight at most, counting "
                          "frames made from them downstream"),
    ExperimentKey(path="streams.max_in_queue", value="whole number >= 0", default="0", example="max_in_queue: 1",
                  meaning="frames waiting at the flow limit: 0 drops a frame over it; 1 keeps the newest, "
                          "dropping the one it replaces"),
    ExperimentKey(path="streams.graph", value="list of streams", default="each point's model alone",
                  example="graph: [{name: detector, model: det.tflite, rate: 30}, "
                          "{name: landmark, model: lm.tflite, depends_on: [detector]}]",
                  meaning="several models on each variant's system at once (a MediaPipe graph); the experiment's "
                          "models are not streamed then"),
    ExperimentKey(path="streams.graph[].name", value="text, unique", default=REQUIRED, example="name: detector",
                  meaning="the stream's name in reports and in depends_on"),
    ExperimentKey(path="streams.graph[].model", value=".tflite path", default=REQUIRED, example="model: det.tflite",
                  meaning="relative to the experiment file"),
    ExperimentKey(path="streams.graph[].depends_on", value="list of stream names", default="[]",
                  example="depends_on: [detector]",
                  meaning="its frame k arrives when these streams finish their frame k; no cycles"),
    ExperimentKey(path="streams.graph[].<key>", value="rate, period, frames, max_in_flight, max_in_queue",
                  default="the streams block's", example="max_in_flight: 1", meaning="that stream's own setting"),
    ExperimentKey(path="sweeps.streams.<key>", value="list of values", default="",
                  example="streams.count: [1, 2, 3, 4]",
                  meaning="a key of the streams block: every design point streams with each value"),
    ExperimentKey(path="ops", value="list of op modules: installed module names or .py paths (relative to the file)",
                  default="[]", example="ops: [accelsim.ops.mediapipe, my_ops.py]",
                  meaning="modules whose register(resolver) adds the custom-op kernels the models need "
                          "(as --ops on the command line)"),
)


def section_keys(section: str = "") -> tuple[str, ...]:
    """The keys written directly under `section` ('' the top level, 'variants[]', 'loops', ...), in table order."""
    prefix = f"{section}." if section else ""
    return tuple(rest for k in KEYS if k.path.startswith(prefix)
                 and "." not in (rest := k.path[len(prefix):]) and "[" not in rest and "<" not in rest)


def value_text(key: ExperimentKey, vocabularies: dict[str, str]) -> str:
    """What a key takes, with its vocabulary when it has one."""
    return f"{key.value}: {vocabularies[key.choices]}" if key.choices else key.value


def schema_markdown() -> str:
    """The experiment reference as Markdown: every key with its value, default, example and meaning."""
    words = vocabularies()
    rows = [(f"`{k.path}`", value_text(k, words), k.default, f"`{k.example}`", k.meaning) for k in KEYS]
    out = ["# Experiment file reference", "",
           "Generated by `accelsim experiment --schema` from the table the loader checks keys against "
           "(`accelsim.experiments.keys`); do not edit by hand.", "",
           "An experiment is a YAML mapping: models, a host and variants (the systems compared), and optionally "
           "sweeps that turn each variant into design points. `accelsim run FILE` runs every point and writes "
           "reports/<name>/; `accelsim validate FILE` checks it. Paths are relative to the file; a bare config "
           "name such as `edgetpu_usb` is a shipped config (`accelsim configs`). `variants[].name` is the key "
           "`name` of every entry of `variants`. `accelsim run` with no file runs the default experiment, "
           "shipped with accelsim (examples/default/default.yaml in the repository).", "",
           "| key | value | default | example | meaning |", "|---|---|---|---|---|"]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    out += ["", "A range's ends are plain numbers or quantities of one kind (40 MB/s, 1 GHz, 8 MiB); a grid needs "
            "`step` or `steps`, a random search samples a range without them (log-uniformly with `log: true`).", ""]
    return "\n".join(out)


def key_lines() -> list[str]:
    """One line per key: its path, meaning and default (`accelsim experiment`)."""
    width = max(len(k.path) for k in KEYS)
    return [f"{k.path:<{width}}  {k.meaning}" + (f" (default: {k.default})" if k.default else "") for k in KEYS]


__all__ = ["DEFAULT_EXPERIMENT", "KEYS", "REQUIRED", "ExperimentKey", "default_experiment", "key_lines",
           "schema_markdown", "section_keys",
           "value_text", "vocabularies"]
