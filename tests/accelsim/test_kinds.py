"""accelsim.hardware.kinds: a kind is one record; a toy kind from this file alone loads, checks and simulates."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import FIXTURES

from accelsim.hardware.config import ConfigError, apply_overrides, load_hardware, load_system
from accelsim.hardware.kinds import BUILTIN, KindRegistry, default_registry, schema_rows
from accelsim.hardware.roofline import roofline
from accelsim.hardware.types import Cost, Field, Hardware, Kind, spec
from accelsim.runtime.work import NodeWork
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.inference import HOST

HW = Path(__file__).resolve().parents[2] / "hw_configs"


@dataclass(frozen=True)
class ToyCompute:
    macs_per_cycle: int = spec("count", "MACs per cycle, whatever the dtype", multiple_of=4, example=16)
    efficiency: float = spec("fraction", "fraction of peak reached", default=1.0)


def toy_costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """A roofline: MACs at macs_per_cycle * efficiency, overlapped with the memory levels' traffic."""
    c = hw.compute
    return roofline(works, hw, lambda w: math.ceil(w.macs / (c.macs_per_cycle * c.efficiency)))


TOY = Kind("toy", "accelerator", "a scalar MAC engine for the registry test", ToyCompute, costs=toy_costs)
KINDS = default_registry.with_kinds(TOY)

TOY_YAML = """\
name: toy_engine
kind: toy
clock: 1 GHz
compute: {macs_per_cycle: 16, efficiency: 0.5}
memory: {levels: {dram: {bandwidth: 4 GB/s}}}
link: {bandwidth: 1 GB/s, call_overhead: 10 us}
claims:
  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}
  - {op: DEPTHWISE_CONV_2D, versions: 1-3, dtypes: [int8]}
"""


@pytest.fixture
def toy_file(tmp_path):
    path = tmp_path / "toy.yaml"
    path.write_text(TOY_YAML)
    return path


def test_a_toy_kind_registered_from_test_code_loads_and_simulates(toy_file):
    system = load_system(HW / "host_cpu.yaml", [toy_file], kinds=KINDS)
    toy = system.accelerators[0]
    assert (toy.hardware.kind, toy.hardware.compute, toy.is_accelerator) == ("toy", ToyCompute(16, 0.5), True)
    sim = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"), system)
    on_toy = [n for n in sim.nodes if n.unit == "toy_engine"]
    assert on_toy and {n.op for n in on_toy} == {"CONV_2D", "DEPTHWISE_CONV_2D"}
    assert any(n.unit == HOST for n in sim.nodes) and sim.partitions
    for node in on_toy:  # 8 MACs per cycle (16 at 50%) or 4 bytes per cycle (4 GB/s at 1 GHz), the slower
        moved = node.cost.bytes_read + node.cost.bytes_written
        assert node.cost.cycles == max(math.ceil(node.macs / 8), math.ceil(moved / 4)) > 0
        assert node.seconds == pytest.approx(node.cost.cycles / 1e9)
    assert sum(p.compute + p.memory for p in sim.partitions) == pytest.approx(sum(n.seconds for n in on_toy))
    assert sum(p.compute for p in sim.partitions) == pytest.approx(sum(n.cost.compute_seconds for n in on_toy))
    assert {n.cost.bound for n in on_toy} <= {"compute", "dram"}


def test_a_toy_kind_is_checked_from_its_field_specs(tmp_path, toy_file):
    swept = apply_overrides(load_hardware(toy_file, KINDS), {"compute.macs_per_cycle": 32})
    assert swept.hardware.compute.macs_per_cycle == 32 and swept.hardware.kind_record is TOY
    bad = tmp_path / "bad.yaml"
    bad.write_text(TOY_YAML.replace("macs_per_cycle: 16", "macs_per_cycle: 6").replace("0.5", "2")
                   .replace("bandwidth: 4 GB/s", "bandwith: 4 GB/s"))
    with pytest.raises(ConfigError) as info:
        load_hardware(bad, KINDS)
    assert info.value.errors == (
        f"{bad}:4: compute.macs_per_cycle: expected a multiple of 4, got 6",
        f"{bad}:4: compute.efficiency: expected a number in (0, 1] like 0.8, got 2",
        f"{bad}:5: memory.levels.dram.bandwith: unknown key; did you mean 'bandwidth'?",
        f"{bad}:5: memory.levels.dram.bandwidth: required key missing",
    )


def test_a_kind_unknown_to_the_registry_lists_the_known_ones(toy_file):
    with pytest.raises(ConfigError) as info:
        load_hardware(toy_file)
    assert info.value.errors == (
        f"{toy_file}:2: kind: expected one of systolic, vector, cpu, npu, gpu, tensor, mcu, got 'toy'",)


def test_roles_are_checked_against_the_registry(toy_file):
    host_line = (HW / "host_cpu.yaml").read_text().splitlines().index("kind: cpu") + 1
    with pytest.raises(ConfigError) as info:
        load_system(toy_file, [HW / "host_cpu.yaml"], kinds=KINDS)
    assert info.value.errors == (
        f"{toy_file}:2: kind: toy_engine is an accelerator config (kind toy), not a host; a host is kind cpu or mcu "
        "(give accelerators with --hw, or in an experiment variant's accelerators)",
        f"{HW / 'host_cpu.yaml'}:{host_line}: kind: host_cpu is a host config (kind cpu); use --host (in an "
        "experiment: host:); an accelerator is kind systolic, vector, npu, gpu, tensor or toy",
    )


def test_a_kind_from_an_entry_point_is_imported_when_named(tmp_path, monkeypatch, toy_file):
    (tmp_path / "toy_kind_plugin.py").write_text(textwrap.dedent("""\
        from dataclasses import dataclass
        from accelsim.hardware.cost import vector
        from accelsim.hardware.types import Kind, spec

        @dataclass(frozen=True)
        class PluginCompute:
            lanes: int = spec("count", "8-bit lanes")
            contexts: int = spec("count", "vector units")
            efficiency: float = spec("fraction", "share of peak", default=1.0)

        KIND = Kind("plugin", "accelerator", "a vector unit from a plugin", PluginCompute, costs=vector.costs)
        NOT_A_KIND = 42
        """))
    info = tmp_path / "toy_kind_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-kind-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[accelsim.kinds]\nplugin = toy_kind_plugin:KIND\n"
                                           "broken = toy_kind_plugin:NOT_A_KIND\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert default_registry.names()[:3] == ("systolic", "vector", "cpu")
    assert {"plugin", "broken"} <= set(default_registry.names())
    path = tmp_path / "plugin.yaml"
    path.write_text(TOY_YAML.replace("kind: toy", "kind: plugin")
                    .replace("{macs_per_cycle: 16, efficiency: 0.5}", "{lanes: 64, contexts: 2}"))
    config = load_hardware(path)
    assert config.hardware.kind == "plugin" and config.hardware.compute.lanes == 64
    with pytest.raises(TypeError, match="toy_kind_plugin:NOT_A_KIND is 42, not the Kind named 'broken'"):
        default_registry.get("broken")


def test_the_builtin_kinds_are_one_line_each_and_match_their_records():
    registry = KindRegistry(BUILTIN, group=None)
    assert registry.names() == ("systolic", "vector", "cpu", "npu", "gpu", "tensor", "mcu")
    assert [k.role for k in registry.kinds()] == ["accelerator", "accelerator", "host", "accelerator", "accelerator",
                                                     "accelerator", "host"]
    assert registry.get("tpu") is None
    assert registry.names_with_role("host") == ("cpu", "mcu")


def test_schema_rows_come_from_the_field_specs():
    table = schema_rows(KindRegistry(BUILTIN, group=None))
    rows = {key: (kinds, text) for key, kinds, text in table}
    assert rows["compute.rows"] == ("systolic", "whole number >= 1: rows of MAC cells")
    assert rows["compute.dataflow"][1].startswith("os, ws or is: ")
    assert rows["compute.simd_bits"] == ("cpu", "whole number >= 8, multiple of 8: SIMD register width in bits")
    assert ("compute.efficiency", "vector, cpu, gpu, tensor",
            "number in (0, 1] (default 1.0): fraction of peak reached") in table  # mcu's has its own meaning
    assert rows["compute.matmul_cycles_per_mac"] == ("npu", "number above 0: cycles per MAC and elementwise unit of "
                                                             "a product of two feature maps")
    npu_keys, mcu_keys = ({f"compute.{f.name}" for f in KindRegistry(BUILTIN, group=None).get(k).fields}
                          for k in ("npu", "mcu"))
    assert set(rows) == {"compute.rows", "compute.cols", "compute.dataflow", "compute.vector_lanes",
                         "compute.instruction_bytes", "compute.lanes",
                         "compute.contexts", "compute.efficiency", "compute.simd_bits", "compute.macs_per_cycle",
                         "compute.row_cycles", "compute.pack_cycles", "compute.vector_per_cycle",
                         "compute.lookups_per_cycle", "compute.move_per_cycle", "compute.node_cycles",
                         "compute.cores", "compute.threads", "compute.kernel_cycles",
                         "compute.channel_block", "compute.float_precision", "compute.prefetch_bytes", *npu_keys,
                         *mcu_keys}


def test_a_malformed_kind_is_refused_when_it_is_defined():
    @dataclass(frozen=True)
    class Bare:
        rows: int

    with pytest.raises(TypeError, match=r"kind 'bare': compute fields \['rows'\] are not declared with"):
        Kind("bare", "accelerator", "", Bare, toy_costs)
    with pytest.raises(ValueError, match="kind 'x': role must be one of host, accelerator, got 'device'"):
        Kind("x", "device", "", ToyCompute, toy_costs)
    with pytest.raises(ValueError,
                       match="field type must be one of count, fraction, number, choice, dtype_rates, got 'size'"):
        Field("size", "bytes")
    with pytest.raises(ValueError, match="a choice field needs its choices"):
        Field("choice", "one of nothing")


def test_a_cost_function_must_return_one_cost_per_node(toy_file):
    short = Kind("toy", "accelerator", "", ToyCompute, lambda works, hw: [])
    config = load_hardware(toy_file, default_registry.with_kinds(short))
    with pytest.raises(ValueError, match="kind 'toy': costs\\(\\) returned 0 costs for 1 nodes"):
        config.hardware.costs([NodeWork("ADD", "int8", macs=1)])
