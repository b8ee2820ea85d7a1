"""Kernels share helpers only through public names (runtime/kernels/common.py, runtime/quant.py).

No kernel module imports a private name (one with a leading underscore) of another project module,
neither `from accelsim.runtime.kernels.math import _helper` nor `from .math import _helper`, nor reads
one through a module it imported (`math._helper`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "runtime" / "kernels"
PROJECT = "accelsim"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _package_of(path: Path, root: Path) -> list[str]:
    """The package relative imports start from: runtime/kernels/conv/x.py -> accelsim.runtime.kernels.conv."""
    return ["accelsim", *path.parent.relative_to(root).parts]


def private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: name` for every private name of a project module that the file imports or reads."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _package_of(path, root)
    where = path.relative_to(root).as_posix()
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if module.split(".")[0] != PROJECT:
                continue
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno}: imports {module}.{alias.name}")
                else:
                    # `from accelsim.runtime.kernels import math` binds a module whose privates count too.
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PROJECT:
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root_name = node.value
            while isinstance(root_name, ast.Attribute):
                root_name = root_name.value
            if isinstance(root_name, ast.Name) and root_name.id in modules:
                found.append(f"{where}:{node.lineno}: reads {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(KERNELS.rglob("*.py")), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_kernels_import_no_private_names(path):
    problems = private_imports(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("source", "expected"), [
    ("from .math import _lookup\n", "runtime/kernels/planted.py:1: imports accelsim.runtime.kernels.math._lookup"),
    ("from accelsim.runtime.kernels.math import exp, _tabulate\n",
     "runtime/kernels/planted.py:1: imports accelsim.runtime.kernels.math._tabulate"),
    ("def f():\n    from ..quant import _saturating\n",
     "runtime/kernels/planted.py:2: imports accelsim.runtime.quant._saturating"),
    ("from accelsim.runtime.kernels import math\nx = math._lookup\n",
     "runtime/kernels/planted.py:2: reads math._lookup"),
    ("import accelsim.runtime.kernels.math\nx = accelsim.runtime.kernels.math._lookup\n",
     "runtime/kernels/planted.py:2: reads accelsim.runtime.kernels.math._lookup"),
])
def test_a_planted_private_import_fails(tmp_path, source, expected):
    planted = tmp_path / "runtime" / "kernels" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text(source)
    assert private_imports(planted, tmp_path) == [expected]


def test_public_names_and_other_packages_pass(tmp_path):
    """Public helpers, dunder names and private names of other libraries are not the rule's business."""
    planted = tmp_path / "runtime" / "kernels" / "conv" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("from numpy._core import umath\nfrom ..common import check, __doc__\n"
                       "from . import stage\nx = stage.__name__\ny = umath._ones_like\n")
    assert private_imports(planted, tmp_path) == []
