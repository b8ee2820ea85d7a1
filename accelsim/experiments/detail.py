"""Details of the traced points: what the store keeps of a point, and the per-node lists of those a report traces.

With `traces: all` every point is stored with its details (events, per-node costs, partitions)
and nothing is simulated twice. With `traces: pareto` which points are traced is known only
when every point has run, so the store keeps each point without its details
(`accelsim.reports.results.DETAIL_KEYS`) and the chosen few are simulated again (deterministic, so they
come out the same), points sharing an analysis sharing it again.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Collection, Sequence

from accelsim.core.record import PointResult
from accelsim.experiments.executors import point_records
from accelsim.experiments.points import DesignPoint, resolved_system
from accelsim.experiments.spec import Experiment
from accelsim.reports.results import DETAIL_KEYS, area, summary


def stored_record(rec: PointResult, point: DesignPoint, traces: str) -> PointResult:
    """What the store keeps of a finished point: its record with the area proxies of its system, and
    without the per-node lists unless every point is traced (the report re-simulates the points it traces)."""
    kept = rec if traces == "all" else summary(rec)
    return {**kept, **area(point.system)} if point.system is not None else kept


def with_details(experiment: Experiment, points: Sequence[DesignPoint], records: list[PointResult],
                 traced: Collection[str]) -> list[PointResult]:
    """`records` with the traced ones that were stored without details simulated again (same numbers, with details).

    The points to simulate again go model by model through `accelsim.experiments.executors.point_records`,
    so those sharing an analysis are analysed once.
    """
    by_id = {p.id: p for p in points}
    options = {v.name: dict(v.options) for v in experiment.variants}
    again = [dataclasses.replace(by_id[r["id"]], details=True) for r in records
             if r["id"] in traced and r["status"] == "ok" and "events" not in r]
    details: dict[str, PointResult] = {}
    for model, group in itertools.groupby(sorted(again, key=lambda p: p.model), key=lambda p: p.model):
        items = [(p, p.system if p.system is not None else resolved_system(p, options[p.variant])) for p in group]
        details.update((rec["id"], rec) for rec in point_records(model, items) if rec["status"] == "ok")
    return [{**rec, **{k: details[rec["id"]][k] for k in DETAIL_KEYS}} if rec["id"] in details else rec
            for rec in records]
