"""Delegation: a system's accelerators applied to a model as TFLite delegates, and the work of every node.

The delegates are built from each accelerator's delegation policy (claims, partition policy,
numerics: a device's `policy`, `accelsim.hardware.config.accelerator_policy`); where placement chose to
keep nodes on the host or hand them to one accelerator, those choices are arguments here
(`host_nodes`, `allowed`), never fields of a policy. Shapes and types suffice for the work (`runtime.work`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.delegates.spec import check_claim, constraint_refusal, facts_from_node
from accelsim.hardware.config import System, accelerator_policy
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips, NodeWork, control_nodes, node_work, resolve_trips
from accelsim.simulation.inference import LoopCount
from accelsim.simulation.nnapi import nnapi_interpreter


def delegates_for(system: System, host_nodes: Mapping[str, frozenset[int]] | None = None,
                  allowed: Mapping[str, frozenset[int]] | None = None) -> list[AcceleratorDelegate]:
    """One AcceleratorDelegate per accelerator, in the system's order (the order they are applied).

    Args:
        host_nodes: accelerator name -> nodes whose partitions its policy 'cost' keeps on the host.
        allowed: accelerator name -> the only nodes it may claim (`assign: cost` decides them).
    """
    host_nodes = host_nodes or {}
    allowed = allowed or {}
    return [AcceleratorDelegate(policy, host_nodes=host_nodes.get(policy.name, frozenset()),
                                allowed_nodes=allowed.get(policy.name))
            for policy in (accelerator_policy(accel) for accel in system.accelerators)]


def build_interpreter(model: Model, system: System, host_nodes: Mapping[str, frozenset[int]] | None = None,
                      allowed: Mapping[str, frozenset[int]] | None = None, *, shapes_only: bool = False,
                      int16_as_declared: bool = False) -> tuple[Interpreter, list[AcceleratorDelegate]]:
    """An interpreter over `model` with the system's accelerators applied in order, tensors allocated.

    Args:
        host_nodes, allowed: see `delegates_for`; `cost_aware_interpreter` chooses them.
        shapes_only: prepare shapes and work only, for cost-only simulation (it cannot invoke;
            `accelsim.runtime.Interpreter`'s argument of that name).
        int16_as_declared: with shapes_only, INT16 nodes the runtime has no kernel for keep their file shapes
            (`accelsim.runtime.Interpreter`'s argument of that name).
    """
    if system.nnapi is not None:  # NNAPI decides what its drivers run (accelsim.simulation.nnapi)
        interpreter, delegates, _, _ = nnapi_interpreter(model, system, shapes_only=shapes_only)
        return interpreter, delegates
    delegates = delegates_for(system, host_nodes, allowed)
    interpreter = Interpreter(model=model, experimental_delegates=delegates, shapes_only=shapes_only,
                              int16_as_declared=int16_as_declared)
    interpreter.allocate_tensors()
    return interpreter, delegates


def constraint_refusals(interpreter: Interpreter, system: System) -> tuple[str, ...]:
    """One line for each accelerator that can run no node of the model because its claim constraints refuse them all.

    Such an accelerator's claims match some nodes by op, version and data type, and for every one of them each
    matching rule breaks a constraint (`accelsim.delegates.spec.constraint_refusal`): as configured, it cannot run
    this model at all (`accelsim.core.feasibility`'s reason 'constraints'). Placement plays no part: it is the rules
    against the primary subgraph's nodes. An accelerator whose claims match no node (say, int8 claims on a float
    model) is not refused by its constraints and is not listed. Each line starts with the config's file:line.
    """
    graph = interpreter.primary
    facts = [(ni, facts_from_node(n, graph.tensors)) for ni, n in enumerate(graph.nodes) if n.op_name != "DELEGATE"]
    lines = []
    for accel in system.accelerators:
        refused = []
        for ni, f in facts:
            if check_claim(accel.policy.claims, f)[0]:
                break  # it runs this node: not idle
            why = constraint_refusal(accel.policy.claims, f)
            if why is not None:
                refused.append((ni, f.op, *why))
        else:
            if refused:
                ni, op, rule, why = refused[0]
                lines.append(accel.located(("claims", rule, "constraints"),
                                           f"{accel.name} can run no node of the model: its claims match "
                                           f"{len(refused)} node(s) by op, version and type, and a constraint "
                                           f"refuses every one (first: node {ni} {op}, {why}); relax the "
                                           "constraints, or claim other ops"))
    return tuple(lines)


# How users set trip counts, named in the error for a loop nobody can count.
HOW_TO_SET_TRIPS = "experiment key loops: {default_trips: N, nodes: {'<subgraph>:<node>': N}} or --loop-trips"


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
    host_work = tuple(resolve_trips(node_work(graph.context, graph.nodes[ni]), loops, HOW_TO_SET_TRIPS)
                      for ni in on_host)
    loop_counts = tuple(LoopCount(where=c.where, op=c.op, trips=c.trips, source=c.trips_from)
                        for w in host_work for c in control_nodes(w))
    return NodeWorks(tuple(devices), DeviceWork(on_host, host_work), claimed, loop_counts)
