"""Experiments: a YAML grid of design points, cached, run in parallel, turned into a report.

Every key, with its type, default and an example: `accelsim experiment --schema` (accelsim.experiments.keys).
An experiment file (paths are relative to the file; a bare config name such as
`edgetpu_usb` means the shipped `hw_configs/edgetpu_usb.yaml`):

```yaml
name: default                      # report folder reports/<name>/ (default: the file's stem)
models: [../tests/fixtures/models/mobilenet_v2_035_96_int8.tflite]
host: kryo385_cpu                  # the default host (calibrated: benchmarks/cost_vs_pixel3.py)
variants:                          # each: accelerators applied in order; [] is the CPU-only baseline
  - {name: cpu_only, accelerators: []}
  - {name: edgetpu_usb, accelerators: [edgetpu_usb], max_delegated_partitions: 1}
  - {name: both, accelerators: [edgetpu_usb, hexagon_dsp], assign: cost}   # see below
sweeps:                            # optional; the design points are the cross product
  edgetpu_usb.link.bandwidth: [40 MB/s, 320 MB/s, 1 GB/s]   # <accelerator name>.<config key path>
  max_delegated_partitions: [1, 2, 4]                        # an option of every variant with accelerators
  edgetpu_usb.compute.rows: {from: 8, to: 256, step: 8}     # or a range (accelsim.hardware.sweeps)
search: {strategy: random, samples: 1000, seed: 7}         # optional; default: the grid of every combination
limits: {peak_macs_per_cycle: {max: 8192}, onchip_bytes: {max: 16 MiB}}   # optional; drops points before they run
schedule: sequential               # or dataflow (also sweepable as `schedule`)
numerics: false                    # or true (5 runs) or {runs: N}: inference_diff per point
loops: {default_trips: 16, nodes: {"0:1": 10}}   # optional: trip counts of loops the model does not fix
ops: [accelsim.ops.mediapipe, my_ops.py]          # optional: custom-op modules (accelsim.ops), paths relative
reports: [md, html, json, csv]
traces: pareto                     # or all, or none: which points get Gantt charts, Chrome traces, layers/*.csv
best: 5                            # with traces: pareto, the k fastest points are traced too
pareto: {color: edgetpu_usb.compute.rows}   # the swept key colouring the Pareto plot (default: the first)
```

`traces: pareto` (the default) traces only the points on a Pareto front (latency x energy,
latency x MAC units, latency x on-chip bytes; accelsim.core.pareto) and the `best` fastest: their
Gantt charts, Chrome traces and per-node tables are written, and the report shows them in
detail. Which points those are is known only when every point has run, so the store keeps every
point without its per-node lists (accelsim.reports.results.DETAIL_KEYS) and the report re-simulates the
chosen few (deterministic, so they come out the same). A 100,000-point run thus neither writes
100,000 files nor holds 100,000 timelines. `all` stores and traces every point (the behaviour of
earlier versions); `none` traces nothing.

`loops` sets trip counts of WHILE loops: `nodes` ("<subgraph>:<node>" -> trips) overrides any
count, `default_trips` applies to loops whose count neither constants nor shapes fix. There is no
shipped default: a loop nobody can count is an error naming its node, since a guessed count
would be a latency nobody chose. Reports list every trip count used and where it came from.

`assign` says how a variant's accelerators share the nodes they claim: `order` (the default,
TFLite's: applied in order, the first claimer takes a node) or `cost` (each claimed run of nodes
goes to the cheapest target, the host included; `{policy: cost, objective: energy}` minimises
energy instead of latency; see `accelsim.simulation.placement`).

A sweep over an accelerator's key applies to the variants that contain that accelerator;
variants without it run once. `host.<key path>` sweeps the host. Every point is stored in
`<out>/points.sqlite` (accelsim.experiments.store) under a hash of (model bytes, resolved configs, options,
accelsim version), committed as soon as it finishes, so a re-run skips finished points and an
interrupted run loses nothing; results.json and results.csv are exports of it. A point whose
hardware cannot run the model (accelsim.core.feasibility) is stored as `infeasible` with its reason:
a result, kept like `ok` ones, counted apart from failures. Stored
points the experiment no longer has are counted as stale, and removed when asked
(`prune_cache`). A failing point is recorded with its error (and runs again on the next run).

`<out>` defaults to reports/<name>/. `<out>/experiment.json` records which experiment file the
report belongs to: when another file of the same name already owns reports/<name>/, the run
writes to reports/<name>-<hash of its path>/ instead and says so, rather than overwrite it.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import accelsim.hardware.config
import accelsim.hw_configs
from accelsim.core.pareto import DEFAULT_BEST, TRACES
from accelsim.core.schedule import SCHEDULES
from accelsim.delegates.spec import OBJECTIVES
from accelsim.experiments.hosts import NATIVE, read_native_host
from accelsim.experiments.keys import section_keys
from accelsim.experiments.spec import GENERATE_KEYS, MAX_POINTS, OPTION_KEYS, Experiment, Variant
from accelsim.experiments.stream_points import parse_streams
from accelsim.hardware.config import Assign, apply_overrides, load_hardware, load_system
from accelsim.hardware.config_yaml import Checker, ConfigError, read_document
from accelsim.hardware.sweeps import Range, did_you_mean, parse_limits, parse_range, parse_search
from accelsim.ops import OpModuleError, load_op_modules, resolve_spec, unresolved_op, using_ops
from accelsim.reports.report import RENDERERS
from accelsim.runtime.errors import ModelError
from accelsim.runtime.read import load_model
from accelsim.runtime.work import LoopTrips
from accelsim.workloads.architectures import ARCHITECTURES
from accelsim.workloads.builder import QUANTS
from accelsim.workloads.llm_file import read_llm

log = logging.getLogger(__name__)


# hw_configs/ at the repository top, installed as the package data `accelsim.hw_configs` (pyproject.toml).
SHIPPED_CONFIGS = Path(str(resources.files(accelsim.hw_configs)))


DEFAULT_HOST = accelsim.hw_configs.DEFAULT_HOST
# The keys each section accepts come from the one table `accelsim experiment --schema` prints.
_TOP_KEYS = section_keys()
_PARETO_KEYS = section_keys("pareto")
_LOOP_KEYS = section_keys("loops")
_VARIANT_KEYS = section_keys("variants[]")
_GENERATE_KEYS = section_keys("generate")
DEFAULT_NUMERICS_RUNS = 5


def shipped_configs() -> dict[str, Path]:
    """The shipped hardware configs by name (the file's stem), sorted."""
    return {path.stem: path for path in sorted(SHIPPED_CONFIGS.glob("*.yaml"))}


def resolve_config(value: str, base: Path) -> str:
    """A hardware config path: as written relative to `base`, or a shipped config's name.

    `native` is the shipped x86 host profile that matches this machine's CPU (`accelsim.experiments.hosts`).

    Raises:
        ConfigError: a bare name that is not a shipped config; lists them, with a did-you-mean. `native` on a CPU
            no shipped x86 profile describes.
    """
    text = str(value)
    if text == NATIVE:
        text = read_native_host()
    if "/" not in text and not text.endswith((".yaml", ".yml")):
        shipped = shipped_configs()
        nnapi = SHIPPED_CONFIGS / "nnapi" / f"{text}.yaml"  # a phone's NNAPI (kind nnapi): its drivers' files
        if text not in shipped and nnapi.is_file():
            return str(nnapi)
        if text not in shipped:
            close = difflib.get_close_matches(text, list(shipped), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError([f"{text!r} is not a shipped config (shipped: {', '.join(shipped)}){hint} "
                               "A path to a .yaml file works too."])
        return str(shipped[text])
    path = Path(text)
    return str(path if path.is_absolute() else (base / path))


class _Errors(Checker):
    """An experiment file's problems, located as a hardware config's are: 'file:line: key.path: what'."""

    add = Checker.error

    @property
    def items(self) -> list[tuple[int, str]]:
        return self.errors


def load_experiment(path: str | Path, *, check_kernels: bool = False) -> Experiment:
    """Read and check an experiment file, its hardware configs, sweeps, op modules and models.

    Every problem is collected first (unknown keys, bad values, unknown or broken configs,
    sweep values a config refuses, op modules that are missing or register nothing, missing or
    corrupt models) and raised together.

    Args:
        check_kernels: also require a kernel for every custom op of every model (`validate`); `run`
            leaves such a model to fail its own points, so the other models still run.

    Raises:
        ConfigError: every problem, one 'file:line: key: message' each, sorted by line.
    """
    source = str(path)
    doc, read_errors = read_document(source, "experiment settings")
    if doc is None:
        raise ConfigError([m for _, m in read_errors])
    errors = _Errors(source, doc.lines)
    errors.items.extend(read_errors)
    data = doc.data
    base = Path(source).resolve().parent
    if not isinstance(data, dict):
        errors.add((), f"expected a mapping of experiment settings, got {type(data).__name__}")
        raise ConfigError([m for _, m in sorted(errors.items)])
    if "kind" in data and not {"models", "variants"} & data.keys():
        raise ConfigError([f"{source}: this is a hardware config, not an experiment; pass it with --hw to "
                           "benchmark, or name it in an experiment's variants"])
    for key in data:
        if key not in _TOP_KEYS:
            hint = difflib.get_close_matches(str(key), _TOP_KEYS, n=1)
            errors.add((key,), "unknown key; " + (f"did you mean {hint[0]!r}?" if hint else
                                                    f"expected one of {', '.join(_TOP_KEYS)}"))
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not name or "/" in name:
        errors.add(("name",), f"expected a folder-safe name, got {name!r}")
    generate = _generate(errors, data["generate"]) if "generate" in data else None
    models = _paths(errors, data, "models", base, names=tuple(ARCHITECTURES) if generate is not None else ())
    host = data.get("host")
    host_path = ""
    if not isinstance(host, str):
        errors.add(("host",), f"expected a host config (a path or shipped name like {DEFAULT_HOST}), got {host!r}")
    else:
        try:
            host_path = resolve_config(host, base)
        except ConfigError as exc:
            errors.add(("host",), exc.errors[0])
    variants = _variants(errors, data.get("variants"), base)
    search = parse_search(data.get("search", {}), ("search",), errors.add)
    sweeps = _sweeps(errors, data.get("sweeps", {}), random=search.strategy == "random" or search.optimises)
    stream_sweeps = [(k.split(".", 1)[1], v) for k, v in sweeps if k.startswith("streams.")]
    sweeps = [(k, v) for k, v in sweeps if not k.startswith("streams.")]
    streams = parse_streams(errors, data["streams"], base, stream_sweeps) if "streams" in data else None
    if stream_sweeps and "streams" not in data:
        errors.add(("sweeps",), "streams.* keys are swept, but the experiment has no streams: block")
    limits_data, max_points = _point_limit(errors, data.get("limits", {}))
    limits = parse_limits(limits_data, ("limits",), errors.add)
    schedule = data.get("schedule", "sequential")
    if schedule not in SCHEDULES:
        errors.add(("schedule",), f"expected one of {', '.join(SCHEDULES)}, got {schedule!r}")
    runs = _numerics(errors, data.get("numerics", False))
    loops = _loops(errors, data.get("loops", {}))
    reports = data.get("reports")
    if reports is not None:
        if not isinstance(reports, list) or not reports or any(r not in RENDERERS for r in reports):
            errors.add(("reports",), f"expected a list drawn from {', '.join(RENDERERS)}, got {reports!r}")
        reports = tuple(reports) if isinstance(reports, list) else None
    traces, best, color = _trace_options(errors, data, [k for k, _ in sweeps])
    ops = _op_modules(errors, data.get("ops", []), base)
    experiment = Experiment(name=str(name), source=source, models=tuple(models), host=host_path,
                            variants=tuple(variants), sweeps=tuple(sweeps), schedule=schedule, numerics_runs=runs,
                            reports=reports, loops=loops, search=search, limits=limits, traces=traces, best=best,
                            pareto_color=color, ops=ops, generate=generate, streams=streams,
                            max_points=max_points)
    _check_configs(experiment, errors)
    _check_models(experiment, errors, check_kernels)
    if errors.items:
        raise ConfigError([m for _, m in sorted(errors.items)])
    return experiment


def _point_limit(errors: _Errors, limits: Any) -> tuple[Any, int]:
    """(the `limits` section without `points`, the most design points `run` accepts)."""
    if not isinstance(limits, dict) or "points" not in limits:
        return limits, MAX_POINTS
    rest = {k: v for k, v in limits.items() if k != "points"}
    value = limits["points"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        errors.add(("limits", "points"), f"expected a whole number >= 1, the most design points `run` accepts "
                   f"(default {MAX_POINTS:,}), got {value!r}")
        return rest, MAX_POINTS
    return rest, value


def _check_models(experiment: Experiment, errors: _Errors, check_kernels: bool) -> None:
    """Every model that exists parses (a corrupt file fails here with the ModelError `run` would give);
    with `check_kernels`, every custom op it uses has a kernel among the builtins and the experiment's ops."""
    try:
        loaded = load_op_modules(experiment.ops if check_kernels else ())
    except OpModuleError:
        return  # already reported by _op_modules
    with using_ops(loaded):
        for i, model in enumerate(experiment.models):
            if not Path(model).is_file():
                continue  # already reported by _paths (or an architecture name, with generate:)
            try:
                parsed = load_model(model)
                if experiment.generate is not None:  # an LLM file as LiteRT-LM reads it
                    read_llm(parsed, model)
            except ModelError as exc:
                errors.add(("models", i), f"ModelError: {' '.join(str(exc).split())}")
                continue
            problem = unresolved_op(parsed, model) if check_kernels else None
            if problem is not None:
                errors.add(("models", i), f"OpResolutionError: {problem}")


def _op_modules(errors: _Errors, value: Any, base: Path) -> tuple[str, ...]:
    """`ops`: custom-op modules (names, or .py paths relative to the file), each loaded once to check it."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        errors.add(("ops",), f"expected a list of op modules (installed names like accelsim.ops.mediapipe, or .py "
                   f"paths relative to this file), got {value!r}")
        return ()
    for i, spec in enumerate(value):
        try:
            load_op_modules([spec], base)
        except OpModuleError as exc:
            errors.add(("ops", i), str(exc))
    return tuple(dict.fromkeys(resolve_spec(v, base) for v in value))


def with_ops(experiment: Experiment, specs: Sequence[str]) -> Experiment:
    """`experiment` with more op modules (e.g. the command line's --ops; paths relative to the working folder)."""
    if not specs:
        return experiment
    return dataclasses.replace(experiment, ops=tuple(dict.fromkeys([*experiment.ops, *map(resolve_spec, specs)])))


def _paths(errors: _Errors, data: dict, key: str, base: Path, names: Sequence[str] = ()) -> list[str]:
    """The model paths, relative to the file; an entry of `names` (architectures, with `generate:`) stays a name."""
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        errors.add((key,), f"expected a non-empty list of .tflite paths, got {value!r}")
        return []
    out = []
    for i, v in enumerate(value):
        if v in names:
            out.append(v)
            continue
        p = Path(v) if Path(v).is_absolute() else base / v
        if not p.is_file():
            errors.add((key, i), f"no such model file: {p}")
        out.append(str(p))
    return out


def generate_value(key: str, value: Any) -> str | None:
    """Why `value` cannot be the generate block's `key` (None: it can)."""
    if key == "quant":
        return None if value in QUANTS else f"expected one of {', '.join(QUANTS)}, got {value!r}"
    low = 0 if key == "context" else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        return f"expected a whole number >= {max(low, 1)}, got {value!r}"
    return None


def _generate(errors: _Errors, value: Any) -> dict | None:
    """`generate:` checked: prefill and decode required, the rest defaulted (spec.GENERATE_KEYS)."""
    if not isinstance(value, dict):
        errors.add(("generate",), f"expected a mapping like {{prefill: 1024, decode: 256}}, got {value!r}")
        return None
    out = {}
    for key in value:
        if key not in _GENERATE_KEYS:
            errors.add(("generate", key), f"unknown key; expected one of {', '.join(_GENERATE_KEYS)}")
    for key, default in GENERATE_KEYS.items():
        if key not in value:
            if default is None:
                errors.add(("generate",), f"{key} is required (prompt and generated tokens)")
            out[key] = default
            continue
        why = generate_value(key, value[key])
        if why is not None:
            errors.add(("generate", key), why)
        out[key] = value[key]
    return out


def _variants(errors: _Errors, value: Any, base: Path) -> list[Variant]:
    if not isinstance(value, list) or not value:
        errors.add(("variants",), "expected a non-empty list of {name, accelerators} entries")
        return []
    out, seen = [], set()
    for i, v in enumerate(value):
        if not isinstance(v, dict):
            errors.add(("variants", i), f"expected a mapping with name and accelerators, got {v!r}")
            continue
        for key in v:
            if key not in _VARIANT_KEYS:
                errors.add(("variants", i, key), f"unknown key; expected one of {', '.join(_VARIANT_KEYS)}")
        name = v.get("name")
        if not isinstance(name, str) or not name:
            errors.add(("variants", i, "name"), f"expected a name, got {name!r}")
            continue
        if name in seen:
            errors.add(("variants", i, "name"), f"variant {name!r} is defined twice")
        seen.add(name)
        accels = v.get("accelerators", [])
        if not isinstance(accels, list) or not all(isinstance(a, str) for a in accels):
            errors.add(("variants", i, "accelerators"), f"expected a list of configs, got {accels!r}")
            accels = []
        paths = []
        for j, a in enumerate(accels):
            try:
                paths.append(resolve_config(a, base))
            except ConfigError as exc:
                errors.add(("variants", i, "accelerators", j), exc.errors[0])
        options = {}
        for key in OPTION_KEYS:
            if key in v:
                if isinstance(v[key], bool) or not isinstance(v[key], int) or v[key] < 0:
                    errors.add(("variants", i, key), f"expected a whole number >= 0, got {v[key]!r}")
                else:
                    options[key] = v[key]
        if "assign" in v:
            assign = _assign(errors, ("variants", i, "assign"), v["assign"])
            if assign is not None:
                options["assign"] = [assign.policy, assign.objective]
        out.append(Variant(name, tuple(paths), options))
    return out


def _assign(errors: _Errors, where: tuple, value: Any) -> Assign | None:
    """A variant's `assign`: a policy name, or {policy: ..., objective: ...}; None (and an error) if malformed."""
    written = value if isinstance(value, dict) else {"policy": value}
    unknown = [k for k in written if k not in ("policy", "objective")]
    for k in unknown:
        errors.add((*where, k), "unknown key; expected policy or objective")
    policy, objective = written.get("policy", "order"), written.get("objective", "latency")
    # read when checked: a placement policy may be added at run time
    policies = accelsim.hardware.config.ASSIGN_POLICIES
    if policy not in policies:
        errors.add(where if not isinstance(value, dict) else (*where, "policy"),
                   f"expected one of {', '.join(policies)} (or {{policy: cost, objective: latency|energy}}), "
                   f"got {policy!r}")
        return None
    if objective not in OBJECTIVES:
        errors.add((*where, "objective"), f"expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
        return None
    return None if unknown else Assign(policy, objective)


def _sweeps(errors: _Errors, value: Any, random: bool) -> list[tuple[str, tuple | Range]]:
    if not isinstance(value, dict):
        errors.add(("sweeps",), f"expected a mapping of key path -> list of values or range, got {value!r}")
        return []
    out: list[tuple[str, tuple | Range]] = []
    for key, written in value.items():
        if isinstance(written, dict) and key != "schedule":
            span = parse_range(written, ("sweeps", key), errors.add, random)
            if span is None:
                continue
            values = span.probes()
        elif not isinstance(written, list) or not written:
            errors.add(("sweeps", key), f"expected a non-empty list of values or a range like "
                       f"{{from: 8, to: 256, step: 8}}, got {written!r}")
            continue
        else:
            values = written
            span = None
        if key == "schedule" and any(v not in SCHEDULES for v in values):
            errors.add(("sweeps", key), f"schedules must be among {', '.join(SCHEDULES)}, got {values!r}")
        if key in OPTION_KEYS and any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
            errors.add(("sweeps", key), f"expected whole numbers >= 0, got {values!r}")
        if key not in (*OPTION_KEYS, "schedule") and "." not in str(key):
            errors.add(("sweeps", key), "expected '<accelerator or host>.<config key path>', "
                       f"{' or '.join(OPTION_KEYS)}, or schedule")
        out.append((str(key), span if span is not None else tuple(values)))
    return out


def _trace_options(errors: _Errors, data: dict, sweep_keys: Sequence[str]) -> tuple[str, int, str | None]:
    """`traces`, `best` and `pareto: {color: key}`, checked; a bad value is reported and its default used."""
    traces = data.get("traces", "pareto")
    if traces not in TRACES:
        close = difflib.get_close_matches(str(traces), TRACES, n=1)
        errors.add(("traces",), f"expected one of {', '.join(TRACES)}, got {traces!r}"
                   + (f"; did you mean {close[0]!r}?" if close else ""))
        traces = "pareto"
    best = data.get("best", DEFAULT_BEST)
    if isinstance(best, bool) or not isinstance(best, int) or best < 0:
        errors.add(("best",), f"expected a whole number >= 0 of fastest points to trace, got {best!r}")
        best = DEFAULT_BEST
    pareto = data.get("pareto", {})
    color = None
    if not isinstance(pareto, dict):
        errors.add(("pareto",), f"expected a mapping like {{color: <swept key>}}, got {pareto!r}")
        return traces, best, None
    for key in pareto:
        if key not in _PARETO_KEYS:
            errors.add(("pareto", key), did_you_mean(key, _PARETO_KEYS))
    if "color" in pareto:
        color = pareto["color"]
        if color not in sweep_keys:
            close = difflib.get_close_matches(str(color), sweep_keys, n=1)
            errors.add(("pareto", "color"), f"{color!r} is not a swept key; "
                       + (f"did you mean {close[0]!r}? " if close else "")
                       + f"swept keys: {', '.join(sweep_keys) or 'none (add sweeps, or leave pareto.color out)'}")
            color = None
    return traces, best, color


def _numerics(errors: _Errors, value: Any) -> int:
    if value is False or value is None:
        return 0
    if value is True:
        return DEFAULT_NUMERICS_RUNS
    if isinstance(value, dict) and set(value) <= {"runs"}:
        runs = value.get("runs", DEFAULT_NUMERICS_RUNS)
        if isinstance(runs, int) and not isinstance(runs, bool) and runs >= 1:
            return runs
    errors.add(("numerics",), f"expected true, false or {{runs: N}} with N >= 1, got {value!r}")
    return 0


def _trip_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _loops(errors: _Errors, value: Any) -> LoopTrips:
    """The `loops` section: {default_trips: N, nodes: {"<subgraph>:<node>": N}}."""
    if not isinstance(value, dict):
        errors.add(("loops",), f"expected a mapping with {' and/or '.join(_LOOP_KEYS)}, got {value!r}")
        return LoopTrips()
    for key in value:
        if key not in _LOOP_KEYS:
            errors.add(("loops", key), f"unknown key; expected one of {', '.join(_LOOP_KEYS)}")
    default = value.get("default_trips")
    if default is not None and not _trip_count(default):
        errors.add(("loops", "default_trips"), f"expected a whole number >= 0, got {default!r}")
        default = None
    nodes = value.get("nodes", {})
    if not isinstance(nodes, dict):
        errors.add(("loops", "nodes"), f"expected a mapping of '<subgraph>:<node>' -> trips, got {nodes!r}")
        nodes = {}
    checked = {}
    for key, trips in nodes.items():
        parts = str(key).split(":")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            errors.add(("loops", "nodes", key), "expected a key '<subgraph>:<node>' such as '0:1'")
        elif not _trip_count(trips):
            errors.add(("loops", "nodes", key), f"expected a whole number >= 0, got {trips!r}")
        else:
            checked[str(key)] = trips
    return LoopTrips(default, checked)


def _check_configs(experiment: Experiment, errors: _Errors) -> None:
    """Every variant's system loads, and every sweep names an accelerator or the host that exists.

    A broken config is reported once, under the first key that names it.
    """
    reported: set[str] = set()

    def report(path: tuple, exc: ConfigError) -> None:
        for message in exc.errors:
            if message not in reported:
                reported.add(message)
                errors.add(path, message)

    if not experiment.host:  # already reported; the accelerators are still checked, each alone
        for i, v in enumerate(experiment.variants):
            for accelerator in v.accelerators:
                try:
                    load_hardware(accelerator)
                except ConfigError as exc:
                    report(("variants", i), exc)
        return
    try:
        load_system(experiment.host, (), loaded=experiment.configs)  # the host alone: its problems under host:
    except ConfigError as exc:
        report(("host",), exc)
    systems = {}
    unreadable = False
    for i, v in enumerate(experiment.variants):
        try:
            systems[v.name] = load_system(experiment.host, v.accelerators, loaded=experiment.configs)
        except ConfigError as exc:
            report(("variants", i), exc)
            unreadable = True
    names = {a.name for system in systems.values() for a in system.accelerators}
    for key, values in experiment.sweeps:
        head = key.split(".", 1)[0]
        if head == "generate":
            rest = key.split(".", 1)[1]
            if experiment.generate is None:
                errors.add(("sweeps", key), "sweeps a generate key, but the experiment has no generate block")
            elif rest not in GENERATE_KEYS:
                errors.add(("sweeps", key), f"unknown generate key; expected one of {', '.join(GENERATE_KEYS)}")
            else:
                for value in (values.probes() if isinstance(values, Range) else values):
                    why = generate_value(rest, value)
                    if why is not None:
                        errors.add(("sweeps", key), f"value {value!r}: {why}")
            continue
        if "." in key and head != "host" and head not in names:
            if not unreadable:  # a config that failed to load may be the one with that name
                close = difflib.get_close_matches(head, [*sorted(names), "host"], n=1)
                errors.add(("sweeps", key), f"no variant has an accelerator named {head!r}; "
                           + (f"did you mean {close[0]!r}? " if close else "")
                           + f"accelerators: {', '.join(sorted(names)) or 'none'}")
            continue
        if "." not in key:
            continue
        # Each value must be one the config accepts, checked once per target config.
        rest = key.split(".", 1)[1]
        targets = {}
        for system in systems.values():
            for c in (system.host, *system.accelerators):
                if (head == "host" and c is system.host) or c.name == head:
                    targets.setdefault(c.source, c)
        for config in targets.values():
            for value in (values.probes() if isinstance(values, Range) else values):
                try:
                    apply_overrides(config, {rest: value})
                except ConfigError as exc:
                    detail = exc.errors[0].split(": ", 2)[-1] if exc.errors else str(exc)
                    if detail.startswith("unknown key"):  # the key path is wrong, whatever the value
                        errors.add(("sweeps", key), detail)
                        break
                    errors.add(("sweeps", key), f"value {value!r}: {detail}")
