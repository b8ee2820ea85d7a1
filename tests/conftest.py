"""Tests import what users import: the installed `accelsim` package, never the repository's folders by their own names.

`python -m pytest` puts the working directory on sys.path, which would make the repository's `runtime/`, `schema/`
and `delegates/` folders importable as top-level packages that no installed wheel has. Taking the repository root off
sys.path here makes such an import fail in the tests as it fails for users.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT]
