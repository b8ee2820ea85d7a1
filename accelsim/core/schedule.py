"""Discrete-event replay of an inference on SimPy resources.

An inference is a list of `Step`s: each occupies one resource (the host CPU, an
accelerator, or a link's DMA engine) for a duration, after the steps it depends
on have finished. Two schedules:

- ``sequential``: TFLite's order, one step at a time (each step also waits for the
  one before it) — what the interpreter does on one thread. Nothing ever waits for a
  resource, so it is computed in closed form: a running clock, each step starting
  where the one before it ended (`sequential_timeline`; the same float additions a
  SimPy replay does, so the timelines are equal bit for bit, which the tests check).
- ``dataflow``: a step starts as soon as its dependencies are done and its resource
  is free, so the host and accelerators overlap on independent branches: replayed
  on SimPy resources.

Every resource has capacity 1 and serves requests first come, first served (SimPy's
`Resource`), so results are deterministic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import simpy

STEP_KINDS = ("compute", "transfer", "overhead", "param_load")
# What a run's time is spent on: a step's kind, except that the `stall` of a compute step
# (its node waiting on a memory level beyond its compute time) counts as memory.
TIME_KINDS = ("compute", "memory", "transfer", "overhead", "param_load")
SCHEDULES = ("sequential", "dataflow")


@dataclass(frozen=True)
class Step:
    """One piece of work on one resource.

    Args:
        id: unique within the inference; `deps` refer to these.
        resource: name of the resource it occupies ("host", "edgetpu_usb", "edgetpu_usb.link").
        kind: compute | transfer | overhead | param_load.
        duration: seconds.
        label: what it is, for timelines ("CONV_2D #4", "partition 1 inputs").
        node: the execution-plan node it belongs to (None for partition-level steps).
        partition: the delegate partition it belongs to (None for host nodes).
        bytes: bytes moved (transfers, parameter loads).
        deps: ids of steps that must finish first.
        stall: seconds of `duration` a compute step waits on memory (0 <= stall <= duration).
    """

    id: int
    resource: str
    kind: str
    duration: float
    label: str
    node: int | None = None
    partition: int | None = None
    bytes: int = 0
    deps: tuple[int, ...] = ()
    stall: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"step {self.id}: kind {self.kind!r} is not one of {STEP_KINDS}")
        if not self.duration >= 0:
            raise ValueError(f"step {self.id} ({self.label}): duration must be >= 0 seconds, got {self.duration}")
        if not 0 <= self.stall <= self.duration:
            raise ValueError(f"step {self.id} ({self.label}): stall must be within 0..duration ({self.duration} s), "
                             f"got {self.stall}")


@dataclass(frozen=True)
class Event:
    """A step as it ran: where and when."""

    step: int
    resource: str
    kind: str
    label: str
    start: float
    end: float
    node: int | None = None
    partition: int | None = None
    bytes: int = 0
    stall: float = 0.0

    @property
    def duration(self) -> float:
        return self.end - self.start

    def times(self) -> tuple[tuple[str, float], ...]:
        """(time kind, seconds) of this event: its stall as memory, the rest as its kind."""
        if self.stall:
            return (self.kind, self.duration - self.stall), ("memory", self.stall)
        return ((self.kind, self.duration),)


@dataclass(frozen=True)
class SimResult:
    """The timeline of one inference and its totals (seconds by TIME_KINDS and by resource, bytes)."""

    events: tuple[Event, ...]
    schedule: str
    latency: float
    by_kind: dict[str, float] = field(default_factory=dict)
    busy: dict[str, float] = field(default_factory=dict)
    bytes_moved: int = 0

    @property
    def partition_overhead(self) -> float:
        """Transfer + call-overhead time as a share of latency (0..1)."""
        if self.latency <= 0:
            return 0.0
        return (self.by_kind.get("transfer", 0.0) + self.by_kind.get("overhead", 0.0)) / self.latency

    def utilization(self) -> dict[str, float]:
        """Busy time / latency for each resource."""
        if self.latency <= 0:
            return {r: 0.0 for r in self.busy}
        return {r: b / self.latency for r, b in self.busy.items()}

    def by_partition(self) -> dict[int, dict[str, float]]:
        """Seconds per kind for each delegate partition."""
        out: dict[int, dict[str, float]] = defaultdict(lambda: dict.fromkeys(TIME_KINDS, 0.0))
        for e in self.events:
            if e.partition is not None:
                for kind, seconds in e.times():
                    out[e.partition][kind] += seconds
        return dict(out)


def _check(steps: Sequence[Step]) -> None:
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"step ids must be unique; repeated: {dup}")
    known = set(ids)
    position = {s.id: i for i, s in enumerate(steps)}
    for s in steps:
        for d in s.deps:
            if d not in known:
                raise ValueError(f"step {s.id} ({s.label}) depends on unknown step {d}")
            if position[d] >= position[s.id]:
                raise ValueError(f"step {s.id} ({s.label}) depends on step {d}, which is not listed before it")


def simulate(steps: Sequence[Step], schedule: str = "sequential") -> SimResult:
    """The timeline of the steps: in closed form for ``sequential``, on SimPy resources for ``dataflow``.

    Steps must be listed in a valid order (every dependency before its dependant),
    which the execution plan gives for free.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule {schedule!r} is not one of {SCHEDULES}")
    _check(steps)
    if schedule == "dataflow":
        return replay(steps, schedule)
    return _result(sequential_timeline(steps), schedule, steps)


def sequential_timeline(steps: Sequence[Step]) -> list[Event]:
    """Events of steps run one after another in list order: each starts where the one before it ended.

    Each step waits for the one before it, which itself waited for every earlier step, so all of
    a step's dependencies are done when it starts and no two steps ever compete for a resource:
    the clock is a running sum of durations (SimPy's `env.now + delay`, the same additions).
    """
    events = []
    clock = 0.0
    for step in steps:
        start, clock = clock, clock + step.duration
        events.append(Event(step.id, step.resource, step.kind, step.label, start, clock,
                            step.node, step.partition, step.bytes, step.stall))
    # Already in start order but for zero-length steps listed against their ids: the replay's order.
    events.sort(key=_start_order)
    return events


def replay(steps: Sequence[Step], schedule: str) -> SimResult:
    """The steps replayed on SimPy resources (capacity 1, first come first served), for any schedule.

    Sequential: one process walks the list (a process per step, as dataflow needs, costs ~17 us
    per step and gives the same timeline). Dataflow: a process per step waits for its
    dependencies, then for its resource.
    """
    env = simpy.Environment()
    resources = {name: simpy.Resource(env, capacity=1) for name in dict.fromkeys(s.resource for s in steps)}
    finished = {s.id: env.event() for s in steps} if schedule == "dataflow" else {}
    events: list[Event] = []

    def done(step: Step, start: float) -> None:
        events.append(Event(step.id, step.resource, step.kind, step.label, start, env.now,
                            step.node, step.partition, step.bytes, step.stall))

    def in_order():
        for step in steps:
            start = env.now
            yield env.timeout(step.duration)
            done(step, start)

    def run(step: Step, before: Iterable[int]):
        waits = [finished[d] for d in before]
        if len(waits) == 1:
            yield waits[0]  # the common case; an AllOf of one event costs a condition and an extra hop
        elif waits:
            yield simpy.AllOf(env, waits)
        with resources[step.resource].request() as slot:
            yield slot
            start = env.now
            yield env.timeout(step.duration)
            done(step, start)
        finished[step.id].succeed()

    if schedule == "sequential":
        env.process(in_order())
    else:
        for step in steps:
            env.process(run(step, sorted(set(step.deps))))
    env.run()
    events.sort(key=_start_order)
    return _result(events, schedule, steps)


def _start_order(e: Event) -> tuple[float, float, int]:
    return e.start, e.end, e.step


def _result(events: Sequence[Event], schedule: str, steps: Sequence[Step]) -> SimResult:
    """Totals of the timeline of `steps`: seconds by time kind and by resource, latency, bytes moved."""
    by_kind = dict.fromkeys(TIME_KINDS, 0.0)
    busy: dict[str, float] = dict.fromkeys((s.resource for s in steps), 0.0)
    for e in events:
        for kind, seconds in e.times():
            by_kind[kind] += seconds
        busy[e.resource] += e.duration
    latency = max((e.end for e in events), default=0.0)
    moved = sum(e.bytes for e in events if e.kind in ("transfer", "param_load"))
    return SimResult(tuple(events), schedule, latency, by_kind, busy, moved)
