"""`assign: cost`: several accelerators share the nodes they claim by simulated cost, the host included."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from support import CUSTOM_OP_FIXTURES, FIXTURES

from accelsim.experiments.executors import SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import design_points
from accelsim.experiments.run import run_experiment
from accelsim.hardware.config import Assign, ConfigError, load_system
from accelsim.runtime.read import load_model
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.inference import HOST
from accelsim.simulation.placement import _claim_runs, _owners_allowed

HW = Path(__file__).resolve().parents[2] / "hw_configs"
PAIRS = [("edgetpu_usb", "hexagon_dsp"), ("hexagon_dsp", "ethos_u55_128")]
# atan_custom needs its custom op registered, which a simulated system has no resolver for.
MODELS = sorted(p.stem for p in FIXTURES.glob("*.tflite") if p.stem not in CUSTOM_OP_FIXTURES)


def _system(*accels: str, assign: Assign | None = None):
    system = load_system(HW / "host_cpu.yaml", [HW / f"{a}.yaml" for a in accels])
    return system if assign is None else dataclasses.replace(system, assign=assign)


def _policy_cost(system, objective="latency"):
    """The same system with partition policy 'cost' on every accelerator that allows it (not the Edge TPU's prefix)."""
    return dataclasses.replace(system, accelerators=tuple(
        a if a.policy.partition.kind == "prefix" else a.with_policy(
            partition=dataclasses.replace(a.policy.partition, kind="cost", objective=objective))
        for a in system.accelerators))


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
@pytest.mark.parametrize("model", MODELS)
def test_never_slower_than_tflite_order_or_policy_cost(model, pair):
    path = str(FIXTURES / f"{model}.tflite")
    order = simulate_model(path, _system(*pair))
    costed = simulate_model(path, _policy_cost(_system(*pair)))
    assigned = simulate_model(path, _system(*pair, assign=Assign("cost")))
    assert assigned.latency <= order.latency * (1 + 1e-9)
    assert assigned.latency <= costed.latency * (1 + 1e-9)
    choice = assigned.choice
    assert choice.search in ("assign exact", "assign greedy")
    assert choice.tflite_latency == pytest.approx(order.latency)
    assert len(choice.tflite) == len(order.partitions)


def test_energy_objective_never_costs_more_energy_than_tflite_order():
    path = str(FIXTURES / "interleaved_int8.tflite")
    order = simulate_model(path, _system("hexagon_dsp", "ethos_u55_128"))
    assigned = simulate_model(path, _system("hexagon_dsp", "ethos_u55_128", assign=Assign("cost", "energy")))
    assert assigned.choice.objective == "energy" and assigned.energy <= order.energy


@pytest.mark.slow
def test_a_model_goes_to_the_accelerator_that_is_faster_for_it_rather_than_the_first():
    # The Edge TPU (USB) comes first and takes MobileNetV2-224 (its prefix is the whole model); the
    # Hexagon-like DSP behind it is faster for it, which TFLite's order and policy cost cannot see.
    path = str(FIXTURES / "mobilenet_v2_100_224_int8.tflite")
    order = simulate_model(path, _system("edgetpu_usb", "hexagon_dsp"))
    costed = simulate_model(path, _policy_cost(_system("edgetpu_usb", "hexagon_dsp")))
    assigned = simulate_model(path, _system("edgetpu_usb", "hexagon_dsp", assign=Assign("cost")))
    assert {n.unit for n in order.nodes} == {"edgetpu_usb"}
    assert {n.unit for n in assigned.nodes} == {"hexagon_dsp"}
    assert assigned.latency < min(order.latency, costed.latency)
    assert assigned.choice.search == "assign exact" and assigned.choice.host == ()
    # every node was claimable by the Edge TPU: it refused them because they were assigned elsewhere
    reasons = {r["reason"] for r in assigned.delegation}
    assert all("assigned it to another target" in r for r in reasons if r and r.startswith("edgetpu_usb"))


def test_partitions_that_do_not_pay_go_to_the_host_and_say_why():
    # on host_cpu the small interleaved model is fastest on the host alone (24.7 us against 300+)
    assigned = simulate_model(str(FIXTURES / "interleaved_int8.tflite"),
                              _system("edgetpu_usb", "hexagon_dsp", assign=Assign("cost")))
    assert {n.unit for n in assigned.nodes} == {HOST}
    assert assigned.choice.host == assigned.choice.tflite  # TFLite's every partition ends up on the host
    # the DSP could take every node but RESIZE_BILINEAR v3 (node 7): it was told not to
    assert all("hexagon_dsp could run it, but the system assigned it to another target" in r["reason"]
               for r in assigned.delegation if r["index"] != 7)


@pytest.mark.slow
def test_many_shared_runs_are_handed_out_greedily():
    assigned = simulate_model(str(FIXTURES / "transformer_block_int8.tflite"),
                              _system("hexagon_dsp", "ethos_u55_128", assign=Assign("cost")))
    assert assigned.choice.search == "assign greedy"


def test_runs_group_consecutive_nodes_with_the_same_claimers():
    claimable = {"a": frozenset({0, 1, 2, 5, 6}), "b": frozenset({1, 2, 3, 6})}
    runs = _claim_runs(claimable, [0, 1, 2, 3, 4, 5, 6], ["a", "b"])
    assert [(r.claimers, r.nodes) for r in runs] == [(("a",), (0,)), (("a", "b"), (1, 2)), (("b",), (3,)),
                                                     (("a",), (5,)), (("a", "b"), (6,))]
    # the shared runs (1-2 and 6) go to the owners given, in order; single-claimer runs to their claimer
    assert _owners_allowed(runs, ["b", "a"], ["a", "b"]) == {"a": frozenset({0, 5, 6}), "b": frozenset({1, 2, 3})}


def test_a_delegate_claims_only_its_allowed_nodes_and_a_prefix_ends_at_the_first_refused():
    model = load_model(str(FIXTURES / "interleaved_int8.tflite"))
    system = _system("edgetpu_usb", "hexagon_dsp")
    it, delegates = build_interpreter(model, system, allowed={"edgetpu_usb": frozenset({0, 1, 2, 4, 5}),
                                                              "hexagon_dsp": frozenset({8, 9})})
    # node 3 is nobody's: the Edge TPU's prefix stops there, though it is allowed 4 and 5
    assert delegates[0].claimed_nodes() == (0, 1, 2)
    assert sorted(delegates[1].claimed_nodes()) == [8, 9]
    report = {r["index"]: r for r in it.get_delegation_report()}
    assert "edgetpu_usb could run it, but the system assigned it to another target" in report[3]["reason"]
    assert "after node 3 (DEPTHWISE_CONV_2D), the first node assigned to another target" in report[4]["reason"]
    assert not report[4]["claimed"]


def _experiment(tmp_path, assign: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(f"""\
name: assign
models: [{FIXTURES / "interleaved_int8.tflite"}]
host: host_cpu
variants:
  - {{name: both, accelerators: [edgetpu_usb, hexagon_dsp], assign: {assign}}}
""")
    return path


@pytest.mark.slow
def test_an_experiment_variant_assigns_by_cost(tmp_path):
    exp = load_experiment(_experiment(tmp_path, "{policy: cost, objective: energy}"))
    (point,) = design_points(exp)
    assert point.system.assign == Assign("cost", "energy")
    ordered = design_points(load_experiment(_experiment(tmp_path, "order")))[0]
    assert ordered.system.assign == Assign() and ordered.id != point.id  # a different assignment is another point
    run_experiment(exp, tmp_path / "out", executor=SerialExecutor())
    (rec,) = json.loads((tmp_path / "out" / "results.json").read_text())["points"]
    assert rec["status"] == "ok" and rec["partition_choice"]["search"].startswith("assign ")
    assert rec["partition_choice"]["objective"] == "energy"


@pytest.mark.parametrize(("assign", "expected"), [
    ("fastest", r"exp.yaml:5: variants\[0\].assign: expected one of order, cost \(or \{policy: cost, objective: "
                r"latency\|energy\}\), got 'fastest'"),
    ("{policy: cost, objective: area}", r"exp.yaml:5: variants\[0\].assign.objective: expected one of latency, "
                                        r"energy, got 'area'"),
    ("{policy: cost, goal: energy}", r"exp.yaml:5: variants\[0\].assign.goal: unknown key; expected policy or "
                                     r"objective"),
])
def test_a_bad_assign_says_file_line_key_and_the_choices(tmp_path, assign, expected):
    with pytest.raises(ConfigError, match=expected):
        load_experiment(_experiment(tmp_path, assign))


def test_an_assign_built_in_code_names_the_choices():
    with pytest.raises(ValueError, match=r"assign must be one of \['order', 'cost'\], got 'fastest'"):
        Assign("fastest")
    with pytest.raises(ValueError, match=r"assign objective must be one of \['latency', 'energy'\], got 'area'"):
        Assign("cost", "area")
