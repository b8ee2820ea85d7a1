"""The results store against the per-file cache it replaced: per-point cost to save, resume and report.

Usage:
    python benchmarks/store.py [--points N] [--scale M]

Runs an N-point (default 200) cost-only sweep of a small fixture (interleaved_int8 on
edgetpu_usb, rows x cols x link bandwidth) once, through `run_experiment`, to get real records.
Then, in the same process and on the same records, times per point (best of 3):
  save    the old cache's atomic write of <id>.json (temp file + rename) vs one committed
          INSERT into points.sqlite (WAL, synchronous=NORMAL);
  resume  finding which points are done: reading every cache file vs one SELECT;
  report  reading every finished record back for the report.
With --scale M the records are repeated M times under new ids (what a larger sweep stores), to
show how each mechanism grows. The old cache is reproduced here from its last version
(accelsim/experiments/experiment.py before the store) for the comparison only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.core.files import write_atomic  # noqa: E402
from accelsim.experiments.executors import SerialExecutor  # noqa: E402
from accelsim.experiments.experiment import load_experiment  # noqa: E402
from accelsim.experiments.run import run_experiment  # noqa: E402
from accelsim.experiments.store import ResultStore  # noqa: E402

REPEATS = 3
MODEL = ROOT / "tests" / "fixtures" / "models" / "interleaved_int8.tflite"


def sweep_records(folder: Path, points: int) -> list[dict]:
    """Records of a cost-only sweep with about `points` points (rows x cols x bandwidth)."""
    rows = [8 * i for i in range(1, 11)]
    cols = [8, 16, 32, 64, 128]
    bandwidths = max(1, -(-points // (len(rows) * len(cols))))
    path = folder / "sweep.yaml"
    path.write_text(f"""\
name: store_bench
models: [{MODEL}]
host: host_cpu
variants: [{{name: usb, accelerators: [edgetpu_usb]}}]
sweeps:
  edgetpu_usb.compute.rows: {rows}
  edgetpu_usb.compute.cols: {cols}
  edgetpu_usb.link.bandwidth: {[f"{40 * (k + 1)} MB/s" for k in range(bandwidths)]}
reports: [json]
""")
    out = run_experiment(load_experiment(path), folder / "run", executor=SerialExecutor(), use_cache=False)
    return out.records[:points]


def scaled(records: list[dict], scale: int) -> list[dict]:
    """The records repeated `scale` times under distinct 16-hex-digit ids."""
    return [dict(r, id=f"{n:016x}") for n, r in enumerate(itertools.chain.from_iterable([records] * scale))]


def time_files(folder: Path, records: list[dict]) -> tuple[float, float, float]:
    """(save, resume, report) seconds for the per-file cache of earlier versions."""
    cache = folder / "cache"
    t0 = time.perf_counter()
    for r in records:
        write_atomic(cache / f"{r['id']}.json", json.dumps(r, sort_keys=True))
    t1 = time.perf_counter()
    done = {r["id"] for r in records if _load(cache / f"{r['id']}.json") is not None}
    t2 = time.perf_counter()
    back = [_load(cache / f"{i}.json") for i in sorted(done)]
    t3 = time.perf_counter()
    assert len(back) == len(records)
    return t1 - t0, t2 - t1, t3 - t2


def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if data.get("status") == "ok" else None


def time_store(folder: Path, records: list[dict]) -> tuple[float, float, float]:
    """(save, resume, report) seconds for points.sqlite."""
    with ResultStore(folder) as store:
        t0 = time.perf_counter()
        for r in records:
            store.put(r)  # one commit per point, as a run does
        t1 = time.perf_counter()
        done = store.ids(ok_only=True)
        t2 = time.perf_counter()
        back = store.records(done)
        t3 = time.perf_counter()
    assert len(back) == len(records)
    return t1 - t0, t2 - t1, t3 - t2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--scale", type=int, nargs="*", default=[1, 10])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = sweep_records(Path(tmp), args.points)
        size = sum(len(json.dumps(r, sort_keys=True)) for r in base) / len(base)
        print(f"{len(base)} cost-only points of {MODEL.name} on edgetpu_usb; a record is {size / 1024:.1f} KiB of JSON")
        print(f"{'points':>8} {'store':<10} {'save us/pt':>11} {'resume us/pt':>13} {'report us/pt':>13}")
        for scale in args.scale:
            records = scaled(base, scale)
            results = {}
            for name, fn in (("files", time_files), ("sqlite", time_store)):
                # Best of REPEATS, each into a fresh folder: the machine is shared, the minimum is the cost.
                runs = []
                for k in range(REPEATS):
                    folder = Path(tmp) / f"{name}-{scale}-{len(records)}-{k}"
                    folder.mkdir()
                    runs.append(fn(folder, records))
                results[name] = tuple(min(column) for column in zip(*runs))
                per = [1e6 * t / len(records) for t in results[name]]
                print(f"{len(records):>8} {name:<10} {per[0]:>11.1f} {per[1]:>13.1f} {per[2]:>13.1f}")
            ratio = [f / s if s else float("inf") for f, s in zip(results["files"], results["sqlite"])]
            print(f"{'':>8} {'files/sqlite':<10} {ratio[0]:>10.2f}x {ratio[1]:>12.2f}x {ratio[2]:>12.2f}x")


if __name__ == "__main__":
    main()
