"""Design points: an experiment's models x variants x sweep combinations, each with its resolved system and id.

A point's id hashes its model's bytes, its system's identity (`accelsim.hardware.config.identity`), its variant,
sweep values, options, schedule, numerics and the accelsim version: the key of the results
store, so a re-run skips finished points.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelsim.core.version import __version__
from accelsim.experiments.spec import OPTION_KEYS, Experiment, Variant
from accelsim.hardware.config import Assign, System, apply_overrides, load_system
from accelsim.hardware.config import identity as system_identity
from accelsim.hardware.sweeps import Range, sampled_combinations
from accelsim.ops import load_op_modules
from accelsim.runtime.errors import AccelsimError
from accelsim.runtime.work import LoopTrips


@dataclass(frozen=True, kw_only=True)
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
    # LLM generation (an experiment's `generate:` with this point's sweep values applied); None: one inference
    generate: Mapping[str, Any] | None = None
    # Whether its record carries the per-node lists (accelsim.core.record.DETAIL_KEYS): an experiment that traces
    # only some points stores the others without them (accelsim.experiments.detail), so its run asks a worker not to
    # make them (`without_details`).
    details: bool = field(default=True, compare=False)
    # The resolved system, as design_points made it: running the point need not re-read the configs.
    system: System | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        swept = ", ".join(f"{k}={v}" for k, v in self.sweep.items())
        return f"{Path(self.model).stem} | {self.variant}" + (f" | {swept}" if swept else "")


def _applies(key: str, system: System) -> bool:
    if key == "schedule" or key.startswith("generate."):
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
        elif key != "schedule" and not key.startswith("generate."):
            head, rest = key.split(".", 1)
            by_target.setdefault(head, {})[rest] = value
    nnapi = system.nnapi
    if nnapi is not None and "max_delegated_partitions" in opts:  # NNAPI's own limit, not its drivers'
        options = dataclasses.replace(nnapi.spec.options, max_number_delegated_partitions=opts.pop(
            "max_delegated_partitions"))
        nnapi = dataclasses.replace(nnapi, spec=dataclasses.replace(nnapi.spec, options=options))
    host = apply_overrides(system.host, by_target["host"]) if "host" in by_target else system.host
    accels = []
    for a in system.accelerators:
        changes = dict(by_target.get(a.name, {}))
        changes.update({f"partition.{k}": v for k, v in opts.items()})
        accels.append(apply_overrides(a, changes) if changes else a)
    return System(host, tuple(accels), assign, nnapi)


def design_points(experiment: Experiment) -> list[DesignPoint]:
    """Models x variants x the sweep combinations that apply to each variant, within the limits.

    The combinations are the cross product of the sweeps (grid), or the seeded draws of a
    random search, each variant taking the keys that apply to it (repeats run once).
    """
    points, refusals = experiment_points(experiment)
    return [p for p in points if p.id not in refusals]


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


def without_details(points: Sequence[DesignPoint], experiment: Experiment) -> list[DesignPoint]:
    """`points` as a run submits them: without the per-node lists unless the experiment traces every point."""
    if experiment.traces == "all":
        return list(points)
    return [dataclasses.replace(p, details=False) for p in points]


def point_count(experiment: Experiment) -> int:
    """How many design points `experiment` has, counted without making them (a product of sweep lengths per
    model and variant; a random search's distinct draws): `validate` prints it, `run` checks it first."""
    total = 0
    for variant in experiment.variants:
        base_system = load_system(experiment.host, variant.accelerators, loaded=experiment.configs)
        keys = [k for k, _ in experiment.sweeps if _applies(k, base_system)]
        if experiment.search.optimises:  # a search: its budget of trials (one point when nothing is swept)
            count = experiment.search.budget if keys else 1
        elif experiment.search.strategy == "random":
            count = len(_sweep_combinations(experiment, keys))  # seeded draws: as many as samples, at most
        else:
            count = math.prod(v.count() if isinstance(v, Range) else len(v) for k, v in experiment.sweeps
                              if k in keys)
        total += count * len(experiment.models)
    return total


def check_point_count(experiment: Experiment, max_points: int | None = None) -> int:
    """The experiment's point count (point_count), or PointLimitError when it is above the limit.

    Args:
        max_points: the limit; None takes the experiment's (`limits: {points: N}`, default MAX_POINTS).
    """
    count = point_count(experiment)
    limit = experiment.max_points if max_points is None else max_points
    if count > limit:
        raise PointLimitError(
            f"{experiment.source}: {count:,} design points, above the limit of {limit:,}; run fewer (a coarser "
            f"sweep, or search: with a budget) or raise the limit: `accelsim run --max-points {count}` or "
            f"`limits: {{points: {count}}}` in the experiment")
    return count


class PointLimitError(AccelsimError):
    """An experiment has more design points than `run` accepts."""


def experiment_points(experiment: Experiment) -> tuple[list[DesignPoint], dict[str, str]]:
    """(every design point in order, id -> why the limits refuse it): refused points are infeasible, never run."""
    points, refusals = [], {}
    maker = PointMaker(experiment)
    for model in experiment.models:
        for variant in experiment.variants:
            keys = maker.keys(variant)
            for sweep in _sweep_combinations(experiment, keys):
                point, refusal = maker.point(model, variant, sweep)
                points.append(point)
                if refusal is not None:
                    refusals[point.id] = refusal
    return points, refusals


class PointMaker:
    """Makes an experiment's design points one at a time (its grid, or the points a search asks for)."""

    def __init__(self, experiment: Experiment):
        self.experiment = experiment
        self.ops_digest = load_op_modules(experiment.ops).digest() if experiment.ops else ""
        self.model_hashes: dict[str, str] = {}
        self.systems: dict[str, System] = {}

    def base_system(self, variant: Variant) -> System:
        """The variant's system as its files give it (loaded once)."""
        if variant.name not in self.systems:
            self.systems[variant.name] = load_system(self.experiment.host, variant.accelerators,
                                                     loaded=self.experiment.configs)
        return self.systems[variant.name]

    def keys(self, variant: Variant) -> list[str]:
        """The sweep keys that apply to the variant, in the file's order."""
        system = self.base_system(variant)
        return [k for k, _ in self.experiment.sweeps if _applies(k, system)]

    def point(self, model: str, variant: Variant, sweep: dict[str, Any]) -> tuple[DesignPoint, str | None]:
        """(the point of `model` on `variant` with the sweep values `sweep`, why the limits refuse it or None)."""
        experiment = self.experiment
        if model not in self.model_hashes:
            # An architecture name (with generate:) is built from its name: the name is its identity.
            self.model_hashes[model] = hashlib.sha256(
                Path(model).read_bytes() if Path(model).is_file() else model.encode()).hexdigest()
        schedule = sweep.get("schedule", experiment.schedule)
        generate = None if experiment.generate is None else {
            **experiment.generate, **{k.split(".", 1)[1]: v for k, v in sweep.items() if k.startswith("generate.")}}
        draft = DesignPoint(id="", model=model, variant=variant.name, host=experiment.host,
                            accelerators=variant.accelerators, sweep=sweep, schedule=schedule,
                            numerics_runs=experiment.numerics_runs, loops=experiment.loops,
                            ops=experiment.ops, generate=generate)
        system = resolved_system(draft, variant.options, self.base_system(variant))
        refusal = next(filter(None, (limit.refusal(system) for limit in experiment.limits)), None)
        facts = {"model": self.model_hashes[model], "system": system_identity(system),
                 "variant": variant.name, "sweep": {k: str(v) for k, v in sweep.items()},
                 "options": dict(variant.options), "schedule": schedule,
                 "numerics": experiment.numerics_runs, "version": __version__}
        if experiment.loops != LoopTrips():  # only then: the ids of loop-free experiments stay as they were
            facts["loops"] = [experiment.loops.default_trips, dict(experiment.loops.nodes)]
        if self.ops_digest:  # likewise: a kernel's code decides its node's work, so its source is identity
            facts["ops"] = self.ops_digest
        if generate is not None:  # likewise: only generation points carry it
            facts["generate"] = generate
        identity = json.dumps(facts, sort_keys=True, default=str)
        point_id = hashlib.sha256(identity.encode()).hexdigest()[:16]
        return dataclasses.replace(draft, id=point_id, system=system), refusal
