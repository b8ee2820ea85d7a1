"""Pooling, MEAN, shape, slicing and resize nodes of the converter fixtures, each run alone against LiteRT.

The converter picks the quantization parameters and options here (e.g. MobileNet's int8 MEAN), so these
cases cover what real models feed the kernels, independently of the other ops in each model.
"""

from __future__ import annotations

import pytest
from support import FIXTURES, Spec, check_against_litert, single_op_model

from runtime.model import load_model

OPS = {"AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "RESHAPE", "SQUEEZE", "SHAPE", "PACK", "CONCATENATION", "PAD",
       "STRIDED_SLICE", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "RESIZE_BILINEAR"}


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


@pytest.mark.parametrize(("model", "op"), list(_nodes()))
def test_fixture_node_matches_litert(model, op):
    inputs = [_spec(model, i) if i >= 0 else None for i in op.inputs]
    outputs = [_spec(model, i) for i in op.outputs]
    options = dict(op.options) if op.options is not None else {}
    check_against_litert(single_op_model(op.op, inputs, outputs, version=op.version, **options))
