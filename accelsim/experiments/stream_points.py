"""An experiment's `streams:` block: read and checked (`parse_streams`), prepared before any point runs,
simulated after.

Every design point's system streams its model (or, with `streams.graph`, the graph's models, once per
variant and hardware sweep) with each combination of the block's swept values
(`stream_workload`). Preparing (analysis, segmentation, every check of
`accelsim.workloads.streams.prepare`) comes before the design points run, so a bad stream (a dependency
cycle, more segments than ops, a model no unit runs) is one error before anything runs; a point whose
hardware cannot run its model (infeasible) is listed as not streamed, with the reason.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.core.feasibility import Infeasible
from accelsim.core.units import parse_time
from accelsim.experiments.keys import section_keys
from accelsim.experiments.points import DesignPoint
from accelsim.experiments.spec import Experiment, Streams
from accelsim.hardware.config import System
from accelsim.hardware.config_yaml import Checker, ConfigError
from accelsim.hardware.sweeps import Range
from accelsim.ops import using_ops
from accelsim.reports.streams_section import StreamRun
from accelsim.workloads.streams import StreamError, StreamSpec, Workload, prepare, run
from accelsim.workloads.streams import check as check_streams

_STREAM_KEYS = section_keys("streams")


_OWN_STREAM_KEYS = ("rate", "period", "frames", "max_in_flight", "max_in_queue")  # a graph entry's own settings


_GRAPH_KEYS = (*section_keys("streams.graph[]"), *_OWN_STREAM_KEYS)


def _stream_settings(errors: Checker, where: tuple, value: dict, keys: Sequence[str]) -> dict[str, Any]:
    """The settings of `keys` written in `value` (a period turned into a rate), each checked for its type."""
    out: dict[str, Any] = {}
    for key in keys:
        if key not in value:
            continue
        v = value[key]
        if key == "period":
            try:
                seconds = parse_time(v)
            except ValueError as exc:
                errors.add((*where, key), str(exc))
                continue
            if seconds <= 0:
                errors.add((*where, key), f"must be > 0, got {v!r}")
                continue
            out["rate"] = 1 / seconds
        elif key == "rate":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                errors.add((*where, key), f"must be > 0 frames per second, got {v!r}")
                continue
            out["rate"] = float(v)
        elif key == "shared_link" and not isinstance(v, bool):
            errors.add((*where, key), f"expected true or false, got {v!r}")
        elif key in ("count", "frames", "max_in_flight", "max_in_queue"):
            low = 0 if key == "max_in_queue" else 1
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                errors.add((*where, key), f"expected a whole number >= {low}, got {v!r}")
                continue
            out[key] = v
        else:
            out[key] = v
    if "rate" in value and "period" in value:
        errors.add(where, "give rate or period, not both")
    return out


def parse_streams(errors: Checker, value: Any, base: Path, sweeps: Sequence[tuple[str, Any]]) -> Streams | None:
    """The `streams:` block checked (accelsim.workloads.streams.check on every swept combination); None if broken."""
    if not isinstance(value, dict):
        errors.add(("streams",), f"expected a mapping (mode, count, segmentation, frames, rate, ...), got {value!r}")
        return None
    n = len(errors.items)
    for key in value:
        if key not in _STREAM_KEYS:
            hint = difflib.get_close_matches(str(key), _STREAM_KEYS, n=1)
            errors.add(("streams", key), "unknown key; " + (f"did you mean {hint[0]!r}?" if hint else
                                                             f"expected one of {', '.join(_STREAM_KEYS)}"))
    settings = {"mode": "single", "count": 1, "segmentation": "balanced", "frames": 100, "rate": None,
                "max_in_flight": None, "max_in_queue": 0, "shared_link": False}
    settings.update(_stream_settings(errors, ("streams",), value, [k for k in _STREAM_KEYS if k != "graph"]))
    graph = []
    written = value.get("graph", [])
    if not isinstance(written, list):
        errors.add(("streams", "graph"), f"expected a list of streams, got {written!r}")
        written = []
    for i, entry in enumerate(written):
        where = ("streams", "graph", i)
        if not isinstance(entry, dict):
            errors.add(where, f"expected a mapping with name and model, got {entry!r}")
            continue
        for key in entry:
            if key not in _GRAPH_KEYS:
                errors.add((*where, key), f"unknown key; expected one of {', '.join(_GRAPH_KEYS)}")
        name, model, deps = entry.get("name"), entry.get("model"), entry.get("depends_on", [])
        if not isinstance(name, str) or not name:
            errors.add((*where, "name"), f"expected a name, got {name!r}")
        if not isinstance(model, str):
            errors.add((*where, "model"), f"expected a .tflite path, got {model!r}")
            continue
        path = Path(model) if Path(model).is_absolute() else base / model
        if not path.is_file():
            errors.add((*where, "model"), f"no such model file: {path}")
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            errors.add((*where, "depends_on"), f"expected a list of stream names, got {deps!r}")
            deps = []
        graph.append({"name": name, "model": str(path), "depends_on": tuple(deps),
                      **_stream_settings(errors, where, entry, _OWN_STREAM_KEYS)})
    for key, values in sweeps:
        if key not in _STREAM_KEYS or key == "graph":
            errors.add(("sweeps", f"streams.{key}"), f"not a key of the streams block; expected one of "
                       f"{', '.join(k for k in _STREAM_KEYS if k != 'graph')}")
        elif isinstance(values, Range):
            errors.add(("sweeps", f"streams.{key}"), "expected a list of values (a stream sweep takes no range)")
        else:
            for v in values:
                _stream_settings(errors, ("sweeps", "streams"), {key: v}, [key])
    if len(errors.items) > n:
        return None
    block = Streams(settings=settings, graph=tuple(graph), sweeps=tuple(sweeps))
    for combo in stream_combinations(block):
        try:
            check_streams(stream_workload(block, combo, "<each model>", "sequential"))
        except StreamError as exc:
            for problem in exc.problems:
                errors.add(("streams",), problem)
            return None
    return block


def stream_combinations(block: Streams) -> list[dict[str, Any]]:
    """Every combination of the block's swept values (one empty combination without sweeps)."""
    combos: list[dict[str, Any]] = [{}]
    for key, values in block.sweeps:
        combos = [{**c, key: v} for c in combos for v in values]
    return combos


def stream_workload(block: Streams, combo: dict[str, Any], model: str, schedule: str) -> Workload:
    """The workload of one combination of a streams block: the graph's streams, or `model` alone."""
    settings = dict(block.settings)
    for key, v in combo.items():
        if key == "period":
            settings["rate"] = 1 / parse_time(v)
        else:
            settings[key] = v
    own = {k: settings[k] for k in ("frames", "rate", "max_in_flight", "max_in_queue")}
    if block.graph:
        streams = tuple(StreamSpec(name=g["name"], model=g["model"], depends_on=g["depends_on"],
                                   **{**own, "rate": None if g["depends_on"] else own["rate"],
                                      **{k: v for k, v in g.items() if k in own}})
                        for g in block.graph)
    else:
        streams = (StreamSpec(name=Path(model).stem, model=model, **own),)
    return Workload(streams, mode=settings["mode"], count=settings["count"], segmentation=settings["segmentation"],
                    schedule=schedule, shared_link=settings["shared_link"])


@dataclass(frozen=True)
class _Prepared:
    point: str
    combo: dict[str, Any]
    workload: Workload
    system: System | None
    plans: Any = None
    problem: str = ""


def prepare_streams(experiment: Experiment, points: Sequence[DesignPoint],
                    refused: frozenset[str] = frozenset()) -> list[_Prepared]:
    """Every (point, combination) stream made ready; none without a `streams:` block.

    Raises:
        ConfigError: every stream that cannot run, one line each, naming the experiment file.
    """
    block = experiment.streams
    if block is None:
        return []
    out, errors, seen = [], [], set()
    with using_ops(experiment.ops):
        for p in points:
            if p.id in refused or p.system is None:
                continue
            for combo in stream_combinations(block):
                key = (p.variant, json.dumps(dict(p.sweep), sort_keys=True, default=str),
                       json.dumps(combo, sort_keys=True, default=str), "" if block.graph else p.model)
                if key in seen:
                    continue
                seen.add(key)
                label = p.label if not block.graph else p.label.split(" | ", 1)[-1]
                workload = stream_workload(block, combo, p.model, p.schedule)
                try:
                    out.append(_Prepared(label, combo, workload, p.system, prepare(workload, p.system, p.loops)))
                except Infeasible as exc:
                    out.append(_Prepared(label, combo, workload, None, problem=f"infeasible: {exc}"))
                except StreamError as exc:
                    errors += [f"{experiment.source}: streams ({label}): {line}" for line in exc.problems]
    if errors:
        raise ConfigError(list(dict.fromkeys(errors)))
    return out


def simulate_prepared(prepared: Sequence[_Prepared]) -> list[StreamRun]:
    """Each prepared stream simulated (the SimPy run)."""
    return [StreamRun(point=s.point, combo=s.combo, problem=s.problem,
                      result=run(s.workload, s.plans, s.system) if s.system is not None else None)
            for s in prepared]
