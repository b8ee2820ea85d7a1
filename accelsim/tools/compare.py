"""Side by side: the same models on several systems, or the points of several experiments' results.json.

A column ("side") is one system (simulated here) or one (variant, sweep point) of a results.json;
a row is one model. Each metric of a column is also given as its difference from the first
column in percent, and a bar chart draws them. Host-only latency is the baseline every
speed-up is measured against; a point slower than the host alone is said to be so in words.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelsim.core.record import PointResult
from accelsim.core.version import __version__
from accelsim.hardware.config import System
from accelsim.ops import require_kernels
from accelsim.reports.plots import _RC, _png, mpl
from accelsim.reports.results import record, speedup
from accelsim.runtime.errors import AccelsimError
from accelsim.simulation.analysis import simulate_model

# (record key, heading, unit): the quantities compared, in the order shown, named as the report's summary table
# names them ("Latency (µs)", "Speed-up", ...; accelsim.reports.report).
METRICS = (
    ("latency_us", "Latency", "µs"),
    ("speedup", "Speed-up", "×"),
    ("energy_uj", "Energy", "µJ"),
    ("partitions", "Partitions", ""),
    ("delegated_nodes", "Delegated nodes", ""),
    ("transfer_bytes", "Transfer", "bytes"),
)
# What a slower-than-host warning points to, as the report's summary points to its "What to change" section.
WHAT_TO_CHANGE = ("What to change: accelsim sensitivity MODEL --hw ... halves and doubles every design parameter "
                  "and ranks them; accelsim whatif MODEL --hw ... tries every claim line")


WIDTH = 120  # characters the printed comparison fits by default
CELL = 22  # characters of one value with its % difference


def metric_names() -> list[str]:
    """What --metrics accepts: each metric's record key without its unit suffix (latency, energy, ...)."""
    return [_short(key) for key, _, _ in METRICS]


def _short(key: str) -> str:
    return key.removesuffix("_us").removesuffix("_uj")


def select(comparison: Comparison, metrics: Sequence[str] = (), columns: Sequence[str] = ()) -> Comparison:
    """The comparison with only `metrics` (metric_names) and `columns` (indices as printed, or labels).

    Raises:
        ValueError: an unknown metric or column, naming the valid ones.
    """
    if metrics:
        known = {_short(m[0]): m for m in comparison.metrics}
        unknown = [m for m in metrics if m not in known]
        if unknown:
            raise ValueError(f"--metrics {','.join(unknown)}: not a metric of this comparison; choose from "
                             f"{', '.join(known)}")
        comparison = dataclasses.replace(comparison, metrics=tuple(known[m] for m in metrics))
    if columns:
        labels = [s.label for s in comparison.sides]
        chosen = []
        for c in columns:
            k = int(c) if c.isdigit() else (labels.index(c) if c in labels else None)
            if k is None or not 0 <= k < len(labels):
                raise ValueError(f"--columns {c}: no such column; give indices 0-{len(labels) - 1} or labels: "
                                 + "; ".join(labels))
            chosen.append(k)
        sides = tuple(comparison.sides[k] for k in chosen)  # the notes speak of the columns shown only
        comparison = dataclasses.replace(comparison, sides=sides, notes=_notes(sides, comparison.models))
    return comparison


def host_only(system: System) -> System:
    """The same host with no accelerator attached: the baseline of every speed-up."""
    return System(system.host, ())


def slower_than_host(label: str, latency_us: float, host_us: float) -> str | None:
    """A sentence warning that delegation made `label` slower than the host alone, or None when it did not."""
    if not host_us or latency_us <= host_us:
        return None
    return (f"delegation makes {label} slower than the host alone: {latency_us:,.1f} µs against "
            f"{host_us:,.1f} µs host-only ({speedup(host_us, latency_us):.2f}×)")


@dataclass(frozen=True)
class Side:
    """One column: a label, where it came from, its ok records by model name, and the models that failed on it."""

    label: str
    source: str
    version: str | None  # accelsim version that produced the records (None: not recorded)
    records: Mapping[str, PointResult]
    failed: Mapping[str, str] = field(default_factory=dict)  # model name -> its error, one line


@dataclass(frozen=True)
class Cell:
    value: float | None
    pct: float | None  # difference from the first column in percent (None in the first column or without a value)


@dataclass(frozen=True)
class Comparison:
    """Every side, the models in the order first seen, the metrics any record has, and notes in words."""

    sides: tuple[Side, ...]
    models: tuple[str, ...]
    metrics: tuple[tuple[str, str, str], ...]
    notes: tuple[str, ...]  # each begins with "Note:", "Error:", "Warning:" or "What to change:", as the report's

    def cell(self, model: str, side: int, key: str) -> Cell:
        value = _value(self.sides[side].records.get(model), key)
        first = _value(self.sides[0].records.get(model), key)
        pct = None if side == 0 or value is None or not first else 100 * (value - first) / first
        return Cell(value, pct)

    def as_dict(self) -> dict[str, Any]:
        """The comparison as plain data (the --json output)."""
        return {"columns": [{"label": s.label, "source": s.source, "version": s.version} for s in self.sides],
                "models": [{"model": m, **{key: [vars(self.cell(m, k, key)) for k in range(len(self.sides))]
                                           for key, _, _ in self.metrics}} for m in self.models],
                "failed": [{"column": s.label, "model": m, "error": e}
                           for s in self.sides for m, e in s.failed.items()],
                "notes": list(self.notes)}

    def lines(self, width: int = WIDTH) -> list[str]:
        """One table per model: a row per metric, a column per side, each with its % difference from the first.

        Columns that would pass `width` characters go to a further table of the same model (the % stay
        against the first column), so the output fits a terminal.
        """
        out = [line for k, s in enumerate(self.sides)
               for line in textwrap.wrap(f"[{k}] {s.label}", width, subsequent_indent="    ")]
        name_width = max(len(_label(h, u)) for _, h, u in self.metrics)
        per_block = max(1, (width - name_width - 2) // (CELL + 2))
        for m in self.models:
            for start in range(0, len(self.sides), per_block):
                block = range(start, min(start + per_block, len(self.sides)))
                out.append(f"{m}:" + ("" if len(self.sides) <= per_block else
                                      f" columns [{block[0]}]-[{block[-1]}]"))
                out.append(f"  {'':<{name_width}}  " + "  ".join(f"{f'[{k}]':>{CELL}}" for k in block))
                for key, heading, unit in self.metrics:
                    name = _label(heading, unit)
                    cells = [self.cell(m, k, key) for k in block]
                    out.append(f"  {name:<{name_width}}  " + "  ".join(f"{_fmt(c, unit):>{CELL}}" for c in cells))
        out += [line for note in self.notes for line in textwrap.wrap(note, width, subsequent_indent="  ")]
        return out


def _label(heading: str, unit: str) -> str:
    """A metric's row label as the report's column headers write it: 'Latency (µs)', 'Speed-up' (no unit for ×)."""
    return f"{heading} ({unit})" if unit and unit != "×" else heading


def _value(rec: PointResult | None, key: str) -> float | None:
    if rec is None or rec.get(key) is None:
        return None
    return float(rec[key])


def _fmt(c: Cell, unit: str) -> str:
    if c.value is None:
        return "—"
    text = f"{c.value:.2f}×" if unit == "×" else f"{c.value:,.1f}" if unit in ("µs", "µJ") else f"{c.value:,.0f}"
    return text + (f" ({c.pct:+.1f}%)" if c.pct is not None else "")


def compare(sides: Sequence[Side]) -> Comparison:
    """Line the sides up by model, and say in words what makes them not comparable or a point worse than the host.

    Raises:
        ValueError: fewer than two sides.
    """
    if len(sides) < 2:
        raise ValueError(f"compare needs two or more columns (--hw given twice or more, or two results.json), "
                         f"got {len(sides)}")
    labels = Counter(s.label for s in sides)
    # two experiments of the same name (or one file given twice): tell their columns apart by file
    sides = [dataclasses.replace(s, label=f"{s.source}: {s.label}") if labels[s.label] > 1 else s for s in sides]
    models = tuple(dict.fromkeys(m for s in sides for m in s.records))
    metrics = tuple(m for m in METRICS if any(r.get(m[0]) is not None for s in sides for r in s.records.values()))
    return Comparison(tuple(sides), models, metrics, _notes(sides, models))


def _notes(sides: Sequence[Side], models: Sequence[str]) -> tuple[str, ...]:
    """What makes `sides` not comparable, or a point of theirs worse than the host, in words."""
    notes = []
    versions = {s.version for s in sides}
    if len(versions) > 1:
        notes.append("Note: the columns come from different accelsim versions ("
                     + ", ".join(f"{s.label}: {s.version or 'not recorded'}" for s in sides)
                     + "); cost models may have changed between them")
    failed_models = dict.fromkeys(m for s in sides for m in s.failed)
    for m in failed_models:
        errors = {s.label: s.failed[m] for s in sides if m in s.failed}
        if len(errors) == len(sides) and len(set(errors.values())) == 1:
            notes.append(f"Error: {m} failed on every column and is left out: {next(iter(errors.values()))}")
        else:
            notes.extend(f"Error: {m} failed on {label} and is left out there: {e}" for label, e in errors.items())
    for s in sides:
        missing = [m for m in models if m not in s.records and m not in s.failed]
        if missing:
            notes.append(f"Note: {s.label} has no result for {', '.join(missing)}: the columns ran different models")
    unmodelled = Counter(device for s in sides for rec in s.records.values()
                         for device in rec.get("energy_not_modelled") or ())
    n_results = sum(len(s.records) for s in sides)
    notes += [f"Note: energy is not modelled for {device} (no energy.mac) in {n} of {n_results} results: those "
              "energies are left out, not compared as 0" for device, n in unmodelled.items()]
    for s in sides:
        for m, rec in s.records.items():
            speedup = rec.get("speedup")
            if rec.get("accelerators") and speedup is not None and speedup < 1:
                notes.append(f"Warning: delegation makes {m} on {s.label} slower than the host alone "
                             f"({speedup:.2f}×)")
    if any(n.startswith("Warning: delegation makes") for n in notes):
        notes.append(WHAT_TO_CHANGE)
    return tuple(notes)


def load_results(path: str | Path) -> list[Side]:
    """One side per (variant, sweep point, schedule) of a results.json, each with its ok records by model.

    Raises:
        ValueError: the file is not a results.json written by `accelsim run`.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc}); give a results.json written by accelsim run") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
        raise ValueError(f"{path}: not an accelsim results.json (it has no 'points' list)")
    name = doc.get("experiment") or path.parent.name
    groups: dict[str, dict[str, PointResult]] = {}
    for rec in doc["points"]:
        if rec.get("status") != "ok":
            continue
        sweep = ", ".join(f"{k}={v}" for k, v in rec.get("sweep", {}).items())
        label = f"{name}: {rec['variant']}" + (f" [{sweep}]" if sweep else "") + (
            f" ({rec['schedule']})" if rec.get("schedule") != "sequential" else "")
        groups.setdefault(label, {})[rec["model_name"]] = rec
    if not groups:
        raise ValueError(f"{path}: no successful design point to compare")
    return [Side(label, str(path), doc.get("version"), recs) for label, recs in groups.items()]


def simulate_sides(models: Sequence[str], systems: Sequence[tuple[str, System]], schedule: str = "sequential",
                   loops=None) -> list[Side]:
    """One side per (label, system): every model simulated on it, with its speed-up over the host alone.

    A model that fails (a custom op without a kernel, a node without a work model, a loop without a
    trip count, a corrupt file) is named with its one-line error in the side's `failed`; the other
    models are still simulated.

    Raises:
        OpResolutionError, WorkError, ModelError: the first model's error, when no model ran on any side.
    """
    irs, broken, errors = {}, {}, []
    for m in models:
        try:
            irs[m] = require_kernels(m)
        except (AccelsimError, ValueError, OSError) as exc:
            broken[Path(m).stem] = _one_line(exc)
            errors.append(exc)
    baselines: dict[tuple[str, str], float] = {}
    sides = []
    for label, system in systems:
        recs, failed = {}, dict(broken)
        for m, ir in irs.items():
            key = (m, system.host.name)
            try:
                if key not in baselines:
                    baselines[key] = simulate_model(ir, host_only(system), schedule, loops).latency
                sim = simulate_model(ir, system, schedule, loops)
            except (AccelsimError, ValueError) as exc:
                failed[Path(m).stem] = _one_line(exc)
                errors.append(exc)
                continue
            rec = record(sim, point_id="", model=m, variant=label, sweep={})
            rec["speedup"] = speedup(baselines[key], sim.latency) if system.accelerators else None
            recs[Path(m).stem] = rec
        sides.append(Side(label, "simulated", __version__, recs, failed))
    if errors and not any(s.records for s in sides):
        raise errors[0]
    return sides


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def chart_png(comparison: Comparison) -> bytes:
    """Grouped bars: one panel per metric, a group per model, a bar per column (its value labelled)."""
    metrics = [m for m in comparison.metrics if m[0] != "speedup"]
    n_models, n_sides = len(comparison.models), len(comparison.sides)
    with mpl().rc_context(_RC):
        fig = mpl().figure.Figure(figsize=(max(8.0, 1.2 + n_models * n_sides * 0.5), 1.0 + 2.4 * len(metrics)),
                     layout="constrained")
        axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
        width = 0.8 / n_sides
        for ax, (key, heading, unit) in zip(axes, metrics):
            for k, side in enumerate(comparison.sides):
                xs = [i + (k - (n_sides - 1) / 2) * width for i in range(n_models)]
                cells = [comparison.cell(m, k, key) for m in comparison.models]
                bars = ax.bar(xs, [c.value or 0.0 for c in cells], width * 0.95, label=side.label)
                ax.bar_label(bars, [_bar_text(c.value) for c in cells], fontsize=7, padding=1)
            label = f"{heading} ({unit})" if unit else heading
            if key == "latency_us":
                _host_marks(ax, comparison)
                # models from µs to tens of ms on one axis: only a log scale keeps the small ones visible
                ax.set_yscale("log")
                label = f"{label}, log scale"
            ax.set_xticks(range(n_models), comparison.models, rotation=20, ha="right")
            ax.set_ylabel(label)
            ax.margins(y=0.15)
            ax.grid(axis="x", visible=False)
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper right", ncols=min(n_sides, 3),
                   frameon=False)
        fig.suptitle("Comparison per model", x=0.01, ha="left")
        return _png(fig)


def _bar_text(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if abs(value) >= 1000 or value == int(value) else f"{value:.4g}"


def _host_marks(ax, comparison: Comparison) -> None:
    """A dashed line over each model's bars at its host-only latency (latency × speed-up), where known."""
    labelled = False
    for i, m in enumerate(comparison.models):
        hosts = {round(r["latency_us"] * r["speedup"], 1) for s in comparison.sides
                 if (r := s.records.get(m)) and r.get("speedup")}
        for host in hosts:
            ax.hlines(host, i - 0.45, i + 0.45, colors="black", linestyles="--", linewidth=1.2,
                      label=None if labelled else "host alone")
            labelled = True
