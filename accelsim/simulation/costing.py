"""Costing and step assembly: every node costed on its device, one inference's steps built and scheduled.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from accelsim.core.schedule import SimResult, Step, simulate
from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.hardware.config import System
from accelsim.hardware.energy import energy_unmodelled, static_power
from accelsim.hardware.memory import LINK, spill_note
from accelsim.hardware.types import Cost, Hardware, total
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.work import LoopTrips, NodeWork, resolve_trips
from accelsim.simulation.delegation import HOW_TO_SET_TRIPS, NodeWorks, node_works
from accelsim.simulation.inference import HOST, LoopCount, NodeTiming, PartitionChoice, PartitionSummary, Simulation


def _link_seconds(link, nbytes: int) -> float:
    return link.latency + nbytes / link.bandwidth


def _costed(device: Hardware, nodes: Sequence[int], works: Sequence[NodeWork],
            costs: Sequence[Cost]) -> dict[int, tuple[Cost, float | None]]:
    """Cost and utilisation of each of a device's nodes (given in model order), by node index."""
    return dict(zip(nodes, zip(costs, device.utilizations(works, costs))))


def _host_costs(works: Sequence[NodeWork], host: Hardware) -> list[Cost]:
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


def simulate_interpreter(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
                         schedule: str = "sequential", name: str = "<model>",
                         loops: LoopTrips | None = None, choice: PartitionChoice | None = None) -> Simulation:
    """Simulate one inference of an interpreter whose accelerators were applied with `delegates`.

    Loops the interpreter has run are costed with the trips that run counted (unless `loops` overrides them).
    `choice` is recorded as is (`cost_aware_interpreter` makes it).
    """
    costs = cost_nodes(interpreter, delegates, system, loops if loops is not None else LoopTrips(), False)
    return assemble(interpreter, delegates, system, costs, schedule, name, frozenset(), choice)


@dataclass(frozen=True)
class NodeCosts:
    """Every node's cost where it runs, and (when asked) each claimed node's cost on the host."""

    where_run: Mapping[int, tuple[Cost, float | None]]
    on_host: Mapping[int, tuple[Cost, float | None]]
    loops: tuple[LoopCount, ...]
    host_notes: Mapping[int, str] = dataclasses.field(default_factory=dict)  # the host kind's per-node notes
    notes: tuple[str, ...] = ()  # what the costs rest on that a reader must see beside them (spilled weights)


def cost_nodes(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
                loops: LoopTrips, claimed_on_host: bool) -> NodeCosts:
    """Cost every node once on the device that runs it (and, if `claimed_on_host`, every claimed node on the host)."""
    return cost_works(node_works(interpreter, delegates, loops), system, loops, claimed_on_host)


def cost_works(works: NodeWorks, system: System, loops: LoopTrips, claimed_on_host: bool = False) -> NodeCosts:
    """Cost every node of `works` on the device that runs it (and, if `claimed_on_host`, claimed nodes on the host).

    Args:
        loops: trip counts for claimed control-flow nodes costed on the host.
    """
    # Costs: every device's nodes in model order, through its kind (a kind may share state
    # between nodes, e.g. a parameter cache filled in model order).
    node_cost: dict[int, tuple[Cost, float | None]] = {}
    notes = []
    for device, accel in zip(works.devices, system.accelerators):
        hw = accel.hardware
        node_cost.update(_costed(hw, device.nodes, device.works, hw.costs(device.works)))
        notes.append(spill_note(device.works, hw.memory, hw.name))
    host = system.host.hardware
    node_cost.update(_costed(host, works.host.nodes, works.host.works, _host_costs(works.host.works, host)))
    host_notes = dict(zip(works.host.nodes, host.node_notes(works.host.works)))
    notes.append(spill_note([w for w in works.host.works if w.kind != "control"], host.memory, host.name))
    moved: dict[int, tuple[Cost, float | None]] = {}
    if claimed_on_host:
        order = sorted(works.claimed)
        claimed = [resolve_trips(works.claimed[i], loops, HOW_TO_SET_TRIPS) for i in order]
        moved = _costed(host, order, claimed, _host_costs(claimed, host))
        host_notes.update(zip(order, host.node_notes(claimed)))
    return NodeCosts(node_cost, moved, works.loops, {i: n for i, n in host_notes.items() if n},
                     tuple(n for n in notes if n))


def _build_steps(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
                 costs: NodeCosts, moved: frozenset[int]) -> tuple[list[Step], list[dict], list[NodeTiming]]:
    """One inference's steps, each partition's fields but its times, and every node's timing (model order later)."""
    graph = interpreter.primary
    tensors = graph.tensors
    accel_of = {d.name(): a.hardware for d, a in zip(delegates, system.accelerators)}
    node_cost = costs.where_run
    b = _StepBuilder()
    for i in graph.inputs:
        b.ready_on[(i, HOST)] = None
    drafts: list[dict] = []  # each partition's fields but its times, known once the steps are scheduled
    timings: list[NodeTiming] = []

    def on_host(ni: int, c: Cost, util: float | None) -> None:
        node = graph.nodes[ni]
        deps = [b.producer(t, HOST) for t in node.inputs if t >= 0]
        sid = b.add(HOST, "compute", c.seconds, f"{node.op_name} #{ni}", deps, node=ni, stall=c.stall_seconds)
        for t in node.outputs:
            b.ready_on[(t, HOST)] = sid
        timings.append(NodeTiming(index=ni, op=node.op_name, unit=HOST, partition=None, seconds=c.seconds, macs=c.macs,
                                  cost=c, utilization=util, note=costs.host_notes.get(ni, "")))

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
            timings.append(NodeTiming(index=inner, op=op, unit=accel.name, partition=p, seconds=c.seconds, macs=c.macs,
                                      cost=c, utilization=util))
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
        drafts.append(dict(index=p, unit=accel.name, delegate_node=ni, nodes=tuple(params.nodes_to_replace),
                           ops=tuple(graph.nodes[i].op_name for i in params.nodes_to_replace),
                           input_bytes=in_bytes, output_bytes=out_bytes,
                           streamed_param_bytes=inner_cost.param_bytes_streamed, cost=inner_cost,
                           transfer_energy=(in_bytes + out_bytes) * link.energy))
    return b.steps, drafts, timings


def inference_steps(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
                    costs: NodeCosts, moved: frozenset[int] = frozenset()) -> tuple[Step, ...]:
    """One inference's steps with their dependencies, as `assemble` schedules them (what a stream replays)."""
    return tuple(_build_steps(interpreter, delegates, system, costs, moved)[0])


def assemble(interpreter: Interpreter, delegates: Sequence[AcceleratorDelegate], system: System,
              costs: NodeCosts, schedule: str, name: str, moved: frozenset[int],
              choice: PartitionChoice | None = None, delegation: Sequence | None = None) -> Simulation:
    """Build one inference's steps from node costs and simulate them; delegate nodes in `moved` run on the host.

    `delegation` is the interpreter's delegation report when the caller has it (an analysis keeps it).
    """
    accel_of = {d.name(): a.hardware for d, a in zip(delegates, system.accelerators)}
    node_cost = costs.where_run
    steps, drafts, timings = _build_steps(interpreter, delegates, system, costs, moved)
    result = simulate(steps, schedule)
    by_partition = _by_unit_partition(result)
    partitions = [PartitionSummary(**d, **by_partition.get((d["unit"], d["index"]), _NO_TIME)) for d in drafts]
    init = simulate(_parameter_loads(delegates, accel_of, {ni: c for ni, (c, _) in node_cost.items()}))
    init_energy = sum(e.bytes * accel_of[e.resource.removesuffix(".link")].link.energy for e in init.events)
    timings.sort(key=lambda t: t.index)
    notes = costs.notes + _custom_on_host(interpreter.primary, timings, system.host.name)
    return Simulation(model=name, host=system.host.name, accelerators=tuple(a.name for a in system.accelerators),
                      schedule=schedule, result=result, init=init, nodes=tuple(timings), partitions=tuple(partitions),
                      delegation=tuple(delegation if delegation is not None else interpreter.get_delegation_report()),
                      idle_energy=_idle_energy(system, timings, result.latency), init_energy=init_energy,
                      loops=costs.loops, choice=choice, energy_unmodelled=energy_unmodelled(system), notes=notes)


def _custom_on_host(graph, timings: Sequence[NodeTiming], host: str) -> tuple[str, ...]:
    """A warning per custom op the host runs: no host config has a rate for it, so its cost is its op module's guess."""
    nodes: dict[str, list[NodeTiming]] = {}
    for t in timings:
        operator = graph.nodes[t.index].operator
        if t.unit == HOST and operator is not None and operator.op == "CUSTOM":
            nodes.setdefault(t.op, []).append(t)
    out = []
    for op, runs in nodes.items():
        where = ", ".join(str(t.index) for t in runs[:5]) + (", ..." if len(runs) > 5 else "")
        out.append(f"custom op {op!r} (node{'s' if len(runs) > 1 else ''} {where}) on the host {host}: no host config "
                   f"has a cost of its own for a custom op, so it is costed from its op module's work estimate "
                   f"({sum(t.macs for t in runs):,} ops) at {host}'s rates for builtin ops: an unmeasured guess")
    return tuple(out)


def _idle_energy(system: System, timings: Sequence[NodeTiming], latency: float) -> tuple[tuple[str, float], ...]:
    """Each device's static power over the part of the inference it spends not running nodes."""
    busy: dict[str, float] = {}
    for t in timings:
        busy[t.unit] = busy.get(t.unit, 0.0) + t.seconds
    out = []
    for d in (system.host, *system.accelerators):
        idle = max(0.0, latency - busy.get(HOST if d is system.host else d.name, 0.0))
        out.append((d.name, static_power(d.hardware) * idle))
    return tuple(out)


# A partition's time by kind (seconds): PartitionSummary's compute, memory, transfer and overhead.
_NO_TIME = {"compute": 0.0, "memory": 0.0, "transfer": 0.0, "overhead": 0.0}


def _by_unit_partition(result: SimResult) -> dict[tuple[str, int], dict[str, float]]:
    out: dict[tuple[str, int], dict[str, float]] = {}
    for e in result.events:
        if e.partition is None:
            continue
        unit = e.resource.removesuffix(".link")
        slot = out.setdefault((unit, e.partition), dict(_NO_TIME))
        for kind, seconds in e.times():
            if kind in slot:
                slot[kind] += seconds
    return out


def _parameter_loads(delegates: Sequence[AcceleratorDelegate], accel_of: Mapping[str, Hardware],
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
