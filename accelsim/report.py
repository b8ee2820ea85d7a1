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
    results.csv              one row per design point, accelsim.results.tidy_table: identity, a numeric
                             column per swept key in SI base units ("key [B/s]"), latency, energy, area
                             proxies, numerics errors when any point checked them
    layers/<slug>.csv        one row per node of every traced point, columns accelsim.results.LAYER_COLUMNS
    plots/                   breakdown.png, gantt_<slug>.png (points shown in detail), partitions_<slug>.png
                             (those of them with accelerators: accelsim.partition_plot), sweep_<key>.png,
                             pareto_<model>.png
    traces/<slug>.json       Chrome trace events of every traced point (Perfetto, chrome://tracing)

Traced points: every ok point, or those write_report is given (`traced`: an experiment's
`traces: pareto` passes the Pareto fronts and the best k). At most DETAIL_MAX of them are shown
in detail. Tables that could grow with the point count are cut (SUMMARY_MAX_ROWS, TABLE_MAX_ROWS)
with a sentence saying how many rows there are and which file holds them all, in report.md and
report.html alike, so both stay readable at 100,000 points.

Every number comes from the records (accelsim.results), so the files agree. Models, variants and
sweep keys appear in the experiment file's order when the caller passes it (else alphabetically).
Files are written atomically, and md/json/csv depend only on the inputs (no timestamps): the same
records give the same bytes. Plots, traces and layer tables from an earlier report that this one
does not produce are removed, so the folder never mixes two runs.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import functools
import html
import io
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import accelsim
from accelsim import plots
from accelsim.feasibility import summary_line
from accelsim.files import write_atomic
from accelsim.glossary import TERMS, anchor_for
from accelsim.pareto import DEFAULT_BEST, FRONTS, OBJECTIVES, best_ids, front_ids
from accelsim.partition_plot import partition_png, ranges
from accelsim.record import PointResult
from accelsim.results import LAYER_COLUMNS, layer_rows, tidy_table
from accelsim.trace import trace_document

TOP_BY_TIME = 10  # StatSummarizerOptions' default time_limit: benchmark_model lists the 10 slowest nodes
_LONG_NODE_LIST = 8  # rejected nodes listed one by one up to this many, as index ranges beyond
_LONG_VALUE_LIST = 8  # sweep values listed one by one in the summary up to this many, as a range beyond
BREAKDOWN_MAX_BARS = 40  # more ok points than this: the breakdown chart shows only the points shown in detail
# Readable at any point count: tables beyond these sizes show their first rows and say where the rest is.
SUMMARY_MAX_ROWS = 50  # more points: the summary is ranges per model x variant and the best points
HTML_MAX_ROWS = 1000  # report.html's collapsed, sortable table of every point holds at most this many
TABLE_MAX_ROWS = 50  # rows of a front, failed or missing table
# beyond this many lines (a random search, many keys) a sweep plot holds the other keys at the best point's values
SWEEP_MAX_LINES = 24
_LONG_POINT_LIST = 8  # points named one by one in a sentence
DETAIL_MAX = 20  # traced points shown in detail (with a Gantt chart): the fastest, then spread over the rest
_GENERATED = (("plots", re.compile(r"^(gantt_.+|partitions_.+|sweep_.+|pareto_.+|breakdown)\.png$")),
              ("traces", re.compile(r"^.+\.json$")),
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
    numeric: tuple[bool, ...]  # right-aligned columns, sorted as numbers
    interactive: bool = False  # in HTML: sorts on a click on a heading, with a filter box


@dataclass(frozen=True)
class Pre:
    text: str


@dataclass(frozen=True)
class Image:
    path: str  # relative to the report folder
    alt: str
    spots: tuple[plots.Spot, ...] = ()  # in HTML: points that name themselves on hover


@dataclass(frozen=True)
class Section:
    """A titled part that HTML shows as a collapsible <details>; Markdown shows it unless `html_only`."""

    heading: Heading
    body: tuple[Block, ...]
    open: bool = True
    html_only: bool = False


Block = Heading | Para | Table | Pre | Image | Section


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool], *,
           interactive: bool = False) -> Table:
    return Table(tuple(headers), tuple(tuple(r) for r in rows), tuple(numeric), interactive)


def render_markdown(blocks: Sequence[Block]) -> str:
    """GitHub-flavoured Markdown: padded pipe tables, fenced text blocks, images by relative path."""
    return "\n\n".join(_markdown_blocks(blocks)) + "\n"


def _markdown_blocks(blocks: Sequence[Block]) -> list[str]:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Section):
            if not b.html_only:
                out += _markdown_blocks([b.heading, *b.body])
        elif isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Para):
            out.append(b.text)
        elif isinstance(b, Pre):
            out.append(f"```text\n{b.text}\n```")
        elif isinstance(b, Image):
            out.append(f"![{b.alt}]({b.path})")
        else:
            out.append(_markdown_table(b))
    return out


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
details > summary { cursor: pointer; }
details > summary > h2, details > summary > h3, details > summary > h4 { display: inline-block; margin-bottom: .3em; }
details > summary > h2 { width: calc(100% - 1.5em); }
details > summary > h3 { width: calc(100% - 2.5em); margin-top: 1.2em; }
table { border-collapse: collapse; margin: .8em 0; font-size: 13px; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 3px 9px; vertical-align: top; }
th { background: #eef1f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th.num { text-align: right; }
tbody tr:nth-child(even) { background: #f8f9fa; }
table.interactive th { cursor: pointer; user-select: none; }
table.interactive th::after { content: " \\2195"; color: #8c959f; }
table.interactive th[aria-sort="ascending"]::after { content: " \\25B2"; color: #1f2328; }
table.interactive th[aria-sort="descending"]::after { content: " \\25BC"; color: #1f2328; }
input.filter { font: inherit; font-size: 13px; padding: 2px 6px; margin-top: .5em; width: 22em; }
span.count { font-size: 13px; color: #57606a; margin-left: .8em; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: .8em; overflow-x: auto; font-size: 12px;
      line-height: 1.3; tab-size: 8; }
figure { margin: .5em 0; }
div.plot { position: relative; display: inline-block; max-width: 100%; border: 1px solid #d0d7de; }
div.plot img { display: block; max-width: 100%; height: auto; }
span.spot { position: absolute; width: 16px; height: 16px; margin: -8px 0 0 -8px; border-radius: 50%; cursor: help; }
span.spot:hover, span.spot:focus { outline: 2px solid #1f2328; }
span.spot:hover::after, span.spot:focus::after { content: attr(data-tip); position: absolute; left: 20px; top: -4px;
      white-space: pre; background: #1f2328; color: #fff; padding: 3px 7px; border-radius: 4px; font-size: 12px;
      z-index: 2; pointer-events: none; }
"""

# Sorting and filtering of table.interactive: a click on a heading sorts its rows (numbers as numbers,
# blanks and dashes last; again to reverse), a filter box above hides rows that do not contain its text.
# Rows are moved in one DocumentFragment, so a table of thousands of rows re-renders once per action.
_SCRIPT = """
"use strict";
document.querySelectorAll("table.interactive").forEach(function (table) {
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
  var filter = document.createElement("input");
  filter.type = "search";
  filter.className = "filter";
  filter.placeholder = "filter " + rows.length + " rows";
  filter.setAttribute("aria-label", "filter the rows of the table below");
  var count = document.createElement("span");
  count.className = "count";
  table.parentNode.insertBefore(filter, table);
  table.parentNode.insertBefore(count, table);
  filter.addEventListener("input", function () {
    var q = filter.value.trim().toLowerCase(), shown = 0;
    rows.forEach(function (r, i) { r.hidden = q !== "" && texts[i].indexOf(q) < 0; shown += r.hidden ? 0 : 1; });
    count.textContent = q === "" ? "" : shown + " of " + rows.length + " rows";
  });
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  heads.forEach(function (th, col) {
    th.tabIndex = 0;
    th.title = "sort by this column";
    function sort() {
      var up = th.getAttribute("aria-sort") !== "ascending";
      var numeric = th.classList.contains("num");
      var keys = rows.map(function (r, i) {
        var t = r.cells[col].textContent.trim();
        var n = numeric ? parseFloat(t.replace(/[,\\u00d7%\\s]/g, "")) : NaN;
        return {row: r, i: i, blank: numeric ? isNaN(n) : t === "" || t === "\\u2014", n: n, t: t};
      });
      keys.sort(function (a, b) {
        if (a.blank !== b.blank) { return a.blank ? 1 : -1; }
        var c = a.blank ? 0 : numeric ? a.n - b.n : a.t.localeCompare(b.t, undefined, {numeric: true});
        return (up ? c : -c) || a.i - b.i;
      });
      var fragment = document.createDocumentFragment();
      keys.forEach(function (k) { fragment.appendChild(k.row); });
      body.appendChild(fragment);
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
    });
  });
});
"""


def render_html(blocks: Sequence[Block], title: str, images: dict[str, bytes]) -> str:
    """One self-contained page: inline CSS and script, PNGs embedded as data URIs, nothing fetched."""
    esc = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
           *_html_blocks(blocks, images), f"<script>{_SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


def _html_heading(b: Heading) -> str:
    anchor = f' id="{html.escape(b.anchor)}"' if b.anchor else ""
    return f"<h{b.level}{anchor}>{html.escape(b.text)}</h{b.level}>"


def _html_blocks(blocks: Sequence[Block], images: dict[str, bytes]) -> list[str]:
    esc = html.escape
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Section):
            out += [f"<details{' open' if b.open else ''}>", f"<summary>{_html_heading(b.heading)}</summary>",
                    *_html_blocks(b.body, images), "</details>"]
        elif isinstance(b, Heading):
            out.append(_html_heading(b))
        elif isinstance(b, Para):
            out.append(f"<p>{esc(b.text)}</p>")
        elif isinstance(b, Pre):
            out.append(f"<pre>{esc(b.text)}</pre>")
        elif isinstance(b, Image):
            data = base64.b64encode(images[b.path]).decode("ascii")
            spots = "".join(f'<span class="spot" tabindex="0" style="left:{s.x * 100:.2f}%;top:{s.y * 100:.2f}%" '
                            f'data-tip="{esc(s.label)}" aria-label="{esc(s.label)}"></span>' for s in b.spots)
            out.append(f'<figure><div class="plot"><img src="data:image/png;base64,{data}" alt="{esc(b.alt)}">'
                       f"{spots}</div></figure>")
        else:
            out.append(_html_table(b))
    return out


def _html_table(t: Table) -> str:
    def cls(k: int) -> str:
        return ' class="num"' if t.numeric[k] else ""

    def header(h: str) -> str:  # a term of the glossary links to its definition
        anchor = anchor_for(h)
        return f'<a href="#{anchor}">{html.escape(h)}</a>' if anchor else html.escape(h)

    def row_id(r: Sequence[str]) -> str:  # the glossary's rows are what the headers link to
        anchor = anchor_for(r[0]) if t.headers == GLOSSARY_HEADERS else None
        return f' id="{anchor}"' if anchor else ""

    head = "".join(f"<th{cls(k)}>{header(h)}</th>" for k, h in enumerate(t.headers))
    body = "\n".join(f"<tr{row_id(r)}>" + "".join(f"<td{cls(k)}>{html.escape(c)}</td>" for k, c in enumerate(r))
                     + "</tr>" for r in t.rows)
    table = ' class="interactive"' if t.interactive else ""
    return f"<table{table}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


# -- formatting -------------------------------------------------------------------------------------


def fmt_us(x: float) -> str:
    return f"{x:,.2f}"


NOT_MODELLED = "not modelled"  # an energy no config gives a number for (accelsim.energy): never shown as 0


def fmt_uj(x: float | None) -> str:
    return NOT_MODELLED if x is None else f"{x:,.3f}"


def fmt_pct(x: float) -> str:
    return f"{x:.1f}"


def fmt_speedup(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def sweep_text(sweep: dict[str, Any], sep: str = ", ") -> str:
    """'k1=v1, k2=v2' in the dict's key order (write_report puts it in the experiment's), values as written."""
    return sep.join(f"{k}={v}" for k, v in sweep.items())


def point_label(rec: dict[str, Any], *, short: bool = False) -> str:
    """'model | variant | key=value ...': how a design point is named in a report.

    With `short` (plot labels), a swept key drops its accelerator's name when the variant has only that one.
    """
    accels = rec["accelerators"]

    def key(k: str) -> str:
        head, _, rest = k.partition(".")
        return rest if short and rest and len(accels) == 1 and head == accels[0] else k

    return " | ".join([rec["model_name"], rec["variant"], *(f"{key(k)}={v}" for k, v in rec["sweep"].items())])


def ops_abbrev(ops: Iterable[str]) -> str:
    """Op types with counts, most frequent first (ties in first-seen order): 'CONV_2D×12, ADD×3, MEAN'."""
    counts = Counter(ops)  # keeps first-seen order, and sorted() is stable
    ordered = sorted(counts, key=lambda op: -counts[op])
    return ", ".join(op if counts[op] == 1 else f"{op}×{counts[op]}" for op in ordered)


# -- ordering, names, selection ---------------------------------------------------------------------


def _value_key(value: Any) -> tuple:
    number = plots.sweep_number(value)
    return (0, number[0], str(value)) if number is not None else (1, 0.0, str(value))


@dataclass(frozen=True)
class Order:
    """The experiment file's order of models (file stems), variants and sweep keys.

    Names it does not list (or all of them, when no order is given) come after, alphabetically.
    """

    models: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    @classmethod
    def of(cls, experiment: dict | None) -> Order:
        """The order an experiment dict gives under "models", "variants" and "sweep_keys"."""
        experiment = experiment or {}
        return cls(*(tuple(experiment.get(k, ())) for k in ("models", "variants", "sweep_keys")))

    @staticmethod
    def _rank(listed: tuple[str, ...], name: str) -> tuple[int, str]:
        return (listed.index(name) if name in listed else len(listed)), name

    def sorted(self, names: Iterable[str], kind: str) -> list[str]:
        """Distinct `names` of one kind ("models", "variants" or "keys") in this order."""
        listed = getattr(self, kind)
        return sorted(set(names), key=lambda n: self._rank(listed, n))

    def sweep(self, sweep: dict[str, Any]) -> dict[str, Any]:
        """The same sweep with its keys in this order."""
        return {k: sweep[k] for k in self.sorted(sweep, "keys")}

    def key(self, rec: dict[str, Any]) -> tuple:
        """Sort key: model, variant, sweep values (numbers compared as numbers) in key order, model path, id."""
        sweep = tuple((self._rank(self.keys, k), _value_key(v)) for k, v in self.sweep(rec["sweep"]).items())
        return (self._rank(self.models, rec["model_name"]), self._rank(self.variants, rec["variant"]), sweep,
                rec.get("model", ""), rec.get("id", ""))


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


def _detail_subset(points: Sequence[dict[str, Any]], indices: Collection[int], best: int) -> list[int]:
    """At most DETAIL_MAX of `indices`: the `best` fastest, then points evenly spaced in latency over the rest.

    A front of a rows x cols sweep can hold hundreds of points; each gets a trace and a layer
    table, but a report of hundreds of detail sections (and Gantt charts) would not be read.
    """
    by_latency = sorted(indices, key=lambda k: (points[k]["latency_us"], points[k]["id"]))
    if len(by_latency) <= DETAIL_MAX:
        return sorted(by_latency)
    head, rest = by_latency[:min(best, DETAIL_MAX)], by_latency[min(best, DETAIL_MAX):]
    take = DETAIL_MAX - len(head)
    spread = [rest[round(i * (len(rest) - 1) / max(take - 1, 1))] for i in range(take)] if take else []
    return sorted({*head, *spread})


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


def _us(ms: float) -> str:
    # The records keep node times to the nanosecond (ms with 6 decimals): µs with 3 decimals shows all of it,
    # where benchmark_model's ms with 4 decimals would print 0.0000 for most nodes of a small model.
    return f"{ms * 1e3:.3f}"


def _profile_row(row: dict[str, Any], cdf: float) -> str:
    where = row["unit"] if row["partition"] is None else f"{row['unit']} partition {row['partition']}"
    return (_field(row["op"], 40) + _field(_us(row["first_ms"]), 9) + _field(_us(row["avg_ms"]), 9)
            + _field(f"{row['pct']:.3f}", 7) + "%" + _field(f"{cdf:.3f}", 7) + "%"
            + _field(str(row["times_called"]), 9) + f"\t[{where}]:{row['node']}")


def _profile_header(title: str) -> list[str]:
    return [f"============================== {title} ==============================",
            _field("[node type]", 40) + _field("[first]", 9) + _field("[avg µs]", 9) + _field("[%]", 8)
            + _field("[cdf%]", 8) + _field("[times called]", 9) + "\t[Name]"]


def op_profile_text(rec: PointResult) -> str:
    """The op profile in benchmark_model's layout: Run Order, Top by Computation Time, Summary by node type.

    The [mem KB] column is left out (nothing is measured). Times are µs with 3 decimals instead of
    benchmark_model's ms with 4: simulated accelerator nodes often take well under a microsecond.
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
              _field("[Node type]", 40) + _field("[count]", 9) + _field("[avg µs]", 10) + _field("[avg %]", 11)
              + _field("[cdf %]", 11) + _field("[times called]", 10)]
    for s in rec["op_summary"]:
        lines.append(_field(s["op"], 40) + _field(str(s["count"]), 9) + _field(_us(s["avg_ms"]), 10)
                     + _field(f"{s['pct']:.3f}", 10) + "%" + _field(f"{s['cdf_pct']:.3f}", 10) + "%"
                     + _field(str(s["times_called"]), 9))
    return "\n".join(lines)


# -- report sections --------------------------------------------------------------------------------


def _values_text(values: Iterable[Any]) -> str:
    """Sweep values in order, or their count and range when there are too many to read."""
    ordered = sorted(values, key=_value_key)
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
        text += (" Infeasible points (hardware that cannot run the model) and why are listed under Infeasible "
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
    text += (" Latencies are simulated microseconds for one inference; speed-up is the CPU-only latency of "
             "the same model and sweep point over the point's latency.")
    return text


def slower_than_host_points(points: Sequence[dict]) -> list[dict]:
    """The ok accelerated points whose latency is above the host-only latency of the same model (speed-up < 1)."""
    return [p for p in points if p["status"] == "ok" and p["accelerators"] and p["speedup"] is not None
            and p["speedup"] < 1]


def slower_sentence(points: Sequence[dict], noun: str, limit: int = _LONG_POINT_LIST) -> str:
    """'delegation makes 3 of 5 accelerated <noun> slower than the host alone: a (0.5×); ...', naming at most
    `limit` points so the sentence stays readable whatever the point count.

    The report and `accelsim run`'s warning both say it with this function.
    """
    slower = slower_than_host_points(points)
    accelerated = sum(1 for p in points if p["status"] == "ok" and p["accelerators"])
    named = "; ".join(f"{point_label(p)} ({fmt_speedup(p['speedup'])})" for p in slower[:limit])
    more = f"; and {len(slower) - limit} more (results.csv)" if len(slower) > limit else ""
    return (f"delegation makes {len(slower)} of {accelerated} accelerated {noun} slower than the host alone: "
            f"{named}{more}")


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
    return _table(headers, rows, [False, False, *(False for _ in keys), True, True, True, True, True, True, True],
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
    ranges_table = _table(["Model", "Variant", "Points", "Failed", "Infeasible", "Best latency (µs)",
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
    return _table(["Model", "Variant", *keys, "Latency (µs)", "Speed-up", "Energy (µJ)", "MAC units",
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


def _partition_choice_blocks(p: dict) -> list[Block]:
    """TFLite's choice of partitions next to the cost-aware one this point ran, with the difference."""
    c = p["partition_choice"]
    kept = ", ".join(f"{unit} partition {k}" for unit, k in c["host_partitions"]) or "none"
    how = "assign: cost" if c["search"].startswith("assign") else "partition policy cost"
    rows = [["TFLite's (every claimed partition, in delegate order)", str(c["tflite_partitions"]),
             fmt_us(c["tflite_latency_us"]), fmt_uj(c["tflite_energy_uj"])],
            [f"cost-aware ({c['objective']}, {c['search']} search): this point", str(p["partitions"]),
             fmt_us(p["latency_us"]), fmt_uj(p["energy_uj"])],
            ["difference (TFLite's minus this)", "", fmt_us(c["saved_us"]), fmt_uj(c["saved_energy_uj"])]]
    return [Heading(4, "Partition choice"),
            Para(f"With {how}, partitions that do not pay for themselves stay on the host (kept on the host: "
                 f"{kept})."),
            _table(["Choice", "Partitions delegated", "Latency (µs)", "Energy (µJ)"], rows,
                   [False, True, True, True])]


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


_LAYER_HEADERS = {"node": "Node", "op": "Op", "unit": "Unit", "partition": "Partition", "time_us": "Time (µs)",
                  "pct": "% of node time", "cdf_pct": "Cumulative %", "macs": "MACs", "cycles": "Cycles",
                  "utilization_pct": "Utilisation (%)", "compute_us": "Compute (µs)", "bound": "Bound",
                  "bytes_per_level": "Bytes per level", "streamed_weight_bytes": "Streamed weights (bytes)",
                  "energy_uj": "Energy (µJ)", "not_delegated_because": "Not delegated because"}


def _layer_table(p: dict) -> Table:
    """Every node of the point, LAYER_COLUMNS (the columns of layers/<slug>.csv), sortable in HTML."""
    rows = layer_rows(p)
    numeric = [bool(rows) and all(isinstance(r[c], (int, float)) or r[c] is None for r in rows)
               and any(isinstance(r[c], (int, float)) for r in rows) for c in LAYER_COLUMNS]
    return _table([_LAYER_HEADERS.get(c, c) for c in LAYER_COLUMNS],
                  [["—" if r[c] is None else _csv_value(r[c]) for c in LAYER_COLUMNS] for r in rows], numeric,
                  interactive=True)


def _detail_section(p: dict, slug: str, gantt: plots.Picture | None, partitions: plots.Picture | None = None,
                    ) -> Section:
    label = point_label(p)
    blocks: list[Block] = [Para(_point_paragraph(p, f"traces/{slug}.json")), _point_table(p)]
    if gantt:
        blocks.append(Image(f"plots/gantt_{slug}.png", f"timeline of {label}"))
    blocks.append(Heading(4, "Partitions"))
    if partitions:
        blocks.append(_partition_image(p, slug))
    if p["partition_table"]:
        blocks.append(_partition_table(p))
    else:
        blocks.append(Para("No delegate partitions: every node ran on the host."))
    if p.get("partition_choice"):
        blocks += _partition_choice_blocks(p)
    if p.get("loops"):
        blocks += [Heading(4, "Loop trip counts"),
                   Para("Control-flow nodes are costed as the nodes of the subgraphs they run times these trips "
                        "(run: counted by an invoke; constant / shape: fixed by the model; branch: the costlier "
                        "IF branch; override / default: set by the experiment)."),
                   _table(["Node", "Op", "Trips", "From"],
                          [[loop["node"], loop["op"], str(loop["trips"]), loop["source"]] for loop in p["loops"]],
                          [False, False, True, False])]
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
    blocks += [Para(f"Per node: layers/{slug}.csv (report.html also shows that table and the op profile in "
                    "benchmark_model's layout)."),
               Section(Heading(4, f"Per node ({p['total_nodes']} nodes)"), (_layer_table(p),), open=False,
                       html_only=True),
               Section(Heading(4, "Op profile (benchmark_model's layout)"), (Pre(op_profile_text(p)),), open=False,
                       html_only=True)]
    return Section(Heading(3, label, slug), tuple(blocks))


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
                                     tuple(p["partition_overhead_pct"] for p in group),
                                     tuple(p["speedup"] for p in group), tuple(point_label(p) for p in group)))
    models = {m for m, _, _ in swept}
    for p in points:
        if p["status"] == "ok" and key not in p["sweep"] and p["model_name"] in models:
            lines.append(plots.SweepLine(p["model_name"], point_label(p, short=True), (), (p["latency_us"],),
                                         (p["partition_overhead_pct"],), (p["speedup"],), (point_label(p),),
                                         flat=True))
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


def _breakdown_points(points: Sequence[dict], shown: Sequence[int]) -> list[dict]:
    """The points of the breakdown chart: every ok point, or those shown in detail when there are too many."""
    ok = [p for p in points if p["status"] == "ok"]
    return ok if len(ok) <= BREAKDOWN_MAX_BARS else [points[k] for k in shown]


def _color_key(experiment: dict | None, keys: Sequence[str]) -> str | None:
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
        figures[f"plots/pareto_{_slug(name)}.png"] = plots.Picture(
            plots.pareto_png(title, panels, color or "variant", colors))
    return figures


def _figures(points: Sequence[dict], names: Sequence[str], shown: Sequence[int], keys: Sequence[str],
             fronts: dict[tuple[str, str], list[str]], color: str | None) -> dict[str, plots.Picture]:
    """Every plot of the report, by path relative to the report folder."""
    figures: dict[str, plots.Picture] = _pareto_figures(points, fronts, color)
    bars = _breakdown_points(points, shown)
    if bars:
        figures["plots/breakdown.png"] = plots.Picture(plots.breakdown_png([
            plots.Bar(point_label(p, short=True), p["compute_us"], p["memory_us"], p["transfer_us"], p["overhead_us"],
                      p["latency_us"], p["speedup"]) for p in bars]))
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
            figures[f"plots/sweep_{_slug(key)}.png"] = plots.sweep_png(key, lines, plots.sweep_axis(key, values),
                                                                       infeasible, title)
    for k in shown:
        p = points[k]
        title = f"{point_label(p)}: one inference, {fmt_us(p['latency_us'])} µs"
        figures[f"plots/gantt_{names[k]}.png"] = plots.Picture(plots.gantt_png(p, title))
    figures.update(_partition_figures(points, names, shown))
    return figures


# -- partition pictures ------------------------------------------------------------------------------


def _partition_figures(points: Sequence[dict], names: Sequence[str], shown: Sequence[int]) -> dict[str, plots.Picture]:
    """plots/partitions_<slug>.png of each point that gets a timeline and has accelerators (CPU-only: all host)."""
    return {f"plots/partitions_{names[k]}.png": plots.Picture(partition_png(
        points[k], f"{point_label(points[k])}: where each node runs, in run order")) for k in shown
        if points[k]["accelerators"]}


def _partition_image(p: dict, slug: str) -> Image:
    return Image(f"plots/partitions_{slug}.png",
                 f"where each node of {point_label(p)} runs, in run order")


_DETAIL_INTRO = (
    "Each point: its totals (compute, transfer and call overhead are busy times summed over resources; "
    "initialization loads the cached parameters once and is not part of the latency; streamed parameters are "
    f"reloaded on every inference), its timeline (events narrower than {plots.MIN_BAR_PX:g} pixels are drawn that "
    "wide; the trace file opens in https://ui.perfetto.dev or chrome://tracing), its delegate partitions, the "
    "nodes the accelerators did not take and why, and the numerics check when the experiment asked for one. "
    "The time of every node is in layers/<point>.csv, and in report.html with the op profile in "
    "benchmark_model's layout (µs; no memory column).")


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
                           Para(_summary_paragraph(name, points, missing, experiment, order)),
                           _summary_section(points, keys, best)]
    front_section = _fronts_section(points, keys, fronts, figures, _color_key(experiment, keys))
    if front_section is not None:
        blocks.append(front_section)
    if "plots/breakdown.png" in figures:
        n_ok = sum(1 for p in points if p["status"] == "ok")
        n_bars = len(_breakdown_points(points, shown))
        where = "the summary table" if len(points) <= SUMMARY_MAX_ROWS else "results.csv"
        subset = (f" It shows the {n_bars} points shown in detail below; all {n_ok} are in {where}."
                  if n_bars < n_ok else "")
        blocks.append(Section(Heading(2, "Latency breakdown"), (
            Para("Busy time by kind, summed over host, accelerators and links (it exceeds the end-to-end "
                 f"latency, the black mark, where resources overlap).{subset}"),
            Image("plots/breakdown.png", "latency breakdown per design point"))))
    sweep_plots = [(k, f"plots/sweep_{_slug(k)}.png") for k in keys if f"plots/sweep_{_slug(k)}.png" in figures]
    unplotted = [k for k in keys if f"plots/sweep_{_slug(k)}.png" not in figures]
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
                 "edge mark infeasible points (hardware that cannot run the model)." + why),
            *(Image(path, f"latency, speed-up and partition overhead against {key}", figures[path].spots)
              for key, path in sweep_plots))))
    elif keys:  # never silently omitted: say why there is nothing to draw
        blocks.append(Section(Heading(2, "Sweeps"), (Para(
            why.strip() if any(p["status"] == "ok" for p in points) else
            "No sweep plot: no design point was simulated (every point is infeasible, failed or missing; see "
            "below)."),)))
    if shown:
        body: list[Block] = [Para(_DETAIL_INTRO)]
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
        body += [_detail_section(points[k], names[k], figures.get(f"plots/gantt_{names[k]}.png"),
                                 figures.get(f"plots/partitions_{names[k]}.png")) for k in shown]
        blocks.append(Section(Heading(2, "Design points in detail"), tuple(body)))
    infeasible = [p for p in points if p["status"] == "infeasible"]
    if infeasible:  # results, not failures: apart from them (accelsim.feasibility)
        shown_inf, note = _cut(infeasible, TABLE_MAX_ROWS, "results.csv (status infeasible, with the reason)")
        blocks.append(Section(Heading(2, "Infeasible design points"), (
            Para(f"{summary_line(points)}: the hardware of these points cannot run the model (memory: a level "
                 "too small for the weights or a working set; limits: the experiment's limits). Each line says "
                 "what to change."), *note,
            _table(["Model", "Variant", "Sweep", "Reason", "Why"],
                   [[p["model_name"], p["variant"], sweep_text(p["sweep"]) or "—", p.get("infeasible", "memory"),
                     p["error"] or "unknown"] for p in shown_inf], [False] * 5, interactive=True))))
    failed = [p for p in points if p["status"] == "error"]
    if failed:
        shown_failed, note = _cut(failed, TABLE_MAX_ROWS, "results.csv (status error, with the error)")
        blocks.append(Section(Heading(2, "Failed design points"), (*note,
            _table(["Model", "Variant", "Sweep", "Error"],
                   [[p["model_name"], p["variant"], sweep_text(p["sweep"]) or "—", p["error"] or "unknown"]
                    for p in shown_failed], [False] * 4, interactive=True))))
    if experiment and experiment.get("sensitivity"):
        blocks.append(Section(Heading(2, "What to change: sensitivity and bottlenecks"), (
            Para("For the fastest point of each model × variant: every design parameter of every device halved "
                 "and doubled (the other values held), ranked by its effect on latency; where the busy time goes "
                 "by bound and per op, with the compute array's utilisation; and what to change first. "
                 "`accelsim sensitivity MODEL --hw ...` prints the same for any design."),
            *(block for s in experiment["sensitivity"] for block in (Heading(3, s["title"]),
                                                                     Pre("\n".join(s["lines"])))))))
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
            _table(["Model", "Variant", "Sweep", "Id"],
                   [[m["model_name"], m["variant"], sweep_text(m["sweep"]) or "—", m["id"]] for m in shown_missing],
                   [False] * 4))))
    blocks.append(_glossary_section())
    return blocks


GLOSSARY_HEADERS = ("Term", "Unit", "Formula", "Meaning")


def _glossary_section() -> Section:
    """Every column and term once, with its formula and unit (accelsim.glossary); HTML headers link here."""
    return Section(Heading(2, "Glossary"), (
        Para("Every column and term of this report, once. In report.html a column heading links here."),
        _table(GLOSSARY_HEADERS, [[t.name, t.unit or "—", t.formula, t.meaning] for t in TERMS], [False] * 4)))


# -- machine-readable results ---------------------------------------------------------------------


def _json_list(items: Sequence[Any]) -> str:
    # One item per line, each compact: readable, grep-able, and encoded by json's C encoder (which an
    # indent turns off; indenting 100,000 records took most of a report's time).
    if not items:
        return "[]"
    return "[\n" + ",\n".join(json.dumps(i, sort_keys=True, ensure_ascii=False) for i in items) + "\n]"


def results_json(name: str, points: Sequence[PointResult], missing: Sequence[dict],
                 table: tuple[list[str], list[list[Any]]] | None = None) -> str:
    """results.json: every record (sorted), the points that did not finish, and the tidy table of results.csv
    as "columns" (names in order) and "rows" (one list of values per point, null where absent).

    Keys in sorted order, one point (row, missing point) per line.
    """
    columns, rows = table if table is not None else tidy_table(points)
    parts = {"columns": json.dumps(columns, ensure_ascii=False), "experiment": json.dumps(name, ensure_ascii=False),
             "missing": _json_list(missing), "points": _json_list(points), "rows": _json_list(rows),
             "version": json.dumps(accelsim.__version__)}
    return "{\n" + ",\n".join(f"{json.dumps(k)}: {v}" for k, v in parts.items()) + "\n}\n"


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return sweep_text(value, "; ")
    if isinstance(value, (list, tuple)):
        return "+".join(str(v) for v in value)
    return str(value)


def results_csv(points: Sequence[PointResult], table: tuple[list[str], list[list[Any]]] | None = None) -> str:
    """results.csv: accelsim.results.tidy_table of `points` (given, or made with the sweep keys alphabetically)."""
    columns, rows = table if table is not None else tidy_table(points)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([_csv_value(v) for v in row] for row in rows)
    return buf.getvalue()


# -- writing ----------------------------------------------------------------------------------------


def _remove_stale(out: Path, keep: set[Path]) -> None:
    for folder, pattern in _GENERATED:
        directory = out / folder
        if directory.is_dir():
            for f in directory.iterdir():
                if f.is_file() and pattern.match(f.name) and f not in keep:
                    f.unlink()


def layers_csv(rec: PointResult) -> str:
    """layers/<slug>.csv of an ok record: one row per node in run order, accelsim.results.LAYER_COLUMNS."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(LAYER_COLUMNS)
    for row in layer_rows(rec):
        writer.writerow([_csv_value(row[c]) for c in LAYER_COLUMNS])
    return buf.getvalue()


@dataclass(frozen=True)
class _Page:
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


def _render_md(page: _Page) -> bytes:
    return render_markdown(page.blocks).encode()


def _render_html(page: _Page) -> bytes:
    images = {rel: f.png for rel, f in page.figures.items()}
    return render_html(page.blocks, f"accelsim report: {page.name}", images).encode()


def _render_json(page: _Page) -> bytes:
    return results_json(page.name, page.points, page.missing, page.table).encode()


def _render_csv(page: _Page) -> bytes:
    return results_csv(page.points, page.table).encode()


# The report formats: name -> (file written, renderer). An experiment's `reports:` is checked against it.
RENDERERS: dict[str, tuple[str, Callable[[_Page], bytes]]] = {
    "md": ("report.md", _render_md),
    "html": ("report.html", _render_html),
    "json": ("results.json", _render_json),
    "csv": ("results.csv", _render_csv),
}
FORMATS = tuple(RENDERERS)


def write_report(out_dir: Path, name: str, records: list[PointResult], *, formats: Sequence[str] = FORMATS,
                 missing: Sequence[dict] = (), experiment: dict | None = None,
                 traced: Collection[str] | None = None) -> dict[str, Path]:
    """Write the report of `records` (accelsim.results records) into `out_dir`.

    Args:
        out_dir: the report folder; created if needed.
        name: the experiment's name (title, results.json).
        records: one record per finished design point, ok or error, in any order.
        formats: which of md, html, json, csv to write; plots come with md or html, traces and layer
            tables always.
        missing: design points that did not finish, each {id, model_name, variant, sweep}.
        experiment: optional {source: experiment file, models: file stems, variants: names,
            sweep_keys: key paths, best: k, pareto_color: swept key}; the lists give the report's
            order (see Order), best how many fastest points the summary lists, pareto_color the key
            colouring the Pareto plots.
        traced: ids of the points whose timelines are written (Gantt chart, trace, layer table)
            and shown in detail (those of them whose records carry events); None: every ok point
            is traced and each model x variant's first and last point shown in detail.

    Returns:
        What was written: "md", "html", "json", "csv" for those files, and the path relative to
        `out_dir` (e.g. "plots/breakdown.png", "traces/<slug>.json", "layers/<slug>.csv") for every
        plot, trace and layer table.

    Raises:
        ValueError: an unknown format.
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report formats {unknown}; expected some of {', '.join(FORMATS)}")
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
        shown = _detail_subset(points, timelines, (experiment or {}).get("best", DEFAULT_BEST))
    written: dict[str, Path] = {}
    figures: dict[str, plots.Picture] = {}
    fronts: dict[tuple[str, str], list[str]] = {}
    if "md" in formats or "html" in formats:
        fronts = {pair: front_ids(points, *pair) for pair in FRONTS}
        figures = _figures(points, names, shown, keys, fronts, _color_key(experiment, keys))
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
    page = _Page(name, points, missing, blocks, figures, keys)
    for fmt, (filename, render) in RENDERERS.items():
        if fmt in formats:
            written[fmt] = write_atomic(out / filename, render(page))
    _remove_stale(out, set(written.values()))
    return written
