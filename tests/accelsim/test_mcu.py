"""Kind mcu (a Cortex-M running TFLite Micro with CMSIS-NN): memory checks, fallback notes, YAML errors, the
Corstone default host, the MLPerf Tiny table the README quotes, and the kernel structure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsim.cli.main import main
from accelsim.core.feasibility import Infeasible
from accelsim.hardware.config import System, apply_overrides, load_hardware, load_system
from accelsim.hardware.config_yaml import ConfigError
from accelsim.hardware.cost import mcu
from accelsim.reports.results import layer_rows, record
from accelsim.runtime.work import ConvGeometry, Gemm, NodeWork
from accelsim.simulation.analysis import simulate_model
from accelsim.tools.systems import default_host

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hw_configs"
FIXTURES = ROOT / "tests" / "fixtures" / "models"
TINY = FIXTURES / "mlperf_tiny"
MCU_CONFIGS = ("cortex_m0plus", "cortex_m4", "cortex_m7", "cortex_m33", "cortex_m55", "cortex_m85", "renesas_ra8d1")


def _alone(device) -> System:
    return System(device, ())


def _layers(model: Path, config: str) -> list[dict]:
    sim = simulate_model(str(model), load_system(HW / f"{config}.yaml", []))
    return layer_rows(record(sim, point_id="", model=str(model), variant="", sweep={}))


def test_every_cortex_m_config_loads_as_kind_mcu_with_bounded_memories():
    for name in MCU_CONFIGS:
        hw = load_hardware(HW / f"{name}.yaml").hardware
        assert hw.kind == "mcu" and not hw.is_accelerator
        assert all(level.size is not None for level in hw.memory.levels), name  # capacity is checked
        assert hw.clock <= hw.compute.max_clock_mhz * 1e6


def test_an_arena_larger_than_the_sram_is_infeasible_with_both_sizes():
    with pytest.raises(Infeasible) as info:
        simulate_model(str(FIXTURES / "mobilenet_v2_100_224_int8.tflite"), load_system(HW / "cortex_m4.yaml", []))
    assert info.value.reason == "memory"
    text = str(info.value)
    assert "cortex_m4.yaml:" in text and "memory.levels.sram.size" in text
    assert "1507008 bytes" in text and "655360 bytes (640.0 KiB)" in text  # what it needs, what the SRAM holds


def test_weights_larger_than_the_flash_are_infeasible_with_both_sizes():
    small = apply_overrides(load_hardware(HW / "cortex_m4.yaml"), {"memory.levels.flash.size": "64 KiB"})
    with pytest.raises(Infeasible) as info:
        simulate_model(str(TINY / "vww_96_int8.tflite"), _alone(small))
    assert info.value.reason == "memory"
    assert "memory.levels.flash.size" in str(info.value) and "65536 bytes (64.00 KiB)" in str(info.value)
    assert "weights need 219072 bytes (213.94 KiB)" in str(info.value)


def test_a_float_model_runs_on_reference_kernels_and_the_table_says_so():
    rows = _layers(FIXTURES / "dilated_cnn_float.tflite", "cortex_m4")
    computing = [r for r in rows if r["macs"]]
    assert computing and all(r["note"] == "float32: TFLM reference kernel (CMSIS-NN has no float kernels)"
                             for r in computing)
    # reference kernels are slower per MAC than CMSIS-NN's on the same model shape
    int8 = sum(r["time_us"] for r in _layers(FIXTURES / "dilated_cnn_int8.tflite", "cortex_m4"))
    assert sum(r["time_us"] for r in rows) > 10 * int8


def test_an_op_cmsis_nn_lacks_falls_back_to_the_reference_kernel_with_a_note():
    rows = _layers(TINY / "kws_ref_model.tflite", "cortex_m4")
    notes = {r["op"]: r["note"] for r in rows}
    assert notes["RESHAPE"] == "TFLM reference kernel (CMSIS-NN has no RESHAPE)"
    assert notes["CONV_2D"] is None and notes["DEPTHWISE_CONV_2D"] is None and notes["SOFTMAX"] is None
    logistic = NodeWork(op="LOGISTIC", dtype="int8", macs=0, input_bytes=100, output_bytes=100, elements=100,
                        kind="lookup")
    hw = load_hardware(HW / "cortex_m4.yaml").hardware
    assert mcu.note(logistic) == "TFLM reference kernel (CMSIS-NN has no LOGISTIC)"
    assert mcu.compute_cycles(logistic, hw) == 100 * hw.compute.reference_cycles_per_element


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    text = (HW / "cortex_m4.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "m4.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _line(path: Path, start: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(start))


def test_an_impossible_clock_is_a_config_error_at_its_line(tmp_path):
    path = _edited(tmp_path, "clock: 120 MHz", "clock: 5 GHz")
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    (message,) = info.value.errors
    assert message.startswith(f"{path}:{_line(path, 'clock:')}: clock: 5000 MHz is above the 120 MHz")
    assert "use a clock <= 120 MHz" in message


def test_an_impossible_memory_size_is_a_config_error_at_its_line(tmp_path):
    path = _edited(tmp_path, "sram: {size: 640 KiB", "sram: {size: 2 GiB")
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    (message,) = info.value.errors
    assert message.startswith(f"{path}:{_line(path, '    sram:')}: memory.levels.sram.size: ")
    assert "SRAM region" in message and "<= 512 MiB" in message


def test_ethos_u_benchmarks_default_to_their_corstone_host(capsys):
    assert default_host(["ethos_u55_128"])[0] == "cortex_m55"
    assert default_host(["ethos_u65_256"])[0] == "cortex_m85"
    assert default_host(["edgetpu_usb"]) == ("kryo385_cpu", None)
    assert default_host([]) == ("kryo385_cpu", None)
    model = str(TINY / "kws_ref_model.tflite")
    assert main(["benchmark", model, "--hw", "ethos_u55_128", "--num-runs", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Using host cortex_m55 (the Corstone-300 system's Cortex-M")
    assert "Host: [cortex_m55]  Accelerators: [ethos_u55_128]" in out
    assert main(["benchmark", model, "--hw", "ethos_u55_128", "--num-runs", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["host"] == "cortex_m55" and "Corstone-300" in data["host_chosen"]
    # the host-alone baseline is the microcontroller: the NPU is far faster than it on its own model
    assert data["host_only_us"] > 10 * data["simulated_us"]["latency"]
    assert main(["benchmark", model, "--hw", "ethos_u55_128", "--host", "host_cpu", "--num-runs", "0"]) == 0
    assert "Using host" not in capsys.readouterr().out


def _conv(k: int, channels_in: int, out_c: int = 16, hw: int = 8) -> NodeWork:
    geo = ConvGeometry(1, hw, hw, channels_in, k, k, 1, 1, 1, 1, hw, hw, out_c)
    macs = hw * hw * out_c * k * k * channels_in
    return NodeWork(op="CONV_2D", dtype="int8", macs=macs, weight_bytes=out_c * k * k * channels_in,
                    input_bytes=hw * hw * channels_in, output_bytes=hw * hw * out_c, elements=hw * hw * out_c,
                    kind="gemm", conv=geo, gemm=Gemm(hw * hw, k * k * channels_in, out_c))


def test_kernel_structure_the_1x1_fast_path_helium_lanes_and_flash_passes():
    m4 = load_hardware(HW / "cortex_m4.yaml").hardware
    m55 = load_hardware(HW / "cortex_m55.yaml").hardware
    # 1x1 stride 1 with channels a multiple of 4: no im2col; the same GEMM with channels 6 builds one
    assert mcu._gemm_cycles(_conv(1, 8), m4.compute) < mcu._gemm_cycles(_conv(1, 6), m4.compute) * 8 / 6
    # Helium runs whole 16-byte vectors: a reduction of 8 costs the GEMM loop what 16 does
    gemm = lambda w: mcu._gemm_cycles(w, m55.compute) - 64 * 16 * m55.compute.requant_cycles_per_output  # noqa: E731
    assert gemm(_conv(1, 8)) == pytest.approx(gemm(_conv(1, 16)))
    # weights beyond the flash cache are read once per tile of output pixels, each access waiting
    big = _conv(3, 64, out_c=32)
    assert big.weight_bytes > m4.compute.flash_cache_bytes
    assert mcu.flash_stall_cycles(big, m4.compute) == (
        -(-big.weight_bytes * 32 // m4.compute.flash_read_bytes) * m4.compute.flash_wait_states)
    assert mcu.flash_stall_cycles(big, m55.compute) == (
        -(-big.weight_bytes // m55.compute.flash_read_bytes) * m55.compute.flash_wait_states)  # fits its D-cache


@pytest.fixture(scope="module")
def tiny_benchmark():
    from benchmarks import cost_vs_mlperf_tiny  # a script of the repository, not of the package

    return cost_vs_mlperf_tiny


@pytest.mark.slow
def test_the_readme_quotes_the_mlperf_tiny_table_as_the_benchmark_prints_it(tiny_benchmark):
    rows = tiny_benchmark.read_rows()
    lines, ratios = tiny_benchmark.table(rows)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for line in [*lines, *tiny_benchmark.headline(ratios)]:
        assert line in readme, line
    # the fit rows are fitted: the YAMLs hold the fit's values, to their rounding
    geo, worst = tiny_benchmark.ratio_err(ratios[tiny_benchmark.FIT])
    assert geo < 0.03 and worst < 1.05


def test_a_microcontroller_without_memory_sizes_says_capacity_is_not_checked(tmp_path):
    path = _edited(tmp_path, "sram: {size: 640 KiB, ", "sram: {")
    path.write_text(path.read_text().replace("flash: {size: 2 MiB, ", "flash: {"))
    notes = load_hardware(path).hardware.notes()
    assert "memory.levels.sram.size is not given: the tensor arena's capacity is not checked" in notes
    assert "memory.levels.flash.size is not given: the weights' capacity is not checked" in notes
    assert not [n for n in load_hardware(HW / "cortex_m4.yaml").hardware.notes() if "capacity" in n]


@pytest.mark.slow
def test_the_fit_reproduces_the_yaml_values(tiny_benchmark):
    """`python benchmarks/cost_vs_mlperf_tiny.py --fit` from the YAMLs' values ends where it starts."""
    lines = tiny_benchmark.fit(tiny_benchmark.read_rows())
    for line in lines[1:]:
        name, _, was, _, now = line.split()[:5]
        assert float(was) == float(now), line


@pytest.mark.slow
def test_the_readme_quotes_the_ethos_u_table_on_the_mlperf_tiny_models_as_the_benchmark_prints_it(tiny_benchmark):
    """Vela compiles the five models for three configs (minutes): the README's table is its output, and every op
    of these models goes to the NPU (nothing falls back to the Cortex-M host)."""
    models = [TINY / f"{m}.tflite" for m in (*tiny_benchmark.MODELS.values(), *tiny_benchmark.EXTRA_MODELS)]
    lines = tiny_benchmark.vela_lines(models)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(lines) == 16
    for line in lines:
        assert line in readme, line
    assert all(line.split()[5] == "0" for line in lines[1:])
