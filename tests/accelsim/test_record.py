"""Records of real design points have exactly the keys and value types `accelsim.core.record` declares, at every
level."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Union

import pytest

from accelsim.core.feasibility import Infeasible
from accelsim.core.record import (
    AREA_KEYS,
    DETAIL_KEYS,
    INFEASIBLE_KEY,
    LLM_KEY,
    UNMODELLED_KEY,
    WARNINGS_KEY,
    LayerRow,
    PointHeader,
    PointResult,
)
from accelsim.experiments.executors import SerialExecutor, point_error, run_point
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import design_points
from accelsim.experiments.run import run_experiment
from accelsim.reports.results import layer_rows

MODELS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models"

# Every nested row kind must show up non-empty in some record, so no check below is vacuous.
ROW_KEYS = ("partition_table", "op_profile", "op_summary", "node_costs", "rejected", "loops", "events")


def check(value: Any, tp: Any, where: str) -> None:
    """Assert `value` is of the annotation `tp`; TypedDicts must have their required keys and no others."""
    origin = typing.get_origin(tp)
    if typing.is_typeddict(tp):
        assert isinstance(value, dict), f"{where}: expected a dict, got {value!r}"
        missing = tp.__required_keys__ - value.keys()
        extra = value.keys() - tp.__required_keys__ - tp.__optional_keys__
        assert not missing and not extra, f"{where}: missing {sorted(missing)}, not declared {sorted(extra)}"
        hints = typing.get_type_hints(tp)
        for key, item in value.items():
            check(item, hints[key], f"{where}.{key}")
    elif origin in (Union, types.UnionType):
        errors = []
        for option in typing.get_args(tp):
            try:
                check(value, option, where)
                return
            except AssertionError as exc:
                errors.append(str(exc))
        raise AssertionError(f"{where}: {value!r} is none of {tp} ({'; '.join(errors)})")
    elif origin is list:
        assert isinstance(value, list), f"{where}: expected a list, got {value!r}"
        (item_type,) = typing.get_args(tp)
        for k, item in enumerate(value):
            check(item, item_type, f"{where}[{k}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: expected a dict, got {value!r}"
        key_type, item_type = typing.get_args(tp)
        for key, item in value.items():
            check(key, key_type, f"{where} key")
            check(item, item_type, f"{where}[{key!r}]")
    elif tp is Any:
        return
    elif tp is type(None):
        assert value is None, f"{where}: expected None, got {value!r}"
    elif tp is int:
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: expected int, got {value!r}"
    else:
        # float fields hold floats (rounded with round(float)), never ints: JSON keeps the distinction.
        assert type(value) is tp, f"{where}: expected {tp.__name__}, got {type(value).__name__} {value!r}"


def check_point(rec: dict, where: str) -> None:
    """A record is a PointResult: an ok one has every key, a failed one exactly the header's; the detail
    lists (absent from points a `traces: pareto` experiment did not trace) and the area proxies (added
    as an experiment stores a point) are each all there or all absent."""
    check(rec, PointResult, where)
    expected = PointResult.__required_keys__ | PointResult.__optional_keys__ if rec["status"] == "ok" \
        else PointHeader.__required_keys__ | set(AREA_KEYS)
    # an infeasible point has its reason (and no numbers); an ok one names devices without energy only if any
    expected = expected - {INFEASIBLE_KEY} | ({INFEASIBLE_KEY} if rec["status"] == "infeasible" else set())
    if rec["status"] == "ok" and UNMODELLED_KEY not in rec:
        expected = expected - {UNMODELLED_KEY}
    if rec["status"] == "ok" and WARNINGS_KEY not in rec:
        expected = expected - {WARNINGS_KEY}
    if rec["status"] == "ok" and LLM_KEY not in rec:
        expected = expected - {LLM_KEY}
    for group in (DETAIL_KEYS, AREA_KEYS):
        if not set(group) & rec.keys():
            expected = expected - set(group)
    assert rec.keys() == expected, f"{where}: keys differ by {sorted(rec.keys() ^ expected)}"
    choice = rec.get("partition_choice")
    if choice is not None:  # list[list[Any]] in the TypedDict: the pairs are [accelerator name, ordinal]
        assert all(isinstance(u, str) and type(p) is int for u, p in choice["host_partitions"]), where


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> list[dict]:
    """Real records: host only, edgetpu_usb with policy tflite and cost, with numerics, a loop model, a failure;
    as run_experiment returns them, as results.json holds them and as run_point builds them."""
    folder = tmp_path_factory.mktemp("record")
    path = folder / "exp.yaml"
    path.write_text(f"""\
name: record
models: [{MODELS / 'interleaved_int8.tflite'}, {MODELS / 'lstm_gru_float.tflite'}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
sweeps:
  edgetpu_usb.partition.policy: [tflite, cost]
numerics: {{runs: 1}}
""")
    experiment = load_experiment(path)
    outcome = run_experiment(experiment, folder / "out", executor=SerialExecutor())
    stored = json.loads((folder / "out" / "results.json").read_text())["points"]
    points = design_points(experiment)
    options = {v.name: dict(v.options) for v in experiment.variants}
    fresh = [run_point(p, options[p.variant]) for p in points]  # as built, before the store's JSON round trip
    failed = point_error(points[0], ValueError("no such level 'l3'"))
    infeasible = point_error(points[0], Infeasible("memory", "sram holds 64 bytes"))
    assert (infeasible["status"], infeasible[INFEASIBLE_KEY]) == ("infeasible", "memory")
    return [*outcome.records, *stored, *fresh, failed, infeasible]


@pytest.mark.slow
def test_records_of_real_points_have_exactly_the_declared_keys_and_types(records):
    for k, rec in enumerate(records):
        check_point(rec, f"record {k} ({rec['variant']}, {rec['model_name']}, {rec['sweep']})")


@pytest.mark.slow
def test_the_fixture_covers_every_kind_of_point_and_row(records):
    ok = [r for r in records if r["status"] == "ok"]
    assert any(r["status"] == "error" for r in records)
    assert any(not r["accelerators"] for r in ok) and any(r["accelerators"] == ["edgetpu_usb"] for r in ok)
    assert all(r["numerics"] is not None for r in ok)
    assert any(r["partition_choice"] is not None for r in ok) and any(r["partition_choice"] is None for r in ok)
    assert any(r["speedup"] is not None for r in ok)
    for key in ROW_KEYS:
        assert any(r.get(key) for r in ok), f"no record has a non-empty {key}"
    # Stored points carry the area proxies; untraced ones (traces: pareto) are stored without the details.
    assert any(set(AREA_KEYS) <= r.keys() for r in records if r["status"] == "ok")
    assert any(not set(DETAIL_KEYS) & r.keys() for r in ok) and any(set(DETAIL_KEYS) <= r.keys() for r in ok)


@pytest.mark.slow
def test_layer_rows_are_layer_rows(records):
    for rec in (r for r in records if r["status"] == "ok" and "node_costs" in r):  # traced: with its details
        for k, row in enumerate(layer_rows(rec)):
            check(row, LayerRow, f"{rec['variant']} {rec['model_name']} layer {k}")


@pytest.mark.slow
def test_the_checker_rejects_a_missing_an_extra_and_a_mistyped_key(records):
    rec = next(r for r in records if r["status"] == "ok" and r.get("rejected"))
    without = {k: v for k, v in rec.items() if k != "id"}
    with pytest.raises(AssertionError, match=r"missing \['id'\]"):
        check_point(without, "r")
    with pytest.raises(AssertionError, match=r"not declared \['colour'\]"):
        check_point({**rec, "rejected": [{**rec["rejected"][0], "colour": "red"}]}, "r")
    with pytest.raises(AssertionError, match=r"r\.latency_us: .* is none of|expected float"):
        check_point({**rec, "latency_us": 3}, "r")
    with pytest.raises(AssertionError, match="keys differ by"):
        check_point({k: v for k, v in rec.items() if k != "events"}, "r")
    with pytest.raises(AssertionError, match="keys differ by"):
        # One area proxy without the other.
        check_point({**{k: v for k, v in rec.items() if k != "area_onchip_bytes"}, "area_macs": 4128}, "r")
