"""The interpreter benchmark's measuring parts run and count what they claim (no timing is asserted)."""

import json
from pathlib import Path

import numpy as np
import pytest

from accelsim.runtime import Interpreter
from benchmarks.interpreter import FIXTURES, op_profile, time_invoke

ROOT = Path(__file__).resolve().parent.parent


def test_op_profile_counts_kernel_calls_per_invoke_including_loop_bodies():
    _, rows = op_profile(FIXTURES / "sparse_float.tflite", min_time=0.0)
    assert [(op, calls) for op, _, calls in rows] == [("FULLY_CONNECTED", 3.0)]
    # lstm_gru_float: two WHILE nodes in the main graph, their bodies run 10 times each.
    _, rows = op_profile(FIXTURES / "lstm_gru_float.tflite", min_time=0.0)
    calls = {op: c for op, _, c in rows}
    assert calls["WHILE"] == 2.0
    assert calls["LESS"] == 44.0  # two conditions per cond evaluation, 11 evaluations per loop
    assert all(seconds > 0 for _, seconds, _ in rows)


def test_time_invoke_runs_at_least_the_requested_invokes():
    it = Interpreter(model_path=FIXTURES / "sparse_float.tflite")
    counted = []
    original = it.invoke

    def counting():
        counted.append(1)
        original()

    it.invoke = counting
    seconds = time_invoke(it, [np.zeros((1, 64), np.float32)], runs=7, warmup=2)
    assert len(counted) == 9 and seconds > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lstm_gru_float", "transformer_block_float"])
def test_fusion_floor_networks_compute_the_fixtures_they_time(name):
    """A hand-fused network is a bound for a model only if it computes that model's outputs."""
    from benchmarks.fusion_floor import NETWORKS

    path = FIXTURES / f"{name}.tflite"
    it = Interpreter(model_path=path)
    it.allocate_tensors()
    detail = it.get_input_details()[0]
    x = np.random.default_rng(3).standard_normal(detail["shape"]).astype(np.float32)
    it.set_tensor(detail["index"], x)
    it.invoke()
    expected = it.get_tensor(it.get_output_details()[0]["index"])
    got = NETWORKS[name](path)(x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * np.abs(expected).max())


@pytest.mark.slow
def test_cost_vs_litert_simulates_on_the_shipped_host_and_reports_loops():
    from benchmarks.cost_vs_litert import Row, simulated, spread

    # The benchmark's simulated column is the pinned cost of the same pair (tests/golden/pinned_costs.json, which
    # moves only on purpose): a change to how it simulates (host, op modules, trips) fails here.
    pinned = json.loads((ROOT / "tests" / "golden" / "pinned_costs.json").read_text(encoding="utf-8"))
    for name in ("lstm_gru_float", "mobilenet_v2_035_96_int8"):
        latency_us, _ = simulated(FIXTURES / f"{name}.tflite", "host_x86")
        assert latency_us == pytest.approx(pinned[f"host_x86/{name}"]["latency_s"] * 1e6, rel=1e-9, abs=0)
    latency_us, loops = simulated(FIXTURES / "lstm_gru_float.tflite", "host_x86")
    assert loops == "0:1: 10 (constant), 0:2: 10 (constant)"
    rows = [Row("a", 10.0, 12.0, 5.0, ""), Row("b", 10.0, 11.0, 20.0, "")]
    assert [r.ratio for r in rows] == [0.5, 2.0] and spread(rows) == 4.0


def test_cost_vs_litert_times_litert_by_thread_cpu_time(monkeypatch):
    """round_median is the median of this thread's CPU time per invoke, over at least `runs` invokes and until
    `min_time` wall seconds passed: with a scripted clock its number is exactly known."""
    from benchmarks import cost_vs_litert
    from benchmarks.cost_vs_litert import litert_interpreter, round_median

    cpu_steps = iter([0.0, 3e-3, 10.0, 10.001, 20.0, 20.002, 30.0, 30.009, 40.0, 40.004])  # invokes: 3, 1, 2, 9, 4 ms
    wall = iter([0.0, 0.2, 0.4, 0.5])  # the start, then a reading after each invoke once `runs` are done

    class Clock:
        thread_time = staticmethod(lambda: next(cpu_steps))
        perf_counter = staticmethod(lambda: next(wall))

    class Invoked:
        calls = 0

        def invoke(self):
            Invoked.calls += 1

    monkeypatch.setattr(cost_vs_litert, "time", Clock)
    # 3 runs at least, and 0.45 s of wall time: 5 invokes (the wall clock reads 0.5 after the fifth).
    assert round_median(Invoked(), runs=3, min_time=0.45) == pytest.approx(3e-3)
    assert Invoked.calls == 5
    monkeypatch.undo()
    it = litert_interpreter(FIXTURES / "sparse_float.tflite", warmup=1)
    assert 0 < round_median(it, runs=3, min_time=0.0) < 1.0  # the real clock: seconds per invoke of a tiny model


@pytest.mark.slow
def test_dse_benchmark_runs_a_tiny_grid_through_every_path(capsys):
    """benchmarks/dse.py --tiny: the executor, the fresh paths and the from-file table all run (no timing asserted)."""
    from benchmarks.dse import RESNET, main

    assert main(["--tiny", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "4 points (2 x 2: compute.rows, compute.cols)" in out and "0 of the new run's points failed" in out
    for label in ("full kernel prepare", "(shapes only)", "new: one analysis per batch"):
        assert label in out
    assert "mobilenet_v2_100_224_int8    host_cpu+edgetpu_usb" in out
    assert ("resnet152_int8" in out) and (RESNET.exists() or "build it once with" in out)


@pytest.mark.slow
def test_cost_policy_benchmark_compares_both_choices_and_never_loses():
    from benchmarks.cost_policy import FIXTURES as MODELS
    from benchmarks.cost_policy import compare

    row = compare(MODELS / "interleaved_int8.tflite", "hexagon_dsp")
    assert (row.moved, row.partitions) == (2, 2)  # both DSP partitions cost more than the host alone
    assert row.cost_us < row.tflite_us
    kept = compare(MODELS / "mobilenet_v2_100_224_int8.tflite", "edgetpu_usb")
    assert kept.moved == 0 and kept.cost_us == kept.tflite_us  # the Edge TPU pays for itself there


def test_cost_vs_pixel3_fits_on_fit_rows_only_and_recovers_a_planted_value():
    """--fit never looks at a held-out row, and finds the value that makes simulated equal published."""
    from accelsim.experiments.experiment import SHIPPED_CONFIGS
    from accelsim.hardware.config import load_hardware
    from benchmarks import cost_vs_pixel3 as pixel3

    class Planted:
        """Simulated = published x (0.25 / efficiency): the right efficiency is 0.25."""

        configs = {"kryo385_cpu": load_hardware(SHIPPED_CONFIGS / "kryo385_cpu.yaml")}
        asked: set = set()

        def configured(self, values):
            return dict(values)

        def ms(self, row, column, configs):
            self.asked.add(row.label)
            (efficiency,) = configs.values()
            return row.published(column) * 0.25 / efficiency

    param = pixel3.Param("kryo385_cpu", "compute.efficiency", 0.05, 1.0)
    bench = Planted()
    (value,) = pixel3.fit(bench, [param], ("cpu_float", "cpu_quant")).values()
    assert value == pytest.approx(0.25, rel=0.02)
    held_out = {r.label for r in pixel3.ROWS if r.held_out}
    assert held_out and bench.asked and not bench.asked & held_out
    assert {"MobileNet V1 0.50 128", "Inception V3 299"} <= held_out


def test_sensitivity_benchmark_times_both_sides_on_one_model():
    """benchmarks/sensitivity.py: both measured paths run and count their costings (no timing asserted)."""
    from accelsim.hardware.config import load_system
    from benchmarks.sensitivity import HW, design_points, one_sensitivity

    model = str(FIXTURES / "mobilenet_v2_035_96_int8.tflite")
    system = load_system(HW / "host_cpu.yaml", [HW / "edgetpu_usb.yaml", HW / "hexagon_dsp.yaml"])
    seconds, costed = one_sensitivity(model, system)
    assert seconds > 0 and costed >= 30  # 3 devices: clocks, arrays, levels, links, each at x0.5 and x2
    assert design_points(model, system, 2) > 0


@pytest.mark.slow
def test_cost_only_benchmark_times_the_command_and_its_floor(capsys):
    """benchmarks/cost_only.py: every row runs (the command in a subprocess) and the ratios are printed."""
    from benchmarks.cost_only import main

    assert main(["--model", str(FIXTURES / "interleaved_int8.tflite"), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    for label in ("(a) start-up", "(b) one cost-only simulate_model", "(c) accelsim benchmark --num-runs 0",
                  "(d) accelsim benchmark --num-runs 1", "(c) / ((a) + (b)) = ", "(d) / (c) = "):
        assert label in out
    assert main(["--model", str(FIXTURES / "missing.tflite")]) == 2
    assert "missing.tflite is not there" in capsys.readouterr().err


def test_the_host_x86_fit_returns_to_the_rates_that_explain_the_times():
    """fit_host_x86's descent, without timing anything: 'measured' times simulated with the shipped rates, a
    start with the int8 row cost 30 cycles off (20-30% slower), and the fit finds the shipped values again."""
    from accelsim.hardware.config import System, load_hardware
    from benchmarks.fit_host_x86 import ROOT, analyze, ceiling, current, fit, latencies, with_values

    hw = load_hardware(ROOT / "hw_configs" / "host_x86.yaml")
    analyses = [analyze(str(FIXTURES / f"{m}.tflite"), System(hw, ())) for m in
                ("interleaved_int8", "transformer_block_int8", "dilated_cnn_int8")]
    shipped = current(hw)
    measured = latencies(analyses, hw)
    start = with_values(hw, {**shipped, "compute.row_cycles.int8": shipped["compute.row_cycles.int8"] + 30})
    assert min(s / m for s, m in zip(latencies(analyses, start), measured)) > 1.05
    assert fit(analyses, start, measured) == shipped
    assert ceiling("compute.vector_per_cycle.float32", hw) == 32 == 512 // 32 * 2  # two ports of 16 lanes


def test_the_coral_fit_reruns_to_the_shipped_values():
    """cost_vs_coral.py --fit from the committed summaries (no TensorFlow), with each column's host (the Dev
    Board's Edge TPU on cortex_a53_cpu): the YAMLs hold its Edge TPU shape and links and cortex_a53_cpu's values."""
    from accelsim.experiments.experiment import SHIPPED_CONFIGS
    from accelsim.hardware.config import load_hardware
    from benchmarks.calibration import FIT, HELD_OUT, RETIRED, SHAPED
    from benchmarks.cost_vs_coral import CPU, EDGETPU, FIT_ROWS, ROWS, SUMMARIES, SUMMARY_ROWS, fit_lines, systems

    assert sorted(p.name for p in SUMMARIES.glob("*.xz")) == sorted(f"{k}_int8.tflite.xz" for k in SUMMARY_ROWS)
    for c in EDGETPU:  # the rows marked fit are the rows the Edge TPU fit reads
        assert tuple(r.key for r in ROWS if r.role(c) == FIT) == FIT_ROWS
        assert [r.key for r in ROWS if r.role(c) == RETIRED] == ["inception_resnet_v2"]
    # DenseNet-121 shaped the cpu kind's pack_cycles (b0367b6): not held out on the CPU column (issue 31 B5).
    assert [r.key for r in ROWS if r.role(CPU) == HELD_OUT] == ["inception_resnet_v2"]
    assert [r.key for r in ROWS if r.role(CPU) == SHAPED] == ["densenet121"]
    lines = fit_lines(systems(load_hardware(SHIPPED_CONFIGS / f"{CPU}.yaml")))
    assert lines[-1] == "  the YAMLs hold the fit: yes", "\n".join(lines)


def test_the_pixel3_and_aihub_fits_rerun_to_the_shipped_values():
    """cost_vs_pixel3.py --fit and cost_vs_aihub.py --fit from the committed summaries of their fit rows (no
    TensorFlow, no cache): the YAMLs of adreno630_gpu, kryo385_cpu and hexagon_v75_npu hold the fit, and the
    summaries are exactly the fit rows' models (held-out rows have none)."""
    from accelsim.experiments.experiment import SHIPPED_CONFIGS
    from accelsim.hardware.config import load_hardware
    from benchmarks import cost_vs_aihub, cost_vs_pixel3

    assert sorted(p.name for p in cost_vs_pixel3.SUMMARIES.glob("*.xz")) == sorted(
        f"{k}.tflite.xz" for k in cost_vs_pixel3.fit_keys())
    assert not any("0.5_" in k or "Inception" in k for k in cost_vs_pixel3.fit_keys())
    assert sorted(p.name for p in cost_vs_aihub.SUMMARIES.glob("*.xz")) == sorted(
        cost_vs_aihub.summary_path(r, d).name for r, _, d in cost_vs_aihub.fit_models())
    assert all(not r.held_out for r, _, _ in cost_vs_aihub.fit_models())
    lines = cost_vs_pixel3.fit_lines()
    assert lines[-1] == "  the YAMLs hold the fit: yes", "\n".join(lines)
    npu, host = (load_hardware(SHIPPED_CONFIGS / f"{n}.yaml") for n in (cost_vs_aihub.NPU, cost_vs_aihub.HOST_CONFIG))
    lines = cost_vs_aihub.fit_lines(host, npu)
    assert lines[-1] == "  the YAML holds the fit: yes", "\n".join(lines)


def test_the_pixel3_fit_notices_a_yaml_that_does_not_hold_it(monkeypatch):
    """The rerun can fail: with kryo385_cpu's int8 row cost 20% off, --fit moves it and says the YAMLs do not
    hold the fit."""
    from accelsim.hardware.config import apply_overrides
    from benchmarks import cost_vs_pixel3

    real = cost_vs_pixel3.load_hardware

    def damaged(path):
        device = real(path)
        if path.stem != "kryo385_cpu":
            return device
        return apply_overrides(device, {"compute.row_cycles.int8":
                                        dict(device.hardware.compute.row_cycles)["int8"] * 1.2})

    monkeypatch.setattr(cost_vs_pixel3, "load_hardware", damaged)
    lines = cost_vs_pixel3.fit_lines()
    assert lines[-1] == "  the YAMLs hold the fit: no"
    assert any("row_cycles.int8" in line and "differs" in line for line in lines), "\n".join(lines)


def test_a_fit_row_summary_simulates_exactly_as_its_model():
    """What --summarize commits (weights zeroed, quantization constant) costs the same as the model on every
    system a fit reads it on (Coral's columns, the Pixel 3's GPU and CPU, the Hexagon NPU), and is small."""
    import lzma

    from accelsim.experiments.experiment import SHIPPED_CONFIGS
    from accelsim.hardware.config import load_hardware, load_system
    from accelsim.runtime.read import load_model
    from accelsim.runtime.write import save_model
    from accelsim.simulation.analysis import simulate_model
    from benchmarks.calibration import summary_model
    from benchmarks.cost_vs_coral import systems

    columns = systems(load_hardware(SHIPPED_CONFIGS / "cortex_a53_cpu.yaml"))  # each of Coral's columns
    phone = [load_system(SHIPPED_CONFIGS / "kryo385_cpu.yaml", [SHIPPED_CONFIGS / f"{a}.yaml" for a in accelerators])
             for accelerators in ((), ("adreno630_gpu",), ("hexagon_v75_npu",))]
    dsp = load_system(SHIPPED_CONFIGS / "host_cpu.yaml", [SHIPPED_CONFIGS / "hexagon_dsp.yaml"])
    for name in ("mobilenet_v2_100_224_int8", "mobilenet_v2_035_96_float"):
        model = load_model(str(FIXTURES / f"{name}.tflite"))
        summary = save_model(summary_model(model))
        assert len(lzma.compress(summary)) < len((FIXTURES / f"{name}.tflite").read_bytes()) / 10
        for system in (*columns.values(), *phone, dsp):
            assert simulate_model(load_model(summary), system).latency == simulate_model(model, system).latency


def test_cost_vs_litert_marks_a_fixture_added_after_the_host_x86_fit_held_out_and_simulates_its_custom_ops():
    """selfie_like_float came after fit_host_x86's last run: held out, and simulated with the MediaPipe op pack."""
    from benchmarks.cost_vs_litert import FIT_ROWS, SKIPPED, runnable_fixtures, simulated

    paths, _ = runnable_fixtures()
    assert len(FIT_ROWS) == 14 and FIT_ROWS <= {p.stem for p in paths} and not FIT_ROWS & set(SKIPPED)
    selfie = next(p for p in paths if p.stem == "selfie_like_float")
    assert selfie.stem not in FIT_ROWS
    us, _ = simulated(selfie, "host_x86")
    assert us > 0


def test_the_nnapi_fit_reruns_to_the_shipped_values_and_the_readme_quotes_its_fit_rows():
    """cost_vs_nnapi.py --fit from the committed MobileNet summaries (no TensorFlow): the NNAPI drivers' and
    kryo485_cpu's YAML values hold the fit; the fitted values touch only fit rows; the README's MobileNet rows
    of the NNAPI table are what the script prints for them."""
    from benchmarks import cost_vs_nnapi as nnapi

    fit_rows = {(r.key, r.phone, c) for r in nnapi.ROWS for c, label in zip(nnapi.COLUMNS, r.labels)
                if label == nnapi.FIT}
    assert {(k, p, c) for p, c, _, _, keys in nnapi.PARAMS for k in keys} == fit_rows
    assert all(k.startswith("MobileNet") for k, _, _ in fit_rows)
    bench = nnapi.Bench(nnapi.models(nnapi.CACHE, None), [r for r in nnapi.ROWS if r.key.startswith("MobileNet")])
    lines = nnapi.fit_lines(bench)
    assert lines[-1] == "  the YAMLs hold the fit: yes", "\n".join(lines)
    printed: list[str] = []
    nnapi.table(bench, printed.append)
    readme = (nnapi.ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line for line in printed if line.startswith("MobileNet 1.0 224")]
    assert len(rows) == 4 and all(line in readme for line in rows), "\n".join(rows)


def test_search_benchmark_hypervolume_is_the_dominated_area():
    from benchmarks.search import front, hypervolume

    points = [(1.0, 5.0), (2.0, 2.0), (3.0, 3.0), (4.0, 1.0)]  # (3, 3) is dominated by (2, 2)
    assert front(points) == [(1.0, 5.0), (2.0, 2.0), (4.0, 1.0)]
    # up to (5, 6): 4 x 1 (y 5..6) + 3 x 3 (y 2..5) + 1 x 1 (y 1..2)
    assert hypervolume(points, (5.0, 6.0)) == 4 * 1 + 3 * 3 + 1 * 1


@pytest.mark.slow
def test_search_benchmark_compares_samplers_at_equal_budget(capsys):
    pytest.importorskip("optuna", reason="the `search` extra")
    from benchmarks.search import main

    assert main(["--budget", "4", "--samplers", "random,tpe", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "budget 4 each, seed 1" in out and out.count("     4 ") >= 2
