"""Imports only point down: accelsim -> delegates -> runtime -> schema, and inside runtime the kernels
sit below the resolver and the interpreter (they import tensors, quant and the IR, never the interpreter).

Every import statement counts, also those inside functions or `if TYPE_CHECKING:` blocks.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("schema", "runtime", "delegates", "accelsim")  # lowest first

# Modules of `runtime`, lowest layer first; a module may import its own layer's modules and lower ones.
RUNTIME_LAYERS = (
    ("runtime.errors",),
    ("runtime.ir", "runtime.quant", "runtime.numerics", "runtime.verify", "runtime.custom"),
    ("runtime.versioning",),
    ("runtime.read", "runtime.write", "runtime.tensor", "runtime.registration"),
    ("runtime.kernels", "runtime.work"),  # the kernels package and every module in it; the work they report
    ("runtime.resolver",),
    ("runtime.interpreter",),
    ("runtime",),  # the package's __init__, which exports the public names
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "schema/tflite" not in p.as_posix())


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = _module_name(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1]) if node.level else ""
            module = ".".join(filter(None, (base, node.module)))
            # `from runtime.kernels import conv` imports the module runtime.kernels.conv.
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _runtime_layer(module: str) -> int:
    best = None
    for rank, group in enumerate(RUNTIME_LAYERS):
        for prefix in group:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    assert best is not None, f"{module} is in no layer of RUNTIME_LAYERS"
    return best[0]


def _violation(importer: str, imported: str) -> str | None:
    top_from, top_to = importer.split(".")[0], imported.split(".")[0]
    if top_to not in PACKAGES:
        return None
    if PACKAGES.index(top_to) > PACKAGES.index(top_from):
        return f"{top_from} may not import the higher layer {top_to}"
    if top_from == top_to == "runtime":
        if importer.startswith("runtime.kernels") and imported.startswith("runtime.interpreter"):
            return "kernels never import the interpreter"
        if _runtime_layer(imported) > _runtime_layer(importer):
            return "runtime modules import only their own layer or lower ones (RUNTIME_LAYERS)"
    return None


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_imports_point_down(path):
    importer = _module_name(path)
    problems = [f"{path.relative_to(ROOT)}:{line}: imports {imported}: {why}"
                for line, imported in _imports(path) if (why := _violation(importer, imported))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("importer", "imported"), [
    ("runtime.kernels.conv", "runtime.interpreter.Interpreter"),
    ("runtime.kernels.conv", "runtime.resolver.BuiltinOpResolver"),
    ("runtime.ir", "runtime.read.load_model"),
    ("runtime.tensor", "runtime.kernels.common.check"),
    ("runtime.interpreter", "delegates.api.SimpleDelegate"),
    ("delegates.partition", "accelsim.config.load_system"),
    ("schema.generate", "runtime.ir.Model"),
])
def test_upward_imports_are_caught(importer, imported):
    assert _violation(importer, imported) is not None


def test_function_level_and_relative_imports_are_read(tmp_path, monkeypatch):
    pkg = tmp_path / "runtime" / "kernels"
    pkg.mkdir(parents=True)
    source = pkg / "mod.py"
    source.write_text("def f():\n    from runtime.interpreter import Interpreter\n    from . import common\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _imports(source) == [(2, "runtime.interpreter.Interpreter"), (3, "runtime.kernels.common")]
