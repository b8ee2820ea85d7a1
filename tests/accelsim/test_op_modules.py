"""Custom-op modules from the command line (--ops) and from experiments (ops:): loading, scoping, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import FIXTURES

from accelsim.cli.main import main
from accelsim.default_experiment import custom_op_atan  # the sample op module `accelsim examples` writes
from accelsim.experiments.executors import PoolExecutor, SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import design_points
from accelsim.experiments.run import run_experiment
from accelsim.hardware.config import ConfigError
from accelsim.ops import OpModuleError, load_op_modules, require_kernels, unresolved_op, using_ops
from accelsim.runtime import Interpreter, OpResolutionError, load_model
from accelsim.runtime.resolver import MutableOpResolver, default_resolver

ROOT = Path(__file__).resolve().parents[2]
ATAN = FIXTURES / "atan_custom.tflite"
ATAN_OPS = str(ROOT / "examples" / "custom_op_atan.py")
INTERLEAVED = FIXTURES / "interleaved_int8.tflite"
FIRST_SENTENCE = "Encountered unresolved custom op: Atan."


def _stderr_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


def test_the_kernels_of_a_module_live_only_inside_its_block():
    model = load_model(ATAN)
    with pytest.raises(OpResolutionError, match=FIRST_SENTENCE):
        Interpreter(model=model).allocate_tensors()
    with using_ops([ATAN_OPS]) as ops:
        assert ops.custom_ops == ["Atan"]
        Interpreter(model=model).allocate_tensors()
        assert unresolved_op(model, str(ATAN)) is None
        with using_ops(["accelsim.ops.mediapipe"]):  # nested blocks add up
            assert {"Atan", "Convolution2DTransposeBias"} <= set(default_resolver().custom_names())
        assert default_resolver().custom_names() == ["Atan"]
    assert default_resolver().custom_names() == []
    with pytest.raises(OpResolutionError, match=FIRST_SENTENCE):
        Interpreter(model=model).allocate_tensors()


def test_the_unresolved_message_names_the_model_the_op_and_how_to_register():
    with pytest.raises(OpResolutionError) as caught:
        require_kernels(ATAN)
    message = str(caught.value)
    assert message.startswith(FIRST_SENTENCE + f" {ATAN}: operator 1 (CUSTOM 'Atan' v1) has no kernel; ")
    assert "\n" not in message
    assert "resolver.add_custom('Atan'" in message and "--ops MODULE_OR_FILE" in message
    assert message.endswith("custom ops loaded: none.")
    with using_ops(["accelsim.ops.mediapipe"]):  # the pack lacks Atan: the message lists what it has
        with pytest.raises(OpResolutionError, match=r"custom ops loaded: Convolution2DTransposeBias, "
                           r"Landmarks2TransformMatrix, MaxPoolingWithArgmax2D, MaxUnpooling2D, TransformLandmarks, "
                           r"TransformTensorBilinear\.$"):
            require_kernels(ATAN)


@pytest.mark.parametrize("verb", [
    ["benchmark", "--num-runs", "1", "--warmup-runs", "0"],
    ["whatif", "--hw", "edgetpu_usb"],
    ["diff", "--hw", "edgetpu_usb", "--num-runs", "1"],
])
def test_verbs_load_op_modules_and_name_the_model_without_them(verb, capsys):
    name, *options = verb
    assert main([name, str(ATAN), *options]) == 1
    line = _stderr_line(capsys)
    assert line.startswith(f"accelsim {name}: error: {FIRST_SENTENCE} {ATAN}: ")
    assert main([name, str(ATAN), *options, "--ops", ATAN_OPS]) == 0
    assert capsys.readouterr().err == ""


def test_inspect_and_ops_count_a_loaded_kernel_as_supported(capsys):
    assert main(["inspect", str(ATAN), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unsupported_ops"] == [{"op": "Atan", "version": 1}]
    assert main(["inspect", str(ATAN), "--json", "--ops", ATAN_OPS]) == 0
    assert json.loads(capsys.readouterr().out)["unsupported_ops"] == []


@pytest.mark.parametrize("module, message", [
    ("no_such_module_xyz", "no_such_module_xyz: no module of that name is installed"),
    ("missing/ops.py", "ops.py: no such file"),
    ("json", "json: registers nothing: it has no register(resolver) function"),
    ("EMPTY", "registers nothing: its register(resolver) added no kernel"),
    ("BROKEN", "importing it failed: ZeroDivisionError: division by zero"),
    # issue 31 C14: a file that is not Python says so (a model given to --ops by mistake is named as one)
    ("MODEL", "atan_custom.tflite: not a .py file (it looks like a model: give the model as the verb's argument"),
    ("TEXT", "notes.txt: not a .py file; --ops takes the path of a .py file that defines register(resolver)"),
])
def test_a_bad_ops_module_is_one_line_and_rc_2(module, message, tmp_path, capsys):
    (tmp_path / "empty_ops.py").write_text("def register(resolver):\n    pass\n")
    (tmp_path / "broken_ops.py").write_text("1 / 0\n")
    (tmp_path / "notes.txt").write_text("not python\n")
    spec = {"EMPTY": str(tmp_path / "empty_ops.py"), "BROKEN": str(tmp_path / "broken_ops.py"),
            "MODEL": str(FIXTURES / "atan_custom.tflite"), "TEXT": str(tmp_path / "notes.txt")}.get(module, module)
    assert main(["benchmark", str(INTERLEAVED), "--ops", spec]) == 2
    line = _stderr_line(capsys)
    assert line.startswith("accelsim benchmark: error: --ops ") and message in line
    with pytest.raises(OpModuleError, match=re.escape(message)):
        load_op_modules([spec])


def test_compare_carries_on_past_a_failing_model_and_names_it(tmp_path, capsys):
    args = ["compare", str(ATAN), str(INTERLEAVED), "--hw", "edgetpu_usb", "--hw", "hexagon_dsp",
            "--plot", str(tmp_path / "c.png")]
    # rc 1 as `run` with failed points: the user asked for a model that did not run, the rest are shown
    assert main(args) == 1
    out = capsys.readouterr().out
    assert re.search(r"^interleaved_int8:\n(.*\n)*?  Latency", out, re.M)
    assert f"Error: atan_custom failed on every column and is left out: OpResolutionError: {FIRST_SENTENCE}" in out
    assert main([*args, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [m["model"] for m in doc["models"]] == ["interleaved_int8"]
    assert [(f["column"], f["model"]) for f in doc["failed"]] == [("edgetpu_usb", "atan_custom"),
                                                                  ("hexagon_dsp", "atan_custom")]
    assert main([*args, "--ops", ATAN_OPS]) == 0
    assert re.search(r"^atan_custom:\n(.*\n)*?  Latency", capsys.readouterr().out, re.M)


def _experiment(tmp_path: Path, ops: str = "") -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(f"""\
models: [{ATAN}, {INTERLEAVED}]
host: host_cpu
variants: [{{name: cpu_only, accelerators: []}}, {{name: usb, accelerators: [edgetpu_usb]}}]
{ops}""")
    return path


def test_validate_loads_each_model_with_the_experiments_op_modules(tmp_path, capsys):
    path = _experiment(tmp_path)
    load_experiment(path)  # run leaves the model to fail its own points
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"{path}:1: models[0]: OpResolutionError: {FIRST_SENTENCE} {ATAN}: ")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "atan.py").write_text(Path(ATAN_OPS).read_text())
    path = _experiment(tmp_path, "ops: [kernels/atan.py]\n")  # relative to the experiment file
    assert main(["validate", str(path)]) == 0
    assert load_experiment(path).ops == (str(tmp_path / "kernels" / "atan.py"),)
    assert main(["validate", str(path), "--ops", "accelsim.ops.mediapipe"]) == 0


def test_an_experiments_bad_op_module_is_reported_with_its_line(tmp_path):
    path = _experiment(tmp_path, "ops: [accelsim.ops.mediapipe, nothere.py]\n")
    with pytest.raises(ConfigError, match=rf"exp.yaml:4: ops\[1\]: {tmp_path / 'nothere.py'}: no such file"):
        load_experiment(path)
    with pytest.raises(ConfigError, match=r"exp.yaml:4: ops: expected a list of op modules"):
        load_experiment(_experiment(tmp_path, "ops: accelsim.ops.mediapipe\n"))


@pytest.mark.parametrize("executor", [SerialExecutor(), PoolExecutor(2)], ids=["serial", "pool"])
def test_run_points_load_the_experiments_ops_in_their_workers(executor, tmp_path):
    without = load_experiment(_experiment(tmp_path))
    out = run_experiment(without, tmp_path / "a", executor=executor)
    errors = [r["error"] for r in out.records if r["status"] == "error"]
    assert len(errors) == 2 and all(e.startswith(f"OpResolutionError: {FIRST_SENTENCE} {ATAN}: ") for e in errors)
    assert [r["status"] for r in out.records if r["model_name"] == "interleaved_int8"] == ["ok", "ok"]
    with_ops = load_experiment(_experiment(tmp_path, f"ops: [{ATAN_OPS}]\n"))
    out = run_experiment(with_ops, tmp_path / "b", executor=executor)
    assert [r["status"] for r in out.records] == ["ok"] * 4
    # the kernels' source is part of a point's identity (their work decides its cost)
    assert {p.id for p in design_points(without)}.isdisjoint(p.id for p in design_points(with_ops))


def test_run_takes_ops_from_the_command_line_too(tmp_path, capsys):
    path = _experiment(tmp_path)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 1
    capsys.readouterr()
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--jobs", "1", "--ops", ATAN_OPS]) == 0
    assert "(0 cached, 4 run, 0 failed)" in capsys.readouterr().out


def test_the_shipped_sample_op_module_registers_atan():
    """The wheel's copy of examples/custom_op_atan.py (what `accelsim examples` writes) adds the Atan kernel."""
    resolver = MutableOpResolver()
    custom_op_atan.register(resolver)
    assert resolver.find_custom("Atan", 1) is not None
