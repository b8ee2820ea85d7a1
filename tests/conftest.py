"""Options and markers of the whole suite, and how tests import.

Tests import what users import: the installed `accelsim` package, never the repository's folders by their own names.
`python -m pytest` puts the working directory on sys.path, which would make the repository's `runtime/`, `schema/`
and `delegates/` folders importable as top-level packages that no installed wheel has. Taking the repository root off
sys.path here makes such an import fail in the tests as it fails for users. `benchmarks/` is registered as a package
so that tests import its scripts as `benchmarks.<script>`.

`--require-tools` (CI's `.ci/run` passes it): a test or module that would skip fails instead.
Every skip in this suite is for a missing tool (chromium, playwright, Dask, LiteRT), so CI
cannot pass by skipping what it was meant to run.

No test reads the clock: hypothesis runs without its per-example deadline (a wall-clock limit of
200 ms by default), in every test that does not set its own settings too. Speed is measured in
`benchmarks/`.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT]

# benchmarks/ is a folder of scripts, not part of the package; tests import them as `benchmarks.<script>`.
_spec = importlib.machinery.ModuleSpec("benchmarks", None, is_package=True)
_spec.submodule_search_locations = [str(ROOT / "benchmarks")]
sys.modules.setdefault("benchmarks", importlib.util.module_from_spec(_spec))

settings.register_profile("no_clock", deadline=None)
settings.load_profile("no_clock")


def pytest_addoption(parser):
    parser.addoption("--require-tools", action="store_true",
                     help="fail, instead of skipping, a test or module whose tool (chromium, playwright, Dask, "
                          "LiteRT) is missing; CI's .ci/run passes it")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs for many seconds (Vela compiles, whole-model sweeps)")


def _reason(longrepr) -> str:
    """The skip's reason, from the (path, line, 'Skipped: reason') that pytest keeps."""
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.skipped and item.config.getoption("--require-tools"):
        report.outcome = "failed"
        report.longrepr = f"--require-tools: this test would skip: {_reason(report.longrepr)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    report = (yield).get_result()
    if report.skipped and collector.config.getoption("--require-tools"):
        report.outcome = "failed"
        report.longrepr = f"--require-tools: this module would skip: {_reason(report.longrepr)}"
