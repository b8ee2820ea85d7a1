"""What if the accelerator took the nodes it refused? Every refusal lifted by one claim line, simulated and ranked.

For each accelerator and each node it refused that runs on the host, the claim rules say why
(`accelsim.delegates.spec`): no rule covers the op, or a covering rule's versions, dtypes or one of its
constraints exclude the node. Each such reason, for all nodes of the same op refused for it by
the same rule, becomes one candidate: a claim line that is that rule relaxed in that one
respect just enough to accept those nodes (or, for an op no rule covers, a new rule for the
op at the versions and dtypes the model uses). Adding the line to the config's `claims:` is the
whole edit, and the candidate's numbers are the simulation of exactly that config, so applying
the line and re-running gives the predicted latency. Candidates are ranked by latency saved;
the best pair is searched among the leading candidates, since two lines together can merge
partitions that neither merges alone. Custom ops and control flow cannot be claimed by a rule
and are listed as such. A node whose op has no work model is reported, never guessed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.core.feasibility import Infeasible
from accelsim.core.units import counted
from accelsim.delegates.spec import (
    BOOL_CONSTRAINTS,
    INT_CONSTRAINTS,
    MAX_VERSION,
    NEVER_ANY,
    ClaimRule,
    DelegationPolicy,
    NodeFacts,
    check_claim,
    facts_from_node,
)
from accelsim.hardware.config import System
from accelsim.hardware.types import Kind
from accelsim.runtime.errors import WorkError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.analysis import simulate_model

# The best pair is searched among this many leading candidates (66 simulations at most). Under the
from accelsim.simulation.inference import HOST, Simulation

# The best pair is searched among this many leading candidates (66 simulations at most). Under the
# Edge TPU's prefix rule a line alone often gains nothing, so the pool is wide enough for whole models
# like the transformer fixture (9 candidates on edgetpu_pcie).
PAIR_POOL = 12


def _uj(joules: float | None) -> float | None:
    return None if joules is None else joules * 1e6


def _fmt_uj(uj: float | None) -> str:
    """Microjoules, or "energy not modelled" (a device without energy.mac), never 0."""
    return "energy not modelled" if uj is None else f"{uj:,.2f} uJ"


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One simulated system: its latency and how the model was split (None fields: the simulation failed)."""

    latency_us: float | None
    delegated_nodes: int | None
    partitions: int | None
    transfer_bytes: int | None
    energy_uj: float | None
    error: str | None = None  # e.g. the WorkError of an op without a work model


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One refusal reason lifted: the claim line to add to one accelerator, and the simulated result."""

    accelerator: str
    op: str
    reason: str  # "op not claimed", "version", "dtype" or a constraint name
    example: str  # the refusal as the delegate words it, for the first node
    nodes: tuple[int, ...]  # refused nodes this line is meant to admit
    rule: ClaimRule
    line: str  # the YAML claim line
    outcome: Outcome


@dataclass(frozen=True)
class Pair:
    first: Candidate
    second: Candidate
    outcome: Outcome


@dataclass(frozen=True)
class Unclaimable:
    """A refused node no claim line can admit (custom ops, control flow, nodes without a data type)."""

    node: int
    op: str
    why: str


@dataclass(frozen=True, kw_only=True)
class WhatIf:
    model: str
    accelerators: tuple[str, ...]
    base: Outcome
    host_only: Outcome  # the same model on the host alone: what no accelerator costs
    candidates: tuple[Candidate, ...]  # best (most latency saved) first
    pair: Pair | None
    unclaimable: tuple[Unclaimable, ...]
    prefix_refusals: tuple[tuple[str, int], ...] = ()  # (accelerator, its first refused node) under 'prefix'


def _outcome(model: Model, system: System, schedule: str, loops: LoopTrips | None) -> Outcome:
    try:
        sim: Simulation = simulate_model(model, system, schedule, loops)
    except WorkError as exc:
        return Outcome(latency_us=None, delegated_nodes=None, partitions=None, transfer_bytes=None, energy_uj=None,
                       error=f"no work model, not simulated: {exc}")
    except Infeasible as exc:  # the line would give the accelerator more than it can hold: said, not a crash
        return Outcome(latency_us=None, delegated_nodes=None, partitions=None, transfer_bytes=None, energy_uj=None,
                       error=f"infeasible: {exc}")
    return Outcome(latency_us=sim.latency * 1e6, delegated_nodes=sim.delegated_nodes, partitions=len(sim.partitions),
                   transfer_bytes=sim.transfer_bytes, energy_uj=_uj(sim.modelled_energy))


def node_facts(model: Model) -> dict[int, NodeFacts]:
    """NodeFacts of every node of the primary subgraph (shapes and types after allocation)."""
    interpreter = Interpreter(model=model)
    interpreter.allocate_tensors()
    graph = interpreter.primary
    return {ni: facts_from_node(graph.nodes[ni], graph.tensors) for ni in graph.execution_plan}


def _needed(name: str, facts: NodeFacts) -> Any:
    """The value of constraint `name` that just admits `facts` (an int, a name, or True)."""
    if name == "max_kernel_size":
        return max(facts.kernel)
    if name == "max_stride":
        return max(facts.stride)
    if name == "max_dilation":
        return max(facts.dilation)
    if name == "max_channels":
        return max(c for c in (facts.in_channels, facts.out_channels) if c is not None)
    if name == "max_rank":
        return facts.rank
    if name == "max_input_elements":
        return facts.input_elements
    if name == "max_runtime_inputs":
        return facts.runtime_inputs
    if name == "allowed_paddings":
        return facts.padding
    if name == "allowed_activations":
        return facts.activation
    return True  # per_channel


def _failures(rule: ClaimRule, facts: NodeFacts) -> list[str]:
    """Every respect in which `rule` refuses `facts`: "version", "dtype" and constraint names."""
    out = []
    if not any(lo <= facts.version <= hi for lo, hi in rule.versions):
        out.append("version")
    if rule.dtypes and facts.dtype not in rule.dtypes:
        out.append("dtype")
    for name, limit in rule.constraints.items():
        if not check_claim([ClaimRule(facts.op, constraints={name: limit})], facts)[0]:
            out.append(name)
    return out


def _ranges(versions: set[int]) -> tuple[tuple[int, int], ...]:
    return tuple((v, v) for v in sorted(versions))


def _relaxed(rule: ClaimRule, op: str, reason: str, group: Sequence[NodeFacts]) -> ClaimRule:
    """`rule`, for `op` only, relaxed in the one respect `reason` just enough to admit every node of `group`."""
    versions, dtypes, constraints = rule.versions, rule.dtypes, dict(rule.constraints)
    if reason == "version":
        versions = (*rule.versions, *_ranges({f.version for f in group}))
    elif reason == "dtype":
        dtypes = rule.dtypes | {f.dtype for f in group}
    elif reason in INT_CONSTRAINTS:
        constraints[reason] = max(_needed(reason, f) for f in group)
    elif reason in BOOL_CONSTRAINTS:
        constraints[reason] = True
    else:
        constraints[reason] = frozenset(constraints[reason]) | {_needed(reason, f) for f in group}
    return ClaimRule(op, versions, dtypes, constraints, custom_code=rule.custom_code)


def claim_line(rule: ClaimRule) -> str:
    """The claim rule in the config's YAML flow syntax, as one line of the `claims:` list."""
    if rule.versions == ((1, MAX_VERSION),):
        versions = "any"
    else:
        items = [str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in rule.versions]
        versions = items[0] if len(items) == 1 else f"[{', '.join(items)}]"
    parts = [f"op: {rule.op}", *([f"custom_code: {rule.custom_code}"] if rule.custom_code else []),
             f"versions: {versions}", f"dtypes: [{', '.join(sorted(rule.dtypes))}]"]
    if rule.constraints:
        parts.append("constraints: {" + ", ".join(f"{k}: {_yaml_value(v)}" for k, v in rule.constraints.items())
                     + "}")
    return "- {" + ", ".join(parts) + "}"


def _yaml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, frozenset):
        return "[" + ", ".join(sorted(value)) + "]"
    return str(value)


def _groups(accel: DelegationPolicy, facts_of: dict[int, NodeFacts], on_host: set[int], kind: Kind | None = None,
            ) -> tuple[dict[tuple, list[tuple[int, NodeFacts, str]]], list[Unclaimable]]:
    """Host nodes `accel` refuses, grouped by (op, covering rule index or None, reason); and those no line admits.

    Each member carries the refusal as the delegate words it. A node of a type `kind` cannot execute
    (`Kind.dtypes`) is one no line admits.
    """
    groups: dict[tuple, list[tuple[int, NodeFacts, str]]] = {}
    unclaimable = []
    for ni, facts in facts_of.items():
        ok, refusal = check_claim(accel.claims, facts)
        if ok or ni not in on_host:
            continue
        named_custom = facts.op == "CUSTOM" and bool(facts.custom_code)  # a rule can name it by custom_code
        if (facts.op in NEVER_ANY and not named_custom) or facts.dtype is None:
            why = ("control flow and unnamed custom ops are not claimed by rules" if facts.dtype is not None
                   else "the node has no data input, so no dtype rule can name it")
            unclaimable.append(Unclaimable(ni, facts.op, why))
            continue
        if kind is not None and kind.dtypes and facts.dtype not in kind.dtypes:
            unclaimable.append(Unclaimable(ni, facts.op, f"{facts.dtype}: the {kind.name} kind executes only "
                                                         f"{', '.join(sorted(kind.dtypes))} tensors"))
            continue
        op = (facts.op, facts.custom_code if named_custom else None)
        covering = [k for k, r in enumerate(accel.claims) if r.covers(*op)]
        if not covering:
            groups.setdefault((op, None, "op not claimed"), []).append((ni, facts, refusal))
        for k in covering:
            for reason in _failures(accel.claims[k], facts):
                groups.setdefault((op, k, reason), []).append((ni, facts, refusal))
    return groups, unclaimable


def _with_claims(system: System, extra: dict[str, tuple[ClaimRule, ...]]) -> System:
    return System(system.host, tuple(a.with_policy(claims=a.policy.claims + extra.get(a.name, ()))
                                     for a in system.accelerators))


def whatif(model: Model, system: System, name: str = "<model>", schedule: str = "sequential",
           loops: LoopTrips | None = None, pair_pool: int = PAIR_POOL) -> WhatIf:
    """Every refusal of every accelerator lifted by one claim line, simulated; ranked by latency saved.

    Raises:
        OpResolutionError: the host cannot run the model (TFLite's message).
        WorkError: the model as given cannot be simulated (a host node without a work model).
    """
    base_sim = simulate_model(model, system, schedule, loops)
    base = Outcome(latency_us=base_sim.latency * 1e6, delegated_nodes=base_sim.delegated_nodes,
                   partitions=len(base_sim.partitions),
                   transfer_bytes=base_sim.transfer_bytes, energy_uj=_uj(base_sim.modelled_energy))
    host_only = _outcome(model, System(system.host, ()), schedule, loops)
    facts = node_facts(model)
    on_host = {n.index for n in base_sim.nodes if n.unit == HOST}
    candidates: list[Candidate] = []
    unclaimable: dict[int, Unclaimable] = {}
    seen: set[tuple[str, str]] = set()
    for accel in system.accelerators:
        groups, lost = _groups(accel.policy, facts, on_host, accel.hardware.kind_record)
        for u in lost:
            unclaimable.setdefault(u.node, u)
        for ((op, custom_code), k, reason), members in groups.items():
            group = [f for _, f, _ in members]
            rule = (ClaimRule(op, _ranges({f.version for f in group}), frozenset(f.dtype for f in group),
                              custom_code=custom_code)
                    if k is None else _relaxed(accel.policy.claims[k], op, reason, group))
            if custom_code:
                op = f"CUSTOM {custom_code!r}"
            line = claim_line(rule)
            if (accel.name, line) in seen:
                continue
            seen.add((accel.name, line))
            outcome = _outcome(model, _with_claims(system, {accel.name: (rule,)}), schedule, loops)
            candidates.append(Candidate(accelerator=accel.name, op=op, reason=reason, example=members[0][2],
                                        nodes=tuple(ni for ni, _, _ in members),
                                        rule=rule, line=line, outcome=outcome))
    # Most latency saved first; among equal latencies, the line that moves more nodes off the host.
    candidates.sort(key=lambda c: (c.outcome.latency_us is None, c.outcome.latency_us or 0.0,
                                   -(c.outcome.delegated_nodes or 0)))
    prefix = tuple((a.name, first) for a in system.accelerators if a.policy.partition.kind == "prefix"
                   and (first := _first_refusal(a.policy, facts)) is not None)
    return WhatIf(model=name, accelerators=tuple(a.name for a in system.accelerators), base=base, host_only=host_only,
                  candidates=tuple(candidates),
                  pair=_best_pair(model, system, candidates[:pair_pool], schedule, loops),
                  unclaimable=tuple(sorted(unclaimable.values(), key=lambda u: u.node)), prefix_refusals=prefix)


def _first_refusal(accel: DelegationPolicy, facts: dict[int, NodeFacts]) -> int | None:
    """The first node in run order the accelerator's rules refuse (where a 'prefix' accelerator stops)."""
    return next((ni for ni, f in facts.items() if not check_claim(accel.claims, f)[0]), None)


def _best_pair(model: Model, system: System, pool: Sequence[Candidate], schedule: str,
               loops: LoopTrips | None) -> Pair | None:
    """The two candidates whose lines together give the lowest latency (among `pool`), or None."""
    best = None
    for a, b in itertools.combinations([c for c in pool if c.outcome.latency_us is not None], 2):
        extra: dict[str, tuple[ClaimRule, ...]] = {}
        for c in (a, b):
            extra[c.accelerator] = extra.get(c.accelerator, ()) + (c.rule,)
        outcome = _outcome(model, _with_claims(system, extra), schedule, loops)
        if outcome.latency_us is not None and (best is None or outcome.latency_us < best.outcome.latency_us):
            best = Pair(a, b, outcome)
    return best


def as_dict(result: WhatIf) -> dict[str, Any]:
    """The whatif result as plain data (the --json output)."""
    def candidate(c: Candidate) -> dict[str, Any]:
        return {"accelerator": c.accelerator, "op": c.op, "reason": c.reason, "example": c.example,
                "nodes": list(c.nodes), "line": c.line, **_delta(result.base, c.outcome)}

    pair = None
    if result.pair is not None:
        pair = {"lines": [{"accelerator": c.accelerator, "line": c.line} for c in (result.pair.first,
                                                                                  result.pair.second)],
                **_delta(result.base, result.pair.outcome)}
    return {"model": result.model, "accelerators": list(result.accelerators), "base": vars(result.base),
            "host_only": vars(result.host_only),
            "candidates": [candidate(c) for c in result.candidates], "best_pair": pair,
            "unclaimable": [vars(u) for u in result.unclaimable],
            "prefix_refusals": [{"accelerator": a, "node": n} for a, n in result.prefix_refusals]}


def _delta(base: Outcome, after: Outcome) -> dict[str, Any]:
    saved = None if after.latency_us is None else base.latency_us - after.latency_us
    return {"latency_us": after.latency_us, "saved_us": saved,
            "saved_pct": None if saved is None else 100 * saved / base.latency_us,
            "nodes_gained": None if after.delegated_nodes is None else after.delegated_nodes - base.delegated_nodes,
            "partitions": [base.partitions, after.partitions],
            "transfer_bytes": [base.transfer_bytes, after.transfer_bytes],
            "energy_uj": [base.energy_uj, after.energy_uj], "error": after.error}


def lines(result: WhatIf) -> list[str]:
    """The ranking as text: the base, then each candidate with its line to add, the best pair, the unclaimable."""
    b = result.base
    out = [f"{result.model} on {', '.join(result.accelerators)}: {b.latency_us:,.1f} µs, {b.delegated_nodes} "
           f"nodes delegated in {counted(b.partitions, 'partition')}, {b.transfer_bytes:,} bytes over links, "
           f"{_fmt_uj(b.energy_uj)} (host alone: {result.host_only.latency_us:,.1f} µs)"]
    if not result.candidates:
        out.append("no refused node can be admitted by a claim line" if result.unclaimable
                   else "every node is delegated: nothing to lift")
    for rank, c in enumerate(result.candidates, 1):
        out.append(f"#{rank} {c.accelerator}: {c.op} refused ({c.reason}: {c.example}) at node"
                   f"{'s' * (len(c.nodes) > 1)} {_node_list(c.nodes)}")
        out.append(f"    add to claims: {c.line}")
        out.append("    " + _effect(b, c.outcome))
    if result.pair is not None:
        p = result.pair
        ranks = " + ".join(f"#{result.candidates.index(c) + 1} ({c.op})" for c in (p.first, p.second))
        out.append(f"best pair: {ranks}: " + _effect(b, p.outcome))
        if p.outcome.latency_us >= result.candidates[0].outcome.latency_us:
            out.append("    no pair does better than #1 alone")
    if result.candidates and (result.candidates[0].outcome.latency_us or b.latency_us) >= b.latency_us:
        out.append("no line lowers the latency: what a line moves to the accelerator costs more there (compute, "
                   "transfers, call overhead) than on the host")
    if not result.candidates or (result.candidates[0].outcome.latency_us or b.latency_us) >= b.latency_us:
        out.append("what to change in the hardware instead: accelsim sensitivity MODEL --hw ... ranks every design "
                   "parameter at x0.5 and x2 and shows where the time goes")
    best = min([b.latency_us, *(c.outcome.latency_us for c in result.candidates if c.outcome.latency_us)])
    if best > result.host_only.latency_us:
        what = "even the best line leaves delegation" if result.candidates else "delegation is"
        out.append(f"warning: {what} slower than the host alone ({best:,.1f} µs against "
                   f"{result.host_only.latency_us:,.1f} µs)")
    for accel in result.prefix_refusals:
        out.append(f"note: {accel[0]} maps only the graph's prefix (partition policy 'prefix'): every node after "
                   f"node {accel[1]} stays on the host unless that node is claimed")
    by_why: dict[str, list[Unclaimable]] = {}
    for u in result.unclaimable:
        by_why.setdefault(u.why, []).append(u)
    for why, group in by_why.items():
        if len(group) == 1:
            out.append(f"node {group[0].node} ({group[0].op}): no claim line admits it: {why}")
        else:
            ops = ", ".join(dict.fromkeys(u.op for u in group))
            out.append(f"nodes {_node_list(tuple(u.node for u in group))} ({ops}): no claim line admits them: {why}")
    return out


def _node_list(nodes: Sequence[int]) -> str:
    shown = ", ".join(map(str, nodes[:12]))
    return shown + (f", ... ({len(nodes)} nodes)" if len(nodes) > 12 else "")


def _effect(base: Outcome, after: Outcome) -> str:
    if after.latency_us is None:
        return after.error or "not simulated"
    saved = base.latency_us - after.latency_us
    verb = "saves" if saved >= 0 else "costs"
    return (f"latency {base.latency_us:,.1f} -> {after.latency_us:,.1f} µs ({verb} {abs(saved):,.1f} µs, "
            f"{100 * abs(saved) / base.latency_us:.1f}%); nodes {after.delegated_nodes - base.delegated_nodes:+d} "
            f"({base.delegated_nodes} -> {after.delegated_nodes} delegated); partitions {base.partitions} -> "
            f"{after.partitions}; transfer {base.transfer_bytes:,} -> {after.transfer_bytes:,} bytes; energy "
            f"{_fmt_uj(base.energy_uj)} -> {_fmt_uj(after.energy_uj)}")
