"""TRANSPOSE_CONV, RESIZE_NEAREST_NEIGHBOR and BATCH_MATMUL nodes of the converter fixtures, each run alone.

The converter picks the shapes, options and quantization here (segmentation_float's Conv2DTranspose with
and without bias and its nearest resize, the transformer blocks' attention matmuls in float and int8).
Sparse FULLY_CONNECTED nodes are covered in test_fully_connected.py.
"""

from __future__ import annotations

import pytest
from support import FIXTURES, check_against_litert, fixture_nodes, node_as_model

OPS = {"TRANSPOSE_CONV", "RESIZE_NEAREST_NEIGHBOR", "BATCH_MATMUL"}


NODES = fixture_nodes(OPS)


def test_fixtures_hold_these_ops():
    found = {param.values[1].op for param in NODES}
    assert found == OPS


@pytest.mark.parametrize(("model", "op"), NODES)
def test_fixture_node_matches_litert(model, op):
    for seed in range(2):
        check_against_litert(node_as_model(model, op), seed=seed)


def test_segmentation_model_matches_litert():
    model = (FIXTURES / "segmentation_float.tflite").read_bytes()
    for seed in range(3):
        out = check_against_litert(model, seed=seed)[0]
    assert out.shape == (1, 64, 64, 5)
