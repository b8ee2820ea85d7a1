"""Which points an experiment traces (traces: pareto | all | none, best: k), the area proxies, pareto.color."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from accelsim.core.pareto import traced_ids
from accelsim.experiments.executors import SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.run import report_context, run_experiment
from accelsim.hardware.config import ConfigError
from accelsim.reports.results import DETAIL_KEYS, summary
from tests.accelsim.test_experiment import MODELS, small_experiment, write

SWEEP = "sweeps:\n  edgetpu_usb.link.bandwidth: [40 MB/s, 320 MB/s, 1 GB/s]\n  hexagon_dsp.clock: [500 MHz, 1 GHz]"


def _run(tmp_path, traces: str, best: int = 1):
    extra = f"traces: {traces}\nbest: {best}\n"
    exp = load_experiment(small_experiment(tmp_path, sweep=SWEEP, extra=extra, name=traces,
                                           models=("interleaved_int8",)))
    return run_experiment(exp, tmp_path / traces, executor=SerialExecutor())


def _stored(folder) -> dict[str, dict]:
    with sqlite3.connect(folder / "points.sqlite") as db:
        return {i: json.loads(text) for i, text in db.execute("SELECT id, record FROM points")}


def _files(folder, sub: str) -> set[str]:
    return {p.name for p in (folder / sub).iterdir()} if (folder / sub).is_dir() else set()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("traces")
    return tmp, {t: _run(tmp, t) for t in ("all", "pareto", "none")}


@pytest.mark.slow
def test_pareto_traces_only_the_fronts_and_the_fastest(runs):
    tmp, out = runs
    records = out["pareto"].records
    chosen = traced_ids(records, "pareto", 1)
    assert 0 < len(chosen) < len(records) == 6
    traced = [r for r in records if r["id"] in chosen]
    # The traced points were re-simulated for their details; the others carry none.
    assert all("events" in r for r in traced)
    assert all(not set(DETAIL_KEYS) & set(r) for r in records if r["id"] not in chosen)
    assert len(_files(tmp / "pareto", "traces")) == len(_files(tmp / "pareto", "layers")) == len(chosen)
    assert len([n for n in _files(tmp / "pareto", "plots") if n.startswith("gantt_")]) == len(chosen)
    # The store never holds a timeline under traces: pareto, only under all.
    assert not any("events" in r for r in _stored(tmp / "pareto").values())
    assert all("events" in r for r in _stored(tmp / "all").values())


@pytest.mark.slow
def test_re_simulated_points_match_a_run_that_traced_everything(runs):
    tmp, out = runs
    everything = {r["id"]: r for r in out["all"].records}
    for r in out["pareto"].records:
        assert summary(r) == summary(everything[r["id"]])
        if "events" in r:
            assert r == everything[r["id"]]
    for name in _files(tmp / "pareto", "traces"):
        assert (tmp / "pareto" / "traces" / name).read_bytes() == (tmp / "all" / "traces" / name).read_bytes()
    assert len(_files(tmp / "all", "traces")) == len(everything)
    md = (tmp / "pareto" / "report.md").read_text()
    assert "Traced: the points on a Pareto front and the 1 fastest" in md


@pytest.mark.slow
def test_none_traces_nothing_but_still_shows_the_fronts(runs):
    tmp, out = runs
    assert not _files(tmp / "none", "traces") and not _files(tmp / "none", "layers")
    assert not [n for n in _files(tmp / "none", "plots") if n.startswith("gantt_")]
    md = (tmp / "none" / "report.md").read_text()
    assert "## Pareto fronts" in md and "## Design points in detail" not in md
    assert "pareto_interleaved_int8.png" in _files(tmp / "none", "plots")


@pytest.mark.slow
def test_traces_all_over_a_store_of_summaries_simulates_the_details_again(runs):
    """A rerun under traces: all of points stored by a traces: none run reuses them and traces every one (it was a
    KeyError: 'events')."""
    tmp, out = runs
    exp = load_experiment(small_experiment(tmp, sweep=SWEEP, extra="traces: all\nbest: 1\n", name="all",
                                           models=("interleaved_int8",)))
    shutil.copytree(tmp / "none", tmp / "none_then_all")  # the other tests read the "none" run as it was
    again = run_experiment(exp, tmp / "none_then_all", executor=SerialExecutor())
    assert again.cached == 6 and again.computed == 0
    assert again.records == out["all"].records
    assert _files(tmp / "none_then_all", "traces") == _files(tmp / "all", "traces")


@pytest.mark.slow
def test_records_carry_both_area_proxies_of_their_system(runs):
    _, out = runs
    by_variant = {r["variant"]: r for r in out["none"].records}
    # host_cpu: 32 MACs per cycle, no sized level; edgetpu_usb: a 64 x 64 array and 8 MiB of SRAM.
    assert (by_variant["cpu_only"]["area_macs"], by_variant["cpu_only"]["area_onchip_bytes"]) == (32, 0)
    assert (by_variant["usb"]["area_macs"], by_variant["usb"]["area_onchip_bytes"]) == (32 + 4096, 8 << 20)
    assert by_variant["dsp"]["area_macs"] == 32 + 512


HEAD = "models: [M]\nhost: host_cpu\nvariants: [{name: a, accelerators: [edgetpu_usb]}]\n" \
       "sweeps:\n  edgetpu_usb.link.bandwidth: [1 GB/s]\n"


@pytest.mark.parametrize("extra, expected", [
    ("traces: paretto\n", r"exp.yaml:6: traces: expected one of pareto, all, none, got 'paretto'; "
                          r"did you mean 'pareto'\?"),
    ("best: -1\n", r"exp.yaml:6: best: expected a whole number >= 0 of fastest points to trace, got -1"),
    ("pareto: {color: edgetpu_usb.link.bandwith}\n",
     r"exp.yaml:6: pareto.color: 'edgetpu_usb.link.bandwith' is not a swept key; did you mean "
     r"'edgetpu_usb.link.bandwidth'\? swept keys: edgetpu_usb.link.bandwidth"),
    ("pareto: {colour: x}\n", r"exp.yaml:6: pareto.colour: unknown key; did you mean 'color'\?"),
    ("pareto: [x]\n", r"exp.yaml:6: pareto: expected a mapping like \{color: <swept key>\}, got \['x'\]"),
])
def test_bad_trace_and_pareto_keys_say_file_line_and_key(tmp_path, extra, expected):
    path = write(tmp_path, (HEAD + extra).replace("[M]", f"[{MODELS / 'interleaved_int8.tflite'}]"))
    with pytest.raises(ConfigError, match=expected):
        load_experiment(path)


def test_pareto_color_defaults_to_the_first_swept_key(tmp_path):
    exp = load_experiment(small_experiment(tmp_path, sweep=SWEEP, models=("interleaved_int8",)))
    assert (exp.traces, exp.best, exp.pareto_color) == ("pareto", 5, None)
    chosen = load_experiment(small_experiment(tmp_path, sweep=SWEEP, models=("interleaved_int8",), name="c",
                                              extra="pareto: {color: hexagon_dsp.clock}"))
    assert chosen.pareto_color == "hexagon_dsp.clock"
    # What the report is told: the choice, else the first swept key in the file's order.
    assert report_context(exp, 0)["pareto_color"] == "edgetpu_usb.link.bandwidth"
    assert report_context(chosen, 0)["pareto_color"] == "hexagon_dsp.clock"
