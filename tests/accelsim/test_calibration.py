"""The calibration benchmarks' shared fit and error measures, and how cost_vs_coral marks and totals its rows."""

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


def test_fit_keeps_counts_whole_and_values_under_their_bound():
    best = calibration.fit(lambda v: [v["n"] / 7.4, v["f"] / 3.0], {"n": 3, "f": 0.5}, integers=frozenset({"n"}),
                           upper={"f": 1.0})
    assert best == {"n": 7, "f": 1.0}


def test_errors_are_symmetric_in_log_and_worst_is_the_largest_miss():
    assert calibration.geomean_error([2.0, 0.5]) == pytest.approx(1.0)
    assert calibration.worst_error([0.8, 1.1]) == pytest.approx(0.2)
    assert calibration.misfit([math.e, 1 / math.e]) == pytest.approx(1.0)


def test_coral_rows_are_held_out_or_retired_per_column():
    rows = {r.key: r for r in cost_vs_coral.ROWS}
    assert rows["densenet121"].role(cost_vs_coral.CPU) == "held"
    assert rows["densenet121"].role("edgetpu_pcie") == "fit"
    irv2 = rows["inception_resnet_v2"]
    assert irv2.role("edgetpu_usb") == irv2.role("edgetpu_pcie") == "retired"
    assert "55.9 M" in irv2.retired["edgetpu_usb"] and "42.7 M" in irv2.retired["edgetpu_usb"]
    # The Embedded CPU column's published times (Coral Table 1) and the Dev Board's host.
    assert [r.cpu_ms for r in cost_vs_coral.ROWS] == [164.0, 122.0, 1032.0, 1763.0, 2852.0, 4595.0]
    assert cost_vs_coral.HOSTS == {"cortex_a53_cpu": "cortex_a53_cpu", "edgetpu_usb": "host_cpu",
                                   "edgetpu_pcie": "cortex_a53_cpu"}


def test_coral_summary_keeps_held_out_fit_and_retired_rows_apart():
    ratios = {("densenet121", "cortex_a53_cpu"): 0.8, ("mobilenet_v1", "cortex_a53_cpu"): 1.1,
              ("mobilenet_v1", "edgetpu_usb"): 0.9}
    lines = cost_vs_coral.summary_lines(cost_vs_coral.ROWS, ratios)
    held_geomean, held_worst, fit_geomean, fit_worst = lines
    assert held_geomean.split()[3:] == ["25%", "of", "1", "-", "-"]
    assert held_worst.split()[3:] == ["20%", "of", "1", "-", "-"]
    assert fit_geomean.split()[4:] == ["10%", "of", "1", "11%", "of", "1", "-"]
    assert fit_worst.split()[4:] == ["10%", "of", "1", "10%", "of", "1", "-"]


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
