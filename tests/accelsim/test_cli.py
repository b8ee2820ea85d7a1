"""The `accelsim` command line: inspect and ops on every fixture, help texts, errors."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import FIXTURES

from accelsim.cli.common import progress_bar as _progress_bar
from accelsim.cli.main import VERBS, build_parser, main, verb_function
from accelsim.core.pareto import traced_ids
from accelsim.experiments.experiment import shipped_configs
from accelsim.reports.results import LAYER_COLUMNS
from accelsim.runtime.read import load_model

FIXTURE_FILES = sorted(FIXTURES.glob("*.tflite"))
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_inspect_json_describes_every_operator(path, capsys):
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert set(info) >= {"model", "min_runtime_version", "operators", "tensors"}
    model = load_model(path)
    ops = model.subgraphs[0].operators
    assert [o["index"] for o in info["operators"]] == list(range(len(ops)))
    for row, op in zip(info["operators"], ops):
        assert set(row) >= {"index", "op", "version", "computed_version", "inputs", "outputs"}
        assert row["op"] == op.display_name and row["version"] == op.version
        assert [t["index"] for t in row["inputs"]] == list(op.inputs)
    assert info["min_runtime_version"] == (model.metadata_value("min_runtime_version") or b"").rstrip(b"\0").decode()


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_inspect_table(path, capsys):
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "min runtime version" in out
    for op in load_model(path).subgraphs[0].operators:
        assert op.display_name in out


def test_inspect_lists_ops_the_interpreter_lacks(capsys):
    main(["inspect", str(FIXTURES / "atan_custom.tflite")])
    assert "ops this model needs that accelsim lacks: Atan v1" in capsys.readouterr().out


def test_ops_prints_code_that_builds_the_selective_resolver(capsys, tmp_path):
    path = FIXTURES / "dilated_cnn_int8.tflite"
    assert main(["ops", str(path)]) == 0
    code = capsys.readouterr().out
    namespace: dict = {}
    exec(compile(code, "ops_output.py", "exec"), namespace)
    resolver = namespace["resolver"]
    for op in load_model(path).subgraphs[0].operators:
        assert resolver.find_op(op.op, op.version) is not None
    assert len(resolver.registrations()) == len({op.op for op in load_model(path).subgraphs[0].operators})


def test_ops_names_custom_ops_for_the_user_to_register(capsys):
    main(["ops", str(FIXTURES / "atan_custom.tflite")])
    assert 'resolver.add_custom("Atan", <your Registration>, min_version=1, max_version=1)' in capsys.readouterr().out


def _verbs():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(action.choices)


def test_top_level_help_lists_every_verb(capsys):
    """`accelsim`, `-h` and `--help` are the first things a newcomer types (a stray % once crashed them)."""
    for argv in (["--help"], ["-h"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
        out = capsys.readouterr().out
        assert all(f"    {verb}" in out for verb in _verbs())
    assert main([]) == 2
    assert "Run `accelsim COMMAND --help`" in capsys.readouterr().out
    result = subprocess.run([sys.executable, "-m", "accelsim", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "Traceback" not in result.stderr and "run" in result.stdout


@pytest.mark.parametrize("command", _verbs())
def test_every_command_has_help_with_examples(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and f"accelsim {command}" in out and "options:" in out


def test_errors_are_one_line_and_nonzero(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "missing.tflite")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "accelsim inspect: error: cannot read model file" in err
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    assert main(["inspect", str(bad)]) == 1
    assert "not a TFLite model" in capsys.readouterr().err


def test_module_entry_point_and_broken_pipe():
    path = FIXTURES / "mobilenet_v2_035_96_int8.tflite"
    cmd = f"{sys.executable} -m accelsim inspect {path} --json | head -1"
    result = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    assert result.stdout.strip() == "{" and "Error" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_run_with_no_argument_writes_the_default_report(tmp_path, capsys):
    out = tmp_path / "default"
    assert main(["run", "--out", str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "6 design points (0 cached, 6 run, 0 failed)" in printed
    for name in ("report.md", "report.html", "results.json", "results.csv"):
        assert (out / name).stat().st_size > 0
    pngs = list((out / "plots").glob("*.png"))
    assert len(pngs) >= 3 and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    traces = list((out / "traces").glob("*.json"))
    # traces: pareto (the default): the points of the Pareto fronts and the 5 fastest.
    points = json.loads((out / "results.json").read_text())["points"]
    assert len(traces) == len(traced_ids(points, "pareto", 5)) >= 5
    events = json.loads(traces[0].read_text())["traceEvents"]
    assert any(e["ph"] == "X" for e in events)
    assert main(["run", "--out", str(out), "--jobs", "1"]) == 0
    assert "(6 cached, 0 run, 0 failed)" in capsys.readouterr().out


def test_benchmark_json_and_text(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["benchmark", model, "--hw", "edgetpu_usb", "--num-runs", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["wallclock_us"]["runs"]) == 3 and data["simulated_us"]["latency"] > 0
    assert data["delegated_nodes"] == 20
    # the default host, named with what it is calibrated against
    assert data["host"] == "kryo385_cpu"
    assert data["host_calibration"].startswith("calibrated against TFLite's hosted-models table, Pixel 3")
    assert main(["benchmark", model, "--hw", "hexagon_dsp", "--host", "host_cpu", "--num-runs", "2",
                 "--enable-op-profiling"]) == 0
    text = capsys.readouterr().out
    # the host is named with what its numbers were checked against (here: nothing)
    assert "\nHost host_cpu: not calibrated: a Cortex-A76 core" in text
    assert main(["benchmark", model, "--host", "host_x86", "--num-runs", "1"]) == 0
    assert "\nHost host_x86: calibrated against LiteRT (XNNPACK, one thread)" in capsys.readouterr().out
    assert "count=2 first=" in text and "Simulated latency in µs:" in text and "[node type]" in text
    assert "[avg µs]" in text and " 0.0000 " not in text  # µs with 3 decimals: small nodes keep their digits
    # The report's op profile text (benchmark_model's layout): Run Order has one row per node.
    run_order = text[text.index("== Run Order =="):text.index("== Top by Computation Time ==")].splitlines()
    profile = [line for line in run_order if line.startswith("\t") and "[node type]" not in line]
    assert len(profile) == 20 and all(float(line.split("\t")[3]) > 0 for line in profile)


def test_benchmark_per_layer_prints_the_layers_csv(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["benchmark", model, "--hw", "edgetpu_usb", "--num-runs", "1", "--per-layer", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["layers"]) == data["total_nodes"] and data["energy_uj"] > 0
    assert {r["bound"] for r in data["layers"]} <= {"compute", "sram", "dram", "link"}
    assert main(["benchmark", model, "--hw", "edgetpu_usb", "--num-runs", "1", "--per-layer"]) == 0
    text = capsys.readouterr().out
    table = text.split("Per-layer (simulated; the columns of a report's layers/<point>.csv):\n")[1]
    lines = table.splitlines()
    assert lines[0] == ",".join(LAYER_COLUMNS) and len(lines) == 1 + data["total_nodes"]
    assert [int(line.split(",")[0]) for line in lines[1:]] == [r["node"] for r in data["layers"]]


def test_benchmark_shows_loop_trips_from_the_run_and_takes_overrides(capsys):
    model = str(FIXTURES / "lstm_gru_float.tflite")
    assert main(["benchmark", model, "--num-runs", "1", "--warmup-runs", "0"]) == 0
    text = capsys.readouterr().out
    assert "WHILE node 0:1: 10 trips (run)" in text and "WHILE node 0:2: 10 trips (run)" in text
    assert main(["benchmark", model, "--num-runs", "1", "--warmup-runs", "0", "--loop-trips", "0:2=4",
                 "--loop-trips", "7", "--json"]) == 0
    loops = json.loads(capsys.readouterr().out)["loops"]
    # the loops of the point's record, as results.json writes them
    assert [(loop["node"], loop["trips"], loop["source"]) for loop in loops] == [("0:1", 10, "run"),
                                                                                ("0:2", 4, "override")]


@pytest.mark.parametrize("value", ["x", "-1", "0:1", "a:b=3", "0:1:2=3", "0:1=-2"])
def test_loop_trips_option_refuses_bad_values(value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["benchmark", str(FIXTURES / "lstm_gru_float.tflite"), "--loop-trips", value])
    assert exit_info.value.code == 2
    assert "--loop-trips" in capsys.readouterr().err


def test_diff_prints_inference_diff_layout(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["diff", model, "--hw", "edgetpu_usb", "--num-runs", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["Delegation: edgetpu_usb took 20 of 20 nodes", "Inputs: random (seed 0)",
                         "Num evaluation runs: 2"]
    assert "avg_error=0 steps (0 real)," in lines[-1]


def test_validate_reports_every_error_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nkind: systolic\nclock: fast\n")
    assert main(["validate", str(bad), "hw_configs/edgetpu_usb.yaml"]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:3: clock: expected a frequency" in out and "edgetpu_usb.yaml: ok" in out


def test_inspect_with_hw_and_delegate_shows_claims_and_reasons(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["inspect", model, "--hw", "hexagon_dsp"]) == 0
    out = capsys.readouterr().out
    assert "delegation: 19 of 20 nodes claimed" in out and "version 3 above max 2" in out
    assert main(["inspect", model, "--delegate", "accelerator", "--delegate-option", "config=edgetpu_usb",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["delegation"]
    assert all(r["claimed"] and r["delegate"] == "edgetpu_usb" for r in rows)
    assert main(["inspect", model, "--delegate", "nope"]) == 1
    assert "Unknown delegate 'nope'; available: accelerator" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal_and_silent_on_a_pipe():
    piped, terminal = io.StringIO(), _Terminal()
    for stream in (piped, terminal):
        with _progress_bar("run", stream) as show:
            for k in range(1, 51):
                show(k, 50, "inference_diff runs")
    assert piped.getvalue() == ""  # the hand-written bar wrote 50 lines here
    text = terminal.getvalue()
    assert "50/50" in text and "\r" in text and text.count("\n") <= 1


def test_run_progress_on_a_pipe_is_a_line_now_and_then_with_rate_and_time_left():
    piped, now = io.StringIO(), [0.0]
    with _progress_bar("point", piped, every=30.0, clock=lambda: now[0]) as show:
        for k in range(0, 5001, 100):
            now[0] = k / 100  # 100 points a second
            show(k, 5000, "a label")
    assert piped.getvalue().splitlines() == ["3,000/5,000 points, 100/s, about 20 s left", "5,000/5,000 points, 100/s"]


@pytest.mark.slow
def test_diff_to_a_pipe_prints_no_progress_lines():
    model = FIXTURES / "interleaved_int8.tflite"
    result = subprocess.run([sys.executable, "-m", "accelsim", "diff", str(model), "--hw", "edgetpu_usb",
                             "--num-runs", "20"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines()[2] == "Num evaluation runs: 20"


@pytest.mark.slow
def test_a_failed_run_ends_with_the_first_error_and_where_the_rest_are(tmp_path, capsys):
    path = tmp_path / "failing.yaml"
    path.write_text(f"""\
models: [{FIXTURES / 'atan_custom.tflite'}, {FIXTURES / 'interleaved_int8.tflite'}]
host: host_cpu
variants: [{{name: cpu_only, accelerators: []}}, {{name: usb, accelerators: [edgetpu_usb]}}]
""")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--jobs", "1"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("2 of 4 design points failed; first: atan_custom | cpu_only: OpResolutionError: "
                           "Encountered unresolved custom op: Atan.")
    assert last.endswith(f"all are listed under 'Failed design points' in {out / 'report.md'} and "
                         f"{out / 'report.html'}")


@pytest.mark.slow
def test_run_summary_counts_stale_cache_entries_and_prunes_them(tmp_path, capsys):
    def experiment(limits: str) -> str:
        path = tmp_path / "exp.yaml"
        path.write_text(f"""\
models: [{FIXTURES / 'interleaved_int8.tflite'}]
host: host_cpu
variants: [{{name: cpu_only, accelerators: []}}, {{name: usb, accelerators: [edgetpu_usb]}}]
sweeps: {{max_delegated_partitions: {limits}}}
""")
        return str(path)

    out = str(tmp_path / "out")
    assert main(["run", experiment("[1, 2, 3]"), "--out", out, "--jobs", "1"]) == 0
    assert "  cache: 0 stale entries (design points no longer in the experiment)\n" in capsys.readouterr().out
    assert main(["run", experiment("[1]"), "--out", out, "--jobs", "1"]) == 0
    assert "cache: 2 stale entries (design points no longer in the experiment); --prune-cache removes them" in \
        capsys.readouterr().out
    assert main(["run", experiment("[1]"), "--out", out, "--jobs", "1", "--prune-cache"]) == 0
    assert "cache: removed 2 stale entries" in capsys.readouterr().out
    with contextlib.closing(sqlite3.connect(tmp_path / "out" / "points.sqlite")) as db:
        assert db.execute("SELECT COUNT(*) FROM points").fetchone() == (2,)


@pytest.mark.slow
def test_run_warns_when_an_experiment_of_the_same_name_owns_the_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "exp.yaml")
        paths[-1].write_text(f"name: same\nmodels: [{FIXTURES / 'interleaved_int8.tflite'}]\nhost: host_cpu\n"
                             "variants: [{name: cpu_only, accelerators: []}]\n")
    assert main(["run", str(paths[0]), "--jobs", "1"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["run", str(paths[1]), "--jobs", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("accelsim run: warning: reports/same holds the report of ")
    assert "-> reports/same-" in captured.out


# -- issue 16: configs, validation in one pass, messages with choices, flags -----------------------

SHIPPED = tuple(shipped_configs())


def test_configs_lists_each_shipped_config_on_one_line(capsys):
    assert main(["configs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == list(SHIPPED) and len(SHIPPED) >= 4
    usb = lines[SHIPPED.index("edgetpu_usb")]
    assert usb.split()[:4] == ["edgetpu_usb", "systolic", "500", "MHz"]
    assert "Coral USB Accelerator" in usb and "accelsim configs --schema" in lines[-1]


def test_configs_schema_is_the_committed_reference_page(capsys):
    """docs/hw_configs.md is `accelsim configs --schema`; regenerate it with that command when this fails."""
    assert main(["configs", "--schema"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "hw_configs.md").read_text(encoding="utf-8")


def test_the_schema_names_every_key_the_loader_accepts():
    """Each key, kind field, claim key and constraint the loader checks appears in the reference."""
    from accelsim.delegates.spec import CONSTRAINT_DOCS, CONSTRAINTS
    from accelsim.hardware.config import KEYS
    from accelsim.hardware.config_docs import schema_markdown
    from accelsim.hardware.kinds import default_registry

    text = schema_markdown()
    assert list(CONSTRAINT_DOCS) == list(CONSTRAINTS)
    names = [k.path for k in KEYS] + [f"compute.{f.name}" for kind in default_registry.kinds() for f in kind.fields]
    names += ["op", "versions", "dtypes", "except", "constraints", *CONSTRAINTS]
    assert [n for n in names if f"`{n}`" not in text] == []
    for kind in default_registry.kinds():
        assert f"### `kind: {kind.name}`" in text and kind.macs_per_cycle in text


def test_validate_reports_every_problem_of_an_experiment_in_one_run(tmp_path, capsys):
    (tmp_path / "trunc.tflite").write_bytes((FIXTURES / "interleaved_int8.tflite").read_bytes()[:1000])
    (tmp_path / "hw.yaml").write_text("name: x\nkind: systolic\nclock: fast\n")
    exp = tmp_path / "exp.yaml"
    exp.write_text("models: [missing.tflite, trunc.tflite]\nhost: host_cpu\ncolour: blue\nvariants:\n"
                   "  - {name: a, accelerators: [hw.yaml]}\n  - {name: b, accelerators: [edgetpu]}\n"
                   "  - {name: c, accelerators: [edgetpu_usb]}\n"
                   "sweeps:\n  edgetpu_usb.link.bandwidth: [fast]\n")
    assert main(["validate", str(exp), str(tmp_path / "hw.yaml")]) == 1
    out = capsys.readouterr().out.splitlines()
    keys = [line.split(": ")[1] for line in out if line.startswith(str(exp))]
    assert list(dict.fromkeys(keys)) == ["models[0]", "models[1]", "colour", "variants[0]",
                                         "variants[1].accelerators[0]", "sweeps.edgetpu_usb.link.bandwidth"]
    assert "models[1]: ModelError: " in out[1] and "trunc.tflite" in out[1]
    own = [line for line in out if line.startswith(f"{tmp_path / 'hw.yaml'}:")]
    assert len(own) == keys.count("variants[0]") == 5  # clock and four missing sections, also under variants[0]


def test_run_validates_before_any_work(tmp_path, capsys):
    (tmp_path / "trunc.tflite").write_bytes((FIXTURES / "interleaved_int8.tflite").read_bytes()[:1000])
    exp = tmp_path / "exp.yaml"
    exp.write_text("models: [trunc.tflite]\nhost: host_cpu\nvariants: [{name: a, accelerators: []}]\n")
    assert main(["run", str(exp), "--out", str(tmp_path / "out")]) == 1
    assert "models[0]: ModelError: " in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_validate_says_what_a_host_leaves_to_the_simd_width_rule(tmp_path, capsys):
    host = tmp_path / "host.yaml"
    host.write_text((ROOT / "hw_configs" / "host_cpu.yaml").read_text().replace("    float32: 8\n", ""))
    assert main(["validate", str(host)]) == 0
    note = ("compute.macs_per_cycle has no float32: float32 nodes get one SIMD register per cycle, "
            "simd_bits / 32 = 4 MACs per cycle")
    out = capsys.readouterr().out.splitlines()
    assert out[1] == f"  note: {note}"
    # then every cost default the host leaves out (accelsim.hardware.assumptions), the note not repeated
    source = "(the schema's default: accelsim configs --schema)"
    assert out[2:] == [f"  assumed: memory.levels.dram.size = unbounded {source}",
                       f"  assumed: memory.levels.dram.latency = 0 s {source}",
                       f"  assumed: memory.levels.dram.static_power = 0 W {source}"]
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"models: [{FIXTURES / 'interleaved_int8.tflite'}]\nhost: host.yaml\n"
                   "variants: [{name: a, accelerators: [edgetpu_usb]}]\n")
    assert main(["validate", str(exp)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["  design points: 1 (run accepts up to 100,000)",
                                                         f"  note: {host}: {note}"]


@pytest.mark.parametrize("argv, message", [
    (["run", "hw_configs/edgetpu_usb.yaml"], "hw_configs/edgetpu_usb.yaml: this is a hardware "
     "config, not an experiment; pass it with --hw to benchmark, or name it in an experiment's variants"),
    (["benchmark", "M", "--hw", "examples/default/default.yaml"], "this is an experiment, not a hardware config; "
     "run it with `accelsim run "),
    (["benchmark", "M", "--hw", "edgetpu"], f"'edgetpu' is not a shipped config (shipped: {', '.join(SHIPPED)}); "
     "did you mean 'edgetpu_usb'?"),
    (["benchmark", "M", "--hw", "host_cpu"], "kind: host_cpu is a host config (kind cpu); use --host"),
    (["benchmark", "M", "--hw", "edgetpu_usb", "--hw", "edgetpu_usb"], "edgetpu_usb.yaml: given twice; each "
     "accelerator joins the system once"),
    (["benchmark", "M", "--host", "edgetpu_usb"], "kind: edgetpu_usb is an accelerator config (kind systolic), "
     "not a host"),
    (["benchmark", "M", "--graph", "M"], "give the model once: accelsim benchmark MODEL (or benchmark_model's "
     "--graph=MODEL)"),
])
def test_misplaced_configs_and_names_say_what_to_do(argv, message, capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main([model if a == "M" else a for a in argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"accelsim {argv[0]}: error: ") and message in err


def test_version_and_debug_after_the_verb(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == "accelsim 0.1.0\n"
    with pytest.raises(ValueError, match="give the model once"):
        main(["benchmark", "--debug"])  # --debug after the verb re-raises instead of printing one line
    with pytest.raises(ValueError, match="give the model once"):
        main(["--debug", "benchmark"])


def test_benchmark_model_spellings_work_and_unknown_flags_get_a_suggestion(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["benchmark", f"--graph={model}", "--num_runs=2", "--warmup_runs=0", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["wallclock_us"]["runs"]) == 2
    with pytest.raises(SystemExit) as info:
        main(["benchmark", model, "--numruns=2"])
    assert info.value.code == 2
    assert "unrecognized arguments: --numruns=2 (did you mean --num-runs?)" in capsys.readouterr().err


def test_help_explains_schedule_and_repeated_hw(capsys):
    with pytest.raises(SystemExit):
        main(["benchmark", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "they join one system, and in the order given each claims from the nodes the ones before it left" in out
    assert "--schedule {sequential,dataflow} how the simulated time adds up" in out


def test_run_without_an_experiment_in_a_broken_installation_says_what_to_pass(tmp_path, monkeypatch, capsys):
    import accelsim.experiments.keys

    monkeypatch.setattr(accelsim.experiments.keys, "DEFAULT_EXPERIMENT", tmp_path / "default.yaml")
    assert main(["run"]) == 1
    assert capsys.readouterr().err == (f"accelsim run: error: no experiment given, and the default {tmp_path}/"
                                       "default.yaml is missing from this installation (reinstall accelsim); pass an "
                                       "experiment YAML\n")


def test_the_failure_line_points_to_whichever_report_files_were_written(tmp_path):
    from accelsim.cli.experiment_verbs import _failure_line
    from accelsim.experiments.run import RunOutcome
    from accelsim.reports.results import error_record

    failed = error_record(point_id="0" * 16, model="m/atan_custom.tflite", variant="usb", sweep={"x.y": 2},
                          host="host_cpu", accelerators=["edgetpu_usb"], schedule="sequential", error="E: boom")
    ok = {**failed, "status": "ok", "error": None, "model_name": "other"}
    line = _failure_line(RunOutcome(records=[ok, failed], missing=[], cached=0, computed=2, failed=1,
                                    outputs={"json": tmp_path / "results.json"}, out_dir=tmp_path))
    assert line == f"1 of 2 design points failed; first: atan_custom | usb | x.y=2: E: boom; all are in " \
                   f"{tmp_path / 'results.json'}"
    line = _failure_line(RunOutcome(records=[failed], missing=[], cached=0, computed=1, failed=1,
                                    outputs={"csv": tmp_path / "results.csv"}, out_dir=tmp_path))
    assert line.endswith(f"all are in {tmp_path / 'results.csv'} (status error)")


def test_every_verb_has_a_row_of_the_dispatch_table_and_every_row_resolves():
    """VERBS (accelsim/cli/main.py) names the function of every verb of the parser, and only of those."""

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(VERBS) == set(sub.choices)
    for verb, parser in sub.choices.items():
        assert parser.get_default("func") == verb
        assert callable(verb_function(verb))
