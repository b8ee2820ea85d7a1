"""Latency reports from design-point records: report.md, report.html, results.json, results.csv, plots, traces.

Layout of `<out_dir>` (normally reports/<experiment>/):

    report.md, report.html   summary, per-point details, rejected nodes, numerics, failures, missing points
    results.json             {"experiment", "points": every record, "missing": points that did not finish}
    results.csv              one row per design point, columns accelsim.results.CSV_COLUMNS
    plots/                   breakdown.png, gantt_<slug>.png (points shown in detail), sweep_<key>.png
    traces/<slug>.json       Chrome trace events of every simulated point (Perfetto, chrome://tracing)
    layers/<slug>.csv        with csv: one row per node of the point, accelsim.results.LAYER_COLUMNS and
                             bytes.<level> for every memory level its nodes used

Every number comes from the records (accelsim.results), so the files agree. Files are written
atomically, and md/json/csv depend only on the inputs (no timestamps): the same records give
the same bytes. Plots and traces from an earlier report that this one does not produce are
removed, so the folder never mixes two runs.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import itertools
import json
import os
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim import plots
from accelsim.results import CSV_COLUMNS, LAYER_COLUMNS
from accelsim.trace import trace_document

FORMATS = ("md", "html", "json", "csv")
TOP_BY_TIME = 10  # StatSummarizerOptions' default time_limit: benchmark_model lists the 10 slowest nodes
_LONG_NODE_LIST = 8  # rejected nodes listed one by one up to this many, as index ranges beyond
_GENERATED = (("plots", re.compile(r"^(gantt_.+|sweep_.+|breakdown)\.png$")), ("traces", re.compile(r"^.+\.json$")),
              ("layers", re.compile(r"^.+\.csv$")))


# -- document model: built once, rendered as Markdown and as HTML ----------------------------------


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]  # right-aligned columns


@dataclass(frozen=True)
class Pre:
    text: str


@dataclass(frozen=True)
class Image:
    path: str  # relative to the report folder
    alt: str


Block = Heading | Para | Table | Pre | Image


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool]) -> Table:
    return Table(tuple(headers), tuple(tuple(r) for r in rows), tuple(numeric))


def render_markdown(blocks: Sequence[Block]) -> str:
    """GitHub-flavoured Markdown: padded pipe tables, fenced text blocks, images by relative path."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Para):
            out.append(b.text)
        elif isinstance(b, Pre):
            out.append(f"```text\n{b.text}\n```")
        elif isinstance(b, Image):
            out.append(f"![{b.alt}]({b.path})")
        else:
            out.append(_markdown_table(b))
    return "\n\n".join(out) + "\n"


def _markdown_table(t: Table) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    rows = [[cell(h) for h in t.headers], *([cell(c) for c in r] for r in t.rows)]
    widths = [max(3, *(len(r[k]) for r in rows)) for k in range(len(t.headers))]
    lines = []
    for i, r in enumerate(rows):
        padded = [c.rjust(w) if t.numeric[k] and i else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))]
        lines.append("| " + " | ".join(padded) + " |")
        if i == 0:
            lines.append("|" + "|".join(("-" * (w + 1) + ":") if n else ("-" * (w + 2))
                                        for w, n in zip(widths, t.numeric)) + "|")
    return "\n".join(lines)


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       max-width: 1400px; margin: 2em auto; padding: 0 1.5em; line-height: 1.45; font-size: 15px; }
h1 { border-bottom: 2px solid #d0d7de; padding-bottom: .3em; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 2em; background: #f6f8fa; padding: .3em .5em; border-left: 4px solid #4C72B0; }
table { border-collapse: collapse; margin: .8em 0; font-size: 13px; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 3px 9px; vertical-align: top; }
th { background: #eef1f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th.num { text-align: right; }
tbody tr:nth-child(even) { background: #f8f9fa; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: .8em; overflow-x: auto; font-size: 12px;
      line-height: 1.3; tab-size: 8; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; margin: .5em 0; }
"""


def render_html(blocks: Sequence[Block], title: str, images: dict[str, bytes]) -> str:
    """One self-contained page: inline CSS, PNGs embedded as data URIs."""
    esc = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{esc(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>"]
    for b in blocks:
        if isinstance(b, Heading):
            anchor = f' id="{esc(b.anchor)}"' if b.anchor else ""
            out.append(f"<h{b.level}{anchor}>{esc(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            out.append(f"<p>{esc(b.text)}</p>")
        elif isinstance(b, Pre):
            out.append(f"<pre>{esc(b.text)}</pre>")
        elif isinstance(b, Image):
            data = base64.b64encode(images[b.path]).decode("ascii")
            out.append(f'<figure><img src="data:image/png;base64,{data}" alt="{esc(b.alt)}"></figure>')
        else:
            out.append(_html_table(b))
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def _html_table(t: Table) -> str:
    def cls(k: int) -> str:
        return ' class="num"' if t.numeric[k] else ""

    head = "".join(f"<th{cls(k)}>{html.escape(h)}</th>" for k, h in enumerate(t.headers))
    body = "\n".join("<tr>" + "".join(f"<td{cls(k)}>{html.escape(c)}</td>" for k, c in enumerate(r)) + "</tr>"
                     for r in t.rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


# -- formatting -------------------------------------------------------------------------------------


def fmt_us(x: float) -> str:
    return f"{x:,.2f}"


def fmt_uj(x: float) -> str:
    return f"{x:,.3f}"


def fmt_pct(x: float) -> str:
    return f"{x:.1f}"


def fmt_speedup(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def sweep_text(sweep: dict[str, Any], sep: str = ", ") -> str:
    """'k1=v1, k2=v2' in key order, values as written."""
    return sep.join(f"{k}={v}" for k, v in sorted(sweep.items()))


def point_label(rec: dict[str, Any], *, short: bool = False) -> str:
    """'model | variant | key=value ...': how a design point is named in a report.

    With `short` (plot labels), a swept key drops its accelerator's name when the variant has only that one.
    """
    accels = rec["accelerators"]

    def key(k: str) -> str:
        head, _, rest = k.partition(".")
        return rest if short and rest and len(accels) == 1 and head == accels[0] else k

    return " | ".join([rec["model_name"], rec["variant"], *(f"{key(k)}={v}" for k, v in sorted(rec["sweep"].items()))])


def ranges(indices: Iterable[int]) -> str:
    """Node indices compactly: [0, 1, 2, 5, 7, 8] -> '0–2, 5, 7–8'."""
    spans = []
    # Consecutive indices share index - position, so each run is one group.
    for _, run in itertools.groupby(enumerate(sorted(set(indices))), key=lambda kv: kv[1] - kv[0]):
        nums = [n for _, n in run]
        spans.append(str(nums[0]) if len(nums) == 1 else f"{nums[0]}–{nums[-1]}")
    return ", ".join(spans)


def ops_abbrev(ops: Iterable[str]) -> str:
    """Op types with counts, most frequent first (ties in first-seen order): 'CONV_2D×12, ADD×3, MEAN'."""
    counts = Counter(ops)  # keeps first-seen order, and sorted() is stable
    ordered = sorted(counts, key=lambda op: -counts[op])
    return ", ".join(op if counts[op] == 1 else f"{op}×{counts[op]}" for op in ordered)


# -- ordering, names, selection ---------------------------------------------------------------------


def _value_key(value: Any) -> tuple:
    number = plots.sweep_number(value)
    return (0, number[0], str(value)) if number is not None else (1, 0.0, str(value))


def sort_key(rec: dict[str, Any]) -> tuple:
    """(model_name, variant, sweep items with numeric values compared as numbers, model path, id)."""
    sweep = tuple((k, _value_key(v)) for k, v in sorted(rec["sweep"].items()))
    return rec["model_name"], rec["variant"], sweep, rec.get("model", ""), rec.get("id", "")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:120] or "point"


def slugs(points: Sequence[dict[str, Any]]) -> list[str]:
    """A file-name-safe, unique name per point: model__variant__key-value...; the id breaks rare ties."""
    out: list[str] = []
    seen: set[str] = set()
    for rec in points:
        base = _slug("__".join([rec["model_name"], rec["variant"],
                                *(f"{k}-{v}" for k, v in sorted(rec["sweep"].items()))]))
        slug = base if base not in seen else f"{base}__{rec['id'][:8]}"
        seen.add(slug)
        out.append(slug)
    return out


def detailed(points: Sequence[dict[str, Any]]) -> list[int]:
    """Indices of the ok points shown in detail: all of a model × variant, or its first and last sweep point."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for k, rec in enumerate(points):
        if rec["status"] == "ok":
            groups[(rec["model_name"], rec["model"], rec["variant"])].append(k)
    chosen = [k for g in groups.values() for k in (g if len(g) <= 2 else (g[0], g[-1]))]
    return sorted(chosen)


# -- benchmark_model's op profile --------------------------------------------------------------------


def _field(text: str, width: int) -> str:
    # stats_calculator.cc InitField: a tab, then the value right-aligned in a fixed width.
    return "\t" + text.rjust(width)


def _profile_row(row: dict[str, Any], cdf: float) -> str:
    where = row["unit"] if row["partition"] is None else f"{row['unit']} partition {row['partition']}"
    return (_field(row["op"], 40) + _field(f"{row['first_ms']:.4f}", 9) + _field(f"{row['avg_ms']:.4f}", 9)
            + _field(f"{row['pct']:.3f}", 7) + "%" + _field(f"{cdf:.3f}", 7) + "%"
            + _field(str(row["times_called"]), 9) + f"\t[{where}]:{row['node']}")


def _profile_header(title: str) -> list[str]:
    return [f"============================== {title} ==============================",
            _field("[node type]", 40) + _field("[first]", 9) + _field("[avg ms]", 9) + _field("[%]", 8)
            + _field("[cdf%]", 8) + _field("[times called]", 9) + "\t[Name]"]


def op_profile_text(rec: dict[str, Any]) -> str:
    """The op profile as benchmark_model prints it: Run Order, Top by Computation Time, Summary by node type.

    The [mem KB] column is left out (nothing is measured); times are ms with 4 decimals, since
    simulated accelerator nodes often take well under a microsecond.
    """
    rows = rec["op_profile"]
    lines = ["Operator-wise Profiling Info for Regular Benchmark Runs:", *_profile_header("Run Order")]
    lines += [_profile_row(r, r["cdf_pct"]) for r in rows]
    lines += ["", *_profile_header("Top by Computation Time")]
    cdf = 0.0
    for r in sorted(rows, key=lambda r: -r["avg_ms"])[:TOP_BY_TIME]:
        cdf += r["pct"]
        lines.append(_profile_row(r, cdf))
    lines += ["", f"Number of nodes executed: {len(rows)}",
              "============================== Summary by node type ==============================",
              _field("[Node type]", 40) + _field("[count]", 9) + _field("[avg ms]", 10) + _field("[avg %]", 11)
              + _field("[cdf %]", 11) + _field("[times called]", 10)]
    for s in rec["op_summary"]:
        lines.append(_field(s["op"], 40) + _field(str(s["count"]), 9) + _field(f"{s['avg_ms']:.4f}", 10)
                     + _field(f"{s['pct']:.3f}", 10) + "%" + _field(f"{s['cdf_pct']:.3f}", 10) + "%"
                     + _field(str(s["times_called"]), 9))
    return "\n".join(lines)


# -- report sections --------------------------------------------------------------------------------


def _names(items: Iterable[str]) -> list[str]:
    return sorted(set(items))


def _summary_paragraph(name: str, points: Sequence[dict], missing: Sequence[dict], experiment: dict | None) -> str:
    everything = [*points, *missing]
    models = _names(p["model_name"] for p in everything)
    variants = _names(p["variant"] for p in everything)
    swept: dict[str, dict[str, Any]] = defaultdict(dict)  # by str(value): values may be lists, not hashable
    for p in everything:
        for k, v in p["sweep"].items():
            swept[k][str(v)] = v
    ok = [p for p in points if p["status"] == "ok"]
    failed = len(points) - len(ok)
    source = f" ({experiment['source']})" if experiment and experiment.get("source") else ""
    text = (f"Experiment {name}{source}: {len(models)} model{'s' * (len(models) != 1)} ({', '.join(models)}) "
            f"on {len(variants)} variant{'s' * (len(variants) != 1)} ({', '.join(variants)})")
    if swept:
        text += ", sweeping " + "; ".join(
            f"{k} over {', '.join(str(v) for v in sorted(vals.values(), key=_value_key))}"
            for k, vals in sorted(swept.items()))
    schedules = _names(p["schedule"] for p in points)
    if schedules and "schedule" not in swept:
        text += f"; schedule {', '.join(schedules)}"
    text += (f". {len(everything)} design points: {len(ok)} simulated, {failed} failed, {len(missing)} missing.")
    if failed:
        text += " Failed points and their errors are listed under Failed design points."
    if missing:
        text += (" The run did not finish: the missing points are listed under Missing design points; "
                 "run the experiment again to complete them (finished points are cached).")
    best = []
    for model in models:
        accelerated = [p for p in ok if p["model_name"] == model and p["accelerators"]]
        if accelerated:
            b = min(accelerated, key=lambda p: (p["latency_us"], sort_key(p)))
            speed = f", speed-up {fmt_speedup(b['speedup'])}" if b["speedup"] is not None else ""
            swept_at = f" at {sweep_text(b['sweep'])}" if b["sweep"] else ""
            best.append(f"{model} on {b['variant']}{swept_at} ({fmt_us(b['latency_us'])} µs{speed})")
    if best:
        text += " Fastest with accelerators: " + "; ".join(best) + "."
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
            numbers = ["error", "—", "—", "—", "—", "—", "—"]
        rows.append([p["model_name"], p["variant"], *sweep, *numbers])
    return _table(headers, rows, [False, False, *(False for _ in keys), True, True, True, True, True, True, True])


def _point_table(p: dict) -> Table:
    """The point's totals in one row: latency, where the time went, what moved."""
    row = [fmt_us(p["latency_us"]), fmt_speedup(p["speedup"]), fmt_us(p["compute_us"]), fmt_us(p["memory_us"]),
           fmt_us(p["transfer_us"]), fmt_us(p["overhead_us"]), fmt_pct(p["partition_overhead_pct"]),
           f"{p['transfer_bytes']:,}", fmt_us(p["init_us"]), f"{p['init_param_bytes']:,}",
           f"{p['streamed_param_bytes']:,}", fmt_uj(p["energy_uj"]), fmt_uj(p["edp_uj_ms"])]
    return _table(["Latency (µs)", "Speed-up", "Compute (µs)", "Memory (µs)", "Transfer (µs)", "Call overhead (µs)",
                   "Partition overhead (%)", "Transfer (bytes)", "Init (µs)", "Cached params (bytes)",
                   "Streamed params (bytes)", "Energy (µJ)", "EDP (µJ·ms)"], [row], [True] * 13)


def _point_paragraph(p: dict, trace: str) -> str:
    nodes = (f"{p['partitions']} partition{'s' * (p['partitions'] != 1)}; {p['delegated_nodes']} of "
             f"{p['total_nodes']} nodes delegated to {', '.join(p['accelerators'])}" if p["accelerators"]
             else f"CPU only: all {p['total_nodes']} nodes on the host")
    util = ", ".join(f"{k} {fmt_pct(v)} %" for k, v in p["utilization_pct"].items())
    return f"{nodes}; {p['schedule']} schedule. Utilization: {util or 'none'}. Trace: {trace}."


def _partition_table(p: dict) -> Table:
    rows = [[str(t["partition"]), t["unit"], f"{ranges(t['nodes'])} ({len(t['nodes'])})", ops_abbrev(t["ops"]),
             fmt_us(t["compute_us"]), fmt_us(t["memory_us"]), fmt_us(t["transfer_us"]), fmt_us(t["overhead_us"]),
             fmt_pct(t["pct_of_latency"]), fmt_uj(t["energy_uj"])] for t in p["partition_table"]]
    return _table(["Partition", "Unit", "Nodes (count)", "Ops", "Compute (µs)", "Memory (µs)", "Transfer (µs)",
                   "Overhead (µs)", "% of latency", "Energy (µJ)"], rows,
                  [True, False, False, False, True, True, True, True, True, True])


def _rejected_table(p: dict) -> Table:
    by_reason: dict[str, list[dict]] = defaultdict(list)
    for r in p["rejected"]:
        by_reason[r["reason"] or "not claimed"].append(r)
    rows = []
    for reason, nodes in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        nodes = sorted(nodes, key=lambda r: r["node"])
        if len(nodes) <= _LONG_NODE_LIST:
            which = ", ".join(f"{r['op']} v{r['version']} #{r['node']}" for r in nodes)
        else:
            which = f"#{ranges(r['node'] for r in nodes)}: {ops_abbrev([r['op'] for r in nodes])}"
        rows.append([reason, str(len(nodes)), which])
    return _table(["Reason", "Nodes", "Which"], rows, [False, True, False])


def _numerics_blocks(p: dict) -> list[Block]:
    n = p["numerics"]
    rows = [[str(o["index"]), o["name"], f"{o['mean_abs_error']:.6g}", f"{o['std_abs_error']:.6g}",
             f"{o['max_abs_error']:.6g}"] for o in n["outputs"]]
    return [Heading(4, "Numerics (inference_diff)"),
            Para(f"{n['runs']} runs of seeded random inputs through the reference interpreter and the delegated "
                 "one; absolute error per output in the output's own units (quantized outputs compare integers)."),
            _table(["Output", "Name", "Avg error", "Std dev", "Max error"], rows, [True, False, True, True, True])]


def _detail_blocks(p: dict, slug: str, gantt: str | None) -> list[Block]:
    blocks: list[Block] = [Heading(3, point_label(p), slug), Para(_point_paragraph(p, f"traces/{slug}.json")),
                           _point_table(p)]
    if gantt:
        blocks.append(Image(gantt, f"timeline of {point_label(p)}"))
    blocks.append(Heading(4, "Partitions"))
    if p["partition_table"]:
        blocks.append(_partition_table(p))
    else:
        blocks.append(Para("No delegate partitions: every node ran on the host."))
    blocks += [Heading(4, "Op profile"), Pre(op_profile_text(p))]
    if p["accelerators"]:
        blocks.append(Heading(4, "Nodes not delegated"))
        if p["rejected"]:
            blocks.append(Para(f"{len(p['rejected'])} of {p['total_nodes']} nodes stayed on the host, "
                               "grouped by the reason the accelerators gave."))
            blocks.append(_rejected_table(p))
        else:
            blocks.append(Para("None: the accelerators took every node."))
    if p.get("numerics"):
        blocks += _numerics_blocks(p)
    return blocks


def _sweep_lines(points: Sequence[dict], key: str) -> list[plots.SweepLine]:
    swept: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        if p["status"] == "ok" and key in p["sweep"]:
            others = {k: v for k, v in p["sweep"].items() if k != key}
            label = point_label({**p, "sweep": others}, short=True)
            swept[(p["model_name"], p["variant"], label)].append(p)
    lines = []
    for (model, _, label), group in swept.items():
        group = sorted(group, key=lambda p: _value_key(p["sweep"][key]))
        lines.append(plots.SweepLine(model, label, tuple(p["sweep"][key] for p in group),
                                     tuple(p["latency_us"] for p in group),
                                     tuple(p["partition_overhead_pct"] for p in group)))
    models = {m for m, _, _ in swept}
    for p in points:
        if p["status"] == "ok" and key not in p["sweep"] and p["model_name"] in models:
            lines.append(plots.SweepLine(p["model_name"], point_label(p, short=True), (), (p["latency_us"],),
                                         (p["partition_overhead_pct"],), flat=True))
    return lines


def _figures(points: Sequence[dict], names: Sequence[str], shown: Sequence[int],
             keys: Sequence[str]) -> dict[str, bytes]:
    """Every plot of the report, by path relative to the report folder."""
    ok = [p for p in points if p["status"] == "ok"]
    figures: dict[str, bytes] = {}
    if ok:
        figures["plots/breakdown.png"] = plots.breakdown_png([
            # node time (compute and memory stalls together) as the chart's compute segment
            plots.Bar(point_label(p, short=True), p["compute_us"] + p["memory_us"], p["transfer_us"], p["overhead_us"],
                      p["latency_us"], p["speedup"]) for p in ok])
    for key in keys:
        lines = _sweep_lines(points, key)
        if any(not ln.flat for ln in lines):
            values = [v for ln in lines for v in ln.values]
            figures[f"plots/sweep_{_slug(key)}.png"] = plots.sweep_png(key, lines, plots.sweep_axis(key, values))
    for k in shown:
        p = points[k]
        title = f"{point_label(p)}: one inference, {fmt_us(p['latency_us'])} µs"
        figures[f"plots/gantt_{names[k]}.png"] = plots.gantt_png(p, title)
    return figures


_DETAIL_INTRO = (
    "Each point: its totals (compute, transfer and call overhead are busy times summed over resources; "
    "initialization loads the cached parameters once and is not part of the latency; streamed parameters are "
    f"reloaded on every inference), its timeline (events narrower than {plots.MIN_BAR_PX:g} pixels are drawn that "
    "wide; the trace file opens in https://ui.perfetto.dev or chrome://tracing), its delegate partitions, the op "
    "profile in benchmark_model's layout (ms; no memory column), the nodes the accelerators did not take and why, "
    "and the numerics check when the experiment asked for one.")


def build_document(name: str, points: Sequence[dict], missing: Sequence[dict], experiment: dict | None,
                   names: Sequence[str], figures: dict[str, bytes]) -> list[Block]:
    """The report's blocks in reading order; `figures` (path -> PNG) decides which images appear."""
    keys = sorted({k for p in points for k in p["sweep"]})
    shown = detailed(points)
    blocks: list[Block] = [Heading(1, f"accelsim report: {name}"),
                           Para(_summary_paragraph(name, points, missing, experiment)),
                           Heading(2, "Summary")]
    if points:
        blocks.append(_summary_table(points, keys))
    else:
        blocks.append(Para("No design point finished."))
    if "plots/breakdown.png" in figures:
        blocks += [Heading(2, "Latency breakdown"),
                   Para("Busy time by kind, summed over host, accelerators and links (it exceeds the end-to-end "
                        "latency, the black mark, where resources overlap)."),
                   Image("plots/breakdown.png", "latency breakdown per design point")]
    sweep_plots = [(k, f"plots/sweep_{_slug(k)}.png") for k in keys if f"plots/sweep_{_slug(k)}.png" in figures]
    if sweep_plots:
        blocks.append(Heading(2, "Sweeps"))
        for key, path in sweep_plots:
            blocks.append(Image(path, f"latency and partition overhead against {key}"))
    if shown:
        blocks += [Heading(2, "Design points in detail"), Para(_DETAIL_INTRO)]
        n_ok = sum(1 for p in points if p["status"] == "ok")
        if len(shown) < n_ok:
            blocks.append(Para(f"Swept model × variant pairs are shown at their first and last sweep point only "
                               f"({len(shown)} of {n_ok} simulated points); every point is in the summary table, "
                               "results.json, results.csv and traces/."))
        for k in shown:
            gantt = f"plots/gantt_{names[k]}.png"
            blocks += _detail_blocks(points[k], names[k], gantt if gantt in figures else None)
    failed = [p for p in points if p["status"] != "ok"]
    if failed:
        blocks += [Heading(2, "Failed design points"),
                   _table(["Model", "Variant", "Sweep", "Error"],
                          [[p["model_name"], p["variant"], sweep_text(p["sweep"]) or "—", p["error"] or "unknown"]
                           for p in failed], [False] * 4)]
    if missing:
        blocks += [Heading(2, "Missing design points"),
                   Para(f"{len(missing)} design point{'s' * (len(missing) != 1)} did not finish before the run "
                        f"stopped; run the experiment again to complete {'them' if len(missing) != 1 else 'it'}."),
                   _table(["Model", "Variant", "Sweep", "Id"],
                          [[m["model_name"], m["variant"], sweep_text(m["sweep"]) or "—", m["id"]] for m in missing],
                          [False] * 4)]
    return blocks


# -- machine-readable results ---------------------------------------------------------------------


def results_json(name: str, points: Sequence[dict], missing: Sequence[dict]) -> str:
    """results.json: every record (sorted), and the points that did not finish."""
    doc = {"experiment": name, "points": list(points), "missing": list(missing)}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return sweep_text(value, "; ")
    if isinstance(value, (list, tuple)):
        return "+".join(str(v) for v in value)
    return str(value)


def results_csv(points: Sequence[dict]) -> str:
    """results.csv: one row per point, accelsim.results.CSV_COLUMNS; lists joined by '+', sweeps as 'k=v; k=v'."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for p in points:
        writer.writerow([_csv_value(p.get(c)) for c in CSV_COLUMNS])
    return buf.getvalue()


def layers_csv(rows: Sequence[dict]) -> str:
    """layers.csv of one point: LAYER_COLUMNS, then bytes.<level> per level in order of first use."""
    levels = list(dict.fromkeys(level for r in rows for level in r["level_bytes"]))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*LAYER_COLUMNS, *(f"bytes.{level}" for level in levels)])
    for r in rows:
        writer.writerow([*(_csv_value(r[c]) for c in LAYER_COLUMNS), *(r["level_bytes"].get(lv, 0) for lv in levels)])
    return buf.getvalue()


# -- writing ----------------------------------------------------------------------------------------


def _write(path: Path, data: bytes) -> Path:
    """Write via a temporary file in the same folder and os.replace, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _remove_stale(out: Path, keep: set[Path]) -> None:
    for folder, pattern in _GENERATED:
        directory = out / folder
        if directory.is_dir():
            for f in directory.iterdir():
                if f.is_file() and pattern.match(f.name) and f not in keep:
                    f.unlink()


def write_report(out_dir: Path, name: str, records: list[dict], *, formats: Sequence[str] = FORMATS,
                 missing: Sequence[dict] = (), experiment: dict | None = None) -> dict[str, Path]:
    """Write the report of `records` (accelsim.results records) into `out_dir`.

    Args:
        out_dir: the report folder; created if needed.
        name: the experiment's name (title, results.json).
        records: one record per finished design point, ok or error, in any order.
        formats: which of md, html, json, csv to write; plots come with md or html, layers files
            with csv, traces always.
        missing: design points that did not finish, each {id, model_name, variant, sweep}.
        experiment: optional {source: experiment file, ...} for the summary.

    Returns:
        What was written: "md", "html", "json", "csv" for those files, and the path relative to
        `out_dir` (e.g. "plots/breakdown.png", "traces/<slug>.json", "layers/<slug>.csv") for every
        plot, trace and layers file.

    Raises:
        ValueError: an unknown format.
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report formats {unknown}; expected some of {', '.join(FORMATS)}")
    out = Path(out_dir)
    points = sorted(records, key=sort_key)
    missing = sorted(missing, key=sort_key)
    names = slugs(points)
    written: dict[str, Path] = {}
    figures: dict[str, bytes] = {}
    if "md" in formats or "html" in formats:
        keys = sorted({k for p in points for k in p["sweep"]})
        figures = _figures(points, names, detailed(points), keys)
        for rel, png in figures.items():
            written[rel] = _write(out / rel, png)
    for pid, (p, slug) in enumerate(zip(points, names), start=1):
        if p["status"] == "ok":
            doc = trace_document(p, pid=pid, label=point_label(p))
            rel = f"traces/{slug}.json"
            written[rel] = _write(out / rel, (json.dumps(doc, sort_keys=True) + "\n").encode())
            if "csv" in formats:
                rel = f"layers/{slug}.csv"
                written[rel] = _write(out / rel, layers_csv(p["layers"]).encode())
    blocks = build_document(name, points, missing, experiment, names, figures)
    if "md" in formats:
        written["md"] = _write(out / "report.md", render_markdown(blocks).encode())
    if "html" in formats:
        page = render_html(blocks, f"accelsim report: {name}", figures)
        written["html"] = _write(out / "report.html", page.encode())
    if "json" in formats:
        written["json"] = _write(out / "results.json", results_json(name, points, missing).encode())
    if "csv" in formats:
        written["csv"] = _write(out / "results.csv", results_csv(points).encode())
    _remove_stale(out, set(written.values()))
    return written
