"""Imports only point down: accelsim -> accelsim.delegates -> accelsim.runtime -> accelsim.schema; inside
the runtime the kernels sit below the resolver and the interpreter (they import tensors, quant and the IR, never
the interpreter); inside accelsim/ the folders are the layers of docs/architecture.md (ACCELSIM_FOLDERS): a module
imports its own folder and the folders below it, costing never imports placement, and no module imports itself back
through others (no import circle).

Every import statement counts, also those inside functions or `if TYPE_CHECKING:` blocks. Inside accelsim/, an
import in a function is only of a module listed in LAZY_IMPORTS (an optional dependency, or one too slow to import
for commands that never use it), with a comment saying so.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("accelsim.schema", "accelsim.runtime", "accelsim.delegates", "accelsim")  # lowest first
# The repository folder of each package: the build maps runtime/ to accelsim.runtime and so on (pyproject.toml).
FOLDERS = {folder: package for package, folder in
           tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].items()}

# Modules of `runtime`, lowest layer first; a module may import its own layer's modules and lower ones.
RUNTIME_LAYERS = (
    ("accelsim.runtime.errors",),
    ("accelsim.runtime.ir", "accelsim.runtime.quant", "accelsim.runtime.numerics", "accelsim.runtime.verify",
     "accelsim.runtime.custom"),
    # op_signature.cc, runtime_version.cc's table, op_version.cc, and their use on a whole model
    ("accelsim.runtime.op_signature", "accelsim.runtime.runtime_versions"),
    ("accelsim.runtime.op_versions",),
    ("accelsim.runtime.versioning",),
    ("accelsim.runtime.read", "accelsim.runtime.write", "accelsim.runtime.tensor", "accelsim.runtime.registration"),
    # the kernels package and every module in it; the work they report
    ("accelsim.runtime.kernels", "accelsim.runtime.work"),
    ("accelsim.runtime.resolver",),
    # the interpreter and the subgraphs it runs (each names the other's type)
    ("accelsim.runtime.interpreter", "accelsim.runtime.subgraph"),
    ("accelsim.runtime",),  # the package's __init__, which exports the public names
)


# The folders of `accelsim` itself, lowest first (docs/architecture.md, "Layers inside accelsim/"). A module may
# import the modules of its own folder and of the folders below it, never of a folder above; inside a folder
# modules import each other without a circle (test_no_import_circles). The package face (accelsim/__init__.py,
# the public API) and `python -m accelsim` are the top; no other module sits at accelsim/'s top.
ACCELSIM_FOLDERS = (
    "accelsim.core",  # quantities, files, the result record, traces, schedules, Pareto fronts, infeasible verdicts
    "accelsim.default_experiment",  # the shipped default experiment (package data)
    "accelsim.ops",  # custom-op modules and packs: they extend the runtime's resolver
    "accelsim.hardware",  # configs -> devices, the value types, kinds, memory, energy, sweep ranges and limits
    "accelsim.hw_configs",  # the shipped configs (package data)
    "accelsim.hardware.cost",  # the built-in kinds' cost modules (named, not imported, by accelsim.hardware.kinds)
    "accelsim.simulation",  # delegation, costing, scheduling of one inference; placement; the shared analysis
    "accelsim.workloads",  # beyond one inference: LLM prefill + decode, streams of frames, pipeline segments
    "accelsim.insight",  # what to change: sensitivity, advice, what-if claims
    "accelsim.reports",  # records, derived numbers, the report document and its renderers, plots
    "accelsim.experiments",  # experiment files, design points, executors, the store, the pipeline
    "accelsim.tools",  # benchmark, compare, cost-only runs, model facts, systems from names, validate
    "accelsim.cli",  # the command line: parses and prints
    "accelsim",  # the package face and __main__
)
TOP_MODULES = ("accelsim", "accelsim.__main__")  # the only modules at accelsim/'s top
# Imports inside one folder that must never be: (importer, imported, why).
NEVER = (("accelsim.simulation.costing", "accelsim.simulation.placement",
          "placement searches use costing; costing never uses them"),)
# The only modules a function of accelsim/ may import where it needs them (with a comment on the line saying so),
# each with why. Everything else is imported at the top of its module (issue 36: start-up).
LAZY_IMPORTS = (
    "distributed",  # optional extra `distributed`: only `run --executor dask` needs it
    "matplotlib",  # ~0.5 s to import; only what draws a figure needs it (accelsim.reports.plots.mpl)
    "optuna",  # optional extra `search`; ~0.5 s to import: only an experiment with `search: {sampler}` needs it
)


def _module_name(path: Path) -> str:
    """The import name of a source file: runtime/ir.py is accelsim.runtime.ir (the longest mapped folder counts)."""
    relative = path.relative_to(ROOT).with_suffix("")
    folder = max((f for f in FOLDERS if relative.is_relative_to(f)), key=len, default=relative.parts[0])
    parts = [FOLDERS.get(folder, folder), *relative.relative_to(folder).parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")
                  if "schema/tflite" not in p.as_posix())


def _package(module: str) -> str | None:
    """The layer of PACKAGES a module belongs to (the longest prefix), or None outside the project."""
    found = [pkg for pkg in PACKAGES if module == pkg or module.startswith(pkg + ".")]
    return max(found, key=len) if found else None


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


def _accelsim_folder(module: str) -> str:
    """The folder of ACCELSIM_FOLDERS a module (or a name in it: accelsim.hardware.config.load_system) lives in."""
    if module in TOP_MODULES:
        return "accelsim"
    found = [f for f in ACCELSIM_FOLDERS if f != "accelsim" and module.startswith(f + ".") or module == f]
    assert found, (f"{module} is in no folder of ACCELSIM_FOLDERS (tests/test_layers.py); put it in the folder of "
                   "its job (docs/architecture.md)")
    return max(found, key=len)


def _violation(importer: str, imported: str) -> str | None:
    top_from, top_to = _package(importer), _package(imported)
    if top_to is None:
        return None
    if PACKAGES.index(top_to) > PACKAGES.index(top_from):
        return f"{top_from} may not import the higher layer {top_to}"
    if top_from == top_to == "accelsim":
        here, there = _accelsim_folder(importer), _accelsim_folder(imported)
        if ACCELSIM_FOLDERS.index(there) > ACCELSIM_FOLDERS.index(here):
            return (f"{here} may import only its own folder and the folders below it (ACCELSIM_FOLDERS); "
                    f"{there} is above it")
        for a, b, why in NEVER:
            if importer == a and (imported == b or imported.startswith(b + ".")):
                return why
    if top_from == top_to == "accelsim.runtime":
        if importer.startswith("accelsim.runtime.kernels") and imported.startswith("accelsim.runtime.interpreter"):
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


def _function_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, imported module, the line's text) of every import inside a function."""
    text = path.read_text()
    lines = text.splitlines()
    found = []
    for fn in ast.walk(ast.parse(text)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    found += [(node.lineno, a.name, lines[node.lineno - 1]) for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    found.append((node.lineno, "." * node.level + (node.module or ""), lines[node.lineno - 1]))
    return found


@pytest.mark.parametrize("path", [p for p in _sources() if _module_name(p).split(".")[1:2] not in
                                  (["schema"], ["runtime"], ["delegates"])],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_accelsim_imports_in_functions_are_only_optional_dependencies(path):
    problems = [f"{path.relative_to(ROOT)}:{line}: imports {module} inside a function; import it at the top "
                f"(only a module of LAZY_IMPORTS, {', '.join(LAZY_IMPORTS)}, is imported where it is needed, with "
                "a comment saying so)"
                for line, module, text in _function_imports(path)
                if not _lazy(module) or "#" not in text]
    assert not problems, "\n".join(problems)


def _lazy(module: str) -> bool:
    """Whether a function may import `module` (it is, or is inside, an entry of LAZY_IMPORTS)."""
    return any(module == m or module.startswith(m + ".") for m in LAZY_IMPORTS)


def test_every_lazy_import_is_used():
    """LAZY_IMPORTS lists only modules some function imports (a stale exception is removed, not kept)."""
    used = {module for p in _sources() for _, module, _ in _function_imports(p) if _lazy(module)}
    assert {m for m in LAZY_IMPORTS if not any(u == m or u.startswith(m + ".") for u in used)} == set()


@pytest.mark.parametrize(("importer", "imported"), [
    ("accelsim.runtime.kernels.conv", "accelsim.runtime.interpreter.Interpreter"),
    ("accelsim.runtime.kernels.conv", "accelsim.runtime.resolver.BuiltinOpResolver"),
    ("accelsim.runtime.ir", "accelsim.runtime.read.load_model"),
    ("accelsim.runtime.tensor", "accelsim.runtime.kernels.common.check"),
    ("accelsim.runtime.interpreter", "accelsim.delegates.api.SimpleDelegate"),
    ("accelsim.delegates.partition", "accelsim.hardware.config.load_system"),
    ("accelsim.schema.generate", "accelsim.runtime.ir.Model"),
    ("accelsim.simulation.costing", "accelsim.simulation.placement.cost_aware_interpreter"),
    ("accelsim.hardware.config", "accelsim.simulation.analysis.analyze"),
    ("accelsim.reports.report", "accelsim.experiments.run.run_experiment"),
    ("accelsim.experiments.run", "accelsim.cli.main.main"),
])
def test_upward_imports_are_caught(importer, imported):
    assert _violation(importer, imported) is not None


def test_a_planted_upward_import_fails(tmp_path, monkeypatch):
    """A file in runtime/ that imports accelsim's hardware side is reported with its file:line."""
    pkg = tmp_path / "runtime" / "kernels"
    pkg.mkdir(parents=True)
    source = pkg / "mod.py"
    source.write_text("import numpy\ndef f():\n    from accelsim.hardware.config import load_system\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _module_name(source) == "accelsim.runtime.kernels.mod"
    with pytest.raises(AssertionError, match=r"runtime/kernels/mod.py:3: imports accelsim.hardware.config.load_system"):
        test_imports_point_down(source)


def test_function_level_and_relative_imports_are_read(tmp_path, monkeypatch):
    pkg = tmp_path / "runtime" / "kernels"
    pkg.mkdir(parents=True)
    source = pkg / "mod.py"
    source.write_text("def f():\n    from accelsim.runtime.interpreter import Interpreter\n    from . import common\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _imports(source) == [(2, "accelsim.runtime.interpreter.Interpreter"), (3, "accelsim.runtime.kernels.common")]


def test_a_planted_upward_import_inside_accelsim_fails(tmp_path, monkeypatch):
    """A hardware module that imports the simulation above it is reported with its file:line, the function-level
    one too; so is costing importing placement inside its own folder."""
    (tmp_path / "accelsim" / "hardware").mkdir(parents=True)
    (tmp_path / "accelsim" / "simulation").mkdir()
    source = tmp_path / "accelsim" / "hardware" / "config.py"
    source.write_text("import numpy\ndef f():\n    from accelsim.simulation.analysis import analyze\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"accelsim/hardware/config.py:3: imports "
                                             r"accelsim.simulation.analysis.analyze"
                                             r": accelsim.hardware may import only its own folder and the folders "
                                             r"below it \(ACCELSIM_FOLDERS\); accelsim.simulation is above it"):
        test_imports_point_down(source)
    with pytest.raises(AssertionError, match=r"accelsim/hardware/config.py:3: imports accelsim.simulation.analysis "
                                             r"inside a function"):
        test_accelsim_imports_in_functions_are_only_optional_dependencies(source)
    costing = tmp_path / "accelsim" / "simulation" / "costing.py"
    costing.write_text("from accelsim.simulation.placement import cost_aware_interpreter\n")
    with pytest.raises(AssertionError, match=r"costing.py:1: .*costing never uses them"):
        test_imports_point_down(costing)


def test_every_accelsim_module_has_a_folder():
    for path in _sources():
        module = _module_name(path)
        if _package(module) == "accelsim":
            _accelsim_folder(module)


def test_a_module_at_accelsims_top_is_refused():
    with pytest.raises(AssertionError, match="accelsim.helpers is in no folder of ACCELSIM_FOLDERS"):
        _accelsim_folder("accelsim.helpers")


def test_folders_hold_about_a_dozen_modules():
    """A folder of more than 12 modules is a layer that should split (issue 30's bound)."""
    counts: dict[Path, int] = {}
    for path in _sources():
        if _package(_module_name(path)) == "accelsim" and path.name != "__init__.py":
            counts[path.parent] = counts.get(path.parent, 0) + 1
    assert {f.relative_to(ROOT).as_posix(): n for f, n in counts.items() if n > 12} == {}
    top = sorted(p.name for p in (ROOT / "accelsim").glob("*.py"))
    assert top == ["__init__.py", "__main__.py"]


def _graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, every import statement counted (TYPE_CHECKING, functions)."""
    modules = {_module_name(p): p for p in _sources()}

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    return {m: {o for _, name in _imports(p) if (o := owner(name)) and o != m} for m, p in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected sets of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_circles():
    """No module reaches itself through imports, counting those under TYPE_CHECKING and inside functions."""
    assert _circles(_graph()) == []


def test_a_circle_is_found():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_repository_folders_are_not_importable_by_their_own_names():
    """Only `accelsim` is a top-level name: the folders are reached as accelsim.runtime, accelsim.schema, ..."""
    import importlib.util

    def importable(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # its parent is not importable either
            return False

    # (tests/runtime and tests/delegates are namespace folders of tests, hence the submodules)
    assert not any(importable(name) for name in ("runtime.interpreter", "schema.tflite", "delegates.api", "hw_configs"))
    assert importlib.util.find_spec("accelsim.runtime").origin == str(ROOT / "runtime" / "__init__.py")


def _loaded_after(statement: str) -> set[str]:
    """The modules a fresh Python has loaded after running `statement`."""
    code = f"import sys; {statement}; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return set(out.split())


# What start-up must not load: each costs a good part of a second, and the verbs that need them import them.
HEAVY = ("matplotlib", "dask", "distributed", "optuna", "torch", "accelsim.schema.tflite", "accelsim.runtime.kernels")


@pytest.mark.parametrize(("statement", "allowed"), [
    ("import accelsim.cli.main", ()),  # `accelsim --help`, `--version`: the parser alone
    ("import accelsim", ()),
    ("import accelsim.runtime.errors, accelsim.delegates.spec", ()),  # a package's __init__ loads nothing heavy
    # validate reads models (the schema) and checks kernels, but draws nothing and runs no cluster
    ("import accelsim.cli.config_verbs", ("accelsim.schema.tflite", "accelsim.runtime.kernels")),
])
def test_start_up_loads_no_heavy_module(statement, allowed):
    loaded = _loaded_after(statement)
    heavy = sorted(m for m in loaded for h in HEAVY if h not in allowed and (m == h or m.startswith(h + ".")))
    assert not heavy, f"{statement} loads {', '.join(heavy[:8])}"
