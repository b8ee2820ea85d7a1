"""The tensor kind (Hexagon-NPU-like) on hand-computed cases, and the shipped hexagon_v75_npu on fixture models."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from accelsim.hardware.config import ConfigError, apply_overrides, load_hardware, load_system
from accelsim.hardware.cost import tensor
from accelsim.runtime.work import NodeWork, gemm_work
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.diff import inference_diff
from accelsim.simulation.inference import HOST

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hw_configs"
MODELS = ROOT / "tests" / "fixtures" / "models"


@pytest.fixture(scope="module")
def shipped():
    return load_hardware(HW / "hexagon_v75_npu.yaml")


@pytest.fixture(scope="module")
def npu(shipped):
    """Small round rates and memory fast enough never to be the bound."""
    return apply_overrides(shipped, {
        "clock": "1 GHz", "compute.macs_per_cycle": {"int8": 64, "float16": 32},
        "compute.vector_per_cycle": {"int8": 8, "float16": 4}, "compute.channel_block": 8,
        "compute.node_cycles": 100, "compute.prefetch_bytes": 0,
        "memory.levels": {"vtcm": {"size": "8 MiB", "bandwidth": "1000 TB/s"}, "dram": {"bandwidth": "1000 TB/s"}}})


def test_tensor_classes_tiles_precision_and_dispatch_by_hand(npu):
    hw = npu.hardware
    # A GEMM on the matrix unit: K 12 and N 10 are paid as whole 8-channel tiles, 16 x 16.
    fc = gemm_work(4, 12, 10)
    assert tensor.cost(fc, hw).cycles == 100 + 4 * 16 * 16 // 64
    # uint8 runs at int8's rates; a float32 node at float16's (half the MACs per cycle).
    assert tensor.cost(dataclasses.replace(fc, dtype="uint8"), hw).cycles == 100 + 16
    assert tensor.cost(gemm_work(4, 12, 10, dtype="float32", itemsize=4), hw).cycles == 100 + 32
    # A GEMM's fused activation is free (the matrix unit's output stage); any other node's is vector work,
    # as is every other class, a move counted by its output elements.
    assert tensor.cost(dataclasses.replace(fc, activation_ops=40), hw).cycles == 100 + 16
    assert tensor.cost(NodeWork("ADD", "int8", macs=400, activation_ops=40, kind="elementwise"), hw).cycles == 155
    assert tensor.cost(NodeWork("ADD", "int8", macs=400, kind="elementwise"), hw).cycles == 100 + 50
    assert tensor.cost(NodeWork("ADD", "float32", macs=400, kind="elementwise"), hw).cycles == 100 + 100
    assert tensor.cost(NodeWork("LOGISTIC", "int8", macs=400, kind="lookup"), hw).cycles == 100 + 50
    assert tensor.cost(NodeWork("PAD", "int8", macs=0, elements=400, kind="move"), hw).cycles == 100 + 50


def test_float_nodes_move_the_bytes_of_their_precision(npu):
    slow = apply_overrides(npu, {"memory.levels": {"vtcm": {"size": "8 MiB", "bandwidth": "1 GB/s"},
                                                   "dram": {"bandwidth": "1 GB/s"}}})
    fc = gemm_work(8, 256, 256, dtype="float32", itemsize=4)
    fp16 = tensor.cost(fc, slow.hardware)
    fp32 = tensor.cost(fc, apply_overrides(slow, {"compute.float_precision": "float32"}).hardware)
    # fp16: weights converted at prepare, activations kept in fp16; half of every float32 byte.
    assert dict(fp16.level_bytes)["dram"] * 2 == dict(fp32.level_bytes)["dram"] == fc.weight_bytes
    assert dict(fp16.level_bytes)["vtcm"] * 2 == dict(fp32.level_bytes)["vtcm"] == fc.input_bytes + fc.output_bytes
    assert fp16.bound == fp32.bound == "dram"
    assert fp16.seconds == pytest.approx((100 + math.ceil(fc.weight_bytes / 2)) / 1e9)


def test_weights_are_fetched_ahead_while_earlier_nodes_compute(npu):
    """DRAM at 1 GB/s: a 1000-cycle vector node leaves it idle 1 us, time to fetch 1000 weight bytes ahead."""
    slow = apply_overrides(npu, {"memory.levels": {"vtcm": {"size": "8 MiB", "bandwidth": "1000 TB/s"},
                                                   "dram": {"bandwidth": "1 GB/s"}}})
    busy = NodeWork("ADD", "int8", macs=8000, kind="elementwise")  # 1000 cycles, no DRAM bytes
    fc = gemm_work(1, 100, 30)  # 3000 weight bytes: 3 us at 1 GB/s, 47 cycles of MACs
    alone = tensor.costs([busy, fc], slow.hardware)
    assert alone[1].cycles == 100 + 3000 and alone[1].bound == "dram"
    for limit, hidden in ((4096, 1000), (600, 600)):
        ahead = tensor.costs([busy, fc], apply_overrides(slow, {"compute.prefetch_bytes": limit}).hardware)
        assert ahead[0] == alone[0]
        assert ahead[1].cycles == 100 + 3000 - hidden  # the bytes fetched ahead leave its time ...
        assert ahead[1].level_bytes == alone[1].level_bytes  # ... but not its traffic


def test_a_precision_without_rates_takes_the_slowest_and_says_so(npu):
    fp32 = apply_overrides(npu, {"compute.float_precision": "float32"})
    add = NodeWork("ADD", "float32", macs=400, kind="elementwise")
    assert tensor.cost(add, fp32.hardware).cycles == 100 + 100  # the slowest listed vector rate, float16's 4
    assert fp32.hardware.notes()[:2] == [
        "compute.macs_per_cycle has no float32: float32 nodes get its slowest rate, 32",
        "compute.vector_per_cycle has no float32: float32 nodes get its slowest rate, 4"]
    assert tensor.notes(npu.hardware) == []


def test_a_float_precision_outside_the_choices_is_located(tmp_path):
    text = (HW / "hexagon_v75_npu.yaml").read_text().replace("float_precision: float16", "float_precision: bf16")
    path = tmp_path / "npu.yaml"
    path.write_text(text)
    line = text.splitlines().index(next(t for t in text.splitlines() if "float_precision: bf16" in t)) + 1
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert f"{path}:{line}" in str(info.value) and "float16" in str(info.value) and "float32" in str(info.value)


@pytest.mark.parametrize("model", ["mobilenet_v2_035_96_float.tflite", "mobilenet_v2_035_96_int8.tflite"])
def test_hexagon_v75_npu_takes_every_node_of_a_mobilenet(model):
    """AI Hub runs every layer of MobileNet-v2 on the NPU, float and w8a8; so does the shipped config."""
    system = load_system(HW / "host_cpu.yaml", [HW / "hexagon_v75_npu.yaml"])
    sim = simulate_model(str(MODELS / model), system)
    assert sim.nodes and all(n.unit == "hexagon_v75_npu" for n in sim.nodes)
    assert not any(n.unit == HOST for n in sim.nodes) and len(sim.partitions) == 1


def test_hexagon_v75_npu_runs_float_graphs_in_fp16_and_int8_bit_exact():
    """`diff` shows the fp16 error of a float model against float32, and none on an int8 one."""
    system = load_system(HW / "host_cpu.yaml", [HW / "hexagon_v75_npu.yaml"])
    fp16 = inference_diff(str(MODELS / "mobilenet_v2_035_96_float.tflite"), system, num_runs=1).outputs[0]
    assert 0 < fp16.max_abs_error < 1e-2 and fp16.top1_agreement == 1.0
    int8 = inference_diff(str(MODELS / "mobilenet_v2_035_96_int8.tflite"), system, num_runs=1).outputs[0]
    assert int8.max_abs_error == 0
