"""Virtual accelerators end to end: claiming, simulated kernels, transfers, parameter cache, diff."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from support import FIXTURES, counter_loop_model

from accelsim.delegates.spec import ClaimRule, Numerics, PartitionPolicy
from accelsim.hardware.config import apply_overrides, load_hardware, load_system
from accelsim.runtime.errors import WorkError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.read import load_model
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.costing import simulate_interpreter
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.diff import inference_diff
from accelsim.simulation.inference import HOST

HW = Path(__file__).resolve().parents[2] / "hw_configs"
HOST_CFG = HW / "host_cpu.yaml"
ACCELERATORS = ["edgetpu_usb", "edgetpu_pcie", "hexagon_dsp"]
MODELS = ["mobilenet_v2_035_96_float", "mobilenet_v2_035_96_int8", "interleaved_float", "interleaved_int8"]


def system(*accels, **overrides):
    """The host and `accels`, the first delegated with its policy's fields replaced by `overrides`."""
    sys_ = load_system(HOST_CFG, [HW / f"{a}.yaml" for a in accels])
    if overrides:
        first = sys_.accelerators[0].with_policy(**overrides)
        sys_ = dataclasses.replace(sys_, accelerators=(first, *sys_.accelerators[1:]))
    return sys_


@pytest.mark.slow
@pytest.mark.parametrize("accel", ACCELERATORS)
@pytest.mark.parametrize("model", MODELS)
def test_every_shipped_config_runs_every_model_with_zero_error(accel, model):
    path = FIXTURES / f"{model}.tflite"
    report = inference_diff(str(path), system(accel), num_runs=2, seed=1)
    assert all(o.max_abs_error == 0.0 for o in report.outputs)
    sim = simulate_model(str(path), system(accel))
    assert sim.latency > 0
    assert len(sim.nodes) == len(load_model(path).subgraphs[0].operators)
    if model.endswith("_float"):
        assert sim.delegated_nodes == 0  # int8-only hardware leaves float models on the host


def test_int8_only_claiming_gives_the_dtype_reason():
    sim = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_float.tflite"), system("hexagon_dsp"))
    first = sim.delegation[0]
    assert not first["claimed"] and "dtype float32 not in [int8, uint8]" in first["reason"]
    assert all(n.unit == HOST for n in sim.nodes) and sim.partitions == ()


def test_edgetpu_prefix_rule_stops_at_the_first_unsupported_op():
    # Take TANH away from the Edge TPU: everything from the first TANH on stays on the host,
    # even the convolutions after it, and there is exactly one (prefix) partition.
    edgetpu = load_hardware(HW / "edgetpu_usb.yaml")
    claims = tuple(c for c in edgetpu.policy.claims if c.op != "TANH")
    sim = simulate_model(str(FIXTURES / "interleaved_int8.tflite"), system("edgetpu_usb", claims=claims))
    rows = sim.delegation
    first_tanh = next(r["index"] for r in rows if r["op"] == "TANH")
    plan_order = [r["index"] for r in rows]
    assert len(sim.partitions) == 1
    later = [r for r in rows if plan_order.index(r["index"]) > plan_order.index(first_tanh)]
    assert later and not any(r["claimed"] for r in later)
    assert any(r["op"] == "CONV_2D" and "first unsupported op" in r["reason"] for r in later)


def test_version_gating_keeps_the_node_on_the_host_with_the_reason():
    sim = simulate_model(str(FIXTURES / "interleaved_int8.tflite"), system("hexagon_dsp"))
    resize = next(r for r in sim.delegation if r["op"] == "RESIZE_BILINEAR")
    assert not resize["claimed"] and "version 3 above max 2" in resize["reason"]
    assert next(n for n in sim.nodes if n.index == resize["index"]).unit == HOST


def _tflite_policy_without(ops: set[str]):
    edgetpu = load_hardware(HW / "edgetpu_usb.yaml")
    claims = tuple(c for c in edgetpu.policy.claims if c.op not in ops)
    return system("edgetpu_usb", claims=claims, partition=PartitionPolicy("tflite"))


def test_every_partition_boundary_adds_transfers():
    path = str(FIXTURES / "interleaved_int8.tflite")
    one = simulate_model(path, system("edgetpu_usb", partition=PartitionPolicy("tflite")))
    many = simulate_model(path, _tflite_policy_without({"TANH", "LOGISTIC"}))
    assert len(one.partitions) == 1 and len(many.partitions) >= 3
    for sim in (one, many):
        transfers = [e for e in sim.result.events if e.kind == "transfer"]
        calls = [e for e in sim.result.events if e.kind == "overhead"]
        assert len(calls) == len(sim.partitions)
        assert {e.partition for e in transfers} == {p.index for p in sim.partitions}
    assert many.result.by_kind["transfer"] > one.result.by_kind["transfer"]
    assert many.result.by_kind["overhead"] == pytest.approx(len(many.partitions) * 100e-6)
    assert many.partition_overhead > one.partition_overhead


def test_parameters_stream_when_the_cache_is_too_small():
    path = str(FIXTURES / "mobilenet_v2_100_224_int8.tflite")
    edgetpu = load_hardware(HW / "edgetpu_usb.yaml")
    roomy = simulate_model(path, system("edgetpu_usb"))
    # a 1 MiB parameter cache of its own (activations keep the 8 MiB sram)
    small = apply_overrides(edgetpu, {"memory.levels": {"cache": {"size": "1 MiB", "bandwidth": "64 GB/s"},
                                                        "sram": {"size": "8 MiB", "bandwidth": "64 GB/s"}},
                                      "memory.cache": "cache"})
    tight = simulate_model(path, dataclasses.replace(system("edgetpu_usb"), accelerators=(small,)))
    assert sum(p.streamed_param_bytes for p in roomy.partitions) == 0
    streamed = sum(p.streamed_param_bytes for p in tight.partitions)
    assert streamed > 2 << 20
    assert tight.latency > roomy.latency
    # what streams is not loaded at initialization
    assert tight.init.bytes_moved + streamed == roomy.init.bytes_moved


def test_shared_memory_dsp_moves_no_bytes_but_pays_the_call():
    sim = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"), system("hexagon_dsp"))
    assert sim.transfer_bytes == 0 and sim.init.latency == 0
    assert sim.result.by_kind["overhead"] > 0


def test_dataflow_overlaps_host_and_accelerator_on_independent_branches():
    path = str(FIXTURES / "interleaved_int8.tflite")
    sys_ = _tflite_policy_without({"TANH", "LOGISTIC"})
    seq = simulate_model(path, sys_, "sequential")
    flow = simulate_model(path, sys_, "dataflow")
    assert flow.latency <= seq.latency
    total = sum(e.duration for e in seq.result.events)
    assert seq.latency == pytest.approx(total)


def test_float16_numerics_deviate_and_are_reported():
    path = str(FIXTURES / "mobilenet_v2_035_96_float.tflite")
    hexagon = load_hardware(HW / "hexagon_dsp.yaml")
    claims = tuple(dataclasses.replace(c, dtypes=frozenset({"float32"})) for c in hexagon.policy.claims)
    sys_ = system("hexagon_dsp", claims=claims, numerics=Numerics("float16"))
    report = inference_diff(path, sys_, num_runs=3)
    err = report.outputs[0]
    assert 0 < err.max_abs_error < 1e-2
    ref = inference_diff(path, system("hexagon_dsp"), num_runs=1)
    assert ref.outputs[0].max_abs_error == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["half_even", "truncate"])
def test_declared_rounding_mode_changes_requantized_outputs(mode):
    sys_ = system("edgetpu_usb", numerics=Numerics("rounding", mode))
    report = inference_diff(str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"), sys_, num_runs=2)
    assert report.outputs[0].max_abs_error > 0


def test_half_away_from_zero_rounding_differs_from_litert_only_slightly():
    sys_ = system("edgetpu_usb", numerics=Numerics("rounding", "half_away_from_zero"))
    report = inference_diff(str(FIXTURES / "dilated_cnn_int8.tflite"), sys_, num_runs=2)
    assert report.outputs[0].max_abs_error <= 1.0  # dequantized float output moves by a few quanta at most


def test_simulated_outputs_equal_reference_invoke():
    path = FIXTURES / "mobilenet_v2_035_96_int8.tflite"
    it, delegates = build_interpreter(load_model(path), system("edgetpu_usb"))
    ref = Interpreter(model_path=path)
    ref.allocate_tensors()
    x = np.random.default_rng(5).integers(-128, 128, (1, 96, 96, 3)).astype(np.int8)
    for i in (it, ref):
        i.set_tensor(i.get_input_details()[0]["index"], x)
        i.invoke()
    out = it.get_output_details()[0]["index"]
    np.testing.assert_array_equal(it.get_tensor(out), ref.get_tensor(out))
    works = delegates[0].work_by_node()
    assert len(works) == 65 and sum(w.macs for w in works.values()) > 1e6


def test_diff_report_layout():
    report = inference_diff(str(FIXTURES / "interleaved_int8.tflite"), system("edgetpu_usb"), num_runs=3)
    lines = report.lines()
    assert lines[:3] == ["Delegation: edgetpu_usb took 20 of 20 nodes", "Inputs: random (seed 0)",
                         "Num evaluation runs: 3"]
    assert lines[3].startswith("Reference run latency: avg=") and lines[4].startswith("Test run latency: avg=")
    assert lines[5].startswith("OutputDiff[0]") and "avg_error=0 steps (0 real)," in lines[5]
    with pytest.raises(ValueError, match="num_runs must be >= 1"):
        inference_diff(str(FIXTURES / "interleaved_int8.tflite"), system("edgetpu_usb"), num_runs=0)


def test_claim_rule_reasons_survive_into_the_report():
    rule = ClaimRule("CONV_2D", (1, 3), frozenset({"int8"}), {"max_kernel_size": 1})
    sim = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"), system("edgetpu_usb", claims=(rule,)))
    reasons = {r["reason"] for r in sim.delegation if not r["claimed"]}
    assert any("kernel 3x3 above max 1" in r for r in reasons)


# -- control flow on the host ------------------------------------------------------------------------


def test_a_loop_on_the_host_costs_its_body_times_its_trips():
    path = str(FIXTURES / "lstm_gru_float.tflite")
    base = simulate_model(path, system())
    assert [(c.where, c.trips, c.source) for c in base.loops] == [("0:1", 10, "constant"), ("0:2", 10, "constant")]

    def loop_seconds(trips: int) -> list[float]:
        sim = simulate_model(path, system(), loops=LoopTrips(nodes={"0:1": trips, "0:2": trips}))
        return [n.seconds for n in sim.nodes if n.op == "WHILE"]

    none, ten, twenty = loop_seconds(0), loop_seconds(10), loop_seconds(20)
    assert ten == [n.seconds for n in base.nodes if n.op == "WHILE"]
    for s0, s10, s20 in zip(none, ten, twenty):
        assert 0 < s0 < s10 < s20  # zero trips still pay the one failing cond check
        assert s20 - s10 == pytest.approx(s10 - s0, rel=1e-9)  # linear in the trip count
    # The recurrent layers are the model: the two loops are nearly all of its host latency.
    assert sum(ten) > 0.9 * base.latency


def test_a_loop_nobody_can_count_is_an_error_naming_the_node_and_the_keys():
    model = counter_loop_model(None, 5)
    with pytest.raises(WorkError, match=r"subgraph 0 node 0 \(WHILE\): the trip count is unknown.*node '0:0'.*"
                                        r"loops: \{default_trips: N, nodes: .*--loop-trips"):
        simulate_model(model, system())
    sim = simulate_model(model, system(), loops=LoopTrips(default_trips=4))
    assert [(c.where, c.trips, c.source) for c in sim.loops] == [("0:0", 4, "default")]


def test_host_latency_of_the_recurrent_model_follows_its_sequence_length():
    # Two converter-made models, the same layers over 10 and over 20 steps: trips come from the
    # loop bounds the converter wrote, and the loops are nearly all of the latency.
    host = load_system(HW / "host_x86.yaml", [])
    short = simulate_model(str(FIXTURES / "lstm_gru_float.tflite"), host)
    long = simulate_model(str(FIXTURES / "lstm_gru_steps20_float.tflite"), host)
    assert [(c.trips, c.source) for c in short.loops] == [(10, "constant")] * 2
    assert [(c.trips, c.source) for c in long.loops] == [(20, "constant")] * 2
    assert long.latency / short.latency == pytest.approx(2.0, rel=0.05)


def test_a_partition_after_a_dynamic_loop_output_is_costed_without_running(tmp_path):
    # lstm_gru_float's first WHILE has dynamic outputs, so the nodes after it are prepared only
    # when they first run; a cost-only simulation sizes them from the shapes allocation gave.
    text = (HW / "hexagon_dsp.yaml").read_text()
    claims = ("claims:\n  - {op: STRIDED_SLICE, versions: any, dtypes: [float32]}\n"
              "  - {op: FULLY_CONNECTED, versions: any, dtypes: [float32]}\n")
    cfg = tmp_path / "dsp.yaml"
    cfg.write_text(text[:text.index("claims:")] + claims)
    model = str(FIXTURES / "lstm_gru_float.tflite")
    sim = simulate_model(model, load_system(HOST_CFG, [cfg]))
    delegated = {n.op: n for n in sim.nodes if n.unit != HOST}
    assert set(delegated) == {"STRIDED_SLICE", "FULLY_CONNECTED"}
    assert delegated["FULLY_CONNECTED"].macs > 0
    # The same nodes, sized after an invoke, cost the same.
    interpreter, delegates = build_interpreter(load_model(model), load_system(HOST_CFG, [cfg]))
    interpreter.invoke()
    ran = simulate_interpreter(interpreter, delegates, load_system(HOST_CFG, [cfg]))
    assert [(n.index, n.seconds) for n in ran.nodes if n.unit != HOST] == \
        [(n.index, n.seconds) for n in sim.nodes if n.unit != HOST]
