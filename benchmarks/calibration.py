"""Fit rows apart from held-out rows in the calibration tables (cost_vs_vela, cost_vs_coral, cost_vs_litert).

A row is `fit` when it informed a number in a shipped YAML (the YAML's comment for that number
names it), `held-out` when it never did. Only held-out rows say how well a config predicts a
model it was not tuned to, so each table's headline error is computed over them alone, with the
fit rows' error printed beside it; a table without a held-out row says so instead of a headline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

FIT, HELD_OUT = "fit", "held-out"


def geomean_error(ratios: Sequence[float]) -> float:
    """exp(mean |ln r|) - 1: the typical factor by which ours and the reference differ."""
    return math.exp(sum(abs(math.log(r)) for r in ratios) / len(ratios)) - 1


def error_lines(name: str, rows: Sequence[tuple[str, float]]) -> list[str]:
    """The headline (held-out rows) and the fit rows' error of one table column.

    Args:
        name: what the ratios compare, e.g. "edgetpu_usb / Coral".
        rows: (FIT or HELD_OUT, ours / reference) per row.
    """
    out = []
    for label in (HELD_OUT, FIT):
        ratios = [r for kind, r in rows if kind == label]
        if ratios:
            out.append(f"{name}: {label} rows ({len(ratios)}): geometric-mean error "
                       f"{geomean_error(ratios) * 100:.0f}%, worst {max(abs(r - 1) for r in ratios) * 100:.0f}%")
        elif label == HELD_OUT:
            out.append(f"{name}: no held-out row yet: every row informed a number, so none is an independent check")
    return out
