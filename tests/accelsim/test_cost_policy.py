"""Partition policy 'cost': partitions that do not pay for themselves stay on the host."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from support import CUSTOM_OP_FIXTURES, FIXTURES

from accelsim.delegates.spec import PartitionPolicy
from accelsim.hardware.config import ConfigError, apply_overrides, load_hardware, load_system
from accelsim.runtime.read import load_model
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.costing import simulate_interpreter
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.inference import HOST
from accelsim.simulation.placement import cost_aware_interpreter

HW = Path(__file__).resolve().parents[2] / "hw_configs"
HOST_CFG = HW / "host_cpu.yaml"
ACCELERATORS = sorted(p.stem for p in HW.glob("*.yaml") if load_hardware(p).is_accelerator)
# atan_custom needs its custom op registered, which a simulated system has no resolver for.
MODELS = sorted(p.stem for p in FIXTURES.glob("*.tflite") if p.stem not in CUSTOM_OP_FIXTURES)


def _system(accel, overrides):
    hw = apply_overrides(load_hardware(HW / f"{accel}.yaml"), overrides)
    return dataclasses.replace(load_system(HOST_CFG, []), accelerators=(hw,))


def _without_activations(policy="tflite", call_overhead=None, objective="latency"):
    """Edge TPU (USB) claiming no TANH/LOGISTIC, so interleaved_int8 splits into several partitions."""
    edgetpu = load_hardware(HW / "edgetpu_usb.yaml")
    claims = tuple(c for c in edgetpu.policy.claims if c.op not in {"TANH", "LOGISTIC"})
    link = edgetpu.hardware.link
    if call_overhead is not None:
        link = dataclasses.replace(link, call_overhead=call_overhead)
    hw = dataclasses.replace(edgetpu, hardware=dataclasses.replace(edgetpu.hardware, link=link)).with_policy(
        claims=claims, partition=PartitionPolicy(policy, objective=objective))
    return dataclasses.replace(load_system(HOST_CFG, []), accelerators=(hw,))


def test_a_partition_slower_than_the_host_stays_on_the_host():
    path = str(FIXTURES / "interleaved_int8.tflite")
    # a driver call of 5 ms dwarfs what the small partitions' nodes cost on the host
    tflite = simulate_model(path, _without_activations(call_overhead=5e-3))
    cost = simulate_model(path, _without_activations("cost", 5e-3))
    assert len(tflite.partitions) >= 3 and tflite.choice is None
    choice = cost.choice
    assert choice.search == "exact" and choice.objective == "latency"
    assert len(choice.tflite) == len(tflite.partitions)
    assert choice.host and choice.tflite_latency == pytest.approx(tflite.latency)
    assert cost.latency < tflite.latency
    assert len(cost.partitions) == len(tflite.partitions) - len(choice.host)
    kept = [r for r in cost.delegation if "kept on the host" in (r["reason"] or "")]
    assert kept and all(next(n for n in cost.nodes if n.index == r["index"]).unit == HOST for r in kept)


def test_energy_objective_minimises_energy():
    path = str(FIXTURES / "interleaved_int8.tflite")
    cost = simulate_model(path, _without_activations("cost", 5e-3, "energy"))
    assert cost.choice.objective == "energy"
    assert cost.energy <= cost.choice.tflite_energy


def test_a_bad_objective_names_the_key_and_the_choices():
    with pytest.raises(ConfigError, match=r"partition\.objective.*latency.*energy"):
        _system("edgetpu_usb", {"partition.policy": "cost", "partition.objective": "area"})


def test_two_cost_accelerators_must_share_one_objective():
    a = apply_overrides(load_hardware(HW / "edgetpu_usb.yaml"), {"partition.policy": "cost"})
    b = apply_overrides(load_hardware(HW / "hexagon_dsp.yaml"),
                        {"partition.policy": "cost", "partition.objective": "energy"})
    sys_ = dataclasses.replace(load_system(HOST_CFG, []), accelerators=(a, b))
    with pytest.raises(ValueError, match=r"different objectives \['energy', 'latency'\]"):
        simulate_model(str(FIXTURES / "interleaved_int8.tflite"), sys_)


@pytest.mark.slow
@pytest.mark.parametrize("accel", ACCELERATORS)
@pytest.mark.parametrize("model", MODELS)
def test_cost_policy_is_never_slower_than_tflite(accel, model):
    path = str(FIXTURES / f"{model}.tflite")
    tflite = simulate_model(path, _system(accel, {"partition.policy": "tflite"}))
    cost = simulate_model(path, _system(accel, {"partition.policy": "cost"}))
    assert cost.latency <= tflite.latency * (1 + 1e-12)
    assert cost.choice.tflite_latency == pytest.approx(tflite.latency)


@pytest.mark.slow
def test_benchmark_shows_tflites_choice_next_to_the_cost_aware_one(tmp_path, capsys):
    from accelsim.cli.main import main

    text = (HW / "hexagon_dsp.yaml").read_text(encoding="utf-8").replace("policy: tflite", "policy: cost")
    hw = tmp_path / "hexagon_cost.yaml"
    hw.write_text(text, encoding="utf-8")
    model = str(FIXTURES / "transformer_block_int8.tflite")
    assert main(["benchmark", model, "--hw", str(hw), "--num-runs", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    chosen = data["partition_choice"]
    assert chosen["search"] == "exact" and chosen["host_partitions"]
    assert chosen["tflite_latency_us"] - data["simulated_us"]["latency"] == pytest.approx(chosen["saved_us"], abs=0.01)
    assert chosen["saved_us"] > 0
    assert main(["benchmark", model, "--hw", str(hw), "--num-runs", "1"]) == 0
    line = next(t for t in capsys.readouterr().out.splitlines() if t.startswith("Partition policy cost"))
    assert f"of TFLite's {chosen['tflite_partitions']} partitions on the host" in line and "saves" in line


def test_the_delegate_keeps_partitions_holding_host_nodes_on_the_host():
    model = load_model(FIXTURES / "interleaved_int8.tflite")
    hexagon = load_hardware(HW / "hexagon_dsp.yaml")
    tflite, _ = build_interpreter(model, dataclasses.replace(load_system(HOST_CFG, []), accelerators=(hexagon,)))
    parts = [tuple(n.params.nodes_to_replace) for n in map(tflite.primary.nodes.__getitem__,
                                                              tflite.primary.execution_plan) if n.delegate]
    assert len(parts) == 2
    costed = hexagon.with_policy(partition=dataclasses.replace(hexagon.policy.partition, kind="cost"))
    sys_ = dataclasses.replace(load_system(HOST_CFG, []), accelerators=(costed,))
    it, _ = build_interpreter(model, sys_, {"hexagon_dsp": frozenset(parts[0][:1])})
    rows = {r["index"]: r for r in it.get_delegation_report()}
    assert all(not rows[n]["claimed"] and "kept on the host" in rows[n]["reason"] for n in parts[0])
    assert all(rows[n]["claimed"] for n in parts[1])
    # the option means nothing to the other policies
    plain, _ = build_interpreter(model, dataclasses.replace(load_system(HOST_CFG, []), accelerators=(hexagon,)),
                                 {"hexagon_dsp": frozenset(parts[0])})
    assert all(r["claimed"] for r in plain.get_delegation_report() if r["index"] in parts[0])


def test_a_bad_objective_in_the_delegate_spec_names_the_choices():
    with pytest.raises(ValueError, match=r"partition objective must be one of \['latency', 'energy'\], got 'area'"):
        PartitionPolicy("cost", objective="area")


@pytest.mark.slow
def test_greedy_search_drops_partitions_while_one_saves():
    path = FIXTURES / "transformer_block_int8.tflite"
    sys_ = _system("hexagon_dsp", {"partition.policy": "cost"})
    model = load_model(path)
    greedy, delegates, choice = cost_aware_interpreter(model, sys_, exact_limit=0)
    exact = simulate_model(str(path), sys_)
    assert choice.search == "greedy" and exact.choice.search == "exact" and len(choice.tflite) == 9
    sim = simulate_interpreter(greedy, delegates, sys_, choice=choice)
    assert sim.latency <= choice.tflite_latency
    assert choice.host == exact.choice.host  # every partition loses its 300 us call here, so greedy finds the optimum


def test_on_a_slow_host_only_the_partition_that_does_not_pay_moves():
    # a 20 MHz host: three of the four Edge TPU partitions earn their transfers and call back, one does not
    path = str(FIXTURES / "interleaved_int8.tflite")
    slow = apply_overrides(load_hardware(HOST_CFG), {"clock": "20 MHz"})
    tflite = simulate_model(path, dataclasses.replace(_without_activations(), host=slow))
    cost = simulate_model(path, dataclasses.replace(_without_activations("cost"), host=slow))
    assert cost.choice.host == (("edgetpu_usb", 1),) and len(cost.choice.tflite) == 4
    assert len(cost.partitions) == 3 and cost.latency < tflite.latency
    moved = next(p for p in tflite.partitions if p.index == 1).nodes
    assert all(n.unit == HOST for n in cost.nodes if n.index in moved)
    assert cost.delegated_nodes == tflite.delegated_nodes - len(moved)
