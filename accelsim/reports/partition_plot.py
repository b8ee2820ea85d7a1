"""A picture of how a model was partitioned: its nodes in run order, coloured by where each runs.

Drawn from a design point's record (results.json): a strip of one cell per node that wraps
into rows, so a 250-node model stays legible. Host nodes are grey; each accelerator has a hue
and each of its partitions a shade of it, labelled "P<n>" where it starts. Where a partition
starts and ends, a marker gives the bytes that cross the link (in and out); refused nodes are
hatched and numbered, and the numbers are explained under the strip with the refusal reason
and the nodes it applies to.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from accelsim.reports.plots import _RC, _png, mpl

CELL_CHARS = 11  # characters of an op name that fit a cell (rotated, 5 pt, 0.8 cell high)
PER_ROW = 40  # cells per row: 250 nodes make 7 rows of cells wide enough for a rotated op name
NOTE_CHARS_PER_INCH = 19  # characters of the 6.5 pt notes under the strip that fit an inch, for wrapping
LABEL_CELLS = 3  # a boundary label is about this many cells wide
ROW = 1.9  # height of a row in cell heights: a cell (0.8) plus its labels above and below
HOST_COLOR = "#BBBBBB"
BOUNDARY_NOTE = ("Black bars: partition boundaries. 'Pn in': bytes copied to the device where partition n starts; "
                 "'out': bytes copied back where it ends (no number: shared memory, nothing copied).")
_HUES = ("#4C72B0", "#DD8452", "#55A868", "#8172B3", "#937860", "#DA8BC3")


def ranges(indices: Iterable[int]) -> str:
    """Node indices compactly: [0, 1, 2, 5, 7, 8] -> '0–2, 5, 7–8'."""
    spans = []
    # Consecutive indices share index - position, so each run is one group.
    for _, run in itertools.groupby(enumerate(sorted(set(indices))), key=lambda kv: kv[1] - kv[0]):
        nums = [n for _, n in run]
        spans.append(str(nums[0]) if len(nums) == 1 else f"{nums[0]}–{nums[-1]}")
    return ", ".join(spans)


def op_abbreviations(ops: Sequence[str], fits: int = CELL_CHARS) -> dict[str, str]:
    """What each op is called in a cell: its name when it fits, else its words' initials (DEPTHWISE_CONV_2D ->
    DC2D), numbered when two would read alike; the picture's notes give the key, so no name is cut short."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for op in dict.fromkeys(ops):
        if len(op) <= fits:
            out[op] = op
        else:
            words = [w for w in op.split("_") if w]
            short = "".join(w if w.isdigit() or len(w) <= 2 and w[0].isdigit() else w[0] for w in words)
            candidate, k = short, 2
            while candidate in taken or candidate in ops:
                candidate, k = f"{short}{k}", k + 1
            out[op] = candidate
        taken.add(out[op])
    return out


def _shade(color: str, k: int) -> tuple[float, float, float]:
    """Partition k of a unit: the unit's hue, alternately lighter, so neighbouring partitions stay apart."""
    r, g, b = mpl().colors.to_rgb(color)
    mix = 0.45 * (k % 2) + 0.15 * ((k // 2) % 2)
    return (r + (1 - r) * mix, g + (1 - g) * mix, b + (1 - b) * mix)


def _bytes(n: int) -> str:
    """Bytes for a label one cell wide: 512 B, 3.1 kB, 1.2 MB."""
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _reason_numbers(rejected: Sequence[dict]) -> dict[str, tuple[int, list[int]]]:
    """Each distinct refusal reason: its number (1, 2, ... in order of first node) and its nodes."""
    out: dict[str, tuple[int, list[int]]] = {}
    for r in sorted(rejected, key=lambda r: r["node"]):
        reason = r["reason"] or "not claimed"
        out.setdefault(reason, (len(out) + 1, []))[1].append(r["node"])
    return out


def partition_png(rec: dict[str, Any], title: str, per_row: int = PER_ROW) -> bytes:
    """The record's nodes in run order as wrapped rows of cells coloured by unit and partition (PNG bytes)."""
    nodes = rec["op_profile"]  # run order
    units = list(dict.fromkeys(n["unit"] for n in nodes if n["unit"] != "host"))
    hue = {u: _HUES[k % len(_HUES)] for k, u in enumerate(units)}
    reasons = _reason_numbers(rec.get("rejected", ()))
    number_of = {node: number for number, members in reasons.values() for node in members}
    table = {(p["unit"], p["partition"]): p for p in rec.get("partition_table", ())}
    rows = max(1, math.ceil(len(nodes) / per_row))
    cols = max(1, min(per_row, len(nodes)))
    # a cell is 0.35 in wide; short models get a narrower figure, never one too narrow for the legend
    width = max(9.0, 0.35 * cols + 0.6)
    short = op_abbreviations([n["op"] for n in nodes])
    key_line = ("ops: " + "; ".join(f"{a} = {op}" for op, a in short.items() if a != op)
                if any(a != op for op, a in short.items()) else None)
    notes = "\n".join(textwrap.fill(line, int(width * NOTE_CHARS_PER_INCH), subsequent_indent="    ") for line in (
        BOUNDARY_NOTE, *((key_line,) if key_line else ()),
        *(f"r{number}: {reason} (node{'s' * (len(members) > 1)} {ranges(members)})"
          for reason, (number, members) in reasons.items())))
    notes_height = 0.17 * (notes.count("\n") + 1) + 0.1
    height = 1.1 + ROW * rows + notes_height
    with mpl().rc_context(_RC):
        fig = mpl().figure.Figure(figsize=(width, height), layout="constrained")
        ax = fig.add_subplot()
        last_start = last_end = -LABEL_CELLS  # where the last boundary labels were, in this row
        lifted_start = dropped_end = False
        for i, n in enumerate(nodes):
            x, y = i % per_row, -(i // per_row) * ROW
            if x == 0:
                last_start = last_end = -LABEL_CELLS
            on_host = n["unit"] == "host"
            color = HOST_COLOR if on_host else _shade(hue[n["unit"]], n["partition"])
            ax.add_patch(mpl().patches.Rectangle((x, y), 0.92, 0.8, facecolor=color, edgecolor="white",
                                   hatch="////" if n["node"] in number_of else None, linewidth=0.5))
            ax.text(x + 0.46, y + 0.4, short[n["op"]], rotation=90, ha="center", va="center", fontsize=5)
            ax.text(x + 0.46, y - 0.08, str(n["node"]), ha="center", va="center", fontsize=4.5, color="#444444")
            if n["node"] in number_of:
                ax.text(x + 0.46, y + 0.95, f"r{number_of[n['node']]}", ha="center", va="center", fontsize=5.5,
                        color="#B22222", fontweight="bold")
            previous = nodes[i - 1] if i else None
            following = nodes[i + 1] if i + 1 < len(nodes) else None
            key = (n["unit"], n["partition"])
            if on_host:
                continue
            # labels of boundaries closer than LABEL_CELLS cells alternate between two heights
            if previous is None or (previous["unit"], previous["partition"]) != key:
                ax.plot([x - 0.04, x - 0.04], [y - 0.15, y + 1.05], color="black", linewidth=1.2)
                crossing = table.get(key, {}).get("input_bytes", 0)
                lift = 0.2 * (x - last_start < LABEL_CELLS and not lifted_start)
                lifted_start, last_start = bool(lift), x
                ax.text(x + 0.02, y + 1.1 + lift, f"P{n['partition']}" + (f" in {_bytes(crossing)}" if crossing
                                                                           else ""), ha="left", va="bottom",
                        fontsize=5.5)
            if following is None or (following["unit"], following["partition"]) != key:
                ax.plot([x + 0.96, x + 0.96], [y - 0.15, y + 1.05], color="black", linewidth=1.2)
                crossing = table.get(key, {}).get("output_bytes", 0)
                if crossing:
                    drop = 0.2 * (x - last_end < LABEL_CELLS and not dropped_end)
                    dropped_end, last_end = bool(drop), x
                    ax.text(x + 0.94, y - 0.2 - drop, f"out {_bytes(crossing)}", ha="right", va="top", fontsize=5.5)
        ax.set_xlim(-0.3, cols + 0.2)
        ax.set_ylim(-(rows - 1) * ROW - 0.65, 1.65)
        ax.set_axis_off()
        handles = [mpl().patches.Patch(color=HOST_COLOR, label="host")]
        handles += [mpl().patches.Patch(color=hue[u], label=f"{u} (shades: partitions)") for u in units]
        if reasons:
            handles.append(mpl().patches.Patch(facecolor="white", edgecolor="black", hatch="////",
                                               label="refused (rN below)"))
        fig.legend(handles=handles, loc="outside upper right", ncols=len(handles), frameon=False)
        ax.set_title(title, loc="left")
        fig.text(0.01, 0.005, notes, ha="left", va="bottom", fontsize=6.5)
        share = notes_height / height  # the notes' part of the figure's height
        fig.get_layout_engine().set(rect=(0, share, 1, 1 - share))
        return _png(fig)
