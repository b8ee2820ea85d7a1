"""The report's document model, built once and rendered as Markdown and as self-contained HTML.

A document is a list of blocks (headings, paragraphs, tables, preformatted text, images, and
sections that HTML collapses); report.md and report.html are two renderings of the same blocks,
so they say the same thing.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from accelsim.core.glossary import GLOSSARY_HEADERS, anchor_for
from accelsim.reports import plots


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Para:
    """A paragraph; each (phrase, anchor) of `links` links the phrase's first occurrence to a heading's anchor."""

    text: str
    links: tuple[tuple[str, str], ...] = ()


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


def make_table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool], *,
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
            text = b.text
            for phrase, anchor in b.links:
                text = text.replace(phrase, f"[{phrase}](#{anchor})", 1)
            out.append(text)
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
            text = esc(b.text)
            for phrase, anchor in b.links:
                text = text.replace(esc(phrase), f'<a href="#{esc(anchor)}">{esc(phrase)}</a>', 1)
            out.append(f"<p>{text}</p>")
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
