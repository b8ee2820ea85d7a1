"""Pareto fronts: the vectorized filter against the O(n²) definition, and the traced selection."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.core.pareto import best_ids, front_ids, non_dominated, non_dominated_reference, traced_ids

# Few distinct values, so ties in one objective and exact duplicates are common.
_values = st.one_of(st.integers(0, 6).map(float), st.floats(-1e9, 1e9, allow_nan=False), st.just(np.inf))
_points = st.lists(st.tuples(_values, _values), max_size=60)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(_points)
def test_filter_matches_the_definition_with_ties_and_duplicates(points):
    x = [p[0] for p in points]
    y = [p[1] for p in points]
    assert non_dominated(x, y).tolist() == non_dominated_reference(x, y)


def test_duplicates_on_the_front_all_stay_and_ties_in_one_objective_are_dominated():
    #        a       a again  same x, higher y  same y, higher x  dominated   other end of the front
    x = [1.0, 1.0, 1.0, 2.0, 3.0, 0.5]
    y = [5.0, 5.0, 6.0, 5.0, 7.0, 9.0]
    assert non_dominated(x, y).tolist() == [True, True, False, False, False, True]


def test_empty_and_single():
    assert non_dominated([], []).tolist() == []
    assert non_dominated([3.0], [4.0]).tolist() == [True]


@pytest.mark.parametrize("x, y, message", [([1.0, 2.0], [1.0], "differ in length"),
                                           ([1.0, float("nan")], [1.0, 2.0], "NaN")])
def test_bad_input_is_refused(x, y, message):
    with pytest.raises(ValueError, match=message):
        non_dominated(x, y)


def _rec(i: int, model: str, latency: float, energy: float, macs: float = 1.0, status: str = "ok") -> dict:
    return {"id": f"{i:02d}", "model": model, "status": status, "latency_us": latency, "energy_uj": energy,
            "area_macs": macs, "area_onchip_bytes": 10.0}


def test_fronts_are_per_model_sorted_by_latency_and_skip_failures():
    records = [_rec(0, "a", 3, 1), _rec(1, "a", 1, 3), _rec(2, "a", 2, 2), _rec(3, "a", 3, 3),
               _rec(4, "b", 9, 9), {"id": "05", "model": "a", "status": "error"}]
    assert front_ids(records, "latency_us", "energy_uj") == ["01", "02", "00", "04"]


def test_traced_selection_is_fronts_plus_best_k():
    records = [_rec(0, "a", 3, 1, macs=9), _rec(1, "a", 1, 3, macs=9), _rec(2, "a", 4, 4, macs=1),
               _rec(3, "a", 5, 5, macs=9), _rec(4, "a", 6, 6, macs=9)]
    # Front of latency x energy: 1, 0; of latency x MACs: 1, 2; of latency x on-chip bytes: 1.
    assert traced_ids(records, "pareto", 0) == {"00", "01", "02"}
    assert traced_ids(records, "pareto", 4) == {"00", "01", "02", "03"}
    assert best_ids(records, 2) == ["01", "00"]
    assert traced_ids(records, "none", 5) == set()
    assert traced_ids(records, "all", 5) is None
