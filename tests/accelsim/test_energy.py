"""Energy: per MAC, per byte per level, static power busy and idle; hand-computed cases and the errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES

from accelsim.hardware.config import ConfigError, System, apply_overrides, load_hardware, load_system
from accelsim.hardware.energy import static_power
from accelsim.hardware.types import Energy
from accelsim.reports.results import CSV_COLUMNS, record
from accelsim.runtime.work import NodeWork
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.inference import HOST

HW = Path(__file__).resolve().parents[2] / "hw_configs"
KiB = 1024
pJ = 1e-12

DEVICE = """\
name: device
kind: vector
clock: 1 GHz
compute: {lanes: 16, contexts: 1}
energy: {mac: {int8: 0.5 pJ, float32: 4 pJ}, static_power: 20 mW}
memory:
  levels:
    sram: {size: 64 KiB, bandwidth: 16 GB/s, energy: 2 pJ/B, static_power: 5 mW}
    dram: {bandwidth: 1 GB/s, energy: 20 pJ/bit}
  weights: dram
  activations: sram
link: {bandwidth: 100 MB/s, energy: 100 pJ/B}
claims:
  - {op: ADD, versions: 1-2, dtypes: [int8]}
"""


@pytest.fixture
def device(tmp_path):
    path = tmp_path / "device.yaml"
    path.write_text(DEVICE)
    return load_hardware(path).hardware


def test_a_nodes_energy_by_hand(device):
    assert device.energy == Energy((("float32", 4 * pJ), ("int8", 0.5 * pJ)), 0.02)
    assert static_power(device) == pytest.approx(0.025)
    # 1600 MACs on 16 lanes: 100 cycles; 1 KiB of activations on sram, 512 B of weights from dram.
    work = NodeWork("ADD", "int8", macs=1600, weight_bytes=512, input_bytes=512, output_bytes=512)
    cost = device.costs([work])[0]
    assert cost.level_bytes == (("sram", 1024), ("dram", 512))
    assert cost.seconds == pytest.approx(512 / 1e9) and cost.bound == "dram"  # 512 ns > 100 ns of compute
    dynamic = 1600 * 0.5 * pJ + 1024 * 2 * pJ + 512 * 160 * pJ  # 20 pJ/bit = 160 pJ/B
    static = 0.025 * 512e-9
    assert cost.energy == pytest.approx(dynamic + static) and cost.static_energy == pytest.approx(static)


def test_an_unlisted_dtype_pays_the_dearest_mac(device):
    assert device.energy.per_mac("int16") == 4 * pJ and Energy().per_mac("int8") == 0.0
    work = NodeWork("ADD", "int16", macs=160)
    cost = device.costs([work])[0]
    assert cost.energy == pytest.approx(160 * 4 * pJ + 0.025 * cost.seconds)


def test_inference_energy_adds_nodes_transfers_and_idle_static():
    host = apply_overrides(load_hardware(HW / "host_cpu.yaml"), {})
    usb = apply_overrides(load_hardware(HW / "edgetpu_usb.yaml"),
                          {"energy.static_power": "300 mW", "partition.policy": "tflite"})
    sim = simulate_model(str(FIXTURES / "interleaved_int8.tflite"), System(host, (usb,)))
    assert sim.partitions and sim.transfer_bytes > 0
    host_busy = sum(n.seconds for n in sim.nodes if n.unit == HOST)
    usb_busy = sum(n.seconds for n in sim.nodes if n.unit == "edgetpu_usb")
    assert dict(sim.idle_energy) == pytest.approx({"host_cpu": 0.1 * (sim.latency - host_busy),
                                                   "edgetpu_usb": 0.3 * (sim.latency - usb_busy)})
    transfers = sum(p.input_bytes + p.output_bytes for p in sim.partitions) * 250 * pJ
    assert sum(p.transfer_energy for p in sim.partitions) == pytest.approx(transfers)
    nodes = sum(n.cost.energy for n in sim.nodes)
    assert sim.energy == pytest.approx(nodes + transfers + sum(j for _, j in sim.idle_energy))
    # static power runs for the whole inference on every device, busy or idle
    assert sim.static_energy == pytest.approx((0.1 + 0.3) * sim.latency)
    by_unit = sim.energy_by_unit()
    assert by_unit["edgetpu_usb"] == pytest.approx(sum(p.energy for p in sim.partitions) + 0.3 * (sim.latency -
                                                                                                  usb_busy))
    # the parameters cached at initialization crossed the link once
    assert sim.init_energy == pytest.approx(sim.init.bytes_moved * 250 * pJ) and sim.init_energy > 0


def test_records_carry_energy_per_inference_partition_and_node():
    system = load_system(HW / "host_cpu.yaml", [HW / "edgetpu_usb.yaml"])
    sim = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"), system)
    rec = record(sim, point_id="x", model="m.tflite", variant="v", sweep={})
    assert rec["energy_uj"] == pytest.approx(sim.energy * 1e6, abs=1e-6)
    assert rec["edp_uj_ms"] == pytest.approx(rec["energy_uj"] * rec["latency_us"] / 1e3, rel=1e-6)
    assert sum(rec["energy_by_unit_uj"].values()) == pytest.approx(rec["energy_uj"], abs=1e-5)
    assert [p["energy_uj"] for p in rec["partition_table"]] == [pytest.approx(p.energy * 1e6, abs=1e-6)
                                                                for p in sim.partitions]
    assert sum(r["energy_uj"] for r in rec["node_costs"]) == pytest.approx(sum(n.cost.energy for n in sim.nodes) * 1e6,
                                                                           abs=1e-4)
    assert {r["bound"] for r in rec["node_costs"]} <= {"compute", "sram", "dram", "link"}
    assert {"energy_uj", "edp_uj_ms", "memory_us"} <= set(CSV_COLUMNS)


@pytest.mark.parametrize("old, new, expected", [
    ("int8: 0.5 pJ", "int8: -0.5 pJ", "5: energy.mac.int8: expected an energy like '0.2 pJ', got '-0.5 pJ' "
                                      "(must not be negative)"),
    ("int8: 0.5 pJ", "int9: 0.5 pJ", "5: energy.mac.int9: unknown key; did you mean 'int8'?"),
    ("static_power: 20 mW}", "static_power: 20 mJ}", "5: energy.static_power: expected a power like '50 mW', got "
                                                     "'20 mJ' (unknown unit 'mJ'; use one of uW, µW, μW, mW, W)"),
    ("energy: 2 pJ/B", "energy: 2 pJ", "8: memory.levels.sram.energy: expected an energy per byte like '20 pJ/B', "
                                       "got '2 pJ' (unknown unit 'pJ'"),
    ("static_power: 5 mW", "static_power: -5 mW", "8: memory.levels.sram.static_power: expected a power like "
                                                  "'50 mW', got '-5 mW' (must not be negative)"),
    ("energy: 100 pJ/B", "energy: -1 pJ/B", "12: link.energy: expected an energy per byte like '20 pJ/B', got "
                                            "'-1 pJ/B' (must not be negative)"),
    ("static_power: 20 mW}", "idle_power: 20 mW}", "5: energy.idle_power: unknown key; did you mean "
                                                   "'static_power'?"),
])
def test_bad_energies_name_file_line_and_key(tmp_path, old, new, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(DEVICE.replace(old, new))
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert len(info.value.errors) == 1 and info.value.errors[0].startswith(f"{path}:{expected}")


def test_energy_left_out_is_not_modelled_and_validate_says_so(tmp_path, device, capsys):
    # a node's own cost still sums what is known (static power); a run's record says "not modelled"
    # (tests/accelsim/test_feasibility.py), never this partial sum
    from accelsim.cli.main import main

    assert device.notes() == []
    path = tmp_path / "silent.yaml"
    path.write_text(DEVICE.replace("energy: {mac: {int8: 0.5 pJ, float32: 4 pJ}, static_power: 20 mW}\n", ""))
    silent = load_hardware(path).hardware
    cost = silent.costs([NodeWork("ADD", "int8", macs=16)])[0]  # one cycle: only the sram's 5 mW of static power
    assert silent.energy == Energy() and cost.energy == pytest.approx(0.005 * 1e-9) == cost.static_energy
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == ("  note: energy.mac is not given: energy is not modelled for this device; reports and compare "
                      "show its energy as 'not modelled', never 0")
    # without an energy model its per-byte and static terms are not listed as zeros (accelsim.hardware.assumptions)
    assert all(line.startswith("  assumed: ") and "energy" not in line and "static_power" not in line
               for line in out[2:])


def test_shipped_energies_reproduce_their_sources():
    usb, host = load_hardware(HW / "edgetpu_usb.yaml").hardware, load_hardware(HW / "host_cpu.yaml").hardware
    # "4 TOPS, using 2 watts": the array at peak burns 2 W
    assert usb.energy.per_mac("int8") * usb.compute.rows * usb.compute.cols * usb.clock == pytest.approx(2, rel=0.03)
    assert host.energy.per_mac("int8") == pytest.approx((0.2 + 0.03) * pJ)  # Horowitz: 8-bit multiply + add
    assert host.memory.level("dram").energy == pytest.approx(1.3e-9 / 8)  # 1.3 nJ per 64-bit access
