"""Experiments: a YAML grid of design points, cached, run in parallel, turned into a report.

Every key, with its type, default and an example: `accelsim experiment --schema` (accelsim.experiment_keys).
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
  edgetpu_usb.compute.rows: {from: 8, to: 256, step: 8}     # or a range (accelsim.search)
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
latency x MAC units, latency x on-chip bytes; accelsim.pareto) and the `best` fastest: their
Gantt charts, Chrome traces and per-node tables are written, and the report shows them in
detail. Which points those are is known only when every point has run, so the store keeps every
point without its per-node lists (accelsim.results.DETAIL_KEYS) and the report re-simulates the
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
energy instead of latency; see `accelsim.system.cost_aware_interpreter`).

A sweep over an accelerator's key applies to the variants that contain that accelerator;
variants without it run once. `host.<key path>` sweeps the host. Every point is stored in
`<out>/points.sqlite` (accelsim.store) under a hash of (model bytes, resolved configs, options,
accelsim version), committed as soon as it finishes, so a re-run skips finished points and an
interrupted run loses nothing; results.json and results.csv are exports of it. A point whose
hardware cannot run the model (accelsim.feasibility) is stored as `infeasible` with its reason:
a result, kept like `ok` ones, counted apart from failures. A folder with the
per-file cache of earlier versions (`<out>/cache/<id>.json`) is migrated into the store. Stored
points the experiment no longer has are counted as stale, and removed when asked
(`prune_cache`). A failing point is recorded with its error (and runs again on the next run).

`<out>` defaults to reports/<name>/. `<out>/experiment.json` records which experiment file the
report belongs to: when another file of the same name already owns reports/<name>/, the run
writes to reports/<name>-<hash of its path>/ instead and says so, rather than overwrite it.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import dataclasses
import difflib
import hashlib
import io
import itertools
import json
import logging
import os
import pickle
import signal
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import accelsim.hw_configs
from accelsim.config import (
    ASSIGN_POLICIES,
    Assign,
    Checker,
    ConfigError,
    HardwareConfig,
    System,
    apply_overrides,
    load_hardware,
    load_system,
    read_document,
)
from accelsim.delegates.spec import OBJECTIVES
from accelsim.experiment_keys import section_keys
from accelsim.files import write_atomic
from accelsim.pareto import DEFAULT_BEST, TRACES
from accelsim.record import PointResult
from accelsim.runtime.errors import AccelsimError
from accelsim.runtime.work import LoopTrips
from accelsim.search import (
    Limit,
    Range,
    Search,
    did_you_mean,
    parse_limits,
    parse_range,
    parse_search,
    sampled_combinations,
)
from accelsim.sim import SCHEDULES

if TYPE_CHECKING:  # the simulator is imported where points run, not to load an experiment
    from accelsim.analysis import Analysis

log = logging.getLogger(__name__)

# hw_configs/ at the repository top, installed as the package data `accelsim.hw_configs` (pyproject.toml).
SHIPPED_CONFIGS = Path(str(resources.files(accelsim.hw_configs)))
DEFAULT_HOST = accelsim.hw_configs.DEFAULT_HOST
OPTION_KEYS = ("max_delegated_partitions", "min_nodes_per_partition")
# The keys each section accepts come from the one table `accelsim experiment --schema` prints.
_TOP_KEYS = section_keys()
_PARETO_KEYS = section_keys("pareto")
_LOOP_KEYS = section_keys("loops")
_VARIANT_KEYS = section_keys("variants[]")
DEFAULT_NUMERICS_RUNS = 5


@dataclass(frozen=True)
class Variant:
    name: str
    accelerators: tuple[str, ...]  # config file paths, applied in order
    options: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Experiment:
    name: str
    source: str
    models: tuple[str, ...]
    host: str
    variants: tuple[Variant, ...]
    sweeps: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    schedule: str = "sequential"
    numerics_runs: int = 0
    reports: tuple[str, ...] | None = None  # report formats (accelsim.report.RENDERERS); None: all
    loops: LoopTrips = field(default_factory=LoopTrips)
    search: Search = Search()
    limits: tuple[Limit, ...] = ()
    traces: str = "pareto"  # accelsim.pareto.TRACES
    best: int = DEFAULT_BEST  # with traces pareto: the fastest `best` points are traced too
    pareto_color: str | None = None  # the swept key colouring the Pareto plot; None: the first swept key
    ops: tuple[str, ...] = ()  # custom-op modules (accelsim.ops.resolve_spec: names, or absolute .py paths)


@dataclass(frozen=True)
class DesignPoint:
    """One run: a model on one variant with one value of every sweep that applies to it."""

    id: str
    model: str
    variant: str
    host: str
    accelerators: tuple[str, ...]
    sweep: Mapping[str, Any]  # key path -> value as written
    schedule: str
    numerics_runs: int
    loops: LoopTrips = field(default_factory=LoopTrips)
    ops: tuple[str, ...] = ()  # the experiment's custom-op modules, loaded where the point runs
    # The resolved system, as design_points made it: running the point need not re-read the configs.
    system: System | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        swept = ", ".join(f"{k}={v}" for k, v in self.sweep.items())
        return f"{Path(self.model).stem} | {self.variant}" + (f" | {swept}" if swept else "")


# -- loading ----------------------------------------------------------------------------------


def shipped_configs() -> dict[str, Path]:
    """The shipped hardware configs by name (the file's stem), sorted."""
    return {path.stem: path for path in sorted(SHIPPED_CONFIGS.glob("*.yaml"))}


def resolve_config(value: str, base: Path) -> str:
    """A hardware config path: as written relative to `base`, or a shipped config's name.

    Raises:
        ConfigError: a bare name that is not a shipped config; lists them, with a did-you-mean.
    """
    text = str(value)
    if "/" not in text and not text.endswith((".yaml", ".yml")):
        shipped = shipped_configs()
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
    models = _paths(errors, data, "models", base)
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
    sweeps = _sweeps(errors, data.get("sweeps", {}), random=search.strategy == "random")
    limits = parse_limits(data.get("limits", {}), ("limits",), errors.add)
    schedule = data.get("schedule", "sequential")
    if schedule not in SCHEDULES:
        errors.add(("schedule",), f"expected one of {', '.join(SCHEDULES)}, got {schedule!r}")
    runs = _numerics(errors, data.get("numerics", False))
    loops = _loops(errors, data.get("loops", {}))
    reports = data.get("reports")
    if reports is not None:
        from accelsim.report import FORMATS  # the renderers' own table (imported here: it brings matplotlib)

        if not isinstance(reports, list) or not reports or any(r not in FORMATS for r in reports):
            errors.add(("reports",), f"expected a list drawn from {', '.join(FORMATS)}, got {reports!r}")
        reports = tuple(reports) if isinstance(reports, list) else None
    traces, best, color = _trace_options(errors, data, [k for k, _ in sweeps])
    ops = _op_modules(errors, data.get("ops", []), base)
    experiment = Experiment(str(name), source, tuple(models), host_path, tuple(variants), tuple(sweeps), schedule,
                            runs, reports, loops, search, limits, traces, best, color, ops)
    _check_configs(experiment, errors)
    _check_models(experiment, errors, check_kernels)
    if errors.items:
        raise ConfigError([m for _, m in sorted(errors.items)])
    return experiment


def _check_models(experiment: Experiment, errors: _Errors, check_kernels: bool) -> None:
    """Every model that exists parses (a corrupt file fails here with the ModelError `run` would give);
    with `check_kernels`, every custom op it uses has a kernel among the builtins and the experiment's ops."""
    from accelsim.ops import OpModuleError, load_op_modules, unresolved_op, using_ops
    from accelsim.runtime.errors import ModelError
    from accelsim.runtime.read import load_model

    try:
        loaded = load_op_modules(experiment.ops if check_kernels else ())
    except OpModuleError:
        return  # already reported by _op_modules
    with using_ops(loaded):
        for i, model in enumerate(experiment.models):
            if not Path(model).is_file():
                continue  # already reported by _paths
            try:
                parsed = load_model(model)
            except ModelError as exc:
                errors.add(("models", i), f"ModelError: {' '.join(str(exc).split())}")
                continue
            problem = unresolved_op(parsed, model) if check_kernels else None
            if problem is not None:
                errors.add(("models", i), f"OpResolutionError: {problem}")


def _op_modules(errors: _Errors, value: Any, base: Path) -> tuple[str, ...]:
    """`ops`: custom-op modules (names, or .py paths relative to the file), each loaded once to check it."""
    from accelsim.ops import OpModuleError, load_op_modules, resolve_spec

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
    from accelsim.ops import resolve_spec

    if not specs:
        return experiment
    return dataclasses.replace(experiment, ops=tuple(dict.fromkeys([*experiment.ops, *map(resolve_spec, specs)])))


def _paths(errors: _Errors, data: dict, key: str, base: Path) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        errors.add((key,), f"expected a non-empty list of .tflite paths, got {value!r}")
        return []
    out = []
    for i, v in enumerate(value):
        p = Path(v) if Path(v).is_absolute() else base / v
        if not p.is_file():
            errors.add((key, i), f"no such model file: {p}")
        out.append(str(p))
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
    if policy not in ASSIGN_POLICIES:
        errors.add(where if not isinstance(value, dict) else (*where, "policy"),
                   f"expected one of {', '.join(ASSIGN_POLICIES)} (or {{policy: cost, objective: latency|energy}}), "
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
        load_system(experiment.host, ())  # the host alone, so its problems are reported under host:
    except ConfigError as exc:
        report(("host",), exc)
    systems = {}
    unreadable = False
    for i, v in enumerate(experiment.variants):
        try:
            systems[v.name] = load_system(experiment.host, v.accelerators)
        except ConfigError as exc:
            report(("variants", i), exc)
            unreadable = True
    names = {a.name for system in systems.values() for a in system.accelerators}
    for key, values in experiment.sweeps:
        head = key.split(".", 1)[0]
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


# -- design points ------------------------------------------------------------------------------


def _applies(key: str, system: System) -> bool:
    if key == "schedule":
        return True
    if key in OPTION_KEYS:
        return bool(system.accelerators)
    head = key.split(".", 1)[0]
    return head == "host" or any(a.name == head for a in system.accelerators)


def resolved_system(point: DesignPoint, options: Mapping[str, int] | None = None, base: System | None = None) -> System:
    """The point's host and accelerators with its sweep values and options applied.

    Args:
        base: the point's system as its files give it, when the caller has it (reading the
            YAML files is most of the cost of resolving a point).
    """
    system = base if base is not None else load_system(point.host, point.accelerators)
    opts = dict(options or {})
    assign = Assign(*opts.pop("assign")) if "assign" in opts else system.assign  # a system's key, not a partition's
    by_target: dict[str, dict[str, Any]] = {}
    for key, value in point.sweep.items():
        if key in OPTION_KEYS:
            opts[key] = value
        elif key != "schedule":
            head, rest = key.split(".", 1)
            by_target.setdefault(head, {})[rest] = value
    host = apply_overrides(system.host, by_target["host"]) if "host" in by_target else system.host
    accels = []
    for a in system.accelerators:
        changes = dict(by_target.get(a.name, {}))
        changes.update({f"partition.{k}": v for k, v in opts.items()})
        accels.append(apply_overrides(a, changes) if changes else a)
    return System(host, tuple(accels), assign)


def design_points(experiment: Experiment) -> list[DesignPoint]:
    """Models x variants x the sweep combinations that apply to each variant, within the limits.

    The combinations are the cross product of the sweeps (grid), or the seeded draws of a
    random search, each variant taking the keys that apply to it (repeats run once).
    """
    return _design_points(experiment)[0]


def _sweep_combinations(experiment: Experiment, keys: Sequence[str]) -> list[dict[str, Any]]:
    """The variant's combinations of the sweep keys `keys`, in order, without repeats."""
    sweeps = [(k, v) for k, v in experiment.sweeps if k in keys]
    if experiment.search.strategy == "random":
        drawn = sampled_combinations(experiment.sweeps, experiment.search)
        unique: dict[str, dict[str, Any]] = {}
        for d in drawn:
            unique.setdefault(json.dumps([str(d[k]) for k, _ in sweeps]), {k: d[k] for k, _ in sweeps})
        return list(unique.values())
    grids = [v.grid() if isinstance(v, Range) else v for _, v in sweeps]
    return [dict(zip([k for k, _ in sweeps], combo)) for combo in itertools.product(*grids)]


def _design_points(experiment: Experiment) -> tuple[list[DesignPoint], int]:
    """(the design points, how many the limits dropped)."""
    from accelsim.ops import load_op_modules

    points, dropped = [], 0
    ops_digest = load_op_modules(experiment.ops).digest() if experiment.ops else ""
    for model in experiment.models:
        model_hash = hashlib.sha256(Path(model).read_bytes()).hexdigest()
        for variant in experiment.variants:
            base_system = load_system(experiment.host, variant.accelerators)
            keys = [k for k, _ in experiment.sweeps if _applies(k, base_system)]
            for sweep in _sweep_combinations(experiment, keys):
                schedule = sweep.get("schedule", experiment.schedule)
                draft = DesignPoint("", model, variant.name, experiment.host, variant.accelerators, sweep, schedule,
                                    experiment.numerics_runs, experiment.loops, experiment.ops)
                system = resolved_system(draft, variant.options, base_system)
                if not all(limit.allows(system) for limit in experiment.limits):
                    dropped += 1
                    continue
                facts = {"model": model_hash, "system": system_identity(system),
                         "variant": variant.name, "sweep": {k: str(v) for k, v in sweep.items()},
                         "options": dict(variant.options), "schedule": schedule,
                         "numerics": experiment.numerics_runs, "version": accelsim.__version__}
                if experiment.loops != LoopTrips():  # only then: the ids of loop-free experiments stay as they were
                    facts["loops"] = [experiment.loops.default_trips, dict(experiment.loops.nodes)]
                if ops_digest:  # likewise: a kernel's code decides its node's work, so its source is identity
                    facts["ops"] = ops_digest
                identity = json.dumps(facts, sort_keys=True, default=str)
                point_id = hashlib.sha256(identity.encode()).hexdigest()[:16]
                points.append(dataclasses.replace(draft, id=point_id, system=system))
    return points, dropped


def system_identity(system: System) -> dict[str, Any]:
    """What a point id hashes of its system: each config's kind and YAML data after the overrides.

    That is the input every config of a design point is resolved from (design points come from
    files: `load_system` then `apply_overrides`), plain data that JSON writes the same way in every
    process and that holds no file location, so a cache survives moving the checkout. repr() of
    the resolved system did neither: a claim's dtypes are a frozenset, whose order follows
    Python's per-process string hashing, and a kind record printed its functions' addresses.
    """
    def one(c: HardwareConfig) -> dict[str, Any]:
        return {"kind": c.kind, "yaml": c.document.data}

    return {"host": one(system.host), "accelerators": [one(a) for a in system.accelerators],
            "assign": dataclasses.asdict(system.assign)}


# -- running ------------------------------------------------------------------------------------


def run_point(point: DesignPoint, options: Mapping[str, int]) -> PointResult:
    """Simulate one design point (and check its numerics when asked); never raises for a bad point."""
    try:
        system = point.system if point.system is not None else resolved_system(point, options)
    except (AccelsimError, ValueError, OSError) as exc:
        return point_error(point, exc)
    return simulate_point(point, system, point.model)


def run_packed(model: str, packed: bytes) -> list[PointResult]:
    """In a pool worker: the records of a batch of points sharing `model` (a path), packed by `pack_items`."""
    return list(point_records(model, pickle.loads(packed)))


def _read_only(items: dict) -> MappingProxyType:
    return MappingProxyType(items)


class _ItemPickler(pickle.Pickler):
    """Pickles Systems too: a config's read-only mappings (mappingproxy, which pickle refuses) go as dicts."""

    def reducer_override(self, obj):
        if type(obj) is MappingProxyType:
            return _read_only, (dict(obj),)
        return NotImplemented


def pack_items(items: Sequence[tuple[DesignPoint, System | PointResult]]) -> bytes:
    """Points with their Systems (or error records) as bytes for a worker: it need not re-read the configs.

    Resolving a point's System re-checks its configs (milliseconds a point, more than costing
    it); unpickling a resolved one takes a tenth of that.
    """
    buffer = io.BytesIO()
    _ItemPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(list(items))
    return buffer.getvalue()


def point_records(model: Any, items: Iterable[tuple[DesignPoint, System | PointResult]]) -> Iterator[PointResult]:
    """The records of points sharing `model` (its path, bytes or parsed Model), in order; never raises for a bad point.

    An item is a point and its System, or the error record of a point whose System could not be
    built (passed on as it is). The model is parsed once, and points whose claims, partition
    options and loops agree (`accelsim.analysis.analysis_facts`) share one analysis: each only
    re-runs the costs and the schedule.
    """
    from accelsim.analysis import analysis_facts, analyze
    from accelsim.ops import require_kernels

    analyses: dict[Hashable, Analysis | Exception] = {}
    parsed: list = []  # the parsed model, once a point needed it

    def analysis_for(point: DesignPoint, system: System) -> Analysis:
        facts = analysis_facts(system, point.schedule, point.loops)
        if facts not in analyses:
            try:
                if not parsed:  # an unresolved custom op fails every point alike, naming the model file
                    parsed.append(require_kernels(model, point.model))
                analyses[facts] = analyze(parsed[0], system, point.schedule, point.loops)
            except (AccelsimError, ValueError, OSError) as exc:
                analyses[facts] = exc  # every point of this analysis fails alike: analysed once
        found = analyses[facts]
        if isinstance(found, Exception):
            raise found
        return found

    for point, system in items:
        yield system if isinstance(system, dict) else simulate_point(point, system, model, analysis_for)


def simulate_point(point: DesignPoint, system: System, model: Any,
                   analysis_for: Callable[[DesignPoint, System], Analysis] | None = None) -> PointResult:
    """The record of `point` run on `system`; `model` is its path, bytes or parsed Model (never raises for a bad point).

    The record names `point.model` whatever `model` is, so a worker that got the model's bytes
    writes the same record as one that read the file.

    Args:
        analysis_for: the shared analysis of a point (`point_records` keeps them); default: analyse afresh.
    """
    from accelsim.analysis import analyze
    from accelsim.diff import inference_diff
    from accelsim.ops import require_kernels, using_ops
    from accelsim.results import record
    from accelsim.system import simulate_analysis

    try:
        with using_ops(point.ops):  # in this process or a worker: the experiment's custom kernels resolve
            analysis = (analysis_for(point, system) if analysis_for is not None
                        else analyze(require_kernels(model, point.model), system, point.schedule, point.loops))
            sim = simulate_analysis(analysis, system, point.schedule)
            diff = inference_diff(model, system, point.numerics_runs) if point.numerics_runs else None
        return record(sim, point_id=point.id, model=point.model, variant=point.variant, sweep=dict(point.sweep),
                      diff=diff)
    except (AccelsimError, ValueError, OSError) as exc:
        return point_error(point, exc)


def point_error(point: DesignPoint, exc: BaseException) -> PointResult:
    """The record of a point that failed with `exc` (an `Infeasible` one is infeasible, not failed)."""
    from accelsim.feasibility import Infeasible
    from accelsim.results import error_record, infeasible_record

    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, Infeasible):
        return infeasible_record(point_id=point.id, model=point.model, variant=point.variant,
                                 sweep=dict(point.sweep), host=Path(point.host).stem,
                                 accelerators=[Path(a).stem for a in point.accelerators], schedule=point.schedule,
                                 reason=exc.reason, message=message)
    return error_record(point_id=point.id, model=point.model, variant=point.variant, sweep=dict(point.sweep),
                        host=Path(point.host).stem, accelerators=[Path(a).stem for a in point.accelerators],
                        schedule=point.schedule, error=f"{type(exc).__name__}: {message}")


class WorkersLost(AccelsimError):
    """The executor lost its workers for good (a pool process died, or Dask gave up on a task)."""


class Executor(Protocol):
    """Runs design points: the process pool by default, a Dask cluster with accelsim.dask_executor.

    `run` yields the records of finished points in batches, in the order they finish; closing
    the generator early cancels what has not started. The caller (the only writer of the results
    store) commits each batch before asking for the next.
    """

    def run(self, points: Sequence[DesignPoint], options: Mapping[str, Mapping[str, int]]) -> Iterator[list[dict]]:
        """Records of `points` (options by variant name), a batch at a time.

        Raises:
            WorkersLost: the workers died and the executor will not retry.
        """
        ...


class SerialExecutor:
    """Runs each point in this process, one at a time (jobs = 1); points of one model share its analyses."""

    def run(self, points, options):
        for model, group in itertools.groupby(points, key=lambda p: p.model):
            items = []
            for p in group:
                try:
                    items.append((p, p.system if p.system is not None else resolved_system(p, options[p.variant])))
                except (AccelsimError, ValueError, OSError) as exc:
                    items.append((p, point_error(p, exc)))
            for rec in point_records(model, items):
                yield [rec]


# A pool batch is at most this many points of one analysis: big enough that building the analysis
# (parse, delegate, size every node) is small next to costing the points, small enough that a
# batch's records reach the store while the run goes on.
POOL_BATCH = 256


class PoolExecutor:
    """A process pool of `jobs` workers, with about twice that many batches submitted at a time.

    A batch holds points of one model that share an analysis (`accelsim.analysis.analysis_key`),
    with their resolved Systems (`pack_items`), so a worker analyses the model once per batch and
    only costs each point.
    """

    def __init__(self, jobs: int):
        self.jobs = jobs

    def run(self, points, options):
        pool = concurrent.futures.ProcessPoolExecutor(max_workers=self.jobs, initializer=_default_sigterm)
        queue = iter(pool_batches(points, options, self.jobs))
        pending: dict[concurrent.futures.Future, str] = {}
        cancel = True
        try:
            while True:
                # A bounded window: a finished batch is saved before many more are started.
                for model, items in itertools.islice(queue, max(0, 2 * self.jobs - len(pending))):
                    pending[pool.submit(run_packed, model, pack_items(items))] = items[0][0].id
                if not pending:
                    break
                ready, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in sorted(ready, key=lambda f: pending[f]):
                    del pending[future]
                    try:
                        records = future.result()
                    except concurrent.futures.process.BrokenProcessPool as exc:
                        raise WorkersLost(f"a worker process died ({exc})") from exc
                    yield records
            cancel = False
        finally:
            pool.shutdown(wait=not cancel, cancel_futures=cancel)


def _default_sigterm() -> None:
    """In a pool worker: die on SIGTERM again.

    A forked worker inherits the CLI's SIGTERM handler (which only sets a stop flag); the pool
    terminates its workers with SIGTERM when one of them dies, and a worker that ignored it
    would block the run's exit while writing a batch's records into a pipe nobody reads.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def pool_batches(points: Sequence[DesignPoint], options: Mapping[str, Mapping[str, int]], jobs: int,
                 ) -> list[tuple[str, list[tuple[DesignPoint, System | PointResult]]]]:
    """(model, items) batches: points of one model and one analysis, at most POOL_BATCH, about 2 per worker.

    An item is a point and its System, or the error record of a point whose System could not be
    built (such a point goes alone). Groups keep the order in which their first point comes.
    """
    from accelsim.analysis import analysis_key, model_digest

    digests = {m: model_digest(m) for m in dict.fromkeys(p.model for p in points) if Path(m).is_file()}
    groups: dict[Hashable, list[tuple[DesignPoint, System | PointResult]]] = {}
    for p in points:
        try:
            system = p.system if p.system is not None else resolved_system(p, options[p.variant])
            key: Hashable = (p.model, analysis_key(digests.get(p.model, ""), system, p.schedule, p.loops))
            item = (p, system)
        except (AccelsimError, ValueError, OSError) as exc:
            key, item = ("point", p.id), (p, point_error(p, exc))
        groups.setdefault(key, []).append(item)
    batches = []
    for group in groups.values():
        size = max(1, min(POOL_BATCH, -(-len(group) // (2 * jobs))))
        batches.extend((group[0][0].model, group[i:i + size]) for i in range(0, len(group), size))
    return batches


@dataclass
class RunOutcome:
    records: list[dict]
    missing: list[DesignPoint]
    cached: int
    computed: int
    failed: int  # points whose status is "error"
    outputs: dict[str, Path] = field(default_factory=dict)
    out_dir: Path | None = None
    stale: int = 0  # stored points this experiment no longer has
    pruned: bool = False  # whether those entries were removed
    warnings: tuple[str, ...] = ()
    migrated: int = 0  # points moved from an old per-file cache <out>/cache/ into the store
    store: Path | None = None  # the results store, <out>/points.sqlite
    dropped: int = 0  # design points the experiment's limits left out (infeasible by limits)
    infeasible: int = 0  # stored points whose hardware cannot run the model (status "infeasible")


OWNER_FILE = "experiment.json"


def _owner(folder: Path) -> str | None:
    """The experiment file whose report `folder` holds, if it says so."""
    try:
        data = json.loads((folder / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("source") if isinstance(data, dict) else None


def report_folder(experiment: Experiment, out_dir: str | Path | None = None) -> tuple[Path, str | None]:
    """Where a run of `experiment` writes, and a warning when that folder holds another experiment file's report.

    Without `out_dir`, reports/<name>/ — unless another file named the same owns it; then
    reports/<name>-<8 hex digits of this file's path>/, so neither report overwrites the other.
    """
    source = str(Path(experiment.source).resolve())
    if out_dir is not None:
        folder = Path(out_dir)
        owner = _owner(folder)
        if owner is not None and owner != source:
            return folder, f"{folder} held the report of {owner}; it now holds the report of {source}"
        return folder, None
    folder = Path("reports") / experiment.name
    owner = _owner(folder)
    if owner is None or owner == source:
        return folder, None
    own = folder.with_name(f"{experiment.name}-{hashlib.sha256(source.encode()).hexdigest()[:8]}")
    return own, (f"{folder} holds the report of {owner}, another experiment named {experiment.name!r}; this "
                 f"report goes to {own} (rename one of the experiments, or pass --out)")


def run_experiment(experiment: Experiment, out_dir: str | Path | None = None, *, jobs: int | None = None,
                   executor: Executor | None = None, use_cache: bool = True, prune_cache: bool = False,
                   progress: Callable[[int, int, str], None] | None = None,
                   should_stop: Callable[[], bool] = lambda: False) -> RunOutcome:
    """Run every design point not already in the results store, then write the report from the store.

    Each finished point is committed to `<out>/points.sqlite` (accelsim.store) before more are
    asked for; an old per-file cache `<out>/cache/` is migrated into it first (`migrated`).

    An interrupt (KeyboardInterrupt, or `should_stop()` turning true — a signal handler's flag,
    which survives signals that land where Python swallows exceptions, such as finalizers)
    stops the run after saving what finished: the report is still written and lists the
    missing points, then KeyboardInterrupt propagates.

    The report goes to report_folder(experiment, out_dir); its warning, if any, is in the
    outcome's `warnings`. Stored points the experiment no longer has are counted in `stale`,
    and removed first with `prune_cache`.

    Raises:
        KeyboardInterrupt: after the report of what finished is written.
        AccelsimError: the workers died (WorkersLost), after the same.
    """
    from accelsim.store import ResultStore

    out, warning = report_folder(experiment, out_dir)
    points, dropped = _design_points(experiment)
    write_atomic(out / OWNER_FILE, json.dumps({"name": experiment.name,
                                                "source": str(Path(experiment.source).resolve())}, indent=2) + "\n")
    with ResultStore(out) as store:
        migrated = store.migrate_legacy(out)
        ids = {p.id for p in points}
        stale = sorted(store.ids() - ids)
        if prune_cache:
            store.delete(stale)
        cached = store.ids(ok_only=True) & ids if use_cache else set()
        todo = [p for p in points if p.id not in cached]
        jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        pool = executor if executor is not None else (SerialExecutor() if jobs <= 1 or len(todo) <= 1
                                                      else PoolExecutor(min(jobs, len(todo))))
        finished = len(cached)
        ran: set[str] = set()
        interrupted: BaseException | None = None
        labels = {p.id: p.label for p in todo}
        by_id = {p.id: p for p in todo}
        if progress is not None:
            progress(finished, len(points), "cached" if cached else "starting")
        batches = pool.run(todo, {v.name: dict(v.options) for v in experiment.variants})
        try:
            if should_stop():
                raise KeyboardInterrupt
            for batch in batches:
                # Named as ran before the commit, so that an interrupt landing right after the commit still
                # reports the batch (records() returns only what the store holds); committed first, so an
                # interrupt after this loses nothing.
                ran.update(rec["id"] for rec in batch)
                store.put_many([_stored(rec, by_id[rec["id"]], experiment.traces) for rec in batch])
                for rec in batch:
                    finished += 1
                    if progress is not None:
                        progress(finished, len(points), labels[rec["id"]])
                if should_stop():
                    raise KeyboardInterrupt
        except (KeyboardInterrupt, WorkersLost) as exc:
            interrupted = exc
        finally:
            batches.close()  # cancels what has not started
        stored = store.records(cached | ran)
    outcome = dataclasses.replace(
        _report(experiment, out, points, stored, len(cached), migrated, len(stale), prune_cache, warning),
        dropped=dropped)
    if isinstance(interrupted, KeyboardInterrupt):
        raise interrupted
    if interrupted is not None:
        raise AccelsimError(f"{interrupted}; {len(outcome.missing)} design points are missing from {out}; "
                            "run again to complete them") from interrupted
    return outcome


def _stored(rec: PointResult, point: DesignPoint, traces: str) -> PointResult:
    """What the store keeps of a finished point: its record with the area proxies of its system, and
    without the per-node lists unless every point is traced (the report re-simulates the points it traces)."""
    from accelsim.results import area, summary

    kept = rec if traces == "all" else summary(rec)
    return {**kept, **area(point.system)} if point.system is not None else kept


def _with_details(experiment: Experiment, points: Sequence[DesignPoint], records: list[PointResult],
                  traced: set[str]) -> list[PointResult]:
    """`records` with the traced ones that were stored without details re-simulated (same numbers, with details)."""
    from accelsim.results import DETAIL_KEYS

    by_id = {p.id: p for p in points}
    options = {v.name: dict(v.options) for v in experiment.variants}
    out = []
    for rec in records:
        if rec["id"] in traced and rec["status"] == "ok" and "events" not in rec:
            point = by_id[rec["id"]]
            again = run_point(point, options[point.variant])
            if again["status"] == "ok":
                rec = {**rec, **{k: again[k] for k in DETAIL_KEYS}}
        out.append(rec)
    return out


def _report(experiment: Experiment, out: Path, points: Sequence[DesignPoint], stored: Mapping[str, dict],
            n_cached: int, migrated: int, stale: int, pruned: bool, warning: str | None) -> RunOutcome:
    """Write the report of the stored records of `points` (in the experiment's order) and sum the run up."""
    from accelsim.pareto import traced_ids
    from accelsim.report import FORMATS, write_report
    from accelsim.store import STORE_FILE

    records = [stored[p.id] for p in points if p.id in stored]
    _fill_speedups(records)
    traced = traced_ids(records, experiment.traces, experiment.best)
    if traced is not None:
        records = _with_details(experiment, points, records, set(traced))
    missing = [p for p in points if p.id not in stored]
    from accelsim.advice import best_point_sensitivity

    context = {**report_context(experiment, len(points)), "sensitivity": best_point_sensitivity(points, records)}
    written = write_report(out, experiment.name, records, formats=experiment.reports or FORMATS,
                           missing=[{"id": p.id, "model_name": Path(p.model).stem, "variant": p.variant,
                                     "sweep": dict(p.sweep)} for p in missing],
                           experiment=context, traced=traced)
    return RunOutcome(records, missing, n_cached, len(records) - n_cached,
                      sum(1 for r in records if r["status"] == "error"), written, out, stale, pruned,
                      (warning,) if warning else (), migrated, out / STORE_FILE,
                      infeasible=sum(1 for r in records if r["status"] == "infeasible"))


def report_context(experiment: Experiment, n_points: int) -> dict[str, Any]:
    """What write_report needs to know of the experiment: its file, size, and the file's order of names."""
    from accelsim.assumptions import assumption_lines

    keys = [k for k, _ in experiment.sweeps]
    configs = [load_hardware(experiment.host), *(load_hardware(a) for v in experiment.variants
                                                 for a in v.accelerators)]
    host_name = configs[0].name
    given = [f"{host_name}.{k.split('.', 1)[1]}" if k.startswith("host.") else k for k in keys]
    return {"source": experiment.source, "points": n_points, "assumptions": assumption_lines(configs, given),
            "host": [host_name, configs[0].calibration],
            "models": list(dict.fromkeys(Path(m).stem for m in experiment.models)),
            "variants": [v.name for v in experiment.variants], "sweep_keys": keys,
            "traces": experiment.traces, "best": experiment.best,
            "pareto_color": experiment.pareto_color or (keys[0] if keys else None)}


def _fill_speedups(records: Sequence[dict]) -> None:
    """speedup = CPU-only latency / latency, for the same model, schedule and host settings."""
    def key(r: dict) -> tuple:
        host_sweep = tuple(sorted((k, str(v)) for k, v in r["sweep"].items() if k.startswith("host.")))
        return (r["model"], r["schedule"], host_sweep)

    baselines = {key(r): r["latency_us"] for r in records if r["status"] == "ok" and not r["accelerators"]}
    for r in records:
        base = baselines.get(key(r))
        if r["status"] == "ok" and base and r["latency_us"]:
            r["speedup"] = round(base / r["latency_us"], 3)

