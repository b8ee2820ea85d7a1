"""Tests import what users import: the installed `accelsim` package, never the repository's folders by their own names.

`python -m pytest` puts the working directory on sys.path, which would make the repository's `runtime/`, `schema/`
and `delegates/` folders importable as top-level packages that no installed wheel has. Taking the repository root off
sys.path here makes such an import fail in the tests as it fails for users.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT]

# benchmarks/ is a folder of scripts, not part of the package; tests import them as `benchmarks.<script>`.
_spec = importlib.machinery.ModuleSpec("benchmarks", None, is_package=True)
_spec.submodule_search_locations = [str(ROOT / "benchmarks")]
sys.modules.setdefault("benchmarks", importlib.util.module_from_spec(_spec))
