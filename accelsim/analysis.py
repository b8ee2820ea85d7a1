"""One analysis of a model on a system's claims, shared by every design point that only changes costs.

An `Analysis` is what a cost-only simulation computes before any cost: the parsed model, the
interpreter with the accelerators' delegates applied (partitions), and the work of every node
(shapes and types only; `accelsim.system.NodeWorks`). Design points that differ only in cost
parameters — clock, array shape, bandwidths, level sizes, energies, call overhead, the link —
share one: each re-runs only the cost functions, memory, energy and the schedule
(`accelsim.system.simulate_analysis`). A point that changes what is claimed or how it is
partitioned needs its own, and `analysis_key` tells them apart.

Which config sections reach the analysis is one table, `SECTIONS`: a key of every section a
hardware config has (`accelsim.config.KEYS` and `compute:`), checked by the tests against the
config schema, so a new section must be classified here. The analysis sections are exactly
what the delegate is built from (`accelsim.config.to_spec`: name, claims, partition policy,
numerics), and the system's `assign`. A host's config never reaches the analysis (a host claims
nothing). One exception, written once in `analysis_facts`: when costs choose where nodes run
(an accelerator's partition policy 'cost', or `assign: cost`), points share an analysis only
with identical systems and schedules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path

from accelsim.config import HardwareConfig, System
from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.runtime.work import LoopTrips
from accelsim.system import NodeWorks, PartitionChoice, build_interpreter, cost_aware_interpreter, node_works

ANALYSIS = "analysis"  # a change gives another analysis: what is claimed, how it is partitioned
COSTING = "costing"  # a change re-runs only the costs and the schedule of the same analysis

# Every top-level section of a hardware config and the role of a change to it.
SECTIONS = {
    "name": ANALYSIS,  # the delegate's name: the delegation report and every partition carry it
    "kind": COSTING,  # which cost model runs; claims are the config's own
    "clock": COSTING,
    "compute": COSTING,
    "memory": COSTING,
    "energy": COSTING,
    "link": COSTING,  # bandwidth, latency, call overhead, shared memory, energy: steps, not claims
    "calibration": COSTING,  # text: what the numbers were checked against; it belongs to the hardware's numbers
    "claims": ANALYSIS,
    "partition": ANALYSIS,  # policy, objective, max_delegated_partitions, min_nodes_per_partition
    "numerics": ANALYSIS,  # the delegate asks for its profile when it takes nodes
}


def model_digest(model: str | Path | bytes) -> str:
    """The sha256 of a model's bytes (given as the bytes or a path), the model's part of an analysis key."""
    data = model if isinstance(model, bytes) else Path(model).read_bytes()
    return hashlib.sha256(data).hexdigest()


def _delegation(config: HardwareConfig) -> tuple:
    """The analysis sections of an accelerator's config (hashable frozen values)."""
    return tuple(getattr(config, name) for name, role in SECTIONS.items() if role == ANALYSIS)


def delegation_facts(system: System) -> tuple:
    """What delegation sees of `system`: the analysis sections of each accelerator, in order."""
    return tuple(_delegation(a) for a in system.accelerators)


def _loops_key(loops: LoopTrips | None) -> tuple:
    loops = loops if loops is not None else LoopTrips()
    return loops.default_trips, tuple(sorted(loops.nodes.items()))


def analysis_key(digest: str, system: System, schedule: str = "sequential",
                 loops: LoopTrips | None = None) -> Hashable:
    """What an analysis depends on: the model (`model_digest`) and `analysis_facts`."""
    return digest, analysis_facts(system, schedule, loops)


def analysis_facts(system: System, schedule: str = "sequential", loops: LoopTrips | None = None) -> Hashable:
    """What an analysis depends on besides the model: the delegation facts, `assign`, the loop overrides.

    When costs choose where nodes run (`chosen_by_cost`), the partitions depend on every cost,
    so the whole system (file locations aside) and the schedule are part of it.
    """
    facts: tuple = (delegation_facts(system), system.assign, _loops_key(loops))
    if chosen_by_cost(system):
        facts += (_costed_system(system), schedule)
    return facts


def chosen_by_cost(system: System) -> bool:
    """Whether costs choose where nodes run: an accelerator's partition policy 'cost', or `assign: cost`."""
    return system.assign.policy == "cost" or any(a.partition.kind == "cost" for a in system.accelerators)


def _costed_system(system: System) -> str:
    # repr: the configs hold mappings (not hashable); equal systems built in one process print the same.
    return repr([(c.name, c.kind, c.clock, c.compute, c.memory, c.energy, c.link)
                 for c in (system.host, *system.accelerators)])


@dataclass(frozen=True)
class Analysis:
    """A model delegated on a system's claims, and the work of every node: what every costing of it shares.

    Args:
        name: the model's name in simulations (its path, or "<model>").
        interpreter: the interpreter with the delegates applied and tensors allocated (read only from here on).
        delegates: the applied delegates, one per accelerator in the system's order.
        works: every node's work where it runs.
        facts: `analysis_facts` of the system, schedule and loops it was made for.
        loops: the trip-count overrides it was made with.
        choice: what partition policy 'cost' or `assign: cost` decided (None otherwise).
    """

    name: str
    interpreter: Interpreter
    delegates: tuple[AcceleratorDelegate, ...]
    works: NodeWorks
    facts: Hashable
    loops: LoopTrips
    choice: PartitionChoice | None = None


def analyze(model: Model | str | bytes, system: System, schedule: str = "sequential",
            loops: LoopTrips | None = None) -> Analysis:
    """Parse (unless given a Model), delegate and size every node of `model` on `system`'s claims.

    Kernels prepare shapes only (`accelsim.runtime.Interpreter(shapes_only=True)`): no tables, folded
    weights or requantization stages. `schedule` matters only to accelerators with partition
    policy 'cost' and to `assign: cost` (it is how they cost their choice); their partitions are
    chosen by `accelsim.system.cost_aware_interpreter`, which prepares kernels fully.

    Raises:
        ModelError: the model cannot be read.
        WorkError: a node has no work model, or a loop's trip count is unknown and `loops` sets none.
        ValueError: accelerators with partition policy 'cost' ask for different objectives.
    """
    name = model if isinstance(model, str) else "<model>"
    ir = model if isinstance(model, Model) else load_model(model)
    loops = loops if loops is not None else LoopTrips()
    if chosen_by_cost(system):
        interpreter, delegates, choice = cost_aware_interpreter(ir, system, schedule, loops)
    else:  # cost_aware_interpreter's delegation, without the numeric preparation nothing here needs
        (interpreter, delegates), choice = build_interpreter(ir, system, shapes_only=True), None
    return Analysis(name, interpreter, tuple(delegates), node_works(interpreter, delegates, loops),
                    analysis_facts(system, schedule, loops), loops, choice)
