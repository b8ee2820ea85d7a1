"""Host-only baselines, slower-than-host warnings, and `accelsim compare` (configs or results.json side by side)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsim.cli.main import main
from accelsim.hardware.config import load_system
from accelsim.reports.labels import slower_than_host_points
from accelsim.reports.results import record
from accelsim.simulation.analysis import simulate_model
from accelsim.tools.compare import Side, compare, host_only, load_results, simulate_sides, slower_than_host

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "models"
HW = ROOT / "hw_configs"
INTERLEAVED = str(FIXTURES / "interleaved_int8.tflite")
MOBILENET = str(FIXTURES / "mobilenet_v2_035_96_int8.tflite")


def _system(*accels: str):
    return load_system(str(HW / "host_cpu.yaml"), [str(HW / f"{a}.yaml") for a in accels])


def test_slower_than_host_says_so_in_words_and_only_then():
    assert slower_than_host("m", 100.0, 100.0) is None and slower_than_host("m", 50.0, 100.0) is None
    text = slower_than_host("m on x", 400.0, 100.0)
    assert text == ("delegation makes m on x slower than the host alone: 400.0 µs against 100.0 µs host-only "
                    "(0.25×)")


def test_benchmark_prints_host_only_latency_speedup_and_warns_when_slower(capsys):
    # the host _system() names, not the default (kryo385_cpu)
    assert main(["benchmark", INTERLEAVED, "--hw", "edgetpu_usb", "--host", "host_cpu", "--num-runs", "1", "--json"]) \
        == 0
    data = json.loads(capsys.readouterr().out)
    host = simulate_model(INTERLEAVED, host_only(_system("edgetpu_usb"))).latency * 1e6
    assert data["host_only_us"] == pytest.approx(host)
    # the record's speed-up (accelsim.reports.results.speedup), rounded as experiments round
    assert data["speedup"] == pytest.approx(host / data["simulated_us"]["latency"], abs=5e-4) and data["speedup"] < 1
    assert main(["benchmark", INTERLEAVED, "--hw", "edgetpu_usb", "--host", "host_cpu", "--num-runs", "1"]) == 0
    out, err = capsys.readouterr()
    assert f"Host alone (host_cpu, simulated): {host:.1f} µs; speed-up {data['speedup']:.2f}x" in out
    assert "accelsim benchmark: warning: delegation makes this model slower than the host alone" in err


@pytest.mark.slow
def test_benchmark_of_a_faster_design_does_not_warn(capsys):
    model = str(FIXTURES / "mobilenet_v2_100_224_int8.tflite")
    assert main(["benchmark", model, "--hw", "edgetpu_pcie", "--num-runs", "1", "--warmup-runs", "0", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["speedup"] > 1 and "warning" not in err


@pytest.mark.slow
def test_compare_configs_gives_each_column_and_its_difference_from_the_first(tmp_path, capsys):
    plot = tmp_path / "cmp.png"
    assert main(["compare", MOBILENET, INTERLEAVED, "--hw", "edgetpu_usb", "--hw", "hexagon_dsp",
                 "--host", "host_cpu", "--plot", str(plot), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["label"] for c in data["columns"]] == ["edgetpu_usb", "hexagon_dsp"]
    rows = {r["model"]: r for r in data["models"]}
    usb = simulate_model(MOBILENET, _system("edgetpu_usb"))
    dsp = simulate_model(MOBILENET, _system("hexagon_dsp"))
    first, second = rows["mobilenet_v2_035_96_int8"]["latency_us"]
    assert first == {"value": pytest.approx(usb.latency * 1e6, abs=1e-3), "pct": None}
    assert second["pct"] == pytest.approx(100 * (dsp.latency - usb.latency) / usb.latency, abs=1e-3)
    transfer = rows["mobilenet_v2_035_96_int8"]["transfer_bytes"]
    assert [c["value"] for c in transfer] == [usb.transfer_bytes, 0] and transfer[1]["pct"] == -100.0
    assert [c["value"] for c in rows["interleaved_int8"]["partitions"]] == [1, 2]
    energy = rows["mobilenet_v2_035_96_int8"]["energy_uj"]
    assert [c["value"] for c in energy] == pytest.approx([usb.energy * 1e6, dsp.energy * 1e6], abs=1e-6)
    host = simulate_model(INTERLEAVED, _system()).latency
    slow = round(host / simulate_model(INTERLEAVED, _system("hexagon_dsp")).latency, 3)
    assert f"Warning: delegation makes interleaved_int8 on hexagon_dsp slower than the host alone ({slow:.2f}×)" \
        in data["notes"] and slow < 1
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and data["plot"] == str(plot)


def test_compare_text_table_joins_accelerators_with_commas(tmp_path, capsys):
    assert main(["compare", INTERLEAVED, "--hw", "edgetpu_usb", "--hw", "edgetpu_usb,hexagon_dsp",
                 "--plot", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    # one line per column (labels may be long; the output fits 120 characters), then a header row per table
    assert out.startswith("[0] edgetpu_usb\n[1] edgetpu_usb,hexagon_dsp\ninterleaved_int8:\n")
    assert out.splitlines()[3].split() == ["[0]", "[1]"]
    assert "  Latency (µs)" in out and "(+" in out or "(-" in out
    assert out.rstrip().endswith(f"bar chart: {tmp_path / 'c.png'}")


def _results_file(path: Path, name: str, version: str | None, models: list[str], accel: str) -> Path:
    points = []
    for m in models:
        sim = simulate_model(m, _system(accel))
        points.append(record(sim, point_id=name, model=m, variant=accel, sweep={}))
    doc = {"experiment": name, "points": points, "missing": []}
    if version is not None:
        doc["version"] = version
    path.write_text(json.dumps(doc))
    return path


def test_compare_results_files_side_by_side(tmp_path, capsys):
    x = _results_file(tmp_path / "x.json", "x", "0.1.0", [MOBILENET], "edgetpu_usb")
    y = _results_file(tmp_path / "y.json", "y", "0.1.0", [MOBILENET], "edgetpu_pcie")
    assert main(["compare", str(x), str(y), "--plot", str(tmp_path / "c.png"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["label"] for c in data["columns"]] == ["x: edgetpu_usb", "y: edgetpu_pcie"]
    assert data["notes"] == []
    pcie = simulate_model(MOBILENET, _system("edgetpu_pcie")).latency * 1e6
    assert data["models"][0]["latency_us"][1]["value"] == pytest.approx(pcie, abs=1e-3)


def test_columns_of_same_named_experiments_are_told_apart_by_file(tmp_path):
    x = _results_file(tmp_path / "x.json", "same", "0.1.0", [INTERLEAVED], "edgetpu_usb")
    y = _results_file(tmp_path / "y.json", "same", "0.1.0", [INTERLEAVED], "edgetpu_usb")
    labels = [s.label for s in compare([*load_results(x), *load_results(y)]).sides]
    assert labels == [f"{x}: same: edgetpu_usb", f"{y}: same: edgetpu_usb"]


def test_compare_says_when_versions_or_models_differ(tmp_path):
    x = _results_file(tmp_path / "x.json", "x", "0.1.0", [MOBILENET], "edgetpu_usb")
    y = _results_file(tmp_path / "y.json", "y", None, [INTERLEAVED], "edgetpu_usb")
    notes = compare([*load_results(x), *load_results(y)]).notes
    assert notes[0] == ("Note: the columns come from different accelsim versions (x: edgetpu_usb: 0.1.0, "
                        "y: edgetpu_usb: not recorded); cost models may have changed between them")
    assert "Note: x: edgetpu_usb has no result for interleaved_int8: the columns ran different models" in notes
    assert "Note: y: edgetpu_usb has no result for mobilenet_v2_035_96_int8: the columns ran different models" \
        in notes


@pytest.mark.parametrize("args, message", [
    (["compare", MOBILENET, "--hw", "edgetpu_usb"], "compare needs two or more columns"),
    (["compare", MOBILENET, "x.json", "--hw", "edgetpu_usb"], "give either models (with --hw twice or more) or "
     "results.json files, not both"),
    (["compare", str(FIXTURES / "atan_custom.tflite"), "--hw", "edgetpu_usb", "--hw", "hexagon_dsp"],
     "Encountered unresolved custom op: Atan."),
])
def test_compare_errors_are_one_line(args, message, tmp_path, capsys):
    assert main([*args, "--plot", str(tmp_path / "c.png")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("accelsim compare: error: ") and message in err


def test_compare_results_file_errors(tmp_path, capsys):
    x = _results_file(tmp_path / "x.json", "x", "0.1.0", [MOBILENET], "edgetpu_usb")
    bad = tmp_path / "bad.json"
    bad.write_text('{"experiment": "b"}')
    assert main(["compare", str(x), str(bad)]) == 1
    assert f"accelsim compare: error: {bad}: not an accelsim results.json (it has no 'points' list)" \
        in capsys.readouterr().err
    bad.write_text("{")
    assert main(["compare", str(x), str(bad)]) == 1
    assert f"{bad}: not JSON" in capsys.readouterr().err
    bad.write_text('{"points": [{"status": "error"}]}')
    assert main(["compare", str(x), str(bad)]) == 1
    assert f"{bad}: no successful design point to compare" in capsys.readouterr().err
    assert main(["compare", str(x), str(x), "--hw", "edgetpu_usb"]) == 1
    assert "--hw is for comparing models on configs" in capsys.readouterr().err


def test_simulated_sides_carry_speedup_over_the_host_alone():
    side, = simulate_sides([INTERLEAVED], [("dsp", _system("hexagon_dsp"))])
    rec = side.records["interleaved_int8"]
    host = simulate_model(INTERLEAVED, _system()).latency * 1e6
    assert rec["speedup"] == pytest.approx(host / rec["latency_us"], abs=5e-4)  # rounded as experiments round
    assert compare([side, Side("same", "", side.version, side.records)]).cell("interleaved_int8", 1,
                                                                               "latency_us").pct == 0.0


def test_report_lists_points_slower_than_the_host():
    fast = {"status": "ok", "accelerators": ["a"], "speedup": 2.0}
    slow = {"status": "ok", "accelerators": ["a"], "speedup": 0.5}
    host = {"status": "ok", "accelerators": [], "speedup": 1.0}
    failed = {"status": "error", "accelerators": ["a"], "speedup": None}
    assert slower_than_host_points([fast, slow, host, failed]) == [slow]


@pytest.mark.slow
def test_run_warns_about_points_slower_than_the_host(tmp_path, capsys):
    experiment = tmp_path / "slow.yaml"
    experiment.write_text(f"name: slow\nmodels: [{INTERLEAVED}]\nhost: host_cpu\nvariants:\n"
                          "  - {name: cpu_only, accelerators: []}\n  - {name: dsp, accelerators: [hexagon_dsp]}\n")
    assert main(["run", str(experiment), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    points = json.loads((tmp_path / "out" / "results.json").read_text())["points"]
    dsp = next(p for p in points if p["variant"] == "dsp")
    assert dsp["speedup"] < 1
    assert ("accelsim run: warning: delegation makes 1 of 1 accelerated design points slower than the host alone: "
            f"interleaved_int8 | dsp ({dsp['speedup']:.2f}×)") in err
    md = (tmp_path / "out" / "report.md").read_text()
    assert "Warning: delegation makes 1 of 1 accelerated points slower than the host alone" in md
    assert "slower than the host alone);" in md or "slower than the host alone)." in md


def test_slower_sentence_names_at_most_eight_points_and_counts_the_rest():
    from accelsim.reports.labels import slower_sentence

    def point(i, speedup):
        return {"status": "ok", "accelerators": ["dsp"], "speedup": speedup, "model_name": "m", "variant": "dsp",
                "sweep": {"dsp.clock": f"{i} MHz"}}

    points = [point(i, 0.5) for i in range(12)] + [point(99, 2.0), {**point(100, None), "accelerators": []}]
    text = slower_sentence(points, "design points")
    assert text.startswith("delegation makes 12 of 13 accelerated design points slower than the host alone: ")
    assert text.count("(0.50×)") == 8
    assert text.endswith("; and 4 more (results.csv)")
    assert slower_sentence(points, "design points", limit=3).count("(0.50×)") == 3


def test_speedup_is_one_function_for_every_caller():
    """results.speedup: the host-only latency over the latency, to 3 places; None without both."""
    from accelsim.reports.results import speedup

    assert speedup(400.0, 100.0) == 4.0 and speedup(100.0, 300.0) == 0.333
    assert speedup(None, 100.0) is None and speedup(100.0, 0.0) is None and speedup(0.0, 5.0) is None


def test_compare_selects_metrics_and_columns_and_fits_120_characters(tmp_path, capsys):
    plot = str(tmp_path / "c.png")
    hw = ["--hw", "edgetpu_usb", "--hw", "hexagon_dsp", "--hw", "edgetpu_pcie", "--hw", "edgetpu_usb,hexagon_dsp",
          "--hw", "ethos_u55_128", "--hw", "ethos_u65_256"]
    assert main(["compare", MOBILENET, *hw, "--plot", plot]) == 0
    printed = capsys.readouterr()
    every = printed.out.splitlines()
    assert max(map(len, every)) <= 120  # six columns of 22 characters: they go to two tables per model
    assert sum(line.startswith("mobilenet_v2_035_96_int8: columns") for line in every) == 2
    assert "on ethos_u55_128 slower than the host alone" in printed.out + printed.err
    assert main(["compare", MOBILENET, *hw, "--plot", plot, "--metrics", "energy,latency", "--columns",
                 "3,hexagon_dsp"]) == 0
    printed = capsys.readouterr()
    assert "ethos_u55_128" not in printed.out + printed.err  # notes speak only of the columns shown
    chosen = printed.out.splitlines()
    assert chosen[:2] == ["[0] edgetpu_usb,hexagon_dsp", "[1] hexagon_dsp"]
    rows = [line.split()[0] for line in chosen if line.startswith("  ") and line.split()[0] in
            ("Energy", "Latency", "Partitions")]
    assert rows == ["Energy", "Latency"]
    for bad, said in ((["--metrics", "power"], "--metrics power: not a metric of this comparison; choose from "
                       "latency, speedup, energy"), (["--columns", "9"], "--columns 9: no such column; give "
                                                     "indices 0-5")):
        assert main(["compare", MOBILENET, *hw, "--plot", plot, *bad]) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and said in err


def test_compare_labels_rows_and_notes_as_the_report_does_and_points_to_what_to_change(tmp_path, capsys):
    """Issue 31 C14: the report's summary says 'Latency (µs)', 'Speed-up', 'Warning: ...' and links What to change;
    compare said 'latency (µs)', 'speed-up over the host alone (×)', 'warning: ...' and pointed nowhere."""
    assert main(["compare", INTERLEAVED, "--hw", "edgetpu_usb", "--hw", "hexagon_dsp", "--plot",
                 str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    rows = [line[2:].split("  ")[0] for line in out.splitlines() if line.startswith("  ") and line[2:3] != " "]
    assert rows[:6] == ["Latency (µs)", "Speed-up", "Energy (µJ)", "Partitions", "Delegated nodes", "Transfer (bytes)"]
    assert "Warning: delegation makes interleaved_int8 on hexagon_dsp slower than the host alone" in out
    assert "What to change: accelsim sensitivity MODEL --hw ..." in out
