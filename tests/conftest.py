"""Options and markers of the whole suite.

`--require-tools` (CI's `.ci/run` passes it): a test or module that would skip fails instead.
Every skip in this suite is for a missing tool (chromium, playwright, Dask, LiteRT), so CI
cannot pass by skipping what it was meant to run.

No test reads the clock: hypothesis runs without its per-example deadline (a wall-clock limit of
200 ms by default), in every test that does not set its own settings too. Speed is measured in
`benchmarks/`.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

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
