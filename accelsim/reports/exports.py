"""The report's machine-readable and plain-text files: results.json, results.csv, layers/<slug>.csv and
benchmark_model's op profile text; every number taken from the records (accelsim.reports.results).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from accelsim.core.record import PointResult
from accelsim.core.version import __version__
from accelsim.reports.labels import sweep_text
from accelsim.reports.results import LAYER_COLUMNS, layer_rows, tidy_table

TOP_BY_TIME = 10  # StatSummarizerOptions' default time_limit: benchmark_model lists the 10 slowest nodes

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
             "version": json.dumps(__version__)}
    return "{\n" + ",\n".join(f"{json.dumps(k)}: {v}" for k, v in parts.items()) + "\n}\n"


def csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return sweep_text(value, "; ")
    if isinstance(value, (list, tuple)):
        return "+".join(str(v) for v in value)
    return str(value)


def results_csv(points: Sequence[PointResult], table: tuple[list[str], list[list[Any]]] | None = None) -> str:
    """results.csv: accelsim.reports.results.tidy_table of `points` (given, or made with the sweep keys
    alphabetically)."""
    columns, rows = table if table is not None else tidy_table(points)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([csv_value(v) for v in row] for row in rows)
    return buf.getvalue()


def layers_csv(rec: PointResult) -> str:
    """layers/<slug>.csv of an ok record: one row per node in run order, accelsim.reports.results.LAYER_COLUMNS."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(LAYER_COLUMNS)
    for row in layer_rows(rec):
        writer.writerow([csv_value(row[c]) for c in LAYER_COLUMNS])
    return buf.getvalue()
