"""schema/ against LiteRT: wire-compatible with the schema module LiteRT ships, and models it runs.

The flatc-generated schema module that ships inside ai-edge-litert
(ai_edge_litert.schema_py_generated), which LiteRT itself was built against, is compared class by
class with ours. Models built with our object API must load and compute correctly in LiteRT's
interpreter. (The flatc checks, which need no LiteRT, are in test_schema.py.)
"""

from __future__ import annotations

import importlib
import inspect
import math
import re

import flatbuffers
import numpy as np
import pytest

from accelsim.schema.tflite.ActivationFunctionType import ActivationFunctionType
from accelsim.schema.tflite.AddOptions import AddOptionsT
from accelsim.schema.tflite.Buffer import BufferT
from accelsim.schema.tflite.BuiltinOperator import BuiltinOperator
from accelsim.schema.tflite.BuiltinOptions import BuiltinOptions
from accelsim.schema.tflite.Conv2DOptions import Conv2DOptionsT
from accelsim.schema.tflite.GeluOptions import GeluOptionsT
from accelsim.schema.tflite.Model import ModelT
from accelsim.schema.tflite.Operator import OperatorT
from accelsim.schema.tflite.OperatorCode import OperatorCodeT
from accelsim.schema.tflite.Padding import Padding
from accelsim.schema.tflite.SignatureDef import SignatureDefT
from accelsim.schema.tflite.SubGraph import SubGraphT
from accelsim.schema.tflite.Tensor import TensorT
from accelsim.schema.tflite.TensorMap import TensorMapT
from accelsim.schema.tflite.TensorType import TensorType

litert_interpreter = pytest.importorskip("ai_edge_litert.interpreter")
upstream = pytest.importorskip("ai_edge_litert.schema_py_generated")


# --- the whole schema against the one LiteRT ships ------------------------------------------


def _classes(module) -> dict[str, type]:
    """The classes a module defines itself (not the ones it imports)."""
    return {
        k: v
        for k, v in vars(module).items()
        if inspect.isclass(v) and v.__module__ == module.__name__
    }


def _our_class(name: str) -> type:
    return getattr(importlib.import_module(f"accelsim.schema.tflite.{name.removesuffix('T')}"), name)


UPSTREAM_CLASSES = _classes(upstream)
UPSTREAM_TABLES = sorted(n for n, c in UPSTREAM_CLASSES.items() if hasattr(c, "Init"))
UPSTREAM_OBJECTS = sorted(n + "T" for n in UPSTREAM_TABLES if n + "T" in UPSTREAM_CLASSES)
UPSTREAM_ENUMS = sorted(set(UPSTREAM_CLASSES) - set(UPSTREAM_TABLES) - set(UPSTREAM_OBJECTS))


def _constants(cls: type) -> dict[str, int]:
    return {k: v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


def test_upstream_module_was_introspected():
    # Guards the parametrized tests below against silently testing nothing.
    assert len(UPSTREAM_TABLES) > 150 and "Model" in UPSTREAM_TABLES
    expected_enums = {"BuiltinOperator", "BuiltinOptions", "BuiltinOptions2", "TensorType"}
    assert expected_enums <= set(UPSTREAM_ENUMS)


@pytest.mark.parametrize("name", UPSTREAM_ENUMS)
def test_enum_and_union_values_match_litert(name):
    ours, theirs = _constants(_our_class(name)), _constants(UPSTREAM_CLASSES[name])
    assert {k: ours.get(k) for k in theirs} == theirs
    # Anything we know beyond LiteRT's release must have been appended after it.
    newer = set(ours) - set(theirs)
    assert all(ours[k] > max(theirs.values()) for k in newer)


_OFFSET = re.compile(r"self\._tab\.Offset\((\d+)\)")
_NUMBER_TYPE = re.compile(r"number_types\.(\w+Flags)")


def _layout(table: type) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Accessor name -> (vtable offset, scalar types it reads) for a generated table class."""
    layout = {}
    for name, member in vars(table).items():
        if inspect.isfunction(member):
            source = inspect.getsource(member)
            offset = _OFFSET.search(source)
            if offset:
                layout[name] = (int(offset.group(1)), tuple(_NUMBER_TYPE.findall(source)))
    return layout


@pytest.mark.parametrize("name", UPSTREAM_TABLES)
def test_table_layout_matches_litert(name):
    ours, theirs = _layout(_our_class(name)), _layout(UPSTREAM_CLASSES[name])
    assert {k: ours.get(k) for k in theirs} == theirs
    newer = {k: v for k, v in ours.items() if k not in theirs}
    last = max((offset for offset, _ in theirs.values()), default=2)
    assert all(offset > last for offset, _ in newer.values()), f"not appended: {newer}"


@pytest.mark.parametrize("name", UPSTREAM_OBJECTS)
def test_object_api_defaults_match_litert(name):
    ours, theirs = vars(_our_class(name)()), vars(UPSTREAM_CLASSES[name]())
    assert {k: ours.get(k, "<missing>") for k in theirs} == theirs


# --- (b) models built with our object API run in LiteRT ----------------------------------


def _tensor(name: str, shape: list[int], buffer: int = 0) -> TensorT:
    tensor = TensorT()
    tensor.name = name
    tensor.shape = shape
    tensor.type = TensorType.FLOAT32
    tensor.buffer = buffer
    return tensor


def _constant(values: np.ndarray) -> BufferT:
    buffer = BufferT()
    buffer.data = np.ascontiguousarray(values, dtype=np.float32).view(np.uint8).ravel()
    return buffer


def _opcode(code: int, version: int = 1) -> OperatorCodeT:
    opcode = OperatorCodeT()
    # TFLite's writer rule: codes past 126 leave the placeholder in the old one-byte field.
    opcode.deprecatedBuiltinCode = min(code, BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES)
    opcode.builtinCode = code
    opcode.version = version
    return opcode


def _operator(inputs, outputs, options_type=BuiltinOptions.NONE, options=None) -> OperatorT:
    op = OperatorT()
    op.opcodeIndex = 0
    op.inputs = list(inputs)
    op.outputs = list(outputs)
    op.builtinOptionsType = options_type
    op.builtinOptions = options
    return op


def _serialize(opcode, op, tensors, inputs, outputs, constants=(), signature=None) -> bytes:
    """One-operator model; buffer 0 is the empty sentinel, constants follow in order."""
    subgraph = SubGraphT()
    subgraph.tensors = tensors
    subgraph.inputs = inputs
    subgraph.outputs = outputs
    subgraph.operators = [op]
    subgraph.name = "main"

    model = ModelT()
    model.version = 3
    model.description = "accelsim schema test"
    model.operatorCodes = [opcode]
    model.subgraphs = [subgraph]
    model.buffers = [BufferT(), *constants]
    if signature is not None:
        model.signatureDefs = [signature]

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _litert(model: bytes):
    interpreter = litert_interpreter.Interpreter(
        model_content=model,
        experimental_op_resolver_type=litert_interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    interpreter.allocate_tensors()
    return interpreter


def _invoke(model: bytes, *inputs: np.ndarray) -> np.ndarray:
    interpreter = _litert(model)
    for detail, value in zip(interpreter.get_input_details(), inputs, strict=True):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


def test_litert_runs_add_with_fused_relu():
    options = AddOptionsT()
    options.fusedActivationFunction = ActivationFunctionType.RELU
    model = _serialize(
        _opcode(BuiltinOperator.ADD),
        _operator([0, 1], [2], BuiltinOptions.AddOptions, options),
        [_tensor("a", [1, 2, 2, 1]), _tensor("b", [1, 2, 2, 1]), _tensor("sum", [1, 2, 2, 1])],
        inputs=[0, 1],
        outputs=[2],
    )
    a = np.array([1.5, -2.0, 3.25, -0.5], np.float32).reshape(1, 2, 2, 1)
    b = np.array([0.25, 1.0, -4.0, 2.0], np.float32).reshape(1, 2, 2, 1)

    np.testing.assert_array_equal(_invoke(model, a, b), np.maximum(a + b, 0))


def _conv2d_reference(x, w, bias, stride, dilation):
    """NHWC input, OHWI filter, TFLite's SAME padding (an odd padding pixel goes after)."""
    _, in_h, in_w, _ = x.shape
    out_c, k_h, k_w, _ = w.shape
    (s_h, s_w), (d_h, d_w) = stride, dilation
    out_h, out_w = math.ceil(in_h / s_h), math.ceil(in_w / s_w)
    pad_h = max((out_h - 1) * s_h + (k_h - 1) * d_h + 1 - in_h, 0)
    pad_w = max((out_w - 1) * s_w + (k_w - 1) * d_w + 1 - in_w, 0)
    padded = np.pad(
        x.astype(np.float64),
        ((0, 0), (pad_h // 2, pad_h - pad_h // 2), (pad_w // 2, pad_w - pad_w // 2), (0, 0)),
    )
    y = np.zeros((1, out_h, out_w, out_c))
    for ki in range(k_h):
        for kj in range(k_w):
            rows = slice(ki * d_h, ki * d_h + (out_h - 1) * s_h + 1, s_h)
            cols = slice(kj * d_w, kj * d_w + (out_w - 1) * s_w + 1, s_w)
            y += padded[:, rows, cols, :] @ w[:, ki, kj, :].T
    return (y + bias).astype(np.float32)


def test_litert_runs_conv2d_with_all_options():
    # Distinct strides and dilations per axis catch swapped or misplaced option fields.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 7, 8, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    options = Conv2DOptionsT()
    options.padding = Padding.SAME
    options.strideH, options.strideW = 2, 1
    options.dilationHFactor, options.dilationWFactor = 1, 2
    model = _serialize(
        _opcode(BuiltinOperator.CONV_2D),
        _operator([0, 1, 2], [3], BuiltinOptions.Conv2DOptions, options),
        [
            _tensor("input", list(x.shape)),
            _tensor("filter", list(w.shape), buffer=1),
            _tensor("bias", list(bias.shape), buffer=2),
            _tensor("output", [1, 4, 8, 3]),
        ],
        inputs=[0],
        outputs=[3],
        constants=[_constant(w), _constant(bias)],
    )

    expected = _conv2d_reference(x, w, bias, stride=(2, 1), dilation=(1, 2))
    np.testing.assert_allclose(_invoke(model, x), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("approximate", [False, True])
def test_litert_runs_an_op_code_above_127(approximate):
    # GELU (150) exists only in OperatorCode.builtin_code; its option toggles the formula.
    options = GeluOptionsT()
    options.approximate = approximate
    model = _serialize(
        _opcode(BuiltinOperator.GELU, version=1),
        _operator([0], [1], BuiltinOptions.GeluOptions, options),
        [_tensor("x", [8]), _tensor("y", [8])],
        inputs=[0],
        outputs=[1],
    )
    x = np.linspace(-3, 3, 8).astype(np.float64)
    if approximate:
        expected = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    else:
        expected = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))

    np.testing.assert_allclose(_invoke(model, x.astype(np.float32)), expected, atol=1e-5)


def test_litert_reads_signature_defs():
    signature = SignatureDefT()
    signature.signatureKey = "serving_default"
    signature.subgraphIndex = 0
    signature.inputs = [TensorMapT(), TensorMapT()]
    for tensor_map, name, index in zip(signature.inputs, ("lhs", "rhs"), (0, 1), strict=True):
        tensor_map.name, tensor_map.tensorIndex = name, index
    output = TensorMapT()
    output.name, output.tensorIndex = "total", 2
    signature.outputs = [output]
    model = _serialize(
        _opcode(BuiltinOperator.ADD),
        _operator([0, 1], [2], BuiltinOptions.AddOptions, AddOptionsT()),
        [_tensor("a", [3]), _tensor("b", [3]), _tensor("c", [3])],
        inputs=[0, 1],
        outputs=[2],
        signature=signature,
    )
    interpreter = _litert(model)

    assert interpreter.get_signature_list() == {
        "serving_default": {"inputs": ["lhs", "rhs"], "outputs": ["total"]}
    }
    runner = interpreter.get_signature_runner("serving_default")
    result = runner(lhs=np.array([1, 2, 3], np.float32), rhs=np.array([10, 20, 30], np.float32))
    np.testing.assert_array_equal(result["total"], [11, 22, 33])


def test_our_model_reads_back_through_litert_schema_module():
    options = Conv2DOptionsT()
    options.strideW, options.strideH = 3, 4
    options.dilationWFactor, options.dilationHFactor = 5, 6
    options.quantizedBiasType = TensorType.INT64
    model = _serialize(
        _opcode(BuiltinOperator.CUMSUM),
        _operator([0, 1], [2], BuiltinOptions.Conv2DOptions, options),
        [_tensor("a", [1]), _tensor("b", [1]), _tensor("c", [1])],
        inputs=[0, 1],
        outputs=[2],
    )

    parsed = upstream.Model.GetRootAs(model, 0)
    assert upstream.Model.ModelBufferHasIdentifier(model, 0)
    code = parsed.OperatorCodes(0)
    assert (code.DeprecatedBuiltinCode(), code.BuiltinCode()) == (127, BuiltinOperator.CUMSUM)
    op = parsed.Subgraphs(0).Operators(0)
    assert op.BuiltinOptionsType() == upstream.BuiltinOptions.Conv2DOptions
    conv = upstream.Conv2DOptions()
    conv.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
    assert (conv.StrideW(), conv.StrideH()) == (3, 4)
    assert (conv.DilationWFactor(), conv.DilationHFactor()) == (5, 6)
    assert conv.QuantizedBiasType() == upstream.TensorType.INT64
