"""The Ethos-U55 at every size: configs that differ only in published architecture parameters, and rates that
follow them (the elementwise units, the IFM micro-block of the pooling path, the SHRAM)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from accelsim.hardware.config import load_hardware
from accelsim.hardware.cost import npu
from accelsim.runtime.work import NodeWork, conv_work
from tests.accelsim.test_npu import ENGINE, compute, elementwise

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hw_configs"
MODELS = ROOT / "tests" / "fixtures" / "models"
SIZES = (32, 64, 128, 256)
# The keys Vela's ArchitectureConfig publishes per configuration (micro-blocks, elementwise units, SHRAM).
PUBLISHED = {"ublock_height", "ublock_width", "ublock_depth", "ifm_depth", "elementwise_units", "shram_banks"}


def _document(size: int) -> dict:
    return yaml.safe_load((HW / f"ethos_u55_{size}.yaml").read_text(encoding="utf-8"))


def test_the_four_u55_configs_differ_only_in_published_architecture_keys():
    base = _document(128)
    for size in SIZES:
        doc = _document(size)
        assert doc["name"] == f"ethos_u55_{size}"
        differ = {key for key in base["compute"] if doc["compute"].get(key) != base["compute"][key]}
        assert differ <= PUBLISHED, (size, differ - PUBLISHED)
        assert doc["compute"].keys() == base["compute"].keys()
        # Everything outside the compute block (memory, link, energy, claims, calibration) is the 128's.
        assert {k: v for k, v in doc.items() if k not in ("name", "compute")} == \
               {k: v for k, v in base.items() if k not in ("name", "compute")}


@pytest.mark.parametrize("size", SIZES)
def test_the_published_keys_are_velas_architecture_config(size):
    """Read against the installed Vela's own table (ethosu.vela.architecture_features), not our copy of it."""
    from ethosu.vela.architecture_features import Accelerator, ArchitectureFeatures

    arch = ArchitectureFeatures.accelerator_configs[Accelerator[f"Ethos_U55_{size}"]]
    c = load_hardware(HW / f"ethos_u55_{size}.yaml").hardware.compute
    # Vela's Block is (width, height, depth); the configs state the 2-position micro-blocks 2 high (the shipped
    # U55-128's orientation, which only matters through rounding of odd map sizes): compare the pair as a set.
    assert sorted((c.ublock_height, c.ublock_width)) == sorted((arch.ofm_ublock.height, arch.ofm_ublock.width))
    assert c.ublock_depth == arch.ofm_ublock.depth
    assert c.ifm_depth == arch.ifm_ublock.depth and c.elementwise_units == arch.elem_units
    assert c.shram_banks == arch.shram_banks
    assert c.ublock_height * c.ublock_width * c.ublock_depth * c.ifm_depth == arch.macs == size


def test_elementwise_rates_divide_by_the_units_and_lookups_and_pools_follow_the_ifm_micro_block():
    four = dataclasses.replace(ENGINE, elementwise_units=4)
    add, mul = elementwise("ADD", 1000, 2), elementwise("MUL", 1000, 2)
    # 1.5 and 1.0 cycles per element on one unit; a quarter of that on four (plus the 20-cycle overhead).
    assert [compute([w], four)[0] for w in (add, mul)] == [375 + 20, 250 + 20]
    # A lookup is a 1-tap window on the pooling path: max(4, 1) taps x 8 cycles per 16-element micro-block,
    # whatever the number of units; a micro-block twice as large halves it.
    tanh = elementwise("TANH", 1000)
    assert compute([tanh], four) == compute([tanh]) == [2000 + 20]
    wide = dataclasses.replace(ENGINE, ublock_width=2)
    assert compute([tanh], wide) == [1000 + 20]
    # Fused into a conv's output stage, a lookup is the activation unit's one table: the same 2 cycles per element
    # on a wider micro-block and four units (the conv's own output work, 0.125 cycles per element there, is less).
    conv = conv_work(1, 16, 16, 8, 64, 1, 1)
    fused = [conv, elementwise("TANH", conv.elements)]
    bigger = dataclasses.replace(wide, elementwise_units=4)
    assert compute(fused, bigger) == compute(fused) == [conv.elements * 2 + 100, 0]
    # A 3x3 max pool: 9 taps x 8 cycles / 16 = 4.5 cycles per output element, plus the MAC-op overhead.
    pool = NodeWork(op="MAX_POOL_2D", dtype="int8", macs=9 * 512, input_bytes=2048, output_bytes=512, elements=512,
                    kind="window")
    assert compute([pool]) == [512 * 4.5 + 100]
    # A 2x2 pool still costs the minimum 4 taps: 2 cycles per element.
    small = dataclasses.replace(pool, macs=4 * 512)
    assert compute([small]) == [512 * 2 + 100]


def test_a_2x_bilinear_resize_is_four_depthwise_passes_after_a_copy_of_its_input():
    # 8x8x16 -> 16x16x16: 4096 outputs, 4 taps each. One pass: 4096 / 16 micro-block elements x 4 taps = 1024
    # steps at the window rate 0.5 (2048 cycles) against 4096 outputs x 0.5 cycles (output unit): 2048, plus
    # the MAC-op overhead; 4 passes; then the input copied at 1 cycle per byte plus the elementwise overhead.
    resize = NodeWork(op="RESIZE_BILINEAR", dtype="int8", macs=4 * 4096, weight_bytes=8, input_bytes=1024,
                      output_bytes=4096, elements=4096, kind="elementwise")
    assert npu.resize_passes(resize) == 4
    assert compute([resize]) == [4 * (2048 + 100) + 1024 + 20]
    # A TANH after a resize stays its own op (the resize is several ops, with no single output stage).
    tanh = elementwise("TANH", 4096)
    assert compute([resize, tanh])[1] == 4096 * 2 + 20


def test_the_elementwise_block_follows_the_shram():
    assert [dataclasses.replace(ENGINE, shram_banks=b).elementwise_block_elements for b in (16, 24, 48)] == \
           [2048, 4096, 8192]


def test_every_fixture_node_is_no_slower_on_a_larger_u55():
    """Monotone in size, node by node: more MACs, units and SHRAM never cost compute cycles."""
    from benchmarks.cost_vs_vela import our_nodes

    configs = [load_hardware(HW / f"ethos_u55_{size}.yaml") for size in SIZES]
    for model in ("interleaved_int8", "mobilenet_v2_035_96_int8", "transformer_block_int8"):
        _, works, _ = our_nodes(MODELS / f"{model}.tflite", configs[0])
        cycles = [npu.model_compute_cycles(works, device.hardware.compute) for device in configs]
        for smaller, larger in zip(cycles, cycles[1:]):
            assert all(b <= a for a, b in zip(smaller, larger)), model
        # and the whole model is strictly faster at 256 than at 32
        assert sum(cycles[-1]) < sum(cycles[0])


def test_a_conv_is_mac_bound_or_output_bound_by_size():
    # 16x16x64 -> 16x16x64 1x1: 256 positions x 64 channels. MAC steps on 2x1x8 / 8: 128 x 8 x 8 = 8192 at 1 per
    # cycle; the output unit writes 16384 elements at 0.5 cycles (one unit): 8192. Four units: MAC-bound.
    work = conv_work(1, 16, 16, 64, 64, 1, 1)
    assert compute([work]) == [8192 + 100]
    slow_output = dataclasses.replace(ENGINE, output_cycles_per_element=1.0)
    assert compute([work], slow_output) == [16384 + 100]
    assert compute([work], dataclasses.replace(slow_output, elementwise_units=4)) == [8192 + 100]


# -- cost_vs_vela's per-size summary and its refusals ------------------------------------------------


def test_the_goal_table_judges_each_size_on_its_held_out_rows_only():
    from types import SimpleNamespace

    from benchmarks.calibration import worst_ratio
    from benchmarks.cost_vs_vela import goal_table

    assert worst_ratio([1.2, 0.7, 1.4]) == 0.7  # 1/0.7 = 1.43 is further from 1 than 1.4
    rows = [SimpleNamespace(config="ethos_u55_32", model=m, ratio=r)
            for m, r in (("MobileNet_0.25_128_int8", 1.1), ("MobileNet_1.0_224_int8", 1 / 1.1),
                         ("efficientnet_b0_int8", 1.3), ("transformer_block_int8", 3.0))]
    rows += [SimpleNamespace(config="ethos_u55_64", model="mobilenet_v1_int8", ratio=0.6)]
    lines = goal_table(rows)
    # 32: held out 1.1 and 1/1.1 (two rows of one graph, MobileNet v1) meet the goal; EfficientNet-B0 shaped a
    # mechanism and the transformer is a fit row: both printed beside them, not judged.
    assert lines[1].split() == ["ethos_u55_32", "2/1", "10%", "1.10", "1/1", "30%", "1.30", "1/1", "200%", "3.00",
                                "met"]
    # 64: 0.6 is 1.67x off: not met. 128 has no row at all.
    assert lines[2].split()[-2:] == ["NOT", "met"]
    assert lines[3].endswith("no held-out row")


def test_rows_that_shaped_a_mechanism_are_not_held_out():
    """The git history's shaped rows (issue 31 B5) and the duplicates of a fit row's graph are `shaped`; only the
    MobileNet v1 variants are held out, and they are one graph."""
    from benchmarks.cost_vs_vela import GRAPHS, SHAPED_ROWS, graph, row_set

    for model in ("resnet50_int8", "resnet50_299_int8", "inception_v3_int8", "InceptionV3_1.0_299_int8",
                  "efficientnet_b0_int8", "lut_graph_int8", "vgg_like_96_int8", "mobilenet_v2_int8",
                  "MobileNetV2_1.0_224_int8"):
        assert row_set(model) == "shaped" and SHAPED_ROWS[model]
    assert row_set("densenet121_int8") == row_set("transformer_block_int8") == "fit"
    v1 = [m for m, g in GRAPHS.items() if g == "MobileNet v1"]
    assert len(v1) == 17 and {row_set(m) for m in v1} == {"held-out"} and {graph(m) for m in v1} == {"MobileNet v1"}


def test_missing_held_out_models_name_the_commands_that_build_them(tmp_path):
    from benchmarks.cost_vs_vela import vela_cache_models

    with pytest.raises(SystemExit) as info:
        vela_cache_models(tmp_path)
    message = str(info.value)
    assert message.startswith("cost_vs_vela: efficientnet_b0_int8, lut_graph_int8, vgg_like_96_int8 missing from ")
    effnet = tmp_path / "efficientnet_b0_int8.tflite"
    assert f"PY benchmarks/keras_tflite.py {effnet} EfficientNetB0 224 int8" in message
    assert f"PY benchmarks/lut_graph.py {tmp_path / 'lut_graph_int8.tflite'}" in message
    assert f"PY benchmarks/vgg_like.py {tmp_path / 'vgg_like_96_int8.tflite'}" in message


def test_two_models_of_one_name_are_refused_before_vela_runs(tmp_path):
    from benchmarks.cost_vs_vela import main

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "m_int8.tflite").write_bytes((MODELS / "interleaved_int8.tflite").read_bytes())
    with pytest.raises(SystemExit, match="more than one model named m_int8: Vela writes its output by model name"):
        main([str(tmp_path / "a" / "m_int8.tflite"), str(tmp_path / "b" / "m_int8.tflite")])
