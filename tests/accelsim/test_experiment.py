"""Experiments: loading with file:line errors, design points, caching, failures, interruption, determinism."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from accelsim.cli.main import main as cli_main
from accelsim.experiments.executors import SerialExecutor
from accelsim.experiments.experiment import load_experiment, shipped_configs
from accelsim.experiments.points import (
    PointLimitError,
    check_point_count,
    design_points,
    experiment_points,
    point_count,
)
from accelsim.experiments.run import run_experiment
from accelsim.hardware.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "fixtures" / "models"
SHIPPED_NAMES = ", ".join(shipped_configs())


def write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def small_experiment(tmp_path: Path, *, sweep: str = "", extra: str = "", name: str = "small",
                     models: tuple[str, ...] = ("interleaved_int8", "mobilenet_v2_035_96_int8")) -> Path:
    listed = ", ".join(str(MODELS / f"{m}.tflite") for m in models)
    return write(tmp_path, f"""\
name: {name}
models: [{listed}]
host: host_cpu
variants:
  - {{name: cpu_only, accelerators: []}}
  - {{name: usb, accelerators: [edgetpu_usb]}}
  - {{name: dsp, accelerators: [hexagon_dsp]}}
{sweep}
{extra}
""")


def test_design_points_cross_only_the_sweeps_that_apply(tmp_path):
    exp = load_experiment(small_experiment(tmp_path, sweep="sweeps:\n  edgetpu_usb.link.bandwidth: [40 MB/s, 1 GB/s]\n"
                                                          "  max_delegated_partitions: [1, 2]"))
    points = design_points(exp)
    by_variant = {}
    for p in points:
        by_variant.setdefault(p.variant, []).append(p)
    assert len(by_variant["cpu_only"]) == 2  # one per model: no accelerator, no option sweep
    assert len(by_variant["usb"]) == 2 * 2 * 2
    assert len(by_variant["dsp"]) == 2 * 2  # the link sweep is not the DSP's
    assert len({p.id for p in points}) == len(points)
    assert design_points(exp) == points  # ids are stable


@pytest.mark.parametrize("sweep", [
    "",
    "sweeps:\n  edgetpu_usb.link.bandwidth: [40 MB/s, 1 GB/s]\n  max_delegated_partitions: [1, 2]",
    "sweeps:\n  edgetpu_usb.compute.rows: {from: 8, to: 64, steps: 3}\n  hexagon_dsp.clock: {from: 0.5 GHz, to: 1 GHz,"
    " step: 0.25 GHz}\n  schedule: [sequential, dataflow]",
    "sweeps:\n  edgetpu_usb.link.bandwidth: [40 MB/s, 1 GB/s]\n  edgetpu_usb.compute.rows: [8, 16, 32]\n"
    "search: {strategy: random, samples: 5, seed: 3}",
])
def test_point_count_is_the_number_of_design_points(tmp_path, sweep):
    exp = load_experiment(small_experiment(tmp_path, sweep=sweep))
    assert point_count(exp) == len(experiment_points(exp)[0])


def test_a_sweep_above_the_point_limit_is_refused_at_once_with_its_count(tmp_path):
    """10^6 points: validate counts them in seconds; run refuses before any work, saying how to raise the limit."""
    ranges = "\n".join(f"  edgetpu_usb.{k}: {{from: {a}, to: {b}, steps: {n}}}" for k, a, b, n in (
        ("compute.rows", 8, 256, 10), ("compute.cols", 8, 256, 10), ("link.bandwidth", "40 MB/s", "4 GB/s", 100),
        ("clock", "100 MHz", "1 GHz", 100)))
    path = small_experiment(tmp_path, sweep="sweeps:\n" + ranges, models=("interleaved_int8",))
    exp = load_experiment(path)
    assert point_count(exp) == 1 + 10 * 10 * 100 * 100 + 1  # cpu_only, usb's grid, dsp (no usb keys)
    with pytest.raises(PointLimitError, match=r"1,000,002 design points, above the limit of 100,000; .*"
                       r"`accelsim run --max-points 1000002` or `limits: \{points: 1000002\}`"):
        run_experiment(exp, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before anything was made
    assert check_point_count(exp, max_points=1_000_002) == 1_000_002
    raised = load_experiment(small_experiment(tmp_path, sweep="sweeps:\n" + ranges, models=("interleaved_int8",),
                                              extra="limits: {points: 2000000}"))
    assert raised.max_points == 2_000_000 and check_point_count(raised) == 1_000_002


def test_run_prints_the_count_and_max_points_lowers_or_raises_the_limit(tmp_path, capsys):
    path = small_experiment(tmp_path, models=("interleaved_int8",))  # 3 points
    assert cli_main(["run", str(path), "--out", str(tmp_path / "out"), "--max-points", "2"]) == 1
    assert "3 design points, above the limit of 2" in capsys.readouterr().err
    assert cli_main(["run", str(path), "--out", str(tmp_path / "out"), "--max-points", "3", "--jobs", "1"]) == 0
    assert capsys.readouterr().out.startswith("small: 3 design points\n")
    assert cli_main(["validate", str(path)]) == 0
    assert "design points: 3 (run accepts up to 100,000)" in capsys.readouterr().out


@pytest.mark.slow
def test_sweep_values_reach_the_simulation(tmp_path):
    exp = load_experiment(small_experiment(tmp_path, sweep="sweeps:\n  edgetpu_usb.link.bandwidth: [40 MB/s, 1 GB/s]"))
    out = run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    usb = sorted((r for r in out.records if r["variant"] == "usb" and r["model_name"] == "mobilenet_v2_035_96_int8"),
                 key=lambda r: r["latency_us"])
    assert [r["sweep"]["edgetpu_usb.link.bandwidth"] for r in usb] == ["1 GB/s", "40 MB/s"]
    slow, fast = usb[1], usb[0]
    assert slow["transfer_bytes"] == fast["transfer_bytes"] > 0
    # Same transfers, same per-transfer latency: the difference is exactly bytes x (1/40 MB/s - 1/1 GB/s).
    expected = slow["transfer_bytes"] * (1 / 40e6 - 1 / 1e9) * 1e6
    assert slow["transfer_us"] - fast["transfer_us"] == pytest.approx(expected, rel=1e-3)
    assert all(r["speedup"] is not None for r in out.records if r["status"] == "ok")
    cpu = next(r for r in out.records if r["variant"] == "cpu_only" and r["model_name"] == "mobilenet_v2_035_96_int8")
    assert cpu["speedup"] == 1.0


@pytest.mark.parametrize(("text", "expected"), [
    ("models: [nope.tflite]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\n",
     r"exp.yaml:1: models\[0\]: no such model file"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nschedul: sequential\n",
     r"exp.yaml:4: schedul: unknown key"),
    ("models: [M]\nhost: host_cpu\nvariants:\n  - {name: a, accelerators: [no_such_accel]}\n",
     r"exp.yaml:4: variants\[0\].accelerators\[0\]: 'no_such_accel' is not a shipped config \(shipped: "
     + re.escape(SHIPPED_NAMES) + r"\) A path to a .yaml file works too."),
    ("models: [M]\nhost: host_cpu\nvariants:\n  - {name: a, accelerators: [edgetpu]}\n",
     r"exp.yaml:4: variants\[0\].accelerators\[0\]: 'edgetpu' is not a shipped config \(shipped: "
     + re.escape(SHIPPED_NAMES) + r"\); did you mean 'edgetpu_usb'\?"),
    ("models: [M]\nhost: host_cpux\nvariants:\n  - {name: a, accelerators: []}\n",
     r"exp.yaml:2: host: 'host_cpux' is not a shipped config \(shipped: .*\); did you mean 'host_cpu'\?"),
    ("models: [M]\nhost: edgetpu_usb\nvariants:\n  - {name: a, accelerators: []}\n",
     r"exp.yaml:2: host: .*edgetpu_usb.yaml:\d+: kind: edgetpu_usb is an accelerator config"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: [edgetpu_usb]}]\nsweeps:\n"
     "  edgetpu_usb.link.bandwith: [1 GB/s]\n", r"link.bandwith"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nsweeps:\n  tpu.rows: [1]\n",
     r"exp.yaml:5: sweeps.tpu.rows: no variant has an accelerator named 'tpu'"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nnumerics: {runs: 0}\n",
     r"exp.yaml:4: numerics: expected true, false or \{runs: N\}"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a}, {name: a}]\n", r"variant 'a' is defined twice"),
    ("", r"exp.yaml:1: expected a mapping of experiment settings, got an empty file"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nloops: {default_trip: 3}\n",
     r"exp.yaml:4: loops.default_trip: unknown key; expected one of default_trips, nodes"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nloops: {default_trips: -1}\n",
     r"exp.yaml:4: loops.default_trips: expected a whole number >= 0, got -1"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nloops:\n  nodes: {while: 3}\n",
     r"exp.yaml:5: loops.nodes.while: expected a key '<subgraph>:<node>' such as '0:1'"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nloops:\n  nodes: {'0:1': many}\n",
     r"exp.yaml:5: loops.nodes.0:1: expected a whole number >= 0, got 'many'"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nloops: [3]\n",
     r"exp.yaml:4: loops: expected a mapping with default_trips and/or nodes"),
    ("models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\nlimits: {points: 0}\n",
     r"exp.yaml:4: limits.points: expected a whole number >= 1, the most design points `run` accepts "
     r"\(default 100,000\), got 0"),
])
def test_bad_experiments_say_file_line_and_key(tmp_path, text, expected):
    path = write(tmp_path, text.replace("[M]", f"[{MODELS / 'interleaved_int8.tflite'}]"))
    with pytest.raises(ConfigError, match=expected):
        exp = load_experiment(path)
        design_points(exp)  # a sweep key path that does not exist fails when the point is built


@pytest.mark.slow
def test_loop_trips_reach_the_simulation_and_the_record(tmp_path):
    plain = load_experiment(small_experiment(tmp_path, models=("lstm_gru_float",)))
    doubled = load_experiment(small_experiment(tmp_path, models=("lstm_gru_float",), name="doubled",
                                               extra="loops:\n  nodes: {'0:1': 20, '0:2': 20}\n"))
    assert doubled.loops.nodes == {"0:1": 20, "0:2": 20}
    assert {p.id for p in design_points(plain)}.isdisjoint(p.id for p in design_points(doubled))
    runs = [run_experiment(e, tmp_path / e.name, executor=SerialExecutor()) for e in (plain, doubled)]
    plain_cpu, doubled_cpu = (next(r for r in o.records if r["variant"] == "cpu_only") for o in runs)
    assert plain_cpu["loops"] == [{"node": "0:1", "op": "WHILE", "trips": 10, "source": "constant"},
                                  {"node": "0:2", "op": "WHILE", "trips": 10, "source": "constant"}]
    assert [loop["source"] for loop in doubled_cpu["loops"]] == ["override", "override"]
    assert doubled_cpu["latency_us"] > 1.8 * plain_cpu["latency_us"]
    assert "Loop trip counts" in (tmp_path / "doubled" / "report.md").read_text()


@pytest.mark.slow
def test_rerun_skips_cached_points(tmp_path):
    exp = load_experiment(small_experiment(tmp_path))
    first = run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    assert first.cached == 0 and first.computed == 6
    again = run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    assert again.cached == 6 and again.computed == 0
    assert [r["latency_us"] for r in again.records] == [r["latency_us"] for r in first.records]


def test_a_bad_sweep_value_is_refused_at_load_with_its_line(tmp_path):
    path = small_experiment(tmp_path, sweep="sweeps:\n  edgetpu_usb.link.bandwidth: [fast, 1 GB/s]")
    with pytest.raises(ConfigError, match=r"exp.yaml:\d+: sweeps.edgetpu_usb.link.bandwidth: value 'fast': .*rate"):
        load_experiment(path)


@pytest.mark.slow
def test_a_failing_point_is_recorded_and_does_not_lose_the_others(tmp_path):
    # The Atan model has a custom op no kernel implements: each of its points fails at prepare.
    path = write(tmp_path, f"""\
models: [{MODELS / 'atan_custom.tflite'}, {MODELS / 'interleaved_int8.tflite'}]
host: host_cpu
variants: [{{name: cpu_only, accelerators: []}}, {{name: usb, accelerators: [edgetpu_usb]}}]
""")
    out = run_experiment(load_experiment(path), tmp_path / "out", executor=SerialExecutor())
    failed = [r for r in out.records if r["status"] == "error"]
    assert len(failed) == 2 and all("Encountered unresolved custom op: Atan." in r["error"] for r in failed)
    assert [r["status"] for r in out.records if r["model_name"] == "interleaved_int8"] == ["ok", "ok"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "unresolved custom op: Atan" in report


@pytest.mark.slow
def test_jobs_1_and_jobs_n_give_byte_identical_results(tmp_path):
    exp = load_experiment(small_experiment(tmp_path, sweep="sweeps:\n  max_delegated_partitions: [1, 2]"))
    run_experiment(exp, tmp_path / "one", jobs=1, use_cache=False)
    run_experiment(exp, tmp_path / "two", jobs=2, use_cache=False)
    run_experiment(exp, tmp_path / "again", jobs=2, use_cache=False)
    for name in ("results.json", "results.csv", "report.md"):
        one = (tmp_path / "one" / name).read_bytes()
        assert one == (tmp_path / "two" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name


@pytest.mark.slow
def test_numbers_agree_across_json_csv_and_md(tmp_path):
    exp = load_experiment(small_experiment(tmp_path))
    run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    rows = list(csv.DictReader((tmp_path / "out" / "results.csv").open()))
    md = (tmp_path / "out" / "report.md").read_text()
    assert " Host host_cpu: not calibrated: a Cortex-A76 core" in md  # whether the baseline was checked
    assert len(rows) == len(data["points"]) == 6
    for point, row in zip(data["points"], rows):
        assert row["id"] == point["id"]
        assert float(row["latency_us"]) == pytest.approx(point["latency_us"])
        assert f"{point['latency_us']:,.2f}" in md


@pytest.mark.slow
def test_the_report_follows_the_experiment_files_order(tmp_path):
    sweep = "sweeps:\n  max_delegated_partitions: [2, 1]\n  edgetpu_usb.link.bandwidth: [1 GB/s]"
    exp = load_experiment(small_experiment(tmp_path, sweep=sweep, models=("mobilenet_v2_035_96_int8",
                                                                          "interleaved_int8")))
    run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    rows = list(csv.DictReader((tmp_path / "out" / "results.csv").open()))
    assert [(r["model_name"], r["variant"]) for r in rows][:4] == [
        ("mobilenet_v2_035_96_int8", "cpu_only"), ("mobilenet_v2_035_96_int8", "usb"),
        ("mobilenet_v2_035_96_int8", "usb"), ("mobilenet_v2_035_96_int8", "dsp")]
    # One column per swept key, in the file's order, numbers in SI base units (the unit in the header).
    assert list(rows[1])[4:6] == ["max_delegated_partitions", "edgetpu_usb.link.bandwidth [B/s]"]
    assert (rows[1]["max_delegated_partitions"], rows[1]["edgetpu_usb.link.bandwidth [B/s]"]) == ("1", "1000000000")
    md = (tmp_path / "out" / "report.md").read_text()
    assert "on 3 variants (cpu_only, usb, dsp), sweeping max_delegated_partitions over 1, 2; " in md


@pytest.mark.slow
def test_every_written_file_honours_the_umask(tmp_path):
    exp = load_experiment(small_experiment(tmp_path, models=("interleaved_int8",)))
    old = os.umask(0o022)
    try:
        run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    finally:
        os.umask(old)
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    kinds = {p.suffix for p in written} | {p.parent.name for p in written}
    assert {".md", ".html", ".json", ".csv", ".png", ".sqlite", "traces", "layers", "plots"} <= kinds
    assert {oct(p.stat().st_mode & 0o777) for p in written} == {"0o644"}


LONG_SWEEP = ("sweeps:\n  edgetpu_usb.compute.rows: [8, 16, 32, 64, 128, 256]\n"
              "  edgetpu_usb.compute.cols: [8, 16, 32, 64]")


def stored(out: Path, status: str = "ok") -> set[str]:
    """The ids of points committed to the run's results store (read while the run may be writing it)."""
    if not (out / "points.sqlite").exists():
        return set()
    with contextlib.closing(sqlite3.connect(f"file:{out / 'points.sqlite'}?mode=ro", uri=True)) as db:
        try:
            return {i for (i,) in db.execute("SELECT id FROM points WHERE status = ?", (status,))}
        except sqlite3.OperationalError:  # the run has created the file but not the table yet
            return set()


def _run_cli(args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "accelsim", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


# `accelsim run` whose results store, once it has committed 3 points, says so on stdout and waits for
# stdin: the test stops it there (an event, not a race against the run's end).
_PAUSING_RUN = """
import sys
from accelsim.cli import main as cli
from accelsim.experiments import store
put_many = store.ResultStore.put_many
def pausing(self, records):
    put_many(self, records)
    pausing.count += len(records)
    if pausing.count >= 3 and not pausing.said:
        pausing.said = True
        print("committed", pausing.count, flush=True)
        sys.stdin.read()
pausing.count, pausing.said = 0, False
store.ResultStore.put_many = pausing
sys.exit(cli.main(sys.argv[1:]))
"""


def _committed(proc: subprocess.Popen) -> bool:
    """Whether the pausing run said it committed (reading past the point count `run` prints first)."""
    line = proc.stdout.readline()
    while line and not line.startswith("committed "):
        line = proc.stdout.readline()
    return line.startswith("committed ")


def _pausing_run(path: Path, out: Path, jobs: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", _PAUSING_RUN, "run", str(path), "--out", str(out), "--jobs",
                             str(jobs)], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_killing_a_run_midway_keeps_finished_points_and_a_rerun_completes_it(tmp_path):
    path = small_experiment(tmp_path, sweep=LONG_SWEEP, name="killed", models=("interleaved_int8",))
    total = len(design_points(load_experiment(path)))
    out = tmp_path / "out"
    proc = _pausing_run(path, out, jobs=1)
    assert _committed(proc)  # blocks until the run is paused mid-way
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    done = len(stored(out))
    assert 3 <= done < total
    report = (out / "report.md").read_text()
    assert "missing" in report.lower()
    data = json.loads((out / "results.json").read_text())
    assert len(data["points"]) == done
    assert not list(out.rglob(".*.json.*")), "a temporary file was left behind"
    rerun = _run_cli(["run", str(path), "--out", str(out), "--jobs", "1"])
    stdout, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert f"({done} cached, {total - done} run, 0 failed)" in stdout
    assert len(json.loads((out / "results.json").read_text())["points"]) == total


@pytest.mark.slow
def test_a_killed_worker_process_loses_nothing_finished(tmp_path):
    path = small_experiment(tmp_path, sweep=LONG_SWEEP, name="worker", models=("mobilenet_v2_100_224_int8",))
    total = len(design_points(load_experiment(path)))
    out = tmp_path / "out"
    proc = _pausing_run(path, out, jobs=2)
    assert _committed(proc)  # the run is paused with its workers alive
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert children, "no worker processes found"
    os.kill(int(children[0]), signal.SIGKILL)
    _, err = proc.communicate(input="", timeout=120)  # closing stdin resumes the run: its pool finds the dead worker
    assert proc.returncode == 1 and "worker process died" in err and "Traceback" not in err, err
    rerun = _run_cli(["run", str(path), "--out", str(out), "--jobs", "2"])
    stdout, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert len(json.loads((out / "results.json").read_text())["points"]) == total


@pytest.mark.slow
def test_stale_cache_entries_are_counted_and_pruned_on_request(tmp_path):
    sweep = "sweeps:\n  max_delegated_partitions: [1, 2]"
    exp = load_experiment(small_experiment(tmp_path, sweep=sweep, models=("interleaved_int8",)))
    first = run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    assert first.stale == 0 and len(stored(tmp_path / "out")) == 5
    narrower = load_experiment(small_experiment(tmp_path, sweep="sweeps:\n  max_delegated_partitions: [1]",
                                                models=("interleaved_int8",)))
    kept = run_experiment(narrower, tmp_path / "out", executor=SerialExecutor())
    assert kept.stale == 2 and not kept.pruned and kept.cached == 3  # usb and dsp at 2 partitions
    assert len(stored(tmp_path / "out")) == 5
    pruned = run_experiment(narrower, tmp_path / "out", executor=SerialExecutor(), prune_cache=True)
    assert pruned.stale == 2 and pruned.pruned and pruned.cached == 3
    assert stored(tmp_path / "out") == {r["id"] for r in pruned.records}
    assert run_experiment(narrower, tmp_path / "out", executor=SerialExecutor()).stale == 0


@pytest.mark.slow
def test_same_named_experiments_do_not_overwrite_each_others_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = load_experiment(small_experiment(tmp_path / "a", name="same", models=("interleaved_int8",)))
    other = load_experiment(small_experiment(tmp_path / "b", name="same", models=("interleaved_int8",)))
    first = run_experiment(one, executor=SerialExecutor())
    assert first.out_dir == Path("reports/same") and first.warnings == ()
    second = run_experiment(other, executor=SerialExecutor())
    assert second.out_dir.parent == Path("reports") and second.out_dir.name.startswith("same-")
    assert len(second.warnings) == 1 and str(tmp_path / "a" / "exp.yaml") in second.warnings[0]
    assert "another experiment named 'same'" in second.warnings[0] and str(second.out_dir) in second.warnings[0]
    assert run_experiment(one, executor=SerialExecutor()).out_dir == Path("reports/same")  # each keeps its own
    assert run_experiment(other, executor=SerialExecutor()).out_dir == second.out_dir
    sources = {json.loads((d / "experiment.json").read_text())["source"] for d in (first.out_dir, second.out_dir)}
    assert sources == {str(tmp_path / "a" / "exp.yaml"), str(tmp_path / "b" / "exp.yaml")}
    forced = run_experiment(other, "reports/same", executor=SerialExecutor())  # an explicit folder is obeyed
    assert forced.out_dir == Path("reports/same") and "held the report of" in forced.warnings[0]


def test_every_problem_of_an_experiment_is_reported_in_one_pass(tmp_path):
    """Unknown keys, missing and corrupt models, broken and unknown configs and bad sweeps, all at once."""
    (tmp_path / "trunc.tflite").write_bytes((MODELS / "interleaved_int8.tflite").read_bytes()[:1000])
    (tmp_path / "bad_hw.yaml").write_text((ROOT / "hw_configs" / "edgetpu_usb.yaml").read_text()
                                          .replace("name: edgetpu_usb", "name: bad").replace("500 MHz", "500 MHZZ"))
    path = write(tmp_path, """\
name: bad
models: [missing.tflite, trunc.tflite]
host: host_cpu
colour: blue
variants:
  - {name: b, accelerators: [bad_hw.yaml]}
  - {name: c, accelerators: [edgetpu]}
  - {name: d, accelerators: [edgetpu_usb]}
sweeps:
  edgetpu_usb.link.bandwidth: [fast]
  max_delegated_partitions: [-1]
""")
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    errors = info.value.errors
    assert [e.split(": ")[1] for e in errors] == [
        "models[0]", "models[1]", "colour", "variants[0]", "variants[1].accelerators[0]",
        "sweeps.edgetpu_usb.link.bandwidth", "sweeps.max_delegated_partitions"]
    from accelsim.runtime.errors import ModelError
    from accelsim.runtime.read import load_model
    with pytest.raises(ModelError) as model_error:
        load_model(tmp_path / "trunc.tflite")
    assert errors[1] == f"{path}:2: models[1]: ModelError: {model_error.value}"
    assert "bad_hw.yaml:" in errors[3] and "clock: expected a frequency" in errors[3]
    assert errors[2].endswith("colour: unknown key; expected one of name, models, host, variants, sweeps, search, "
                              "limits, schedule, numerics, loops, reports, traces, best, pareto, generate, streams, "
                              "ops")


def test_accelerators_are_checked_even_when_the_host_is_unknown(tmp_path):
    (tmp_path / "hw.yaml").write_text("name: x\nkind: systolic\nclock: fast\n")
    path = write(tmp_path, f"models: [{MODELS / 'interleaved_int8.tflite'}]\nhost: hots_cpu\n"
                           "variants: [{name: a, accelerators: [hw.yaml]}]\n")
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    assert "host: 'hots_cpu' is not a shipped config" in info.value.errors[0]
    assert any("variants[0]: " in e and "hw.yaml:3: clock: expected a frequency" in e for e in info.value.errors)


def test_an_unknown_experiment_key_gets_a_did_you_mean(tmp_path):
    path = write(tmp_path, f"models: [{MODELS / 'interleaved_int8.tflite'}]\nhost: host_cpu\n"
                           "variants: [{name: a, accelerators: []}]\nschedul: sequential\n")
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    assert info.value.errors == (f"{path}:4: schedul: unknown key; did you mean 'schedule'?",)


def test_a_hardware_config_given_as_an_experiment_says_so():
    path = ROOT / "hw_configs" / "edgetpu_usb.yaml"
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    assert info.value.errors == (f"{path}: this is a hardware config, not an experiment; pass it with --hw to "
                                 "benchmark, or name it in an experiment's variants",)


@pytest.mark.slow
def test_point_ids_are_the_same_in_every_process_whatever_the_hash_seed(tmp_path):
    """hexagon_dsp claims with several dtypes (a frozenset): ids must not follow Python's salted string hashing."""
    path = tmp_path / "exp.yaml"
    path.write_text(f"name: ids\nmodels: [{MODELS / 'interleaved_int8.tflite'}]\nhost: host_cpu\n"
                    "variants:\n  - {name: dsp, accelerators: [hexagon_dsp]}\n"
                    "  - {name: usb_by_cost, accelerators: [edgetpu_usb, hexagon_dsp], assign: cost}\n"
                    "  - {name: usb_in_order, accelerators: [edgetpu_usb, hexagon_dsp]}\n")
    script = ("import sys; from accelsim.experiments.experiment import load_experiment; "
              "from accelsim.experiments.points import design_points; "
              "print(' '.join(p.id for p in design_points(load_experiment(sys.argv[1]))))")
    ids = {tuple(subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                                check=True, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout.split())
           for seed in ("0", "1", "2", "3")}
    assert len(ids) == 1
    (one,) = ids
    assert len(set(one)) == 3  # assign is part of the identity too


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_experiment_loads_and_its_points_resolve(path):
    experiment = load_experiment(path)
    if experiment.search.strategy == "random":
        # examples/random_search.yaml is the 100,000-point search the README times; resolve a slice of it
        assert experiment.search.samples == 100_000
        experiment = dataclasses.replace(experiment, search=dataclasses.replace(experiment.search, samples=50))
    points = design_points(experiment)
    assert points and all(p.system is not None for p in points)
    assert len({p.id for p in points}) == len(points)
