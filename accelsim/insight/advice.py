"""Advice on an experiment beyond its points: which variants cannot run a model as written, what to change.

`infeasible_variants` is what `accelsim validate` says of an experiment's configs before any sweep;
`best_point_sensitivity` is the report's "What to change" section (`accelsim.insight.sensitivity` of each
model x variant's fastest point). Both take the experiment's plain objects (accelsim.experiments.experiment's
Experiment and DesignPoint), so this module sits beside the experiment, not under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelsim.core.feasibility import Infeasible
from accelsim.hardware.config import load_system
from accelsim.insight.sensitivity import lines, sensitivity
from accelsim.runtime.errors import AccelsimError
from accelsim.simulation.analysis import simulate_model


def infeasible_variants(experiment: Any) -> list[str]:
    """One line per model x variant whose configs as written (no sweep applied) cannot run the model.

    Not an error: a sweep may make the design large enough; `run` stores such points as infeasible.
    """
    out = []
    for model in experiment.models:
        for variant in experiment.variants:
            if not variant.accelerators:
                continue
            try:
                simulate_model(model, load_system(experiment.host, variant.accelerators), experiment.schedule,
                               experiment.loops)
            except Infeasible as exc:
                out.append(f"{Path(model).stem} on {variant.name} (unswept values): {exc}")
            except (AccelsimError, ValueError):
                continue  # not a feasibility question: run reports it as the point's error
    return out


def best_point_sensitivity(points: Sequence[Any], records: Sequence[dict]) -> list[dict[str, Any]]:
    """`accelsim sensitivity` of the fastest ok point of each model x variant with accelerators: title and lines."""
    by_id = {p.id: p for p in points}
    best: dict[tuple[str, str], dict] = {}
    for r in records:
        key = (r["model_name"], r["variant"])
        if r["status"] == "ok" and r["accelerators"] and r["id"] in by_id and (
                key not in best or r["latency_us"] < best[key]["latency_us"]):
            best[key] = r
    out = []
    for (model, variant), r in best.items():
        point = by_id[r["id"]]
        swept = ", ".join(f"{k}={v}" for k, v in point.sweep.items())
        title = f"{model} on {variant}" + (f" at {swept}" if swept else "")
        try:
            text = lines(sensitivity(point.model, point.system, point.schedule, point.loops, model), top=12)
        except (AccelsimError, ValueError, OSError) as exc:
            text = [f"not computed: {' '.join(str(exc).split())}"]
        out.append({"title": title, "lines": text})
    return out
