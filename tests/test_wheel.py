"""The built wheel, installed into a fresh venv, runs the main job in an empty folder (.ci/run does the same)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(argv: list, cwd: Path, **kw) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=900, **kw)
    assert result.returncode == 0, f"{argv}: {result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result


@pytest.mark.slow
def test_the_wheel_installs_only_accelsim_and_runs_the_default_experiment_in_an_empty_folder(tmp_path):
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp_path / "dist", ROOT], tmp_path)
    (wheel,) = (tmp_path / "dist").glob("accelsim-*.whl")
    names = _run([sys.executable, ROOT / ".ci" / "wheel_names.py", wheel], tmp_path).stdout
    assert names == f"{wheel}: top-level names: accelsim\n"
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path)
    _run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", wheel], tmp_path)
    # The dependencies (numpy, simpy, ...) come from this interpreter's site-packages, appended by a .pth:
    # no index is needed, and this checkout's editable install stays invisible (a .pth in a folder that is
    # not a site folder is not read), so `accelsim` can only be the wheel's.
    site = _run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                tmp_path).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = _run([venv / "bin" / "python", "-c", "import accelsim; print(accelsim.__file__)"], empty, env=env)
    assert where.stdout.startswith(site)
    run = _run([venv / "bin" / "accelsim", "run", "--jobs", "1"], empty, env=env)
    assert "6 design points (0 cached, 6 run, 0 failed) -> reports/default" in run.stdout
    assert (empty / "reports" / "default" / "report.md").stat().st_size > 0
    # the sample models the help examples name (issue 31 C15), and one of those examples run from them
    _run([venv / "bin" / "accelsim", "examples"], empty, env=env)
    _run([venv / "bin" / "accelsim", "benchmark", "models/mobilenet_v2_035_96_int8.tflite", "--hw", "edgetpu_usb",
          "--num-runs", "0"], empty, env=env)
    schema = _run([venv / "bin" / "accelsim", "experiment", "--schema"], empty, env=env).stdout
    assert schema == (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")


def _wheel(path: Path, names: list[str]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "")
    return path


def test_the_wheel_check_lists_top_level_names_and_fails_on_any_but_accelsim(tmp_path):
    """.ci/wheel_names.py, which CI runs on the built wheel: dist-info and data folders do not count."""
    script = ROOT / ".ci" / "wheel_names.py"
    good = _wheel(tmp_path / "good.whl", ["accelsim/__init__.py", "accelsim/runtime/ir.py",
                                          "accelsim-0.1.0.dist-info/RECORD", "accelsim-0.1.0.data/scripts/x"])
    result = subprocess.run([sys.executable, script, good], capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{good}: top-level names: accelsim\n", "")
    bad = _wheel(tmp_path / "bad.whl", ["accelsim/__init__.py", "runtime/ir.py", "schema.py", "x.pth",
                                        "accelsim-0.1.0.dist-info/RECORD"])
    result = subprocess.run([sys.executable, script, bad], capture_output=True, text=True)
    assert result.returncode == 1 and result.stdout == f"{bad}: top-level names: accelsim, runtime, schema, x\n"
    assert result.stderr == (f"{bad}: error: the wheel must install exactly accelsim; extra: runtime, schema, x, "
                             "missing: none\n")
    assert subprocess.run([sys.executable, script], capture_output=True, text=True).returncode == 2
    assert ".ci/wheel_names.py" in (ROOT / ".ci" / "run").read_text()
