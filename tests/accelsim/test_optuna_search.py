"""Search on Optuna (`search: {sampler, budget, seed, objectives}`): the budget, reproducibility from the seed
whatever the executor, a resumed study, an interrupted one, and file:line errors."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

from accelsim.experiments.executors import PoolExecutor, SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import point_count
from accelsim.experiments.run import run_experiment
from accelsim.experiments.search import STUDY_FILE
from accelsim.hardware.config import ConfigError

optuna = pytest.importorskip("optuna", reason="the `search` extra: pip install -e '.[search]'")

MODEL = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models" / "interleaved_int8.tflite"


def experiment(tmp_path: Path, search: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"""\
name: opt
models: [{MODEL}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
sweeps:
  edgetpu_usb.compute.rows: {{from: 8, to: 128, step: 8}}
  edgetpu_usb.link.bandwidth: {{from: 40 MB/s, to: 4 GB/s, log: true}}
  edgetpu_usb.memory.levels.sram.size: [2 MiB, 8 MiB]
search: {search}
reports: [json]
traces: none
""")
    return path


def searched(out: Path) -> list[tuple[str, str]]:
    """(id, sweep) of every point of results.json, in its order."""
    return [(r["id"], json.dumps(r["sweep"], sort_keys=True))
            for r in json.loads((out / "results.json").read_text())["points"]]


def trials(out: Path) -> list[str]:
    with sqlite3.connect(out / STUDY_FILE) as db:
        return [s for (s,) in db.execute("SELECT state FROM trials ORDER BY number")]


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["random", "tpe", "nsga2"])  # gp: test_gp_needs_pytorch
def test_a_search_runs_its_budget_and_a_seed_repeats_it_whatever_the_executor(tmp_path, sampler):
    exp = load_experiment(experiment(tmp_path, f"{{sampler: {sampler}, budget: 10, seed: 3, "
                                               "objectives: [latency_us, energy_uj]}"))
    assert point_count(exp) == 10 + 1  # the budget for usb, one point for cpu_only (nothing swept)
    first = run_experiment(exp, tmp_path / "a", executor=SerialExecutor())
    assert (first.computed, first.failed, len(first.records)) == (11, 0, 11)
    assert trials(tmp_path / "a") == ["COMPLETE"] * 10
    run_experiment(exp, tmp_path / "b", executor=PoolExecutor(2))
    assert searched(tmp_path / "a") == searched(tmp_path / "b")


def test_a_continued_study_runs_only_the_new_trials_and_an_interrupted_one_resumes(tmp_path):
    exp = load_experiment(experiment(tmp_path, "{sampler: tpe, budget: 8, seed: 1}"))
    out = tmp_path / "out"
    run_experiment(exp, out, executor=SerialExecutor())
    more = load_experiment(experiment(tmp_path, "{sampler: tpe, budget: 20, seed: 1}"))
    calls = []

    def stop_in_the_second_round() -> bool:  # Ctrl-C's flag, raised mid-way through the second new round
        calls.append(1)  # checked before each round of 8 trials and after each point
        return len(calls) > 12

    with pytest.raises(KeyboardInterrupt):
        run_experiment(more, out, executor=SerialExecutor(), should_stop=stop_in_the_second_round)
    states = trials(out)
    assert states[:8] == ["COMPLETE"] * 8 and "RUNNING" not in states  # the study is consistent
    finished = sum(s == "COMPLETE" for s in states)
    assert 8 < finished < 20
    done = run_experiment(more, out, executor=SerialExecutor())
    # only the trials still to run (one may repeat a point the interrupted round stored: it is not run again)
    assert 0 < done.computed <= 20 - finished
    assert sum(s == "COMPLETE" for s in trials(out)) == 20 and len(done.records) == 21


def test_gp_needs_pytorch(tmp_path):
    """Without PyTorch (CI's machines) gp is a file:line error at load; with it, the experiment loads."""
    path = experiment(tmp_path, "{sampler: gp, budget: 20}")
    if importlib.util.find_spec("torch") is not None:
        assert load_experiment(path).search.sampler == "gp"
        return
    with pytest.raises(ConfigError, match=r"exp.yaml:\d+: search.sampler: gp needs PyTorch, which is not installed"):
        load_experiment(path)


@pytest.mark.parametrize(("search", "expected"), [
    ("{sampler: nsga3, budget: 5}", r"exp.yaml:\d+: search.sampler: expected one of grid, random, tpe, nsga2, gp, "
                                    r"got 'nsga3'; did you mean 'nsga2'\?"),
    ("{sampler: tpe, budget: 5, objectives: [latency, energy_uj]}",
     r"exp.yaml:\d+: search.objectives\[0\]: 'latency' is not a numeric results column to minimise; expected one "
     r"of .*latency_us.*; did you mean 'latency_us'\?"),
    ("{sampler: tpe}", r"exp.yaml:\d+: search: a search needs budget: N"),
    ("{sampler: tpe, budget: 0}", r"exp.yaml:\d+: search.budget: expected a whole number >= 1 of trials, got 0"),
    ("{sampler: tpe, budget: 5, samples: 3}", r"search.samples: samples belongs to the seeded random draw"),
    ("{sampler: grid, budget: 5}", r"search.budget: a grid runs every combination"),
])
def test_a_bad_search_is_a_file_line_error(tmp_path, search, expected):
    with pytest.raises(ConfigError, match=expected):
        load_experiment(experiment(tmp_path, search))
