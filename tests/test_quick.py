"""The quick subset (`pytest -m "not slow"`) still reaches every source module.

A source module counts as reached when a test outside the slow set imports it, directly or
through the modules it imports (statically: every import statement, also inside functions, and
every 'accelsim.x.y' string naming a module that is imported by name, as kinds are, and the
`__main__` of a `-m MODULE` command line). An import
inside a test function or class marked `@pytest.mark.slow`, or in a file whose `pytestmark` is
slow, does not count.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {folder: package for package, folder in
           tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].items()}
_MODULE_STRING = re.compile(r"^(accelsim(?:\.\w+)+)(?::\w+)?$")


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    folder = max((f for f in FOLDERS if relative.is_relative_to(f)), key=len)
    parts = [FOLDERS[folder], *relative.relative_to(folder).parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    """Every hand-written source module by import name (flatc's generated schema code aside)."""
    return {_module_name(p): p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")
            if "schema/tflite" not in p.as_posix()}


def _is_slow(node: ast.AST) -> bool:
    """A decorator list or `pytestmark` value that holds pytest.mark.slow."""
    return any(isinstance(n, ast.Attribute) and n.attr == "slow" for n in ast.walk(node))


def _imported(node: ast.AST, package: str) -> set[str]:
    """Names imported by import statements under `node`, relative ones resolved against `package`."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            found |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            base = ".".join(package.split(".")[:len(package.split(".")) - n.level + 1]) if n.level else ""
            module = ".".join(filter(None, (base, n.module)))
            found |= {module} | {f"{module}.{a.name}" for a in n.names}
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and (m := _MODULE_STRING.match(n.value)):
            found.add(m.group(1))
        elif isinstance(n, (ast.List, ast.Tuple)):  # [sys.executable, "-m", "accelsim", ...] runs its __main__
            words = [e.value if isinstance(e, ast.Constant) else None for e in n.elts]
            found |= {f"{module}.__main__" for flag, module in zip(words, words[1:])
                      if flag == "-m" and isinstance(module, str)}
    return found


def _quick_imports(path: Path) -> set[str]:
    """What a test file imports outside slow tests."""
    tree = ast.parse(path.read_text(), filename=str(path))
    if any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
           and _is_slow(n.value) for n in tree.body):
        return set()
    found = set()
    for node in tree.body:
        decorated = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if decorated and any(_is_slow(d) for d in node.decorator_list):
            continue
        found |= _imported(node, "")
    return found


def _closure(start: set[str], sources: dict[str, Path]) -> set[str]:
    """The source modules `start` reaches: each name's module and packages, then what each of those imports."""
    def modules(name: str) -> set[str]:
        parts = name.split(".")
        return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & sources.keys()

    seen: set[str] = set()
    todo = [m for name in start for m in modules(name)]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = sources[module]
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(), filename=str(path))
        todo += [m for name in _imported(tree, package) for m in modules(name) if m not in seen]
    return seen


def test_every_source_module_is_imported_by_a_quick_test():
    sources = _sources()
    tests = [p for p in (ROOT / "tests").rglob("*.py") if "fixtures/models" not in p.as_posix()]
    reached = _closure(set().union(*(_quick_imports(p) for p in tests)), sources)
    assert sorted(sources.keys() - reached) == []


def test_a_module_only_slow_tests_import_is_reported(tmp_path):
    """The check sees through the slow marker: an import inside a slow test does not count."""
    test = tmp_path / "test_x.py"
    test.write_text("import pytest\n\nfrom accelsim.core import units\n\n\n@pytest.mark.slow\ndef test_a():\n"
                    "    from accelsim.core import pareto\n\n\ndef test_b():\n    import accelsim.core.trace\n")
    assert _quick_imports(test) == {"pytest", "accelsim.core", "accelsim.core.units", "accelsim.core.trace"}
    test.write_text("import pytest\n\nimport accelsim.core.units\n\npytestmark = pytest.mark.slow\n")
    assert _quick_imports(test) == set()
