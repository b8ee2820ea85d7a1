"""The report's figures: breakdown bars, Gantt charts, sweep lines, Pareto fronts and partition pictures,
drawn from the records by accelsim.reports.plots and accelsim.reports.partition_plot.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

from accelsim.core.pareto import OBJECTIVES
from accelsim.reports import plots
from accelsim.reports.document import Image
from accelsim.reports.labels import fmt_us, point_label, slug_of, value_key
from accelsim.reports.partition_plot import partition_png

BREAKDOWN_MAX_BARS = 40  # more ok points than this: the breakdown chart shows only the points shown in detail
# beyond this many lines (a random search, many keys) a sweep plot holds the other keys at the best point's values
SWEEP_MAX_LINES = 24

def _sweep_lines(points: Sequence[dict], key: str) -> list[plots.SweepLine]:
    swept: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        if p["status"] == "ok" and key in p["sweep"]:
            others = {k: v for k, v in p["sweep"].items() if k != key}
            label = point_label({**p, "sweep": others}, short=True)
            swept[(p["model_name"], p["variant"], label)].append(p)
    lines = []
    for (model, _, label), group in swept.items():
        group = sorted(group, key=lambda p: value_key(p["sweep"][key]))
        lines.append(plots.SweepLine(model=model, label=label, values=tuple(p["sweep"][key] for p in group),
                                     latency_us=tuple(p["latency_us"] for p in group),
                                     overhead_pct=tuple(p["partition_overhead_pct"] for p in group),
                                     speedup=tuple(p["speedup"] for p in group),
                                     names=tuple(point_label(p) for p in group)))
    models = {m for m, _, _ in swept}
    for p in points:
        if p["status"] == "ok" and key not in p["sweep"] and p["model_name"] in models:
            lines.append(plots.SweepLine(model=p["model_name"], label=point_label(p, short=True), values=(),
                                         latency_us=(p["latency_us"],),
                                         overhead_pct=(p["partition_overhead_pct"],), speedup=(p["speedup"],),
                                         names=(point_label(p),), flat=True))
    return lines


def _held_at_best(points: Sequence[dict], key: str) -> list[dict]:
    """The points of each model x variant whose other swept values are those of its fastest ok point."""
    best: dict[tuple[str, str], dict] = {}
    for p in points:
        k = (p["model_name"], p["variant"])
        if p["status"] == "ok" and key in p["sweep"] and (k not in best or p["latency_us"] < best[k]["latency_us"]):
            best[k] = p

    def others(p: dict) -> dict:
        return {k: str(v) for k, v in p["sweep"].items() if k != key}

    return [p for p in points if (p["model_name"], p["variant"]) in best and key in p["sweep"]
            and others(p) == others(best[(p["model_name"], p["variant"])])]


def _sweep_line_count(points: Sequence[dict], key: str) -> int:
    """How many lines _sweep_lines would draw for `key`, counted without building them."""
    swept = {(p["model_name"], p["variant"], *(str(v) for k, v in p["sweep"].items() if k != key))
             for p in points if p["status"] == "ok" and key in p["sweep"]}
    flat = {(p["model_name"], p["variant"], p["id"]) for p in points if p["status"] == "ok" and key not in p["sweep"]}
    return len(swept) + len(flat)


def breakdown_points(points: Sequence[dict], shown: Sequence[int]) -> list[dict]:
    """The points of the breakdown chart: every ok point, or those shown in detail when there are too many."""
    ok = [p for p in points if p["status"] == "ok"]
    return ok if len(ok) <= BREAKDOWN_MAX_BARS else [points[k] for k in shown]


def color_key(experiment: dict | None, keys: Sequence[str]) -> str | None:
    """The swept key colouring the Pareto plots: the experiment's choice, else the first swept key (None: variant)."""
    chosen = (experiment or {}).get("pareto_color")
    return chosen if chosen in keys else (keys[0] if keys else None)


def _pareto_figures(points: Sequence[dict], fronts: dict[tuple[str, str], list[str]],
                    color: str | None) -> dict[str, plots.Picture]:
    """Per model, plots/pareto_<model>.png: a panel per objective pair, the front coloured by `color`."""
    figures: dict[str, plots.Picture] = {}
    on_front = {pair: set(ids) for pair, ids in fronts.items()}
    models: dict[str, list[dict]] = defaultdict(list)
    # energy may be "not modelled" (None): such points leave only the latency x energy panel
    known = [pair for pair in fronts if pair[1] != "energy_uj"]
    for p in points:
        if p["status"] == "ok" and all(p.get(k) is not None for pair in known for k in pair):
            models[p["model"]].append(p)
    for group in models.values():
        panels = []
        for (x_key, y_key), ids in on_front.items():
            if any(p.get(x_key) is None or p.get(y_key) is None for p in group):
                continue  # the section's text says these points leave the energy front
            front = sorted((k for k, p in enumerate(group) if p["id"] in ids),
                           key=lambda k: (group[k][x_key], group[k][y_key]))
            panels.append(plots.ParetoPanel(OBJECTIVES[x_key], OBJECTIVES[y_key], tuple(p[x_key] for p in group),
                                            tuple(p[y_key] for p in group), tuple(front)))
        if not panels:
            continue
        colors = [p["sweep"].get(color) if color else p["variant"] for p in group]
        name = group[0]["model_name"]
        title = f"Pareto fronts of {name}: {len(group)} design points"
        figures[f"plots/pareto_{slug_of(name)}.png"] = plots.Picture(
            plots.pareto_png(title, panels, color or "variant", colors))
    return figures


def all_figures(points: Sequence[dict], names: Sequence[str], shown: Sequence[int], keys: Sequence[str],
             fronts: dict[tuple[str, str], list[str]], color: str | None) -> dict[str, plots.Picture]:
    """Every plot of the report, by path relative to the report folder."""
    figures: dict[str, plots.Picture] = _pareto_figures(points, fronts, color)
    bars = breakdown_points(points, shown)
    if bars:
        figures["plots/breakdown.png"] = plots.Picture(plots.breakdown_png([
            plots.Bar(label=point_label(p, short=True), compute_us=p["compute_us"], memory_us=p["memory_us"],
                      transfer_us=p["transfer_us"], overhead_us=p["overhead_us"],
                      latency_us=p["latency_us"], speedup=p["speedup"]) for p in bars]))
    for key in keys:
        held = _sweep_line_count(points, key) > SWEEP_MAX_LINES
        drawn = _held_at_best(points, key) if held else points
        lines = _sweep_lines(drawn, key)
        if held:  # one line per model x variant: its other values are the title's "best point's values"
            lines = [ln if ln.flat else dataclasses.replace(ln, label=" | ".join(ln.names[0].split(" | ")[:2]))
                     for ln in lines]
        if any(not ln.flat and len(ln.values) > 1 for ln in lines):
            infeasible = [(p["sweep"][key], point_label(p)) for p in drawn
                          if p["status"] == "infeasible" and key in p["sweep"]]
            values = [v for ln in lines for v in ln.values] + [v for v, _ in infeasible]
            title = f"Sweep of {key}\n(other swept keys at the fastest point's values)" if held else None
            figures[f"plots/sweep_{slug_of(key)}.png"] = plots.sweep_png(key, lines, plots.sweep_axis(key, values),
                                                                        infeasible, title)
    for k in shown:
        p = points[k]
        title = f"{point_label(p)}: one inference, {fmt_us(p['latency_us'])} µs"
        figures[f"plots/gantt_{names[k]}.png"] = plots.Picture(plots.gantt_png(p, title))
    figures.update(_partition_figures(points, names, shown))
    return figures


def _partition_figures(points: Sequence[dict], names: Sequence[str], shown: Sequence[int]) -> dict[str, plots.Picture]:
    """plots/partitions_<slug>.png of each point that gets a timeline and has accelerators (CPU-only: all host)."""
    return {f"plots/partitions_{names[k]}.png": plots.Picture(partition_png(
        points[k], f"{point_label(points[k])}: where each node runs, in run order")) for k in shown
        if points[k]["accelerators"]}


def partition_image(p: dict, slug: str) -> Image:
    return Image(f"plots/partitions_{slug}.png",
                 f"where each node of {point_label(p)} runs, in run order")
