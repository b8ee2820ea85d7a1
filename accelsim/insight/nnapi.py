"""NNAPI's choices explained: which nodes failed which rule, and the latency under other NNAPI settings.

For a system with NNAPI (`System.nnapi`), `nnapi_choices` groups the nodes NNAPI did not delegate by the
rule that refused them (`accelsim.delegates.nnapi.RULE_KINDS`: feature level, version, type, op rule, op not
supported, driver support, fp16 weights, partition limit, no target device), counts the nodes each driver
runs, and simulates the model again with one setting changed: a higher feature level (the runtime and every
driver at that level: what an OS and driver update would buy, with the drivers' op lists unchanged),
another `max_number_delegated_partitions`, `allow_fp16`, and each driver named as `accelerator_name`.
Each alternative is the simulation of exactly that setting, so writing it into the NNAPI config's
`options:` (or its `android_api` and drivers' `feature_level`) and re-running gives the same latency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from accelsim.delegates.nnapi import nnapi_decision
from accelsim.delegates.nnapi_rules import FEATURE_LEVELS
from accelsim.delegates.spec import Numerics
from accelsim.hardware.config import System
from accelsim.runtime.errors import WorkError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.inference import HOST

PARTITION_LIMITS = (1, 2, 3, 5, 0)  # 0: no limit (nnapi_delegate.h 91)


@dataclass(frozen=True, kw_only=True)
class RuleGroup:
    """The nodes one kind of rule refused: their indices and ops, and the first one's words."""

    kind: str
    nodes: tuple[int, ...]
    ops: tuple[str, ...]
    example: str


@dataclass(frozen=True, kw_only=True)
class Alternative:
    """One NNAPI setting changed and what the simulation gives (None fields: it failed, `error` says why)."""

    change: str
    latency_us: float | None
    delegated: int | None
    partitions: int | None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class NnapiChoices:
    """What NNAPI delegated, why not the rest, and each alternative setting's simulation."""

    model: str
    level: str
    targets: tuple[str, ...]
    total: int
    by_rule: tuple[RuleGroup, ...]
    by_driver: tuple[tuple[str, int], ...]
    base: Alternative
    host_only_us: float
    alternatives: tuple[Alternative, ...]


def _level_label(level: int) -> str:
    name = next(k for k, v in FEATURE_LEVELS.items() if v == level)
    return f"{name} (API {level})" if level < 1000 else name


def _simulate(change: str, model: Model, system: System, schedule: str, loops: LoopTrips | None) -> Alternative:
    try:
        sim = simulate_model(model, system, schedule, loops)
    except (WorkError, ValueError) as exc:
        return Alternative(change=change, latency_us=None, delegated=None, partitions=None, error=str(exc))
    delegated = sum(1 for t in sim.nodes if t.unit != HOST)
    return Alternative(change=change, latency_us=sim.latency * 1e6, delegated=delegated,
                       partitions=len(sim.partitions))


def _with_spec(system: System, **changes: Any) -> System:
    return replace(system, nnapi=replace(system.nnapi, spec=replace(system.nnapi.spec, **changes)))


def _with_options(system: System, **changes: Any) -> System:
    return _with_spec(system, options=replace(system.nnapi.spec.options, **changes))


def alternatives(system: System) -> list[tuple[str, System]]:
    """(what changed, the system with it) for every alternative setting `nnapi_choices` simulates."""
    spec = system.nnapi.spec
    out = []
    level = spec.target_level()
    for higher in FEATURE_LEVELS.values():
        if higher > level:
            drivers = tuple(replace(d, level=max(d.level, higher)) for d in spec.drivers)
            out.append((f"feature level {_level_label(higher)}", _with_spec(system, android_api=higher,
                                                                            drivers=drivers)))
    limit = spec.options.max_number_delegated_partitions
    for n in PARTITION_LIMITS:
        if n != limit and not (n <= 0 and limit <= 0):
            out.append((f"max_number_delegated_partitions {n}" + (" (no limit)" if n <= 0 else ""),
                        _with_options(system, max_number_delegated_partitions=n)))
    if not spec.options.allow_fp16:
        relaxed = _with_options(system, allow_fp16=True)
        accels = tuple(a.with_policy(numerics=Numerics("float16")) for a in system.accelerators)
        out.append(("allow_fp16 true", replace(relaxed, accelerators=accels)))
    for d in spec.drivers:
        if d.name != spec.options.accelerator_name and not d.is_reference:
            out.append((f"accelerator_name {d.name}", _with_options(system, accelerator_name=d.name)))
    return out


def nnapi_choices(model: Model, system: System, name: str = "<model>", schedule: str = "sequential",
                  loops: LoopTrips | None = None) -> NnapiChoices:
    """Explain NNAPI's delegation of `model` on `system` (which must have NNAPI) and simulate the alternatives.

    Raises:
        ValueError: the system has no NNAPI.
    """
    if system.nnapi is None:
        raise ValueError("the system has no NNAPI config (give one with --hw, e.g. nnapi_pixel3)")
    interpreter = Interpreter(model=model, shapes_only=True)
    decision = nnapi_decision(interpreter.primary, system.nnapi.spec)
    groups: dict[str, list[tuple[int, str, str]]] = {}
    for ni, verdict in decision.verdicts.items():
        if not verdict.delegated and verdict.failures:
            op = interpreter.primary.nodes[ni].op_name
            groups.setdefault(verdict.failures[0].kind, []).append((ni, op, verdict.reason))
    by_rule = tuple(RuleGroup(kind=k, nodes=tuple(n for n, _, _ in v), ops=tuple(dict.fromkeys(o for _, o, _ in v)),
                              example=f"node {v[0][0]} {v[0][1]}: {v[0][2]}")
                    for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1])))
    base_sim = simulate_model(model, system, schedule, loops)
    counts: dict[str, int] = {}
    for t in base_sim.nodes:
        counts[t.unit] = counts.get(t.unit, 0) + 1
    base = Alternative(change="as configured", latency_us=base_sim.latency * 1e6,
                       delegated=sum(n for u, n in counts.items() if u != HOST), partitions=len(base_sim.partitions))
    host_only = simulate_model(model, replace(system, accelerators=(), nnapi=None), schedule, loops)
    alts = tuple(_simulate(change, model, s, schedule, loops) for change, s in alternatives(system))
    return NnapiChoices(model=name, level=_level_label(decision.level), targets=decision.targets,
                        total=len(decision.verdicts), by_rule=by_rule, by_driver=tuple(sorted(counts.items())),
                        base=base, host_only_us=host_only.latency * 1e6, alternatives=alts)


def nnapi_dict(c: NnapiChoices) -> dict[str, Any]:
    return {"model": c.model, "level": c.level, "targets": list(c.targets), "total_nodes": c.total,
            "refused": [{"rule": g.kind, "nodes": list(g.nodes), "ops": list(g.ops), "example": g.example}
                        for g in c.by_rule],
            "nodes_per_unit": dict(c.by_driver), "host_only_us": c.host_only_us,
            "as_configured": vars(c.base), "alternatives": [vars(a) for a in c.alternatives]}


def _outcome(a: Alternative, base: Alternative, host_us: float) -> str:
    if a.latency_us is None:
        return f"failed: {a.error}"
    delta = a.latency_us - base.latency_us
    vs = "slower than" if a.latency_us > host_us else "faster than"
    return (f"{a.latency_us:,.1f} us ({delta:+,.1f}), {a.delegated} nodes in {a.partitions} executions, "
            f"{vs} the CPU alone")


def nnapi_lines(c: NnapiChoices) -> list[str]:
    lines = [f"NNAPI on {c.model}: target feature level {c.level}, target drivers "
             f"{', '.join(c.targets) or 'none'}",
             f"  as configured: {_outcome(c.base, c.base, c.host_only_us)} ({c.host_only_us:,.1f} us)",
             "  nodes per unit: " + ", ".join(f"{u} {n}" for u, n in c.by_driver)]
    if c.by_rule:
        lines.append(f"Nodes NNAPI did not delegate ({sum(len(g.nodes) for g in c.by_rule)} of {c.total}), "
                     "by the rule that refused them:")
        for g in c.by_rule:
            lines.append(f"  {g.kind}: {len(g.nodes)} node(s) [{', '.join(g.ops)}]; e.g. {g.example}")
    else:
        lines.append("NNAPI delegated every node.")
    lines.append("With one NNAPI setting changed (simulated):")
    lines += [f"  {a.change}: {_outcome(a, c.base, c.host_only_us)}" for a in c.alternatives]
    return lines


__all__: Sequence[str] = ("NnapiChoices", "alternatives", "nnapi_choices", "nnapi_dict", "nnapi_lines")
