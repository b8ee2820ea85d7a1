"""Cost models (systolic, vector, cpu) on hand-computed cases (node work itself: tests/runtime/test_work.py)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from accelsim.hardware import memory
from accelsim.hardware.config import apply_overrides, load_hardware
from accelsim.hardware.cost import cpu, systolic, vector
from accelsim.hardware.memory import streamed_parameters
from accelsim.hardware.roofline import dtype_itemsize
from accelsim.hardware.types import Cost, total
from accelsim.runtime import Interpreter
from accelsim.runtime.work import Gemm, NodeWork, conv_output_size, conv_work, gemm_work, subgraph_work

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hw_configs"
MODELS = ROOT / "tests" / "fixtures" / "models"
MiB = 1024**2


@pytest.fixture(scope="module")
def usb():
    return load_hardware(HW / "edgetpu_usb.yaml")


@pytest.fixture(scope="module")
def tpu(usb):
    """The USB Edge TPU on the 64 x 64 array and 320 MB/s link, without program bytes, that the hand counts use."""
    return apply_overrides(usb, {"compute.rows": 64, "compute.cols": 64, "compute.instruction_bytes": 0,
                                 "link.bandwidth": "320 MB/s"})


@pytest.fixture(scope="module")
def dsp():
    return load_hardware(HW / "hexagon_dsp.yaml")


@pytest.fixture(scope="module")
def host():
    return load_hardware(HW / "host_cpu.yaml")


# -- Cost ------------------------------------------------------------------------------------------


def test_cost_adds_field_by_field_and_sums():
    a = Cost(10, 1e-6, 100, 20, 30, 5)
    b = Cost(1, 2e-6, 1, 2, 3, 4)
    assert a + b == Cost(11, 3e-6, 101, 22, 33, 9)
    total = sum([a, b, b], Cost())
    assert (total.cycles, total.macs, total.bytes_read, total.bytes_written, total.param_bytes_streamed) == (
        12, 102, 24, 36, 13)
    assert total.seconds == pytest.approx(5e-6)
    with pytest.raises(TypeError):
        a + 1


def test_cost_addition_sums_every_field():
    """Each field set to a distinct value: a field the written-out __add__ forgot would show."""
    def made(base: int) -> Cost:
        values = {}
        for i, f in enumerate(dataclasses.fields(Cost)):
            values[f.name] = ((f"k{i}", base + i),) if isinstance(f.default, tuple) else type(f.default)(base + i)
        return Cost(**values)

    a, b = made(1), made(100)
    summed = a + b
    for f in dataclasses.fields(Cost):
        x, y, z = getattr(a, f.name), getattr(b, f.name), getattr(summed, f.name)
        assert z == (tuple({k: v + dict(y)[k] for k, v in x}.items()) if isinstance(x, tuple) else x + y), f.name


def test_total_is_the_sum():
    costs = [Cost(3, 1e-6, 5, level_bytes=(("sram", 1),), bound_seconds=(("sram", 1e-6),), energy=2e-12),
             Cost(4, 2e-6, 6, level_bytes=(("link", 2), ("sram", 3)), bound_seconds=(("compute", 2e-6),))]
    assert total(costs) == sum(costs, Cost()) and total([]) == Cost()


def test_cost_sums_bytes_per_level_and_time_per_bound_by_name():
    a = Cost(seconds=3e-6, compute_seconds=1e-6, level_bytes=(("sram", 100), ("link", 50)),
             bound_seconds=(("link", 3e-6),))
    b = Cost(seconds=2e-6, compute_seconds=2e-6, level_bytes=(("sram", 10),), bound_seconds=(("compute", 2e-6),))
    c = Cost(seconds=4e-6, compute_seconds=1e-6, level_bytes=(("link", 5), ("dram", 7)),
             bound_seconds=(("link", 4e-6),))
    total = a + b + c
    assert total.level_bytes == (("sram", 110), ("link", 55), ("dram", 7))
    assert total.bound_seconds == (("link", 7e-6), ("compute", 2e-6))
    assert (total.bound, total.bytes_on("link"), total.bytes_on("flash")) == ("link", 55, 0)
    assert total.stall_seconds == pytest.approx(5e-6)
    assert Cost().bound == "" and b.bound == "compute"


# -- systolic: SCALE-Sim's fold arithmetic -----------------------------------------------------------


@pytest.mark.parametrize("dataflow, folds, per_fold", [
    # M=100 output pixels, K=20 window, N=10 filters on 8 rows x 4 cols.
    ("os", 13 * 3, 20 + 8 + 4 - 2),   # rows hold M (ceil 100/8), cols hold N (ceil 10/4); K streams
    ("ws", 3 * 3, 2 * 8 + 4 + 100 - 2),  # rows hold K (ceil 20/8), cols hold N; M streams
    ("is", 3 * 25, 2 * 8 + 4 + 10 - 2),  # rows hold K, cols hold M (ceil 100/4); N streams
])
def test_fold_arithmetic_by_hand(dataflow, folds, per_fold):
    gemm = Gemm(m=100, k=20, n=10)
    assert systolic.fold_shape(gemm, 8, 4, dataflow) == (folds, per_fold)
    assert systolic.compute_cycles(gemm, 8, 4, dataflow) == folds * per_fold
    assert systolic.compute_cycles(Gemm(100, 20, 10, batch=3), 8, 4, dataflow) == 3 * folds * per_fold


def test_an_exactly_fitting_gemm_is_one_fold_and_partial_folds_cost_a_full_one():
    assert systolic.fold_shape(Gemm(8, 5, 4), 8, 4, "os") == (1, 5 + 8 + 4 - 2)
    assert systolic.fold_shape(Gemm(9, 5, 4), 8, 4, "os") == (2, 15)
    with pytest.raises(ValueError, match="dataflow must be one of os, ws, is, got 'rs'"):
        systolic.fold_shape(Gemm(8, 5, 4), 8, 4, "rs")


def test_systolic_compute_bound_conv(tpu):
    work = conv_work(1, 16, 16, 32, 64, 3, 3, padding="SAME")
    assert work.gemm == Gemm(256, 288, 64) and work.macs == 256 * 288 * 64
    cost = systolic.cost(work, tpu.hardware)
    # ws on 64x64: ceil(288/64)=5 row folds x 1 col fold, each 2*64 + 64 + 256 - 2 cycles.
    assert cost.cycles == 5 * (2 * 64 + 64 + 256 - 2) == 2230
    assert cost.seconds == pytest.approx(2230 / 500e6) == cost.compute_seconds
    assert cost.macs == work.macs and cost.param_bytes_streamed == 0
    assert (cost.bytes_read, cost.bytes_written) == (work.input_bytes + work.weight_bytes, work.output_bytes)
    assert cost.level_bytes == (("sram", work.bytes_moved),) and cost.bound == "compute"


def test_systolic_memory_bound_when_sram_bandwidth_is_low(tpu):
    slow = apply_overrides(tpu, {"memory.levels.sram.bandwidth": "1 GB/s"})
    work = conv_work(1, 16, 16, 32, 64, 3, 3, padding="SAME")
    onchip = work.input_bytes + work.output_bytes + work.weight_bytes  # 8192 + 16384 + 18432 bytes
    cost = systolic.cost(work, slow.hardware)
    assert cost.seconds == pytest.approx(onchip / 1e9)
    assert cost.cycles == math.ceil(onchip / 1e9 * 500e6) == 21504 > 2230
    assert cost.bound == "sram" and cost.compute_seconds == pytest.approx(2230 / 500e6)
    assert cost.stall_seconds == pytest.approx((21504 - 2230) / 500e6)


def test_depthwise_and_elementwise_run_on_the_vector_path(tpu):
    work = conv_work(1, 16, 16, 64, 64, 3, 3, padding="SAME", depthwise=True)
    assert work.gemm is None and work.macs == 16 * 16 * 64 * 9
    assert systolic.cost(work, tpu.hardware).cycles == math.ceil(work.macs / 64)
    add = NodeWork("ADD", "int8", macs=1000, input_bytes=200, output_bytes=100, elements=1000)
    assert systolic.cost(add, tpu.hardware).cycles == math.ceil(1000 / 64)


def test_parameters_beyond_the_cache_stream_over_the_link(tpu):
    big = gemm_work(1, 4096, 4096)  # 16 MiB of int8 weights against an 8 MiB cache: the whole layer streams
    cost = systolic.cost(big, tpu.hardware)
    assert cost.param_bytes_streamed == 16 * MiB
    assert cost.level_bytes == (("sram", 2 * 4096), ("link", 16 * MiB))
    assert cost.seconds == pytest.approx(50e-6 + 16 * MiB / 320e6, rel=1e-6)  # one transfer: latency + bytes
    assert cost.bound == "link" and cost.compute_seconds == pytest.approx(64 * 64 * 191 / 500e6)
    # With every weight on chip the GEMV is compute bound: 64 x 64 folds of 2*64 + 64 + 1 - 2 cycles.
    roomy = apply_overrides(tpu, {"memory.levels.sram.size": "32 MiB"})
    assert systolic.cost(big, roomy.hardware).cycles == 64 * 64 * 191


def test_cache_is_filled_in_model_order_until_a_layer_does_not_fit(tpu):
    works = [gemm_work(1, 1024, 6 * 1024), gemm_work(1, 1024, 4 * 1024), gemm_work(1, 1024, 1024),
             NodeWork("ADD", "int8", macs=10)]
    assert streamed_parameters(works, 8 * MiB) == (0, 4 * MiB, 1 * MiB, 0)
    assert streamed_parameters(works, 10.5 * MiB) == (0, 0, 1 * MiB, 0)
    costs = systolic.costs(works, tpu.hardware)
    assert [c.param_bytes_streamed for c in costs] == [0, 4 * MiB, 1 * MiB, 0]
    assert sum(costs, Cost()).param_bytes_streamed == 5 * MiB


def test_activations_take_their_share_of_the_edgetpu_cache(usb):
    # A 3 MiB activation working set (2 MiB in, 1 MiB out) sits in the same SRAM as the cached weights.
    act = NodeWork("ADD", "int8", macs=MiB, input_bytes=2 * MiB, output_bytes=MiB, elements=MiB)
    fc = gemm_work(1, 1024, 6 * 1024)  # 6 MiB of weights, 7 KiB of activations
    assert memory.weight_cache([act, fc], usb.hardware.memory) == 8 * MiB - 3 * MiB
    assert [c.param_bytes_streamed for c in systolic.costs([act, fc], usb.hardware)] == [0, 6 * MiB]
    # Alone, the layer's own 7 KiB of activations leave room for its weights.
    assert systolic.costs([fc], usb.hardware)[0].param_bytes_streamed == 0


def test_streamed_weights_take_the_link_time_on_the_shipped_configs(usb):
    pcie = load_hardware(HW / "edgetpu_pcie.yaml")
    big = gemm_work(1, 4096, 4096)  # 16 MiB of weights: the whole layer streams
    for hw, rate, latency in ((usb, 480e6, 50e-6), (pcie, 410e6, 2e-6)):
        cost = systolic.cost(big, hw.hardware)
        assert cost.param_bytes_streamed == 16 * MiB and cost.bound == "link"
        # its weights, then its 1750-byte program, over the link
        assert cost.seconds == pytest.approx(latency + 16 * MiB / rate + 1750 / rate, rel=1e-6)


def test_narrow_layers_use_a_fraction_of_the_wide_array(usb, tpu):
    # DenseNet-121's growth layer: 3x3 conv, 128 -> 32 channels on 56 x 56.
    growth = conv_work(1, 56, 56, 128, 32, 3, 3, padding="SAME")
    wide = conv_work(1, 56, 56, 128, 256, 3, 3, padding="SAME")
    assert (usb.hardware.compute.rows, usb.hardware.compute.cols) == (16, 256)
    # 256 output channels side by side: 32 channels take as long as 256, so 1/8 of the MACs work.
    assert systolic.cost(growth, usb.hardware).cycles == systolic.cost(wide, usb.hardware).cycles
    utilization = growth.macs / (systolic.compute_cycles(growth.gemm, 16, 256, "ws") * 16 * 256)
    assert 0.11 < utilization < 0.125
    # A square 64 x 64 array of the same 4096 MACs loses only half on it.
    square = growth.macs / (systolic.compute_cycles(growth.gemm, 64, 64, "ws") * 64 * 64)
    assert 0.45 < square < 0.5


def test_each_node_waits_for_its_program_over_the_link(tpu):
    relu = NodeWork("RELU", "int8", macs=6400, input_bytes=6400, output_bytes=6400, elements=6400)
    bare = systolic.cost(relu, tpu.hardware)
    assert bare.cycles == 100  # 6400 / 64 lanes, and 12800 bytes at 64 GB/s
    programmed = apply_overrides(tpu, {"compute.instruction_bytes": 1750})
    cost = systolic.cost(relu, programmed.hardware)
    # 1750 bytes at 320 MB/s: 5.47 us, 2735 cycles at 500 MHz, before the 100 cycles of work.
    assert cost.cycles == 100 + math.ceil(1750 / 320e6 * 500e6) == 2835
    assert cost.seconds == pytest.approx(2835 / 500e6)
    assert (cost.macs, cost.bytes_read, cost.param_bytes_streamed) == (bare.macs, bare.bytes_read, 0)
    assert cost.level_bytes == (("sram", 12800), ("link", 1750)) and cost.bound == "link"
    assert cost.compute_seconds == bare.compute_seconds == pytest.approx(100 / 500e6)
    assert cost.energy == pytest.approx(bare.energy + 1750 * 250e-12)


# -- vector and cpu ----------------------------------------------------------------------------------


def test_vector_cost_scales_lanes_by_dtype(dsp):
    macs = 1_000_000
    for dtype, lanes in (("int8", 128), ("int16", 64), ("float32", 32)):
        work = NodeWork("CONV_2D", dtype, macs=macs)
        assert vector.lanes_for(dtype, 128) == lanes
        assert vector.cost(work, dsp.hardware).cycles == math.ceil(macs / (lanes * 4 * 0.5))


def test_vector_cost_is_memory_bound_for_data_movement(dsp):
    move = NodeWork("RESHAPE", "int8", macs=0, input_bytes=10**6, output_bytes=10**6, kind="move")
    cost = vector.cost(move, dsp.hardware)
    assert cost.seconds == pytest.approx(2e6 / 10e9)
    assert cost.cycles == 200_000


def test_cpu_roofline(host):
    work = NodeWork("CONV_2D", "int8", macs=32 * 6 * 1000, weight_bytes=100)
    assert cpu.cost(work, host.hardware).cycles == 10_000  # 32 MACs/cycle at 60%: 19.2 per cycle
    assert cpu.cost(NodeWork("CONV_2D", "float32", macs=8 * 6 * 10), host.hardware).cycles == 100
    assert cpu.macs_per_cycle("int16", host.hardware) == 128 // 16  # unlisted: one SIMD register of lanes per cycle
    move = NodeWork("CONCATENATION", "int8", macs=0, input_bytes=15_000, output_bytes=15_000, kind="move")
    assert cpu.cost(move, host.hardware).seconds == pytest.approx(30_000 / 15e9, rel=1e-3)


def test_the_same_model_is_fastest_on_the_systolic_array(tpu, dsp, host):
    it = Interpreter(model_path=str(MODELS / "mobilenet_v2_035_96_int8.tflite"))
    it.allocate_tensors()
    works = subgraph_work(it, 0)
    on_tpu = sum(systolic.costs(works, tpu.hardware), Cost())
    on_dsp = sum((vector.cost(w, dsp.hardware) for w in works), Cost())
    on_cpu = sum((cpu.cost(w, host.hardware) for w in works), Cost())
    assert on_tpu.macs == on_dsp.macs == on_cpu.macs == sum(w.macs for w in works)
    assert on_tpu.param_bytes_streamed == 0  # 0.4 MB of weights fit the 8 MiB cache
    assert on_tpu.seconds < on_dsp.seconds < on_cpu.seconds


def test_utilization_is_macs_over_cycles_times_the_units_peak(tpu, dsp, host):
    def utilization(work, cost, hw):
        (value,) = hw.utilizations([work], [cost])
        return value

    conv = conv_work(1, 16, 16, 32, 64, 3, 3, padding="SAME")
    assert utilization(conv, systolic.cost(conv, tpu.hardware), tpu.hardware) == conv.macs / (2230 * 64 * 64)
    dw = conv_work(1, 16, 16, 64, 64, 3, 3, padding="SAME", depthwise=True)  # vector path: 64 lanes, all busy
    assert utilization(dw, systolic.cost(dw, tpu.hardware), tpu.hardware) == 1.0
    work = NodeWork("CONV_2D", "int8", macs=1_000_000)  # 4 contexts x 128 lanes at efficiency 0.5
    dsp_hw = dsp.hardware
    assert utilization(work, vector.cost(work, dsp_hw), dsp_hw) == 1_000_000 / (math.ceil(1_000_000 / 256) * 512)
    work = NodeWork("CONV_2D", "int8", macs=32 * 6 * 1000)  # 10,000 cycles at 32 MACs/cycle peak
    assert utilization(work, cpu.cost(work, host.hardware), host.hardware) == pytest.approx(0.6)
    bare = dataclasses.replace(host.hardware, kind_record=dataclasses.replace(host.hardware.kind_record,
                                                                               peak_macs_per_cycle=None))
    assert utilization(work, cpu.cost(work, host.hardware), bare) is None
    assert utilization(NodeWork("RESHAPE", "int8", macs=0), Cost(), tpu.hardware) is None  # no cycles: no utilisation


# -- geometry without a model ---------------------------------------------------------------------


@pytest.mark.parametrize("size, kernel, stride, dilation, padding, out", [
    (96, 3, 2, 1, "SAME", 48), (7, 3, 2, 1, "SAME", 4), (7, 3, 2, 1, "VALID", 3), (10, 3, 1, 2, "VALID", 6),
    (2, 3, 1, 1, "VALID", 0),
])
def test_conv_output_size_follows_tflite_padding(size, kernel, stride, dilation, padding, out):
    assert conv_output_size(size, kernel, stride, dilation, padding) == out


def test_cpu_classes_dispatch_and_cache_by_hand(host):
    """Each mechanism of the cpu kind alone, on a host whose defaults give the plain roofline."""
    x86 = apply_overrides(host, {"clock": "1 GHz", "compute.row_cycles": {"float32": 10},
                                 "compute.pack_cycles": {"float32": 0.5},
                                 "compute.vector_per_cycle": {"float32": 4}, "compute.lookups_per_cycle": {"int8": 2},
                                 "compute.move_per_cycle": {"float32": 0.5}, "compute.node_cycles": 100,
                                 "memory.levels": {"l2": {"size": "1 MiB", "bandwidth": "100 GB/s"},
                                                   "dram": {"bandwidth": "1 GB/s"}},
                                 "memory.weights": "l2", "memory.activations": "l2"}).hardware
    # GEMM: 8 float32 MACs/cycle at 60% (host_cpu), plus 10 cycles per output row, plus half a cycle
    # per element of its 4 x 48 input (im2col and packing), plus dispatch.
    fc = gemm_work(4, 48, 10, dtype="float32", itemsize=4)
    assert cpu.cost(fc, x86).cycles == 100 + math.ceil(4 * 48 * 10 / (8 * 0.6) + 4 * 10 + 4 * 48 * 0.5)
    # A fused activation is 40 more vector ops at 4 per cycle.
    assert cpu.cost(dataclasses.replace(fc, activation_ops=40), x86).cycles == cpu.cost(fc, x86).cycles + 10
    # Vector, lookup and move classes at their own rates (data in cache: memory is not the bound).
    assert cpu.cost(NodeWork("ADD", "float32", macs=400, kind="elementwise"), x86).cycles == 100 + 100
    assert cpu.cost(NodeWork("TANH", "int8", macs=400, kind="lookup"), x86).cycles == 100 + 200
    assert cpu.cost(NodeWork("PAD", "float32", macs=0, elements=400, kind="move"), x86).cycles == 100 + 800
    assert cpu.cost(NodeWork("PAD", "int8", macs=0, elements=400, kind="move"), x86).cycles == 100  # no int8 rate
    # Bytes within the 1 MiB cache move at 100 GB/s; beyond it, at DRAM's 1 GB/s.
    small = NodeWork("RESHAPE", "int8", macs=0, input_bytes=50_000, output_bytes=50_000, kind="move")
    big = dataclasses.replace(small, input_bytes=2 * MiB)
    assert cpu.cost(small, x86).cycles == 100 + 1000 and cpu.cost(small, x86).bound == "l2"
    assert cpu.cost(big, x86).cycles == 100 + math.ceil((2 * MiB + 50_000) / 1e9 * 1e9)
    assert cpu.cost(big, x86).level_bytes == (("dram", 2 * MiB + 50_000),)
    assert cpu.cost(big, x86).bound == "dram"
    assert cpu.cost(big, x86).seconds == pytest.approx((100 + 2 * MiB + 50_000) / 1e9)


def test_cpu_defaults_are_the_plain_roofline(host):
    # host_cpu sets none of the class rates: every class at the GEMM rate, moves cost only bytes.
    add = NodeWork("ADD", "float32", macs=480, kind="elementwise")
    lookup = NodeWork("TANH", "float32", macs=480, kind="lookup")
    assert cpu.cost(add, host.hardware).cycles == cpu.cost(lookup, host.hardware).cycles == 100


# -- element sizes -------------------------------------------------------------------------------


def test_every_tensor_type_has_its_tflite_size_or_is_refused_by_name(host):
    from accelsim.hardware.config import DTYPES
    from accelsim.runtime.errors import ModelError

    # TfLiteTypeGetSize: 16-bit floats (bfloat16 too) are 2 bytes, so a 128-bit register holds 8 of them.
    assert dtype_itemsize("bfloat16") == dtype_itemsize("float16") == 2
    assert cpu.simd_lanes("bfloat16", host.hardware) == 8
    for dtype in set(DTYPES) - {"string", "resource", "variant"}:
        assert dtype_itemsize(dtype) in (1, 2, 4, 8, 16), dtype
    for dtype in ("string", "resource", "variant", "float128"):
        with pytest.raises(ModelError, match=f"tensor type '{dtype}' has no element size.*types with one: bfloat16"):
            dtype_itemsize(dtype)
    bf16 = gemm_work(4, 48, 10, dtype="bfloat16", itemsize=2)
    f16 = dataclasses.replace(bf16, dtype="float16")
    assert cpu.costs([bf16], host.hardware)[0].cycles == cpu.costs([f16], host.hardware)[0].cycles
