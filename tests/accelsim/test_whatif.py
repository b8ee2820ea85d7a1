"""accelsim whatif: each suggested claim line, added to the YAML and re-run, gives exactly the predicted numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsim.cli.main import main
from accelsim.delegates.spec import ClaimRule
from accelsim.hardware.config import load_system
from accelsim.insight.whatif import claim_line, lines, whatif
from accelsim.runtime.read import load_model
from accelsim.simulation.analysis import simulate_model

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "models"
HW = ROOT / "hw_configs"


def _system(*configs: Path):
    return load_system(str(HW / "host_cpu.yaml"), [str(c) for c in configs])


def _with_lines(config: Path, lines: list[str], out: Path) -> Path:
    """The config file with `lines` added at the top of its claims: list, as a user would paste them."""
    text = config.read_text()
    assert text.count("\nclaims:\n") == 1
    out.write_text(text.replace("\nclaims:\n", "\nclaims:\n" + "".join(f"  {line}\n" for line in lines)))
    return out


def _measured(model: str, config: Path) -> tuple:
    sim = simulate_model(model, _system(config))
    return sim.latency * 1e6, sim.delegated_nodes, len(sim.partitions), sim.transfer_bytes, sim.energy * 1e6


def _predicted(outcome) -> tuple:
    return (outcome.latency_us, outcome.delegated_nodes, outcome.partitions, outcome.transfer_bytes,
            outcome.energy_uj)


@pytest.mark.slow
@pytest.mark.parametrize("model, config", [
    ("interleaved_int8", "hexagon_dsp"),      # a version above the rule's range
    ("dilated_cnn_int8", "hexagon_dsp"),      # a constraint (max_dilation), a dtype, an op not claimed
    ("transformer_block_int8", "edgetpu_pcie"),  # prefix policy: one line alone often gains nothing
    ("transformer_block_int8", "ethos_u55_128"),  # an npu kind: dtype lines and an op not claimed
])
def test_applying_each_line_and_rerunning_gives_the_predicted_numbers(model, config, tmp_path):
    path = str(FIXTURES / f"{model}.tflite")
    result = whatif(load_model(path), _system(HW / f"{config}.yaml"), path)
    assert result.candidates
    for k, c in enumerate(result.candidates):
        edited = _with_lines(HW / f"{config}.yaml", [c.line], tmp_path / f"{k}.yaml")
        assert _measured(path, edited) == _predicted(c.outcome), c.line
    p = result.pair
    assert (p is not None) == (len(result.candidates) > 1)
    if p is not None:
        edited = _with_lines(HW / f"{config}.yaml", [p.first.line, p.second.line], tmp_path / "pair.yaml")
        assert _measured(path, edited) == _predicted(p.outcome)


def test_ranked_by_latency_saved_with_the_line_for_each_reason():
    path = str(FIXTURES / "dilated_cnn_int8.tflite")
    result = whatif(load_model(path), _system(HW / "hexagon_dsp.yaml"), path)
    latencies = [c.outcome.latency_us for c in result.candidates]
    assert latencies == sorted(latencies)
    by_reason = {c.reason: c for c in result.candidates}
    assert set(by_reason) == {"max_dilation", "op not claimed", "dtype"}
    dilation = by_reason["max_dilation"]
    assert dilation.op == "CONV_2D" and dilation.example == "dilation 2 above max 1"
    assert "max_dilation: 2}}" in dilation.line and dilation.outcome.latency_us < result.base.latency_us
    assert by_reason["op not claimed"].line == "- {op: DEQUANTIZE, versions: 2, dtypes: [int8]}"
    assert "dtypes: [float32, int8, uint8]" in by_reason["dtype"].line
    host = simulate_model(path, _system()).latency * 1e6
    assert result.host_only.latency_us == host
    assert lines(result)[-1] == (f"warning: even the best line leaves delegation slower than the host alone "
                                 f"({result.pair.outcome.latency_us:,.1f} µs against {host:,.1f} µs)")


def test_a_version_lift_merges_two_partitions():
    path = str(FIXTURES / "interleaved_int8.tflite")
    result = whatif(load_model(path), _system(HW / "hexagon_dsp.yaml"), path)
    (best,) = result.candidates
    assert best.op == "RESIZE_BILINEAR" and best.reason == "version" and best.nodes == (7,)
    assert best.line == "- {op: RESIZE_BILINEAR, versions: 1-3, dtypes: [int8, uint8], constraints: {max_rank: 4}}"
    assert (result.base.partitions, best.outcome.partitions) == (2, 1)
    assert best.outcome.delegated_nodes == result.base.delegated_nodes + 1 and result.pair is None


def test_claim_lines_in_yaml_syntax():
    assert claim_line(ClaimRule("ADD", ((1, 2), (4, 4)), frozenset({"int8"}))) == \
        "- {op: ADD, versions: [1-2, 4], dtypes: [int8]}"
    assert claim_line(ClaimRule("MEAN", (1, 2**31 - 1), frozenset({"int8"}), {"per_channel": True})) == \
        "- {op: MEAN, versions: any, dtypes: [int8], constraints: {per_channel: true}}"


@pytest.mark.slow
def test_cli_text_and_json(capsys):
    model = str(FIXTURES / "transformer_block_int8.tflite")
    assert main(["whatif", model, "--hw", "edgetpu_pcie"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{model} on edgetpu_pcie: ") and "0 nodes delegated in 0 partitions" in out[0]
    assert any(line.startswith("    add to claims: - {op: FULLY_CONNECTED, versions: 1-5") for line in out)
    assert out[-1] == ("note: edgetpu_pcie maps only the graph's prefix (partition policy 'prefix'): every node "
                       "after node 0 stays on the host unless that node is claimed")
    assert ("no line lowers the latency: what a line moves to the accelerator costs more there (compute, transfers, "
            "call overhead) than on the host") in out
    assert main(["whatif", str(FIXTURES / "dilated_cnn_int8.tflite"), "--hw", "hexagon_dsp", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["candidates"][0]
    assert first["reason"] == "max_dilation" and first["saved_us"] > 0 and first["nodes_gained"] == 2
    assert first["partitions"] == [1, 1] and first["latency_us"] == data["base"]["latency_us"] - first["saved_us"]
    assert data["best_pair"]["lines"][0]["line"] == first["line"]


def test_nothing_to_lift_and_unclaimable_nodes_are_said_in_words(capsys):
    mobilenet = str(FIXTURES / "mobilenet_v2_035_96_int8.tflite")
    assert main(["whatif", mobilenet, "--hw", "hexagon_dsp", "--host", "host_cpu"]) == 0  # as _system() has it
    out = capsys.readouterr().out.splitlines()
    dsp = simulate_model(mobilenet, _system(HW / "hexagon_dsp.yaml")).latency * 1e6
    host = simulate_model(mobilenet, _system()).latency * 1e6
    # no line helps: it points to what to change in the hardware instead (issue 21)
    assert dsp > host and out[1:] == ["every node is delegated: nothing to lift",
                                      "what to change in the hardware instead: accelsim sensitivity MODEL --hw ... "
                                      "ranks every design parameter at x0.5 and x2 and shows where the time goes",
                                      f"warning: delegation is slower than the host alone ({dsp:,.1f} µs against "
                                      f"{host:,.1f} µs)"]
    path = str(FIXTURES / "lstm_gru_float.tflite")
    result = whatif(load_model(path), _system(HW / "edgetpu_pcie.yaml"), path, pair_pool=0)
    assert [(u.node, u.op) for u in result.unclaimable] == [(1, "WHILE"), (2, "WHILE")]
    assert result.unclaimable[0].why == "control flow and unnamed custom ops are not claimed by rules"


def test_a_model_the_host_cannot_run_gets_tflites_error(capsys):
    assert main(["whatif", str(FIXTURES / "atan_custom.tflite"), "--hw", "hexagon_dsp"]) == 1
    assert capsys.readouterr().err.startswith("accelsim whatif: error: Encountered unresolved custom op: Atan.")


def test_no_claim_line_asks_an_int8_only_npu_for_a_type_its_kind_cannot_execute(capsys):
    """Issue 31 C14: on an Ethos-U (npu kind: Vela's int8, uint8, int16, int32) a float model got float32 claims."""
    from accelsim.cli.main import main

    assert main(["whatif", str(FIXTURES / "mobilenet_v2_035_96_float.tflite"), "--hw", "ethos_u55_128"]) == 0
    out = capsys.readouterr().out
    assert "add to claims" not in out and "float32]" not in out
    assert ("(65 nodes) (CONV_2D, DEPTHWISE_CONV_2D, ADD, MEAN, FULLY_CONNECTED, SOFTMAX): no claim line admits them: "
            "float32: the npu kind executes only int16, int32, int8, uint8 tensors") in out
