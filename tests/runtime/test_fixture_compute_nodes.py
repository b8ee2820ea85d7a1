"""TRANSPOSE_CONV, RESIZE_NEAREST_NEIGHBOR and BATCH_MATMUL nodes of the converter fixtures, each run alone.

The converter picks the shapes, options and quantization here (segmentation_float's Conv2DTranspose with
and without bias and its nearest resize, the transformer blocks' attention matmuls in float and int8).
Sparse FULLY_CONNECTED nodes are covered in test_fully_connected.py.
"""

from __future__ import annotations

import pytest
from support import FIXTURES, Spec, check_against_litert, single_op_model

from runtime.model import load_model

OPS = {"TRANSPOSE_CONV", "RESIZE_NEAREST_NEIGHBOR", "BATCH_MATMUL"}


def _spec(model, tensor_index: int) -> Spec:
    t = model.subgraphs[0].tensors[tensor_index]
    q = t.quantization
    quant = {}
    if q is not None and q.scales:
        quant = {"scale": q.scales, "zero_point": q.zero_points, "quantized_dimension": q.quantized_dimension}
    return Spec(t.shape, t.type, model.constant(0, tensor_index), **quant)


def _nodes():
    for path in sorted(FIXTURES.glob("*.tflite")):
        model = load_model(path.read_bytes())
        for index, op in enumerate(model.subgraphs[0].operators):
            if op.op in OPS:
                yield pytest.param(model, op, id=f"{path.stem}-{index}-{op.op}-v{op.version}")


NODES = list(_nodes())


def test_fixtures_hold_these_ops():
    found = {param.values[1].op for param in NODES}
    assert found == OPS


@pytest.mark.parametrize(("model", "op"), NODES)
def test_fixture_node_matches_litert(model, op):
    inputs = [_spec(model, i) if i >= 0 else None for i in op.inputs]
    outputs = [_spec(model, i) for i in op.outputs]
    options = dict(op.options) if op.options is not None else {}
    for seed in range(2):
        check_against_litert(single_op_model(op.op, inputs, outputs, version=op.version, **options), seed=seed)


def test_segmentation_model_matches_litert():
    model = (FIXTURES / "segmentation_float.tflite").read_bytes()
    for seed in range(3):
        out = check_against_litert(model, seed=seed)[0]
    assert out.shape == (1, 64, 64, 5)
