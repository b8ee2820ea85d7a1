"""NNAPI on a simulated phone: the NNAPI policy's nodes, each given to the driver that runs it fastest.

`accelsim.delegates.nnapi.nnapi_decision` says which nodes TFLite's NNAPI delegate hands to NNAPI and which
target drivers support each; here the NNAPI runtime's part is played: with `accelerator_name`, every node
goes to that driver; otherwise each node goes to the supporting driver whose cost model runs it fastest
(ModelBuilder::findBestDeviceForEachOperation picks the device with the best reported performance for the
operation). Nodes no accelerator driver supports (possible only without a target list, when the runtime
may use its CPU implementation) run on the host. Each driver then takes its nodes as a delegate
(`NnapiDriverDelegate`), so consecutive nodes on one driver form one execution: the costing charges each
its link (the inputs and outputs copied through NNAPI's shared memory pool) and its `call_overhead`
(the per-execution overhead of NNAPI and the driver), as the driver entries' overrides set them.
Where a delegated partition spans two drivers the runtime runs it as steps, one per driver, each an
execution of its own: modelled as separate executions, each with its copies and overhead.
"""

from __future__ import annotations

from collections.abc import Mapping

from accelsim.delegates.nnapi import NnapiDecision, NnapiDriverDelegate, nnapi_decision
from accelsim.hardware.config import System
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.work import node_work


def assign_drivers(interpreter: Interpreter, decision: NnapiDecision, system: System) -> dict[int, str]:
    """Delegated node -> the driver that runs it (accelerator_name's, else the fastest supporting one);
    nodes no accelerator driver supports are left out (they run on the host)."""
    graph = interpreter.primary
    devices = {a.name: a.hardware for a in system.accelerators}
    named = system.nnapi.spec.options.accelerator_name
    out: dict[int, str] = {}
    for ni in decision.delegated:
        if named is not None:
            if named in devices:
                out[ni] = named
            continue
        able = [d for d in decision.verdicts[ni].drivers if d in devices]
        if len(able) == 1:
            out[ni] = able[0]
        elif able:
            work = node_work(graph.context, graph.nodes[ni])
            out[ni] = min(able, key=lambda d: devices[d].costs([work])[0].seconds)
    return out


def nnapi_interpreter(model: Model, system: System, *, shapes_only: bool = False
                      ) -> tuple[Interpreter, list[NnapiDriverDelegate], NnapiDecision, Mapping[int, str]]:
    """An interpreter over `model` with the system's NNAPI applied: its drivers' delegates, tensors allocated.

    Returns the interpreter, one delegate per driver device (the system's accelerators, in order), NNAPI's
    decision and the driver of each delegated node.
    """
    plain = Interpreter(model=model, shapes_only=True)
    plain.allocate_tensors()
    decision = nnapi_decision(plain.primary, system.nnapi.spec)
    assigned = assign_drivers(plain, decision, system)
    delegates = [NnapiDriverDelegate(a.policy, decision, assigned, speaks=k == 0)
                 for k, a in enumerate(system.accelerators)]
    interpreter = Interpreter(model=model, experimental_delegates=delegates, shapes_only=shapes_only)
    interpreter.allocate_tensors()
    return interpreter, delegates, decision, assigned
