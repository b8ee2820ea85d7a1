"""`accelsim sensitivity`: parameters at x0.5 and x2 re-cost one analysis and match full simulations exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsim.cli.main import main
from accelsim.hardware.config import System, apply_overrides, load_system
from accelsim.insight import sensitivity as sens
from accelsim.simulation.analysis import simulate_model

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "tests" / "fixtures" / "models" / "mobilenet_v2_035_96_int8.tflite")
HW = ROOT / "hw_configs"


@pytest.fixture(scope="module")
def two_devices():
    system = load_system(HW / "host_cpu.yaml", [HW / "edgetpu_usb.yaml", HW / "hexagon_dsp.yaml"])
    return system, sens.sensitivity(MODEL, system, name=MODEL)


def _varied(system: System, device: str, key: str, value) -> System:
    devices = [apply_overrides(d, {key: value}) if d.name == device else d for d in (system.host, *system.accelerators)]
    return System(devices[0], tuple(devices[1:]), system.assign)


def test_every_variation_equals_a_full_simulation_of_that_design(two_devices):
    system, result = two_devices
    assert result.latency_us == pytest.approx(simulate_model(MODEL, system).latency * 1e6, rel=1e-12)
    labels = {v.parameter.label for v in result.variations}
    for wanted in ("edgetpu_usb.clock", "edgetpu_usb.compute.rows", "edgetpu_usb.memory.levels.sram.size",
                   "edgetpu_usb.link.bandwidth", "edgetpu_usb.link.call_overhead", "hexagon_dsp.compute.lanes",
                   "host_cpu.clock", "host_cpu.memory.levels.dram.bandwidth"):
        assert wanted in labels
    assert not any("efficiency" in label or "instruction_bytes" in label for label in labels)  # not design choices
    for v in result.variations[:4] + result.variations[-2:]:
        p = v.parameter
        for e in v.effects:
            if e.status == "skipped":  # the schema refuses the value (e.g. 0.5 threads): listed, not simulated
                assert any(s.startswith(f"{p.label} x{e.factor:g}: ") for s in result.skipped)
                continue
            full = simulate_model(MODEL, _varied(system, p.device, p.key, p.written(e.value)))
            assert e.latency_us == pytest.approx(full.latency * 1e6, rel=1e-12), p.label
            assert e.energy_uj == pytest.approx(full.energy * 1e6, rel=1e-12), p.label


def test_ranked_by_effect_with_bottlenecks_and_a_three_line_verdict(two_devices):
    _, result = two_devices
    effects = [v.effect(result.latency_us) for v in result.variations]
    assert effects == sorted(effects, reverse=True) and effects[0] > 0.1
    assert result.variations[0].parameter.label == "edgetpu_usb.link.bandwidth"
    # hexagon_dsp's link latency is 0: listed, not varied
    assert any(s.startswith("hexagon_dsp.link.latency: 0") for s in result.skipped)
    shares = [b.share for b in result.bottlenecks]
    assert sum(shares) == pytest.approx(1) and shares == sorted(shares, reverse=True)
    assert {"edgetpu_usb: compute", "edgetpu_usb: call overhead", "edgetpu_usb: link transfers"} <= {
        b.what for b in result.bottlenecks}
    assert sum(o.share for o in result.ops) == pytest.approx(1)
    assert all(o.utilization is None or 0 <= o.utilization <= 1 for o in result.ops)
    assert len(result.verdict) == 3 and "edgetpu_usb.link.bandwidth" in result.verdict[1]


def test_it_analyses_the_model_once(monkeypatch):
    calls = []
    real = sens.analyze
    monkeypatch.setattr(sens, "analyze", lambda *a, **k: calls.append(1) or real(*a, **k))
    sens.sensitivity(MODEL, load_system(HW / "host_cpu.yaml", [HW / "edgetpu_usb.yaml"]))
    assert len(calls) == 1


NPU = """\
name: npu
kind: systolic
clock: 1 GHz
compute: {rows: 63, cols: 64, dataflow: ws, vector_lanes: 64}
energy: {mac: {int8: 0.5 pJ}}
memory:
  levels:
    sram: {size: 256 KiB, bandwidth: 64 GB/s}
  weights: link
  cache: sram
link: {bandwidth: 10 GB/s, latency: 1 us, call_overhead: 5 us, shared_memory: true}
claims:
  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}
  - {op: DEPTHWISE_CONV_2D, versions: 1-3, dtypes: [int8]}
  - {op: ADD, versions: 1-2, dtypes: [int8]}
partition: {policy: cost}
"""


def test_refused_values_are_skipped_infeasible_ones_said_and_a_cost_placement_held_fixed(tmp_path):
    path = tmp_path / "npu.yaml"
    path.write_text(NPU)
    result = sens.sensitivity(MODEL, load_system(HW / "host_cpu.yaml", [path]))
    by_label = {v.parameter.label: v for v in result.variations}
    rows = {e.factor: e for e in by_label["npu.compute.rows"].effects}
    assert rows[0.5].status == "skipped" and rows[2.0].status == "ok"
    assert any(s.startswith("npu.compute.rows x0.5: expected a whole number") for s in result.skipped)
    size = {e.factor: e for e in by_label["npu.memory.levels.sram.size"].effects}
    assert size[0.5].status == "infeasible" and "make 'sram' larger" in size[0.5].note
    assert result.placement_fixed
    assert any(v.replaced_latency_us is not None for v in result.variations[:sens.REPLACED])
    text = "\n".join(sens.lines(result))
    assert "the placement is held fixed" in text and "re-placed:" in text
    assert "npu.memory.levels.sram.size x0.5 is infeasible" in text


def test_cli_prints_one_line_for_a_custom_op_and_for_an_infeasible_design(tmp_path, capsys):
    custom = str(ROOT / "tests" / "fixtures" / "models" / "atan_custom.tflite")
    assert main(["sensitivity", custom, "--hw", "edgetpu_usb"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("accelsim sensitivity: error: Encountered unresolved custom op: Atan.")
    assert custom in err and "--ops" in err
    atan = str(ROOT / "examples" / "custom_op_atan.py")  # with the op's module its work is known
    assert main(["sensitivity", custom, "--hw", "edgetpu_usb", "--ops", atan]) == 0
    assert "Verdict" in capsys.readouterr().out
    path = tmp_path / "tiny.yaml"
    path.write_text(NPU.replace("size: 256 KiB", "size: 16 KiB"))
    assert main(["sensitivity", MODEL, "--hw", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("accelsim sensitivity: infeasible (memory): ")
    assert main(["sensitivity", MODEL, "--hw", "edgetpu_usb", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variations"][0]["parameter"]["key"] == "link.bandwidth" and len(data["verdict"]) == 3


def test_doubling_a_level_without_static_power_is_never_shown_as_free(capsys):
    """Issue 31 A2: edgetpu_usb's sram has a size but no static power: x2 looked free of energy and area."""
    from accelsim.cli.main import main

    model = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "mobilenet_v2_035_96_int8.tflite")
    assert main(["sensitivity", model, "--hw", "edgetpu_usb"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("edgetpu_usb.memory.levels.sram.size"))
    doubled = line.split("x2 (16 MiB): ", 1)[1]
    assert doubled.endswith("+ the larger level's leakage, not modelled (note below)"), doubled
    assert ("  note: edgetpu_usb.memory.levels.sram.size: memory.levels.sram.static_power is 0 W, so the leakage and "
            "area of a larger 'sram' are not modelled: growing it is not free, only not priced") in out
    assert main(["sensitivity", model, "--hw", "edgetpu_usb", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    sram = next(v for v in data["variations"] if v["parameter"]["key"] == "memory.levels.sram.size")
    assert "not modelled" in sram["parameter"]["unpriced"]
