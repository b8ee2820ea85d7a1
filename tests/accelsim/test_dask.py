"""The Dask executor on a real LocalCluster: identical results, a killed worker's points retried, bad input."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from accelsim.cli.main import main
from accelsim.experiments.executors import SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import design_points
from accelsim.experiments.run import run_experiment

distributed = pytest.importorskip("distributed", reason="Dask is not installed: pip install -e '.[test]' brings it")

from accelsim.experiments.dask_executor import DaskExecutor, dask_client  # noqa: E402 - needs distributed

MODELS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models"


def experiment(tmp_path: Path):
    path = tmp_path / "exp.yaml"
    path.write_text(f"""\
name: dask
models: [{MODELS / 'interleaved_int8.tflite'}, {MODELS / 'mobilenet_v2_035_96_int8.tflite'}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
  - {{name: dsp, accelerators: [hexagon_dsp]}}
sweeps:
  max_delegated_partitions: [1, 2, 3]
  edgetpu_usb.link.bandwidth: [40 MB/s, 320 MB/s, 1 GB/s]
""")
    return load_experiment(path)


@pytest.mark.slow
def test_a_killed_worker_has_its_points_retried_and_results_match_the_local_run(tmp_path):
    exp = experiment(tmp_path)
    total = len(design_points(exp))
    local = run_experiment(exp, tmp_path / "local", executor=SerialExecutor())
    with dask_client(workers=2) as client:
        before = client.run(os.getpid)
        killed = []

        def kill_a_busy_worker(done: int, _total: int, _label: str) -> None:
            # After the first batch comes back, kill a worker that is running (or holds) more batches.
            if done and not killed:
                busy = [addr for addr, keys in client.processing().items() if keys]
                assert busy, "no worker had work in flight: the kill would not be mid-run"
                killed.append(before[busy[0]])
                os.kill(before[busy[0]], signal.SIGKILL)

        remote = run_experiment(exp, tmp_path / "dask", executor=DaskExecutor(client), progress=kill_a_busy_worker)
        after = client.run(os.getpid)
    assert killed and killed[0] not in after.values()  # the nanny started a new worker in its place
    assert (remote.computed, remote.failed, len(remote.missing)) == (total, 0, 0) == (local.computed, 0, 0)
    for name in ("results.json", "results.csv", "report.md"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line_after_a_bounded_wait(tmp_path, capsys, monkeypatch):
    """The wait is bounded by the connect timeout handed to Dask (checked as an argument, not timed)."""
    from accelsim.experiments.dask_executor import CONNECT_TIMEOUT_S

    exp = experiment(tmp_path)
    timeouts = []
    real_client = distributed.Client

    def client(*args, **kwargs):
        timeouts.append(kwargs.get("timeout"))
        return real_client(*args, **kwargs)

    monkeypatch.setattr(distributed, "Client", client)
    code = main(["run", exp.source, "--out", str(tmp_path / "out"), "--executor", "dask",
                 "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 1 and timeouts == [CONNECT_TIMEOUT_S] and CONNECT_TIMEOUT_S == 5
    assert err.count("\n") == 1 and "no Dask scheduler answered at tcp://127.0.0.1:9 within 5 s" in err
    assert "dask scheduler" in err


def test_dask_without_the_extra_names_the_pip_command(tmp_path, capsys, monkeypatch):
    exp = experiment(tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)  # what an environment without Dask gives: ImportError
    assert main(["run", exp.source, "--out", str(tmp_path / "out"), "--executor", "dask"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "install it with: pip install -e '.[distributed]'" in err


def test_a_scheduler_address_needs_the_dask_executor(tmp_path, capsys):
    exp = experiment(tmp_path)
    assert main(["run", exp.source, "--scheduler", "tcp://127.0.0.1:8786"]) == 1
    assert "--scheduler tcp://127.0.0.1:8786 needs --executor dask" in capsys.readouterr().err


def test_workers_load_the_experiments_op_modules(tmp_path):
    """Each point carries the experiment's op modules: a worker process imports them where the point runs."""
    path = tmp_path / "ops.yaml"
    path.write_text(f"""\
models: [{MODELS / 'atan_custom.tflite'}]
host: host_cpu
ops: [{MODELS.parents[2] / 'examples' / 'custom_op_atan.py'}]
variants: [{{name: cpu_only, accelerators: []}}, {{name: usb, accelerators: [edgetpu_usb]}}]
""")
    with dask_client(workers=1) as client:
        out = run_experiment(load_experiment(path), tmp_path / "out", executor=DaskExecutor(client))
    assert [r["status"] for r in out.records] == ["ok", "ok"]


@pytest.mark.slow
def test_a_search_on_dask_asks_and_runs_the_same_points_as_in_this_process(tmp_path):
    pytest.importorskip("optuna", reason="the `search` extra")
    path = tmp_path / "search.yaml"
    path.write_text(f"""\
name: dask_search
models: [{MODELS / 'interleaved_int8.tflite'}]
host: host_cpu
variants: [{{name: usb, accelerators: [edgetpu_usb]}}]
sweeps:
  edgetpu_usb.compute.rows: {{from: 8, to: 128, step: 8}}
  edgetpu_usb.link.bandwidth: {{from: 40 MB/s, to: 4 GB/s, log: true}}
search: {{sampler: nsga2, budget: 12, seed: 2, objectives: [latency_us, energy_uj]}}
reports: [json]
""")
    exp = load_experiment(path)
    local = run_experiment(exp, tmp_path / "local", executor=SerialExecutor())
    with dask_client(workers=2) as client:
        remote = run_experiment(exp, tmp_path / "dask", executor=DaskExecutor(client))
    assert (remote.computed, remote.failed) == (12, 0) == (local.computed, local.failed)
    assert (tmp_path / "dask" / "results.json").read_bytes() == (tmp_path / "local" / "results.json").read_bytes()
