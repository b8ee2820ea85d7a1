"""CONV_3D against LiteRT: geometry (padding, strides, dilation), bias, activations; and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from op_models import ACTIVATIONS, conv3d_model
from support import Spec, check_against_litert, const, prepare_error, single_op_model

SAME, VALID = 0, 1
# (input [n, d, h, w, c], kernel (kd, kh, kw), out channels, stride (d, h, w), dilation (d, h, w), padding)
GEOMETRIES = [
    ((1, 4, 5, 6, 3), (3, 3, 3), 4, (1, 1, 1), (1, 1, 1), SAME),
    ((1, 4, 5, 6, 3), (3, 3, 3), 4, (1, 1, 1), (1, 1, 1), VALID),
    ((2, 5, 6, 7, 2), (2, 3, 2), 5, (2, 1, 3), (1, 1, 1), SAME),
    ((1, 6, 7, 5, 4), (3, 2, 3), 3, (2, 2, 1), (1, 1, 1), VALID),
    ((1, 7, 8, 9, 2), (3, 3, 3), 6, (1, 1, 1), (2, 3, 1), SAME),
    ((1, 7, 8, 9, 2), (2, 3, 2), 6, (1, 2, 1), (3, 1, 2), VALID),
    ((1, 3, 4, 4, 8), (1, 1, 1), 16, (1, 1, 1), (1, 1, 1), VALID),
    ((1, 1, 3, 3, 3), (3, 3, 3), 2, (1, 1, 1), (1, 1, 1), SAME),  # depth 1 under a depth-3 window
    ((1, 5, 5, 5, 1), (5, 5, 5), 1, (3, 3, 3), (1, 1, 1), SAME),
]


def _geometry_id(g) -> str:
    return "x".join(map(str, g[0])) + f"-k{g[1]}-s{g[3]}-d{g[4]}-p{g[5]}"


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=_geometry_id)
def test_geometry_matches_litert(geometry):
    check_against_litert(conv3d_model(*geometry))


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("bias", [True, False])
def test_bias_and_activation_match_litert(activation, bias):
    model = conv3d_model((1, 4, 5, 6, 3), (3, 3, 3), 4, (1, 2, 1), (1, 1, 1), SAME, bias=bias,
                         activation=activation, seed=3)
    check_against_litert(model)


def test_filter_given_at_run_time_matches_litert():
    """A non-constant filter (an input) is reshaped at invoke instead of in prepare."""
    check_against_litert(conv3d_model((1, 4, 4, 4, 2), (2, 2, 2), 3, (1, 1, 1), (1, 1, 1), VALID,
                                      filter_input=True))


def test_resolver_knows_version_1_only():
    from accelsim.runtime.resolver import BuiltinOpResolver

    resolver = BuiltinOpResolver()
    assert resolver.find_op("CONV_3D", 1) is not None
    assert resolver.find_op("CONV_3D", 2) is None


def test_channel_mismatch_is_refused():
    w = const(np.zeros((2, 2, 2, 3, 4), np.float32))
    model = single_op_model("CONV_3D", [Spec((1, 4, 4, 4, 2)), w], [Spec((1, 3, 3, 3, 4))], padding=VALID,
                            stride_d=1, stride_h=1, stride_w=1)
    message = prepare_error(model)
    assert "CONV_3D" in message and "2 channels" in message and "expects 3" in message


def test_four_d_input_is_refused():
    w = const(np.zeros((2, 2, 2, 3, 4), np.float32))
    model = single_op_model("CONV_3D", [Spec((1, 4, 4, 3)), w], [Spec((1, 3, 3, 3, 4))], padding=VALID,
                            stride_d=1, stride_h=1, stride_w=1)
    assert "input must be 5-D" in prepare_error(model)


def test_int8_input_is_refused():
    w = const(np.zeros((2, 2, 2, 2, 4), np.int8), scale=0.1, zero_point=0)
    model = single_op_model("CONV_3D", [Spec((1, 4, 4, 4, 2), "INT8", scale=0.1, zero_point=0), w],
                            [Spec((1, 3, 3, 3, 4), "INT8", scale=0.1, zero_point=0)], padding=VALID,
                            stride_d=1, stride_h=1, stride_w=1)
    assert "input must be FLOAT32, got INT8" in prepare_error(model)


def test_bias_of_the_wrong_length_is_refused():
    w = const(np.zeros((2, 2, 2, 2, 4), np.float32))
    b = const(np.zeros(3, np.float32))
    model = single_op_model("CONV_3D", [Spec((1, 4, 4, 4, 2)), w, b], [Spec((1, 3, 3, 3, 4))], padding=VALID,
                            stride_d=1, stride_h=1, stride_w=1)
    assert "bias has 3 elements, expected 4" in prepare_error(model)


def test_zero_stride_is_refused():
    w = const(np.zeros((2, 2, 2, 2, 4), np.float32))
    model = single_op_model("CONV_3D", [Spec((1, 4, 4, 4, 2)), w], [Spec((1, 3, 3, 3, 4))], padding=VALID,
                            stride_d=0, stride_h=1, stride_w=1)
    assert "must be positive" in prepare_error(model)
