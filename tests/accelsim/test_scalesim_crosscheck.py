"""Our systolic compute cycles against SCALE-Sim's, 6 layer shapes x 3 dataflows, within 5%.

SCALE-Sim wants NumPy < 2, so it runs from its own venv, `<repo>/.venv-scalesim`, created on
first use and reused afterwards (benchmarks/cost_vs_scalesim.py holds the runner). A venv or
pip failure fails this test with pip's output: it is never skipped.
"""

from __future__ import annotations

import pytest

from accelsim.hardware.cost import systolic
from benchmarks.cost_vs_scalesim import COLS, DATAFLOWS, LAYERS, ROWS, array_config, ensure_scalesim, run_scalesim


@pytest.fixture(scope="session")
def scalesim_python():
    try:
        return ensure_scalesim()
    except RuntimeError as exc:
        pytest.fail(f"could not set up SCALE-Sim: {exc}", pytrace=False)


@pytest.fixture(scope="module")
def scalesim_runs(scalesim_python, tmp_path_factory):
    return run_scalesim(scalesim_python, LAYERS, ROWS, COLS, tmp_path_factory.mktemp("scalesim"))


def test_layer_set_covers_the_shapes_that_matter():
    assert len(LAYERS) >= 6
    kinds = {(x.filter_h, x.stride) for x in LAYERS}
    assert {(1, 1), (3, 1), (3, 2)} <= kinds
    assert any(x.channels >= 128 for x in LAYERS)
    assert any(x.ifmap_h == x.ifmap_w == 1 for x in LAYERS)  # a fully connected layer as a 1x1 conv
    assert ROWS != COLS  # a non-square array catches rows/cols mix-ups


@pytest.mark.slow
@pytest.mark.parametrize("dataflow", DATAFLOWS)
def test_compute_cycles_match_scalesim(scalesim_runs, dataflow):
    run = scalesim_runs[dataflow]
    assert run.stalls == (0,) * len(LAYERS)  # ample SRAM and bandwidth: SCALE-Sim's cycles are compute only
    hw = array_config(dataflow)
    ours = [systolic.cost(layer.work(), hw).cycles for layer in LAYERS]
    for layer, mine, theirs in zip(LAYERS, ours, run.cycles):
        assert abs(mine - theirs) <= 0.05 * theirs, f"{layer.name} {dataflow}: ours {mine}, SCALE-Sim {theirs}"
    # SCALE-Sim reports the zero-based index of the last cycle: one less than the count.
    assert [m - t for m, t in zip(ours, run.cycles)] == [1] * len(LAYERS)
