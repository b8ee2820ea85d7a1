""".tflite bytes -> the IR: `load_model` parses through the flatc-generated object API in `accelsim.schema.tflite`
and returns frozen dataclasses (`accelsim.runtime.ir`), checking every index and size on the way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from accelsim.runtime.errors import ModelError
from accelsim.runtime.ir import (
    _NUMPY_DTYPES,
    _OPTIONS_2_TYPE_NAMES,
    _OPTIONS_TYPE_NAMES,
    BUILTIN_OP_NAMES,
    FILE_IDENTIFIER,
    TENSOR_TYPE_NAMES,
    DimensionMetadata,
    Model,
    Operator,
    Options,
    Quantization,
    SignatureDef,
    Sparsity,
    Subgraph,
    Tensor,
    _options_from_object,
    _string_offsets,
    default_options,
    int4_bytes,
    options_type_for_op,
)
from accelsim.runtime.verify import verify_model
from accelsim.schema.tflite.Buffer import BufferT
from accelsim.schema.tflite.Model import ModelT
from accelsim.schema.tflite.Operator import OperatorT
from accelsim.schema.tflite.QuantizationDetails import QuantizationDetails
from accelsim.schema.tflite.QuantizationParameters import QuantizationParametersT
from accelsim.schema.tflite.SubGraph import SubGraphT

# A tensor larger than this is refused before anything is allocated.
DEFAULT_MAX_TENSOR_BYTES = 2 << 30
# The most dimensions a NumPy array can have (NPY_MAXDIMS): a tensor of higher rank cannot be held.
_MAX_RANK = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32


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

    The FlatBuffer is verified structurally first (`accelsim.runtime.verify`), so corrupt
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
    if int(q.detailsType or 0) == QuantizationDetails.BlockwiseQuantization and q.details is not None:
        # schema.fbs BlockwiseQuantization: scales (and zero points, -1 when symmetric) are tensors.
        block = int(q.details.blockSize)
        if block <= 0 or not shape or shape[-1] % block:
            raise ModelError(f"{loc}: blockwise quantization block_size {block} must be positive and divide the "
                             f"last dimension of shape {list(shape)}")
        return Quantization(scales, zps, int(q.quantizedDimension or 0), mins, maxs, block_size=block,
                            block_scales=int(q.details.scales), block_zero_points=int(q.details.zeroPoints))
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
        extra_type = _OPTIONS_2_TYPE_NAMES.get(int(o.builtinOptions2Type or 0)) if extra is not None else None
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
                options_2=extra,
                options_2_type=extra_type,
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
    nbytes = int4_bytes(count) if t.type == "INT4" else count * dtype.itemsize if dtype is not None else 0
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
