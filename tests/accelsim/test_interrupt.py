"""Ctrl-C during `accelsim run` (issue 31 C13): the first says at once what it does and writes the partial report
quickly; a second stops at once with the results store intact. Real subprocesses, real SIGINTs."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# `accelsim run` (the default experiment) that pauses before its first commit after one that stored points, saying
# on stdout how many points the store holds, until stdin closes; with "--hold-report" it also pauses as the (partial)
# report starts.
_HARNESS = r"""
import sys
from accelsim.cli import main as cli
from accelsim.experiments import run, store
hold_report = sys.argv.pop(1) == "--hold-report"
put_many = store.ResultStore.put_many
def pausing(self, records):
    if pausing.count and not pausing.said:
        pausing.said = True
        print("committed", pausing.count, flush=True)
        sys.stdin.read()
    put_many(self, records)
    pausing.count += len(records)
pausing.count, pausing.said = 0, False
store.ResultStore.put_many = pausing
write_report = run.write_report
def holding(*args, **kw):
    if hold_report:
        print("reporting", flush=True)
        sys.stdin.read()
    return write_report(*args, **kw)
run.write_report = holding
sys.exit(cli.main(sys.argv[1:]))
"""


def _run(tmp_path: Path, hold_report: bool) -> tuple[subprocess.Popen, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", _HARNESS, "--hold-report" if hold_report else "--no-hold",
                             "run", "--out", str(tmp_path / "out"), "--jobs", "1"], cwd=tmp_path, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert first == "default: 6 design points\n", (first, proc.stderr.read() if proc.poll() is not None else "")
    line = proc.stdout.readline()  # after run's first line, the point count
    assert line.startswith("committed "), (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc, int(line.split()[1])


def _stored(out: Path) -> int:
    with sqlite3.connect(out / "points.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return db.execute("SELECT count(*) FROM points").fetchone()[0]


@pytest.mark.slow
def test_a_first_ctrl_c_says_what_it_does_and_writes_the_partial_report_within_5_s(tmp_path):
    proc, saved = _run(tmp_path, hold_report=False)
    assert saved >= 1
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=5)  # the bound: the partial report is written within 5 s
    assert proc.returncode == 130, err
    assert err.lstrip("\n").startswith(f"stopping: {saved} point{'s' * (saved != 1)} saved, writing the partial "
                                       "report (Ctrl-C again stops at once)\n"), err
    report = (tmp_path / "out" / "report.md").read_text()
    assert "This partial report of an interrupted run leaves out the plots" in report
    assert "Missing design points" in report and _stored(tmp_path / "out") == saved


@pytest.mark.slow
def test_a_second_ctrl_c_stops_at_once_with_the_store_intact(tmp_path):
    proc, saved = _run(tmp_path, hold_report=True)
    proc.send_signal(signal.SIGINT)
    assert proc.stdout.readline() == "reporting\n"  # the first one is writing the partial report
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=5)
    assert proc.returncode == 130, err
    assert f"stopped at once; {saved} point{'s' * (saved != 1)} in the store; no report written" in err
    assert _stored(tmp_path / "out") == saved
    assert not (tmp_path / "out" / "report.md").exists()
