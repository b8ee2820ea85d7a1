"""Report figures as PNG bytes: a timeline (Gantt) per design point, the latency breakdown, and sweeps.

Figures are drawn on matplotlib's Agg canvas directly (no pyplot, no global backend switch)
inside a fixed rc context, and saved without the "Software" metadata, so the same records
give the same PNG on the same matplotlib and fonts. A sweep plot also says where each of its
data points landed in the image (`Spot`), so that the HTML report can name them on hover.
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from accelsim.core import units
from accelsim.core.trace import resources

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 150
MIN_BAR_PX = 2.0  # narrowest bar drawn on a timeline
_PLOT_SHARE = 0.8  # about how much of a timeline's width the axes get (lane names and legend take the rest)
KIND_COLORS = {"compute": "#4C72B0", "memory": "#55A868", "transfer": "#DD8452", "overhead": "#C44E52",
               "param_load": "#8172B3"}
KIND_NAMES = {"compute": "compute", "memory": "memory stall", "transfer": "transfer", "overhead": "call overhead",
              "param_load": "parameter load"}
_RC = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 11,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "svg.hashsalt": "accelsim",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
}
# Quantities a sweep may be written in, tried in order; their unit sets do not overlap.
_PARSERS = (units.parse_rate, units.parse_size, units.parse_time, units.parse_frequency)
_FLAT_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_UNIT = re.compile(r"^\s*[-+0-9.eE]*\s*(.*?)\s*$")
LOG_SPAN = 30.0  # a y axis whose values span more than this factor is logarithmic, so small models stay visible


@dataclass(frozen=True)
class Spot:
    """Where a data point landed in a figure, as fractions of the image's width and height from its top left."""

    x: float
    y: float
    label: str


@dataclass(frozen=True)
class Picture:
    """A figure as PNG bytes and the data points it shows, for hover labels."""

    png: bytes
    spots: tuple[Spot, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Bar:
    """One design point in the breakdown chart (times in µs)."""

    label: str
    compute_us: float
    memory_us: float  # a node's time beyond its compute, waiting on a memory level
    transfer_us: float
    overhead_us: float
    latency_us: float
    speedup: float | None


def sweep_number(value: Any) -> tuple[float, str] | None:
    """A sweep value as (number in SI units, unit as written), e.g. '40 MB/s' -> (4e7, 'MB/s'); None if not numeric."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value), ""
    if not isinstance(value, str):
        return None
    for parse in _PARSERS:
        try:
            number = float(parse(value))
        except ValueError:
            continue
        return number, _UNIT.match(value).group(1)
    return None


def mpl() -> ModuleType:
    """matplotlib, with the submodules the figures use, imported when the first figure is drawn.

    matplotlib takes about half a second to import, and most commands draw nothing: it is one of the
    modules a function may import (tests/test_layers.py, LAZY_IMPORTS).
    """
    import matplotlib  # lazy: ~0.5 s of start-up, needed only when a figure is drawn (LAZY_IMPORTS)
    import matplotlib.backends.backend_agg  # lazy: as above
    import matplotlib.colors  # lazy: as above
    import matplotlib.figure  # lazy: as above
    import matplotlib.patches  # lazy: as above
    import matplotlib.ticker  # lazy: as above

    return matplotlib


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    mpl().backends.backend_agg.FigureCanvasAgg(fig)
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def gantt_png(record: dict[str, Any], title: str) -> bytes:
    """One lane per resource, one bar per timeline event coloured by kind; x in µs.

    Events narrower than MIN_BAR_PX are drawn that wide so that none disappears; wider ones get
    a thin white edge so that consecutive nodes stay apart. A node bound by a memory level or the
    link (its `node_costs` row: compute time and bound) shows its compute first, then the time it
    waits on memory in the memory colour (hatched when the link bounds it), so a memory-bound
    timeline does not read as compute.
    """
    lanes = resources(record)
    row = {name: k for k, name in enumerate(lanes)}
    events = record["events"]
    span = max([record["latency_us"], *(e["end_us"] for e in events)]) or 1.0
    width_in = 12.0
    us_per_px = span * 1.01 / (width_in * DPI * _PLOT_SHARE)
    with mpl().rc_context(_RC):
        fig = mpl().figure.Figure(figsize=(width_in, 1.6 + 0.55 * len(lanes)), layout="constrained")
        ax = fig.add_subplot()
        costs = {c["node"]: c for c in record.get("node_costs") or ()}
        waited: set[str] = set()
        for e in events:
            width = e["end_us"] - e["start_us"]
            y = row[e["resource"]]
            wide = width >= 3 * MIN_BAR_PX * us_per_px
            ax.barh(y, max(width, MIN_BAR_PX * us_per_px), left=e["start_us"], height=0.7,
                    color=KIND_COLORS.get(e["kind"], "#999999"), edgecolor="white" if wide else "none",
                    linewidth=0.4 if wide else 0)
            cost = costs.get(e["node"]) if e["kind"] == "compute" else None
            if cost is not None and cost["bound"] != "compute" and width > cost["compute_us"]:
                link = cost["bound"] == "link"
                waited.add("link" if link else "memory")
                ax.barh(y, width - cost["compute_us"], left=e["start_us"] + cost["compute_us"], height=0.7,
                        color=KIND_COLORS["memory"], hatch="////" if link else None, edgecolor="white",
                        linewidth=0)
            # Name a bar only where its text fits inside it (about 0.6 em per character at 7 pt).
            if width / us_per_px / DPI * 72 > len(e["label"]) * 7 * 0.6 + 6:
                ax.text(e["start_us"] + width / 2, y, e["label"], ha="center", va="center", fontsize=7,
                        color="white", clip_on=True)
        ax.set_yticks(range(len(lanes)), lanes)
        ax.set_ylim(len(lanes) - 0.5, -0.5)
        ax.set_xlim(0, span * 1.01)
        ax.set_xlabel("time since inference start (µs)")
        ax.grid(axis="y", visible=False)
        kinds = [k for k in KIND_COLORS if any(e["kind"] == k for e in events)]
        handles = [mpl().patches.Patch(color=KIND_COLORS[k], label=KIND_NAMES[k]) for k in kinds]
        if "memory" in waited and "memory" not in kinds:
            handles.append(mpl().patches.Patch(color=KIND_COLORS["memory"], label="memory-bound (a level)"))
        if "link" in waited:
            handles.append(mpl().patches.Patch(facecolor=KIND_COLORS["memory"], edgecolor="white", hatch="////",
                                 label="link-bound (streamed weights)"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), title="kind", frameon=False)
        ax.set_title(title, loc="left")
        return _png(fig)


def breakdown_png(bars: Sequence[Bar]) -> bytes:
    """Stacked bars of compute / memory stall / transfer / call overhead per point, with latency and speed-up."""
    parts = (("compute", "compute_us"), ("memory", "memory_us"), ("transfer", "transfer_us"),
             ("overhead", "overhead_us"))
    with mpl().rc_context(_RC):
        fig = mpl().figure.Figure(figsize=(12, 1.4 + 0.38 * len(bars)), layout="constrained")
        ax = fig.add_subplot()
        ys = range(len(bars))
        left = [0.0] * len(bars)
        for kind, attr in parts:
            widths = [getattr(b, attr) for b in bars]
            ax.barh(ys, widths, left=left, height=0.65, color=KIND_COLORS[kind], label=KIND_NAMES[kind])
            left = [a + w for a, w in zip(left, widths)]
        ax.scatter([b.latency_us for b in bars], ys, marker="|", s=260, color="black", linewidths=1.5,
                   label="end-to-end latency", zorder=3)
        right = max([*left, *(b.latency_us for b in bars), 1.0])
        for y, b, busy in zip(ys, bars, left):
            note = f"{b.latency_us:,.1f} µs" + (f", {b.speedup:.2f}× vs CPU" if b.speedup is not None else "")
            ax.annotate(note, (max(busy, b.latency_us), y), xytext=(6, 0), textcoords="offset points",
                        va="center", fontsize=8)
        ax.set_xlim(0, right * 1.4)
        ax.set_yticks(list(ys), [b.label for b in bars])
        ax.set_ylim(len(bars) - 0.5, -0.5)
        ax.set_xlabel("busy time summed over resources (µs)")
        ax.grid(axis="y", visible=False)
        fig.legend(*ax.get_legend_handles_labels(), loc="outside upper right", ncols=5, frameon=False)
        fig.suptitle("Latency breakdown per design point", x=0.01, ha="left")
        return _png(fig)


@dataclass(frozen=True)
class SweepAxis:
    """Where each swept value sits on the x axis and how the axis is labelled."""

    positions: dict[str, float]  # str(value) -> x
    label: str
    log: bool


def sweep_axis(key: str, values: Sequence[Any]) -> SweepAxis:
    """Numeric values (plain or with a unit) on a numeric axis in the smallest value's unit; others as categories."""
    numbers = [sweep_number(v) for v in values]
    if values and all(n is not None for n in numbers):
        smallest = min(numbers, key=lambda n: n[0])
        unit = smallest[1]
        scale = sweep_number(f"1 {unit}")[0] if unit else 1.0
        positions = {str(v): n[0] / scale for v, n in zip(values, numbers)}
        xs = sorted(positions.values())
        log = xs[0] > 0 and xs[-1] / xs[0] >= 10
        return SweepAxis(positions, f"{key} ({unit})" if unit else key, log)
    ordered = sorted({str(v) for v in values})
    return SweepAxis({v: float(k) for k, v in enumerate(ordered)}, key, False)


@dataclass(frozen=True, kw_only=True)
class SweepLine:
    """One model × variant (× other swept values) across the swept key; `flat` is a point that was not swept.

    `speedup` holds None where the point has no CPU-only baseline; `names` is each point's full
    name for hover labels.
    """

    model: str
    label: str
    values: tuple[Any, ...]
    latency_us: tuple[float, ...]
    overhead_pct: tuple[float, ...]
    speedup: tuple[float | None, ...] = ()
    names: tuple[str, ...] = ()
    flat: bool = False


def _log_worthy(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > LOG_SPAN


def _spots(fig: Figure, placed: Sequence[tuple[Any, float, float, str]]) -> tuple[Spot, ...]:
    """Data points (axes, x, y, label) as fractions of the drawn figure, top left origin."""
    width, height = fig.bbox.width, fig.bbox.height
    out = []
    for ax, x, y, label in placed:
        px, py = ax.transData.transform((x, y))
        out.append(Spot(round(float(px / width), 4), round(float(1 - py / height), 4), label))
    return tuple(out)


def sweep_png(key: str, lines: Sequence[SweepLine], axis: SweepAxis,
              infeasible: Sequence[tuple[Any, str]] = (), title: str | None = None) -> Picture:
    """The sweep figure (see sweep_figure) as a PNG, with where each data point landed in it."""
    with mpl().rc_context(_RC):
        fig, placed = sweep_figure(key, lines, axis, infeasible, title)
        png = _png(fig)  # draws the final layout, which the spots are read from
        return Picture(png, _spots(fig, placed))


def sweep_figure(key: str, lines: Sequence[SweepLine], axis: SweepAxis, infeasible: Sequence[tuple[Any, str]] = (),
                 title: str | None = None) -> tuple[Figure, list[tuple]]:
    """Latency, speed-up vs CPU only (when there is a baseline) and partition overhead % against the swept value.

    Latency and speed-up axes turn logarithmic when their values span more than LOG_SPAN, so a
    fast small model is not flattened against a slow big one. `infeasible` holds (swept value, point
    name) of points whose hardware cannot run the model: a red cross at the latency axis' bottom edge.

    Returns:
        The figure (draw it inside matplotlib.rc_context(_RC), as sweep_png does), and each data
        point as (axes, x, y, hover label).
    """
    has_speedup = any(s is not None for ln in lines for s in ln.speedup)
    fig = mpl().figure.Figure(figsize=(11, 9.5 if has_speedup else 7), dpi=DPI, layout="constrained")
    axes = fig.subplots(3 if has_speedup else 2, 1, sharex=True)
    top, bottom = axes[0], axes[-1]
    middle = axes[1] if has_speedup else None
    models = list(dict.fromkeys(line.model for line in lines))
    palette = mpl().colormaps["tab10" if len(models) <= 10 else "tab20"].colors
    color = {m: palette[k % len(palette)] for k, m in enumerate(models)}
    xs_all = sorted(set(axis.positions.values()))
    swept_seen: dict[str, int] = defaultdict(int)
    flat_seen: dict[str, int] = defaultdict(int)
    placed: list[tuple[Any, float, float, str]] = []
    for line in lines:
        names = line.names or (line.label,) * len(line.latency_us)
        speedups = line.speedup or (None,) * len(line.latency_us)
        # Colour says which model; solid lines with markers are swept, dashed styles are not.
        if line.flat:
            style = _FLAT_STYLES[flat_seen[line.model] % len(_FLAT_STYLES)]
            flat_seen[line.model] += 1
            top.axhline(line.latency_us[0], color=color[line.model], linestyle=style, linewidth=1.2,
                        label=f"{line.label} (not swept)")
            placed.append((top, xs_all[0], line.latency_us[0], _tip(names[0], line.latency_us[0], speedups[0])))
            if middle is not None and speedups[0] is not None:
                middle.axhline(speedups[0], color=color[line.model], linestyle=style, linewidth=1.2)
            continue
        marker = _MARKERS[swept_seen[line.model] % len(_MARKERS)]
        swept_seen[line.model] += 1
        xs = [axis.positions[str(v)] for v in line.values]
        top.plot(xs, line.latency_us, marker=marker, color=color[line.model], label=line.label)
        bottom.plot(xs, line.overhead_pct, marker=marker, color=color[line.model])
        placed += [(top, x, y, _tip(n, y, s)) for x, y, n, s in zip(xs, line.latency_us, names, speedups)]
        if middle is not None and any(s is not None for s in speedups):
            known = [(x, s, n, y) for x, s, n, y in zip(xs, speedups, names, line.latency_us) if s is not None]
            middle.plot([k[0] for k in known], [k[1] for k in known], marker=marker, color=color[line.model])
            placed += [(middle, x, sp, _tip(n, y, sp)) for x, sp, n, y in known]
    if infeasible:
        xs = [axis.positions[str(v)] for v, _ in infeasible]
        # at the bottom edge whatever the scale: they have no latency (axes fraction in y, data in x)
        top.scatter(xs, [0.03] * len(xs), marker="x", s=60, color="#cf222e", linewidths=2,
                    transform=top.get_xaxis_transform(), zorder=5, clip_on=False,
                    label="infeasible (cannot run the model, or over a limit)")
    for ax in axes:
        if axis.log:
            ax.set_xscale("log")
        ax.set_xticks(xs_all)
        ax.minorticks_off()
    labels = {x: v for v, x in axis.positions.items()}
    bottom.set_xticklabels([labels[x] for x in xs_all])
    latencies = [v for ln in lines for v in ln.latency_us]
    top.set_ylabel("end-to-end latency (µs)")
    if _log_worthy(latencies):
        top.set_yscale("log")
        top.set_ylabel("end-to-end latency (µs, log scale)")
    else:
        top.set_ylim(bottom=0)
    if middle is not None:
        speeds = [s for ln in lines for s in ln.speedup if s is not None]
        middle.axhline(1.0, color="black", linewidth=0.8, alpha=0.6)
        middle.set_ylabel("speed-up vs CPU only (×)")
        if _log_worthy([*speeds, 1.0]):
            middle.set_yscale("log")
            middle.set_ylabel("speed-up vs CPU only (×, log scale)")
        else:
            middle.set_ylim(bottom=0)
    bottom.set_ylabel("partition overhead (% of latency)")
    top_pct = max([1.0, *(p for ln in lines if not ln.flat for p in ln.overhead_pct)]) * 1.15
    bottom.set_ylim(-0.03 * top_pct, top_pct)  # a little below 0 so points at 0 % show whole
    bottom.set_xlabel(axis.label)
    top.set_title(title or f"Sweep of {key}", loc="left")
    if len(xs_all) == 1:  # one value: centre it instead of matplotlib's degenerate limits
        bottom.set_xlim(xs_all[0] - 1, xs_all[0] + 1)
    fig.legend(*top.get_legend_handles_labels(), loc="outside right upper", frameon=False)
    return fig, placed


def _tip(name: str, latency_us: float, speedup: float | None) -> str:
    speed = f", {speedup:.2f}× vs CPU only" if speedup is not None else ""
    return f"{name}\n{latency_us:,.2f} µs{speed}"


PARETO_LOG_SPAN = 10.0  # a Pareto axis whose positive values span a decade or more is logarithmic


@dataclass(frozen=True)
class ParetoPanel:
    """One objective pair of a model: every ok point, and the front's points in order of x."""

    x_label: str
    y_label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    front: tuple[int, ...]  # indices into x and y, sorted by x


def pareto_png(title: str, panels: Sequence[ParetoPanel], color_key: str, colors: Sequence[Any]) -> bytes:
    """Side-by-side scatter plots of objective pairs: every point in grey, the front coloured by a swept key.

    Args:
        colors: the colouring value of every point (as written; None where the key is not swept): numeric
            values get a colour bar in the smallest value's unit, others a legend.
    """
    numbers = [sweep_number(c) if c is not None else None for c in colors]
    numeric = any(n is not None for n in numbers) and all(n is not None for n, c in zip(numbers, colors)
                                                          if c is not None)
    with mpl().rc_context(_RC):
        fig = mpl().figure.Figure(figsize=(5.2 * len(panels) + 1.5, 4.6), layout="constrained")
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        mappable = None
        handles: dict[str, Any] = {}
        if numeric:
            unit = min((n for n in numbers if n is not None), key=lambda n: n[0])[1]
            scale = sweep_number(f"1 {unit}")[0] if unit else 1.0
            values = [n[0] / scale if n is not None else None for n in numbers]
            known = [v for v in values if v is not None]
            log = min(known) > 0 and max(known) / min(known) >= PARETO_LOG_SPAN
            norm = (mpl().colors.LogNorm if log else mpl().colors.Normalize)(min(known), max(known))
            bar_label = f"{color_key} ({unit})" if unit else color_key
        else:
            categories = list(dict.fromkeys(str(c) for c in colors if c is not None))
            palette = mpl().colormaps["tab10" if len(categories) <= 10 else "tab20"].colors
            shade = {c: palette[k % len(palette)] for k, c in enumerate(categories)}
        for ax, panel in zip(axes, panels):
            # Every point: small and rasterized, so 100,000 of them draw fast and keep the PNG small
            # (arrays, not tuples: matplotlib converts a long sequence element by element).
            ax.scatter(np.asarray(panel.x, dtype=float), np.asarray(panel.y, dtype=float),
                       s=14 if len(panel.x) < 1000 else 4, color="#8c959f", alpha=0.6,
                       linewidths=0, rasterized=True, label="all points")
            fx = [panel.x[i] for i in panel.front]
            fy = [panel.y[i] for i in panel.front]
            ax.step(fx, fy, where="post", color="#1f2328", linewidth=1.0, alpha=0.7, label="Pareto front")
            unswept = [k for k, i in enumerate(panel.front) if colors[i] is None]
            if unswept:
                ax.scatter([fx[k] for k in unswept], [fy[k] for k in unswept], s=36, color="white",
                           edgecolors="#1f2328", linewidths=1.0, zorder=3, label="front (key not swept)")
            swept = [k for k, i in enumerate(panel.front) if colors[i] is not None]
            if numeric and swept:
                mappable = ax.scatter([fx[k] for k in swept], [fy[k] for k in swept],
                                      c=[values[panel.front[k]] for k in swept], cmap="viridis", norm=norm, s=36,
                                      edgecolors="#1f2328", linewidths=0.6, zorder=4)
            elif swept:
                for k in swept:
                    name = str(colors[panel.front[k]])
                    handles[name] = ax.scatter([fx[k]], [fy[k]], s=36, color=shade[name], edgecolors="#1f2328",
                                               linewidths=0.6, zorder=4, label=name)
            for data, label, axis, set_scale in ((panel.x, panel.x_label, ax.xaxis, ax.set_xscale),
                                                 (panel.y, panel.y_label, ax.yaxis, ax.set_yscale)):
                positive = [v for v in data if v > 0]
                if len(positive) == len(data) and positive and max(positive) / min(positive) >= PARETO_LOG_SPAN:
                    set_scale("log")
                    axis.set_major_locator(mpl().ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
                    axis.set_minor_formatter(mpl().ticker.NullFormatter())
                # Bytes in engineering notation (8.4 MB), other numbers plainly (300, not 3 × 10²).
                axis.set_major_formatter(mpl().ticker.EngFormatter(unit="B") if "bytes" in label
                                         else mpl().ticker.FuncFormatter(lambda v, _: f"{v:,.6g}"))
            log_x, log_y = ax.get_xscale() == "log", ax.get_yscale() == "log"
            ax.set_xlabel(panel.x_label + (", log scale" if log_x else ""))
            ax.set_ylabel(panel.y_label + (", log scale" if log_y else ""))
            ax.set_title(f"{panel.y_label.split(' (')[0]} vs latency: {len(panel.front)} on the front", loc="left")
        # Every panel's entries once: a front point without the colour key (e.g. the CPU alone) may be
        # on one panel's front only.
        seen: dict[str, Any] = {}
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
        keep = [(h, lab) for lab, h in seen.items() if lab not in handles]
        legend = [*keep, *((h, f"{color_key} = {n}") for n, h in handles.items())]
        fig.legend([h for h, _ in legend], [lab for _, lab in legend], loc="outside lower center",
                   ncols=min(len(legend), 6), frameon=False)
        if mappable is not None:
            fig.colorbar(mappable, ax=list(axes), label=f"front coloured by {bar_label}", shrink=0.9)
        fig.suptitle(title, x=0.01, ha="left")
        return _png(fig)
