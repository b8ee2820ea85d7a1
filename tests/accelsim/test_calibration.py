"""The calibration benchmarks' shared fit, row marks and error measures, and how cost_vs_coral marks its rows."""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import calibration, cost_vs_aihub, cost_vs_coral


@settings(max_examples=25, deadline=None)
@given(st.floats(0.2, 5.0), st.floats(0.2, 5.0))
def test_fit_finds_the_values_that_explain_the_rows(a, b):
    """Row ratios a*x and b*y are both 1 at x = 1/a, y = 1/b; the descent gets within its finest step."""
    def ratios(v):
        return [a * v["x"], b * v["y"]]

    best = calibration.fit(ratios, {"x": 1.0, "y": 1.0})
    assert best["x"] == pytest.approx(1 / a, rel=0.02) and best["y"] == pytest.approx(1 / b, rel=0.02)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.2, 5.0), st.floats(0.2, 5.0), st.floats(0.0, 0.3))
def test_fit_is_a_fixed_point_on_the_yaml_grid(a, b, coupling):
    """The fit's values are stated to 4 significant digits, and a fit started from them returns them unchanged
    (the property the shipped-values tests rely on), also when the rows couple the two values."""
    def ratios(v):
        return [a * v["x"] + coupling * v["y"], b * v["y"], v["x"] * v["y"]]

    best = calibration.fit(ratios, {"x": 1.0, "y": 1.0}, lower={"x": 0.01, "y": 0.01})
    assert all(v == float(f"{v:.4g}") for v in best.values())
    assert calibration.fit(ratios, best, lower={"x": 0.01, "y": 0.01}) == best


def test_fit_keeps_counts_whole_and_values_under_their_bound():
    best = calibration.fit(lambda v: [v["n"] / 7.4, v["f"] / 3.0], {"n": 3, "f": 0.5}, integers=frozenset({"n"}),
                           upper={"f": 1.0})
    assert best == {"n": 7, "f": 1.0}


def test_errors_are_symmetric_in_log_and_worst_is_the_largest_miss():
    assert calibration.geomean_error([2.0, 0.5]) == pytest.approx(1.0)
    # Worst is max(r, 1/r): 0.8 is 25% off (1/0.8), further than 1.1, so an under-prediction is not hidden.
    assert calibration.worst_error([0.8, 1.1]) == pytest.approx(0.25)
    assert calibration.worst_error([0.5, 1.9]) == pytest.approx(1.0)
    assert calibration.worst_ratio([0.5, 1.9]) == 0.5
    assert calibration.misfit([math.e, 1 / math.e]) == pytest.approx(1.0)


def test_coral_rows_are_held_out_or_retired_per_column():
    rows = {r.key: r for r in cost_vs_coral.ROWS}
    assert rows["densenet121"].role(cost_vs_coral.CPU) == "shaped"  # it gave pack_cycles (b0367b6)
    assert rows["inception_resnet_v2"].role(cost_vs_coral.CPU) == "held-out"
    assert rows["densenet121"].role("edgetpu_pcie") == "fit"
    irv2 = rows["inception_resnet_v2"]
    assert irv2.role("edgetpu_usb") == irv2.role("edgetpu_pcie") == "retired"
    assert "55.9 M" in irv2.retired["edgetpu_usb"] and "42.7 M" in irv2.retired["edgetpu_usb"]
    # The Embedded CPU column's published times (Coral Table 1) and the Dev Board's host.
    assert [r.cpu_ms for r in cost_vs_coral.ROWS] == [164.0, 122.0, 1032.0, 1763.0, 2852.0, 4595.0]
    assert cost_vs_coral.HOSTS == {"cortex_a53_cpu": "cortex_a53_cpu", "edgetpu_usb": "host_cpu",
                                   "edgetpu_pcie": "cortex_a53_cpu"}


def test_calibration_tables_put_held_out_rows_first_count_no_retired_row_and_say_when_none_is_held_out():
    from benchmarks.calibration import FIT, HELD_OUT, RETIRED, SHAPED, error_lines

    lines = error_lines("x / ref", [(FIT, 1.0), (HELD_OUT, 2.0), (RETIRED, 9.0), (FIT, 0.5), (HELD_OUT, 0.5),
                                    (SHAPED, 0.8)])
    assert lines == ["x / ref: held-out rows (2): geometric-mean error 100%, worst 100% (ratio 2.00)",
                     "x / ref: shaped rows (1): geometric-mean error 25%, worst 25% (ratio 0.80)",
                     "x / ref: fit rows (2): geometric-mean error 41%, worst 100% (ratio 0.50)"]
    assert error_lines("y / ref", [(FIT, 1.1), (RETIRED, 0.1), (SHAPED, 1.0)]) == [
        "y / ref: no held-out row: every row informed a number or shaped a mechanism, so none is an independent check",
        "y / ref: shaped rows (1): geometric-mean error 0%, worst 0% (ratio 1.00)",
        "y / ref: fit rows (1): geometric-mean error 10%, worst 10% (ratio 1.10)"]


def test_a_graph_with_many_variants_counts_once_in_the_headline():
    from benchmarks.calibration import HELD_OUT, error_lines, graph_geomean_error

    # Twelve MobileNet v1 variants at 1.0 and one other graph at 2.0: per row the error is 5.9%, per graph 41%.
    rows = [(HELD_OUT, 1.0, "MobileNet v1")] * 12 + [(HELD_OUT, 2.0, "ResNet")]
    assert graph_geomean_error([r for _, r, _ in rows], [g for *_, g in rows]) == pytest.approx(2 ** 0.5 - 1)
    assert error_lines("z / ref", rows) == [
        "z / ref: held-out rows (13, 2 graphs): geometric-mean error 41% (each graph once), worst 100% (ratio 2.00)"]


@pytest.mark.parametrize("module", ["coral", "aihub"])
def test_missing_models_without_tensorflow_say_how_to_build_them(module, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # `import tensorflow` fails, as without it installed
    with pytest.raises(SystemExit) as info:
        if module == "coral":
            cost_vs_coral.ensure_models(cost_vs_coral.ROWS[:1], tmp_path)
        else:
            cost_vs_aihub.ensure_models(tmp_path)
    message = str(info.value)
    assert f"missing from {tmp_path}" in message and "needs TensorFlow" in message
    expected = (f"python benchmarks/keras_tflite.py {tmp_path / 'mobilenet_v1_int8.tflite'} MobileNet 224 int8"
                if module == "coral" else
                f"python benchmarks/keras_tflite.py {tmp_path / 'mobilenet_v2_float32.tflite'} MobileNetV2 224 float32")
    assert expected in message


def test_a_summary_that_simulates_differently_or_is_missing_is_a_one_line_error(tmp_path):
    """--summarize refuses a summary that costs differently from its model; --fit names a missing summary and
    the command that writes it."""
    from pathlib import Path

    model = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "mobilenet_v2_035_96_int8.tflite"
    out = tmp_path / "m.tflite.xz"

    def weight_sum(m):  # a 'latency' that reads the weights, which the summary zeroes
        return [float(sum(sum(b) for b in m.buffers))]

    with pytest.raises(SystemExit, match=r"^cost_vs_x --summarize: mobilenet_v2_035_96_int8.tflite's summary "
                                         r"simulates [\d.]+ ms, its model [\d.]+ ms$"):
        calibration.write_summary(model, out, weight_sum, "cost_vs_x")
    assert not out.exists()
    assert calibration.write_summary(model, out, lambda m: [float(len(m.buffers))], "cost_vs_x").startswith(
        "wrote m.tflite.xz (")
    assert calibration.read_summary(out, "cost_vs_x").subgraphs[0].operators
    with pytest.raises(SystemExit, match=r"^cost_vs_x --fit: the fit row summary .*missing.tflite.xz is missing; "
                                         r"write it with python benchmarks/cost_vs_x.py --summarize"):
        calibration.read_summary(tmp_path / "missing.tflite.xz", "cost_vs_x")


def test_pixel3_rows_of_a_fitted_graph_are_shaped_and_only_inception_is_held_out():
    from benchmarks import cost_vs_pixel3

    roles = {r.label: r.role for r in cost_vs_pixel3.ROWS}
    assert {k for k, v in roles.items() if v == "held-out"} == {"Inception V3 299"}
    assert {k for k, v in roles.items() if v == "shaped"} == {f"MobileNet V1 0.50 {s}" for s in (128, 160, 192, 224)}
