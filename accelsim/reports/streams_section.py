"""The report's Streams section: each design point's stream results, latency over time, utilisation per unit.

An experiment with a `streams:` block (accelsim.workloads.streams) simulates a stream on every design point's
system; `accelsim.experiments.run` passes the outcomes here as `StreamRun`s. The section goes into report.md
and report.html with two figures (plots/streams_latency.png, plots/streams_utilisation.png); streams.json
and streams.csv hold every number, traces/streams_<k>.json each run's first frames (Chrome/Perfetto).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelsim.core.files import write_atomic
from accelsim.core.trace import trace_document
from accelsim.reports import plots
from accelsim.reports.document import Heading as H
from accelsim.reports.document import Image, Para, Pre, Section, make_table
from accelsim.workloads.streams import ASSUMPTIONS, StreamsResult

if TYPE_CHECKING:  # matplotlib itself loads when a figure is drawn (plots.mpl)
    from matplotlib.figure import Figure

MAX_LINES = 8  # runs drawn in each figure (every run is in streams.csv)


@dataclass(frozen=True)
class StreamRun:
    """One design point streamed with one combination of the streams block's swept values."""

    point: str  # the design point's label
    combo: Mapping[str, Any] = field(default_factory=dict)
    result: StreamsResult | None = None
    problem: str = ""  # why it did not run (an infeasible point)

    @property
    def label(self) -> str:
        swept = ", ".join(f"streams.{k}={v}" for k, v in self.combo.items())
        return self.point + (f" | {swept}" if swept else "")


def rows(runs: Sequence[StreamRun]) -> list[dict[str, Any]]:
    """One row per (run, stream): the numbers of streams.csv."""
    out = []
    for r in runs:
        if r.result is None:
            out.append({"point": r.point, **{f"streams.{k}": v for k, v in r.combo.items()}, "problem": r.problem})
            continue
        for s in r.result.streams:
            out.append({"point": r.point, **{f"streams.{k}": v for k, v in r.combo.items()}, "stream": s.name,
                        "mode": r.result.mode, "count": r.result.count, "segmentation": r.result.segmentation,
                        "offered": s.offered, "completed": s.completed, "dropped": s.dropped,
                        "throughput_per_s": s.throughput_per_s, "latency_p50_s": s.latency_p50_s,
                        "latency_p90_s": s.latency_p90_s, "latency_p99_s": s.latency_p99_s,
                        "single_latency_s": s.single_latency_s, "end_to_end_p50_s": s.end_to_end_p50_s,
                        "end_to_end_p99_s": s.end_to_end_p99_s, "bottleneck": r.result.bottleneck})
    return out


def streams_json(runs: Sequence[StreamRun]) -> bytes:
    return (json.dumps([{"point": r.point, "combo": dict(r.combo), "problem": r.problem or None,
                         "result": r.result.to_json() if r.result is not None else None} for r in runs],
                       indent=2, default=str) + "\n").encode()


def streams_csv(runs: Sequence[StreamRun]) -> bytes:
    table = rows(runs)
    headers = list(dict.fromkeys(k for row in table for k in row))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, headers, lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    return buf.getvalue().encode()


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    plots.mpl().backends.backend_agg.FigureCanvasAgg(fig).print_png(buf)
    return buf.getvalue()


def _legend(label: str) -> str:
    """A run's label as a legend shows it: the swept stream keys without their `streams.` prefix (every one has
    it), cut to its last 70 characters, where the swept values are."""
    return label.replace("streams.", "")[-70:]


def latency_png(runs: Sequence[StreamRun]) -> bytes:
    """Each stream's latency (ms) against its frames' arrival time (s), one line per run and stream."""
    with plots.mpl().rc_context({"font.size": 9}):
        fig = plots.mpl().figure.Figure(figsize=(10, 4.2), layout="constrained")
        ax = fig.add_subplot()
        drawn = 0
        for r in runs:
            for s in (r.result.streams if r.result is not None else ()):
                if drawn == MAX_LINES or not s.latencies:
                    continue
                order = sorted(range(len(s.arrivals)), key=s.arrivals.__getitem__)
                ax.plot([s.arrivals[i] for i in order], [s.latencies[i] * 1e3 for i in order], lw=1,
                        marker="." if len(order) < 60 else None, label=_legend(f"{r.label} | {s.name}"))
                drawn += 1
        ax.set_xlabel("frame arrival (s)")
        ax.set_ylabel("latency (ms)")
        ax.set_title("Stream latency over time (arrival to finish, queueing included)")
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=7, loc="upper left")
        return _png(fig)


def utilisation_png(runs: Sequence[StreamRun]) -> bytes:
    """Each unit's utilisation (busy time / simulated time) per run, the bottleneck's bar outlined."""
    shown = [r for r in runs if r.result is not None][:MAX_LINES]
    units = list(dict.fromkeys(u.name for r in shown for u in r.result.units))
    with plots.mpl().rc_context({"font.size": 9}):
        height_in = 1.8 + 0.35 * max(1, len(units)) * max(1, len(shown)) ** 0.5
        fig = plots.mpl().figure.Figure(figsize=(10, height_in), layout="constrained")
        ax = fig.add_subplot()
        height = 0.8 / max(1, len(shown))
        for j, r in enumerate(shown):
            util = {u.name: u.utilization * 100 for u in r.result.units}
            ys = [i + j * height for i in range(len(units))]
            bars = ax.barh(ys, [util.get(u, 0.0) for u in units], height=height, label=_legend(r.label))
            for bar, u in zip(bars, units):
                if u == r.result.bottleneck:
                    bar.set_edgecolor("black")
                    bar.set_linewidth(1.2)
        ax.set_yticks([i + 0.4 - height / 2 for i in range(len(units))], units)
        ax.invert_yaxis()
        ax.set_xlim(0, 105)
        ax.set_xlabel("utilisation (%): busy time / simulated time; outlined: the bottleneck")
        ax.set_title("Utilisation per unit")
        ax.grid(axis="x", alpha=0.3)
        if shown:
            ax.legend(fontsize=7, loc="lower right")
        return _png(fig)


def figures(runs: Sequence[StreamRun]) -> dict[str, plots.Picture]:
    """The section's figures by path relative to the report folder."""
    if not any(r.result is not None for r in runs):
        return {}
    return {"plots/streams_latency.png": plots.Picture(png=latency_png(runs)),
            "plots/streams_utilisation.png": plots.Picture(png=utilisation_png(runs))}


def section(runs: Sequence[StreamRun]) -> Section:
    """The Streams section: a table per stream and per unit, both figures, the assumptions."""
    table = make_table(
        ["Point", "Stream", "Frames done/offered", "Dropped", "Throughput (/s)", "p50 (ms)", "p90 (ms)", "p99 (ms)",
         "Alone (ms)", "Bottleneck"],
        [[r.label, s.name, f"{s.completed}/{s.offered}", str(s.dropped), f"{s.throughput_per_s:.2f}",
          f"{s.latency_p50_s * 1e3:.3f}", f"{s.latency_p90_s * 1e3:.3f}", f"{s.latency_p99_s * 1e3:.3f}",
          f"{s.single_latency_s * 1e3:.3f}", r.result.bottleneck]
         for r in runs if r.result is not None for s in r.result.streams],
        [False, False, True, True, True, True, True, True, True, False], interactive=True)
    units = make_table(
        ["Point", "Unit", "Utilisation", "Busy (ms)", "Queueing (ms)", "MB moved"],
        [[r.label, u.name, f"{u.utilization:.1%}", f"{u.busy_s * 1e3:.3f}", f"{u.queueing_s * 1e3:.3f}",
          f"{u.bytes / 1e6:.2f}"] for r in runs if r.result is not None for u in r.result.units],
        [False, False, True, True, True, True], interactive=True)
    segs = [[r.label, s.name, g.unit, f"{g.first_node}..{g.last_node}", str(len(g.nodes)),
             f"{g.parameter_bytes / 1e6:.2f}", f"{g.cached_bytes / 1e6:.2f}", f"{g.time_s * 1e3:.3f}"]
            for r in runs if r.result is not None for s in r.result.streams for g in s.segments]
    blocks: list = [Para("Each design point's system runs a stream of frames (the experiment's `streams:` block; "
                         "`accelsim stream` does the same for one model): frames overlap on different units, a unit "
                         "runs one step at a time, links and DRAM are shared. Latency is from a frame's arrival to "
                         "its finish, queueing included; 'Alone' is one inference with nothing else running. Every "
                         "number is in streams.csv and streams.json."), table]
    if any(r.result is not None for r in runs):
        blocks += [Image("plots/streams_latency.png", "stream latency over time"),
                   H(3, "Units"), units, Image("plots/streams_utilisation.png", "utilisation per unit")]
    if segs:
        blocks += [H(3, "Pipeline segments"),
                   make_table(["Point", "Stream", "Unit", "Nodes", "Ops", "Parameters (MB)", "Cached (MB)",
                               "Time per frame (ms)"], segs, [False, False, False, False, True, True, True, True])]
    problems = [f"{r.label}: {r.problem}" for r in runs if r.result is None]
    if problems:
        blocks += [H(3, "Not streamed"), Pre("\n".join(problems))]
    blocks += [H(3, "Stream assumptions"), Pre("\n".join(ASSUMPTIONS))]
    return Section(H(2, "Streams"), tuple(blocks))


def write_files(out: Path, runs: Sequence[StreamRun]) -> dict[str, Path]:
    """streams.json, streams.csv and a Chrome trace per run (traces/streams_<k>.json, its first frames)."""
    written = {"streams.json": write_atomic(out / "streams.json", streams_json(runs)),
               "streams.csv": write_atomic(out / "streams.csv", streams_csv(runs))}
    for k, r in enumerate(runs, start=1):
        if r.result is not None:
            rel = f"traces/streams_{k}.json"
            doc = trace_document(r.result.trace_record(r.label), pid=1, label=f"stream: {r.label}")
            written[rel] = write_atomic(out / rel, (json.dumps(doc, sort_keys=True) + "\n").encode())
    return written


def text_lines(result: StreamsResult) -> list[str]:
    """The results as text: each stream, its segments, each unit, the bottleneck."""
    out = [f"mode {result.mode}, {result.count} cop{'y' if result.count == 1 else 'ies'}"
           + (f", segmentation {result.segmentation}" if result.mode == "pipeline" and result.count > 1 else "")
           + f"; simulated {result.makespan_s * 1e3:.3f} ms"]
    for s in result.streams:
        out.append(f"stream {s.name} ({Path(s.model).name}): {s.completed}/{s.offered} frames, {s.dropped} dropped, "
                   f"{s.throughput_per_s:.2f} frames/s; latency p50 {s.latency_p50_s * 1e3:.3f} ms, "
                   f"p90 {s.latency_p90_s * 1e3:.3f} ms, p99 {s.latency_p99_s * 1e3:.3f} ms "
                   f"(one inference alone: {s.single_latency_s * 1e3:.3f} ms)"
                   + (f"; from the source frame p50 {s.end_to_end_p50_s * 1e3:.3f} ms, p99 "
                      f"{s.end_to_end_p99_s * 1e3:.3f} ms" if s.end_to_end_p50_s != s.latency_p50_s else ""))
        for g in s.segments:
            out.append(f"  segment {g.unit}: nodes {g.first_node}..{g.last_node} ({len(g.nodes)} ops), "
                       f"{g.parameter_bytes / 1e6:.2f} MB parameters, {g.cached_bytes / 1e6:.2f} MB cached, "
                       f"{g.time_s * 1e3:.3f} ms per frame")
    width = max((len(u.name) for u in result.units), default=4)
    out.append(f"{'unit':<{width}}  {'util':>6}  {'busy ms':>10}  {'queued ms':>10}  {'MB moved':>9}")
    for u in result.units:
        out.append(f"{u.name:<{width}}  {u.utilization:6.1%}  {u.busy_s * 1e3:10.3f}  {u.queueing_s * 1e3:10.3f}  "
                   f"{u.bytes / 1e6:9.2f}")
    out.append(f"bottleneck: {result.bottleneck}")
    return out
