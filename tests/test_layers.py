"""Imports only point down: accelsim -> accelsim.delegates -> accelsim.runtime -> accelsim.schema; inside
the runtime the kernels sit below the resolver and the interpreter (they import tensors, quant and the IR, never
the interpreter); inside accelsim/ the layers of docs/architecture.md (ACCELSIM_LAYERS), where costing never
imports placement and nothing below the command line imports it.

Every import statement counts, also those inside functions or `if TYPE_CHECKING:` blocks. Inside accelsim/, an
import in a function is only for an optional dependency (OPTIONAL), with a comment saying so.
"""

from __future__ import annotations

import ast
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


# Modules of `accelsim` itself (the hardware side and the tool), lowest layer first: docs/architecture.md names
# each layer's job. A module may import its own layer's modules and lower ones; a new module goes in the layer
# of its job (a prefix names a package and every module in it).
ACCELSIM_LAYERS = (
    # foundation: quantities, files, the result record, traces, schedules, Pareto fronts
    # (and what extends the runtime or words the results without knowing the hardware: custom-op modules, the
    # infeasible verdict, the glossary, the shipped default experiment)
    ("accelsim", "accelsim.units", "accelsim.files", "accelsim.record", "accelsim.trace", "accelsim.schedule",
     "accelsim.pareto", "accelsim.ops", "accelsim.feasibility", "accelsim.glossary", "accelsim.default_experiment"),
    # hardware: configs, a device's hardware and policy types, claims, kinds and their cost models, memory, energy,
    # sweep ranges and limits, the defaults a config leaves to the schema (assumptions)
    ("accelsim.config", "accelsim.device", "accelsim.config_yaml", "accelsim.claims", "accelsim.config_docs",
     "accelsim.kinds", "accelsim.cost", "accelsim.memory", "accelsim.energy", "accelsim.search", "accelsim.hw_configs",
     "accelsim.assumptions"),
    # delegation: delegates applied, node work, what a simulated inference produced
    ("accelsim.simulation", "accelsim.delegation"),
    ("accelsim.costing",),  # node costs, step assembly
    ("accelsim.placement",),  # searches that use costing; costing never uses them
    ("accelsim.analysis", "accelsim.diff"),  # once per (model, delegation policy); the numerics diff
    # what to change: one analysis re-costed with each design parameter varied, and advice from it
    ("accelsim.sensitivity", "accelsim.advice"),
    # results and reports
    ("accelsim.results", "accelsim.report", "accelsim.document", "accelsim.exports", "accelsim.report_figures",
     "accelsim.labels", "accelsim.plots", "accelsim.partition_plot"),
    # experiments: the file, points, executors, the store, details, the pipeline
    ("accelsim.experiment", "accelsim.points", "accelsim.executors", "accelsim.dask_executor", "accelsim.store",
     "accelsim.detail", "accelsim.run", "accelsim.experiment_keys"),
    # tools
    ("accelsim.compare", "accelsim.whatif", "accelsim.benchmark", "accelsim.model_info", "accelsim.systems",
     "accelsim.cost_only", "accelsim.validation"),
    ("accelsim.cli", "accelsim.cli_help", "accelsim.__main__"),  # the command line and its help texts
)
# Optional dependencies: the only imports allowed inside functions of accelsim/ (with a comment saying so).
OPTIONAL = ("distributed", "dask", "playwright")


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


def _accelsim_layer(module: str) -> int:
    """The rank of a module (or of a name in it: accelsim.config.load_system is accelsim.config's)."""
    best = None
    for rank, group in enumerate(ACCELSIM_LAYERS):
        for prefix in group:
            # the package itself matches only exactly: a module missing from the table is an error, not the package
            inside = module.startswith(prefix + ".") and prefix != "accelsim"
            if (module == prefix or inside) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    assert best is not None, (f"{module} is in no layer of ACCELSIM_LAYERS (tests/test_layers.py); add it to the "
                              "layer of its job (docs/architecture.md)")
    return best[0]


def _violation(importer: str, imported: str) -> str | None:
    top_from, top_to = _package(importer), _package(imported)
    if top_to is None:
        return None
    if PACKAGES.index(top_to) > PACKAGES.index(top_from):
        return f"{top_from} may not import the higher layer {top_to}"
    if top_from == top_to == "accelsim":
        if _accelsim_layer(imported) > _accelsim_layer(importer):
            return "accelsim modules import only their own layer or lower ones (ACCELSIM_LAYERS)"
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
                f"(only an optional dependency, {', '.join(OPTIONAL)}, is imported where it is needed, with a "
                "comment saying so)"
                for line, module, text in _function_imports(path)
                if module.split(".")[0] not in OPTIONAL or "#" not in text]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("importer", "imported"), [
    ("accelsim.runtime.kernels.conv", "accelsim.runtime.interpreter.Interpreter"),
    ("accelsim.runtime.kernels.conv", "accelsim.runtime.resolver.BuiltinOpResolver"),
    ("accelsim.runtime.ir", "accelsim.runtime.read.load_model"),
    ("accelsim.runtime.tensor", "accelsim.runtime.kernels.common.check"),
    ("accelsim.runtime.interpreter", "accelsim.delegates.api.SimpleDelegate"),
    ("accelsim.delegates.partition", "accelsim.config.load_system"),
    ("accelsim.schema.generate", "accelsim.runtime.ir.Model"),
    ("accelsim.costing", "accelsim.placement.cost_aware_interpreter"),
    ("accelsim.config", "accelsim.analysis.analyze"),
    ("accelsim.report", "accelsim.run.run_experiment"),
    ("accelsim.run", "accelsim.cli.main"),
])
def test_upward_imports_are_caught(importer, imported):
    assert _violation(importer, imported) is not None


def test_a_planted_upward_import_fails(tmp_path, monkeypatch):
    """A file in runtime/ that imports accelsim's hardware side is reported with its file:line."""
    pkg = tmp_path / "runtime" / "kernels"
    pkg.mkdir(parents=True)
    source = pkg / "mod.py"
    source.write_text("import numpy\ndef f():\n    from accelsim.config import load_system\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _module_name(source) == "accelsim.runtime.kernels.mod"
    with pytest.raises(AssertionError, match=r"runtime/kernels/mod.py:3: imports accelsim.config.load_system"):
        test_imports_point_down(source)


def test_function_level_and_relative_imports_are_read(tmp_path, monkeypatch):
    pkg = tmp_path / "runtime" / "kernels"
    pkg.mkdir(parents=True)
    source = pkg / "mod.py"
    source.write_text("def f():\n    from accelsim.runtime.interpreter import Interpreter\n    from . import common\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _imports(source) == [(2, "accelsim.runtime.interpreter.Interpreter"), (3, "accelsim.runtime.kernels.common")]


def test_a_planted_upward_import_inside_accelsim_fails(tmp_path, monkeypatch):
    """Costing that imports a placement search is reported with its file:line, the function-level one too."""
    pkg = tmp_path / "accelsim"
    pkg.mkdir()
    (pkg / "placement.py").write_text("")
    source = pkg / "costing.py"
    source.write_text("import numpy\ndef f():\n    from accelsim.placement import cost_aware_interpreter\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"accelsim/costing.py:3: imports accelsim.placement.cost_aware_interpreter"
                                             r": accelsim modules import only their own layer or lower ones"):
        test_imports_point_down(source)
    with pytest.raises(AssertionError, match=r"accelsim/costing.py:3: imports accelsim.placement inside a function"):
        test_accelsim_imports_in_functions_are_only_optional_dependencies(source)


def test_every_accelsim_module_has_a_layer():
    for path in _sources():
        module = _module_name(path)
        if _package(module) == "accelsim":
            _accelsim_layer(module)


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
