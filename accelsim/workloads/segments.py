"""A model cut into pipeline segments over several accelerators of one kind, as libcoral's partitioners cut it.

Source: google-coral/libcoral @ 6589d0bb, coral/tools/partitioner/ (notes with line citations:
/work/research/coral_partitioner.md). Both libcoral partitioners decide only how many operators, in one
topological order, each segment gets:

- the order is `TopologicalSort` (utils.cc 135-172): Kahn's algorithm with a stack, a node without
  consumers pushed to the bottom ("visit it as late as possible"); edges producer -> consumer per tensor
  (`BuildEdgeList` 60-100). libcoral walks tensors in an absl hash set's order; we walk them by index.
- an op's parameter bytes are its constant inputs' buffer sizes, 0 for a custom op (utils.cc 416-453).
- `compiler` is `ParameterCountBasedPartitioner` (parameter_count_based_partitioner.cc 46-105), the Edge TPU
  compiler's --num_segments: average = total // N + 1 bytes; segments 0..N-2 take ops in order while their
  bytes stay <= average, each cut at most at first_output - (N - 1 - i); the last takes the rest. A segment
  left empty aborts libcoral (CHECK at 92-94): here a `SegmentError` saying so.
- `profiled` is `BisectPartition` over `ProfilingBasedPartitioner` (profiling_based_partitioner.cc 227-383)
  with our simulated segment time as the profile: bisect a target between the fastest and slowest segment of
  the compiler's split until the bounds are within 1 ms; for a target, each of the first N-1 segments is the
  longest whose time is within it (backtracking when later ones cannot be), the last takes the rest. The
  suffix reset uses segment_index + 1, as intended (the C++ loop starts at partition_search_step + 1, cc 245).
  When the compiler's split aborts, the bounds are 0 and the whole model's time (libcoral's
  --initial_lower_bound_ns / --initial_upper_bound_ns), and if no target below the upper bound works, the
  upper bound itself (libcoral would fail). When its bounds are already within 1 ms, libcoral
  stops without writing a split (cc 338-342); here the compiler's split is the answer then.
- `balanced` is ours (`balanced_counts`): the same bisection run to 1 us, then single ops moved across cuts
  while that lowers the slowest segment, with the same profile; then whichever of it, `compiler` and
  `profiled` has the slowest segment fastest in the assembled pipeline simulation, so it is never worse than
  either by that measure (a test checks it).

A segment runs on its own copy of the accelerator (`<name>#<k>`), which claims only the segment's prefix of
nodes it supports, in the order above (each segment compiled alone, the compiler mapping it up to its first
unsupported op); so each copy's parameter cache holds only its segment's weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from accelsim.delegates.spec import facts_from_node
from accelsim.hardware.config import System
from accelsim.hardware.device import Device
from accelsim.hardware.memory import streamed_parameters, weight_cache
from accelsim.runtime.ir import Model
from accelsim.simulation.analysis import analyze
from accelsim.simulation.costing import NodeCosts, cost_works, inference_steps
from accelsim.simulation.delegation import build_interpreter, node_works
from accelsim.simulation.inference import HOST

SEGMENTATIONS = ("compiler", "profiled", "balanced")
DIFF_THRESHOLD = 1e-3  # seconds: libcoral's --diff_threshold_ns default, 1 000 000 ns (partition_with_profiling.cc)


class SegmentError(ValueError):
    """A model that cannot be cut as asked (too many segments, a libcoral abort, no supported op)."""


@dataclass(frozen=True)
class OpOrder:
    """A model's operators in libcoral's order: `order[p]` is the node at position p."""

    order: tuple[int, ...]
    param_bytes: tuple[int, ...]  # by position
    first_output: int  # the first position whose node has no consumer

    def segments(self, counts: Sequence[int]) -> list[tuple[int, ...]]:
        """The node indices of each segment, given its op count, in position order."""
        out, start = [], 0
        for c in counts:
            out.append(self.order[start:start + c])
            start += c
        return out


def op_order(model: Model) -> OpOrder:
    """libcoral's TopologicalSort of the primary subgraph, each op's parameter bytes, the first output position.

    Raises:
        SegmentError: the graph has a cycle (libcoral: "Graph is NOT DAG").
    """
    sg = model.subgraphs[0]
    ops = sg.operators
    consumers: dict[int, list[int]] = {}
    producers: dict[int, list[int]] = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            if t >= 0:
                consumers.setdefault(t, []).append(i)
        for t in op.outputs:
            producers.setdefault(t, []).append(i)
    children: list[list[int]] = [[] for _ in ops]
    for t in sorted(set(consumers) & set(producers)):
        for c in consumers[t]:
            for p in producers[t]:
                children[p].append(c)
    indeg = [0] * len(ops)
    for ch in children:
        for c in ch:
            indeg[c] += 1
    stack = [i for i in range(len(ops)) if indeg[i] == 0]
    order: list[int] = []
    while stack:
        node = stack.pop()
        order.append(node)
        for c in children[node]:
            indeg[c] -= 1
            if indeg[c] == 0:
                if children[c]:
                    stack.append(c)
                else:
                    stack.insert(0, c)
    if len(order) != len(ops):
        raise SegmentError(f"the model's operators form a cycle ({len(ops) - len(order)} ops on it): not a DAG")

    def params(op) -> int:
        if op.op == "CUSTOM":
            return 0
        return sum(len(model.buffer_bytes(sg.tensors[t].buffer) or b"") for t in op.inputs
                   if t >= 0 and sg.tensors[t].buffer > 0)

    first_output = next(p for p, n in enumerate(order) if not children[n])
    return OpOrder(tuple(order), tuple(params(ops[n]) for n in order), first_output)


def _check_count(order: OpOrder, n: int) -> None:
    if n < 1:
        raise SegmentError(f"segments must be >= 1, got {n}")
    if n > len(order.order):
        raise SegmentError(f"{n} segments for a model of {len(order.order)} ops: at most one segment per op")
    if n > order.first_output + 1:
        raise SegmentError(f"{n} segments: only {order.first_output + 1} ops come before the model's first output "
                           "op, and every cut must come before it (libcoral: the last segment holds every output)")


def compiler_counts(order: OpOrder, n: int) -> tuple[int, ...]:
    """libcoral's ParameterCountBasedPartitioner: each segment's op count (module docstring).

    Raises:
        SegmentError: too many segments, or a segment would be empty (libcoral aborts there).
    """
    _check_count(order, n)
    if n == 1:
        return (len(order.order),)
    sizes = order.param_bytes
    average = sum(sizes) // n + 1
    counts = [0] * n
    i = 0
    for s in range(n - 1):
        cap = order.first_output - (n - s - 1)
        seg = 0
        while i <= cap and seg + sizes[i] <= average:
            seg += sizes[i]
            counts[s] += 1
            i += 1
    counts[-1] = len(sizes) - i
    if any(c == 0 for c in counts):
        k = counts.index(0)
        raise SegmentError(f"compiler segmentation into {n}: segment {k} would be empty (the op at position {i} "
                           f"holds {sizes[min(i, len(sizes) - 1)]} parameter bytes, over the average {average}); "
                           "libcoral's parameter_count_based_partitioner aborts here: use fewer segments, or "
                           "--segmentation profiled or balanced")
    return tuple(counts)


Latency = Callable[[int, int], float]  # (start position, op count) -> seconds


def _search(counts: list[int], target: float, k: int, step: int, order: OpOrder, latency: Latency) -> bool:
    """ProfilingBasedPartitioner::SearchPartition (cc 227-291), with the suffix reset from k + 1 (see above)."""
    s = len(counts)
    if k == s - 1:
        return True
    total = len(order.order)
    suffix = sum(counts[k:])
    counts[-1] = max(total - order.first_output, step)
    for i in range(k + 1, s - 1):
        counts[i] = step
    counts[k] = suffix - (s - 2 - k) * step - counts[-1]
    if counts[k] <= 0:
        return False
    tmp = list(counts)
    while tmp[k] > 0:
        start = sum(tmp[:k])
        t = latency(start, tmp[k])
        if 0 < t <= target and _search(tmp, target, k + 1, step, order, latency):
            counts[:] = tmp
            return True
        d = min(tmp[k], step)
        tmp[k] -= d
        tmp[k + 1] += d
    return False


def segment_times(counts: Sequence[int], latency: Latency) -> list[float]:
    """Each segment's time by `latency`."""
    out, start = [], 0
    for c in counts:
        out.append(latency(start, c))
        start += c
    return out


def profiled_counts(order: OpOrder, n: int, latency: Latency, threshold: float = DIFF_THRESHOLD) -> tuple[int, ...]:
    """libcoral's BisectPartition (profiling_based_partitioner.cc 321-383) with `latency` as the profile.

    Raises:
        SegmentError: too many segments.
    """
    _check_count(order, n)
    if n == 1:
        return (len(order.order),)
    try:
        start = compiler_counts(order, n)
        times = segment_times(start, latency)
        lo, hi = min(times), max(times)
    except SegmentError:  # libcoral's --initial_lower_bound_ns / --initial_upper_bound_ns
        start, lo, hi = None, 0.0, latency(0, len(order.order))
    best = start
    if abs(hi - lo) <= threshold and best is not None:
        return tuple(best)
    while abs(hi - lo) > threshold:
        target = (lo + hi) / 2
        counts = [1] * n
        counts[0] = len(order.order) - (n - 1)
        last = latency(sum(counts[:-1]), counts[-1]) if _search(counts, target, 0, 1, order, latency) else float("inf")
        if last < target:
            best, hi = list(counts), target
        else:
            if last < hi:
                best, hi = list(counts), last
            lo = target
    if best is None:  # only with the fallback bounds: try the upper bound itself (the whole model's time)
        counts = [1] * n
        counts[0] = len(order.order) - (n - 1)
        if _search(counts, hi, 0, 1, order, latency):
            best = counts
    if best is None:
        raise SegmentError(f"profiled segmentation into {n}: no split found within {hi} s")
    return tuple(best)


def _score(counts: Sequence[int], latency: Latency) -> tuple[float, float]:
    times = segment_times(counts, latency)
    return max(times), sum(times)


def balanced_counts(order: OpOrder, n: int, latency: Latency, seeds: Sequence[Sequence[int]] = ()) -> tuple[int, ...]:
    """Ours: the bisection run to 1 us instead of 1 ms, then single ops moved across cuts while that lowers the
    slowest segment (ties: the sum); started from the best of it and `seeds` (the compiler's and libcoral's splits).

    Raises:
        SegmentError: too many segments.
    """
    _check_count(order, n)
    if n == 1:
        return (len(order.order),)
    best = min([tuple(c) for c in seeds] + [profiled_counts(order, n, latency, threshold=1e-6)],
               key=lambda c: _score(c, latency))
    score = _score(best, latency)
    improved = True
    while improved:
        improved = False
        for b in range(n - 1):
            for delta in (-1, 1):
                trial = list(best)
                trial[b] += delta
                trial[b + 1] -= delta
                if min(trial) < 1 or sum(trial[:-1]) > order.first_output:
                    continue
                s = _score(trial, latency)
                if s < score:
                    best, score, improved = tuple(trial), s, True
    return tuple(best)


@dataclass(frozen=True)
class Segment:
    """One pipeline segment: its op positions, nodes, accelerator copy and what it holds."""

    index: int
    unit: str
    first_node: int
    last_node: int
    nodes: tuple[int, ...]  # every node of the segment (libcoral order)
    claimed: tuple[int, ...]  # those its accelerator runs
    parameter_bytes: int
    cached_bytes: int  # parameter bytes its on-chip cache holds (the rest streams every frame)
    time_s: float  # its simulated time per frame, alone


def unit_copies(accel: Device, n: int) -> tuple[Device, ...]:
    """`n` copies of an accelerator, named `<name>#1` .. `<name>#n`, each mapping one partition of what it is given.

    A copy maps one partition with TFLite's grouping (partition policy 'tflite', max 1): the nodes it is allowed
    are a segment's supported prefix, one partition already.
    """
    if n == 1:
        return (accel,)
    out = []
    for k in range(n):
        name = f"{accel.name}#{k + 1}"
        policy = replace(accel.policy, name=name,
                         partition=replace(accel.policy.partition, kind="tflite", max_delegated_partitions=1))
        out.append(replace(accel, hardware=replace(accel.hardware, name=name), policy=policy))
    return tuple(out)


class Profile:
    """Each segment's simulated time alone, by (start position, op count), from every node's work costed once.

    Host nodes cost what they cost on the host; a segment's supported prefix runs on one accelerator copy,
    costed by its kind with its own cache, plus its input and output copies over the link and one call
    overhead: the same steps `accelsim.simulation.costing.assemble` builds, summed (a test checks it equals
    the assembled pipeline's time per segment).
    """

    def __init__(self, model: Model, host: Device, accel: Device, loops=None):
        analysis = analyze(model, System(host, ()), loops=loops)
        self.order = op_order(model)
        graph = analysis.interpreter.primary
        self.graph = graph
        self.works = dict(zip(analysis.works.host.nodes, analysis.works.host.works))
        self.host_cost = {ni: c.seconds for ni, (c, _) in cost_works(analysis.works, System(host, ()),
                                                                       analysis.loops).where_run.items()}
        self.accel = accel
        self.supported = {ni: accel.policy.check(facts_from_node(graph.nodes[ni], graph.tensors))[0]
                          for ni in self.order.order}
        self.consumers: dict[int, set[int]] = {}
        for ni in self.order.order:
            for t in graph.nodes[ni].inputs:
                if t >= 0:
                    self.consumers.setdefault(t, set()).add(ni)
        self._cache: dict[tuple[int, int], float] = {}
        self.loops = analysis.loops

    def claimed(self, start: int, count: int) -> tuple[int, ...]:
        """The segment's supported prefix: what its accelerator copy runs."""
        out = []
        for ni in self.order.order[start:start + count]:
            if not self.supported[ni]:
                break
            out.append(ni)
        return tuple(out)

    def __call__(self, start: int, count: int) -> float:
        key = (start, count)
        if key not in self._cache:
            self._cache[key] = self._time(start, count)
        return self._cache[key]

    def _time(self, start: int, count: int) -> float:
        nodes = self.order.order[start:start + count]
        claimed = set(self.claimed(start, count))
        seconds = sum(self.host_cost[ni] for ni in nodes if ni not in claimed)
        if not claimed:
            return seconds
        hw = self.accel.hardware
        link = hw.link
        inside = sorted(claimed)
        costs = hw.costs([self.works[ni] for ni in inside])
        tensors = self.graph.tensors
        produced = {t for ni in inside for t in self.graph.nodes[ni].outputs}
        ins = dict.fromkeys(t for ni in inside for t in self.graph.nodes[ni].inputs
                            if t >= 0 and t not in produced and not tensors[t].is_constant)
        outs = dict.fromkeys(t for ni in inside for t in self.graph.nodes[ni].outputs
                             if t in self.graph.outputs or self.consumers.get(t, set()) - claimed)
        io = 0.0
        if not link.shared_memory:
            for t in (*ins, *outs):
                io += link.latency + tensors[t].nbytes / link.bandwidth
        return seconds + io + link.call_overhead + sum(c.seconds for c in costs)

    def cached_bytes(self, claimed: Sequence[int]) -> int:
        works = [self.works[ni] for ni in sorted(claimed)]
        streamed = streamed_parameters(works, weight_cache(works, self.accel.hardware.memory))
        return sum(w.weight_bytes for w in works) - sum(streamed)


@dataclass(frozen=True)
class Pipeline:
    """A model split into segments over accelerator copies: the system, each segment, one frame's steps."""

    system: System
    segments: tuple[Segment, ...]
    counts: tuple[int, ...]
    segmentation: str
    steps: tuple  # accelsim.core.schedule.Step of one frame
    costs: NodeCosts
    interpreter: object
    delegates: tuple


def pipeline(model: Model, system: System, n: int, segmentation: str, profile: Profile | None = None,
             loops=None) -> Pipeline:
    """`model` cut into `n` segments by `segmentation`, one per copy of the system's one accelerator.

    Raises:
        SegmentError: the system has not exactly one accelerator, an unknown segmentation, too many segments,
            or the compiler's split aborts.
    """
    if segmentation not in SEGMENTATIONS:
        raise SegmentError(f"segmentation {segmentation!r} is not one of {list(SEGMENTATIONS)}")
    if len(system.accelerators) != 1:
        raise SegmentError(f"a pipeline copies one accelerator kind; the system has {len(system.accelerators)} "
                           "accelerators (give one with --hw)")
    profile = profile or Profile(model, system.host, system.accelerators[0], loops)
    order = profile.order
    if segmentation == "compiler":
        counts = compiler_counts(order, n)
    elif segmentation == "profiled":
        counts = profiled_counts(order, n, profile)
    else:
        candidates = []
        for rule in (compiler_counts, lambda o, k: profiled_counts(o, k, profile)):
            try:
                candidates.append(rule(order, n))
            except SegmentError:
                pass
        candidates.insert(0, balanced_counts(order, n, profile, candidates))
        built = [_build(model, system, c, "balanced", profile) for c in dict.fromkeys(candidates)]
        return min(built, key=lambda p: (max(s.time_s for s in p.segments), sum(s.time_s for s in p.segments)))
    return _build(model, system, counts, segmentation, profile)


def _build(model: Model, system: System, counts: Sequence[int], segmentation: str, profile: Profile) -> Pipeline:
    accel = system.accelerators[0]
    units = unit_copies(accel, len(counts))
    seg_system = System(system.host, units, system.assign)
    starts = [sum(counts[:k]) for k in range(len(counts))]
    claimed = [profile.claimed(s, c) for s, c in zip(starts, counts)]
    if not any(claimed):
        raise SegmentError(f"{accel.name} supports none of the model's ops: no unit but the host can run it")
    allowed = {u.name: frozenset(c) for u, c in zip(units, claimed)} if len(counts) > 1 else None
    interpreter, delegates = build_interpreter(model, seg_system, allowed=allowed, shapes_only=True)
    costs = cost_works(node_works(interpreter, delegates, profile.loops), seg_system, profile.loops)
    steps = inference_steps(interpreter, delegates, seg_system, costs)
    times = _segment_times(steps, units, profile.order.segments(counts))
    segments = []
    for k, (nodes, mine) in enumerate(zip(profile.order.segments(counts), claimed)):
        segments.append(Segment(index=k, unit=units[k].name, first_node=nodes[0], last_node=nodes[-1], nodes=nodes,
                                claimed=mine, parameter_bytes=sum(profile.order.param_bytes[starts[k]:starts[k] +
                                                                                               counts[k]]),
                                cached_bytes=profile.cached_bytes(mine), time_s=times[k]))
    return Pipeline(seg_system, tuple(segments), tuple(counts), segmentation, steps, costs, interpreter,
                    tuple(delegates))


def _segment_times(steps, units: Sequence[Device], nodes: Sequence[Sequence[int]]) -> list[float]:
    """Each segment's time in one frame's steps: its unit's and link's steps and its host nodes', summed."""
    segment_of_unit = {}
    for k, u in enumerate(units):
        segment_of_unit[u.name] = segment_of_unit[f"{u.name}.link"] = k
    segment_of_node = {ni: k for k, ns in enumerate(nodes) for ni in ns}
    out = [0.0] * len(units)
    for s in steps:
        if s.resource == HOST:
            out[segment_of_node[s.node]] += s.duration
        else:
            out[segment_of_unit[s.resource]] += s.duration
    return out
