"""Chrome trace-event JSON of one design point's timeline, for Perfetto and chrome://tracing.

Format: the Trace Event Format's JSON object form, {"traceEvents": [...], "displayTimeUnit": "ms"}.
Each timeline event is one complete ("X") event with `ts` and `dur` in microseconds (the
format's unit); the design point is one process, each resource (host, accelerator, link) one
thread, named by "M" metadata events and ordered host first, then each accelerator followed
by its link, as the Gantt chart lays them out.
"""

from __future__ import annotations

from typing import Any

HOST = "host"


def resources(record: dict[str, Any]) -> list[str]:
    """A record's timeline lanes: the host, each accelerator then its link (if used), then any other resource."""
    used = {e["resource"] for e in record.get("events", ())}
    lanes = [HOST]
    for accel in record.get("accelerators", ()):
        lanes.append(accel)
        if f"{accel}.link" in used:
            lanes.append(f"{accel}.link")
    return lanes + sorted(used - set(lanes))


def trace_document(record: dict[str, Any], *, pid: int, label: str) -> dict[str, Any]:
    """The trace of one ok record: process `pid` named `label`, one thread per resource, one X event per event."""
    lanes = resources(record)
    tid = {name: k + 1 for k, name in enumerate(lanes)}
    meta: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}},
    ]
    for name, t in tid.items():
        meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": name}})
        meta.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": t, "args": {"sort_index": t}})
    spans = [{
        "ph": "X",
        "name": e["label"],
        "cat": e["kind"],
        "pid": pid,
        "tid": tid[e["resource"]],
        "ts": e["start_us"],
        # Rounded like the record's own times, so 0.1 + 0.2 style float noise stays out of the file.
        "dur": round(e["end_us"] - e["start_us"], 4),
        "args": {"kind": e["kind"], "node": e["node"], "partition": e["partition"], "bytes": e["bytes"]},
    } for e in record.get("events", ())]
    spans.sort(key=lambda s: (s["ts"], s["tid"]))
    return {
        "traceEvents": meta + spans,
        "displayTimeUnit": "ms",
        "otherData": {"id": record["id"], "model": record["model_name"], "variant": record["variant"],
                      "latency_us": record["latency_us"]},
    }
