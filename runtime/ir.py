"""The immutable graph IR of a .tflite model: Model, Subgraph, Tensor, Operator, Quantization, Options.

Frozen dataclasses and lookup tables only; `accelsim.runtime.read` builds them from .tflite bytes and
`accelsim.runtime.write` turns them back into bytes, so no FlatBuffer object leaks past those two modules.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelsim.runtime.errors import ModelError
from accelsim.schema.tflite import BuiltinOperator as _bo_mod
from accelsim.schema.tflite import BuiltinOptions as _bopt_mod
from accelsim.schema.tflite import BuiltinOptions2 as _bopt2_mod
from accelsim.schema.tflite import TensorType as _tt_mod

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3
# Codes above this live only in `builtin_code`; `deprecated_builtin_code` holds
# PLACEHOLDER_FOR_GREATER_OP_CODES (schema v3a rule: the op is the max of both).
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127


def _enum_members(cls) -> dict[str, int]:
    return {k: v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


BUILTIN_OPS: dict[str, int] = _enum_members(_bo_mod.BuiltinOperator)
BUILTIN_OP_NAMES: dict[int, str] = {v: k for k, v in BUILTIN_OPS.items()}
TENSOR_TYPES: dict[str, int] = _enum_members(_tt_mod.TensorType)
TENSOR_TYPE_NAMES: dict[int, str] = {v: k for k, v in TENSOR_TYPES.items()}
_OPTIONS_TYPES: dict[str, int] = _enum_members(_bopt_mod.BuiltinOptions)
_OPTIONS_TYPE_NAMES: dict[int, str] = {v: k for k, v in _OPTIONS_TYPES.items()}
_OPTIONS_2_TYPES: dict[str, int] = _enum_members(_bopt2_mod.BuiltinOptions2)
_OPTIONS_2_TYPE_NAMES: dict[int, str] = {v: k for k, v in _OPTIONS_2_TYPES.items()}

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
    # INT4 is stored packed, two values a byte (low nibble first); in memory it is unpacked to int8.
    "INT4": np.dtype(np.int8),
    "COMPLEX64": np.dtype(np.complex64),
    "COMPLEX128": np.dtype(np.complex128),
    "STRING": np.dtype(object),
    "RESOURCE": np.dtype(np.int32),
    "VARIANT": np.dtype(object),
}
_TYPE_FOR_DTYPE = {v: k for k, v in reversed(list(_NUMPY_DTYPES.items())) if k not in ("RESOURCE", "INT4")}

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
    module = __import__(f"accelsim.schema.tflite.{type_name}", fromlist=[type_name])
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


class AbsentData:
    """A constant buffer's place holder with its size but no bytes: a cost-only model's weights.

    `Model.constant` gives a read-only zero view of the tensor's shape (no memory), so a full-size model is
    sized and costed without its weights; `save_model` refuses to write it.
    """

    __slots__ = ("nbytes",)

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)

    def __len__(self) -> int:
        return self.nbytes

    def __repr__(self) -> str:
        return f"AbsentData({self.nbytes})"


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per axis."""

    scales: tuple[float, ...] = ()
    zero_points: tuple[int, ...] = ()
    quantized_dimension: int = 0
    min: tuple[float, ...] = ()
    max: tuple[float, ...] = ()
    # Blockwise quantization (schema BlockwiseQuantization): every `block_size` consecutive values along the
    # last dimension share one scale, read from the FLOAT16 tensor `block_scales` of the same subgraph
    # ([rows, columns / block_size]); `block_zero_points` is a tensor index too (-1: symmetric).
    block_size: int = 0
    block_scales: int = -1
    block_zero_points: int = -1

    @property
    def is_quantized(self) -> bool:
        return len(self.scales) > 0

    @property
    def blockwise(self) -> bool:
        return self.block_size > 0

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
    # builtin_options_2 (StableHLO ops): STABLEHLO_COMPOSITE's StableHLOCompositeOptions (name,
    # decomposition_subgraph_index, composite_attributes, composite_attributes_format, version).
    options_2: Options | None = None
    options_2_type: str | None = None

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
        if isinstance(data, AbsentData):
            return np.broadcast_to(np.zeros((), t.dtype), t.shape)
        if t.type == "STRING":
            return _string_array(data, t.shape)
        if t.type == "INT4":
            return unpack_int4(data, t.shape)
        arr = np.frombuffer(data, dtype=t.dtype)
        return arr.reshape(t.shape)

    def metadata_value(self, name: str) -> bytes | None:
        for key, buf in self.metadata:
            if key == name:
                return bytes(self.buffer_bytes(buf))
        return None

    def replace(self, **changes: Any) -> Model:
        return dataclasses.replace(self, **changes)


def int4_bytes(count: int) -> int:
    """The bytes `count` INT4 values take packed (two a byte)."""
    return (count + 1) // 2


def unpack_int4(data, shape: tuple[int, ...]) -> np.ndarray:
    """Packed INT4 bytes (low nibble first, as TFLite's tensor_utils::UnpackDenseInt4IntoInt8) as int8 values."""
    count = int(np.prod(shape, dtype=np.int64))
    packed = np.frombuffer(data, dtype=np.uint8, count=int4_bytes(count))
    low = (packed << 4).astype(np.int8) >> 4
    high = packed.astype(np.int8) >> 4
    out = np.empty(2 * len(packed), dtype=np.int8)
    out[0::2], out[1::2] = low, high
    arr = out[:count].reshape(shape)
    arr.flags.writeable = False
    return arr


def pack_int4(values: np.ndarray) -> bytes:
    """int8 values in [-8, 7] packed two a byte, low nibble first (the inverse of `unpack_int4`)."""
    flat = np.asarray(values, dtype=np.int8).reshape(-1)
    if len(flat) % 2:
        flat = np.concatenate([flat, np.zeros(1, np.int8)])
    nib = flat.astype(np.uint8) & 0x0F
    return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8).tobytes()


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
