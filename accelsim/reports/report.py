"""Latency reports from design-point records: report.md, report.html, results.json, results.csv, plots, traces.

Layout of `<out_dir>` (normally reports/<experiment>/):

    report.md                summary (every point up to SUMMARY_MAX_ROWS, else ranges per model x variant
                             and the fastest), Pareto fronts (plots, and one table of the points on any
                             front), breakdown, sweeps, and per shown point its totals, partitions,
                             rejected nodes and numerics; failures; missing points
    report.html              the same plus every shown point's per-node table and op profile (collapsed);
                             tables sort on a click on their heading and filter as you type; sweep plot
                             points name themselves on hover; one self-contained file
    results.json             {"experiment", "version" (accelsim's), "points": every record, "missing": points
                             that did not finish, "columns" and "rows": the tidy table of results.csv}
    results.csv              one row per design point, accelsim.reports.results.tidy_table: identity, a numeric
                             column per swept key in SI base units ("key [B/s]"), latency, energy, area
                             proxies, numerics errors when any point checked them
    layers/<slug>.csv        one row per node of every traced point, columns accelsim.reports.results.LAYER_COLUMNS
    plots/                   breakdown.png, gantt_<slug>.png (points shown in detail), partitions_<slug>.png
                             (those of them with accelerators: accelsim.reports.partition_plot), sweep_<key>.png,
                             pareto_<model>.png
    traces/<slug>.json       Chrome trace events of every traced point (Perfetto, chrome://tracing)

Traced points: every ok point, or those write_report is given (`traced`: an experiment's
`traces: pareto` passes the Pareto fronts and the best k). At most DETAIL_MAX of them are shown
in detail. Tables that could grow with the point count are cut (SUMMARY_MAX_ROWS, TABLE_MAX_ROWS)
with a sentence saying how many rows there are and which file holds them all, in report.md and
report.html alike, so both stay readable at 100,000 points.

Every number comes from the records (accelsim.reports.results), so the files agree. Models, variants and
sweep keys appear in the experiment file's order when the caller passes it (else alphabetically).
Files are written atomically, and md/json/csv depend only on the inputs (no timestamps): the same
records give the same bytes. Plots, traces and layer tables from an earlier report that this one
does not produce are removed, so the folder never mixes two runs.
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.core.feasibility import summary_line
from accelsim.core.files import write_atomic
from accelsim.core.glossary import GLOSSARY_HEADERS, TERMS
from accelsim.core.pareto import DEFAULT_BEST, FRONTS, best_ids, front_ids
from accelsim.core.record import PointResult
from accelsim.core.trace import trace_document
from accelsim.reports import plots
from accelsim.reports.document import (
    Block,
    Heading,
    Image,
    Para,
    Pre,
    Section,
    Table,
    make_table,
    render_html,
    render_markdown,
)
from accelsim.reports.exports import layers_csv, results_csv, results_json
from accelsim.reports.figures import SWEEP_MAX_LINES, all_figures, breakdown_points, color_key
from accelsim.reports.labels import (
    WHAT_TO_CHANGE,
    WHAT_TO_CHANGE_ANCHOR,
    Order,
    detail_subset,
    detailed,
    fmt_pct,
    fmt_speedup,
    fmt_uj,
    fmt_us,
    point_label,
    slower_sentence,
    slower_than_host_points,
    slug_of,
    slugs,
    sweep_text,
    value_key,
    warning_lines,
)
from accelsim.reports.point_detail import DETAIL_INTRO, detail_section
from accelsim.reports.results import tidy_table

_LONG_VALUE_LIST = 8  # sweep values listed one by one in the summary up to this many, as a range beyond
# Readable at any point count: tables beyond these sizes show their first rows and say where the rest is.
SUMMARY_MAX_ROWS = 50  # more points: the summary is ranges per model x variant and the best points
HTML_MAX_ROWS = 1000  # report.html's collapsed, sortable table of every point holds at most this many
TABLE_MAX_ROWS = 50  # rows of a front, failed or missing table
_GENERATED = (("plots", re.compile(r"^(gantt_.+|partitions_.+|sweep_.+|pareto_.+|breakdown)\.png$")),
              ("traces", re.compile(r"^.+\.json$")),
              ("layers", re.compile(r"^.+\.csv$")))


# -- document model: built once, rendered as Markdown and as HTML ----------------------------------


# -- formatting -------------------------------------------------------------------------------------


# -- ordering, names, selection ---------------------------------------------------------------------


# -- benchmark_model's op profile --------------------------------------------------------------------


# -- report sections --------------------------------------------------------------------------------


def _values_text(values: Iterable[Any]) -> str:
    """Sweep values in order, or their count and range when there are too many to read."""
    ordered = sorted(values, key=value_key)
    if len(ordered) <= _LONG_VALUE_LIST:
        return ", ".join(str(v) for v in ordered)
    return f"{len(ordered)} values from {ordered[0]} to {ordered[-1]}"


def _summary_paragraph(name: str, points: Sequence[dict], missing: Sequence[dict], experiment: dict | None,
                       order: Order) -> str:
    everything = [*points, *missing]
    models = order.sorted((p["model_name"] for p in everything), "models")
    variants = order.sorted((p["variant"] for p in everything), "variants")
    swept: dict[str, dict[str, Any]] = defaultdict(dict)  # by str(value): values may be lists, not hashable
    for p in everything:
        for k, v in p["sweep"].items():
            swept[k][str(v)] = v
    ok = [p for p in points if p["status"] == "ok"]
    failed = sum(1 for p in points if p["status"] == "error")
    infeasible = summary_line(points)
    source = f" ({experiment['source']})" if experiment and experiment.get("source") else ""
    text = (f"Experiment {name}{source}: {len(models)} model{'s' * (len(models) != 1)} ({', '.join(models)}) "
            f"on {len(variants)} variant{'s' * (len(variants) != 1)} ({', '.join(variants)})")
    if swept:
        text += ", sweeping " + "; ".join(f"{k} over {_values_text(swept[k].values())}"
                                          for k in order.sorted(swept, "keys"))
    schedules = sorted({p["schedule"] for p in points})
    if schedules and "schedule" not in swept:
        text += f"; schedule {', '.join(schedules)}"
    text += (f". {len(everything)} design points: {len(ok)} simulated, {failed} failed, "
             + (f"{infeasible}, " if infeasible else "") + f"{len(missing)} missing.")
    if infeasible:
        text += (" Infeasible points (cannot run the model, or over a limit) and why are listed under Infeasible "
                 "design points." + (" No point could run the model: see there what to change." if not ok else ""))
    if experiment and experiment.get("host"):
        text += " Host {}: {}.".format(*experiment["host"])
    if failed:
        text += " Failed points and their errors are listed under Failed design points."
    if missing:
        text += (" The run did not finish: the missing points are listed under Missing design points; "
                 "run the experiment again to complete them (finished points are cached).")
    best = []
    for model in models:
        accelerated = [p for p in ok if p["model_name"] == model and p["accelerators"]]
        if accelerated:
            b = min(accelerated, key=lambda p: p["latency_us"])  # ties: the first in report order
            speed = f", speed-up {fmt_speedup(b['speedup'])}" if b["speedup"] is not None else ""
            speed += ", slower than the host alone" if b["speedup"] is not None and b["speedup"] < 1 else ""
            swept_at = f" at {sweep_text(b['sweep'])}" if b["sweep"] else ""
            best.append(f"{model} on {b['variant']}{swept_at} ({fmt_us(b['latency_us'])} µs{speed})")
    if best:
        text += " Fastest with accelerators: " + "; ".join(best) + "."
    slower = slower_than_host_points(ok)
    if slower:
        text += f" Warning: {slower_sentence(ok, 'points')}."
    chose = [p for p in ok if p.get("partition_choice") and p["partition_choice"]["saved_us"] > 0]
    if chose:
        top = max(chose, key=lambda p: p["partition_choice"]["saved_us"])
        text += (f" Cost-aware partitioning beat TFLite's choice at {len(chose)} point{'s' * (len(chose) != 1)}, "
                 f"by up to {fmt_us(top['partition_choice']['saved_us'])} µs ({point_label(top)}; each point's "
                 "Partition choice table has both).")
    if experiment and experiment.get("partial"):
        text += (" This partial report of an interrupted run leaves out the plots and the sensitivity of the "
                 "fastest points; run the experiment again to complete both.")
    if experiment and experiment.get("sensitivity"):
        text += (f" What to change next: {WHAT_TO_CHANGE}, below, halves and doubles every design parameter at the "
                 "fastest point of each model × variant and ranks them.")
    text += (" Latencies are simulated microseconds for one inference; speed-up is the CPU-only latency of "
             "the same model and sweep point over the point's latency.")
    return text


def _summary_table(points: Sequence[dict], keys: Sequence[str]) -> Table:
    headers = ["Model", "Variant", *keys, "Latency (µs)", "Speed-up", "Energy (µJ)", "Partitions",
               "Delegated / total nodes", "Transfer (bytes)", "Partition overhead (%)"]
    rows = []
    for p in points:
        sweep = [str(p["sweep"][k]) if k in p["sweep"] else "—" for k in keys]
        if p["status"] == "ok":
            numbers = [fmt_us(p["latency_us"]), fmt_speedup(p["speedup"]), fmt_uj(p["energy_uj"]), str(p["partitions"]),
                       f"{p['delegated_nodes']} / {p['total_nodes']}", f"{p['transfer_bytes']:,}",
                       fmt_pct(p["partition_overhead_pct"])]
        else:
            numbers = [p["status"], "—", "—", "—", "—", "—", "—"]  # error, or infeasible (a result: listed below)
        rows.append([p["model_name"], p["variant"], *sweep, *numbers])
    return make_table(headers, rows, [False, False, *(False for _ in keys), True, True, True, True, True, True, True],
                  interactive=True)


def _cut(rows: Sequence, limit: int, where: str) -> tuple[Sequence, list[Block]]:
    """The first `limit` rows, and a sentence saying how many there are and where all of them are, when cut."""
    if len(rows) <= limit:
        return rows, []
    return rows[:limit], [Para(f"The table shows the first {limit} of {len(rows)} rows; all of them are in {where}.")]


def _fmt_count(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    low, high = min(values), max(values)
    return fmt(low) if low == high else f"{fmt(low)} – {fmt(high)}"


_TIDY_NOTE = ("Every point is in results.csv, one row each: a numeric column per swept key in SI base units with the "
              "unit in its header (e.g. [B/s], [Hz], [B]), then latency, energy, the area proxies (MAC units: peak "
              "MACs per cycle of the host and accelerators summed; on-chip bytes: their sized memory levels) and, "
              "when numerics ran, the largest errors; results.json holds the same table and every record.")


def _summary_section(points: Sequence[dict], keys: Sequence[str], best: int) -> Section:
    """Every point in one table when there are few; else ranges per model x variant and the fastest points."""
    if not points:
        return Section(Heading(2, "Summary"), (Para("No design point finished."),))
    if len(points) <= SUMMARY_MAX_ROWS:
        return Section(Heading(2, "Summary"), (Para(_TIDY_NOTE), _summary_table(points, keys)))
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for p in points:
        groups[(p["model_name"], p["variant"])].append(p)
    rows = []
    for (model, variant), group in groups.items():
        ok = [p for p in group if p["status"] == "ok"]
        failed = str(sum(1 for p in group if p["status"] == "error"))
        infeasible = str(sum(1 for p in group if p["status"] == "infeasible"))
        if not ok:
            rows.append([model, variant, str(len(group)), failed, infeasible, *(["—"] * 6)])
            continue
        lat = [p["latency_us"] for p in ok]
        energy = [p["energy_uj"] for p in ok if p["energy_uj"] is not None] or [None]
        macs = [p["area_macs"] for p in ok if p.get("area_macs") is not None]
        onchip = [p["area_onchip_bytes"] for p in ok if p.get("area_onchip_bytes") is not None]
        rows.append([model, variant, str(len(group)), failed, infeasible, fmt_us(min(lat)), fmt_us(max(lat)),
                     fmt_uj(min(energy)), fmt_uj(max(energy)), _span(macs, _fmt_count) if macs else "—",
                     _span(onchip, _fmt_count) if onchip else "—"])
    ranges_table = make_table(["Model", "Variant", "Points", "Failed", "Infeasible", "Best latency (µs)",
                               "Worst latency (µs)", "Best energy (µJ)", "Worst energy (µJ)", "MAC units",
                               "On-chip (bytes)"], rows, [False, False, *([True] * 9)])
    wanted = set(best_ids(points, best))
    fastest = [p for p in points if p["id"] in wanted]
    fastest.sort(key=lambda p: (p["latency_us"], p["id"]))
    return Section(Heading(2, "Summary"), (
        Para(f"{len(points)} design points, too many to list in report.md: per model and variant, how many ran "
             f"and the range of each objective. {_TIDY_NOTE}"),
        ranges_table,
        Heading(3, f"The {len(fastest)} fastest points"),
        _objectives_table(fastest, keys, interactive=False),
        _every_point_section(points, keys)))


def _every_point_section(points: Sequence[dict], keys: Sequence[str]) -> Section:
    """report.html only, collapsed: the sortable table of every point, or of the HTML_MAX_ROWS fastest."""
    if len(points) <= HTML_MAX_ROWS:
        return Section(Heading(3, f"Every point ({len(points)})"), (_summary_table(points, keys),), open=False,
                       html_only=True)
    # Failed points have no latency: they sort last, so the cut keeps the fastest.
    fastest = sorted(points, key=lambda p: (p["status"] != "ok", p.get("latency_us") or 0.0, p["id"]))
    return Section(Heading(3, f"The {HTML_MAX_ROWS:,} fastest of {len(points):,} points"), (
        Para(f"A page of {len(points):,} rows would not stay usable: this table holds the {HTML_MAX_ROWS:,} fastest; "
             "results.csv holds every point."), _summary_table(fastest[:HTML_MAX_ROWS], keys)), open=False,
        html_only=True)


_FRONT_NAMES = {"energy_uj": "energy", "area_macs": "MAC units", "area_onchip_bytes": "on-chip bytes"}


def _objectives_table(points: Sequence[dict], keys: Sequence[str], *, interactive: bool = True,
                      fronts: dict[str, str] | None = None) -> Table:
    """Points with their swept values and every objective: latency, energy, MAC units, on-chip bytes.

    `fronts` (point id -> the fronts it is on, as text) adds a last column "On the fronts of latency ×".
    """
    rows = [[p["model_name"], p["variant"], *(str(p["sweep"][k]) if k in p["sweep"] else "—" for k in keys),
             fmt_us(p["latency_us"]), fmt_speedup(p["speedup"]), fmt_uj(p["energy_uj"]), _fmt_count(p.get("area_macs")),
             _fmt_count(p.get("area_onchip_bytes")), *([fronts[p["id"]]] if fronts is not None else [])]
            for p in points]
    extra = ["On the fronts of latency ×"] if fronts is not None else []
    return make_table(["Model", "Variant", *keys, "Latency (µs)", "Speed-up", "Energy (µJ)", "MAC units",
                   "On-chip (bytes)", *extra], rows,
                  [False, False, *(False for _ in keys), True, True, True, True, True, *(False for _ in extra)],
                  interactive=interactive)


def _fronts_section(points: Sequence[dict], keys: Sequence[str], fronts: dict[tuple[str, str], list[str]],
                    figures: dict[str, plots.Picture], color: str | None) -> Section | None:
    """The Pareto fronts: per model a plot of every objective pair, and one table of the points on any front."""
    if not any(fronts.values()):
        return None
    by_id = {p["id"]: p for p in points}
    body: list[Block] = [Para(
        "A point is on a front when no other point of the same model is at least as good in both objectives and "
        "better in one (every objective is minimised). Area is two separate proxies: MAC units (the peak MACs per "
        "cycle of the host and the accelerators, summed) and on-chip bytes (their memory levels that have a size). "
        f"The plots show every point in grey and the front coloured by {color or 'variant'}; an axis is "
        f"logarithmic when its values span {plots.PARETO_LOG_SPAN:g}× or more.")]
    body += [Image(path, f"Pareto fronts of {path[len('plots/pareto_'):-len('.png')]}") for path in figures
             if path.startswith("plots/pareto_")]
    # One table of every point on some front, each once, saying which fronts it is on: the three
    # fronts share most of their points, and three tables repeated them.
    on: dict[str, list[str]] = {}
    for (_, y_key), ids in fronts.items():
        for i in ids:
            on.setdefault(i, []).append(_FRONT_NAMES[y_key])
    counts = ", ".join(f"latency × {_FRONT_NAMES[y]}: {len(ids)}" for (_, y), ids in fronts.items())
    unmodelled = sum(1 for p in points if p["status"] == "ok" and p.get("energy_uj") is None)
    if unmodelled:
        counts += (f" ({unmodelled} point{'s' * (unmodelled != 1)} whose energy is not modelled "
                   "(a device without energy.mac) are left out of the latency × energy front)")
    model_rank = {m: k for k, m in enumerate(dict.fromkeys(p["model"] for p in points))}  # the experiment's order
    members = sorted((by_id[i] for i in on), key=lambda p: (model_rank[p["model"]], p["latency_us"], p["id"]))
    rows, note = _cut(members, TABLE_MAX_ROWS, "results.csv")
    body += [Heading(3, f"{len(members)} point{'s' * (len(members) != 1)} on a front"),
             Para(f"Points per front: {counts}."), *note,
             _objectives_table(rows, keys, fronts={p["id"]: ", ".join(on[p["id"]]) for p in rows})]
    return Section(Heading(2, "Pareto fronts"), tuple(body))


# -- partition pictures ------------------------------------------------------------------------------


def build_document(name: str, points: Sequence[PointResult], missing: Sequence[dict], experiment: dict | None,
                   names: Sequence[str], figures: dict[str, plots.Picture], shown: Sequence[int],
                   fronts: dict[tuple[str, str], list[str]], traced: bool, n_traced: int = 0) -> list[Block]:
    """The report's blocks in reading order; `figures` decides which images appear.

    `points` and `missing` are in report order with their sweeps in key order (as write_report
    passes them); `experiment` may give that order (see Order.of), `best` and `pareto_color`.
    `shown` indexes the points shown in detail, `fronts` holds each objective pair's front ids
    (pareto.front_ids), and `traced` says the shown points are (up to DETAIL_MAX of) the
    `n_traced` traced points (fronts and fastest) rather than each model x variant's first and
    last point.
    """
    order = Order.of(experiment)
    keys = order.sorted((k for p in points for k in p["sweep"]), "keys")
    best = (experiment or {}).get("best", DEFAULT_BEST)
    blocks: list[Block] = [Heading(1, f"accelsim report: {name}"),
                           Para(_summary_paragraph(name, points, missing, experiment, order),
                                links=((WHAT_TO_CHANGE, WHAT_TO_CHANGE_ANCHOR),)),
                           _summary_section(points, keys, best)]
    front_section = _fronts_section(points, keys, fronts, figures, color_key(experiment, keys))
    if front_section is not None:
        blocks.append(front_section)
    if "plots/breakdown.png" in figures:
        n_ok = sum(1 for p in points if p["status"] == "ok")
        n_bars = len(breakdown_points(points, shown))
        where = "the summary table" if len(points) <= SUMMARY_MAX_ROWS else "results.csv"
        subset = (f" It shows the {n_bars} points shown in detail below; all {n_ok} are in {where}."
                  if n_bars < n_ok else "")
        blocks.append(Section(Heading(2, "Latency breakdown"), (
            Para("Busy time by kind, summed over host, accelerators and links (it exceeds the end-to-end "
                 f"latency, the black mark, where resources overlap).{subset}"),
            Image("plots/breakdown.png", "latency breakdown per design point"))))
    sweep_plots = [(k, f"plots/sweep_{slug_of(k)}.png") for k in keys if f"plots/sweep_{slug_of(k)}.png" in figures]
    unplotted = [k for k in keys if f"plots/sweep_{slug_of(k)}.png" not in figures]
    why = (f" No sweep plot for {', '.join(unplotted)}: no two simulated points differ in that key alone, even with "
           "the other keys held at the fastest point's values (a random search, or the other values infeasible); "
           "the Pareto plots show those points." if unplotted else "")
    if sweep_plots:
        blocks.append(Section(Heading(2, "Sweeps"), (
            Para(f"Latency, speed-up over the CPU-only run of the same model (when the experiment has one) and "
                 f"partition overhead against each swept key; a latency or speed-up axis is logarithmic when its "
                 f"values span more than {plots.LOG_SPAN:g}×. In report.html, hovering over a point names it. "
                 f"A key whose other swept values make more than {SWEEP_MAX_LINES} lines (a random search, or "
                 "many swept keys) is drawn with the other keys held at the values of each model × variant's "
                 "fastest point (its title says so); the Pareto plots show every point. Red crosses at the bottom "
                 "edge mark infeasible points (they cannot run the model, or break a limit)." + why),
            *(Image(path, f"latency, speed-up and partition overhead against {key}", figures[path].spots)
              for key, path in sweep_plots))))
    elif keys:  # never silently omitted: say why there is nothing to draw
        blocks.append(Section(Heading(2, "Sweeps"), (Para(
            why.strip() if any(p["status"] == "ok" for p in points) else
            "No sweep plot: no design point was simulated (every point is infeasible, failed or missing; see "
            "below)."),)))
    if shown:
        body: list[Block] = [Para(DETAIL_INTRO)]
        n_ok = sum(1 for p in points if p["status"] == "ok")
        if traced:
            body.append(Para(f"Traced: the points on a Pareto front and the {best} fastest ({n_traced} of {n_ok} "
                             "simulated points); only they have a trace in traces/ and a per-node table in layers/. "
                             + (f"Shown here: {len(shown)} of them, the fastest and others spread evenly in latency. "
                                if len(shown) < n_traced else "")
                             + "Every point is in results.csv and results.json."))
        elif len(shown) < n_ok:
            body.append(Para(f"Swept model × variant pairs are shown at their first and last sweep point only "
                             f"({len(shown)} of {n_ok} simulated points); every point is in "
                             f"{'the summary table, ' if len(points) <= SUMMARY_MAX_ROWS else ''}"
                             "results.json, results.csv, layers/ and traces/."))
        body += [detail_section(points[k], names[k], figures.get(f"plots/gantt_{names[k]}.png"),
                                 figures.get(f"plots/partitions_{names[k]}.png")) for k in shown]
        blocks.append(Section(Heading(2, "Design points in detail"), tuple(body)))
    infeasible = [p for p in points if p["status"] == "infeasible"]
    if infeasible:  # results, not failures: apart from them (accelsim.core.feasibility)
        shown_inf, note = _cut(infeasible, TABLE_MAX_ROWS, "results.csv (status infeasible, with the reason)")
        blocks.append(Section(Heading(2, "Infeasible design points"), (
            Para(f"{summary_line(points)}: the hardware of these points cannot run the model (memory: a level "
                 "too small for the weights or a working set; limits: the experiment's limits; constraints: claim "
                 "constraints refuse every node an accelerator would take). Each line says what to change."), *note,
            make_table(["Model", "Variant", "Sweep", "Reason", "Why"],
                   [[p["model_name"], p["variant"], sweep_text(p["sweep"]) or "—", p.get("infeasible", "memory"),
                     p["error"] or "unknown"] for p in shown_inf], [False] * 5, interactive=True))))
    failed = [p for p in points if p["status"] == "error"]
    if failed:
        shown_failed, note = _cut(failed, TABLE_MAX_ROWS, "results.csv (status error, with the error)")
        blocks.append(Section(Heading(2, "Failed design points"), (*note,
            make_table(["Model", "Variant", "Sweep", "Error"],
                   [[p["model_name"], p["variant"], sweep_text(p["sweep"]) or "—", p["error"] or "unknown"]
                    for p in shown_failed], [False] * 4, interactive=True))))
    if experiment and experiment.get("sensitivity"):
        blocks.append(Section(Heading(2, WHAT_TO_CHANGE, WHAT_TO_CHANGE_ANCHOR), (
            Para("For the fastest point of each model × variant: every design parameter of every device halved "
                 "and doubled (the other values held), ranked by its effect on latency; where the busy time goes "
                 "by bound and per op, with the compute array's utilisation; and what to change first. "
                 "`accelsim sensitivity MODEL --hw ...` prints the same for any design."),
            *(block for s in experiment["sensitivity"] for block in (Heading(3, s["title"]),
                                                                     Pre("\n".join(s["lines"])))))))
    warned = warning_lines(points)
    if warned:
        blocks.append(Section(Heading(2, "Warnings"), (
            Para("What some points' costs rest on that a reader must see beside their numbers (weights that spill "
                 "below the level they were placed on, custom ops the host has no cost of its own for), with the "
                 "number of points each applies to."),
            Pre("\n".join(warned)))))
    blocks += (experiment or {}).get("sections", ())  # e.g. accelsim.reports.streams_section
    if experiment and experiment.get("assumptions"):
        blocks.append(Section(Heading(2, "Assumptions"), (
            Para("Cost numbers the configs leave out take the default `accelsim configs --schema` documents; every "
                 "one used is listed here (keys an experiment sweeps are set at every point and not listed). A "
                 "device without energy.mac has no energy model: its energy is shown as 'not modelled', never 0, "
                 "and is left out of the latency × energy front."),
            Pre("\n".join(experiment["assumptions"])))))
    if missing:
        shown_missing, note = _cut(missing, TABLE_MAX_ROWS, "results.json under missing")
        blocks.append(Section(Heading(2, "Missing design points"), (
            Para(f"{len(missing)} design point{'s' * (len(missing) != 1)} did not finish before the run "
                 f"stopped; run the experiment again to complete {'them' if len(missing) != 1 else 'it'}."), *note,
            make_table(["Model", "Variant", "Sweep", "Id"],
                   [[m["model_name"], m["variant"], sweep_text(m["sweep"]) or "—", m["id"]] for m in shown_missing],
                   [False] * 4))))
    blocks.append(_glossary_section())
    return blocks


def _glossary_section() -> Section:
    """Every column and term once, with its formula and unit (accelsim.core.glossary); HTML headers link here."""
    return Section(Heading(2, "Glossary"), (
        Para("Every column and term of this report, once. In report.html a column heading links here."),
        make_table(GLOSSARY_HEADERS, [[t.name, t.unit or "—", t.formula, t.meaning] for t in TERMS], [False] * 4)))


# -- writing ----------------------------------------------------------------------------------------


def _remove_stale(out: Path, keep: set[Path]) -> None:
    for folder, pattern in _GENERATED:
        directory = out / folder
        if directory.is_dir():
            for f in directory.iterdir():
                if f.is_file() and pattern.match(f.name) and f not in keep:
                    f.unlink()


@dataclass(frozen=True, kw_only=True)
class Page:
    """What every report format is rendered from: the ordered points, the document and its figures."""

    name: str
    points: Sequence[PointResult]
    missing: Sequence[dict[str, Any]]
    blocks: Sequence[Block]
    figures: dict[str, plots.Picture]
    keys: Sequence[str] = ()  # swept keys in the experiment's order

    @functools.cached_property
    def table(self) -> tuple[list[str], list[list[Any]]]:
        """The tidy table of results.csv and results.json, made once for both."""
        return tidy_table(self.points, self.keys)


def _render_md(page: Page) -> bytes:
    return render_markdown(page.blocks).encode()


def _render_html(page: Page) -> bytes:
    images = {rel: f.png for rel, f in page.figures.items()}
    return render_html(page.blocks, f"accelsim report: {page.name}", images).encode()


def _render_json(page: Page) -> bytes:
    return results_json(page.name, page.points, page.missing, page.table).encode()


def _render_csv(page: Page) -> bytes:
    return results_csv(page.points, page.table).encode()


# The report formats: name -> (file written, renderer). An experiment's `reports:` is checked against it, the
# CLI lists what it wrote in this order, and a new format is one entry here (a test adds a toy one).
RENDERERS: dict[str, tuple[str, Callable[[Page], bytes]]] = {
    "md": ("report.md", _render_md),
    "html": ("report.html", _render_html),
    "json": ("results.json", _render_json),
    "csv": ("results.csv", _render_csv),
}


def write_report(out_dir: Path, name: str, records: list[PointResult], *, formats: Sequence[str] | None = None,
                 missing: Sequence[dict] = (), experiment: dict | None = None,
                 traced: Collection[str] | None = None, plots: bool = True) -> dict[str, Path]:
    """Write the report of `records` (accelsim.reports.results records) into `out_dir`.

    Args:
        out_dir: the report folder; created if needed.
        name: the experiment's name (title, results.json).
        records: one record per finished design point, ok or error, in any order.
        formats: which of the RENDERERS to write (None: all); plots come with md or html, traces
            and layer tables always.
        missing: design points that did not finish, each {id, model_name, variant, sweep}.
        experiment: optional {source: experiment file, models: file stems, variants: names,
            sweep_keys: key paths, best: k, pareto_color: swept key}; the lists give the report's
            order (see Order), best how many fastest points the summary lists, pareto_color the key
            colouring the Pareto plots; sections, figures: extra sections (before the assumptions), pictures.
        traced: ids of the points whose timelines are written (Gantt chart, trace, layer table)
            and shown in detail (those of them whose records carry events); None: every ok point
            is traced and each model x variant's first and last point shown in detail.
        plots: draw the plots (the slowest part); an interrupted run's partial report leaves them out.

    Returns:
        What was written: "md", "html", "json", "csv" for those files, and the path relative to
        `out_dir` (e.g. "plots/breakdown.png", "traces/<slug>.json", "layers/<slug>.csv") for every
        plot, trace and layer table.

    Raises:
        ValueError: an unknown format.
    """
    formats = tuple(RENDERERS) if formats is None else formats
    unknown = [f for f in formats if f not in RENDERERS]
    if unknown:
        raise ValueError(f"unknown report formats {unknown}; expected some of {', '.join(RENDERERS)}")
    out = Path(out_dir)
    order = Order.of(experiment)
    # Copies with each sweep in the experiment's key order, which every label and table then follows.
    points = sorted(({**r, "sweep": order.sweep(r["sweep"])} for r in records), key=order.key)
    missing = sorted(({**m, "sweep": order.sweep(m["sweep"])} for m in missing), key=order.key)
    names = slugs(points)
    keys = order.sorted((k for p in points for k in p["sweep"]), "keys")
    if traced is None:
        shown = detailed(points)
        timelines = {k for k, p in enumerate(points) if p["status"] == "ok"}
    else:
        wanted = set(traced)
        timelines = {k for k, p in enumerate(points) if p["id"] in wanted and p["status"] == "ok" and "events" in p}
        shown = detail_subset(points, timelines, (experiment or {}).get("best", DEFAULT_BEST))
    written: dict[str, Path] = {}
    figures: dict[str, plots.Picture] = {}
    fronts: dict[tuple[str, str], list[str]] = {}
    if "md" in formats or "html" in formats:
        fronts = {pair: front_ids(points, *pair) for pair in FRONTS}
        figures = {**all_figures(points, names, shown, keys, fronts, color_key(experiment, keys)),
                   **(experiment or {}).get("figures", {})} if plots else {}
        for rel, picture in figures.items():
            written[rel] = write_atomic(out / rel, picture.png)
    for pid, (p, slug) in enumerate(zip(points, names), start=1):
        if pid - 1 in timelines:
            doc = trace_document(p, pid=pid, label=point_label(p))
            rel = f"traces/{slug}.json"
            written[rel] = write_atomic(out / rel, (json.dumps(doc, sort_keys=True) + "\n").encode())
            rel = f"layers/{slug}.csv"
            written[rel] = write_atomic(out / rel, layers_csv(p))
    blocks = build_document(name, points, missing, experiment, names, figures, shown, fronts, traced is not None,
                            len(timelines))
    page = Page(name=name, points=points, missing=missing, blocks=blocks, figures=figures, keys=keys)
    for fmt, (filename, render) in RENDERERS.items():
        if fmt in formats:
            written[fmt] = write_atomic(out / filename, render(page))
    _remove_stale(out, set(written.values()))
    return written
