"""The `accelsim` command line: inspect and ops on every fixture, help texts, errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import FIXTURES

from accelsim.cli import main
from runtime.read import load_model

FIXTURE_FILES = sorted(FIXTURES.glob("*.tflite"))


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


@pytest.mark.parametrize("command", ["inspect", "ops"])
def test_every_command_has_help_with_examples(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and f"accelsim {command} " in out


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
    assert len(traces) == 6
    events = json.loads(traces[0].read_text())["traceEvents"]
    assert any(e["ph"] == "X" for e in events)
    assert main(["run", "--out", str(out), "--jobs", "1"]) == 0
    assert "(6 cached, 0 run, 0 failed)" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "benchmark", "diff", "validate"])
def test_new_commands_have_help_with_examples(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "examples:" in capsys.readouterr().out


def test_benchmark_json_and_text(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["benchmark", model, "--hw", "edgetpu_usb", "--num-runs", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["wallclock_us"]["runs"]) == 3 and data["simulated_us"]["latency"] > 0
    assert data["delegated_nodes"] == 20
    assert main(["benchmark", model, "--hw", "hexagon_dsp", "--num-runs", "2", "--enable-op-profiling"]) == 0
    text = capsys.readouterr().out
    assert "count=2 first=" in text and "Simulated latency in us:" in text and "[node type]" in text


def test_diff_prints_inference_diff_layout(capsys):
    model = str(FIXTURES / "interleaved_int8.tflite")
    assert main(["diff", model, "--hw", "edgetpu_usb", "--num-runs", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Num evaluation runs: 2" and "avg_error=0," in lines[-1]


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
