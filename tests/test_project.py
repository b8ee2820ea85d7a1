"""Project-level checks: the README's commands are what CI runs; every example runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, re.S)


def test_readme_starts_with_two_setup_commands():
    commands = _setup_commands()
    assert len(commands) == 2
    assert "accelsim" in commands[0] and "pytest" in commands[1]


def test_ci_runs_the_readmes_test_command():
    test_command = _setup_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci


EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_and_prints_its_documented_output(script):
    """Each example's docstring ends with 'Expected output' lines that its run must print."""
    doc = script.read_text().split('"""')[1]
    expected = doc.split("Expected output", 1)[1].split("\n", 1)[1]
    expected_lines = [line.strip() for line in expected.strip().splitlines() if line.strip()]
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    printed = [line.strip() for line in result.stdout.strip().splitlines()]
    assert printed == expected_lines


def _readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.+?)```", (ROOT / "README.md").read_text(), re.S)


@pytest.mark.parametrize("index", range(len(_readme_python_blocks())))
def test_readme_python_snippets_run(index, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(_readme_python_blocks()[index], f"README.md python block {index}", "exec"), {})
