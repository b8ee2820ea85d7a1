"""Search on Optuna: `search: {sampler: nsga2, budget: 200, seed: 1, objectives: [latency_us, energy_uj]}`.

Instead of every combination of the sweeps, an Optuna sampler (random, tpe, nsga2 or gp) chooses
`budget` design points per model and variant, minimising the results columns named in
`objectives`. Each sweep key is a dimension: a list or a range with a grid is the index of its
value (ordered, so a sampler can learn that more rows help), a range without one a float in SI
units written back as the file writes it (accelsim.hardware.sweeps.Range).

Trials are asked TRIALS_PER_ROUND at a time, run by the experiment's executor (the process pool or
Dask) as ordinary design points, stored in the results store as they finish, and told in trial
order: a seed gives the same search whatever the executor and its jobs. The study lives next to
the store (`study.sqlite` in the report folder); a run that finds it continues it, counting the
trials that ran (an interrupted round's trials are failed and asked again), and a point already
in the store is not run twice. Ctrl-C leaves both consistent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from accelsim.core.feasibility import Infeasible
from accelsim.core.record import PointResult
from accelsim.experiments.detail import stored_record
from accelsim.experiments.executors import Executor, WorkersLost, point_error
from accelsim.experiments.points import DesignPoint, PointMaker, point_count, without_details
from accelsim.experiments.spec import Experiment, Variant
from accelsim.experiments.store import ResultStore
from accelsim.hardware.sweeps import Range

# Trials asked before any is told: fixed, so the search does not depend on the number of workers.
TRIALS_PER_ROUND = 8
STUDY_FILE = "study.sqlite"


def optuna_module() -> ModuleType:
    """Optuna, quiet (its INFO line per trial would drown the progress bar)."""
    import optuna  # the optional `search` extra: only an experiment with search: sampler needs it (LAZY_IMPORTS)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def sampler(optuna: ModuleType, name: str, seed: int):
    """Optuna's sampler called `name` (accelsim.hardware.sweeps.SAMPLERS but grid), seeded."""
    samplers = {"random": optuna.samplers.RandomSampler, "tpe": optuna.samplers.TPESampler,
                "nsga2": optuna.samplers.NSGAIISampler, "gp": optuna.samplers.GPSampler}
    return samplers[name](seed=seed)


def distributions(optuna: ModuleType, sweeps: dict[str, Any]) -> dict[str, Any]:
    """Each sweep key's dimension: the index of its value, or a float in SI units for a range without a grid."""
    out = {}
    for key, values in sweeps.items():
        if isinstance(values, Range) and values.step is None and values.steps is None:
            out[key] = optuna.distributions.FloatDistribution(values.start, values.stop, log=values.log)
        else:
            count = values.count() if isinstance(values, Range) else len(values)
            out[key] = optuna.distributions.IntDistribution(0, count - 1)
    return out


def sweep_of(params: dict[str, Any], sweeps: dict[str, Any]) -> dict[str, Any]:
    """A trial's parameters as sweep values, written as the file writes them, in the file's key order."""
    out = {}
    for key, values in sweeps.items():
        value = params[key]
        if isinstance(values, Range):
            out[key] = values.written(value) if values.step is None and values.steps is None else values.grid()[value]
        else:
            out[key] = values[value]
    return out


@dataclass
class SearchOutcome:
    """What a search ran: its points in trial order (the report's), refusals, ids run now, ids found stored."""

    points: list[DesignPoint] = field(default_factory=list)
    refusals: dict[str, str] = field(default_factory=dict)
    ran: set[str] = field(default_factory=set)
    cached: set[str] = field(default_factory=set)
    interrupted: BaseException | None = None
    ids: set[str] = field(default_factory=set)


def run_search(experiment: Experiment, out: Path, store: ResultStore, pool: Executor, use_cache: bool,
               progress: Callable[[int, int, str], None] | None, should_stop: Callable[[], bool]) -> SearchOutcome:
    """Run `experiment`'s search: `budget` trials per model and variant (one point for a variant no sweep key applies
    to), each stored as it finishes; a study already in `out` is continued. Never raises KeyboardInterrupt or
    WorkersLost: it returns them in `interrupted`, with everything that finished stored and told."""
    optuna = optuna_module()
    storage = optuna.storages.RDBStorage(f"sqlite:///{Path(out) / STUDY_FILE}")
    maker = PointMaker(experiment)
    outcome = SearchOutcome()
    total = point_count(experiment)
    options = {v.name: dict(v.options) for v in experiment.variants}
    done = 0

    def evaluate(points: list[DesignPoint]) -> dict[str, PointResult]:
        """Records of `points` (run, or found in the store), each stored as it finishes."""
        nonlocal done
        found = store.records({p.id for p in points}) if use_cache else {}
        found = {i: r for i, r in found.items() if r["status"] == "ok"}
        outcome.cached |= set(found)
        todo = without_details(list({p.id: p for p in points if p.id not in found
                                     and p.id not in outcome.refusals}.values()), experiment)
        refused = [p for p in points if p.id in outcome.refusals]
        store.put_many([stored_record(point_error(p, Infeasible("limits", outcome.refusals[p.id])), p,
                                      experiment.traces) for p in refused])
        by_id = {p.id: p for p in points}
        batches = pool.run(todo, options)
        try:
            for batch in batches:
                outcome.ran.update(rec["id"] for rec in batch)
                kept = [stored_record(rec, by_id[rec["id"]], experiment.traces) for rec in batch]
                store.put_many(kept)
                found.update((rec["id"], rec) for rec in kept)
                if should_stop():
                    raise KeyboardInterrupt
        finally:
            batches.close()
        found.update(store.records({p.id for p in refused}))
        done += len(points)
        if progress is not None:
            progress(min(done, total), total, points[-1].label if points else "")
        return found

    if progress is not None:
        progress(0, total, "starting")
    try:
        for model in experiment.models:
            for variant in experiment.variants:
                keys = maker.keys(variant)
                if not keys:  # nothing to search: the one point
                    point, refusal = maker.point(model, variant, {})
                    _add(outcome, point, refusal)
                    evaluate([point])
                    continue
                _study(optuna, storage, experiment, maker, model, variant, keys, outcome, evaluate, should_stop)
    except (KeyboardInterrupt, WorkersLost) as exc:
        outcome.interrupted = exc
    return outcome


def _add(outcome: SearchOutcome, point: DesignPoint, refusal: str | None) -> None:
    if point.id not in outcome.ids:  # a trial that repeats an earlier one's values is the same point
        outcome.points.append(point)
        outcome.ids.add(point.id)
    if refusal is not None:
        outcome.refusals[point.id] = refusal


def study_name(experiment: Experiment, model: str, variant: Variant, keys: list[str]) -> str:
    """The study of a model and variant: named by what it searches, so a changed search starts afresh."""
    search = experiment.search
    facts = json.dumps({"sweeps": {k: str(v) for k, v in experiment.sweeps if k in keys}, "sampler": search.sampler,
                        "seed": search.seed, "objectives": list(search.objectives)}, sort_keys=True)
    return f"{Path(model).stem}|{variant.name}|{hashlib.sha256(facts.encode()).hexdigest()[:12]}"


def _study(optuna: ModuleType, storage, experiment: Experiment, maker: PointMaker, model: str, variant: Variant,
           keys: list[str], outcome: SearchOutcome, evaluate, should_stop: Callable[[], bool]) -> None:
    """Ask, run and tell one model and variant's trials until `budget` have run."""
    search = experiment.search
    sweeps = {k: v for k, v in experiment.sweeps if k in keys}
    space = distributions(optuna, sweeps)
    name = study_name(experiment, model, variant, keys)
    study = optuna.create_study(study_name=name, storage=storage, load_if_exists=True,
                                directions=["minimize"] * len(search.objectives))
    trials = study.get_trials(deepcopy=False)
    for t in trials:  # a run killed mid-round left these: failed, their points asked again
        if t.state == optuna.trial.TrialState.RUNNING:
            study.tell(t.number, state=optuna.trial.TrialState.FAIL)
    ran = [t for t in trials if "point" in t.user_attrs]
    for t in ran:  # the points of an earlier run of this study, for the report
        point, refusal = maker.point(model, variant, sweep_of(t.params, sweeps))
        _add(outcome, point, refusal)
        outcome.cached.add(point.id)
    # A continued study's sampler starts from another seed: the same one would repeat the first trials.
    study.sampler = sampler(optuna, search.sampler, search.seed + len(trials))
    count = len(ran)
    while count < search.budget:
        if should_stop():
            raise KeyboardInterrupt
        asked = [study.ask(space) for _ in range(min(TRIALS_PER_ROUND, search.budget - count))]
        told = set()
        try:
            points = []
            for trial in asked:
                point, refusal = maker.point(model, variant, sweep_of(trial.params, sweeps))
                _add(outcome, point, refusal)
                points.append(point)
            records = evaluate(points)
            for trial, point in zip(asked, points):
                rec = records.get(point.id)
                trial.set_user_attr("point", point.id)
                values = [rec.get(o) for o in search.objectives] if rec and rec["status"] == "ok" else None
                if values is None or any(v is None for v in values):  # failed, infeasible or not modelled
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                else:
                    study.tell(trial, values)
                told.add(trial.number)
        finally:  # an interrupt: the round's untold trials are failed, so the study stays consistent
            for trial in asked:
                if trial.number not in told:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
        count += len(asked)
