"""One analysis of a model on a system's claims, shared by every design point that only changes costs.

An `Analysis` is what a cost-only simulation computes before any cost: the parsed model, the
interpreter with the accelerators' delegates applied (partitions), and the work of every node
(shapes and types only; `accelsim.simulation.delegation.NodeWorks`). Design points that differ only in cost
parameters — clock, array shape, bandwidths, level sizes, energies, call overhead, the link —
share one: each re-runs only the cost functions, memory, energy and the schedule
(`simulate_analysis`). A point that changes what is claimed or how it is
partitioned needs its own, and `analysis_key` tells them apart.

Which config sections reach the analysis is one table, `accelsim.hardware.device.SECTIONS`: each section
of a hardware config fills a device's `Hardware` or its `DelegationPolicy`, and the policy sections
are exactly what the delegate is built from (a device's `policy`: name, claims, partition policy,
numerics). With the system's `assign` they are `accelsim.hardware.config.identity(system,
hardware=False)`. A host's config never reaches the analysis (a host claims nothing). One
exception, written once in `analysis_facts`: when costs choose where nodes run (an
accelerator's partition policy 'cost', or `assign: cost`), points share an analysis only with
identical systems and schedules.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path

from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.hardware.config import System, identity
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.costing import assemble, cost_works
from accelsim.simulation.delegation import NodeWorks, build_interpreter, constraint_refusals, node_works
from accelsim.simulation.inference import PartitionChoice, Simulation
from accelsim.simulation.placement import cost_aware_interpreter


def model_digest(model: str | Path | bytes) -> str:
    """The sha256 of a model's bytes (given as the bytes or a path), the model's part of an analysis key."""
    data = model if isinstance(model, bytes) else Path(model).read_bytes()
    return hashlib.sha256(data).hexdigest()


def _loops_key(loops: LoopTrips | None) -> tuple:
    loops = loops if loops is not None else LoopTrips()
    return loops.default_trips, tuple(sorted(loops.nodes.items()))


def analysis_key(digest: str, system: System, schedule: str = "sequential",
                 loops: LoopTrips | None = None) -> Hashable:
    """What an analysis depends on: the model (`model_digest`) and `analysis_facts`."""
    return digest, analysis_facts(system, schedule, loops)


def analysis_facts(system: System, schedule: str = "sequential", loops: LoopTrips | None = None) -> Hashable:
    """What an analysis depends on besides the model: the system's `identity` without its hardware, the loop overrides.

    When costs choose where nodes run (`chosen_by_cost`), the partitions depend on every cost,
    so the whole identity (hardware included) and the schedule are part of it.
    """
    costly = chosen_by_cost(system) or system.nnapi is not None  # NNAPI gives each node its fastest driver
    return (json.dumps(identity(system, hardware=costly), sort_keys=True, default=str), schedule if costly else None,
            _loops_key(loops))


def chosen_by_cost(system: System) -> bool:
    """Whether costs choose where nodes run: an accelerator's partition policy 'cost', or an `assign:` placement
    policy other than TFLite's order (accelsim.simulation.placement.ASSIGNERS)."""
    return system.assign.policy != "order" or any(a.policy.partition.kind == "cost" for a in system.accelerators)


@dataclass(frozen=True, kw_only=True)
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
        refusals: a line for each accelerator whose claim constraints refuse every node its claims match
            (`accelsim.simulation.delegation.constraint_refusals`): in an experiment such a point is infeasible.
    """

    name: str
    interpreter: Interpreter
    delegates: tuple[AcceleratorDelegate, ...]
    works: NodeWorks
    facts: Hashable
    loops: LoopTrips
    choice: PartitionChoice | None = None
    refusals: tuple[str, ...] = ()

    @functools.cached_property
    def delegation(self) -> tuple:
        """The interpreter's delegation report (every node, claimed or why not): the same for every point costed."""
        return tuple(self.interpreter.get_delegation_report())


def analyze(model: Model | str | bytes, system: System, schedule: str = "sequential",
            loops: LoopTrips | None = None, *, int16_as_declared: bool = False) -> Analysis:
    """Parse (unless given a Model), delegate and size every node of `model` on `system`'s claims.

    `int16_as_declared`: INT16 nodes this runtime has no kernel for are sized from the file's shapes
    (`accelsim.runtime.Interpreter`'s argument of that name; not with partition policy 'cost').

    Kernels prepare shapes only (`accelsim.runtime.Interpreter(shapes_only=True)`): no tables, folded
    weights or requantization stages. `schedule` matters only to accelerators with partition
    policy 'cost' and to `assign: cost` (it is how they cost their choice); their partitions are
    chosen by `accelsim.simulation.placement.cost_aware_interpreter`, which prepares kernels fully.

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
        (interpreter, delegates), choice = build_interpreter(ir, system, shapes_only=True,
                                                             int16_as_declared=int16_as_declared), None
    return Analysis(name=name, interpreter=interpreter, delegates=tuple(delegates),
                    works=node_works(interpreter, delegates, loops), facts=analysis_facts(system, schedule, loops),
                    loops=loops, choice=choice, refusals=constraint_refusals(interpreter, system))


def simulate_model(model: Model | str | bytes, system: System, schedule: str = "sequential",
                   loops: LoopTrips | None = None) -> Simulation:
    """Simulate one inference of `model` on `system` (cost only: shapes and types, no invoke).

    Raises:
        WorkError: a node has no work model, or a loop's trip count is unknown and `loops` sets none.
        ValueError: accelerators with partition policy 'cost' ask for different objectives.
    """
    return simulate_analysis(analyze(model, system, schedule, loops), system, schedule)


def simulate_analysis(analysis: Analysis, system: System, schedule: str = "sequential", *,
                      facts_checked: bool = False) -> Simulation:
    """Simulate one inference of an analysed model on `system`: only the costs and the schedule run.

    Equal, bit for bit, to `simulate_model` of the same model on `system`.

    Args:
        facts_checked: the caller found `analysis` by this system's `analysis_facts` (as
            accelsim.experiments.executors.point_records does), so they need not be computed again.

    Raises:
        ValueError: `system` claims differently from the system the analysis was made for
            (`accelsim.simulation.analysis.analysis_facts` differ), or the schedule is unknown.
    """
    if not facts_checked and analysis_facts(system, schedule, analysis.loops) != analysis.facts:
        raise ValueError("this analysis was made for accelerators that claim or partition differently (or for "
                         "other loop trip counts); analyse the model on this system "
                         "(accelsim.simulation.analysis.analyze)")
    costs = cost_works(analysis.works, system, analysis.loops)
    return assemble(analysis.interpreter, analysis.delegates, system, costs, schedule, analysis.name, frozenset(),
                    analysis.choice, analysis.delegation)


def simulate_placed(analysis: Analysis, system: System, schedule: str = "sequential") -> Simulation:
    """Cost an analysis on `system` (the same claims, other costs) with its placement held fixed.

    `simulate_analysis`, without its refusal when costs chose the placement (`chosen_by_cost`): there the
    analysis is one system's choice, and this costs that same choice on another (what `accelsim.insight.sensitivity`
    varies). The caller checks that `system` claims as the analysed one did.
    """
    costs = cost_works(analysis.works, system, analysis.loops)
    return assemble(analysis.interpreter, analysis.delegates, system, costs, schedule, analysis.name, frozenset(),
                    analysis.choice)
