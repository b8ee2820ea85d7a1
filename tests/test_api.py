"""The public Python API: the names `accelsim` itself exports, pinned; each resolves; the README's example runs.

Scripts import these names from the package, never from the modules behind them (which may move), so a name
leaving this list, or a module behind one failing to define it, is a break users see.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import accelsim

ROOT = Path(__file__).resolve().parent.parent

PINNED = ["__version__", "Interpreter", "load_model", "load_hardware", "load_system", "shipped_configs", "ConfigError",
          "Infeasible", "analyze", "simulate_model", "simulate_analysis", "sensitivity", "whatif", "run_benchmark",
          "load_experiment", "run_experiment"]


def test_the_public_names_are_pinned():
    assert accelsim.__all__ == PINNED
    assert sorted(dir(accelsim)) == sorted(PINNED)


@pytest.mark.parametrize("name", PINNED)
def test_every_public_name_resolves_to_its_definition(name):
    value = getattr(accelsim, name)
    if name != "__version__":
        assert value.__module__ == accelsim.API[name]  # defined there, not re-exported from elsewhere


def test_an_unknown_name_lists_the_public_ones():
    with pytest.raises(AttributeError, match=r"no attribute 'simulate'; its public names: __version__, Interpreter"):
        accelsim.simulate  # noqa: B018


def test_importing_the_package_loads_none_of_the_tool():
    """`import accelsim` stays cheap: the names load on first use (the command line's start-up depends on it)."""
    code = "import sys, accelsim; print(sorted(m for m in sys.modules if m.startswith('accelsim')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['accelsim', 'accelsim.core', 'accelsim.core.version']"


@pytest.mark.slow
def test_the_readmes_python_example_runs():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### From Python"):]
    (code,) = re.findall(r"```python\n(.*?)```", section[:section.index("\n### ", 5)], re.S)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    latency, verdict = result.stdout.splitlines()
    assert re.fullmatch(r"[\d,]+\.\d µs", latency)
    assert verdict.startswith("1. Most time is bound by edgetpu_usb")
