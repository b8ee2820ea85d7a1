""".tflite bytes <-> an immutable graph IR.

No FlatBuffer object leaks past this module: `load_model` parses through the
flatc-generated object API in `schema.tflite` and returns frozen dataclasses;
`save_model` builds a fresh FlatBuffer from them.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np

from runtime.errors import ModelError
from runtime.verify import verify_model
from runtime.versioning import stamp_versions as _stamp_versions
from schema.tflite import BuiltinOperator as _bo_mod
from schema.tflite import BuiltinOptions as _bopt_mod
from schema.tflite import TensorType as _tt_mod
from schema.tflite.Buffer import BufferT
from schema.tflite.Metadata import MetadataT
from schema.tflite.Model import ModelT
from schema.tflite.Operator import OperatorT
from schema.tflite.OperatorCode import OperatorCodeT
from schema.tflite.QuantizationParameters import QuantizationParametersT
from schema.tflite.SignatureDef import SignatureDefT
from schema.tflite.SubGraph import SubGraphT
from schema.tflite.Tensor import TensorT
from schema.tflite.TensorMap import TensorMapT

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3
# Codes above this live only in `builtin_code`; `deprecated_builtin_code` holds
# PLACEHOLDER_FOR_GREATER_OP_CODES (schema v3a rule: the op is the max of both).
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127
# A tensor larger than this is refused before anything is allocated.
DEFAULT_MAX_TENSOR_BYTES = 2 << 30
# The most dimensions a NumPy array can have (NPY_MAXDIMS): a tensor of higher rank cannot be held.
_MAX_RANK = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32


def _enum_members(cls) -> dict[str, int]:
    return {k: v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


BUILTIN_OPS: dict[str, int] = _enum_members(_bo_mod.BuiltinOperator)
BUILTIN_OP_NAMES: dict[int, str] = {v: k for k, v in BUILTIN_OPS.items()}
TENSOR_TYPES: dict[str, int] = _enum_members(_tt_mod.TensorType)
TENSOR_TYPE_NAMES: dict[int, str] = {v: k for k, v in TENSOR_TYPES.items()}
_OPTIONS_TYPES: dict[str, int] = _enum_members(_bopt_mod.BuiltinOptions)
_OPTIONS_TYPE_NAMES: dict[int, str] = {v: k for k, v in _OPTIONS_TYPES.items()}

# TensorType -> NumPy dtype, for the types the interpreter can hold in memory.
_NUMPY_DTYPES: dict[str, np.dtype] = {
    "FLOAT32": np.dtype(np.float32),
    "FLOAT16": np.dtype(np.float16),
    "FLOAT64": np.dtype(np.float64),
    "INT8": np.dtype(np.int8),
    "UINT8": np.dtype(np.uint8),
    "INT16": np.dtype(np.int16),
    "UINT16": np.dtype(np.uint16),
    "INT32": np.dtype(np.int32),
    "UINT32": np.dtype(np.uint32),
    "INT64": np.dtype(np.int64),
    "UINT64": np.dtype(np.uint64),
    "BOOL": np.dtype(np.bool_),
    "COMPLEX64": np.dtype(np.complex64),
    "COMPLEX128": np.dtype(np.complex128),
    "STRING": np.dtype(object),
    "RESOURCE": np.dtype(np.int32),
    "VARIANT": np.dtype(object),
}
_TYPE_FOR_DTYPE = {v: k for k, v in reversed(list(_NUMPY_DTYPES.items())) if k != "RESOURCE"}

# Ops whose options table name does not follow the op name (the rest are found
# by matching "FOO_BAR" with "FooBarOptions" ignoring case and underscores).
_OPTIONS_FOR_OP_OVERRIDES = {
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions",
    "REDUCE_ANY": "ReducerOptions",
    "REDUCE_ALL": "ReducerOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "PADV2": "PadV2Options",
    "SELECT_V2": "SelectV2Options",
    "SPLIT_V": "SplitVOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "LOGICAL_AND": "LogicalAndOptions",
    "LOGICAL_OR": "LogicalOrOptions",
    "LOGICAL_NOT": "LogicalNotOptions",
    "LSTM": "LSTMOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "BIDIRECTIONAL_SEQUENCE_LSTM": "BidirectionalSequenceLSTMOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "BIDIRECTIONAL_SEQUENCE_RNN": "BidirectionalSequenceRNNOptions",
    "RNN": "RNNOptions",
    "SVDF": "SVDFOptions",
    "CONCAT_EMBEDDINGS": "ConcatEmbeddingsOptions",
    "LSH_PROJECTION": "LSHProjectionOptions",
    "EMBEDDING_LOOKUP_SPARSE": "EmbeddingLookupSparseOptions",
    "SPARSE_TO_DENSE": "SparseToDenseOptions",
    "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "NOT_EQUAL": "NotEqualOptions",
    "GREATER_EQUAL": "GreaterEqualOptions",
    "LESS_EQUAL": "LessEqualOptions",
}


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


_OPTIONS_BY_NORM = {_norm(k[: -len("Options")]): k for k in _OPTIONS_TYPES if k.endswith("Options")}


def options_type_for_op(op: str) -> str | None:
    """The BuiltinOptions member a builtin op's options are stored as (None if it has none)."""
    if op in _OPTIONS_FOR_OP_OVERRIDES:
        return _OPTIONS_FOR_OP_OVERRIDES[op]
    return _OPTIONS_BY_NORM.get(_norm(op))


def numpy_dtype(type_name: str) -> np.dtype:
    """The NumPy dtype that holds a TensorType, or ModelError if none does."""
    try:
        return _NUMPY_DTYPES[type_name]
    except KeyError:
        raise ModelError(f"tensor type {type_name} is not supported by the interpreter") from None


def tensor_type_for_dtype(dtype) -> str:
    """The TensorType name of a NumPy dtype."""
    try:
        return _TYPE_FOR_DTYPE[np.dtype(dtype)]
    except KeyError:
        raise ModelError(f"NumPy dtype {np.dtype(dtype)} has no TFLite tensor type") from None


# ---------------------------------------------------------------------------
# Options: an immutable mapping with attribute access.


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return tuple(value.tolist())
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


class Options(Mapping):
    """Parsed builtin options: read-only, keys in snake_case (`stride_w`), attribute access."""

    __slots__ = ("_fields",)

    def __init__(self, fields: Mapping[str, Any] | None = None, **kwargs: Any):
        merged = dict(fields or {})
        merged.update(kwargs)
        object.__setattr__(self, "_fields", {k: _plain(v) for k, v in merged.items()})

    def __getattr__(self, name: str) -> Any:
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"options have no field {name!r}; fields: {sorted(self._fields)}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Options are immutable; use replace()")

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def get(self, key: str, default: Any = None) -> Any:
        # Mapping.get goes through __getitem__ and a caught KeyError; cost models read options per node.
        return self._fields.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Options):
            return self._fields == other._fields
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._fields.items())))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields.items())
        return f"Options({inner})"

    def replace(self, **changes: Any) -> Options:
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise KeyError(f"unknown option fields {sorted(unknown)}; fields: {sorted(self._fields)}")
        return Options({**self._fields, **changes})


def _options_class(type_name: str):
    module = __import__(f"schema.tflite.{type_name}", fromlist=[type_name])
    return getattr(module, type_name + "T")


def default_options(type_name: str) -> Options:
    """The options table's defaults, as an old converter that omitted the table implies."""
    return _options_from_object(_options_class(type_name)())


def _options_from_object(obj: Any) -> Options:
    return Options({_camel_to_snake(k): v for k, v in vars(obj).items()})


def _options_to_object(type_name: str, options: Mapping[str, Any]):
    obj = _options_class(type_name)()
    known = set(vars(obj))
    for key, value in options.items():
        attr = _snake_to_camel(key)
        if attr not in known:
            raise ModelError(f"{type_name} has no field {key!r}; fields: {sorted(map(_camel_to_snake, known))}")
        if isinstance(value, tuple):
            value = list(value)
        setattr(obj, attr, value)
    return obj


# ---------------------------------------------------------------------------
# The IR.


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per axis."""

    scales: tuple[float, ...] = ()
    zero_points: tuple[int, ...] = ()
    quantized_dimension: int = 0
    min: tuple[float, ...] = ()
    max: tuple[float, ...] = ()

    @property
    def is_quantized(self) -> bool:
        return len(self.scales) > 0

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1


@dataclass(frozen=True)
class DimensionMetadata:
    """One dimension of a sparse tensor's traversal (TFLite sparsity format)."""

    format: str  # "DENSE" or "SPARSE_CSR"
    dense_size: int = 0
    array_segments: tuple[int, ...] = ()
    array_indices: tuple[int, ...] = ()


@dataclass(frozen=True)
class Sparsity:
    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dim_metadata: tuple[DimensionMetadata, ...]


@dataclass(frozen=True)
class Tensor:
    name: str
    type: str  # TensorType name, e.g. "INT8"
    shape: tuple[int, ...]
    buffer: int = 0
    quantization: Quantization | None = None
    shape_signature: tuple[int, ...] | None = None
    is_variable: bool = False
    sparsity: Sparsity | None = None
    has_rank: bool = True

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.type)


@dataclass(frozen=True)
class Operator:
    """One node of a subgraph. `op` is the builtin name ('CONV_2D') or 'CUSTOM'."""

    op: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    version: int = 1
    options: Options | None = None
    options_type: str | None = None
    custom_code: str | None = None
    custom_options: bytes | None = None
    intermediates: tuple[int, ...] = ()
    mutating_variable_inputs: tuple[bool, ...] = ()

    @property
    def builtin_code(self) -> int:
        return BUILTIN_OPS[self.op]

    @property
    def display_name(self) -> str:
        return self.custom_code if self.op == "CUSTOM" and self.custom_code else self.op


@dataclass(frozen=True)
class Subgraph:
    tensors: tuple[Tensor, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    operators: tuple[Operator, ...]
    name: str = ""


@dataclass(frozen=True)
class SignatureDef:
    key: str
    subgraph_index: int
    inputs: tuple[tuple[str, int], ...]  # (name, tensor index)
    outputs: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Model:
    subgraphs: tuple[Subgraph, ...]
    buffers: tuple[Any, ...]  # bytes-like per buffer index; buffer 0 is the empty sentinel
    description: str = ""
    version: int = SCHEMA_VERSION
    metadata: tuple[tuple[str, int], ...] = ()  # (name, buffer index)
    signature_defs: tuple[SignatureDef, ...] = ()

    def buffer_bytes(self, index: int):
        return self.buffers[index] if 0 <= index < len(self.buffers) else b""

    def constant(self, subgraph: int, tensor: int) -> np.ndarray | None:
        """A read-only view of a tensor's constant data (None if it has no buffer data)."""
        t = self.subgraphs[subgraph].tensors[tensor]
        data = self.buffer_bytes(t.buffer)
        if len(data) == 0 or t.sparsity is not None:
            return None
        if t.type == "STRING":
            return _string_array(data, t.shape)
        arr = np.frombuffer(data, dtype=t.dtype)
        return arr.reshape(t.shape)

    def metadata_value(self, name: str) -> bytes | None:
        for key, buf in self.metadata:
            if key == name:
                return bytes(self.buffer_bytes(buf))
        return None

    def replace(self, **changes: Any) -> Model:
        return dataclasses.replace(self, **changes)


# ---------------------------------------------------------------------------
# Reading.


def _ints(v) -> tuple[int, ...]:
    return () if v is None else tuple(int(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v))


def _seq(v):
    return () if v is None else v


def _floats(v) -> tuple[float, ...]:
    return () if v is None else tuple(float(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v))


def _text(v) -> str:
    if v is None:
        return ""
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _read_source(source) -> tuple[bytes | memoryview, str]:
    if isinstance(source, bytes):
        return source, "<bytes>"
    if isinstance(source, (bytearray, memoryview)):
        try:
            return memoryview(source).cast("B"), "<bytes>"
        except TypeError as exc:
            raise ModelError(f"cannot read a model from this buffer: {exc}") from None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            return path.read_bytes(), str(path)
        except OSError as exc:
            raise ModelError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    raise ModelError(f"expected a path or bytes for a model, got {type(source).__name__}")


def load_model(source, *, max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> Model:
    """Parse a .tflite file (path) or its bytes into a validated `Model`.

    The FlatBuffer is verified structurally first (`runtime.verify`), so corrupt
    offsets and lengths are refused before the generated reader touches them;
    then every index, shape, buffer size and subgraph reference is checked.

    Raises:
        ModelError: the data is not a TFLite model, is truncated or corrupt, or
            refers to something out of range; the message says where.
    """
    data, where = _read_source(source)
    if len(data) < 8:
        raise ModelError(f"{where}: not a TFLite model: {len(data)} bytes is too short for a FlatBuffer")
    ident = bytes(data[4:8])
    if ident != FILE_IDENTIFIER:
        raise ModelError(
            f"{where}: not a TFLite model: file identifier is {ident!r}, expected {FILE_IDENTIFIER!r}"
        )
    verify_model(data, where)
    try:
        raw = ModelT.InitFromPackedBuf(data, 0)
    except Exception as exc:  # verified above; kept so that a reader bug still surfaces as ModelError
        raise ModelError(f"{where}: corrupt or truncated model FlatBuffer ({type(exc).__name__}: {exc})") from None
    try:
        return _convert_model(raw, data, where, max_tensor_bytes)
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(f"{where}: malformed model ({type(exc).__name__}: {exc})") from None


def _convert_buffer(b: BufferT, data, where: str, index: int):
    if b is None:
        return b""
    offset = int(b.offset or 0)
    size = int(b.size or 0)
    if offset > 1:
        # Large models keep buffer data after the FlatBuffer (schema: offset > 1 means external).
        if offset + size > len(data):
            raise ModelError(
                f"{where}: buffer {index}: data at offset {offset} size {size} runs past the end "
                f"of the file ({len(data)} bytes)"
            )
        return memoryview(data)[offset : offset + size]
    if b.data is None:
        return b""
    arr = b.data
    return memoryview(arr) if isinstance(arr, np.ndarray) else bytes(arr)


def _convert_quantization(q: QuantizationParametersT | None, shape: tuple[int, ...], loc: str) -> Quantization | None:
    if q is None:
        return None
    scales = _floats(q.scale)
    zps = _ints(q.zeroPoint)
    mins, maxs = _floats(q.min), _floats(q.max)
    if not scales and not mins and not maxs:
        return None
    dim = int(q.quantizedDimension or 0)
    if scales:
        # interpreter_builder.cc ParseQuantization: the checks TFLite makes before accepting a tensor.
        if len(zps) != len(scales):
            raise ModelError(f"{loc}: quantization has {len(zps)} zero points and {len(scales)} scales; "
                             "they must have the same number")
        if dim < 0 or (shape and dim >= len(shape)):
            raise ModelError(f"{loc}: quantized_dimension must be in range [0, {len(shape)}), got {dim}")
        if len(scales) != 1 and shape and len(scales) != shape[dim]:
            raise ModelError(f"{loc}: {len(scales)} scales: must be 1 for per-tensor quantization or "
                             f"{shape[dim]} (dimension {dim} of shape {list(shape)}) for per-axis quantization")
    return Quantization(scales, zps, dim, mins, maxs)


def _convert_sparsity(s, loc: str) -> Sparsity | None:
    if s is None:
        return None
    # interpreter_builder.cc ParseSparsity: both vectors are required, formats are DENSE or SPARSE_CSR.
    if s.traversalOrder is None or s.dimMetadata is None:
        raise ModelError(f"{loc}: sparsity parameters lack traversal_order or dim_metadata")
    dims = []
    for i, d in enumerate(s.dimMetadata):
        fmt = int(d.format)
        if fmt not in (0, 1):
            raise ModelError(f"{loc}: sparse dimension {i} has unknown format {fmt}")
        segs = _ints(d.arraySegments.values) if d.arraySegments is not None else ()
        idxs = _ints(d.arrayIndices.values) if d.arrayIndices is not None else ()
        if fmt == 1 and (d.arraySegments is None or d.arrayIndices is None):
            raise ModelError(f"{loc}: sparse dimension {i} (SPARSE_CSR) lacks array_segments or array_indices")
        dims.append(DimensionMetadata("SPARSE_CSR" if fmt == 1 else "DENSE", int(d.denseSize), segs, idxs))
    return Sparsity(_ints(s.traversalOrder), _ints(s.blockMap), tuple(dims))


def _convert_model(raw: ModelT, data, where: str, max_tensor_bytes: int) -> Model:
    buffers = tuple(_convert_buffer(b, data, where, i) for i, b in enumerate(raw.buffers or []))
    if not buffers:
        buffers = (b"",)
    codes = []
    for i, oc in enumerate(raw.operatorCodes or []):
        code = max(int(oc.builtinCode), int(oc.deprecatedBuiltinCode))
        if code not in BUILTIN_OP_NAMES:
            raise ModelError(f"{where}: operator code {i}: unknown builtin code {code}")
        codes.append((BUILTIN_OP_NAMES[code], _text(oc.customCode) or None, int(oc.version)))
    if not raw.subgraphs:
        raise ModelError(f"{where}: model has no subgraphs")
    calls: dict[int, list[tuple[int, str, str, int]]] = {}
    subgraphs = tuple(
        _convert_subgraph(sg, si, codes, buffers, data, where, max_tensor_bytes, calls.setdefault(si, []))
        for si, sg in enumerate(raw.subgraphs)
    )
    _check_calls(calls, len(subgraphs), where)
    metadata = tuple((_text(m.name), int(m.buffer)) for m in raw.metadata or [])
    for name, buf in metadata:
        if not 0 <= buf < len(buffers):
            raise ModelError(f"{where}: metadata {name!r}: buffer index {buf} out of range [0, {len(buffers)})")
    sigs = []
    for sd in raw.signatureDefs or []:
        sidx = int(sd.subgraphIndex)
        if not 0 <= sidx < len(subgraphs):
            raise ModelError(f"{where}: signature {_text(sd.signatureKey)!r}: subgraph {sidx} out of range")
        key = _text(sd.signatureKey)
        n = len(subgraphs[sidx].tensors)
        inputs = _tensor_maps(sd.inputs, n, f"{where}: signature {key!r} input")
        outputs = _tensor_maps(sd.outputs, n, f"{where}: signature {key!r} output")
        sigs.append(SignatureDef(key, sidx, inputs, outputs))
    return Model(
        subgraphs=subgraphs,
        buffers=buffers,
        description=_text(raw.description),
        version=int(raw.version),
        metadata=metadata,
        signature_defs=tuple(sigs),
    )


def _tensor_maps(maps, ntensors: int, loc: str) -> tuple[tuple[str, int], ...]:
    out = []
    for m in maps or []:
        ti = int(m.tensorIndex)
        if not 0 <= ti < ntensors:
            raise ModelError(f"{loc} {_text(m.name)!r}: tensor {ti} out of range [0, {ntensors})")
        out.append((_text(m.name), ti))
    return tuple(out)


# Options fields that name other subgraphs: WHILE/IF/CALL_ONCE/CALL and the StableHLO region ops.
_SUBGRAPH_FIELD = re.compile(r"(^|_)subgraph(_index|_indices)?$|^called_computations$")


def _subgraph_refs(options: Options | None) -> Iterator[tuple[str, int]]:
    for key, value in (options or {}).items():
        if _SUBGRAPH_FIELD.search(key):
            for v in value if isinstance(value, tuple) else (value,):
                yield key, int(v)


def _check_calls(calls: dict[int, list[tuple[int, str, str, int]]], n: int, where: str) -> None:
    """Refuse subgraph references out of range or forming a cycle (a subgraph that ends up calling itself).

    `calls[si]` lists (operator index, op name, options field, callee) for every reference in subgraph si.
    """
    for si, refs in calls.items():
        for oi, op, key, callee in refs:
            if not 0 <= callee < n:
                raise ModelError(f"{where}: subgraph {si} operator {oi} ({op}): {key} {callee} is out of "
                                 f"range [0, {n})")
    # Depth-first search with an explicit stack: a chain of thousands of subgraphs must not hit recursion limits.
    state = [0] * n  # 0 unvisited, 1 on the current path, 2 done
    for start in range(n):
        if state[start]:
            continue
        state[start] = 1
        path = [start]
        stack = [iter(calls.get(start, ()))]
        while stack:
            ref = next(stack[-1], None)
            if ref is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            oi, op, key, callee = ref
            if state[callee] == 1:
                cycle = " -> ".join(map(str, [*path[path.index(callee):], callee]))
                raise ModelError(f"{where}: subgraph {path[-1]} operator {oi} ({op}): {key} {callee} makes the "
                                 f"subgraphs call themselves (cycle {cycle})")
            if state[callee] == 0:
                state[callee] = 1
                path.append(callee)
                stack.append(iter(calls.get(callee, ())))


def _convert_subgraph(sg: SubGraphT, si: int, codes, buffers, data, where: str, max_tensor_bytes: int,
                      calls: list[tuple[int, str, str, int]]) -> Subgraph:
    tensors = []
    for ti, t in enumerate(sg.tensors or []):
        loc = f"{where}: subgraph {si} tensor {ti}"
        ttype = int(t.type)
        if ttype not in TENSOR_TYPE_NAMES:
            raise ModelError(f"{loc}: unknown tensor type {ttype}")
        shape = _ints(t.shape)
        name = _text(t.name)
        loc = f"{loc} ({name!r})"
        if any(d < 0 for d in shape):
            raise ModelError(f"{loc}: negative dimension in shape {list(shape)}")
        if len(shape) > _MAX_RANK:
            raise ModelError(f"{loc}: rank {len(shape)} is over the {_MAX_RANK} dimensions an array can have")
        signature = _ints(t.shapeSignature) if t.shapeSignature is not None else None
        if signature is not None and any(d < -1 for d in signature):
            raise ModelError(f"{loc}: shape_signature {list(signature)} has a dimension below -1")
        buf = int(t.buffer)
        if not 0 <= buf < len(buffers):
            raise ModelError(f"{loc}: buffer index {buf} out of range [0, {len(buffers)})")
        tensor = Tensor(
            name=name,
            type=TENSOR_TYPE_NAMES[ttype],
            shape=shape,
            buffer=buf,
            quantization=_convert_quantization(t.quantization, shape, loc),
            shape_signature=signature,
            is_variable=bool(t.isVariable),
            sparsity=_convert_sparsity(t.sparsity, loc),
            has_rank=bool(t.hasRank) or len(shape) > 0,
        )
        _check_tensor_data(tensor, buffers, loc, max_tensor_bytes)
        tensors.append(tensor)
    n = len(tensors)

    def check_indices(idx, what, optional=True):
        low = -1 if optional else 0
        for i in idx:
            if not (low <= i < n):
                raise ModelError(f"{where}: subgraph {si} {what}: tensor index {i} out of range [0, {n})")
        return idx

    ops = []
    for oi, o in enumerate(sg.operators or []):
        ci = int(o.opcodeIndex)
        if not 0 <= ci < len(codes):
            raise ModelError(f"{where}: subgraph {si} operator {oi}: opcode index {ci} out of range [0, {len(codes)})")
        name, custom, version = codes[ci]
        options, options_type = _operator_options(o, name, f"{where}: subgraph {si} operator {oi} ({name})")
        extra = _options_from_object(o.builtinOptions2) if o.builtinOptions2 is not None else None
        calls.extend((oi, name, key, callee) for opts in (options, extra) for key, callee in _subgraph_refs(opts))
        ops.append(
            Operator(
                op=name,
                inputs=check_indices(_ints(o.inputs), f"operator {oi} ({name}) inputs"),
                outputs=check_indices(_ints(o.outputs), f"operator {oi} ({name}) outputs"),
                version=version,
                options=options,
                options_type=options_type,
                custom_code=custom,
                custom_options=_custom_options(o, data, f"{where}: subgraph {si} operator {oi}"),
                intermediates=check_indices(_ints(o.intermediates), f"operator {oi} ({name}) intermediates"),
                mutating_variable_inputs=tuple(bool(x) for x in _seq(o.mutatingVariableInputs)),
            )
        )
    return Subgraph(
        tensors=tuple(tensors),
        inputs=check_indices(_ints(sg.inputs), "inputs", optional=False),
        outputs=check_indices(_ints(sg.outputs), "outputs", optional=False),
        operators=tuple(ops),
        name=_text(sg.name),
    )


def _check_tensor_data(t: Tensor, buffers, loc: str, max_tensor_bytes: int) -> None:
    """Refuse a tensor too large to allocate, or whose constant data does not fit its shape and type."""
    count = 1
    for d in t.shape:
        count *= d
    dtype = _NUMPY_DTYPES.get(t.type)
    nbytes = count * dtype.itemsize if dtype is not None else 0
    if nbytes > max_tensor_bytes:
        raise ModelError(
            f"{loc}: shape {list(t.shape)} needs {nbytes} bytes, over the limit of {max_tensor_bytes} bytes"
        )
    data = buffers[t.buffer]
    if not len(data):
        return
    if t.is_variable:
        # interpreter_builder.cc ParseTensors refuses the same.
        raise ModelError(f"{loc}: a variable tensor cannot have constant data (buffer {t.buffer})")
    if t.type in ("VARIANT", "RESOURCE"):
        raise ModelError(f"{loc}: a {t.type} tensor cannot have constant data (buffer {t.buffer})")
    if t.sparsity is not None or dtype is None:
        return
    if t.type == "STRING":
        _string_offsets(data, count, f"{loc}: STRING data in buffer {t.buffer}")
    elif len(data) != nbytes:
        raise ModelError(
            f"{loc}: buffer {t.buffer} holds {len(data)} bytes but shape {list(t.shape)} of {t.type} needs {nbytes}"
        )


def _string_offsets(data, count: int, loc: str) -> np.ndarray:
    """The count + 1 offsets of TFLite's string buffer layout, checked (string_util.h).

    Layout: int32 N, then N + 1 int32 offsets from the buffer's start, then the bytes of every string.
    """
    if len(data) < 4:
        raise ModelError(f"{loc}: {len(data)} bytes cannot hold a string count")
    (n,) = np.frombuffer(data, dtype="<i4", count=1)
    if n != count:
        raise ModelError(f"{loc}: holds {n} strings but the shape needs {count}")
    header = 4 * (count + 2)
    if len(data) < header:
        raise ModelError(f"{loc}: {len(data)} bytes cannot hold the offsets of {count} strings")
    offsets = np.frombuffer(data, dtype="<i4", count=count + 1, offset=4).astype(np.int64)
    if offsets[0] != header or offsets[-1] != len(data) or np.any(np.diff(offsets) < 0):
        raise ModelError(f"{loc}: string offsets must rise from {header} to the buffer size {len(data)}")
    return offsets


def _string_array(data, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only object array of the bytes strings a STRING tensor's buffer holds."""
    count = int(np.prod(shape, dtype=np.int64))
    offsets = _string_offsets(data, count, "STRING data").tolist()
    arr = np.empty(count, dtype=object)
    arr[:] = [bytes(data[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    arr = arr.reshape(shape)
    arr.flags.writeable = False
    return arr


def _operator_options(o: OperatorT, op: str, loc: str) -> tuple[Options | None, str | None]:
    type_code = int(o.builtinOptionsType or 0)
    if type_code and o.builtinOptions is not None:
        type_name = _OPTIONS_TYPE_NAMES.get(type_code)
        if type_name is None:
            raise ModelError(f"{loc}: unknown builtin options type {type_code}")
        return _options_from_object(o.builtinOptions), type_name
    # No table in the file: the op gets its options table's defaults (backward compatibility).
    expected = options_type_for_op(op)
    if expected is None:
        return None, None
    return default_options(expected), expected


def _custom_options(o: OperatorT, data, loc: str) -> bytes | None:
    size = int(getattr(o, "largeCustomOptionsSize", 0) or 0)
    if size:
        # Large models keep custom options after the FlatBuffer, like buffers with an offset.
        offset = int(o.largeCustomOptionsOffset or 0)
        if offset + size > len(data):
            raise ModelError(f"{loc}: custom options at offset {offset} size {size} run past the end of the file")
        return bytes(data[offset : offset + size])
    if o.customOptions is not None:
        return np.asarray(o.customOptions, dtype=np.uint8).tobytes()
    return None


# ---------------------------------------------------------------------------
# Writing.


def save_model(model: Model, path: str | os.PathLike | None = None, *, stamp_versions: bool = False) -> bytes:
    """Serialize a `Model` to .tflite bytes (and write them to `path` if given).

    With `stamp_versions`, builtin operators are first set to the versions TFLite's rules give
    them and the min_runtime_version metadata is written (`runtime.versioning.stamp_versions`).
    """
    if stamp_versions:
        model = _stamp_versions(model)
    raw = ModelT()
    raw.version = model.version
    raw.description = model.description or None
    raw.buffers = []
    for data in model.buffers:
        b = BufferT()
        if len(data):
            b.data = np.frombuffer(data, dtype=np.uint8)
        raw.buffers.append(b)
    code_index: dict[tuple[str, str | None, int], int] = {}
    raw.operatorCodes = []
    raw.subgraphs = []
    for sg in model.subgraphs:
        s = SubGraphT()
        s.name = sg.name or None
        s.inputs = list(sg.inputs)
        s.outputs = list(sg.outputs)
        s.tensors = [_tensor_to_object(t) for t in sg.tensors]
        s.operators = []
        for op in sg.operators:
            key = (op.op, op.custom_code if op.op == "CUSTOM" else None, op.version)
            if key not in code_index:
                oc = OperatorCodeT()
                code = BUILTIN_OPS[op.op]
                oc.builtinCode = code
                oc.deprecatedBuiltinCode = min(code, _PLACEHOLDER_FOR_GREATER_OP_CODES)
                oc.customCode = key[1]
                oc.version = op.version
                code_index[key] = len(raw.operatorCodes)
                raw.operatorCodes.append(oc)
            s.operators.append(_operator_to_object(op, code_index[key]))
        raw.subgraphs.append(s)
    raw.metadata = []
    for name, buf in model.metadata:
        m = MetadataT()
        m.name = name
        m.buffer = buf
        raw.metadata.append(m)
    raw.signatureDefs = []
    for sd in model.signature_defs:
        d = SignatureDefT()
        d.signatureKey = sd.key
        d.subgraphIndex = sd.subgraph_index
        d.inputs = [_tensor_map(n, i) for n, i in sd.inputs]
        d.outputs = [_tensor_map(n, i) for n, i in sd.outputs]
        raw.signatureDefs.append(d)
    builder = flatbuffers.Builder(1024 + sum(len(b) for b in model.buffers))
    builder.Finish(raw.Pack(builder), file_identifier=FILE_IDENTIFIER)
    out = bytes(builder.Output())
    if path is not None:
        Path(path).write_bytes(out)
    return out


def _tensor_map(name: str, index: int) -> TensorMapT:
    m = TensorMapT()
    m.name = name
    m.tensorIndex = index
    return m


def _tensor_to_object(t: Tensor) -> TensorT:
    o = TensorT()
    o.name = t.name
    o.type = TENSOR_TYPES[t.type]
    o.shape = list(t.shape)
    o.buffer = t.buffer
    o.isVariable = t.is_variable
    o.hasRank = t.has_rank
    if t.shape_signature is not None:
        o.shapeSignature = list(t.shape_signature)
    if t.quantization is not None:
        q = QuantizationParametersT()
        q.scale = list(t.quantization.scales) or None
        q.zeroPoint = list(t.quantization.zero_points) or None
        q.min = list(t.quantization.min) or None
        q.max = list(t.quantization.max) or None
        q.quantizedDimension = t.quantization.quantized_dimension
        o.quantization = q
    if t.sparsity is not None:
        o.sparsity = _sparsity_to_object(t.sparsity)
    return o


def _sparsity_to_object(s: Sparsity):
    from schema.tflite.DimensionMetadata import DimensionMetadataT
    from schema.tflite.Int32Vector import Int32VectorT
    from schema.tflite.SparseIndexVector import SparseIndexVector
    from schema.tflite.SparsityParameters import SparsityParametersT

    def vec(values):
        v = Int32VectorT()
        v.values = list(values)
        return v

    o = SparsityParametersT()
    o.traversalOrder = list(s.traversal_order)
    o.blockMap = list(s.block_map)
    o.dimMetadata = []
    for d in s.dim_metadata:
        dm = DimensionMetadataT()
        dm.format = 1 if d.format == "SPARSE_CSR" else 0
        dm.denseSize = d.dense_size
        if d.format == "SPARSE_CSR":
            dm.arraySegmentsType = SparseIndexVector.Int32Vector
            dm.arraySegments = vec(d.array_segments)
            dm.arrayIndicesType = SparseIndexVector.Int32Vector
            dm.arrayIndices = vec(d.array_indices)
        o.dimMetadata.append(dm)
    return o


def _operator_to_object(op: Operator, opcode_index: int) -> OperatorT:
    o = OperatorT()
    o.opcodeIndex = opcode_index
    o.inputs = list(op.inputs)
    o.outputs = list(op.outputs)
    if op.intermediates:
        o.intermediates = list(op.intermediates)
    if op.mutating_variable_inputs:
        o.mutatingVariableInputs = list(op.mutating_variable_inputs)
    if op.options is not None:
        type_name = op.options_type or options_type_for_op(op.op)
        if type_name is None:
            raise ModelError(f"{op.op} has no builtin options table, but options were given")
        o.builtinOptionsType = _OPTIONS_TYPES[type_name]
        o.builtinOptions = _options_to_object(type_name, op.options)
    if op.custom_options is not None:
        o.customOptions = list(op.custom_options)
    return o


def make_operator(op: str, inputs, outputs, *, version: int = 1, custom_code: str | None = None,
                  custom_options: bytes | None = None, **options: Any) -> Operator:
    """Build an Operator with its options table filled from defaults plus `options`."""
    if op not in BUILTIN_OPS:
        raise ModelError(f"unknown builtin op {op!r}")
    type_name = options_type_for_op(op) if op != "CUSTOM" else None
    opts = None
    if type_name is not None:
        opts = default_options(type_name)
        if options:
            opts = opts.replace(**options)
    elif options:
        raise ModelError(f"{op} takes no builtin options, got {sorted(options)}")
    return Operator(
        op=op,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        version=version,
        options=opts,
        options_type=type_name,
        custom_code=custom_code,
        custom_options=custom_options,
    )


__all__ = [
    "BUILTIN_OPS",
    "BUILTIN_OP_NAMES",
    "DEFAULT_MAX_TENSOR_BYTES",
    "DimensionMetadata",
    "Model",
    "Operator",
    "Options",
    "Quantization",
    "SignatureDef",
    "Sparsity",
    "Subgraph",
    "TENSOR_TYPES",
    "Tensor",
    "default_options",
    "load_model",
    "make_operator",
    "numpy_dtype",
    "options_type_for_op",
    "save_model",
    "tensor_type_for_dtype",
]
