"""Infeasible designs: hardware that cannot run a model is a result with a reason, not a failure.

A design point is infeasible when its hardware cannot hold or run the model at all:

- `memory`: a level that must hold the weights (or a node's activation working set) is smaller
  than them, and nothing below it could take them (`accelsim.hardware.memory.placed`,
  `accelsim.hardware.memory.activation_levels`). Weights that overflow a *cache* are not infeasible:
  they are streamed, their traffic counted, and reports say how many bytes stream.
- `limits`: the experiment's `limits:` leave the point out before it runs (`accelsim.hardware.sweeps.Limit.refusal`
  says which limit and by how much); it is stored, never simulated.
- `constraints`: an accelerator can run no node of the model: its claims match some nodes by op,
  version and type, and a claim constraint refuses every one of them
  (`accelsim.simulation.delegation.constraint_refusals`). Every system has a host, so the host would run it
  all; but the point would then measure the host alone under the accelerator's name, so it is
  infeasible, with the first refused node and the constraint. An accelerator that matches no
  node at all (int8 claims on a float model) is not infeasible: it does not claim the model's ops,
  and the report's partitions say so. Constraints that refuse some nodes but not all are ordinary
  fallback to the host, as TFLite's delegates do.

`Infeasible` is the exception the cost side raises; an experiment stores it as a record with
`status: infeasible` and the reason (`accelsim.reports.results.infeasible_record`); the CLI prints it as
one line. `summary_line` counts the reasons for `run`'s summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from accelsim.runtime.errors import AccelsimError

REASONS = ("memory", "limits", "constraints")


class Infeasible(AccelsimError, ValueError):
    """The hardware cannot run the model: `reason` (one of REASONS) and a one-line message saying what to change."""

    def __init__(self, reason: str, message: str):
        if reason not in REASONS:
            raise ValueError(f"infeasibility reason must be one of {list(REASONS)}, got {reason!r}")
        super().__init__(message)
        self.reason = reason

    def __reduce__(self):  # both arguments, so it crosses process boundaries (pool and Dask workers) intact
        return type(self), (self.reason, str(self))


def memory_refusal(locate: Callable[[tuple, str], Exception]) -> Callable[[tuple, str], Infeasible]:
    """A `refuse` for `accelsim.hardware.memory` that builds an Infeasible('memory') located like `locate`
    (a config's `error`).

    `locate` builds a ConfigError whose first line names file:line and key path; that line is the message.
    """
    def refuse(path: tuple, message: str) -> Infeasible:
        located = locate(path, message)
        lines = getattr(located, "errors", None) or [str(located)]
        return Infeasible("memory", lines[0])

    return refuse


def summary_line(records: Iterable[Mapping]) -> str | None:
    """'N infeasible (memory: k, limits: m, constraints: c)' over the records; None when none is infeasible."""
    counts = Counter(r.get("infeasible") or "memory" for r in records if r.get("status") == "infeasible")
    if not counts:
        return None
    parts = ", ".join(f"{reason}: {counts[reason]}" for reason in REASONS if counts[reason])
    return f"{sum(counts.values())} infeasible ({parts})"
