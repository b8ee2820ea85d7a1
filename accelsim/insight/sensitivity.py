"""What should I change? Design parameters at x0.5 and x2, where the time goes, and a three-line verdict.

`sensitivity(model, system)` analyses the model once (`accelsim.simulation.analysis`) and re-costs that
analysis for every variation: only costs change, so delegation never runs again. The parameters
are the ones a designer chooses, for every device of the system (host included): the clock,
array and lane sizes (`DESIGN_COMPUTE`), each memory level's size (when it has one) and
bandwidth, the link's bandwidth, latency and call overhead, and threads. Fitted efficiencies
and format constants (a kind's cycles per element, brick depth) describe the silicon as
measured, not a choice, and are left out.

Each value is halved and doubled and written back through `accelsim.hardware.config.apply_overrides`, so
the schema checks it as it checks a file: a value it refuses (a count of 0.5) is skipped and
listed. A variation that makes the design infeasible (`accelsim.core.feasibility`) says so. Where
costs choose the placement (partition policy 'cost', `assign: cost`), the placement of the
base point is held fixed and the result says so; `replaced` then re-runs delegation for the
strongest few variations to show whether re-placing would change the answer.

Bottlenecks: every node's time by the bound it hit (compute, a memory level) on its device,
plus link transfers and call overhead, as shares of the summed busy time; per op and device,
the share of time and the time-weighted mean utilisation of the compute array.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.core.feasibility import Infeasible
from accelsim.hardware.config import System, apply_overrides, identity
from accelsim.hardware.config_yaml import ConfigError
from accelsim.hardware.types import Hardware
from accelsim.runtime.ir import Model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.analysis import Analysis, analyze, chosen_by_cost, simulate_placed
from accelsim.simulation.inference import HOST, Simulation

FACTORS = (0.5, 2.0)
# compute: fields that are design choices (sizes of the array, lanes, threads); every other compute field is a
# fitted efficiency or a format constant of the kind
DESIGN_COMPUTE = ("rows", "cols", "vector_lanes", "lanes", "contexts", "simd_bits", "threads", "cores")
# How many of the strongest variations are re-delegated when costs chose the placement.
REPLACED = 3


@dataclass(frozen=True, kw_only=True)
class Parameter:
    """One design parameter of one device: its key path, value in base units, and how a value is written."""

    device: str
    key: str
    value: float
    unit: str  # the base unit written after the number ('B', 'B/s', 'Hz', 's'; '' for a count)
    # what growing it costs that is not modelled (a level's size without static power): never shown as free
    unpriced: str = ""

    @property
    def label(self) -> str:
        return f"{self.device}.{self.key}"

    def written(self, value: float) -> Any:
        if not self.unit:
            return int(value) if float(value).is_integer() else value
        return f"{int(value)} {self.unit}" if float(value).is_integer() else f"{value:.12g} {self.unit}"


@dataclass(frozen=True, kw_only=True)
class Effect:
    """The point with one parameter scaled: latency and energy (None: not modelled or not run), or why not."""

    factor: float
    value: float
    status: str  # "ok", "infeasible" or "skipped" (the schema refuses the value)
    latency_us: float | None = None
    energy_uj: float | None = None
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class Variation:
    """One parameter and the point with it halved and doubled."""

    parameter: Parameter
    effects: tuple[Effect, ...]
    replaced_latency_us: float | None = None  # re-delegated at the better factor (only where costs place)

    def best_change(self, base_us: float) -> float:
        """The largest latency reduction (a fraction, negative = faster) among its feasible effects."""
        changes = [(e.latency_us - base_us) / base_us for e in self.effects if e.latency_us is not None]
        return min(changes, default=0.0)

    def effect(self, base_us: float) -> float:
        """The largest latency change either way (a fraction): what the ranking sorts by."""
        return max((abs(e.latency_us - base_us) / base_us for e in self.effects if e.latency_us is not None),
                   default=0.0)


@dataclass(frozen=True, kw_only=True)
class Bottleneck:
    """Busy time bound by one thing (a device's compute, one of its levels, its link copies or call overhead)."""

    what: str  # "npu64: compute", "npu64.sram", "npu64 link transfers", "npu64 call overhead"
    seconds: float
    share: float


@dataclass(frozen=True, kw_only=True)
class OpClass:
    """One op on one device: its nodes' share of node time, utilisation and what bounds them."""

    op: str
    unit: str
    nodes: int
    seconds: float
    share: float
    utilization: float | None  # time-weighted mean over its nodes that report one
    bound: str  # what most of its time is bound by ("compute" or "<device>.<level>")
    bound_share: float  # the share of its time that bound takes


@dataclass(frozen=True, kw_only=True)
class Sensitivity:
    """What `sensitivity` found: the base point, the ranked variations, the bottlenecks and the verdict."""

    model: str
    latency_us: float
    energy_uj: float | None
    placement_fixed: bool  # costs chose the placement; it was held fixed for the variations
    variations: tuple[Variation, ...]  # ranked: the largest latency effect first
    skipped: tuple[str, ...]
    bottlenecks: tuple[Bottleneck, ...]
    ops: tuple[OpClass, ...]
    verdict: tuple[str, ...]


def _parameters(hw: Hardware) -> list[Parameter]:
    """The design parameters of one device's hardware, with their current values."""
    device = hw.name
    out = [Parameter(device=device, key="clock", value=hw.clock, unit="Hz")]
    names = {f.name for f in dataclasses.fields(hw.compute)}
    out += [Parameter(device=device, key=f"compute.{n}", value=float(getattr(hw.compute, n)), unit="")
            for n in DESIGN_COMPUTE if n in names]
    for level in hw.memory.levels:
        if level.size is not None:
            unpriced = ("" if level.static_power else
                        f"memory.levels.{level.name}.static_power is 0 W, so the leakage and area of a larger "
                        f"{level.name!r} are not modelled: growing it is not free, only not priced")
            out.append(Parameter(device=device, key=f"memory.levels.{level.name}.size", value=level.size, unit="B",
                                 unpriced=unpriced))
        out.append(Parameter(device=device, key=f"memory.levels.{level.name}.bandwidth", value=level.bandwidth,
                             unit="B/s"))
    if hw.link is not None:
        out += [Parameter(device=device, key="link.bandwidth", value=hw.link.bandwidth, unit="B/s"),
                Parameter(device=device, key="link.latency", value=hw.link.latency, unit="s"),
                Parameter(device=device, key="link.call_overhead", value=hw.link.call_overhead, unit="s")]
    return out


def _with(system: System, device: str, key: str, value: Any) -> System:
    devices = [system.host, *system.accelerators]
    changed = [apply_overrides(d, {key: value}) if d.name == device else d for d in devices]
    return System(changed[0], tuple(changed[1:]), system.assign)


def _energy_uj(sim: Simulation) -> float | None:
    return None if sim.modelled_energy is None else sim.modelled_energy * 1e6


def _effect(analysis: Analysis, system: System, p: Parameter, factor: float, schedule: str) -> Effect:
    value = p.value * factor
    try:
        varied = _with(system, p.device, p.key, p.written(value))
    except ConfigError as exc:
        return Effect(factor=factor, value=value, status="skipped", note=exc.errors[0].split(": ", 2)[-1])
    if identity(varied, hardware=False) != identity(system, hardware=False):
        raise ValueError(f"{p.label} changes what is delegated; it is not a cost parameter")
    try:
        sim = simulate_placed(analysis, varied, schedule)
    except Infeasible as exc:
        return Effect(factor=factor, value=value, status="infeasible", note=str(exc))
    return Effect(factor=factor, value=value, status="ok", latency_us=sim.latency * 1e6, energy_uj=_energy_uj(sim))


def bottlenecks(sim: Simulation) -> tuple[list[Bottleneck], list[OpClass]]:
    """Where the busy time goes: by bound (per device), and per op and device with mean utilisation."""
    bound: dict[str, float] = {}
    ops: dict[tuple[str, str], list] = {}
    for n in sim.nodes:
        unit = sim.host if n.unit == HOST else n.unit
        for name, seconds in n.cost.bound_seconds:
            what = f"{unit}: compute" if name == "compute" else f"{unit}.{name} (memory)"
            bound[what] = bound.get(what, 0.0) + seconds
        slot = ops.setdefault((n.op, unit), [0, 0.0, 0.0, 0.0, {}])
        for name, seconds in n.cost.bound_seconds:
            key = "compute" if name == "compute" else f"{unit}.{name}"
            slot[4][key] = slot[4].get(key, 0.0) + seconds
        slot[0] += 1
        slot[1] += n.seconds
        if n.utilization is not None:
            slot[2] += n.utilization * n.seconds
            slot[3] += n.seconds
    for p in sim.partitions:
        if p.transfer:
            bound[f"{p.unit}: link transfers"] = bound.get(f"{p.unit}: link transfers", 0.0) + p.transfer
        if p.overhead:
            bound[f"{p.unit}: call overhead"] = bound.get(f"{p.unit}: call overhead", 0.0) + p.overhead
    busy = sum(bound.values()) or 1.0
    node_time = sum(s[1] for s in ops.values()) or 1.0
    by_bound = sorted((Bottleneck(what=k, seconds=v, share=v / busy) for k, v in bound.items()),
                      key=lambda b: -b.seconds)
    by_op = sorted((OpClass(op=op, unit=unit, nodes=s[0], seconds=s[1], share=s[1] / node_time,
                            utilization=s[2] / s[3] if s[3] else None, **_main_bound(s[4], s[1]))
                    for (op, unit), s in ops.items()), key=lambda o: -o.seconds)
    return by_bound, by_op


def _main_bound(bounds: dict[str, float], seconds: float) -> dict[str, Any]:
    if not bounds:
        return {"bound": "compute", "bound_share": 1.0}
    name = max(bounds, key=lambda k: bounds[k])
    return {"bound": name, "bound_share": bounds[name] / seconds if seconds else 1.0}


def _verdict(base_us: float, variations: Sequence[Variation], by_bound: Sequence[Bottleneck],
             by_op: Sequence[OpClass]) -> tuple[str, ...]:
    lines = []
    if by_bound:
        b = by_bound[0]
        lines.append(f"1. Most time is bound by {b.what}: {100 * b.share:.0f}% of busy time.")
    helpful = sorted((v for v in variations if v.best_change(base_us) < -0.005),
                     key=lambda v: (v.best_change(base_us), v.parameter.label))
    if helpful:
        v = helpful[0]
        also = "; then " + ", ".join(_change_text(w, base_us) for w in helpful[1:3]) if len(helpful) > 1 else ""
        lines.append(f"2. Change first: {_change_text(v, base_us)}{also}.")
    else:
        lines.append("2. No single parameter at x0.5 or x2 moves latency by more than 0.5%: the design is balanced "
                     "for this model, or bound by what is not a parameter (the host's share, the op mix).")
    if by_op:
        o = by_op[0]
        util = f" at {100 * o.utilization:.0f}% utilisation" if o.utilization is not None else ""
        why = (f"; {100 * o.bound_share:.0f}% of it waits on {o.bound}" if o.bound != "compute" else
               "; it is compute-bound with the array mostly idle: its shape maps poorly onto the array"
               if o.utilization is not None and o.utilization < 0.3 else "; it is compute-bound")
        lines.append(f"3. {o.op} on {o.unit} takes {100 * o.share:.0f}% of node time{util}{why}.")
    return tuple(lines)


def _fmt_value(p: Parameter, value: float) -> str:
    if p.unit == "B":
        return f"{value / 2**20:g} MiB" if value >= 2**20 else f"{value / 2**10:g} KiB"
    if p.unit == "B/s":
        return f"{value / 1e9:g} GB/s"
    if p.unit == "Hz":
        return f"{value / 1e6:g} MHz"
    if p.unit == "s":
        return f"{value * 1e6:g} µs"
    return f"{value:g}"


def _change_text(v: Variation, base_us: float) -> str:
    p = v.parameter
    best = min((e for e in v.effects if e.latency_us is not None), key=lambda e: e.latency_us)
    unpriced = " (its leakage and area are not modelled)" if p.unpriced and best.factor > 1 else ""
    return (f"{p.label} {_fmt_value(p, p.value)}→{_fmt_value(p, best.value)}: "
            f"{100 * (best.latency_us - base_us) / base_us:+.1f}% latency{unpriced}")


def sensitivity(model: Model | str, system: System, schedule: str = "sequential",
                loops: LoopTrips | None = None, name: str = "<model>") -> Sensitivity:
    """Every design parameter of `system` at x0.5 and x2 on `model`, ranked; bottlenecks; the verdict.

    Raises:
        Infeasible: the base design cannot run the model.
        OpResolutionError, WorkError, ModelError: the model cannot be analysed (unknown op, no work model).
    """
    analysis = analyze(model, system, schedule, loops)
    base = simulate_placed(analysis, system, schedule)
    base_us = base.latency * 1e6
    variations, skipped = [], []
    for device in (system.host, *system.accelerators):
        for p in _parameters(device.hardware):
            if p.value == 0:
                skipped.append(f"{p.label}: 0 (halving or doubling 0 changes nothing; give it a value to vary)")
                continue
            effects = tuple(_effect(analysis, system, p, f, schedule) for f in FACTORS)
            skipped += [f"{p.label} x{e.factor:g}: {e.note}" for e in effects if e.status == "skipped"]
            variations.append(Variation(parameter=p, effects=effects))
    variations.sort(key=lambda v: (-v.effect(base_us), v.parameter.label))
    fixed = chosen_by_cost(system)
    if fixed:
        variations = _replaced(variations, model, system, schedule, loops, base_us)
    by_bound, by_op = bottlenecks(base)
    return Sensitivity(model=name, latency_us=base_us, energy_uj=_energy_uj(base), placement_fixed=fixed,
                       variations=tuple(variations), skipped=tuple(skipped), bottlenecks=tuple(by_bound),
                       ops=tuple(by_op), verdict=_verdict(base_us, variations, by_bound, by_op))


def _replaced(variations: list[Variation], model, system: System, schedule: str, loops, base_us: float,
              ) -> list[Variation]:
    """The strongest REPLACED variations with their latency when delegation runs again (costs re-place nodes)."""
    out = []
    for k, v in enumerate(variations):
        feasible = [e for e in v.effects if e.latency_us is not None]
        if k < REPLACED and feasible and v.best_change(base_us) < 0:  # the strongest that helps
            best = min(feasible, key=lambda e: e.latency_us)
            varied = _with(system, v.parameter.device, v.parameter.key, v.parameter.written(best.value))
            try:
                again = analyze(model, varied, schedule, loops)
                v = dataclasses.replace(v, replaced_latency_us=simulate_placed(again, varied, schedule).latency * 1e6)
            except Infeasible:
                pass
        out.append(v)
    return out


def _pct(value: float | None, base: float | None) -> str:
    if value is None or base is None or not base:
        return "—"
    return f"{100 * (value - base) / base:+.1f}%"


def _effect_text(e: Effect, s: Sensitivity, p: Parameter | None = None) -> str:
    if e.status == "skipped":
        return "skipped"
    if e.status == "infeasible":
        return "infeasible"
    if s.energy_uj is None:  # said once in the heading, not on every line
        return f"latency {_pct(e.latency_us, s.latency_us)}"
    energy = "energy not modelled" if e.energy_uj is None else f"energy {_pct(e.energy_uj, s.energy_uj)}"
    if p is not None and p.unpriced and e.factor > 1:
        energy += " + the larger level's leakage, not modelled (note below)"
    return f"latency {_pct(e.latency_us, s.latency_us)}, {energy}"


def lines(s: Sensitivity, top: int | None = None) -> list[str]:
    """The text `accelsim sensitivity` prints (and a report shows): parameters, bottlenecks, verdict."""
    energy = ("not modelled (a device has no energy.mac): latency only below" if s.energy_uj is None
              else f"{s.energy_uj:,.3f} µJ")
    out = [f"{s.model}: {s.latency_us:,.1f} µs, energy {energy}",
           "Parameters at x0.5 and x2, ranked by their largest latency effect either way:"]
    if s.placement_fixed:
        out.append("  (costs chose where nodes run; the placement is held fixed for every variation; 're-placed' "
                   "gives the latency when delegation runs again)")
    shown = s.variations if top is None else s.variations[:top]
    width = max((len(v.parameter.label) for v in shown), default=0)
    for v in shown:
        p = v.parameter
        cells = "; ".join(f"x{e.factor:g} ({_fmt_value(p, e.value)}): {_effect_text(e, s, p)}" for e in v.effects)
        again = (f"; re-placed: {v.replaced_latency_us:,.1f} µs ({_pct(v.replaced_latency_us, s.latency_us)})"
                 if v.replaced_latency_us is not None else "")
        out.append(f"  {p.label:<{width}}  now {_fmt_value(p, p.value)}: {cells}{again}")
    if top is not None and len(s.variations) > top:
        out.append(f"  ... {len(s.variations) - top} more with smaller effects (accelsim sensitivity lists all)")
    for v in shown:
        out += [f"  note: {v.parameter.label} x{e.factor:g} is infeasible: {e.note}"
                for e in v.effects if e.status == "infeasible"]
    out += [f"  note: {v.parameter.label}: {v.parameter.unpriced}" for v in shown if v.parameter.unpriced]
    out += [f"  skipped: {line}" for line in s.skipped]
    out.append("Bottlenecks: busy time by bound")
    out += [f"  {b.what:<40} {b.seconds * 1e6:>12,.1f} µs {100 * b.share:>6.1f}%" for b in s.bottlenecks]
    out.append("Per op: share of node time and mean utilisation of the compute array")
    for o in s.ops[:10]:
        util = "—" if o.utilization is None else f"{100 * o.utilization:.0f}%"
        out.append(f"  {o.op + ' on ' + o.unit:<40} {o.nodes:>4} nodes {100 * o.share:>6.1f}% of time, "
                   f"utilisation {util:>4}, bound by {o.bound} ({100 * o.bound_share:.0f}%)")
    out.append("Verdict: what to change first")
    out += [f"  {line}" for line in s.verdict]
    return out


def as_dict(s: Sensitivity) -> dict[str, Any]:
    """The result as plain data (the --json output)."""
    return dataclasses.asdict(s)
