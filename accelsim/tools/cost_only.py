"""`accelsim benchmark MODEL --num-runs 0`: the simulated latency without running the NumPy interpreter.

The cost-only path the experiments use (`accelsim.simulation.analysis.analyze`, which prepares kernels for
shapes and work only, then `accelsim.simulation.analysis.simulate_analysis`), for one model on one system
and on its host alone. Nothing is invoked, so a loop's trip count must follow from the model's
constants and shapes or be given (`--loop-trips`): a count nobody knows is an error naming its node.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from accelsim.hardware.config import System
from accelsim.ops import require_kernels
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.analysis import analyze, simulate_analysis, simulate_model
from accelsim.simulation.inference import Simulation
from accelsim.tools.compare import host_only


@dataclass(frozen=True, kw_only=True)
class CostOnlyRun:
    """A model simulated on a system and on its host alone, with how long reading and analysing it took.

    Args:
        simulation: one inference on the system.
        host_only: one inference on the system's host with no accelerator (the speed-up's baseline).
        setup_seconds: host wall-clock seconds to read the model and prepare its shapes and work on the system.
    """

    simulation: Simulation
    host_only: Simulation
    setup_seconds: float


def cost_only_run(path: str, system: System, schedule: str = "sequential",
                  loops: LoopTrips | None = None) -> CostOnlyRun:
    """Simulate the model at `path` on `system` and on its host alone, cost only (no invoke, no numeric prepare).

    Accelerators whose partitions are chosen by cost (partition policy 'cost', `assign: cost`) choose
    them as `analyze` does, which prepares those kernels fully.

    Raises:
        ModelError: the model cannot be read.
        WorkError: a node has no work model, or a loop's trip count is unknown and `loops` sets none.
    """
    loops = loops if loops is not None else LoopTrips()
    t0 = time.perf_counter()
    model = require_kernels(path)  # an unresolved custom op: the one line naming the model, the op and --ops
    analysis = dataclasses.replace(analyze(model, system, schedule, loops), name=path)
    setup = time.perf_counter() - t0
    return CostOnlyRun(simulation=simulate_analysis(analysis, system, schedule),
                       host_only=simulate_model(model, host_only(system), schedule, loops), setup_seconds=setup)


__all__ = ["CostOnlyRun", "cost_only_run"]
