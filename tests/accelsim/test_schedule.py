"""The SimPy engine: schedules, overlap, totals and partition overhead."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.core.schedule import Step, replay, simulate


def _diamond():
    # host a -> (accel b via link in/out) and host c in parallel -> host d
    return [
        Step(0, "host", "compute", 1.0, "a"),
        Step(1, "acc.link", "transfer", 0.5, "b in", partition=0, bytes=100, deps=(0,)),
        Step(2, "acc", "overhead", 0.25, "b call", partition=0, deps=(1,)),
        Step(3, "acc", "compute", 2.0, "b", node=1, partition=0, deps=(2,)),
        Step(4, "acc.link", "transfer", 0.5, "b out", partition=0, bytes=50, deps=(3,)),
        Step(5, "host", "compute", 1.5, "c", deps=(0,)),
        Step(6, "host", "compute", 1.0, "d", deps=(4, 5)),
    ]


def test_sequential_is_the_sum_of_all_steps():
    r = simulate(_diamond(), "sequential")
    assert r.latency == pytest.approx(6.75)
    assert [e.label for e in r.events] == ["a", "b in", "b call", "b", "b out", "c", "d"]
    assert r.by_kind == {"compute": 5.5, "memory": 0.0, "transfer": 1.0, "overhead": 0.25, "param_load": 0.0}
    assert r.bytes_moved == 150
    assert r.partition_overhead == pytest.approx(1.25 / 6.75)


def test_dataflow_overlaps_host_and_accelerator():
    r = simulate(_diamond(), "dataflow")
    # a (0..1); accel path 1..4.25; c 1..2.5 on host; d waits for both -> 4.25..5.25
    assert r.latency == pytest.approx(5.25)
    start = {e.label: e.start for e in r.events}
    assert start["c"] == pytest.approx(1.0) and start["d"] == pytest.approx(4.25)
    assert r.utilization()["acc"] == pytest.approx(2.25 / 5.25)
    assert r.by_partition()[0]["transfer"] == pytest.approx(1.0)


def test_a_compute_steps_stall_counts_as_memory_time():
    steps = [Step(0, "acc", "compute", 2.0, "b", node=1, partition=0, stall=1.5), Step(1, "host", "compute", 1.0, "c")]
    r = simulate(steps)
    assert r.by_kind["compute"] == pytest.approx(1.5) and r.by_kind["memory"] == pytest.approx(1.5)
    assert r.busy == {"acc": 2.0, "host": 1.0} and r.latency == pytest.approx(3.0)
    assert r.by_partition()[0]["memory"] == pytest.approx(1.5)
    assert r.events[0].stall == 1.5 and r.events[0].times() == (("compute", 0.5), ("memory", 1.5))
    with pytest.raises(ValueError, match=r"step 0 \(b\): stall must be within 0..duration \(2.0 s\), got 2.5"):
        Step(0, "acc", "compute", 2.0, "b", stall=2.5)


def test_one_resource_serves_one_step_at_a_time():
    steps = [Step(i, "host", "compute", 1.0, f"s{i}") for i in range(3)]
    r = simulate(steps, "dataflow")
    assert r.latency == pytest.approx(3.0)
    assert [(e.start, e.end) for e in r.events] == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]


def test_results_are_deterministic():
    a, b = simulate(_diamond(), "dataflow"), simulate(_diamond(), "dataflow")
    assert a == b


def test_bad_steps_are_refused_with_the_step_named():
    with pytest.raises(ValueError, match="kind 'think'"):
        Step(0, "host", "think", 1.0, "x")
    with pytest.raises(ValueError, match=r"step 0 \(x\): duration must be >= 0"):
        Step(0, "host", "compute", -1.0, "x")
    with pytest.raises(ValueError, match="unknown step 9"):
        simulate([Step(0, "host", "compute", 1.0, "x", deps=(9,))])
    with pytest.raises(ValueError, match="not listed before it"):
        simulate([Step(0, "host", "compute", 1.0, "x", deps=(1,)), Step(1, "host", "compute", 1.0, "y")])
    with pytest.raises(ValueError, match="repeated"):
        simulate([Step(0, "host", "compute", 1.0, "x"), Step(0, "host", "compute", 1.0, "y")])
    with pytest.raises(ValueError, match="schedule 'eager'"):
        simulate([], "eager")


def test_empty_inference_takes_no_time():
    r = simulate([])
    assert r.latency == 0.0 and r.partition_overhead == 0.0 and r.utilization() == {}


_RESOURCES = ("host", "acc", "acc.link", "dsp")


@st.composite
def _step_lists(draw):
    """Valid inferences: steps on a few resources, each depending on some earlier steps."""
    steps = []
    for i in range(draw(st.integers(1, 25))):
        deps = tuple(sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)))) if i else ()
        duration = draw(st.sampled_from((0.0, 0.25, 0.5, 1.0, 3.0)))
        steps.append(Step(i, draw(st.sampled_from(_RESOURCES)), "compute", duration, f"s{i}", deps=deps))
    return steps


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_step_lists())
def test_schedules_keep_dependencies_and_one_step_per_resource(steps):
    """Sequential runs the list back to back in order; dataflow never waits longer and keeps every rule."""
    seq, flow = simulate(steps, "sequential"), simulate(steps, "dataflow")
    ordered = sorted(seq.events, key=lambda e: e.step)
    assert [e.step for e in seq.events] == [s.id for s in steps]
    assert ordered[0].start == 0.0
    assert all(b.start == a.end for a, b in zip(ordered, ordered[1:]))
    assert seq.latency == pytest.approx(sum(s.duration for s in steps))
    assert flow.latency <= seq.latency + 1e-12
    for result in (seq, flow):
        end = {e.step: e.end for e in result.events}
        start = {e.step: e.start for e in result.events}
        assert all(end[d] <= start[s.id] for s in steps for d in s.deps)
        for r in _RESOURCES:
            spans = sorted((e.start, e.end) for e in result.events if e.resource == r)
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
        assert result.busy == pytest.approx({r: sum(s.duration for s in steps if s.resource == r)
                                             for r in dict.fromkeys(s.resource for s in steps)})



@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_step_lists(), st.permutations(range(25)), st.lists(st.floats(0, 1e-3), min_size=25, max_size=25))
def test_closed_form_sequential_equals_the_simpy_replay_bit_for_bit(steps, ids, durations):
    """The running clock adds the durations SimPy's clock adds: timelines and totals are equal, not close.

    Ids are shuffled (zero-length steps then sort by id, as the replay sorts them) and durations
    are arbitrary floats, so rounding in the sums would show.
    """
    steps = [dataclasses.replace(s, id=ids[s.id], deps=tuple(ids[d] for d in s.deps),
                                 duration=durations[s.id] if s.duration else 0.0) for s in steps]
    assert simulate(steps, "sequential") == replay(steps, "sequential")
