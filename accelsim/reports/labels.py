"""How a report names and orders things: number formats, point labels, file-name slugs, the experiment
file's order of models, variants and sweep keys, and which traced points are shown in detail.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.reports import plots

DETAIL_MAX = 20  # traced points shown in detail (with a Gantt chart): the fastest, then spread over the rest

def fmt_us(x: float) -> str:
    return f"{x:,.2f}"


NOT_MODELLED = "not modelled"  # an energy no config gives a number for (accelsim.hardware.energy): never shown as 0


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


def value_key(value: Any) -> tuple:
    """How a sweep value sorts: numbers (units read) before the rest, then as written."""
    if isinstance(value, (str, int, float)):  # hashable, and a sweep has few distinct values: each parsed once
        return _scalar_key(type(value), value)
    number = plots.sweep_number(value)
    return (0, number[0], str(value)) if number is not None else (1, 0.0, str(value))


@functools.lru_cache(maxsize=4096)
def _scalar_key(kind: type, value: Any) -> tuple:  # `kind` keeps True, 1 and 1.0 apart
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
        sweep = tuple((self._rank(self.keys, k), value_key(v)) for k, v in self.sweep(rec["sweep"]).items())
        return (self._rank(self.models, rec["model_name"]), self._rank(self.variants, rec["variant"]), sweep,
                rec.get("model", ""), rec.get("id", ""))


def slug_of(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:120] or "point"


def slugs(points: Sequence[dict[str, Any]]) -> list[str]:
    """A file-name-safe, unique name per point: model__variant__key-value...; the id breaks rare ties."""
    out: list[str] = []
    seen: set[str] = set()
    for rec in points:
        base = slug_of("__".join([rec["model_name"], rec["variant"],
                                *(f"{k}-{v}" for k, v in sorted(rec["sweep"].items()))]))
        slug = base if base not in seen else f"{base}__{rec['id'][:8]}"
        seen.add(slug)
        out.append(slug)
    return out


def detail_subset(points: Sequence[dict[str, Any]], indices: Collection[int], best: int) -> list[int]:
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


_LONG_POINT_LIST = 8  # points named one by one in a sentence


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


# The sensitivity section's title and anchor (GitHub's anchor for the same heading), linked from the summary.
WHAT_TO_CHANGE = "What to change: sensitivity and bottlenecks"
WHAT_TO_CHANGE_ANCHOR = "what-to-change-sensitivity-and-bottlenecks"


def warning_lines(points: Sequence[dict]) -> list[str]:
    """Every distinct warning of the ok points, in first-seen order, with how many points carry it."""
    count: dict[str, int] = {}
    for p in points:
        for w in p.get("warnings") or ():
            count[w] = count.get(w, 0) + 1
    return [f"{w} ({n} {'point' if n == 1 else 'points'})" for w, n in count.items()]
