"""Streams: frames of one or more models arriving over time, replayed on a system's shared units with SimPy.

A stream is one model with an arrival pattern: a `rate` (frames per second, frame k at k / rate), or
back-to-back (the next frame as soon as one finishes, `max_in_flight` kept in flight), or, with
`depends_on`, frame k arrives when every stream it depends on has finished its frame k (model B on model
A's output, as a MediaPipe graph runs it). A flow limit follows MediaPipe's FlowLimiterCalculator
(google-ai-edge/mediapipe, mediapipe/calculators/core/flow_limiter_calculator.cc: "As long as the number of
timestamps being processed ('in flight') is below the limit, FLC allows input to pass through. When the
limit is reached, FLC starts dropping input packets, keeping only the most recent"): at most
`max_in_flight` frames in flight; a frame arriving over the limit waits in a queue of `max_in_queue`
(0: it is dropped; 1: it replaces the frame waiting there, which is dropped), released when a frame finishes.
A frame is in flight until it and every frame made from it downstream have finished (FLC's FINISHED input
is a back edge from the end of the graph section it guards), so a detector's limit covers its landmarks.

Each frame replays the steps one inference of its model produces (`accelsim.simulation.costing.inference_steps`,
the same steps `assemble` schedules), so frames of one stream and of several streams overlap on different
units. Contention, with SimPy:

- a unit (the host, an accelerator) runs one step at a time, first come first served; a frame holds it for
  its consecutive steps there and on its link: one delegate invocation (inputs in, call, nodes, outputs out)
  is not interleaved with another's, as a LiteRT Invoke on an Edge TPU is not (schedule `dataflow`: each
  step holds only its own resource, as in the single-inference dataflow schedule);
- a link is shared: every transfer in progress on it gets an equal share of it (processor sharing), so two
  transfers each take twice as long, not each the whole link;
- DRAM is shared by the units of one system: steps whose time is bound by a level named `dram` (or by host
  memory over a shared-memory link) progress at an equal share while several run at once. A step bound by
  compute is not slowed (its traffic hides under its compute), which is optimistic when traffic is close to
  compute: listed in `ASSUMPTIONS`.

With one stream, one frame in flight and nothing else running, a frame's timeline is the single-inference
simulation's (the first frame's equal bit for bit; later frames' to float rounding of their start time).
Modes over several accelerators of one kind: `replicas` (each frame to the next free copy, LiteRT's usual
multi-TPU pattern; the host is shared) and `pipeline` (`accelsim.workloads.segments`).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import simpy

from accelsim.core.feasibility import Infeasible
from accelsim.core.schedule import SCHEDULES, Step
from accelsim.hardware.config import System
from accelsim.hardware.memory import LINK
from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.analysis import analyze
from accelsim.simulation.costing import assemble, cost_works, inference_steps
from accelsim.simulation.inference import HOST, Simulation
from accelsim.workloads.segments import SEGMENTATIONS, Profile, SegmentError, pipeline, unit_copies

MODES = ("single", "replicas", "pipeline")
DRAM = "dram"
ASSUMPTIONS = (
    "a link's transfers share it equally (processor sharing), the per-transfer latency included",
    "DRAM is shared by every unit of the system; only steps bound by DRAM (or host memory over a shared-memory "
    "link) share it, each running ones equally; compute-bound steps are not slowed",
    "a frame holds a unit for its consecutive steps there and on its link (one delegate invocation); units serve "
    "frames first come, first served",
    "copies of an accelerator (replicas, pipeline segments) each have their own link (a USB port or PCIe slot "
    "each), sharing only the host, unless shared_link puts them on one bus",
)


class StreamError(ValueError):
    """A stream workload that cannot run: every problem, one per line, before anything is simulated."""

    def __init__(self, problems: Sequence[str]):
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class StreamSpec:
    """One model's stream.

    Args:
        name: unique among the workload's streams.
        model: a .tflite path, its bytes or a parsed Model.
        frames: frames offered (for a dependent stream: at most that many of its inputs' frames).
        rate: frames per second; None: back-to-back (or, with `depends_on`, driven by its inputs).
        depends_on: streams whose frame k this one's frame k waits for.
        max_in_flight: the flow limit; None: no limit (back-to-back: one per copy of the accelerator).
        max_in_queue: frames waiting at the flow limit (0: a frame over it is dropped).
    """

    name: str
    model: Any
    frames: int = 100
    rate: float | None = None
    depends_on: tuple[str, ...] = ()
    max_in_flight: int | None = None
    max_in_queue: int = 0


@dataclass(frozen=True)
class Workload:
    """Streams on one system: `mode` over `count` copies of its accelerator, `segmentation` for a pipeline."""

    streams: tuple[StreamSpec, ...]
    mode: str = "single"
    count: int = 1
    segmentation: str = "compiler"
    schedule: str = "sequential"
    trace_frames: int = 20  # frames per stream kept in the trace events
    shared_link: bool = False  # the copies share one link (one USB bus, one AXI port) instead of one each


@dataclass(frozen=True)
class _Plan:
    """One stream made ready: one frame's steps per replica, the single-inference reference, its segments."""

    spec: StreamSpec
    steps: tuple[tuple[Step, ...], ...]  # one per replica (one for single and pipeline)
    dram: tuple[frozenset[int], ...]  # ids of each replica's steps that share DRAM
    moved: tuple[Mapping[int, int], ...]  # bytes each step moves (its transfers, its nodes' level traffic)
    single: Simulation
    segments: tuple = ()


def _name(spec: StreamSpec) -> str:
    return spec.name


def check(workload: Workload) -> None:
    """Every problem of the workload's own settings (not its models'), raised together.

    Raises:
        StreamError: duplicate or unknown stream names, a dependency cycle, a rate <= 0, frames < 1, a flow
            limit < 1, an unknown mode, segmentation or schedule, a count < 1, or a count > 1 in mode single.
    """
    problems = []
    w = workload
    if w.mode not in MODES:
        problems.append(f"streams.mode: {w.mode!r} is not one of {list(MODES)}")
    if w.segmentation not in SEGMENTATIONS:
        problems.append(f"streams.segmentation: {w.segmentation!r} is not one of {list(SEGMENTATIONS)}")
    if w.schedule not in SCHEDULES:
        problems.append(f"schedule: {w.schedule!r} is not one of {list(SCHEDULES)}")
    if not isinstance(w.count, int) or w.count < 1:
        problems.append(f"streams.count: must be a whole number >= 1, got {w.count!r}")
    elif w.mode == "single" and w.count != 1:  # with one copy, replicas and pipeline are the system as given
        problems.append(f"streams.count: {w.count} copies need mode replicas or pipeline, not single")
    if not w.streams:
        problems.append("streams: no stream given")
    names = [s.name for s in w.streams]
    for n in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"streams: stream name {n!r} is given twice")
    for s in w.streams:
        where = f"streams.{s.name}"
        if s.rate is not None and not (isinstance(s.rate, (int, float)) and s.rate > 0):
            problems.append(f"{where}.rate: must be > 0 frames per second, got {s.rate!r}")
        if s.rate is not None and s.depends_on:
            problems.append(f"{where}: a dependent stream's frames come from {list(s.depends_on)}; give no rate")
        if not isinstance(s.frames, int) or s.frames < 1:
            problems.append(f"{where}.frames: must be a whole number >= 1, got {s.frames!r}")
        if s.max_in_flight is not None and (not isinstance(s.max_in_flight, int) or s.max_in_flight < 1):
            problems.append(f"{where}.max_in_flight: must be a whole number >= 1, got {s.max_in_flight!r}")
        if not isinstance(s.max_in_queue, int) or s.max_in_queue < 0:
            problems.append(f"{where}.max_in_queue: must be a whole number >= 0, got {s.max_in_queue!r}")
        for d in s.depends_on:
            if d not in names:
                problems.append(f"{where}.depends_on: unknown stream {d!r}; streams: {names}")
    cycle = _cycle({s.name: s.depends_on for s in w.streams})
    if cycle:
        problems.append(f"streams: the dependencies form a cycle: {' -> '.join(cycle)}")
    if problems:
        raise StreamError(problems)


def _cycle(deps: Mapping[str, Sequence[str]]) -> list[str]:
    """A dependency cycle as a path (first name repeated at the end), or [] when there is none."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(n: str) -> list[str]:
        state[n] = 1
        path.append(n)
        for d in deps.get(n, ()):
            if d not in deps:
                continue
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        state[n] = 2
        path.pop()
        return []

    for n in deps:
        if n not in state:
            found = visit(n)
            if found:
                return found
    return []


def _as_model(model: Any) -> tuple[Model, str]:
    if isinstance(model, Model):
        return model, "<model>"
    if isinstance(model, bytes):
        return load_model(model), "<model>"
    return load_model(str(model)), str(model)


def _dram_steps(steps: Sequence[Step], costs, system: System) -> frozenset[int]:
    shared_links = {a.name for a in system.accelerators if a.hardware.link.shared_memory}
    out = set()
    for s in steps:
        if s.kind != "compute" or s.stall <= 0 or s.node is None or s.node not in costs.where_run:
            continue
        bound = costs.where_run[s.node][0].bound
        if bound == DRAM or (bound == LINK and s.resource in shared_links):
            out.add(s.id)
    return frozenset(out)


def _moved(steps: Sequence[Step], costs) -> dict[int, int]:
    return {s.id: s.bytes if s.kind == "transfer" or s.node is None or s.node not in costs.where_run
            else sum(n for _, n in costs.where_run[s.node][0].level_bytes) for s in steps}


def _renamed(steps: Sequence[Step], names: Mapping[str, str]) -> tuple[Step, ...]:
    out = []
    for s in steps:
        unit = s.resource.removesuffix(".link")
        if unit in names:
            res = names[unit] + s.resource[len(unit):]
            s = Step(s.id, res, s.kind, s.duration, s.label, s.node, s.partition, s.bytes, s.deps, s.stall)
        out.append(s)
    return tuple(out)


def prepare(workload: Workload, system: System, loops: LoopTrips | None = None) -> list[_Plan]:
    """Check the workload, then analyse and cost every stream's model: nothing is simulated yet.

    Raises:
        StreamError: the workload's settings (`check`), a model that cannot be read or costed, copies of a
            system with other than one accelerator, an accelerator that runs none of a model's ops, or segments
            the model cannot have.
        Infeasible: the hardware cannot run a model (its weights or activations do not fit).
    """
    check(workload)
    problems = []
    if workload.count > 1 and len(system.accelerators) != 1:
        problems.append(f"streams.mode {workload.mode}: copies one accelerator kind; the system has "
                        f"{len(system.accelerators)} accelerators ({[a.name for a in system.accelerators]})")
    if problems:
        raise StreamError(problems)
    plans = []
    for spec in workload.streams:
        try:
            plans.append(_plan(spec, workload, system, loops))
        except Infeasible:  # the hardware cannot run the model: a verdict with its reason, not bad input
            raise
        except (SegmentError, ValueError, KeyError) as exc:
            problems.append(f"streams.{spec.name} ({_label(spec.model)}): {exc}")
    if problems:
        raise StreamError(problems)
    return plans


def _label(model: Any) -> str:
    return Path(model).name if isinstance(model, (str, Path)) else "<model>"


def _plan(spec: StreamSpec, workload: Workload, system: System, loops: LoopTrips | None) -> _Plan:
    model, name = _as_model(spec.model)
    analysis = analyze(model, system, workload.schedule, loops)
    costs = cost_works(analysis.works, system, analysis.loops)
    single = assemble(analysis.interpreter, analysis.delegates, system, costs, workload.schedule, name, frozenset(),
                      analysis.choice)
    if workload.count > 1 and not any(n.unit != HOST for n in single.nodes):
        accel = system.accelerators[0].name
        raise SegmentError(f"{accel} runs none of the model's ops: {workload.count} copies of it would idle "
                           "(no unit but the host can run the model here)")
    steps = inference_steps(analysis.interpreter, analysis.delegates, system, costs)
    if workload.mode == "pipeline" and workload.count > 1:
        pipe = pipeline(model, system, workload.count, workload.segmentation,
                        Profile(model, system.host, system.accelerators[0], loops), loops)
        return _Plan(spec, (pipe.steps,), (_dram_steps(pipe.steps, pipe.costs, pipe.system),),
                     (_moved(pipe.steps, pipe.costs),), single, pipe.segments)
    if workload.mode == "replicas" and workload.count > 1:
        accel = system.accelerators[0]
        copies = unit_copies(accel, workload.count)
        variants = tuple(_renamed(steps, {accel.name: c.name}) for c in copies)
        dram = _dram_steps(steps, costs, system)
        return _Plan(spec, variants, (dram,) * len(variants), (_moved(steps, costs),) * len(variants), single)
    return _Plan(spec, (steps,), (_dram_steps(steps, costs, system),), (_moved(steps, costs),), single)


class _Shared:
    """A resource shared by processor sharing: every job in progress advances at 1/n of its own full rate."""

    def __init__(self, env: simpy.Environment):
        self.env = env
        self.jobs: list[list] = []  # [remaining seconds at full rate, event]
        self.last = 0.0
        self.gen = 0
        self.busy = 0.0

    def _advance(self) -> None:
        now = self.env.now
        if self.jobs:
            dt = now - self.last
            self.busy += dt
            share = dt / len(self.jobs)
            for j in self.jobs:
                j[0] -= share
        self.last = now

    def use(self, work: float) -> simpy.Event:
        self._advance()
        done = self.env.event()
        self.jobs.append([work, done])
        self._arm()
        return done

    def _arm(self) -> None:
        self.gen += 1
        if not self.jobs:
            return
        gen = self.gen
        delay = max(0.0, min(j[0] for j in self.jobs) * len(self.jobs))
        self.env.timeout(delay).callbacks.append(lambda _ev: self._wake(gen))

    def _wake(self, gen: int) -> None:
        if gen != self.gen:
            return
        self._advance()
        least = min(j[0] for j in self.jobs)
        finished = [j for j in self.jobs if j[0] <= least + 1e-15]
        self.jobs = [j for j in self.jobs if j[0] > least + 1e-15]
        for j in finished:
            j[1].succeed()
        self._arm()


@dataclass(frozen=True, kw_only=True)
class StreamStats:
    """One stream's results: frames, throughput (frames per second), latency (arrival to finish) percentiles."""

    name: str
    model: str
    offered: int
    completed: int
    dropped: int
    throughput_per_s: float
    latency_p50_s: float
    latency_p90_s: float
    latency_p99_s: float
    latency_mean_s: float
    single_latency_s: float  # one inference alone (the single-inference simulation)
    # from the source frame's arrival (a dependent stream's whole chain; the same as latency for a source)
    end_to_end_p50_s: float = 0.0
    end_to_end_p99_s: float = 0.0
    arrivals: tuple[float, ...]  # of completed frames, in completion order
    latencies: tuple[float, ...]
    segments: tuple = ()


@dataclass(frozen=True)
class UnitStats:
    """One unit (host, accelerator, link, dram): busy time, utilisation, time frames waited for it, bytes moved."""

    name: str
    busy_s: float
    utilization: float
    queueing_s: float
    bytes: int
    busy_per_frame_s: float


@dataclass(frozen=True)
class StreamsResult:
    """A stream workload's results: per stream, per unit, the bottleneck, and the trace's events."""

    streams: tuple[StreamStats, ...]
    units: tuple[UnitStats, ...]
    bottleneck: str
    makespan_s: float
    mode: str
    count: int
    segmentation: str
    events: tuple[dict, ...] = field(default=(), repr=False)
    accelerators: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain data: every stream's and unit's numbers, the bottleneck; the first stream's at the top level."""
        def stream(s: StreamStats) -> dict[str, Any]:
            return {"name": s.name, "model": s.model, "offered": s.offered, "completed": s.completed,
                    "dropped": s.dropped, "throughput_per_s": s.throughput_per_s, "latency_p50_s": s.latency_p50_s,
                    "latency_p90_s": s.latency_p90_s, "latency_p99_s": s.latency_p99_s,
                    "latency_mean_s": s.latency_mean_s, "single_latency_s": s.single_latency_s,
                    "end_to_end_p50_s": s.end_to_end_p50_s, "end_to_end_p99_s": s.end_to_end_p99_s,
                    "segments": [segment_json(g) for g in s.segments]}

        first = stream(self.streams[0])
        return {**{k: first[k] for k in ("throughput_per_s", "latency_p50_s", "latency_p90_s", "latency_p99_s",
                                          "dropped", "segments")},
                "mode": self.mode, "count": self.count, "segmentation": self.segmentation,
                "makespan_s": self.makespan_s, "bottleneck": self.bottleneck,
                "streams": [stream(s) for s in self.streams],
                "units": [{"name": u.name, "busy_s": u.busy_s, "utilization": u.utilization,
                           "queueing_s": u.queueing_s, "bytes": u.bytes, "busy_per_frame_s": u.busy_per_frame_s}
                          for u in self.units],
                "assumptions": list(ASSUMPTIONS)}

    def trace_record(self, label: str = "stream") -> dict[str, Any]:
        """The events as a record `accelsim.core.trace.trace_document` draws (one lane per unit)."""
        return {"id": label, "model_name": ", ".join(s.name for s in self.streams), "variant": self.mode,
                "latency_us": self.makespan_s * 1e6, "accelerators": list(self.accelerators),
                "events": list(self.events)}


def segment_json(g) -> dict[str, Any]:
    return {"unit": g.unit, "first_node": g.first_node, "last_node": g.last_node, "ops": len(g.nodes),
            "parameter_bytes": g.parameter_bytes, "cached_bytes": g.cached_bytes, "time_s": g.time_s}


def simulate_streams(workload: Workload, system: System, loops: LoopTrips | None = None) -> StreamsResult:
    """Check and prepare the workload (`prepare`: every error before anything runs), then simulate it."""
    return run(workload, prepare(workload, system, loops), system)


class _Engine:
    def __init__(self, workload: Workload, plans: Sequence[_Plan]):
        self.env = env = simpy.Environment()
        self.w = workload
        self.plans = {p.spec.name: p for p in plans}
        names = {s.resource for p in plans for steps in p.steps for s in steps}
        self.units = {n: simpy.Resource(env, capacity=1) for n in sorted({r.removesuffix(".link") for r in names})}
        links = sorted(n for n in names if n.endswith(".link"))
        # copies on one bus: every `<name>#<k>.link` is the one link `<name>.link`
        bus = {n: re.sub(r"#\d+\.link$", ".link", n) if workload.shared_link else n for n in links}
        pools = {b: _Shared(env) for b in bus.values()}
        self.links = {n: pools[bus[n]] for n in links}
        self.bus = {**{n: n for n in names}, **bus}  # where a step's time and bytes are counted
        self.dram = _Shared(env)
        self.busy = dict.fromkeys([*self.units, *pools, DRAM], 0.0)
        self.pools = pools
        self.wait = dict.fromkeys(self.busy, 0.0)
        self.bytes = dict.fromkeys(self.busy, 0)
        replicas = max(len(p.steps) for p in plans)
        self.free = simpy.Store(env)
        self.free.items.extend(range(replicas))
        self.replicated = replicas > 1
        self.events: list[dict] = []
        self.arrivals = {n: {} for n in self.plans}
        self.origins = {n: {} for n in self.plans}  # the source frame's arrival
        self.finished = {n: {} for n in self.plans}
        self.dropped = dict.fromkeys(self.plans, 0)
        self.offered = dict.fromkeys(self.plans, 0)
        self.in_flight = dict.fromkeys(self.plans, 0)
        self.queue = {n: deque() for n in self.plans}
        self.dependents = {n: [p.spec.name for p in plans if n in p.spec.depends_on] for n in self.plans}
        self.ready: dict[tuple[str, int], set[str]] = {}  # a dependent frame's inputs finished so far
        self.holds: dict[tuple[str, int], int] = {}  # what a frame still waits for before it leaves the limit
        self.cancelled: set[tuple[str, int]] = set()
        self.next_frame = dict.fromkeys(self.plans, 0)

    def limit(self, spec: StreamSpec) -> int | None:
        if spec.max_in_flight is not None:
            return spec.max_in_flight
        if spec.rate is None and not spec.depends_on:  # back-to-back: keep every copy busy
            return max(1, self.w.count)
        return None

    # -- arrivals and the flow limit
    # A frame stays in flight (counts against its stream's limit) until it has finished and so has every
    # frame made from it downstream: MediaPipe's FINISHED edge comes back from the end of the graph section.
    def offer(self, name: str, k: int) -> None:
        spec = self.plans[name].spec
        self.offered[name] += 1
        self.arrivals[name][k] = self.env.now
        deps = spec.depends_on
        self.origins[name][k] = min(self.origins[d][k] for d in deps) if deps else self.env.now
        self.holds[(name, k)] = 1
        limit = self.limit(spec)
        if limit is None or self.in_flight[name] < limit:
            self.start(name, k)
            return
        q = self.queue[name]
        q.append(k)
        if len(q) > spec.max_in_queue:
            self.drop(name, q.popleft())

    def start(self, name: str, k: int) -> None:
        self.in_flight[name] += 1
        self.env.process(self.frame(name, k))

    def drop(self, name: str, k: int) -> None:
        """Frame k of `name` dropped at its flow limit: its inputs are done with it, its outputs never come."""
        self.dropped[name] += 1
        del self.holds[(name, k)]
        for p in self.plans[name].spec.depends_on:
            self.part(p, k)
        for d in self.dependents[name]:
            self.cancel(d, k)

    def cancel(self, name: str, k: int) -> None:
        """Frame k of `name` will never come (an input of it was dropped)."""
        if (name, k) in self.cancelled or (name, k) in self.holds or k >= self.plans[name].spec.frames:
            return
        self.cancelled.add((name, k))
        for p in self.ready.pop((name, k), ()):
            self.part(p, k)
        for d in self.dependents[name]:
            self.cancel(d, k)

    def finish(self, name: str, k: int) -> None:
        self.finished[name][k] = self.env.now
        for d in self.dependents[name]:
            dspec = self.plans[d].spec
            if k >= dspec.frames or (d, k) in self.cancelled:
                continue
            self.holds[(name, k)] += 1
            got = self.ready.setdefault((d, k), set())
            got.add(name)
            if got >= set(dspec.depends_on):
                del self.ready[(d, k)]
                self.offer(d, k)
        self.part(name, k)

    def part(self, name: str, k: int) -> None:
        """One of the things frame k of `name` waits for before it leaves the flow limit is done."""
        self.holds[(name, k)] -= 1
        if self.holds[(name, k)]:
            return
        del self.holds[(name, k)]
        if self.arrivals[name].get(k) is not None and k in self.finished[name]:
            self.in_flight[name] -= 1
            spec = self.plans[name].spec
            if self.queue[name]:
                self.start(name, self.queue[name].popleft())
            elif spec.rate is None and not spec.depends_on and self.next_frame[name] < spec.frames:
                self.offer(name, self.next_frame[name])
                self.next_frame[name] += 1
        for p in self.plans[name].spec.depends_on:
            self.part(p, k)

    def source(self, name: str):
        spec = self.plans[name].spec
        if spec.depends_on:
            return
        if spec.rate is None:
            first = min(spec.frames, self.limit(spec) or spec.frames)
            for k in range(first):
                self.offer(name, k)
            self.next_frame[name] = first
            return
        for k in range(spec.frames):
            at = k / spec.rate
            if at > self.env.now:
                yield self.env.timeout(at - self.env.now)
            self.offer(name, k)

    # -- one frame
    def frame(self, name: str, k: int):
        plan = self.plans[name]
        replica = 0
        if len(plan.steps) > 1:
            asked = self.env.now
            replica = yield self.free.get()
            unit = next(s.resource.removesuffix(".link") for s in plan.steps[replica] if s.resource != HOST)
            self.wait[unit] += self.env.now - asked
        steps, dram, moved = plan.steps[replica], plan.dram[replica], plan.moved[replica]
        traced = k < self.w.trace_frames
        tag = f"{name} #{k}"
        if self.w.schedule == "dataflow":
            done = {s.id: self.env.event() for s in steps}
            procs = [self.env.process(self.one(s, dram, moved, done, traced, tag)) for s in steps]
            yield simpy.AllOf(self.env, procs)
        else:
            i = 0
            while i < len(steps):
                owner = steps[i].resource.removesuffix(".link")
                j = i
                while j + 1 < len(steps) and steps[j + 1].resource.removesuffix(".link") == owner:
                    j += 1
                yield from self.block(owner, steps[i:j + 1], dram, moved, traced, tag)
                i = j + 1
        if len(plan.steps) > 1:
            yield self.free.put(replica)
        self.finish(name, k)

    def block(self, owner: str, steps: Sequence[Step], dram, moved, traced: bool, tag: str):
        """Steps of one frame on one unit and its link: the unit held throughout (one delegate invocation)."""
        env = self.env
        asked = env.now
        with self.units[owner].request() as slot:
            yield slot
            start = env.now
            self.wait[owner] += start - asked
            for s in steps:
                t0 = env.now
                if s.resource in self.links:
                    yield self.links[s.resource].use(s.duration)
                    self.wait[self.bus[s.resource]] += max(0.0, env.now - t0 - s.duration)
                    if traced:
                        self.record(self.bus[s.resource], s, t0, f"{tag}: {s.label}", s.bytes)
                elif s.id in dram:
                    yield self.dram.use(s.duration)
                    self.wait[DRAM] += max(0.0, env.now - t0 - s.duration)
                    self.bytes[DRAM] += moved[s.id]
                else:
                    yield env.timeout(s.duration)
                self.bytes[self.bus[s.resource]] += moved[s.id]
            self.busy[owner] += env.now - start
        if traced:
            label = f"{tag}: {steps[0].label}" + (f" (+{len(steps) - 1} steps)" if len(steps) > 1 else "")
            first = next((s for s in steps if s.kind == "compute"), steps[0])
            self.record(owner, first, start, label, sum(s.bytes for s in steps))

    def one(self, s: Step, dram, moved, done, traced: bool, tag: str):
        waits = [done[d] for d in s.deps]
        if waits:
            yield simpy.AllOf(self.env, waits)
        if s.resource in self.links:  # dataflow: a transfer occupies its link only, as in one inference
            t0 = self.env.now
            yield self.links[s.resource].use(s.duration)
            self.wait[self.bus[s.resource]] += max(0.0, self.env.now - t0 - s.duration)
            self.bytes[self.bus[s.resource]] += moved[s.id]
            if traced:
                self.record(self.bus[s.resource], s, t0, f"{tag}: {s.label}", s.bytes)
        else:
            yield from self.block(s.resource, (s,), dram, moved, traced, tag)
        done[s.id].succeed()

    def record(self, res: str, s: Step, start: float, label: str, nbytes: int) -> None:
        self.events.append({"resource": res, "kind": s.kind, "label": label, "start_us": start * 1e6,
                            "end_us": self.env.now * 1e6, "node": s.node, "partition": s.partition,
                            "bytes": nbytes})


def run(workload: Workload, plans: Sequence[_Plan], system: System) -> StreamsResult:
    """Simulate prepared streams (`prepare`) on the system's units."""
    eng = _Engine(workload, plans)
    for name in eng.plans:
        proc = eng.source(name)
        if proc is not None:
            eng.env.process(proc)
    eng.env.run()
    for name, pool in eng.pools.items():
        eng.busy[name] = pool.busy
    eng.busy[DRAM] = eng.dram.busy
    makespan = max((t for f in eng.finished.values() for t in f.values()), default=0.0)
    total = sum(len(f) for f in eng.finished.values())
    streams = []
    for name, plan in eng.plans.items():
        done = sorted(eng.finished[name].items(), key=lambda kv: kv[1])
        arr = [eng.arrivals[name][k] for k, _ in done]
        lat = np.array([t - eng.arrivals[name][k] for k, t in done])
        span = (done[-1][1] - min(eng.arrivals[name].values())) if done else 0.0
        p50, p90, p99 = (float(x) for x in np.percentile(lat, [50, 90, 99])) if len(lat) else (0.0, 0.0, 0.0)
        e2e = [t - eng.origins[name][k] for k, t in done]
        e50, e99 = (float(x) for x in np.percentile(e2e, [50, 99])) if e2e else (0.0, 0.0)
        streams.append(StreamStats(
            name=name, model=plan.single.model, offered=eng.offered[name], completed=len(done),
            dropped=eng.dropped[name], throughput_per_s=len(done) / span if span > 0 else 0.0,
            latency_p50_s=p50, latency_p90_s=p90, latency_p99_s=p99,
            latency_mean_s=float(lat.mean()) if len(lat) else 0.0, single_latency_s=plan.single.latency,
            end_to_end_p50_s=e50, end_to_end_p99_s=e99,
            arrivals=tuple(arr), latencies=tuple(float(x) for x in lat), segments=plan.segments))
    units = tuple(UnitStats(name=u, busy_s=b, utilization=b / makespan if makespan > 0 else 0.0,
                            queueing_s=eng.wait[u], bytes=eng.bytes[u],
                            busy_per_frame_s=b / total if total else 0.0)
                  for u, b in eng.busy.items() if u != DRAM or b > 0)
    bottleneck = max(units, key=lambda u: u.busy_s).name if units else ""
    accels = sorted({r for r in eng.units if r != HOST})
    events = tuple(sorted(eng.events, key=lambda e: (e["start_us"], e["resource"])))
    return StreamsResult(tuple(streams), units, bottleneck, makespan, workload.mode, workload.count,
                         workload.segmentation, events, tuple(accels))

