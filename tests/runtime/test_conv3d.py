"""CONV_3D against LiteRT: geometry (padding, strides, dilation), bias, activations; and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, prepare_error, single_op_model

ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
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


def out_size(n, k, s, d, padding):
    effective = (k - 1) * d + 1
    return -(-n // s) if padding == SAME else (n - effective + s) // s


def conv3d_model(in_shape, kernel, cout, stride, dilation, padding, bias=True, activation="NONE", seed=0,
                 filter_input=False) -> bytes:
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((*kernel, in_shape[4], cout)).astype(np.float32)
    out_shape = (in_shape[0], *(out_size(n, k, s, d, padding)
                                for n, k, s, d in zip(in_shape[1:4], kernel, stride, dilation)), cout)
    inputs = [Spec(in_shape), Spec(w.shape) if filter_input else const(w)]
    if bias:
        inputs.append(const(rng.standard_normal(cout).astype(np.float32)))
    return single_op_model("CONV_3D", inputs, [Spec(out_shape)], padding=padding,
                           stride_d=stride[0], stride_h=stride[1], stride_w=stride[2],
                           dilation_d_factor=dilation[0], dilation_h_factor=dilation[1],
                           dilation_w_factor=dilation[2], fused_activation_function=ACTIVATIONS[activation])


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
    from runtime.resolver import BuiltinOpResolver

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
