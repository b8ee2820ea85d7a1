"""One design point in detail, as the report shows it: its totals, partitions and the placement choice, the nodes
delegation refused, its numerics against the host, its timeline and per-node table (`detail_section`), and the
paragraph that introduces the report's "Design points in detail" (`DETAIL_INTRO`).
"""

from __future__ import annotations

from collections import defaultdict

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
)
from accelsim.reports.exports import csv_value, op_profile_text
from accelsim.reports.figures import partition_image
from accelsim.reports.labels import (
    fmt_pct,
    fmt_speedup,
    fmt_uj,
    fmt_us,
    ops_abbrev,
    point_label,
)
from accelsim.reports.partition_plot import ranges
from accelsim.reports.results import LAYER_COLUMNS, layer_rows

_LONG_NODE_LIST = 8  # rejected nodes listed one by one up to this many, as index ranges beyond


def _point_table(p: dict) -> Table:
    """The point's totals in one row: latency, where the time went, what moved."""
    row = [fmt_us(p["latency_us"]), fmt_speedup(p["speedup"]), fmt_us(p["compute_us"]), fmt_us(p["memory_us"]),
           fmt_us(p["transfer_us"]), fmt_us(p["overhead_us"]), fmt_pct(p["partition_overhead_pct"]),
           f"{p['transfer_bytes']:,}", fmt_us(p["init_us"]), f"{p['init_param_bytes']:,}",
           f"{p['streamed_param_bytes']:,}", fmt_uj(p["energy_uj"]), fmt_uj(p["edp_uj_ms"])]
    return make_table(["Latency (µs)", "Speed-up", "Compute (µs)", "Memory (µs)", "Transfer (µs)", "Call overhead (µs)",
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
    return make_table(["Partition", "Unit", "Nodes (count)", "Ops", "Compute (µs)", "Memory (µs)", "Transfer (µs)",
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
            make_table(["Choice", "Partitions delegated", "Latency (µs)", "Energy (µJ)"], rows,
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
    return make_table(["Reason", "Nodes", "Which"], rows, [False, True, False])


def _numerics_blocks(p: dict) -> list[Block]:
    n = p["numerics"]
    rows = [[str(o["index"]), o["name"], f"{o['mean_abs_error']:.6g}", f"{o['std_abs_error']:.6g}",
             f"{o['max_abs_error']:.6g}"] for o in n["outputs"]]
    return [Heading(4, "Numerics (inference_diff)"),
            Para(f"{n['runs']} runs of seeded random inputs through the reference interpreter and the delegated "
                 "one; absolute error per output in the output's own units (quantized outputs compare integers)."),
            make_table(["Output", "Name", "Avg error", "Std dev", "Max error"], rows, [True, False, True, True, True])]


_LAYER_HEADERS = {"node": "Node", "op": "Op", "unit": "Unit", "partition": "Partition", "time_us": "Time (µs)",
                  "pct": "% of node time", "cdf_pct": "Cumulative %", "macs": "MACs", "cycles": "Cycles",
                  "utilization_pct": "Utilisation (%)", "compute_us": "Compute (µs)", "bound": "Bound",
                  "bytes_per_level": "Bytes per level", "streamed_weight_bytes": "Streamed weights (bytes)",
                  "energy_uj": "Energy (µJ)", "not_delegated_because": "Not delegated because", "note": "Note"}


def _layer_table(p: dict) -> Table:
    """Every node of the point, LAYER_COLUMNS (the columns of layers/<slug>.csv), sortable in HTML."""
    rows = layer_rows(p)
    numeric = [bool(rows) and all(isinstance(r[c], (int, float)) or r[c] is None for r in rows)
               and any(isinstance(r[c], (int, float)) for r in rows) for c in LAYER_COLUMNS]
    return make_table([_LAYER_HEADERS.get(c, c) for c in LAYER_COLUMNS],
                  [["—" if r[c] is None else csv_value(r[c]) for c in LAYER_COLUMNS] for r in rows], numeric,
                  interactive=True)


def detail_section(p: dict, slug: str, gantt: plots.Picture | None, partitions: plots.Picture | None = None,
                    ) -> Section:
    label = point_label(p)
    blocks: list[Block] = [Para(_point_paragraph(p, f"traces/{slug}.json")), _point_table(p)]
    if gantt:
        blocks.append(Image(f"plots/gantt_{slug}.png", f"timeline of {label}"))
    blocks.append(Heading(4, "Partitions"))
    if partitions:
        blocks.append(partition_image(p, slug))
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
                   make_table(["Node", "Op", "Trips", "From"],
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


DETAIL_INTRO = (
    "Each point: its totals (compute, transfer and call overhead are busy times summed over resources; "
    "initialization loads the cached parameters once and is not part of the latency; streamed parameters are "
    f"reloaded on every inference), its timeline (events narrower than {plots.MIN_BAR_PX:g} pixels are drawn that "
    "wide; the trace file opens in https://ui.perfetto.dev or chrome://tracing), its delegate partitions, the "
    "nodes the accelerators did not take and why, and the numerics check when the experiment asked for one. "
    "The time of every node is in layers/<point>.csv, and in report.html with the op profile in "
    "benchmark_model's layout (µs; no memory column).")
