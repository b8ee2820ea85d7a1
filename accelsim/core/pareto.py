"""Pareto fronts of design points, and which points a report traces in detail.

A point dominates another when it is no worse in both objectives and better in at least one;
the front is the points nothing dominates. Every objective is minimised (latency, energy, MAC
units, on-chip bytes). Equal points do not dominate each other, so duplicates on the front all
stay on it.

The filter sorts once (O(n log n)) and reads dominance off a running minimum, so 100,000 points
take milliseconds; `non_dominated_reference` is the plain O(n²) definition it is tested against.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

# The fronts a report shows: (record key of x, record key of y), x always latency.
OBJECTIVES = {"latency_us": "latency (µs)", "energy_uj": "energy per inference (µJ)",
              "area_macs": "MAC units (peak MACs per cycle)", "area_onchip_bytes": "on-chip memory (bytes)"}
FRONTS = (("latency_us", "energy_uj"), ("latency_us", "area_macs"), ("latency_us", "area_onchip_bytes"))
TRACES = ("pareto", "all", "none")  # the experiment's `traces:` choices
DEFAULT_BEST = 5


def non_dominated(x: Any, y: Any) -> np.ndarray:
    """Which of the points (x[i], y[i]) no other point dominates (both objectives minimised).

    Args:
        x, y: equal-length 1-D sequences of finite or infinite numbers.

    Returns:
        A boolean array, True for the points on the front.

    Raises:
        ValueError: the lengths differ, or a value is NaN (NaN compares false both ways, so a
            front containing it would be arbitrary).
    """
    xs, ys = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in length: {xs.size} and {ys.size}")
    if np.isnan(xs).any() or np.isnan(ys).any():
        raise ValueError("objectives contain NaN; a Pareto front needs comparable values")
    n = xs.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((ys, xs))  # by x, then y
    sx, sy = xs[order], ys[order]
    # Every point lexicographically before a point is either left of it or directly below it, so a
    # point is dominated exactly when one of those (other than its own duplicates) is not above it.
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (sx[1:] != sx[:-1]) | (sy[1:] != sy[:-1])
    group_start = np.flatnonzero(new_group)[np.cumsum(new_group) - 1]
    running_min = np.minimum.accumulate(sy)
    # The first group has nothing before it (an inf sentinel would wrongly dominate a point at inf).
    dominated_sorted = (group_start > 0) & (running_min[np.maximum(group_start - 1, 0)] <= sy)
    mask = np.empty(n, dtype=bool)
    mask[order] = ~dominated_sorted
    return mask


def non_dominated_reference(x: Sequence[float], y: Sequence[float]) -> list[bool]:
    """The definition, point against point (O(n²)): the specification `non_dominated` is tested against."""
    points = list(zip(x, y))
    return [not any(a <= px and b <= py and (a < px or b < py) for a, b in points) for px, py in points]


def front_ids(records: Sequence[dict], x_key: str, y_key: str) -> list[str]:
    """Ids of the ok records on the front of (x_key, y_key), per model, sorted by x then y.

    A front compares designs for one model; records of several models get one front each.
    """
    ok = [r for r in records if r["status"] == "ok" and r.get(x_key) is not None and r.get(y_key) is not None]
    by_model: dict[str, list[dict]] = {}
    for r in ok:
        by_model.setdefault(r["model"], []).append(r)
    out = []
    for group in by_model.values():
        mask = non_dominated([r[x_key] for r in group], [r[y_key] for r in group])
        on = [r for r, keep in zip(group, mask) if keep]
        out += [r["id"] for r in sorted(on, key=lambda r: (r[x_key], r[y_key], r["id"]))]
    return out


def best_ids(records: Sequence[dict], k: int) -> list[str]:
    """Ids of the k ok records of lowest latency (ties by id), over every model."""
    ok = [r for r in records if r["status"] == "ok"]
    return [r["id"] for r in sorted(ok, key=lambda r: (r["latency_us"], r["id"]))[:k]]


def traced_ids(records: Sequence[dict], traces: str, best: int) -> Collection[str] | None:
    """The ids whose timelines a report writes: the points of every front and the best `best`.

    Returns:
        None for traces 'all' (every ok point), an empty set for 'none'.
    """
    if traces == "all":
        return None
    if traces == "none":
        return set()
    chosen = set(best_ids(records, best))
    for x_key, y_key in FRONTS:
        chosen.update(front_ids(records, x_key, y_key))
    return chosen
