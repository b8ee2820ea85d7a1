"""Placement searches: where costs, not TFLite's order, decide which nodes run where.

Partition policy 'cost' (`cost_aware_interpreter`) keeps on the host the delegate partitions
that do not pay for themselves; `assign: cost` (`_assigned_interpreter`) hands the runs of
nodes several accelerators claim to the cheapest target. Both use costing
(`accelsim.simulation.costing`) and pass their decisions to delegation as arguments
(`accelsim.simulation.delegation.build_interpreter`); costing never imports this module.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.delegates.spec import PartitionPolicy
from accelsim.hardware.config import Assign, System
from accelsim.hardware.energy import energy_unmodelled
from accelsim.hardware.types import Cost
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.costing import NodeCosts, assemble, cost_nodes, simulate_interpreter
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.inference import PartitionChoice, Simulation

log = logging.getLogger(__name__)


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
    if system.assign.policy != "order":
        return ASSIGNERS[system.assign.policy](model, system, schedule, loops if loops is not None else LoopTrips(),
                                               exact_limit)
    interpreter, delegates = build_interpreter(model, system)
    costed = {a.name for a in system.accelerators if a.policy.partition.kind == "cost"}
    if not costed:
        return interpreter, delegates, None
    objectives = sorted({a.policy.partition.objective for a in system.accelerators if a.name in costed})
    if len(objectives) > 1:
        raise ValueError(f"accelerators {sorted(costed)} with partition policy 'cost' ask for different objectives "
                         f"{objectives}; give them one partition.objective")
    objective = objectives[0]
    _check_objective(objective, system)
    loops = loops if loops is not None else LoopTrips()
    costs = cost_nodes(interpreter, delegates, system, loops, True)
    graph = interpreter.primary
    candidates = tuple(ni for ni in graph.execution_plan
                       if graph.nodes[ni].delegate is not None and graph.nodes[ni].delegate.name() in costed)

    def score(moved: frozenset[int]) -> float:
        sim = assemble(interpreter, delegates, system, costs, schedule, "", moved)
        return sim.latency if objective == "latency" else sim.energy

    tflite = assemble(interpreter, delegates, system, costs, schedule, "", frozenset())
    search = "exact" if len(candidates) <= exact_limit else "greedy"
    moved = (_exact(candidates, score) if search == "exact" else _greedy(candidates, score))
    label = {ni: (graph.nodes[ni].delegate.name(), graph.nodes[ni].params.partition) for ni in candidates}
    choice = PartitionChoice(objective=objective, search=search, tflite=tuple(label[ni] for ni in candidates),
                             host=tuple(label[ni] for ni in candidates if ni in moved),
                             tflite_latency=tflite.latency, tflite_energy=tflite.energy)
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
    order_costs = cost_nodes(order_it, order_d, plain, loops, True)
    host_cost = {**order_costs.where_run, **order_costs.on_host}  # every node on the host
    accel_cost: dict[str, Mapping[int, tuple[Cost, float | None]]] = {}
    claimable: dict[str, frozenset[int]] = {}
    for accel in system.accelerators:
        alone = System(system.host, (accel.with_policy(partition=PartitionPolicy()),))
        it, ds = build_interpreter(model, alone)
        claimable[accel.name] = frozenset(ds[0].claimed_nodes())
        accel_cost[accel.name] = cost_nodes(it, ds, alone, loops, False).where_run
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
        costs = NodeCosts(where, host_cost, order_costs.loops, order_costs.host_notes, order_costs.notes)
        graph = it.primary
        candidates = tuple(ni for ni in graph.execution_plan if graph.nodes[ni].delegate is not None)

        def score(moved: frozenset[int]) -> float:
            return metric(assemble(it, ds, plain, costs, schedule, "", moved))

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
        a if a.policy.partition.kind == "prefix" else a.with_policy(
            partition=dataclasses.replace(a.policy.partition, kind="cost", objective=objective))
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
    return it, ds, PartitionChoice(objective=objective, search=f"assign {search}",
                                   tflite=tuple((n.delegate.name(), n.params.partition) for n in partitions),
                                   host=host, tflite_latency=order_sim.latency, tflite_energy=order_sim.energy)


# The placement policies of a system's `assign:` besides TFLite's order: name -> the search that chooses the
# interpreter, its delegates and the PartitionChoice to record, called as (model, system, schedule, loops,
# exact_limit). A new policy is an entry here and its name in accelsim.hardware.config.ASSIGN_POLICIES (a test adds
# a toy).
ASSIGNERS: dict[str, Callable[[Model, System, str, LoopTrips, int],
                              tuple[Interpreter, list[AcceleratorDelegate], PartitionChoice]]] = {
    "cost": _assigned_interpreter,
}
