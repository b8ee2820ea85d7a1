"""How report size and writing time grow with the point count: report.md lines, report.html size, seconds.

Usage:
    python benchmarks/report_scale.py [--counts 100,10000,100000] [--formats md,html,json,csv]

Builds N synthetic records from the golden test's real Edge TPU record (tests/accelsim/golden/):
a random search over rows x cols x link bandwidth with latency, energy and the area proxies
drawn to follow them, stored as an experiment with `traces: pareto` stores them (without the
per-node lists), except the points it traces (the Pareto fronts and the 5 fastest), which keep
the real record's timeline. Then times `write_report` on them (one run each; a report is written
once per experiment) and, as the peer measured in the same run, the Pareto filter alone against
the O(n^2) reference on the first 2,000 points.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.core.pareto import non_dominated, non_dominated_reference, traced_ids  # noqa: E402
from accelsim.reports.report import write_report  # noqa: E402
from accelsim.reports.results import summary  # noqa: E402

GOLDEN = ROOT / "tests" / "accelsim" / "golden" / "records.json"
KEYS = ("edgetpu_usb.compute.rows", "edgetpu_usb.compute.cols", "edgetpu_usb.link.bandwidth")
BEST = 5


def synthetic(n: int, seed: int = 0) -> list[dict]:
    """`n` records of a random search (sizes and rates drawn log-uniformly), shaped as the store keeps them."""
    template = next(r for r in json.loads(GOLDEN.read_text(encoding="utf-8"))
                    if r["variant"] == "edgetpu_usb" and r["status"] == "ok" and r["model_name"] == "interleaved_int8")
    rng = np.random.default_rng(seed)
    rows = 8 * rng.integers(1, 33, n)
    cols = 8 * rng.integers(1, 33, n)
    bandwidth = np.exp(rng.uniform(np.log(40e6), np.log(2e9), n))
    # Bigger arrays are faster but cost energy and area; links make transfers slow: a real trade-off.
    latency = template["latency_us"] * (0.3 + 4096 / (rows * cols) * 0.2 + 4e8 / bandwidth * 0.4) \
        * rng.uniform(0.95, 1.05, n)
    energy = template["energy_uj"] * (0.5 + rows * cols / 4096 * 0.4) * rng.uniform(0.9, 1.1, n)
    base = summary(template)
    records = [{**base, "id": f"{i:016x}", "latency_us": round(float(latency[i]), 4),
                "energy_uj": round(float(energy[i]), 6), "area_macs": int(32 + rows[i] * cols[i]),
                "area_onchip_bytes": 8 << 20, "speedup": None,
                "sweep": {KEYS[0]: int(rows[i]), KEYS[1]: int(cols[i]), KEYS[2]: f"{bandwidth[i] / 1e6:.4g} MB/s"}}
               for i in range(n)]
    chosen = traced_ids(records, "pareto", BEST)
    details = {k: v for k, v in template.items() if k not in base}
    return [{**r, **details} if r["id"] in chosen else r for r in records], chosen


def measure(n: int, formats: tuple[str, ...]) -> dict:
    records, chosen = synthetic(n)
    experiment = {"source": "benchmarks/report_scale.py", "points": n, "models": ["interleaved_int8"],
                  "variants": ["edgetpu_usb"], "sweep_keys": list(KEYS), "best": BEST, "pareto_color": KEYS[2]}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        files = write_report(Path(tmp), "scale", records, formats=formats, experiment=experiment, traced=chosen)
        seconds = time.perf_counter() - start
        md = files["md"].read_text(encoding="utf-8").count("\n") if "md" in files else None
        html_mb = files["html"].stat().st_size / 1e6 if "html" in files else None
        json_mb = files["json"].stat().st_size / 1e6 if "json" in files else None
        n_files = sum(1 for f in Path(tmp).rglob("*") if f.is_file())
    x = np.array([r["latency_us"] for r in records])
    y = np.array([r["energy_uj"] for r in records])
    start = time.perf_counter()
    non_dominated(x, y)
    filter_ms = (time.perf_counter() - start) * 1e3
    return {"n": n, "traced": len(chosen), "seconds": seconds, "md_lines": md, "html_mb": html_mb,
            "json_mb": json_mb, "files": n_files, "filter_ms": filter_ms}


def reference_ratio(n: int = 2000) -> tuple[float, float]:
    """Milliseconds of the vectorized filter and of the O(n^2) reference on the same n points."""
    rng = np.random.default_rng(1)
    # Points near an anti-diagonal: most of them are on or near the front, the reference's worst case.
    x = rng.random(n)
    y = 1 - x + rng.normal(0, 0.01, n)
    start = time.perf_counter()
    fast = non_dominated(x, y)
    fast_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    slow = non_dominated_reference(x.tolist(), y.tolist())
    slow_ms = (time.perf_counter() - start) * 1e3
    assert fast.tolist() == slow
    return fast_ms, slow_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="100,10000,100000")
    parser.add_argument("--formats", default="md,html,json,csv")
    args = parser.parse_args()
    formats = tuple(args.formats.split(","))
    print(f"{'points':>8} {'traced':>6} {'write s':>8} {'md lines':>8} {'html MB':>8} {'json MB':>8} {'files':>6} "
          f"{'front ms':>8}")
    for n in (int(c) for c in args.counts.split(",")):
        m = measure(n, formats)
        print(f"{m['n']:>8} {m['traced']:>6} {m['seconds']:>8.2f} {m['md_lines'] or 0:>8} {m['html_mb'] or 0:>8.2f} "
              f"{m['json_mb'] or 0:>8.1f} {m['files']:>6} {m['filter_ms']:>8.2f}")
    fast_ms, slow_ms = reference_ratio()
    print(f"Pareto filter on 2,000 points: {fast_ms:.2f} ms vectorized vs {slow_ms:.0f} ms O(n^2) reference "
          f"({slow_ms / fast_ms:.0f}x)")


if __name__ == "__main__":
    main()
