"""Memory levels: where bytes go (cache, streaming, spills), which bound a node hits, and the errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FIXTURES

from accelsim.core.feasibility import Infeasible
from accelsim.hardware.config import apply_overrides, load_hardware, load_system
from accelsim.hardware.cost import systolic
from accelsim.hardware.types import Cost
from accelsim.runtime.work import NodeWork
from accelsim.simulation.analysis import simulate_model

HW = Path(__file__).resolve().parents[2] / "hw_configs"
KiB = 1024

TWO_LEVELS = """\
name: two_levels
kind: systolic
clock: 1 GHz
compute: {rows: 8, cols: 8, dataflow: os, vector_lanes: 16}
memory:
  levels:
    sram: {size: 64 KiB, bandwidth: 10 GB/s}
    dram: {bandwidth: 1 GB/s, latency: 1 us}
  weights: dram
  cache: sram
  activations: sram
link: {bandwidth: 100 MB/s}
claims:
  - {op: ADD, versions: 1-2, dtypes: [int8]}
"""


def _work(weights: int, working_set: int, macs: int = 16) -> NodeWork:
    return NodeWork("ADD", "int8", macs=macs, weight_bytes=weights, input_bytes=working_set // 2,
                    output_bytes=working_set - working_set // 2)


def _config(tmp_path: Path, text: str, name: str = "hw.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return load_hardware(path).hardware


def test_weights_are_cached_then_streamed_and_big_working_sets_spill(tmp_path):
    hw = _config(tmp_path, TWO_LEVELS)
    # Activations reserve the largest working set that fits sram (16 KiB; the 100 KiB one spills),
    # so 48 KiB caches weights: the 40 KiB layer fits, the 30 KiB one does not and streams from dram.
    works = [_work(40 * KiB, 16 * KiB), _work(30 * KiB, 16 * KiB), _work(0, 100 * KiB)]
    costs = hw.costs(works)
    assert [c.level_bytes for c in costs] == [
        (("sram", 56 * KiB),),
        (("sram", 16 * KiB), ("dram", 30 * KiB)),
        (("dram", 100 * KiB),),
    ]
    assert [c.param_bytes_streamed for c in costs] == [0, 30 * KiB, 0]
    assert [c.bound for c in costs] == ["sram", "dram", "dram"]
    # sram: 56 KiB at 10 GB/s; dram: 1 us + bytes at 1 GB/s (cycles at 1 GHz).
    assert [c.cycles for c in costs] == [5735, 1000 + 30 * KiB, 1000 + 100 * KiB]
    assert all(c.compute_seconds == pytest.approx(1e-9) for c in costs)  # 16 MACs on 16 lanes: one cycle


def test_a_cache_of_its_own_keeps_all_its_room_and_no_cache_streams_everything(tmp_path):
    own = _config(tmp_path, TWO_LEVELS.replace("    sram:", "    cache_sram: {size: 48 KiB, bandwidth: 10 GB/s}\n"
                                               "    sram:").replace("cache: sram", "cache: cache_sram"))
    works = [_work(40 * KiB, 16 * KiB), _work(8 * KiB, 16 * KiB)]
    assert [c.level_bytes for c in own.costs(works)] == [
        (("sram", 16 * KiB), ("cache_sram", 40 * KiB)),
        (("sram", 16 * KiB), ("cache_sram", 8 * KiB)),
    ]
    none = _config(tmp_path, TWO_LEVELS.replace("  cache: sram\n", ""), "none.yaml")
    assert [c.level_bytes for c in none.costs(works)] == [
        (("sram", 16 * KiB), ("dram", 40 * KiB)),
        (("sram", 16 * KiB), ("dram", 8 * KiB)),
    ]


def test_a_working_set_that_fits_no_level_makes_the_design_infeasible_naming_the_node(tmp_path):
    hw = _config(tmp_path, TWO_LEVELS.replace("    dram: {bandwidth: 1 GB/s, latency: 1 us}\n", "")
                 .replace("weights: dram", "weights: link"))
    with pytest.raises(Infeasible) as info:
        hw.costs([_work(0, 16 * KiB), _work(0, 65 * KiB)])
    line = TWO_LEVELS.splitlines().index("  activations: sram")  # one line less: dram is gone
    assert info.value.reason == "memory"
    assert str(info.value) == (
        f"{tmp_path / 'hw.yaml'}:{line}: memory.activations: ADD (node 1 of this device, in model order) reads "
        f"and writes {65 * KiB} bytes of activations, more than 'sram' holds ({64 * KiB} bytes), and there is no "
        "level below it; make 'sram' larger or add a larger level below it")


@pytest.mark.parametrize("weights, activations, fits", [
    (40, 16, True),    # 40 KiB of weights + 16 KiB working set in 64 KiB
    (60, 16, False),   # the working set needs its room beside the weights
    (70, 0, False),    # weights alone overflow
])
def test_weights_on_a_last_level_must_fit_it_with_the_largest_working_set(tmp_path, weights, activations, fits):
    one = _config(tmp_path, TWO_LEVELS.replace("    dram: {bandwidth: 1 GB/s, latency: 1 us}\n", "")
                  .replace("  weights: dram\n  cache: sram\n", ""))
    works = [_work(weights * KiB // 2, activations * KiB), _work(weights * KiB - weights * KiB // 2, 2 * KiB)]
    if fits:
        # no cache: read from where they live on every inference, all of it on sram
        assert [dict(c.level_bytes) for c in one.costs(works)] == [
            {"sram": w.weight_bytes + w.input_bytes + w.output_bytes} for w in works]
        return
    with pytest.raises(Infeasible, match=(rf"memory.levels.sram.size: two_levels's weights need {weights * KiB} "
                                          r"bytes .* on 'sram', which holds 65536 bytes .*: the design cannot hold "
                                          r"the model; memory: \{weights: link, cache: sram\} streams")):
        one.costs(works)


def test_weights_on_a_cached_or_separate_level_are_not_refused_but_streamed(tmp_path):
    # sram caches dram: weights beyond it stream (counted), however large; weights on an activations
    # level too small for them, with a level below, spill there: the level caches them (the CPU's L2).
    cached, l2 = _config(tmp_path, TWO_LEVELS), _config(tmp_path, TWO_LEVELS.replace("weights: dram", "weights: sram")
                                                        .replace("  cache: sram\n", ""), "l2.yaml")
    works = [_work(100 * KiB, 2 * KiB)]
    assert cached.costs(works)[0].param_bytes_streamed == 100 * KiB
    assert dict(l2.costs(works)[0].level_bytes) == {"sram": 2 * KiB, "dram": 100 * KiB}
    assert l2.costs(works)[0].param_bytes_streamed == 100 * KiB


def _usb_with_memory(tmp_path: Path, memory: str, shared: bool) -> Path:
    """edgetpu_usb.yaml with its memory block replaced (and shared_memory set)."""
    text = (HW / "edgetpu_usb.yaml").read_text()
    text = re.sub(r"\nmemory:\n(?:  .*\n)+", "\nmemory:\n" + memory, text)
    text = text.replace("shared_memory: false", f"shared_memory: {str(shared).lower()}")
    path = tmp_path / f"usb_{abs(hash(memory))}_{shared}.yaml"
    path.write_text(text)
    return path


def _run(tmp_path: Path, memory: str, link_bandwidth: str, shared: bool = True):
    system = load_system(HW / "host_cpu.yaml", [_usb_with_memory(tmp_path, memory, shared)])
    # Only weights and activations here: the node programs' own link traffic is tested in test_cost.py.
    accel = apply_overrides(system.accelerators[0], {"link.bandwidth": link_bandwidth, "compute.instruction_bytes": 0})
    sim = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"), type(system)(system.host, (accel,)))
    return sim


def test_streamed_weights_are_memory_time_on_their_level_not_compute(tmp_path):
    # The reported bug: shared memory, no parameter cache, a slower link made "compute" grow
    # while transfers stayed 0. Weights now stream as traffic on the link level.
    memory = "  levels: {sram: {size: 8 MiB, bandwidth: 64 GB/s}}\n  weights: link\n"
    fast, slow = _run(tmp_path, memory, "10 GB/s"), _run(tmp_path, memory, "100 MB/s")
    assert fast.result.by_kind["compute"] == pytest.approx(slow.result.by_kind["compute"])
    assert slow.transfer_bytes == fast.transfer_bytes == 0  # shared memory: nothing is copied
    weights = sum(p.cost.param_bytes_streamed for p in slow.partitions)
    # every streamed byte takes 1/100 MB/s instead of 1/10 GB/s (less what overlaps compute)
    grew = slow.result.by_kind["memory"] - fast.result.by_kind["memory"]
    assert weights * (1 / 100e6 - 1 / 10e9) >= grew > 0.9 * weights * (1 / 100e6 - 1 / 10e9)
    assert weights > 0 and slow.level_bytes()["edgetpu_usb.link"] == weights
    assert dict(sum((p.cost for p in slow.partitions), Cost()).bound_seconds)["link"] > 0


def test_a_shared_memory_device_reading_dram_does_not_care_about_the_link(tmp_path):
    memory = ("  levels:\n    sram: {size: 8 MiB, bandwidth: 64 GB/s}\n    dram: {bandwidth: 10 GB/s}\n"
              "  weights: dram\n")
    fast, slow = _run(tmp_path, memory, "10 GB/s"), _run(tmp_path, memory, "10 MB/s")
    assert fast.latency == slow.latency and fast.result.by_kind == slow.result.by_kind
    assert "edgetpu_usb.link" not in slow.level_bytes() and slow.level_bytes()["edgetpu_usb.dram"] > 0


def test_weights_on_a_device_level_are_all_loaded_at_initialization(tmp_path):
    on_device = ("  levels:\n    sram: {size: 8 MiB, bandwidth: 64 GB/s}\n    dram: {bandwidth: 10 GB/s}\n"
                 "  weights: dram\n")
    sim = _run(tmp_path, on_device, "320 MB/s", shared=False)
    weights = sum(p.cost.param_bytes_streamed for p in sim.partitions)  # no cache: all stream from dram
    assert weights > 0 and sim.init.bytes_moved == weights  # and all crossed the link once, at initialization
    cached = _run(tmp_path, "  levels: {sram: {size: 8 MiB, bandwidth: 64 GB/s}}\n  weights: link\n  cache: sram\n",
                  "320 MB/s", shared=False)
    assert sim.init.bytes_moved == cached.init.bytes_moved  # every weight of this model fits the cache


def test_single_node_cost_uses_the_same_rules(tmp_path):
    hw = _config(tmp_path, TWO_LEVELS)
    work = _work(40 * KiB, 16 * KiB)
    assert systolic.cost(work, hw) == hw.costs([work])[0]


SPILL = TWO_LEVELS.replace("  weights: dram\n  cache: sram\n", "  weights: sram\n").replace(
    "    dram: {bandwidth: 1 GB/s, latency: 1 us}", "    dram: {bandwidth: 1 GB/s, latency: 1 us, energy: 100 pJ/B}")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size_kib=st.integers(1, 128), shared=st.booleans(),
       layers=st.lists(st.tuples(st.integers(0, 48), st.integers(1, 40)), min_size=1, max_size=6))
def test_weights_on_a_too_small_level_never_cost_less_than_on_the_level_below(tmp_path, size_kib, shared, layers):
    """Issue 31 A1: the same bytes placed on a level too small for them are never cheaper than placed honestly,
    on the level below with this level as their cache; and weights that fit are not charged below."""
    text = SPILL.replace("size: 64 KiB", f"size: {size_kib} KiB")
    if not shared:
        text = text.replace("  activations: sram", "  activations: dram")
    small = _config(tmp_path, text, "small.yaml")
    honest = _config(tmp_path, text.replace("  weights: sram\n", "  weights: dram\n  cache: sram\n"), "honest.yaml")
    works = [_work(w * KiB, a * KiB, macs=4096) for w, a in layers]
    try:
        placed = small.costs(works)
    except Infeasible:
        return  # an activation working set fits no level: both refuse (below)
    below = honest.costs(works)
    assert sum(c.seconds for c in placed) >= sum(c.seconds for c in below) * (1 - 1e-12)
    assert sum(c.energy for c in placed) >= sum(c.energy for c in below) * (1 - 1e-12)
    if not shared and sum(w.weight_bytes for w in works) <= size_kib * KiB:  # they fit: none is read from dram
        assert sum(dict(c.level_bytes).get("dram", 0) for c in placed) == sum(w.input_bytes + w.output_bytes
                                                                              for w in works)


def test_an_edge_tpu_like_1_mib_sram_holding_mobilenet_v2_weights_spills_them_and_says_so(tmp_path, capsys):
    """Issue 31 A1's scenario: weights: sram of 1 MiB above a DRAM, MobileNetV2's 3.5 MB of weights. It looked
    faster than the same weights honestly in DRAM and printed them both streamed and loaded once."""
    from accelsim.cli.main import main

    usb = (HW / "edgetpu_usb.yaml").read_text()
    usb = re.sub(r"\nmemory:\n(?:  .*\n)+", "\nmemory:\n  levels:\n    sram: {size: 1 MiB, bandwidth: 64 GB/s}\n"
                 "    dram: {bandwidth: 4 GB/s, energy: 162.5 pJ/B}\n  weights: sram\n  activations: sram\n", usb)
    small, honest = tmp_path / "small.yaml", tmp_path / "honest.yaml"
    small.write_text(usb)
    honest.write_text(usb.replace("  weights: sram\n", "  weights: dram\n  cache: sram\n"))
    model = str(Path(__file__).resolve().parents[2] / "examples" / "default" / "mobilenet_v2_100_224_int8.tflite")
    out = {}
    for name, path in (("small", small), ("honest", honest)):
        assert main(["benchmark", model, "--hw", str(path), "--num-runs", "0", "--json"]) == 0
        out[name] = json.loads(capsys.readouterr().out)
    assert out["small"]["simulated_us"]["latency"] >= out["honest"]["simulated_us"]["latency"]
    assert out["small"]["energy_uj"] >= out["honest"]["energy_uj"]
    assert out["small"]["streamed_param_bytes"] == out["honest"]["streamed_param_bytes"] > 3 * 2**20 - 2**20
    assert any("do not fit memory.levels.sram" in w and "spill to 'dram'" in w for w in out["small"]["warnings"])
    assert main(["benchmark", model, "--hw", str(small), "--num-runs", "0"]) == 0
    text = capsys.readouterr().out
    weights = next(line for line in text.splitlines() if line.startswith("Weights:"))
    assert not ("streamed" in weights and "loaded once" in weights)
    assert "Warning: edgetpu_usb: its weights (3541992 bytes, 3.38 MiB) do not fit memory.levels.sram" in text
