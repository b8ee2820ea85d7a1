"""Custom-op modules: load the kernels a `--ops` option or an experiment's `ops:` names, and op packs.

An op module is a Python module (an installed name such as `accelsim.ops.mediapipe`, or a `.py` file)
with a module-level ``register(resolver)`` function that adds its kernels with
``resolver.add_custom(name, Registration(...), min_version, max_version)``. That is the convention the
builtin kernel families follow (`accelsim.runtime.kernels.<family>.register`) and LiteRT's own
``Interpreter(custom_op_registerers=[...])``: a function handed a resolver, explicit about what it
adds and at which versions, and callable again for every fresh resolver (so a module never keeps a
resolver of its own, and loading it twice registers the same kernels).

`using_ops` loads modules and scopes their kernels to a block (`accelsim.runtime.resolver.extra_custom_ops`):
every interpreter built inside, however deep in the costing stack, resolves them. Workers of an
experiment enter the same block from each design point's `ops`, so pools and Dask clusters see them.

Packs shipped here: `accelsim.ops.mediapipe` (MediaPipe's custom ops).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from accelsim.runtime.errors import AccelsimError, OpResolutionError
from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.runtime.registration import MutableOpResolver
from accelsim.runtime.resolver import default_resolver, extra_custom_ops

__all__ = ["OpModuleError", "OpModules", "load_op_modules", "require_kernels", "resolve_spec", "unresolved_op",
           "using_ops"]

HOW_TO_REGISTER = ("load a module whose register(resolver) calls resolver.add_custom({name!r}, Registration(...)) "
                   "with --ops MODULE_OR_FILE or the experiment key ops: [...] (see examples/custom_op_atan.py)")


class OpModuleError(AccelsimError, ValueError):
    """An op module cannot be found or imported, has no register(resolver), or registers nothing."""


@dataclass(frozen=True, kw_only=True)
class OpModules:
    """Loaded op modules: what was asked for and the kernels they registered."""

    specs: tuple[str, ...] = ()  # as resolved: module names, or absolute paths of .py files
    resolver: MutableOpResolver | None = None
    sources: tuple[str, ...] = ()  # the modules' files, in order (what `digest` hashes)

    @property
    def custom_ops(self) -> list[str]:
        return self.resolver.custom_names() if self.resolver is not None else []

    def digest(self) -> str:
        """sha256 of the modules' sources: a design point's id changes when a kernel's code (its work) does."""
        h = hashlib.sha256()
        for spec, source in zip(self.specs, self.sources):
            h.update(spec.encode() + b"\0" + (Path(source).read_bytes() if source else b""))
        return h.hexdigest()


def is_file_spec(spec: str) -> bool:
    """A `.py` path rather than a module name."""
    return spec.endswith(".py") or "/" in spec or "\\" in spec


def resolve_spec(spec: str, base: Path | None = None) -> str:
    """A module name as it is, or a `.py` path made absolute (relative to `base`, default the working folder)."""
    if not is_file_spec(spec):
        return spec
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return str(path.resolve())


def _import_file(path: Path) -> ModuleType:
    # One module object per file and process, registered under a name derived from the path (as
    # runpy-free plugin loaders do), so loading it for every design point imports it once.
    name = f"accelsim_ops_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise OpModuleError(f"{path}: not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _find(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):  # a parent package that does not exist, or an empty name
        return None


def _import(spec: str) -> ModuleType:
    """The module of a resolved spec (a module name, or an absolute .py path)."""
    is_file = is_file_spec(spec)
    if Path(spec).is_file() and Path(spec).suffix != ".py":
        model = " (it looks like a model: give the model as the verb's argument, not to --ops)" if Path(
            spec).suffix == ".tflite" else ""
        raise OpModuleError(f"{spec}: not a .py file{model}; --ops takes the path of a .py file that defines "
                            "register(resolver), e.g. examples/custom_op_atan.py, or an installed module name, e.g. "
                            "accelsim.ops.mediapipe")
    if is_file and not Path(spec).is_file():
        raise OpModuleError(f"{spec}: no such file (give an installed module name, e.g. accelsim.ops.mediapipe, "
                            "or the path of a .py file)")
    if not is_file and _find(spec) is None:
        raise OpModuleError(f"{spec}: no module of that name is installed (give an installed module name, e.g. "
                            "accelsim.ops.mediapipe, or the path of a .py file)")
    try:
        return _import_file(Path(spec)) if is_file else importlib.import_module(spec)
    except Exception as exc:  # the user's module failed while importing: one line, naming it
        detail = " ".join(str(exc).split())
        raise OpModuleError(f"{spec}: importing it failed: {type(exc).__name__}: {detail}") from None


def _register(spec: str, module: ModuleType, into: MutableOpResolver) -> None:
    register = getattr(module, "register", None)
    if not callable(register):
        raise OpModuleError(f"{spec}: registers nothing: it has no register(resolver) function (an op module "
                            "defines one that calls resolver.add_custom(name, Registration(...)))")
    own = MutableOpResolver()
    try:
        register(own)
    except Exception as exc:
        detail = " ".join(str(exc).split())
        raise OpModuleError(f"{spec}: register(resolver) failed: {type(exc).__name__}: {detail}") from None
    if not own.registrations():
        raise OpModuleError(f"{spec}: registers nothing: its register(resolver) added no kernel")
    into.add_all(own)


def load_op_modules(specs: Sequence[str], base: Path | None = None) -> OpModules:
    """Import each op module and collect its kernels (later modules override earlier ones on a clash).

    Args:
        specs: installed module names or `.py` paths (relative ones to `base`, default the working folder).

    Raises:
        OpModuleError: a module is missing, fails to import, or registers nothing; one line naming it.
    """
    resolved = tuple(dict.fromkeys(resolve_spec(s, base) for s in specs))
    if not resolved:
        return OpModules()
    resolver = MutableOpResolver()
    sources = []
    for spec in resolved:
        module = _import(spec)
        _register(spec, module, resolver)
        sources.append(getattr(module, "__file__", None) or "")
    return OpModules(specs=resolved, resolver=resolver, sources=tuple(sources))


@contextmanager
def using_ops(specs: Sequence[str] | OpModules, base: Path | None = None) -> Iterator[OpModules]:
    """Load op modules (or take loaded ones) and make their kernels resolvable within the block."""
    ops = specs if isinstance(specs, OpModules) else load_op_modules(specs, base)
    if ops.resolver is None:
        yield ops
        return
    with extra_custom_ops(ops.resolver):
        yield ops


def unresolved_op(model: Model, source: str, resolver: MutableOpResolver | None = None) -> str | None:
    """The one-line error for the first custom op of `model` that no kernel resolves, or None if all do.

    TFLite's sentence comes first; then the model file, the operator, how to register a kernel, and
    the custom ops that are loaded. `resolver` defaults to the one interpreters get here (builtins plus
    the op modules of an enclosing `using_ops`). A known name at another version is left to the
    interpreter, whose message lists the versions registered.
    """
    resolver = resolver if resolver is not None else default_resolver()
    for s, sg in enumerate(model.subgraphs):
        for i, op in enumerate(sg.operators):
            name = op.custom_code or ""
            if op.op != "CUSTOM" or resolver.custom_versions(name):
                continue
            where = f"subgraph {s} operator {i}" if s else f"operator {i}"
            loaded = ", ".join(resolver.custom_names()) or "none"
            return (f"Encountered unresolved custom op: {name}. {source}: {where} (CUSTOM {name!r} v{op.version}) "
                    f"has no kernel; {HOW_TO_REGISTER.format(name=name)}; custom ops loaded: {loaded}.")
    return None


def require_kernels(model: Model | str | Path, source: str | None = None) -> Model:
    """`model` (parsed if a path) once every custom op it uses has a kernel.

    Raises:
        OpResolutionError: `unresolved_op`'s one line.
        ModelError: the file is not a valid model.
    """
    parsed = model if isinstance(model, Model) else load_model(model)
    problem = unresolved_op(parsed, source if source is not None else str(model))
    if problem is not None:
        raise OpResolutionError(problem)
    return parsed
