"""One design point's result as plain, JSON-ready data: what results.json holds, one record each.

Every number a report shows comes from these records, so md, html, json and csv agree.
Their keys, types and units are the TypedDicts of `accelsim.core.record` (`PointResult` and its rows).

Records of points an experiment does not trace (`traces: pareto | none`) are stored without
their per-node and per-partition lists (accelsim.core.record.DETAIL_KEYS); a report re-simulates the
points it traces. The experiment adds the area proxies (accelsim.core.record.AREA_KEYS, `area`) as it
stores a point.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.core.record import (
    DETAIL_KEYS,
    INFEASIBLE_KEY,
    UNMODELLED_KEY,
    WARNINGS_KEY,
    LayerRow,
    NodeCostRow,
    NumericsRecord,
    OpProfileRow,
    OpSummaryRow,
    PartitionChoiceRecord,
    PointResult,
)
from accelsim.hardware.config import System
from accelsim.hardware.sweeps import onchip_bytes, peak_macs_per_cycle, si_value
from accelsim.simulation.diff import DiffReport
from accelsim.simulation.inference import HOST, Simulation

US = 1e6


def _r(x: float, digits: int = 4) -> float:
    """Rounded for stable, readable files (the simulation is deterministic; rounding keeps it so)."""
    return round(float(x), digits)


def _uj(joules: float) -> float:
    """Microjoules to the picojoule: a small node's energy is a few nanojoules."""
    return _r(joules * US, 6)


def record(sim: Simulation, *, point_id: str, model: str, variant: str, sweep: dict[str, Any],
           diff: DiffReport | None = None, details: bool = True) -> PointResult:
    """The results.json record of one simulated design point.

    Args:
        details: with the per-node and per-partition lists (DETAIL_KEYS); without them it is
            `summary(record(...))`, made without computing them (what a store keeps of an untraced point).
    """
    result = sim.result
    latency = result.latency
    by_kind = result.by_kind
    unmodelled = set(sim.energy_unmodelled)
    rec = {
        "id": point_id,
        "model": model,
        "model_name": Path(model).stem,
        "variant": variant,
        "host": sim.host,
        "accelerators": list(sim.accelerators),
        "sweep": dict(sweep),
        "schedule": sim.schedule,
        "status": "ok",
        "error": None,
        "latency_us": _r(latency * US),
        "init_us": _r(sim.init.latency * US),
        "compute_us": _r(by_kind.get("compute", 0.0) * US),
        "memory_us": _r(by_kind.get("memory", 0.0) * US),
        "transfer_us": _r(by_kind.get("transfer", 0.0) * US),
        "overhead_us": _r(by_kind.get("overhead", 0.0) * US),
        "partition_overhead_pct": partition_overhead_pct(sim),
        "energy_uj": _uj(sim.energy),
        "static_energy_uj": _uj(sim.static_energy),
        "energy_by_unit_uj": {k: _uj(v) for k, v in sim.energy_by_unit().items()},
        "edp_uj_ms": _r(sim.energy * US * latency * 1e3, 6),
        "init_energy_uj": _uj(sim.init_energy),
        "partitions": len(sim.partitions),
        "delegated_nodes": sim.delegated_nodes,
        "total_nodes": len(sim.nodes),
        "transfer_bytes": sim.transfer_bytes,
        "init_param_bytes": sim.init.bytes_moved,
        "streamed_param_bytes": sum(p.streamed_param_bytes for p in sim.partitions),
        "level_bytes": sim.level_bytes(),
        "utilization_pct": {k: _r(100 * v, 2) for k, v in sorted(result.utilization().items())},
        "partition_table": None,
        "op_profile": None,
        "op_summary": None,
        "node_costs": None,
        "rejected": None,
        "loops": None,
        "events": None,
        "partition_choice": partition_choice(sim),
        "numerics": _numerics(diff),
        "speedup": None,
        **(_energy_not_modelled(sim) if unmodelled else {}),
        **({WARNINGS_KEY: list(sim.notes)} if sim.notes else {}),
    }
    if not details:
        return summary(rec)
    partition_table = [{
        "partition": p.index,
        "unit": p.unit,
        "delegate_node": p.delegate_node,
        "nodes": list(p.nodes),
        "ops": list(p.ops),
        "input_bytes": p.input_bytes,
        "output_bytes": p.output_bytes,
        "compute_us": _r(p.compute * US),
        "memory_us": _r(p.memory * US),
        "transfer_us": _r(p.transfer * US),
        "overhead_us": _r(p.overhead * US),
        "pct_of_latency": _r(100 * (p.compute + p.memory + p.transfer + p.overhead) / latency if latency else 0.0, 2),
        "level_bytes": dict(p.cost.level_bytes),
        "bound_us": {k: _r(v * US) for k, v in p.cost.bound_seconds},
        "energy_uj": _uj(p.energy),
    } for p in sim.partitions]
    profile, summary_rows = op_profile(sim)
    rejected = [{"node": r["index"], "op": r["op"], "version": r["version"], "reason": r["reason"]}
                for r in sim.delegation if not r["claimed"] and sim.accelerators]
    if unmodelled:  # "not modelled": an empty value, never a partial sum that reads as the energy
        for row in partition_table:
            if row["unit"] in unmodelled:
                row["energy_uj"] = None
    events = [{
        "resource": e.resource, "kind": e.kind, "label": e.label, "node": e.node, "partition": e.partition,
        "start_us": _r(e.start * US), "end_us": _r(e.end * US), "bytes": e.bytes,
    } for e in result.events]
    rec.update(partition_table=partition_table, op_profile=profile, op_summary=summary_rows,
               node_costs=node_costs(sim), rejected=rejected,
               loops=[{"node": c.where, "op": c.op, "trips": c.trips, "source": c.source} for c in sim.loops],
               events=events)
    return rec


def speedup(baseline_latency: float | None, latency: float | None) -> float | None:
    """Speed-up over the host alone: the host-only latency over this latency (any one unit), to 3 places.

    None when either latency is missing or zero (a failed point, or no baseline to compare with).
    """
    if not baseline_latency or not latency:
        return None
    return round(baseline_latency / latency, 3)


def fill_speedups(records: Sequence[dict]) -> None:
    """Set each ok record's `speedup` over the CPU-only point of its model, schedule and host settings."""
    def key(r: dict) -> tuple:
        host_sweep = tuple(sorted((k, str(v)) for k, v in r["sweep"].items() if k.startswith("host.")))
        return (r["model"], r["schedule"], host_sweep)

    baselines = {key(r): r["latency_us"] for r in records if r["status"] == "ok" and not r["accelerators"]}
    for r in records:
        if r["status"] == "ok" and (value := speedup(baselines.get(key(r)), r["latency_us"])) is not None:
            r["speedup"] = value


def partition_overhead_pct(sim: Simulation) -> float:
    """The share of the latency spent on partition transfers and call overheads, in percent (2 places)."""
    return _r(100 * sim.partition_overhead, 2)


def _energy_not_modelled(sim: Simulation) -> dict[str, Any]:
    """The energy keys of a record whose system has devices without an energy model: empty, and which devices."""
    missing = set(sim.energy_unmodelled)
    return {"energy_uj": None, "static_energy_uj": None, "edp_uj_ms": None,
            "energy_by_unit_uj": {k: None if k in missing else _uj(v) for k, v in sim.energy_by_unit().items()},
            UNMODELLED_KEY: sorted(missing)}


def area(system: System) -> dict[str, int | float]:
    """The area proxies of a design point: MAC units and on-chip bytes over the host and every accelerator."""
    devices = tuple(d.hardware for d in (system.host, *system.accelerators))
    macs = sum(peak_macs_per_cycle(c) for c in devices)
    return {"area_macs": int(macs) if float(macs).is_integer() else _r(macs),  # whole for every shipped kind
            "area_onchip_bytes": int(sum(onchip_bytes(c) for c in devices))}


def summary(rec: PointResult) -> PointResult:
    """The record without its DETAIL_KEYS: what a store keeps of a point that is not traced."""
    return {k: v for k, v in rec.items() if k not in DETAIL_KEYS}


def partition_choice(sim: Simulation) -> PartitionChoiceRecord | None:
    """Partition policy 'cost''s decision next to TFLite's (None when no accelerator has that policy)."""
    c = sim.choice
    if c is None:
        return None
    return {"objective": c.objective, "search": c.search, "tflite_partitions": len(c.tflite),
            "host_partitions": [list(p) for p in c.host], "tflite_latency_us": _r(c.tflite_latency * US),
            "tflite_energy_uj": _uj(c.tflite_energy), "saved_us": _r((c.tflite_latency - sim.latency) * US),
            "saved_energy_uj": _uj(c.tflite_energy - sim.energy)}


def error_record(*, point_id: str, model: str, variant: str, sweep: dict[str, Any], host: str,
                 accelerators: list[str], schedule: str, error: str) -> PointResult:
    """The record of a design point that failed: its identity and the error, no numbers."""
    return {"id": point_id, "model": model, "model_name": Path(model).stem, "variant": variant, "host": host,
            "accelerators": accelerators, "sweep": dict(sweep), "schedule": schedule, "status": "error",
            "error": error, "speedup": None}


def infeasible_record(*, point_id: str, model: str, variant: str, sweep: dict[str, Any], host: str,
                      accelerators: list[str], schedule: str, reason: str, message: str) -> PointResult:
    """The record of a design point whose hardware cannot run the model: its identity, the reason and why."""
    return {**error_record(point_id=point_id, model=model, variant=variant, sweep=sweep, host=host,
                           accelerators=accelerators, schedule=schedule, error=message),
            "status": "infeasible", INFEASIBLE_KEY: reason}


def op_profile(sim: Simulation) -> tuple[list[OpProfileRow], list[OpSummaryRow]]:
    """benchmark_model's op profile (per node, in run order) and its summary by node type."""
    total = sum(n.seconds for n in sim.nodes) or 1.0
    order = {e.node: k for k, e in enumerate(sim.result.events) if e.node is not None and e.kind == "compute"}
    nodes = sorted(sim.nodes, key=lambda n: order.get(n.index, n.index))
    rows, cdf = [], 0.0
    for n in nodes:
        pct = 100 * n.seconds / total
        cdf += pct
        rows.append({"node": n.index, "op": n.op, "unit": n.unit if n.unit != HOST else "host",
                     "partition": n.partition, "first_ms": _r(n.seconds * 1e3, 6), "avg_ms": _r(n.seconds * 1e3, 6),
                     "pct": _r(pct, 3), "cdf_pct": _r(cdf, 3), "times_called": 1})
    by_type: dict[str, list[float]] = defaultdict(list)
    for n in sim.nodes:
        by_type[n.op].append(n.seconds)
    summary, cdf = [], 0.0
    for op, times in sorted(by_type.items(), key=lambda kv: (-sum(kv[1]), kv[0])):
        pct = 100 * sum(times) / total
        cdf += pct
        # benchmark_model's "Summary by node type": avg ms is the type's total time per run.
        summary.append({"op": op, "count": len(times), "avg_ms": _r(sum(times) * 1e3, 6),
                        "pct": _r(pct, 3), "cdf_pct": _r(cdf, 3), "times_called": len(times)})
    return rows, summary


def node_costs(sim: Simulation) -> list[NodeCostRow]:
    """Per node in run order, what the cost model says: MACs, cycles, utilisation, compute time, bound,
    bytes per memory level, streamed weight bytes and energy (`layer_rows` joins them to the op profile).

    `cycles` count the node's unit's clock; `utilization_pct` is MACs over cycles x the unit's peak MACs
    per cycle (None when its kind gives no peak); level names are the unit's own.
    """
    order = {e.node: k for k, e in enumerate(sim.result.events) if e.node is not None and e.kind == "compute"}
    return [{"node": n.index, "macs": n.macs, "cycles": n.cost.cycles,
             "utilization_pct": None if n.utilization is None else _r(100 * n.utilization, 3),
             "compute_us": _r(n.cost.compute_seconds * US), "bound": n.cost.bound,
             "level_bytes": dict(n.cost.level_bytes), "streamed_weight_bytes": n.cost.param_bytes_streamed,
             "energy_uj": _uj(n.cost.energy), "note": n.note or None}
            for n in sorted(sim.nodes, key=lambda n: order.get(n.index, n.index))]


def _numerics(diff: DiffReport | None) -> NumericsRecord | None:
    if diff is None:
        return None
    return {"runs": diff.num_runs, "outputs": [
        {"index": o.index, "name": o.name, "mean_abs_error": float(o.mean_abs_error),
         "std_abs_error": float(o.std_abs_error), "max_abs_error": float(o.max_abs_error)} for o in diff.outputs]}


# The tidy table of results.csv and results.json: the point's identity, one column per swept key
# (sweep_columns), then these, then NUMERICS_COLUMNS when any point checked its numerics, then error.
ID_COLUMNS = ("id", "model_name", "variant", "accelerators")
CSV_COLUMNS = ("schedule", "status", "latency_us", "speedup", "init_us", "compute_us", "memory_us", "transfer_us",
               "overhead_us", "partition_overhead_pct", "partitions", "delegated_nodes", "total_nodes",
               "transfer_bytes", "init_param_bytes", "streamed_param_bytes", "energy_uj", "edp_uj_ms", "area_macs",
               "area_onchip_bytes")
# Over the point's outputs: the number of runs, the largest max and the largest mean absolute error.
NUMERICS_COLUMNS = ("numerics_runs", "numerics_max_abs_error", "numerics_mean_abs_error")


@dataclass(frozen=True)
class SweepColumn:
    """One swept key as a tidy column: numbers in SI base units (unit in the header), or text."""

    key: str
    header: str
    values: dict[str, Any]  # str(value as written) -> the cell (SI number, or the text)

    def value(self, sweep: dict[str, Any]) -> Any:
        return self.values[str(sweep[self.key])] if self.key in sweep else None


def _si_cell(number: float) -> float | int:
    # Whole SI values print as integers (bytes, B/s, Hz), so the CSV reads as written.
    return int(number) if float(number).is_integer() and abs(number) < 2 ** 53 else number


def sweep_columns(keys: Sequence[str], points: Sequence[dict[str, Any]]) -> list[SweepColumn]:
    """A column per swept key (in `keys`' order; `schedule` has its own column): numeric in the SI base
    unit its values share ('key [B/s]', plain numbers without a unit), else text.

    Each distinct value is parsed once: a grid repeats few values over many points.
    """
    out = []
    for key in keys:
        if key == "schedule":
            continue
        written = {str(p["sweep"][key]): p["sweep"][key] for p in points if key in p["sweep"]}
        parsed = {text: si_value(value) for text, value in written.items()}
        units_seen = {u for _, u in filter(None, parsed.values())}
        if parsed and all(parsed.values()) and len(units_seen) == 1:
            unit = units_seen.pop()
            out.append(SweepColumn(key, f"{key} [{unit}]" if unit else key,
                                   {text: _si_cell(number) for text, (number, _) in parsed.items()}))
        else:
            out.append(SweepColumn(key, key, {text: text for text in written}))
    return out


def tidy_table(points: Sequence[dict[str, Any]],
               keys: Sequence[str] | None = None) -> tuple[list[str], list[list[Any]]]:
    """results.csv's header and rows: one row per point, numbers as numbers, None where a value is absent.

    Args:
        points: records in report order.
        keys: the swept keys in the experiment file's order (default: every swept key, alphabetically).
    """
    if keys is None:
        keys = sorted({k for p in points for k in p["sweep"]})
    swept = sweep_columns(keys, points)
    numerics = any(p.get("numerics") for p in points)
    header = [*ID_COLUMNS, *(c.header for c in swept), *CSV_COLUMNS, *(NUMERICS_COLUMNS if numerics else ()),
              "error"]
    rows = []
    for p in points:
        row = [p["id"], p["model_name"], p["variant"], "+".join(p["accelerators"]),
               *(c.value(p["sweep"]) for c in swept), *(p.get(c) for c in CSV_COLUMNS)]
        if numerics:
            row += _numerics_columns(p.get("numerics"))
        rows.append([*row, p.get("error")])
    return header, rows


def _numerics_columns(numerics: dict[str, Any] | None) -> list[Any]:
    if not numerics or not numerics["outputs"]:
        return [None] * len(NUMERICS_COLUMNS)
    outputs = numerics["outputs"]
    return [numerics["runs"], max(o["max_abs_error"] for o in outputs), max(o["mean_abs_error"] for o in outputs)]


# One row per node of one design point (layers/<point>.csv and the HTML's per-layer tables).
LAYER_COLUMNS = ("node", "op", "unit", "partition", "time_us", "pct", "cdf_pct", "macs", "cycles", "utilization_pct",
                 "compute_us", "bound", "bytes_per_level", "streamed_weight_bytes", "energy_uj",
                 "not_delegated_because", "note")


def layer_rows(rec: PointResult) -> list[LayerRow]:
    """Per node of an ok record, in run order: the LAYER_COLUMNS values (partition None on the host).

    The one place per-node results are gathered, so the CSV and the HTML tables agree.
    time_us is the node's simulated time (compute_us of it computing, the rest waiting on the
    memory level named by bound); pct and cdf_pct its share of all node time; bytes_per_level
    names the unit's levels ('link': host memory over the link).
    """
    reasons = {r["node"]: r["reason"] or "not claimed" for r in rec.get("rejected", ())}
    costs = {r["node"]: r for r in rec["node_costs"]}
    return [{"node": r["node"], "op": r["op"], "unit": r["unit"], "partition": r["partition"],
             "time_us": _r(r["avg_ms"] * 1e3, 3), "pct": r["pct"], "cdf_pct": r["cdf_pct"],
             **{k: costs[r["node"]][k] for k in ("macs", "cycles", "utilization_pct", "compute_us", "bound",
                                                 "streamed_weight_bytes", "energy_uj")},
             "bytes_per_level": costs[r["node"]]["level_bytes"],
             "not_delegated_because": reasons.get(r["node"]), "note": costs[r["node"]].get("note")}
            for r in rec["op_profile"]]
