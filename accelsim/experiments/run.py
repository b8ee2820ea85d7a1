"""Running an experiment: its stages in order, from a loaded experiment file to a written report.

`run_experiment` is the list of stages; each stage lives in the module named for it:
points (`accelsim.experiments.points`), analyses and costs (`accelsim.experiments.executors`, which share each
analysis among the points that only change costs), the store (`accelsim.experiments.store`), the choice of
traced points (`accelsim.core.pareto`), their details (`accelsim.experiments.detail`) and the report
(`accelsim.reports.report`). Loading comes first, by the caller: `accelsim.experiments.experiment.load_experiment`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelsim.core.feasibility import Infeasible
from accelsim.core.files import write_atomic
from accelsim.core.pareto import traced_ids
from accelsim.core.record import PointResult
from accelsim.experiments.detail import stored_record, with_details
from accelsim.experiments.executors import Executor, PoolExecutor, WorkersLost, default_executor, point_error
from accelsim.experiments.points import DesignPoint, check_point_count, experiment_points, without_details
from accelsim.experiments.search import TRIALS_PER_ROUND, run_search
from accelsim.experiments.spec import Experiment
from accelsim.experiments.store import STORE_FILE, ResultStore
from accelsim.experiments.stream_points import prepare_streams, simulate_prepared
from accelsim.hardware.assumptions import assumption_lines
from accelsim.hardware.config import load_devices, load_hardware
from accelsim.insight.advice import best_point_sensitivity
from accelsim.reports import streams_section
from accelsim.reports.report import write_report
from accelsim.reports.results import fill_speedups
from accelsim.runtime.errors import AccelsimError

OWNER_FILE = "experiment.json"


@dataclass(kw_only=True)
class RunOutcome:
    records: list[dict]
    missing: list[DesignPoint]
    cached: int
    computed: int  # points simulated by this run
    failed: int  # points whose status is "error"
    outputs: dict[str, Path] = field(default_factory=dict)
    out_dir: Path | None = None
    stale: int = 0  # stored points this experiment no longer has
    pruned: bool = False  # whether those entries were removed
    warnings: tuple[str, ...] = ()
    store: Path | None = None  # the results store, <out>/points.sqlite
    infeasible: int = 0  # points whose hardware cannot run the model, or that break a limit (status "infeasible")


def run_experiment(experiment: Experiment, out_dir: str | Path | None = None, *, jobs: int | None = None,
                   executor: Executor | None = None, use_cache: bool = True, prune_cache: bool = False,
                   progress: Callable[[int, int, str], None] | None = None,
                   should_stop: Callable[[], bool] = lambda: False, max_points: int | None = None) -> RunOutcome:
    """Run every design point not already in the results store, then write the report from the store.

    Each finished point is committed to `<out>/points.sqlite` (accelsim.experiments.store) before more are
    asked for. An interrupt (KeyboardInterrupt, or `should_stop()` turning true — a signal
    handler's flag, which survives signals that land where Python swallows exceptions, such as
    finalizers) stops the run after saving what finished: the report is still written and lists
    the missing points, then KeyboardInterrupt propagates.

    An experiment with more design points than `max_points` (None: the experiment's `limits: {points: N}`,
    default 100,000) is refused before anything runs (PointLimitError, with the count and how to raise it).

    The report goes to report_folder(experiment, out_dir); its warning, if any, is in the
    outcome's `warnings`. Stored points the experiment no longer has are counted in `stale`,
    and removed first with `prune_cache`.

    Raises:
        KeyboardInterrupt: after the report of what finished is written.
        AccelsimError: the workers died (WorkersLost), after the same.
    """
    check_point_count(experiment, max_points)
    out, warning = report_folder(experiment, out_dir)
    _claim_folder(out, experiment)
    if experiment.search.optimises:  # an Optuna search asks for its points as it goes
        with ResultStore(out) as store, contextlib.ExitStack() as stack:
            pool = executor
            if pool is None:  # a pool whose workers (and their analyses) last the whole search, round after round
                pool = default_executor(jobs, TRIALS_PER_ROUND)
                if isinstance(pool, PoolExecutor):
                    pool.keep_workers = True
                    stack.callback(pool.close)
            found = run_search(experiment, out, store, pool, use_cache, progress, should_stop)
            points, refusals, interrupted = found.points, found.refusals, found.interrupted
            cached, ran = found.cached, found.ran
            stale = sorted(store.ids() - {p.id for p in points})
            if prune_cache:
                store.delete(stale)
            stored = store.records({p.id for p in points})
        streams = prepare_streams(experiment, points, frozenset(refusals))
    else:
        points, refusals = experiment_points(experiment)
        streams = prepare_streams(experiment, points, frozenset(refusals))  # a bad stream fails before any point runs
        with ResultStore(out) as store:
            stale, cached = _open_store(store, points, use_cache, prune_cache)
            # Points the limits refuse are infeasible without running: their verdict is written afresh each run,
            # and a stored limits verdict of a point the limits now allow (they changed) is not a result to reuse.
            store.put_many([stored_record(point_error(p, Infeasible("limits", refusals[p.id])), p,
                                          experiment.traces) for p in points if p.id in refusals])
            cached -= set(refusals) | store.ids(reason="limits")
            todo = without_details([p for p in points if p.id not in cached and p.id not in refusals], experiment)
            pool = executor if executor is not None else default_executor(jobs, len(todo))
            ran, interrupted = _run_and_store(store, pool, experiment, todo, len(cached), len(points), progress,
                                              should_stop)
            stored = store.records(cached | ran | set(refusals))
    records = [stored[p.id] for p in points if p.id in stored]
    fill_speedups(records)
    traced = traced_ids(records, experiment.traces, experiment.best)
    partial = isinstance(interrupted, KeyboardInterrupt)  # the user waits: no simulation, no plots, at once
    sums = dict(n_cached=len(cached), stale=len(stale), pruned=prune_cache, warning=warning, n_run=len(ran))
    try:
        if not partial:
            # Under traces 'all' (None) every ok point is traced: those stored without details by an earlier run
            # under another `traces:` are simulated again (with_details skips the ones that have them).
            records = with_details(experiment, points, records, set(traced) if traced is not None
                                   else {r["id"] for r in records if r["status"] == "ok"})
        outcome = _report(experiment, out, points, records, traced, partial=partial,
                          streams=() if partial else simulate_prepared(streams), **sums)
    except KeyboardInterrupt as exc:  # while the full report was written: the partial one, at once
        if partial:
            raise
        interrupted, outcome = exc, _report(experiment, out, points, records, traced, partial=True, **sums)
    if isinstance(interrupted, KeyboardInterrupt):
        raise interrupted
    if interrupted is not None:
        raise AccelsimError(f"{interrupted}; {len(outcome.missing)} design points are missing from {out}; "
                            "run again to complete them") from interrupted
    return outcome


def _claim_folder(out: Path, experiment: Experiment) -> None:
    """Record in `out` which experiment file its report belongs to (report_folder reads it)."""
    write_atomic(out / OWNER_FILE, json.dumps({"name": experiment.name,
                                                "source": str(Path(experiment.source).resolve())}, indent=2) + "\n")


def _open_store(store: ResultStore, points: Sequence[DesignPoint], use_cache: bool,
                prune: bool) -> tuple[list[str], set[str]]:
    """(stored ids the experiment no longer has, removed first with `prune`; ids of finished points to reuse)."""
    ids = {p.id for p in points}
    stale = sorted(store.ids() - ids)
    if prune:
        store.delete(stale)
    return stale, (store.ids(ok_only=True) & ids if use_cache else set())


def _run_and_store(store: ResultStore, pool: Executor, experiment: Experiment, todo: Sequence[DesignPoint],
                   finished: int, total: int, progress: Callable[[int, int, str], None] | None,
                   should_stop: Callable[[], bool]) -> tuple[set[str], BaseException | None]:
    """Run `todo` on `pool`, committing each batch of records as it comes: (ids run, the interrupt if one came)."""
    ran: set[str] = set()
    by_id = {p.id: p for p in todo}
    if progress is not None:
        progress(finished, total, "cached" if finished else "starting")
    batches = pool.run(todo, {v.name: dict(v.options) for v in experiment.variants})
    try:
        if should_stop():
            raise KeyboardInterrupt
        for batch in batches:
            # Named as ran before the commit, so that an interrupt landing right after the commit still
            # reports the batch (records() returns only what the store holds); committed first, so an
            # interrupt after this loses nothing.
            ran.update(rec["id"] for rec in batch)
            store.put_many([stored_record(rec, by_id[rec["id"]], experiment.traces) for rec in batch])
            for rec in batch:
                finished += 1
                if progress is not None:
                    progress(finished, total, by_id[rec["id"]].label)
            if should_stop():
                raise KeyboardInterrupt
    except (KeyboardInterrupt, WorkersLost) as exc:
        return ran, exc
    finally:
        batches.close()  # cancels what has not started
    return ran, None


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


def _report(experiment: Experiment, out: Path, points: Sequence[DesignPoint], records: list[PointResult],
            traced, *, n_cached: int, stale: int, pruned: bool, warning: str | None, n_run: int,
            streams: Sequence[streams_section.StreamRun] = (), partial: bool = False) -> RunOutcome:
    """Write the report of `records` (the stored points, in the experiment's order) and sum the run up.

    A `partial` report (the run was interrupted and the user waits) has no plots, no sensitivity and no streams,
    and says so.
    """
    done = {r["id"] for r in records}
    missing = [p for p in points if p.id not in done]
    context = {**report_context(experiment, len(points)),
               **({"partial": True} if partial else {"sensitivity": best_point_sensitivity(points, records)})}
    if streams:
        context |= {"sections": [streams_section.section(streams)], "figures": streams_section.figures(streams)}
    written = write_report(out, experiment.name, records, formats=experiment.reports,
                           missing=[{"id": p.id, "model_name": Path(p.model).stem, "variant": p.variant,
                                     "sweep": dict(p.sweep)} for p in missing],
                           experiment=context, traced=traced, plots=not partial)
    if streams:
        written |= streams_section.write_files(out, streams)
    return RunOutcome(records=records, missing=missing, cached=n_cached, computed=n_run,
                      failed=sum(1 for r in records if r["status"] == "error"), outputs=written, out_dir=out,
                      stale=stale, pruned=pruned, warnings=(warning,) if warning else (), store=out / STORE_FILE,
                      infeasible=sum(1 for r in records if r["status"] == "infeasible"))


def report_context(experiment: Experiment, n_points: int) -> dict[str, Any]:
    """What write_report needs to know of the experiment: its file, size, and the file's order of names."""
    keys = [k for k, _ in experiment.sweeps]
    def config(path: str):  # as loading read it, when it did (no file is parsed twice)
        return experiment.configs.get(str(path)) or load_hardware(path)

    def devices(path: str):  # an NNAPI config brings its drivers
        cached = experiment.configs.get(str(path))
        return [cached] if cached is not None else load_devices(path)

    configs = [config(experiment.host), *(d for v in experiment.variants for a in v.accelerators for d in devices(a))]
    host_name = configs[0].name
    given = [f"{host_name}.{k.split('.', 1)[1]}" if k.startswith("host.") else k for k in keys]
    return {"source": experiment.source, "points": n_points, "assumptions": assumption_lines(configs, given),
            "host": [host_name, configs[0].hardware.calibration],
            "models": list(dict.fromkeys(Path(m).stem for m in experiment.models)),
            "variants": [v.name for v in experiment.variants], "sweep_keys": keys,
            "traces": experiment.traces, "best": experiment.best,
            "pareto_color": experiment.pareto_color or (keys[0] if keys else None)}
