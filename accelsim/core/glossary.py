"""The glossary of a report: every column and term once, with its formula and unit.

`TERMS` is the one list; report.md and report.html end with it (`accelsim.reports.report`), and an HTML
table header whose name is a term links to its definition (`anchor_for`). The formulas name the
record keys of `accelsim.core.record.PointResult` they describe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Term:
    name: str  # as table headers write it, without the unit in brackets
    unit: str
    formula: str
    meaning: str
    aliases: tuple[str, ...] = ()  # other header spellings of the same term

    @property
    def anchor(self) -> str:
        return "g-" + re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


GLOSSARY_HEADERS = ("Term", "Unit", "Formula", "Meaning")  # the report's glossary table

TERMS = (
    Term(name="Latency", unit="µs", formula="end of the last step of one simulated inference (latency_us)",
         meaning="end-to-end time of one inference: host and accelerator nodes, link copies and call overheads, "
                 "as the schedule overlaps them", aliases=("Best latency", "Worst latency")),
    Term(name="Speed-up", unit="×", formula="CPU-only latency / latency, same model, schedule and host settings",
         meaning="how much faster than the host alone; below 1 delegation made it slower"),
    Term(name="Compute", unit="µs", formula="Σ over compute steps of their compute time (compute_us)",
         meaning="busy time computing, summed over every resource (exceeds latency where resources overlap)"),
    Term(name="Memory", unit="µs", formula="Σ over nodes of (node time − compute time) (memory_us)",
         meaning="time nodes wait on a memory level beyond their compute: streamed weights, spills, bandwidth"),
    Term(name="Transfer", unit="µs", formula="Σ over copies of (link.latency + bytes / link.bandwidth)",
         meaning="busy time of host ↔ device copies of activations; 0 with shared memory"),
    Term(name="Call overhead", unit="µs", formula="delegate invocations × link.call_overhead (overhead_us)",
         meaning="driver and runtime time per partition invocation"),
    Term(name="Partition overhead", unit="%", formula="100 × (transfer + call overhead) / latency "
         "(partition_overhead_pct)", meaning="the share of latency spent getting to and from accelerators; with "
         "0 bytes moved it is all call overhead"),
    Term(name="Transfer bytes", unit="B", aliases=("Transfer (bytes)",),
         formula="Σ bytes copied over links per inference (transfer_bytes)",
         meaning="activations copied host ↔ device"),
    Term(name="Init", unit="µs", formula="link.latency + cached parameter bytes / link.bandwidth (init_us)",
         meaning="one-time initialization: cached weights loaded over the link; not part of latency"),
    Term(name="Cached params", unit="B", formula="weights kept in memory.cache (init_param_bytes)",
         meaning="weights loaded once at initialization and read on chip afterwards"),
    Term(name="Streamed params", unit="B", formula="weights not cached (streamed_param_bytes)",
         meaning="weights read from where they live (memory.weights) on every inference: traffic on that level, "
                 "inside Memory time"),
    Term(name="Energy", unit="µJ", formula="Σ nodes (MACs × energy.mac + bytes × level energy + static power × "
         "node time) + copies × link.energy + idle static power (energy_uj)",
         meaning="one inference; 'not modelled' (empty, never 0) when a device has no energy.mac",
         aliases=("Best energy", "Worst energy")),
    Term(name="EDP", unit="µJ·ms", formula="energy (µJ) × latency (ms) (edp_uj_ms)",
         meaning="energy-delay product: lower is better in both"),
    Term(name="Bound", unit="", formula="argmax over compute and each level of (compute time, level latency + "
         "bytes / bandwidth)", meaning="what limits a node's time: its compute, or a memory level (the link "
         "when weights stream from the host)"),
    Term(name="Utilisation", unit="%", formula="100 × MACs / (cycles × peak MACs per cycle) for a node; "
         "100 × busy / latency for a resource", meaning="how much of the unit's peak the work used over its "
         "whole time", aliases=("Utilization",)),
    Term(name="MAC units", unit="MACs/cycle", formula="Σ peak MACs per cycle of the host and every accelerator "
         "(area_macs)", meaning="area proxy of the compute"),
    Term(name="On-chip", unit="B", formula="Σ sizes of the memory levels that have one (area_onchip_bytes)",
         meaning="area proxy of the memories"),
    Term(name="Infeasible", unit="", formula="status 'infeasible' with a reason: memory or limits",
         meaning="the hardware cannot hold or run the model (a level too small for the weights or a working "
                 "set, or the experiment's limits leave the point out): a result, not a failure"),
    Term(name="Pareto front", unit="", formula="points no other point of the same model beats in both "
         "objectives", meaning="the trade-offs worth considering; every objective is minimised"),
)

_BY_NAME = {n.lower(): t for t in TERMS for n in (t.name, *t.aliases)}


def anchor_for(header: str) -> str | None:
    """The anchor of the term a table header names ('Latency (µs)' -> 'g-latency'), or None."""
    text = header.strip()
    found = _BY_NAME.get(text.lower()) or _BY_NAME.get(re.sub(r"\s*\([^)]*\)$", "", text).lower())
    return found.anchor if found else None
