"""One design point costed, followed through the code as it runs: the calls flow down the layers.

Costing hands each device's nodes to its `Hardware` once and gets values back (costs, utilisations); it never
calls into a kind's cost module, a cost module never calls back up into the simulation, and how often costing
is entered does not grow with the model (docs/architecture.md, "From a .tflite file and a YAML to a report").
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from accelsim.experiments.experiment import shipped_configs
from accelsim.hardware.config import load_system
from accelsim.simulation.analysis import analyze, simulate_analysis

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "fixtures" / "models" / "interleaved_int8.tflite"
LARGE = ROOT / "examples" / "default" / "mobilenet_v2_100_224_int8.tflite"


def _calls(model: Path, accelerators: list[str]) -> Counter:
    """(calling module, called module) -> calls between two different accelsim modules while one point is costed."""
    configs = shipped_configs()
    system = load_system(configs["kryo385_cpu"], [configs[a] for a in accelerators])
    analysis = analyze(str(model), system)
    calls: Counter = Counter()

    def profile(frame, event, arg):
        if event != "call" or frame.f_back is None:
            return
        callee, caller = frame.f_globals.get("__name__", ""), frame.f_back.f_globals.get("__name__", "")
        if callee != caller and callee.startswith("accelsim.") and caller.startswith("accelsim."):
            calls[(caller, callee)] += 1

    sys.setprofile(profile)
    try:
        simulate_analysis(analysis, system)
    finally:
        sys.setprofile(None)
    return calls


@pytest.fixture(scope="module", params=[["edgetpu_usb"], ["hexagon_dsp", "adreno630_gpu"]], ids=lambda a: "+".join(a))
def traced(request):
    return {size: _calls(model, request.param) for size, model in (("small", SMALL), ("large", LARGE))}


def test_costing_never_calls_a_kinds_cost_module(traced):
    for calls in traced.values():
        assert [pair for pair in calls if pair[0].startswith("accelsim.simulation")
                and pair[1].startswith(("accelsim.hardware.cost.", "accelsim.hardware.roofline"))] == []


def test_the_hardware_layer_never_calls_up(traced):
    for calls in traced.values():
        assert [pair for pair in calls if pair[0].startswith("accelsim.hardware")
                and not pair[1].startswith(("accelsim.hardware", "accelsim.core", "accelsim.runtime"))] == []


def test_costing_is_entered_as_often_whatever_the_model_size(traced):
    def entries(calls: Counter) -> int:
        return sum(n for (caller, callee), n in calls.items() if callee == "accelsim.simulation.costing")

    assert entries(traced["small"]) == entries(traced["large"]) <= 2
