"""One analysis, many costings: what the analysis key keeps apart, and that sharing changes no number."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support import CUSTOM_OP_FIXTURES, FIXTURES

import accelsim.simulation.costing
from accelsim.core import schedule as simpy_engine
from accelsim.delegates.spec import DelegationPolicy
from accelsim.hardware.config import KEYS, Assign, apply_overrides, load_hardware, load_system
from accelsim.hardware.device import HARDWARE, POLICY, SECTIONS
from accelsim.hardware.types import Hardware
from accelsim.ops import using_ops
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.analysis import analysis_key, analyze, model_digest, simulate_analysis, simulate_model

HW = Path(__file__).resolve().parents[2] / "hw_configs"
MODEL = str(FIXTURES / "interleaved_int8.tflite")  # two hexagon_dsp partitions


def _system(accel: str, **overrides) -> accelsim.hardware.config.System:
    base = load_system(HW / "host_cpu.yaml", [HW / f"{accel}.yaml"])
    if not overrides:
        return base
    return dataclasses.replace(base, accelerators=(apply_overrides(base.accelerators[0], overrides),))


def test_the_table_classifies_every_config_section_and_the_analysis_sections_are_the_delegates():
    sections = {k.path.split(".")[0] for k in KEYS} | {"compute"}
    assert set(SECTIONS) == sections
    derived = {"kind_record", "numerics_precision", "source", "lines"}  # filled by the loader, not by a section
    hardware = {f.name for f in dataclasses.fields(Hardware)} - derived
    policy = {f.name for f in dataclasses.fields(DelegationPolicy)}
    assert hardware | policy == sections and hardware & policy == {"name"}
    assert {s for s, role in SECTIONS.items() if role == POLICY} == policy  # the delegate's name is policy
    assert {s for s, role in SECTIONS.items() if role == HARDWARE} == hardware - {"name"}


@pytest.mark.slow
@pytest.mark.parametrize("accel, overrides", [
    ("edgetpu_usb", {"clock": "250 MHz"}),
    ("edgetpu_usb", {"compute.rows": 64, "compute.cols": 64}),
    ("edgetpu_usb", {"link.bandwidth": "40 MB/s", "link.call_overhead": "1 ms"}),
    ("edgetpu_usb", {"memory.levels.sram.size": "256 KiB"}),
    ("edgetpu_usb", {"energy.mac": {"int8": "3 pJ"}}),
    ("hexagon_dsp", {"clock": "300 MHz"}),
])
def test_a_cost_change_reuses_the_analysis_and_equals_a_fresh_simulation_bit_for_bit(accel, overrides):
    model = str(FIXTURES / "mobilenet_v2_035_96_int8.tflite") if accel == "edgetpu_usb" else MODEL
    base, changed = _system(accel), _system(accel, **overrides)
    digest = model_digest(model)
    assert analysis_key(digest, base) == analysis_key(digest, changed)
    shared = analyze(model, base)
    fresh = simulate_model(model, changed)
    assert simulate_analysis(shared, changed) == fresh
    assert simulate_analysis(shared, base) == simulate_model(model, base) != fresh


def test_a_host_change_reuses_the_analysis():
    base = _system("hexagon_dsp")
    changed = dataclasses.replace(base, host=apply_overrides(base.host, {"clock": "1 GHz"}))
    assert analysis_key("m", base) == analysis_key("m", changed)
    assert simulate_analysis(analyze(MODEL, base), changed) == simulate_model(MODEL, changed)


@pytest.mark.parametrize("overrides", [
    {"partition.max_delegated_partitions": 1},
    {"claims[0].dtypes": ["uint8"]},  # ADD no longer claimed for int8
    {"name": "dsp2"},
])
def test_a_claim_or_partition_change_gets_its_own_analysis(overrides):
    base, changed = _system("hexagon_dsp"), _system("hexagon_dsp", **overrides)
    assert analysis_key("m", base) != analysis_key("m", changed)
    shared = analyze(MODEL, base)
    with pytest.raises(ValueError, match="claim or partition differently"):
        simulate_analysis(shared, changed)
    own = simulate_analysis(analyze(MODEL, changed), changed)
    assert own == simulate_model(MODEL, changed)
    assert own != simulate_model(MODEL, base)


def test_loop_overrides_are_part_of_the_key():
    model = str(FIXTURES / "lstm_gru_float.tflite")
    base = _system("hexagon_dsp")
    loops = LoopTrips(nodes={"0:1": 3})
    assert analysis_key("m", base) != analysis_key("m", base, loops=loops)
    with pytest.raises(ValueError, match="loop trip counts"):
        simulate_analysis(dataclasses.replace(analyze(model, base), loops=loops), base)
    assert simulate_analysis(analyze(model, base, loops=loops), base) == simulate_model(model, base, loops=loops)


def test_policy_cost_shares_an_analysis_only_with_the_same_system_and_schedule():
    base = _system("hexagon_dsp", **{"partition.policy": "cost"})
    faster = _system("hexagon_dsp", **{"partition.policy": "cost", "clock": "2 GHz"})
    assert analysis_key("m", base) == analysis_key("m", _system("hexagon_dsp", **{"partition.policy": "cost"}))
    assert analysis_key("m", base) != analysis_key("m", faster)
    assert analysis_key("m", base) != analysis_key("m", base, schedule="dataflow")
    with pytest.raises(ValueError):
        simulate_analysis(analyze(MODEL, base), faster)
    assert simulate_analysis(analyze(MODEL, faster), faster) == simulate_model(MODEL, faster)


def test_assign_cost_shares_an_analysis_only_with_the_same_system():
    base = dataclasses.replace(_system("hexagon_dsp"), assign=Assign("cost"))
    faster = dataclasses.replace(_system("hexagon_dsp", clock="2 GHz"), assign=Assign("cost"))
    assert analysis_key("m", base) != analysis_key("m", _system("hexagon_dsp"))
    assert analysis_key("m", base) != analysis_key("m", faster)
    assert simulate_analysis(analyze(MODEL, faster), faster) == simulate_model(MODEL, faster)


def _fixture_models() -> list[Path]:
    return sorted(FIXTURES.glob("*.tflite"))


@pytest.mark.slow
@pytest.mark.parametrize("accel", ["", *sorted(p.stem for p in HW.glob("*.yaml") if load_hardware(p).is_accelerator)])
def test_closed_form_sequential_equals_the_simpy_replay_on_every_fixture(accel, monkeypatch):
    """Every step list a fixture gives on a shipped config: the closed form and SimPy agree exactly.

    Exact equality, not a tolerance: both add the same durations in the same order, so any
    difference would be a real change of schedule, not rounding.
    """
    replayed = []

    def both(steps, schedule="sequential"):
        result = simpy_engine.simulate(steps, schedule)
        replayed.append((result, simpy_engine.replay(steps, schedule)))
        return result

    monkeypatch.setattr(accelsim.simulation.costing, "simulate", both)
    system = load_system(HW / "host_cpu.yaml", [HW / f"{accel}.yaml"] if accel else [])
    for model in _fixture_models():
        module = CUSTOM_OP_FIXTURES.get(model.stem)
        with using_ops([module] if module else []):  # custom-op fixtures with their op module's kernels
            simulate_model(str(model), system)
    assert replayed and all(closed == simpy for closed, simpy in replayed)
