"""An honest inference_diff: what was delegated, errors in real units, top-1 agreement, and real inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from accelsim.cli.main import main
from accelsim.hardware.config import load_system
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.read import load_model
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.diff import inference_diff, load_inputs, random_input

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "models"
HW = ROOT / "hw_configs"
MOBILENET = str(FIXTURES / "mobilenet_v2_035_96_int8.tflite")
INTERLEAVED = str(FIXTURES / "interleaved_int8.tflite")


@pytest.fixture(scope="module")
def truncating(tmp_path_factory) -> Path:
    """hexagon_dsp whose requantization truncates: an accelerator whose numbers differ from TFLite's."""
    text = (HW / "hexagon_dsp.yaml").read_text()
    assert "  mode: reference\n" in text
    path = tmp_path_factory.mktemp("hw") / "dsp_truncate.yaml"
    path.write_text(text.replace("  mode: reference\n", "  mode: rounding\n  rounding: truncate\n"))
    return path


def _system(*accels) -> object:
    return load_system(str(HW / "host_cpu.yaml"), [str(a) for a in accels])


def test_no_delegated_node_is_called_trivially_exact(capsys):
    assert main(["diff", str(FIXTURES / "mobilenet_v2_035_96_float.tflite"), "--hw", "edgetpu_usb",
                 "--num-runs", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == ("Delegation: no node was delegated (edgetpu_usb took 0 of 65 nodes): both runs use the host's "
                     "kernels, so the comparison is trivially exact and says nothing about the accelerator's numerics")


def test_each_accelerator_counts_its_nodes():
    report = inference_diff(INTERLEAVED, _system(HW / "edgetpu_usb.yaml", HW / "hexagon_dsp.yaml"), num_runs=1)
    assert report.delegated == (("edgetpu_usb", 20), ("hexagon_dsp", 0)) and report.total_nodes == 20
    assert not report.trivially_exact


@pytest.mark.slow
def test_quantized_errors_in_steps_and_real_units_and_top1_against_our_own_count(truncating):
    system = _system(truncating)
    reference = Interpreter(model_path=MOBILENET)
    reference.allocate_tensors()
    test, _ = build_interpreter(load_model(MOBILENET), system)
    rng = np.random.default_rng(3)
    detail = reference.get_input_details()[0]
    runs = np.stack([random_input(detail, rng) for _ in range(4)])
    steps, agree = [], 0
    for x in runs:
        outs = []
        for it in (reference, test):
            it.set_tensor(it.get_input_details()[0]["index"], x)
            it.invoke()
            outs.append(it.get_tensor(it.get_output_details()[0]["index"]).astype(np.int64))
        steps.append(np.abs(outs[0] - outs[1]))
        agree += int(outs[0].argmax() == outs[1].argmax())
    report = inference_diff(MOBILENET, system, inputs=[[x] for x in runs], input_source="stack")
    out = report.outputs[0]
    scale = reference.get_output_details()[0]["quantization"][0]
    assert out.scale == pytest.approx(scale) and out.max_abs_error == max(float(s.max()) for s in steps) > 0
    assert out.mean_abs_error == pytest.approx(np.mean([s.mean() for s in steps]))
    assert out.top1_agreement == agree / 4
    assert f"max_error={out.max_abs_error:.6g} steps ({out.max_abs_error * scale:.6g} real)" in out.text()
    assert report.inputs == "stack" and report.num_runs == 4


def test_float_outputs_have_no_steps():
    report = inference_diff(str(FIXTURES / "mobilenet_v2_035_96_float.tflite"), _system(HW / "edgetpu_usb.yaml"), 1)
    assert report.outputs[0].scale is None and "steps" not in report.outputs[0].text()
    assert report.outputs[0].top1_agreement == 1.0  # [1, 10]: classifier-shaped


def test_input_files_feed_real_inputs(tmp_path, capsys):
    detail = Interpreter(model_path=INTERLEAVED).get_input_details()[0]
    x = random_input(detail, np.random.default_rng(7))
    np.save(tmp_path / "one.npy", x)
    np.savez(tmp_path / "named.npz", **{detail["name"]: np.stack([x, x, x])})
    np.savez(tmp_path / "ordered.npz", x)
    assert [len(r) for r in load_inputs(tmp_path / "one.npy", [detail])] == [1]
    runs = load_inputs(tmp_path / "named.npz", [detail])
    assert len(runs) == 3 and all(np.array_equal(r[0], x) for r in runs)
    assert np.array_equal(load_inputs(tmp_path / "ordered.npz", [detail])[0][0], x)
    assert main(["diff", INTERLEAVED, "--hw", "edgetpu_usb", "--input", str(tmp_path / "named.npz"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["num_runs"] == 3 and data["inputs"] == str(tmp_path / "named.npz")
    assert data["delegated_nodes"] == {"edgetpu_usb": 20} and data["trivially_exact"] is False


def test_bad_input_files_name_the_input_its_shape_and_dtype_and_what_was_given(tmp_path, capsys):
    detail = Interpreter(model_path=INTERLEAVED).get_input_details()[0]
    name = detail["name"]
    cases = {
        "float.npy": (np.zeros((1, 32, 32, 3), np.float32),
                      f"input 0 '{name}' expects shape [1, 32, 32, 3] int8 (or [runs, 1, 32, 32, 3] for several "
                      "runs), got shape [1, 32, 32, 3] float32"),
        "shape.npy": (np.zeros((1, 32, 3), np.int8), "got shape [1, 32, 3] int8"),
        "empty.npy": (np.zeros((0, 1, 32, 32, 3), np.int8), "got shape [0, 1, 32, 32, 3] int8"),
    }
    for file, (array, message) in cases.items():
        np.save(tmp_path / file, array)
        assert main(["diff", INTERLEAVED, "--hw", "edgetpu_usb", "--input", str(tmp_path / file)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"accelsim diff: error: {tmp_path / file}: ") and message in err, err
    np.savez(tmp_path / "wrong.npz", other=np.zeros(3))
    assert main(["diff", INTERLEAVED, "--hw", "edgetpu_usb", "--input", str(tmp_path / "wrong.npz")]) == 1
    assert (f"no array for input 0 '{name}' (arrays: other); name each array as its input ('{name}') or arr_0, "
            "arr_1, ... in order") in capsys.readouterr().err
    (tmp_path / "x.txt").write_text("1")
    assert main(["diff", INTERLEAVED, "--hw", "edgetpu_usb", "--input", str(tmp_path / "x.txt")]) == 1
    assert "--input takes a .npy file (one-input models) or a .npz file, got '.txt'" in capsys.readouterr().err
    two = [detail, {**detail, "name": "second"}]
    with pytest.raises(ValueError, match="the model has 2 inputs .*give a .npz with one array per input"):
        load_inputs(tmp_path / "float.npy", two)
    np.savez(tmp_path / "uneven.npz", np.zeros((2, 1, 32, 32, 3), np.int8), np.zeros((3, 1, 32, 32, 3), np.int8))
    with pytest.raises(ValueError, match=r"the inputs hold different numbers of runs \(\[2, 3\]\)"):
        load_inputs(tmp_path / "uneven.npz", two)
