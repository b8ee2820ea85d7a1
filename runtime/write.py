"""The IR -> .tflite bytes: `save_model` builds a fresh FlatBuffer from a `accelsim.runtime.ir.Model`."""

from __future__ import annotations

import os
from pathlib import Path

import flatbuffers
import numpy as np

from accelsim.runtime.errors import ModelError
from accelsim.runtime.ir import (
    _OPTIONS_2_TYPES,
    _OPTIONS_TYPES,
    _PLACEHOLDER_FOR_GREATER_OP_CODES,
    BUILTIN_OPS,
    FILE_IDENTIFIER,
    TENSOR_TYPES,
    AbsentData,
    Model,
    Operator,
    Sparsity,
    Tensor,
    _options_to_object,
    options_type_for_op,
)
from accelsim.runtime.versioning import stamp_versions as _stamp_versions
from accelsim.schema.tflite.BlockwiseQuantization import BlockwiseQuantizationT
from accelsim.schema.tflite.Buffer import BufferT
from accelsim.schema.tflite.Metadata import MetadataT
from accelsim.schema.tflite.Model import ModelT
from accelsim.schema.tflite.Operator import OperatorT
from accelsim.schema.tflite.OperatorCode import OperatorCodeT
from accelsim.schema.tflite.QuantizationDetails import QuantizationDetails
from accelsim.schema.tflite.QuantizationParameters import QuantizationParametersT
from accelsim.schema.tflite.SignatureDef import SignatureDefT
from accelsim.schema.tflite.SubGraph import SubGraphT
from accelsim.schema.tflite.Tensor import TensorT
from accelsim.schema.tflite.TensorMap import TensorMapT


def save_model(model: Model, path: str | os.PathLike | None = None, *, stamp_versions: bool = False) -> bytes:
    """Serialize a `Model` to .tflite bytes (and write them to `path` if given).

    With `stamp_versions`, builtin operators are first set to the versions TFLite's rules give
    them and the min_runtime_version metadata is written (`accelsim.runtime.versioning.stamp_versions`).
    """
    if stamp_versions:
        model = _stamp_versions(model)
    raw = ModelT()
    raw.version = model.version
    raw.description = model.description or None
    raw.buffers = []
    for i, data in enumerate(model.buffers):
        if isinstance(data, AbsentData):
            raise ModelError(f"buffer {i} is absent (a cost-only model's weights): build it with weights to write it")
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
        if t.quantization.blockwise:
            details = BlockwiseQuantizationT()
            details.scales = t.quantization.block_scales
            details.zeroPoints = t.quantization.block_zero_points
            details.blockSize = t.quantization.block_size
            q.detailsType = QuantizationDetails.BlockwiseQuantization
            q.details = details
        o.quantization = q
    if t.sparsity is not None:
        o.sparsity = _sparsity_to_object(t.sparsity)
    return o


def _sparsity_to_object(s: Sparsity):
    from accelsim.schema.tflite.DimensionMetadata import DimensionMetadataT
    from accelsim.schema.tflite.Int32Vector import Int32VectorT
    from accelsim.schema.tflite.SparseIndexVector import SparseIndexVector
    from accelsim.schema.tflite.SparsityParameters import SparsityParametersT

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
    if op.options_2 is not None:
        o.builtinOptions2Type = _OPTIONS_2_TYPES[op.options_2_type]
        o.builtinOptions2 = _options_to_object(op.options_2_type, op.options_2)
    if op.custom_options is not None:
        o.customOptions = list(op.custom_options)
    return o
