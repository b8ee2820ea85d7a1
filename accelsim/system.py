"""A model on a system: delegate, cost every node, build the SimPy steps, simulate.

This is where the interpreter's execution plan meets the hardware: host nodes run on the
host CPU; each delegate node first copies its non-resident inputs host->device over its
accelerator's link, pays the per-call overhead, runs its nodes' costs on the accelerator and
copies its outputs device->host. Constants are parameters: cached ones are loaded once at
initialization (a separate phase in the results), the rest are streamed on every inference
(traffic on the memory level they come from, inside the node's time; what a node spends
beyond its compute time is reported as memory time, with the level that bound it).
Shapes and types suffice: nothing is invoked unless numerics are asked for elsewhere.

A control-flow node on the host (WHILE, IF, CALL_ONCE) costs what the nodes of the subgraphs
it runs cost, times its trip count: counted by the last invoke if the interpreter ran, else
fixed by the model's constants or shapes, else taken from `LoopTrips` (an override per node or
a default); `Simulation.loops` lists every count used and where it came from.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from accelsim.config import Assign, HardwareConfig, System, to_spec
from accelsim.cost import Cost, total
from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.delegates.spec import PartitionPolicy
from accelsim.energy import energy_unmodelled, static_power
from accelsim.memory import LINK
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips, NodeWork, control_nodes, node_work, resolve_trips
from accelsim.sim import SimResult, Step, simulate

if TYPE_CHECKING:
    from accelsim.analysis import Analysis

log = logging.getLogger(__name__)

HOST = "host"


@dataclass(frozen=True)
class NodeTiming:
    """One original node: where it runs and what it costs there."""

    index: int
    op: str
    unit: str  # "host" or an accelerator name
    partition: int | None  # delegate partition ordinal (None on the host)
    seconds: float
    macs: int
    cost: Cost
    utilization: float | None = None  # MACs / (cycles x the unit's peak MACs per cycle); None if unknown


@dataclass(frozen=True)
class LoopCount:
    """A control-flow node's trip count as costed: `where` is "<subgraph>:<node>", `source` how it was known."""

    where: str
    op: str
    trips: int
    source: str  # runtime.work.TRIPS_FROM


@dataclass(frozen=True)
class PartitionSummary:
    """One delegate partition: its nodes and where its time went (seconds) in the simulated run."""

    index: int
    unit: str
    delegate_node: int
    nodes: tuple[int, ...]
    ops: tuple[str, ...]
    input_bytes: int
    output_bytes: int
    streamed_param_bytes: int
    compute: float
    transfer: float
    overhead: float
    memory: float = 0.0  # node time waiting on memory levels beyond compute
    cost: Cost = Cost()  # its nodes' costs summed: bytes per level, time per bound, energy
    transfer_energy: float = 0.0  # joules of its input and output copies over the link

    @property
    def energy(self) -> float:
        """Joules of the partition: its nodes (dynamic and static while busy) and its transfers."""
        return self.cost.energy + self.transfer_energy


@dataclass(frozen=True)
class PartitionChoice:
    """What partition policy 'cost' decided, next to TFLite's choice (every claimed partition delegated).

    Partitions are (accelerator, partition ordinal) in TFLite's delegation; `host` lists those
    kept on the host. The cost-aware figures are the `Simulation`'s own.
    """

    objective: str
    # "exact" (every subset) or "greedy" (drop the best partition while it helps); with `assign: cost`,
    # "assign exact" or "assign greedy" (how the shared runs were handed out) and `host` lists TFLite's
    # partitions none of whose nodes the chosen assignment delegates
    search: str
    tflite: tuple[tuple[str, int], ...]
    host: tuple[tuple[str, int], ...]
    tflite_latency: float
    tflite_energy: float


@dataclass(frozen=True)
class Simulation:
    """Everything one simulated inference produced."""

    model: str
    host: str
    accelerators: tuple[str, ...]
    schedule: str
    result: SimResult
    init: SimResult
    nodes: tuple[NodeTiming, ...]
    partitions: tuple[PartitionSummary, ...]
    delegation: tuple[Mapping[str, Any], ...]
    idle_energy: tuple[tuple[str, float], ...] = ()  # (unit, joules of static power while not running nodes)
    init_energy: float = 0.0  # joules of the parameter loads at initialization
    loops: tuple[LoopCount, ...] = ()
    choice: PartitionChoice | None = None  # set when an accelerator's partition policy is 'cost'
    # devices whose energy is not modelled (no energy.mac): the run's energy is "not modelled", never a quiet 0
    energy_unmodelled: tuple[str, ...] = ()

    @property
    def latency(self) -> float:
        return self.result.latency

    def energy_by_unit(self) -> dict[str, float]:
        """Joules of one inference per device (host and accelerator names): nodes, transfers, idle static."""
        out = dict.fromkeys((self.host, *self.accelerators), 0.0)
        for n in self.nodes:
            if n.unit == HOST:
                out[self.host] += n.cost.energy
        for p in self.partitions:
            out[p.unit] += p.energy
        for unit, joules in self.idle_energy:
            out[unit] += joules
        return out

    @property
    def energy(self) -> float:
        """Joules of one inference, every device included."""
        return sum(self.energy_by_unit().values())

    @property
    def modelled_energy(self) -> float | None:
        """`energy`, or None ("not modelled") when a device has no energy model."""
        return None if self.energy_unmodelled else self.energy

    @property
    def static_energy(self) -> float:
        """The static part of `energy`: every device's static power over the whole inference."""
        return sum(n.cost.static_energy for n in self.nodes) + sum(j for _, j in self.idle_energy)

    @property
    def partition_overhead(self) -> float:
        return self.result.partition_overhead

    @property
    def delegated_nodes(self) -> int:
        return sum(1 for n in self.nodes if n.unit != HOST)

    @property
    def transfer_bytes(self) -> int:
        return sum(e.bytes for e in self.result.events if e.kind == "transfer")

    def level_bytes(self) -> dict[str, int]:
        """Bytes moved on each memory level by the nodes, keyed 'unit.level' (unit: host or accelerator name)."""
        out: dict[str, int] = {}
        for n in self.nodes:
            unit = self.host if n.unit == HOST else n.unit
            for level, nbytes in n.cost.level_bytes:
                out[f"{unit}.{level}"] = out.get(f"{unit}.{level}", 0) + nbytes
        return out


def delegates_for(system: System, host_nodes: Mapping[str, frozenset[int]] | None = None,
                  allowed: Mapping[str, frozenset[int]] | None = None) -> list[AcceleratorDelegate]:
    """One AcceleratorDelegate per accelerator, in the system's order (the order they are applied).

    Args:
        host_nodes: accelerator name -> nodes whose partitions its policy 'cost' keeps on the host.
        allowed: accelerator name -> the only nodes it may claim (`assign: cost` decides them).
    """
    host_nodes = host_nodes or {}
    allowed = allowed or {}
    specs = [to_spec(accel) for accel in system.accelerators]
    return [AcceleratorDelegate(dataclasses.replace(spec, partition=dataclasses.replace(
        spec.partition, host_nodes=host_nodes.get(spec.name, frozenset()), allowed_nodes=allowed.get(spec.name))))
        for spec in specs]


def build_interpreter(model: Model, system: System, host_nodes: Mapping[str, frozenset[int]] | None = None,
                      allowed: Mapping[str, frozenset[int]] | None = None, *, shapes_only: bool = False,
                      ) -> tuple[Interpreter, list[AcceleratorDelegate]]:
    """An interpreter over `model` with the system's accelerators applied in order, tensors allocated.

    Args:
        host_nodes, allowed: see `delegates_for`; `cost_aware_interpreter` chooses them.
        shapes_only: prepare shapes and work only, for cost-only simulation (it cannot invoke;
            `accelsim.runtime.Interpreter`'s argument of that name).
    """
    delegates = delegates_for(system, host_nodes, allowed)
    interpreter = Interpreter(model=model, experimental_delegates=delegates, shapes_only=shapes_only)
    interpreter.allocate_tensors()
    return interpreter, delegates


def _link_seconds(link, nbytes: int) -> float:
    return link.latency + nbytes / link.bandwidth


def utilization(work: NodeWork, cost: Cost, device: HardwareConfig) -> float | None:
    """Share of the unit's peak MAC throughput a node used over its whole time (None when the kind has no peak)."""
    peak = device.kind_record.peak_macs_per_cycle
    if peak is None or cost.cycles == 0:
        return None
    return work.macs / (cost.cycles * peak(work, device))


def _device_costs(device: HardwareConfig, nodes: Sequence[int],
                  works: Sequence[NodeWork]) -> dict[int, tuple[Cost, float | None]]:
    """Cost and utilisation of each of a device's nodes (given in model order)."""
    return {ni: (c, utilization(w, c, device)) for ni, w, c in zip(nodes, works, device.costs(works))}


# How users set trip counts, named in the error for a loop nobody can count.
_HOW_TO_SET_TRIPS = "experiment key loops: {default_trips: N, nodes: {'<subgraph>:<node>': N}} or --loop-trips"


def _host_costs(works: Sequence[NodeWork], host: HardwareConfig) -> list[Cost]:
    """Costs of host nodes in model order; a control-flow node's is its bodies' costs times its trips."""
    leaves = iter(host.costs([w for w in works if w.kind != "control"]))
    costs = []
    for w in works:
        if w.kind != "control":
            costs.append(next(leaves))
            continue
        costs.append(total(_host_costs(w.body, host)).times(w.trips) + total(_host_costs(w.once, host)))
    return costs


class _StepBuilder:
    """Accumulates steps with their dependencies, tracking where each tensor's value lives."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.ready_on: dict[tuple[int, str], int | None] = {}  # (tensor, place) -> step that put it there

    def add(self, resource: str, kind: str, seconds: float, label: str, deps, **kw) -> int:
        sid = len(self.steps)
        deps = tuple(sorted({d for d in deps if d is not None}))
        self.steps.append(Step(sid, resource, kind, seconds, label, deps=deps, **kw))
        return sid

    def available(self, tensor: int, place: str) -> bool:
        return (tensor, place) in self.ready_on

    def producer(self, tensor: int, place: str) -> int | None:
        return self.ready_on.get((tensor, place))


def simulate_model(model: Model | str | bytes, system: System, schedule: str = "sequential",
                   loops: LoopTrips | None = None) -> Simulation:
    """Simulate one inference of `model` on `system` (cost only: shapes and types, no invoke).

    Raises:
        WorkError: a node has no work model, or a loop's trip count is unknown and `loops` sets none.
        ValueError: accelerators with partition policy 'cost' ask for different objectives.
    """
    from accelsim.analysis import analyze  # analysis builds on this module's delegation and work

    return simulate_analysis(analyze(model, system, schedule, loops), system, schedule)


def simulate_analysis(analysis: Analysis, system: System, schedule: str = "sequential") -> Simulation:
    """Simulate one inference of an analysed model on `system`: only the costs and the schedule run.

    Equal, bit for bit, to `simulate_model` of the same model on `system`.

    Raises:
        ValueError: `system` claims differently from the system the analysis was made for
            (`accelsim.analysis.analysis_facts` differ), or the schedule is unknown.
    """
    from accelsim.analysis import analysis_facts

    if analysis_facts(system, schedule, analysis.loops) != analysis.facts:
        raise ValueError("this analysis was made for accelerators that claim or partition differently (or for "
                         "other loop trip counts); analyse the model on this system (accelsim.analysis.analyze)")
    costs = cost_works(analysis.works, system, analysis.loops)
    return _assemble(analysis.interpreter, analysis.delegates, system, costs, schedule, analysis.name, frozenset(),
                     analysis.choice)


def simulate_placed(analysis: Analysis, system: System, schedule: str = "sequential") -> Simulation:
    """Cost an analysis on `system` (the same claims, other costs) with its placement held fixed.

    `simulate_analysis`, without its refusal when costs chose the placement (`accelsim.analysis.chosen_by_cost`):
    there the analysis is one system's choice, and this costs that same choice on another (what `sensitivity`
    varies). The caller checks that `system` claims as the analysed one did.
    """
    costs = cost_works(analysis.works, system, analysis.loops)
    return _assemble(analysis.interpreter, analysis.delegates, system, costs, schedule, analysis.name, frozenset(),
                     analysis.choice)


# Up to this many candidate partitions every subset is simulated (2**12 = 4096 step lists).
EXACT_SEARCH_LIMIT = 12


def cost_aware_interpreter(model: Model, system: System, schedule: str = "sequential",
                           loops: LoopTrips | None = None, exact_limit: int = EXACT_SEARCH_LIMIT,
                           ) -> tuple[Interpreter, list[AcceleratorDelegate], PartitionChoice | None]:
    """`build_interpreter`, with partitions of policy-'cost' accelerators that do not pay for themselves on the host.

    TFLite delegates every claimed partition. Here each subset of the partitions of 'cost'
    accelerators is costed as if the rest ran on the host: every node is costed once on its
    accelerator and once on the host, and only the steps are re-assembled per subset — all
    subsets up to `exact_limit` partitions, else greedily (drop the partition whose move
    saves most, repeat while one saves). Ties keep TFLite's choice. A device kind may share
    state between its nodes (a weight cache), so the estimate is checked against a simulation
    of the rebuilt interpreter, and TFLite's choice stands if that is not better.

    With `system.assign` policy 'cost', the system's accelerators share the nodes by cost
    instead of by order (`_assigned_interpreter`).

    Returns:
        The interpreter and delegates to run, and the choice (None when no accelerator has policy 'cost'
        and the system assigns by order).

    Raises:
        ValueError: accelerators with policy 'cost' ask for different objectives.
    """
    if system.assign.policy == "cost":
        return _assigned_interpreter(model, system, schedule, loops if loops is not None else LoopTrips(),
                                     exact_limit)
    interpreter, delegates = build_interpreter(model, system)
    costed = {a.name for a in system.accelerators if a.partition.kind == "cost"}
    if not costed:
        return interpreter, delegates, None
    objectives = sorted({a.partition.objective for a in system.accelerators if a.name in costed})
    if len(objectives) > 1:
        raise ValueError(f"accelerators {sorted(costed)} with partition policy 'cost' ask for different objectives "
                         f"{objectives}; give them one partition.objective")
    objective = objectives[0]
    _check_objective(objective, system)
    loops = loops if loops is not None else LoopTrips()
    costs = _cost_nodes(interpreter, delegates, system, loops, True)
    graph = interpreter.primary
    candidates = tuple(ni for ni in graph.execution_plan
                       if graph.nodes[ni].delegate is not None and graph.nodes[ni].delegate.name() in costed)

    def score(moved: frozenset[int]) -> float:
        sim = _assemble(interpreter, delegates, system, costs, schedule, "", moved)
        return sim.latency if objective == "latency" else sim.energy

    tflite = _assemble(interpreter, delegates, system, costs, schedule, "", frozenset())
    search = "exact" if len(candidates) <= exact_limit else "greedy"
    moved = (_exact(candidates, score) if search == "exact" else _greedy(candidates, score))
    label = {ni: (graph.nodes[ni].delegate.name(), graph.nodes[ni].params.partition) for ni in candidates}
    choice = PartitionChoice(objective, search, tuple(label[ni] for ni in candidates),
                             tuple(label[ni] for ni in candidates if ni in moved), tflite.latency, tflite.energy)
    if not moved:
        return interpreter, delegates, choice
    host_nodes: dict[str, frozenset[int]] = {}
    for ni in moved:
        unit = graph.nodes[ni].delegate.name()
        host_nodes[unit] = host_nodes.get(unit, frozenset()) | frozenset(graph.nodes[ni].params.nodes_to_replace)
    rebuilt, rebuilt_delegates = build_interpreter(model, system, host_nodes)
    check = simulate_interpreter(rebuilt, rebuilt_delegates, system, schedule, loops=loops)
    if (check.latency, check.energy)[objective == "energy"] >= (tflite.latency, tflite.energy)[objective == "energy"]:
        log.info("partition policy 'cost': moving %s to the host was estimated to help but does not; keeping "
                 "TFLite's choice", choice.host)
        return interpreter, delegates, dataclasses.replace(choice, host=())
    return rebuilt, rebuilt_delegates, choice


def _check_objective(objective: str, system: System) -> None:
    """Refuse to minimise energy that is not modelled (it would minimise a partial sum)."""
    missing = energy_unmodelled(system)
    if objective == "energy" and missing:
        raise ValueError(f"objective energy, but energy is not modelled for {', '.join(missing)} (no energy.mac in "
                         "its config): give energy.mac, or minimise latency")


def _exact(candidates: Sequence[int], score) -> frozenset[int]:
    """The subset of `candidates` to move to the host with the least score; fewer moves win ties."""
    best, best_score = frozenset(), score(frozenset())
    for size in range(1, len(candidates) + 1):
        for subset in itertools.combinations(candidates, size):
            value = score(frozenset(subset))
            if value < best_score:
                best, best_score = frozenset(subset), value
    return best


def _greedy(candidates: Sequence[int], score) -> frozenset[int]:
    """Move to the host, one at a time, the candidate whose move lowers the score most; stop when none does."""
    moved, current = frozenset(), score(frozenset())
    while True:
        options = [(score(moved | {ni}), ni) for ni in candidates if ni not in moved]
        if not options:
            return moved
        value, ni = min(options)
        if value >= current:
            return moved
        moved, current = moved | {ni}, value


# Up to this many ways of handing the runs of nodes several accelerators claim to one of them, every
# way is built and searched; beyond, one run changes hands at a time while that helps.
ASSIGN_EXACT_LIMIT = 16


@dataclass(frozen=True)
class _Run:
    """Consecutive nodes (in run order) that the same accelerators can claim: the unit `assign: cost` hands out."""

    claimers: tuple[str, ...]  # accelerator names, in the system's order
    nodes: tuple[int, ...]


def _claim_runs(claimable: Mapping[str, frozenset[int]], order: Sequence[int], names: Sequence[str]) -> list[_Run]:
    """The nodes of `order` some accelerator can claim, cut into runs with the same claimers."""
    runs: list[_Run] = []
    previous: int | None = None  # the node before in `order`
    for ni in order:
        claimers = tuple(a for a in names if ni in claimable[a])
        if claimers and runs and runs[-1].claimers == claimers and runs[-1].nodes[-1] == previous:
            runs[-1] = _Run(claimers, (*runs[-1].nodes, ni))
        elif claimers:
            runs.append(_Run(claimers, (ni,)))
        previous = ni
    return runs


def _owners_allowed(runs: Sequence[_Run], owners: Sequence[str], names: Sequence[str]) -> dict[str, frozenset[int]]:
    """Each accelerator's nodes when the shared runs (those with several claimers) go to `owners` in turn."""
    shared = iter(owners)
    out: dict[str, set[int]] = {a: set() for a in names}
    for run in runs:
        owner = next(shared) if len(run.claimers) > 1 else run.claimers[0]
        out[owner].update(run.nodes)
    return {a: frozenset(nodes) for a, nodes in out.items()}


def _greedy_owners(choices: Sequence[tuple[str, ...]], score) -> tuple[str, ...]:
    """From every shared run with its first claimer, hand the one run to the claimer that lowers the score most;
    repeat while a change helps."""
    owners, current = tuple(c[0] for c in choices), score(tuple(c[0] for c in choices))
    while True:
        options = [(score(o), o) for k, c in enumerate(choices) for a in c if a != owners[k]
                   for o in [(*owners[:k], a, *owners[k + 1:])]]
        if not options:
            return owners
        value, best = min(options)
        if value >= current:
            return owners
        owners, current = best, value


def _assigned_interpreter(model: Model, system: System, schedule: str, loops: LoopTrips, exact_limit: int,
                          ) -> tuple[Interpreter, list[AcceleratorDelegate], PartitionChoice]:
    """`assign: cost`: every claimed run of nodes on the target (an accelerator that claims it, or the host) that
    gives the least simulated latency (or energy).

    Every node is costed once per device that can claim it (each accelerator alone, claiming all it
    can) and once on the host. Runs of consecutive nodes with the same claimers are the units;
    each way of handing the runs several accelerators claim to one of them (all ways up to
    ASSIGN_EXACT_LIMIT, else greedily) is built as an interpreter whose delegates may claim only
    their nodes, TFLite's partitioning and each accelerator's rules (max partitions, the Edge TPU's
    prefix) applied as usual; then, as policy 'cost' does, the subset of its partitions to keep on
    the host is searched by re-assembling the steps (every subset while all ways together stay
    within 2**exact_limit, else greedily). TFLite's order is searched the same way. The
    best estimate is rebuilt and simulated; it stands only if it beats both TFLite's order and
    partition policy 'cost' on every accelerator (simulated too), else the better of those does.
    """
    objective = system.assign.objective
    _check_objective(objective, system)
    plain = dataclasses.replace(system, assign=Assign())
    names = [a.name for a in system.accelerators]

    def metric(sim: Simulation) -> float:
        return sim.latency if objective == "latency" else sim.energy

    order_it, order_d = build_interpreter(model, plain)
    order_costs = _cost_nodes(order_it, order_d, plain, loops, True)
    host_cost = {**order_costs.where_run, **order_costs.on_host}  # every node on the host
    accel_cost: dict[str, Mapping[int, tuple[Cost, float | None]]] = {}
    claimable: dict[str, frozenset[int]] = {}
    for accel in system.accelerators:
        alone = System(system.host, (dataclasses.replace(accel, partition=PartitionPolicy()),))
        it, ds = build_interpreter(model, alone)
        claimable[accel.name] = frozenset(ds[0].claimed_nodes())
        accel_cost[accel.name] = _cost_nodes(it, ds, alone, loops, False).where_run
    runs = _claim_runs(claimable, sorted(host_cost), names)
    choices = [run.claimers for run in runs if len(run.claimers) > 1]
    ways = 1
    for c in choices:
        ways *= len(c)

    def searched(it: Interpreter, ds: Sequence[AcceleratorDelegate]) -> tuple[float, frozenset[int]]:
        """The best estimate over the subsets of `it`'s partitions kept on the host, and that subset."""
        where = dict(host_cost)
        for d in ds:
            where.update({ni: accel_cost[d.name()][ni] for ni in d.claimed_nodes()})
        costs = _NodeCosts(where, host_cost, order_costs.loops)
        graph = it.primary
        candidates = tuple(ni for ni in graph.execution_plan if graph.nodes[ni].delegate is not None)

        def score(moved: frozenset[int]) -> float:
            return metric(_assemble(it, ds, plain, costs, schedule, "", moved))

        # every subset only while all the ways together stay within policy cost's 2**exact_limit subsets
        exact = len(candidates) <= exact_limit and ways * 2 ** len(candidates) <= 2 ** exact_limit
        moved = _exact(candidates, score) if exact else _greedy(candidates, score)
        return score(moved), moved

    built: dict[tuple[str, ...], tuple[float, frozenset[int], Interpreter, list[AcceleratorDelegate]]] = {}

    def owners_score(owners: tuple[str, ...]) -> float:
        if owners not in built:
            it, ds = build_interpreter(model, plain, allowed=_owners_allowed(runs, owners, names))
            built[owners] = (*searched(it, ds), it, ds)
        return built[owners][0]

    search = "exact" if ways <= ASSIGN_EXACT_LIMIT else "greedy"
    if search == "exact":
        for owners in itertools.product(*choices):
            owners_score(owners)
    else:
        owners_score(_greedy_owners(choices, owners_score))
    order_score, order_moved = searched(order_it, order_d)
    estimates = [(order_score, order_moved, order_it, order_d), *built.values()]
    _, moved, it, ds = min(estimates, key=lambda e: e[0])  # ties: TFLite's order first
    if moved:
        keep = {d.name(): frozenset(d.claimed_nodes()) for d in ds}
        graph = it.primary
        for ni in moved:
            unit = graph.nodes[ni].delegate.name()
            keep[unit] -= frozenset(graph.nodes[ni].params.nodes_to_replace)
        it, ds = build_interpreter(model, plain, allowed=keep)
    costed = dataclasses.replace(plain, accelerators=tuple(
        a if a.partition.kind == "prefix" else dataclasses.replace(
            a, partition=dataclasses.replace(a.partition, kind="cost", objective=objective))
        for a in system.accelerators))
    policy_it, policy_d, _ = cost_aware_interpreter(model, costed, schedule, loops, exact_limit)
    order_sim = simulate_interpreter(order_it, order_d, plain, schedule, loops=loops)
    real = [(metric(order_sim), "TFLite's order", order_it, order_d),
            (metric(simulate_interpreter(policy_it, policy_d, plain, schedule, loops=loops)),
             "partition policy 'cost'", policy_it, policy_d),
            (metric(simulate_interpreter(it, ds, plain, schedule, loops=loops)), "assign: cost", it, ds)]
    value, source, it, ds = min(real, key=lambda r: r[0])  # ties: the first
    if real[2][0] > value:
        log.info("assign: cost: the estimated best assignment simulates at %.6g, %s at %.6g; keeping %s",
                 real[2][0], source, value, source)
    graph = order_it.primary
    partitions = [graph.nodes[ni] for ni in graph.execution_plan if graph.nodes[ni].delegate is not None]
    delegated = {ni for d in ds for ni in d.claimed_nodes()}
    host = tuple((n.delegate.name(), n.params.partition) for n in partitions
                 if delegated.isdisjoint(n.params.nodes_to_replace))
    return it, ds, PartitionChoice(objective, f"assign {search}",
                                   tuple((n.delegate.name(), n.params.partition) for n in partitions), host,
                                   order_sim.latency, order_sim.energy)


def simulate_interpreter(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
                         schedule: str = "sequential", name: str = "<model>",
                         loops: LoopTrips | None = None, choice: PartitionChoice | None = None) -> Simulation:
    """Simulate one inference of an interpreter whose accelerators were applied with `delegates`.

    Loops the interpreter has run are costed with the trips that run counted (unless `loops` overrides them).
    `choice` is recorded as is (`cost_aware_interpreter` makes it).
    """
    costs = _cost_nodes(interpreter, delegates, system, loops if loops is not None else LoopTrips(), False)
    return _assemble(interpreter, delegates, system, costs, schedule, name, frozenset(), choice)


@dataclass(frozen=True)
class _NodeCosts:
    """Every node's cost where it runs, and (when asked) each claimed node's cost on the host."""

    where_run: Mapping[int, tuple[Cost, float | None]]
    on_host: Mapping[int, tuple[Cost, float | None]]
    loops: tuple[LoopCount, ...]


@dataclass(frozen=True)
class DeviceWork:
    """One accelerator's nodes (model order) and their work, from its delegate's partitions."""

    nodes: tuple[int, ...]
    works: tuple[NodeWork, ...]


@dataclass(frozen=True)
class NodeWorks:
    """The work of every node of a delegated interpreter: what costing needs, shapes and types only.

    Args:
        devices: one per accelerator, in the system's order.
        host: the nodes the host runs (model order) and their work, trip counts resolved.
        claimed: every claimed node's work as its kernel reported it (trips unresolved), for
            costing claimed nodes on the host.
        loops: the trip count of every host control-flow node and where it came from.
    """

    devices: tuple[DeviceWork, ...]
    host: DeviceWork
    claimed: Mapping[int, NodeWork]
    loops: tuple[LoopCount, ...]


def node_works(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], loops: LoopTrips) -> NodeWorks:
    """The work of every node of `interpreter` (prepared, with `delegates` applied), where it runs.

    Raises:
        WorkError: a node has no work model, or a host loop's trip count is unknown and `loops` sets none.
    """
    graph = interpreter.primary
    devices = []
    claimed: dict[int, NodeWork] = {}
    for d in delegates:
        work = d.work_by_node()
        # A partition after a dynamic tensor is prepared only when it first runs (TFLite's
        # PrepareOpsStartingAt); cost-only, its nodes are sized from the shapes allocation gave
        # them, as host nodes are.
        for ni in d.claimed_nodes():
            if ni not in work:
                work[ni] = node_work(graph.context, graph.nodes[ni])
        order = tuple(sorted(work))
        devices.append(DeviceWork(order, tuple(work[i] for i in order)))
        claimed.update(work)
    on_host = tuple(sorted(ni for ni in graph.execution_plan if graph.nodes[ni].delegate is None))
    host_work = tuple(resolve_trips(node_work(graph.context, graph.nodes[ni]), loops, _HOW_TO_SET_TRIPS)
                      for ni in on_host)
    loop_counts = tuple(LoopCount(c.where, c.op, c.trips, c.trips_from) for w in host_work for c in control_nodes(w))
    return NodeWorks(tuple(devices), DeviceWork(on_host, host_work), claimed, loop_counts)


def _cost_nodes(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
                loops: LoopTrips, claimed_on_host: bool) -> _NodeCosts:
    """Cost every node once on the device that runs it (and, if `claimed_on_host`, every claimed node on the host)."""
    return cost_works(node_works(interpreter, delegates, loops), system, loops, claimed_on_host)


def cost_works(works: NodeWorks, system: System, loops: LoopTrips, claimed_on_host: bool = False) -> _NodeCosts:
    """Cost every node of `works` on the device that runs it (and, if `claimed_on_host`, claimed nodes on the host).

    Args:
        loops: trip counts for claimed control-flow nodes costed on the host.
    """
    # Costs: every device's nodes in model order, through its kind (a kind may share state
    # between nodes, e.g. a parameter cache filled in model order).
    node_cost: dict[int, tuple[Cost, float | None]] = {}
    for device, accel in zip(works.devices, system.accelerators):
        node_cost.update(_device_costs(accel, device.nodes, device.works))
    host_costs = _host_costs(works.host.works, system.host)
    node_cost.update({ni: (c, utilization(w, c, system.host))
                      for ni, w, c in zip(works.host.nodes, works.host.works, host_costs)})
    moved: dict[int, tuple[Cost, float | None]] = {}
    if claimed_on_host:
        order = sorted(works.claimed)
        claimed = [resolve_trips(works.claimed[i], loops, _HOW_TO_SET_TRIPS) for i in order]
        moved = {ni: (c, utilization(w, c, system.host))
                 for ni, w, c in zip(order, claimed, _host_costs(claimed, system.host))}
    return _NodeCosts(node_cost, moved, works.loops)


def _assemble(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
              costs: _NodeCosts, schedule: str, name: str, moved: frozenset[int],
              choice: PartitionChoice | None = None) -> Simulation:
    """Build one inference's steps from node costs and simulate them; delegate nodes in `moved` run on the host."""
    graph = interpreter.primary
    tensors = graph.tensors
    accel_of = {d.name(): a for d, a in zip(delegates, system.accelerators)}
    node_cost = costs.where_run
    b = _StepBuilder()
    for i in graph.inputs:
        b.ready_on[(i, HOST)] = None
    partitions: list[PartitionSummary] = []
    timings: list[NodeTiming] = []

    def on_host(ni: int, c: Cost, util: float | None) -> None:
        node = graph.nodes[ni]
        deps = [b.producer(t, HOST) for t in node.inputs if t >= 0]
        sid = b.add(HOST, "compute", c.seconds, f"{node.op_name} #{ni}", deps, node=ni, stall=c.stall_seconds)
        for t in node.outputs:
            b.ready_on[(t, HOST)] = sid
        timings.append(NodeTiming(ni, node.op_name, HOST, None, c.seconds, c.macs, c, util))

    for ni in graph.execution_plan:
        node = graph.nodes[ni]
        if node.delegate is None:
            on_host(ni, *node_cost[ni])
            continue
        if ni in moved:
            for inner in node.params.nodes_to_replace:
                on_host(inner, *costs.on_host[inner])
            continue
        accel = accel_of[node.delegate.name()]
        link = accel.link
        params = node.params
        p = params.partition
        label = f"{accel.name} partition {p}"
        in_bytes = out_bytes = 0
        ready = []
        for t in params.input_tensors:
            tensor = tensors[t]
            if tensor.is_constant:
                continue
            if link.shared_memory or b.available(t, accel.name):
                ready.append(b.producer(t, HOST) if link.shared_memory else b.producer(t, accel.name))
                continue
            in_bytes += tensor.nbytes
            sid = b.add(f"{accel.name}.link", "transfer", _link_seconds(link, tensor.nbytes),
                        f"{label} in: {tensor.name}", [b.producer(t, HOST)], partition=p, bytes=tensor.nbytes)
            b.ready_on[(t, accel.name)] = sid
            ready.append(sid)
        last = b.add(accel.name, "overhead", link.call_overhead, f"{label} call", ready, partition=p)
        for inner in params.nodes_to_replace:
            c, util = node_cost[inner]
            op = graph.nodes[inner].op_name
            last = b.add(accel.name, "compute", c.seconds, f"{op} #{inner}", [last], node=inner, partition=p,
                         stall=c.stall_seconds)
            timings.append(NodeTiming(inner, op, accel.name, p, c.seconds, c.macs, c, util))
            for t in graph.nodes[inner].outputs:
                b.ready_on[(t, accel.name)] = last
        for t in params.output_tensors:
            tensor = tensors[t]
            if link.shared_memory:
                b.ready_on[(t, HOST)] = last
                continue
            out_bytes += tensor.nbytes
            sid = b.add(f"{accel.name}.link", "transfer", _link_seconds(link, tensor.nbytes),
                        f"{label} out: {tensor.name}", [last], partition=p, bytes=tensor.nbytes)
            b.ready_on[(t, HOST)] = sid
        inner_cost = total([node_cost[i][0] for i in params.nodes_to_replace])
        partitions.append(PartitionSummary(p, accel.name, ni, tuple(params.nodes_to_replace),
                                           tuple(graph.nodes[i].op_name for i in params.nodes_to_replace),
                                           in_bytes, out_bytes, inner_cost.param_bytes_streamed, 0.0, 0.0, 0.0,
                                           cost=inner_cost,
                                           transfer_energy=(in_bytes + out_bytes) * link.energy))
    result = simulate(b.steps, schedule)
    by_partition = _by_unit_partition(result)
    partitions = [dataclasses.replace(ps, **by_partition.get((ps.unit, ps.index), {})) for ps in partitions]
    init = simulate(_parameter_loads(delegates, accel_of, {ni: c for ni, (c, _) in node_cost.items()}))
    init_energy = sum(e.bytes * accel_of[e.resource.removesuffix(".link")].link.energy for e in init.events)
    timings.sort(key=lambda t: t.index)
    return Simulation(name, system.host.name, tuple(a.name for a in system.accelerators), schedule, result, init,
                      tuple(timings), tuple(partitions), tuple(interpreter.get_delegation_report()),
                      idle_energy=_idle_energy(system, timings, result.latency), init_energy=init_energy,
                      loops=costs.loops, choice=choice, energy_unmodelled=energy_unmodelled(system))


def _idle_energy(system: System, timings: Sequence[NodeTiming], latency: float) -> tuple[tuple[str, float], ...]:
    """Each device's static power over the part of the inference it spends not running nodes."""
    busy: dict[str, float] = {}
    for t in timings:
        busy[t.unit] = busy.get(t.unit, 0.0) + t.seconds
    return tuple((d.name, static_power(d) * max(0.0, latency - busy.get(HOST if d is system.host else d.name, 0.0)))
                 for d in (system.host, *system.accelerators))


def _by_unit_partition(result: SimResult) -> dict[tuple[str, int], dict[str, float]]:
    out: dict[tuple[str, int], dict[str, float]] = {}
    for e in result.events:
        if e.partition is None:
            continue
        unit = e.resource.removesuffix(".link")
        slot = out.setdefault((unit, e.partition), {"compute": 0.0, "memory": 0.0, "transfer": 0.0, "overhead": 0.0})
        for kind, seconds in e.times():
            if kind in slot:
                slot[kind] += seconds
    return out


def _parameter_loads(delegates: Sequence[AcceleratorDelegate], accel_of: Mapping[str, HardwareConfig],
                     node_cost: Mapping[int, Cost]) -> list[Step]:
    """Initialization: weights an accelerator keeps cross its link once (none with shared memory).

    Weights living in host memory (`memory.weights: link`) are loaded only as far as they are
    cached; weights living on a device level are all loaded there. `node_cost` gives each
    claimed node's cost.
    """
    steps = []
    for d in delegates:
        accel = accel_of[d.name()]
        if accel.link.shared_memory:
            continue
        works = d.work_by_node()
        streamed = {i: node_cost[i].param_bytes_streamed if accel.memory.weights == LINK else 0 for i in works}
        cached = sum(w.weight_bytes - streamed[i] for i, w in works.items())
        if cached > 0:
            steps.append(Step(len(steps), f"{accel.name}.link", "param_load", _link_seconds(accel.link, cached),
                              f"{accel.name} parameters", bytes=cached))
    return steps
