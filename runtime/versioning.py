"""TFLite operator versioning of a whole model: builtin op versions, minimum runtime versions, stamping.

Follows the converter's rules (tflite/converter/tools/versioning/ in LiteRT, a copy of
tensorflow/compiler/mlir/lite/tools/versioning/), one module per upstream file:
`accelsim.runtime.op_signature` (op_signature.cc: which facts an operator's version depends on),
`accelsim.runtime.op_versions` (op_version.cc: those facts to a version) and `accelsim.runtime.runtime_versions`
(runtime_version.cc's table: the TFLite release that first runs each (op, version)). This module
applies them to a model.

It only reads the IR, so `accelsim.runtime.write` may import it (for `save_model(..., stamp_versions=True)`)
without an import cycle.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from accelsim.runtime.op_signature import operator_signature
from accelsim.runtime.op_versions import get_builtin_operator_version
from accelsim.runtime.runtime_versions import RUNTIME_VERSIONS

if TYPE_CHECKING:
    from accelsim.runtime.ir import Model

logger = logging.getLogger(__name__)

MIN_RUNTIME_VERSION_KEY = "min_runtime_version"
# The converter reserves a 16-byte buffer for the version string and pads it with NULs.
_MIN_RUNTIME_VERSION_BYTES = 16


def runtime_version_key(version: str) -> tuple[int, ...]:
    """A sort key comparing release strings numerically ("1.14.0" < "2.3.0"; "1.14" < "1.14.0")."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def find_minimum_runtime_version(op: str, version: int) -> str:
    """The first TFLite release that runs builtin `op` at `version`, or "" if upstream lists none."""
    return RUNTIME_VERSIONS.get(op, {}).get(version, "")


def _builtin_op_versions(model: Model) -> list[tuple[str, int]]:
    """Every builtin (op, version) pair the model's operators use, in order of first use."""
    seen: dict[tuple[str, int], None] = {}
    for subgraph in model.subgraphs:
        for op in subgraph.operators:
            if op.op != "CUSTOM":
                seen.setdefault((op.op, op.version), None)
    return list(seen)


def unknown_runtime_versions(model: Model) -> list[tuple[str, int]]:
    """The builtin (op, version) pairs of the model that the runtime-version table lacks."""
    return [pair for pair in _builtin_op_versions(model) if not find_minimum_runtime_version(*pair)]


def min_runtime_version(model: Model) -> str:
    """The oldest TFLite release that runs every builtin operator of the model ("" if none is known).

    Like upstream's UpdateMinimumRuntimeVersionForModel, pairs missing from the table are skipped
    (custom ops never count); a warning names them, and `unknown_runtime_versions` lists them.
    """
    releases = [find_minimum_runtime_version(op, v) for op, v in _builtin_op_versions(model)]
    unknown = unknown_runtime_versions(model)
    if unknown:
        names = ", ".join(f"{op} v{v}" for op, v in unknown)
        logger.warning("no known minimum TFLite runtime for %s; min_runtime_version ignores them", names)
    return max((r for r in releases if r), key=runtime_version_key, default="")


# ---------------------------------------------------------------------------
# Writing versions into a model.


def _with_metadata_buffer(model: Model, name: str, data: bytes) -> Model:
    """A copy of the model whose metadata `name` holds `data` (the entry's buffer is replaced)."""
    buffers = list(model.buffers)
    metadata = list(model.metadata)
    for key, buf in metadata:
        if key == name:
            buffers[buf] = data
            break
    else:
        buffers.append(data)
        metadata.append((name, len(buffers) - 1))
    return model.replace(buffers=tuple(buffers), metadata=tuple(metadata))


def stamp_versions(model: Model) -> Model:
    """A copy of the model with each builtin operator at its computed version, plus min_runtime_version.

    Custom operators keep their version. The metadata entry holds the release string padded
    with NULs to 16 bytes, as the converter writes it; an existing entry is overwritten.
    """
    subgraphs = []
    for subgraph in model.subgraphs:
        ops = tuple(
            op if op.op == "CUSTOM"
            else dataclasses.replace(op, version=get_builtin_operator_version(operator_signature(op, subgraph, model)))
            for op in subgraph.operators
        )
        subgraphs.append(dataclasses.replace(subgraph, operators=ops))
    stamped = model.replace(subgraphs=tuple(subgraphs))
    padded = min_runtime_version(stamped).encode("ascii").ljust(_MIN_RUNTIME_VERSION_BYTES, b"\0")
    return _with_metadata_buffer(stamped, MIN_RUNTIME_VERSION_KEY, padded)


def read_min_runtime_version(model: Model) -> str | None:
    """The model's min_runtime_version metadata without its NUL padding (None if absent)."""
    raw = model.metadata_value(MIN_RUNTIME_VERSION_KEY)
    return None if raw is None else raw.split(b"\0", 1)[0].decode("ascii", "replace")


__all__ = [
    "MIN_RUNTIME_VERSION_KEY",
    "find_minimum_runtime_version",
    "min_runtime_version",
    "read_min_runtime_version",
    "runtime_version_key",
    "stamp_versions",
    "unknown_runtime_versions",
]
