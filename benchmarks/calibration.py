"""What the calibration benchmarks share: row marks, error measures and a fit of named config values.

A published or measured table's row is `fit` when it informed a number in a shipped YAML (the
YAML's comment for that number names it), `held-out` when it never did, or `retired` when it is
outside the config's goal (printed with its reason, counted in neither error). Only held-out rows
say how well a config predicts a model it was not tuned to, so each table's headline error is
computed over them alone, with the fit rows' error printed beside it; a table without a held-out
row says so instead of a headline. `fit` chooses values by coordinate descent on the squared log
ratio of simulated to reference time over the fit rows alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

FIT, HELD_OUT, RETIRED = "fit", "held-out", "retired"

# Multiplicative steps tried on each value in turn, coarse to fine.
STEPS = (2.0, 1.4, 1.15, 1.05, 1.02)


def geomean_error(ratios: Sequence[float]) -> float:
    """exp(mean |ln r|) - 1: the typical factor by which ours and the reference differ."""
    return math.exp(sum(abs(math.log(r)) for r in ratios) / len(ratios)) - 1


def worst_error(ratios: Sequence[float]) -> float:
    """The largest |r - 1|: how far the worst row is from the reference."""
    return max(abs(r - 1) for r in ratios)


def misfit(ratios: Sequence[float]) -> float:
    """Mean squared log ratio: what `fit` minimises."""
    return sum(math.log(r) ** 2 for r in ratios) / len(ratios)


def error_lines(name: str, rows: Sequence[tuple[str, float]]) -> list[str]:
    """The headline (held-out rows) and the fit rows' error of one table column.

    Args:
        name: what the ratios compare, e.g. "edgetpu_usb / Coral".
        rows: (FIT, HELD_OUT or RETIRED, ours / reference) per row; retired rows count in neither.
    """
    out = []
    for label in (HELD_OUT, FIT):
        ratios = [r for kind, r in rows if kind == label]
        if ratios:
            out.append(f"{name}: {label} rows ({len(ratios)}): geometric-mean error "
                       f"{geomean_error(ratios) * 100:.0f}%, worst {worst_error(ratios) * 100:.0f}%")
        elif label == HELD_OUT:
            out.append(f"{name}: no held-out row yet: every row informed a number, so none is an independent check")
    return out


def fit(ratios_of: Callable[[Mapping[str, float]], Sequence[float]], start: Mapping[str, float],
        integers: frozenset[str] = frozenset(), upper: Mapping[str, float] | None = None,
        rounds: int = 4) -> dict[str, float]:
    """The values (key path -> number) near `start` that minimise `misfit(ratios_of(values))`.

    Coordinate descent: each value in turn is multiplied or divided by each of `STEPS` while
    that lowers the misfit. Keys in `integers` stay whole numbers (config counts); a key in
    `upper` stays at or below its bound (a fraction stays <= 1).
    """
    upper = upper or {}

    def rounded(values: Mapping[str, float]) -> dict[str, float]:
        values = {k: min(v, upper.get(k, v)) for k, v in values.items()}
        return {k: max(1, round(v)) if k in integers else v for k, v in values.items()}

    best = rounded(start)
    error = misfit(ratios_of(best))
    for _ in range(rounds):
        for step in STEPS:
            for key in best:
                for factor in (step, 1 / step):
                    while True:
                        trial = rounded({**best, key: best[key] * factor})
                        if trial == best:
                            break
                        trial_error = misfit(ratios_of(trial))
                        if trial_error >= error:
                            break
                        best, error = trial, trial_error
    return best
