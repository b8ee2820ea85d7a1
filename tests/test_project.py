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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_readme_python_blocks())))
def test_readme_python_snippets_run(index, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(_readme_python_blocks()[index], f"README.md python block {index}", "exec"), {})


def _package_data() -> set[Path]:
    """The files pyproject's package-data puts into the wheel (patterns are relative to each package)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = config["package-dir"]
    return {path for package, patterns in config["package-data"].items() for pattern in patterns
            for path in (ROOT / folders[package]).glob(pattern)}


def test_the_wheel_carries_every_data_file_the_code_reads():
    """Shipped hardware configs and tflite.fbs are package data (.ci/run builds and runs the wheel itself)."""
    from accelsim.experiments.experiment import SHIPPED_CONFIGS, shipped_configs

    shipped = set(shipped_configs().values())
    assert shipped and SHIPPED_CONFIGS == ROOT / "hw_configs"
    assert shipped | {ROOT / "schema" / "tflite.fbs"} <= _package_data()


def test_ci_builds_the_wheel_and_runs_it_outside_the_checkout():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip wheel -q --no-deps" in ci and "venv/bin/accelsim run" in ci
    assert (ROOT / ".ci" / "wheel_check.yaml").is_file()


@pytest.mark.slow
def test_readme_walkthrough_from_nothing_to_a_benchmark(tmp_path, monkeypatch, capsys):
    """The README's 'Describing an accelerator' config and its commands work as written."""
    from accelsim.cli.main import main

    section = (ROOT / "README.md").read_text().split("## Describing an accelerator", 1)[1].split("\n## ", 1)[0]
    (config,) = re.findall(r"```yaml\n(.+?)```", section, re.S)
    (tmp_path / "my_npu.yaml").write_text(config)
    commands = [line.split("#")[0].split() for block in re.findall(r"```sh\n(.+?)```", section, re.S)
                for line in block.strip().splitlines()]
    assert [c[1] for c in commands] == ["configs", "configs", "validate", "inspect", "benchmark"]
    monkeypatch.chdir(ROOT)
    for words in commands:
        argv = [str(tmp_path / w) if w == "my_npu.yaml" else w for w in words[1:]]
        assert main(argv) == 0, words
    out = capsys.readouterr().out
    assert "my_npu.yaml: ok (systolic config 'my_npu')" in out and "Simulated latency in µs:" in out
    assert "host: my_npu: op SOFTMAX is excluded from op any" in out


def test_pyproject_lists_every_package_of_the_mapped_folders():
    """The build maps runtime/, delegates/, schema/ and hw_configs/ into `accelsim`; a new subpackage must be listed."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join([package, *init.parent.relative_to(ROOT / folder).parts])
             for package, folder in config["package-dir"].items() for init in (ROOT / folder).rglob("__init__.py")}
    assert found == set(config["packages"])


@pytest.mark.slow
def test_readme_experiment_runs_against_the_accelerator_it_describes(tmp_path, monkeypatch, capsys):
    """'Writing an experiment' sweeps the config of 'Describing an accelerator': it validates, points as said."""
    from accelsim.cli.main import main
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.points import design_points

    readme = (ROOT / "README.md").read_text()
    blocks = [re.findall(r"```yaml\n(.+?)```", readme.split(f"## {title}", 1)[1].split("\n## ", 1)[0], re.S)
              for title in ("Describing an accelerator", "Writing an experiment")]
    (config,), (experiment,) = blocks
    (tmp_path / "my_npu.yaml").write_text(config)
    (tmp_path / "my_exp.yaml").write_text(experiment.replace("tests/fixtures", str(ROOT / "tests" / "fixtures")))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "my_exp.yaml"]) == 0
    assert "my_exp.yaml: ok (experiment 'my_npu_vs_usb', 3 variants)" in capsys.readouterr().out
    points = design_points(load_experiment(tmp_path / "my_exp.yaml"))
    assert [p.variant for p in points].count("mine") == 9 and len(points) == 11


def test_require_tools_turns_every_skip_into_a_failure(tmp_path):
    """CI passes --require-tools (tests/conftest.py): a test or module that would skip for a missing tool fails."""
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tmp_path / "test_tools.py").write_text(
        "import pytest\n"
        "@pytest.mark.skipif(True, reason='no chromium binary on PATH')\n"
        "def test_marked():\n    pass\n"
        "def test_called():\n    pytest.skip('Vela is not installed')\n"
        "def test_ok():\n    pass\n")
    (tmp_path / "test_module.py").write_text("import pytest\npytest.importorskip('no_such_tool_module')\n")

    def run(*options):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(tmp_path)],
                              capture_output=True, text=True, cwd=tmp_path)

    plain = run()
    assert plain.returncode == 0 and "1 passed, 3 skipped" in plain.stdout
    strict = run("--require-tools", "--continue-on-collection-errors")
    assert strict.returncode == 1
    assert "--require-tools: this test would skip: no chromium binary on PATH" in strict.stdout
    assert "--require-tools: this test would skip: Vela is not installed" in strict.stdout
    assert "--require-tools: this module would skip: could not import 'no_such_tool_module'" in strict.stdout
    assert "1 failed, 1 passed, 2 errors" in strict.stdout


def test_no_test_reads_the_clock():
    """Speed belongs in benchmarks/: no test times itself, and hypothesis has no per-example deadline."""
    from hypothesis import settings

    assert settings.default.deadline is None  # tests/conftest.py's profile
    clock = re.compile(r"\btime\.(time|perf_counter|monotonic|process_time|thread_time)\b|performance\.now|"
                       r"deadline=(?!None)|setitimer")
    files = [*(ROOT / "tests").rglob("test_*.py"), *(ROOT / "tests").rglob("conftest.py")]
    readers = [f"{p.relative_to(ROOT)}:{n}" for p in sorted(files)
               for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
               if clock.search(line) and "clock = re.compile" not in line and "deadline=(?!None)" not in line]
    assert readers == []
