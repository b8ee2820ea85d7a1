"""Pooling, MEAN, shape, slicing and resize nodes of the converter fixtures, each run alone against LiteRT.

The converter picks the quantization parameters and options here (e.g. MobileNet's int8 MEAN), so these
cases cover what real models feed the kernels, independently of the other ops in each model.
"""

from __future__ import annotations

import pytest
from support import check_against_litert, fixture_nodes, node_as_model

OPS = {"AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "RESHAPE", "SQUEEZE", "SHAPE", "PACK", "CONCATENATION", "PAD",
       "STRIDED_SLICE", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "RESIZE_BILINEAR"}


@pytest.mark.slow
@pytest.mark.parametrize(("model", "op"), fixture_nodes(OPS))
def test_fixture_node_matches_litert(model, op):
    check_against_litert(node_as_model(model, op))
