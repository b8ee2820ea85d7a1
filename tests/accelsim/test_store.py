"""The results store: SQLite rows committed as points finish, pool writes."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest

from accelsim.experiments.executors import PoolExecutor, SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import design_points
from accelsim.experiments.run import run_experiment
from accelsim.experiments.store import STORE_FILE, ResultStore

MODELS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models"


def experiment(tmp_path: Path, sweep: str = "[1, 2]"):
    path = tmp_path / "exp.yaml"
    path.write_text(f"""\
name: store
models: [{MODELS / 'interleaved_int8.tflite'}, {MODELS / 'mobilenet_v2_035_96_int8.tflite'}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
sweeps:
  max_delegated_partitions: {sweep}
""")
    return load_experiment(path)


def rows(out: Path) -> dict[str, str]:
    """id -> status of every stored point, through a separate read-only connection."""
    with contextlib.closing(sqlite3.connect(f"file:{out / STORE_FILE}?mode=ro", uri=True)) as db:
        return dict(db.execute("SELECT id, status FROM points"))


def test_put_records_delete_and_a_failed_transaction_rolls_back(tmp_path):
    with ResultStore(tmp_path) as store:
        store.put({"id": "a", "status": "ok", "x": 1})
        store.put_many([{"id": "b", "status": "error", "x": 2}, {"id": "a", "status": "ok", "x": 3}])
        assert store.records(["a", "b", "zz"]) == {"a": {"id": "a", "status": "ok", "x": 3},
                                                   "b": {"id": "b", "status": "error", "x": 2}}
        assert set(store.records(["a", "b"], ok_only=True)) == {"a"}
        with pytest.raises(KeyError):
            store.put_many([{"id": "c", "status": "ok"}, {"status": "ok"}])  # the second has no id
        assert store.ids() == {"a", "b"} and store.ids(ok_only=True) == {"a"}
        store.delete(["b"])
        assert store.ids() == {"a"}
    with contextlib.closing(sqlite3.connect(tmp_path / STORE_FILE)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@pytest.mark.slow
@pytest.mark.parametrize("executor", [SerialExecutor, lambda: PoolExecutor(2)], ids=["serial", "pool"])
def test_each_point_is_committed_before_the_next_is_reported(tmp_path, executor):
    # Another connection sees every finished point at once: the client commits each as it arrives
    # (pool workers only return records; they never open the database).
    exp = experiment(tmp_path)
    seen = []

    def progress(done: int, total: int, label: str) -> None:
        if done:
            seen.append((done, len(rows(tmp_path / "out"))))

    out = run_experiment(exp, tmp_path / "out", executor=executor(), progress=progress)
    assert seen and all(done == committed for done, committed in seen)
    assert rows(tmp_path / "out") == {r["id"]: "ok" for r in out.records}
    assert len(out.records) == len(design_points(exp)) == 6


@pytest.mark.slow
def test_an_interrupt_keeps_what_finished_and_the_rerun_completes_it(tmp_path):
    exp = experiment(tmp_path)
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 3  # stop after a few points have finished

    with pytest.raises(KeyboardInterrupt):
        run_experiment(exp, tmp_path / "out", executor=SerialExecutor(), should_stop=stop)
    done = rows(tmp_path / "out")
    assert 0 < len(done) < 6
    report = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {p["id"] for p in report["points"]} == set(done) and len(report["missing"]) == 6 - len(done)
    again = run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    assert (again.cached, again.computed) == (len(done), 6 - len(done))
    run_experiment(exp, tmp_path / "fresh", executor=SerialExecutor())
    assert (tmp_path / "out" / "results.json").read_bytes() == (tmp_path / "fresh" / "results.json").read_bytes()
