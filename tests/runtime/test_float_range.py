"""Float kernels with a fused activation clamp to CalculateActivationRange's range even for NONE.

kernel_util.cc: a float NONE activation is [lowest, FLT_MAX], so LiteRT turns a sum that overflows
to +-inf into +-FLT_MAX; NaN passes through. Compared with LiteRT on every float op of the conv family.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, single_op_model

ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
BIG = np.float32(1e30)
# Overflow both ways, infinities in, NaN in, and ordinary values.
VALUES = np.array([1e30, -1e30, np.inf, -np.inf, np.nan, 2.0, -3.0, 0.5], np.float32)


def _model(op: str, activation: str) -> tuple[bytes, list[np.ndarray]]:
    act = ACTIVATIONS[activation]
    if op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        x = VALUES.reshape(1, 2, 4, 1)
        w = const(np.full((1, 1, 1, 1), BIG))
        model = single_op_model(op, [Spec(x.shape), w, const(np.zeros(1, np.float32))], [Spec(x.shape)],
                                stride_w=1, stride_h=1, padding=1, fused_activation_function=act)
        return model, [x]
    if op == "FULLY_CONNECTED":
        x = VALUES.reshape(8, 1)
        model = single_op_model(op, [Spec((8, 1)), const(np.full((1, 1), BIG)), const(np.zeros(1, np.float32))],
                                [Spec((8, 1))], fused_activation_function=act)
        return model, [x]
    if op == "TRANSPOSE_CONV":
        x = VALUES.reshape(1, 2, 4, 1)
        model = single_op_model(op, [const(np.array([1, 2, 4, 1], np.int32)), const(np.full((1, 1, 1, 1), BIG)),
                                     Spec(x.shape), const(np.zeros(1, np.float32))], [Spec(x.shape)],
                                padding=1, stride_w=1, stride_h=1, fused_activation_function=act)
        return model, [x]
    assert op == "CONV_3D"
    x = VALUES.reshape(1, 2, 2, 2, 1)
    model = single_op_model(op, [Spec(x.shape), const(np.full((1, 1, 1, 1, 1), BIG))], [Spec(x.shape)],
                            padding=1, stride_d=1, stride_h=1, stride_w=1, fused_activation_function=act)
    return model, [x]


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "CONV_3D"])
def test_overflow_and_infinities_clamp_like_litert(op, activation):
    model, inputs = _model(op, activation)
    (out,) = check_against_litert(model, inputs)
    finite = out[~np.isnan(out)]
    assert np.isfinite(finite).all() and finite.size >= 6
