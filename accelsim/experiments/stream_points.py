"""An experiment's `streams:` block run on its design points: prepared before any point runs, simulated after.

Every design point's system streams its model (or, with `streams.graph`, the graph's models, once per
variant and hardware sweep) with each combination of the block's swept values
(`accelsim.experiments.experiment.stream_workload`). Preparing (analysis, segmentation, every check of
`accelsim.workloads.streams.prepare`) comes before the design points run, so a bad stream (a dependency
cycle, more segments than ops, a model no unit runs) is one error before anything runs; a point whose
hardware cannot run its model (infeasible) is listed as not streamed, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.core.feasibility import Infeasible
from accelsim.experiments.experiment import stream_combinations, stream_workload
from accelsim.experiments.points import DesignPoint
from accelsim.experiments.spec import Experiment
from accelsim.hardware.config import System
from accelsim.hardware.config_yaml import ConfigError
from accelsim.ops import using_ops
from accelsim.reports.streams_section import StreamRun
from accelsim.workloads.streams import StreamError, Workload, prepare, run


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
