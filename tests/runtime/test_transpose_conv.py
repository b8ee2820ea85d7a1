"""TRANSPOSE_CONV against LiteRT: float32, int8 (per-channel and per-tensor), uint8; geometry, bias, activations."""

from __future__ import annotations

import numpy as np
import pytest
from op_models import tc_model
from support import Spec, check_against_litert, const, prepare_error, run_litert, single_op_model

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter

SAME, VALID = 0, 1
KINDS = ("float", "int8_per_channel", "int8_per_tensor", "uint8")
# (input shape, out channels, kernel, stride, padding, output height/width)
GEOMETRIES = [
    ((1, 4, 4, 3), 5, (3, 3), (2, 2), SAME, (8, 8)),
    ((1, 4, 4, 3), 5, (3, 3), (2, 2), SAME, (7, 7)),
    ((2, 5, 6, 4), 8, (3, 3), (1, 1), SAME, (5, 6)),
    ((1, 3, 3, 2), 3, (2, 2), (2, 2), VALID, (6, 6)),
    ((1, 4, 5, 3), 16, (3, 2), (2, 3), VALID, (9, 15)),
    ((1, 4, 5, 3), 17, (4, 4), (3, 2), SAME, (12, 10)),
    ((1, 2, 2, 8), 4, (3, 3), (4, 4), VALID, (10, 10)),
    ((1, 3, 3, 16), 24, (5, 5), (2, 2), SAME, (5, 6)),
    ((1, 5, 3, 6), 9, (1, 1), (1, 1), VALID, (5, 3)),
]


def _varied(out: np.ndarray) -> bool:
    return len(np.unique(out)) > 20


@pytest.mark.slow
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_geometries(geometry, kind):
    out = check_against_litert(tc_model(*geometry, kind=kind))[0]
    assert out.shape == (geometry[0][0], *geometry[5], geometry[1])
    assert kind == "float" or _varied(out)


@pytest.mark.parametrize("geometry", [
    ((1, 4, 3, 5), 6, (4, 5), (2, 3), SAME, (8, 9)),  # 5 kernel columns over stride_w 3: two groups, one empty slot
    ((2, 3, 4, 3), 4, (1, 1), (2, 2), VALID, (5, 7)),  # 1x1 kernel over stride 2: output pixels no tap reaches
    ((1, 6, 6, 8), 8, (2, 2), (2, 2), SAME, (12, 12)),  # stride = kernel: the groups tile the output exactly
], ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_column_groups(geometry, kind):
    # Kernel columns kx = stride_w * b + p go through one GEMM per (ky, b) group, added as whole runs.
    out = check_against_litert(tc_model(*geometry, kind=kind, activation="RELU6", seed=5))[0]
    assert out.shape == (geometry[0][0], *geometry[5], geometry[1])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("omit_bias_slot", [False, True])
def test_without_bias(kind, omit_bias_slot):
    check_against_litert(tc_model(*GEOMETRIES[5], kind=kind, bias=False, omit_bias_slot=omit_bias_slot))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("activation", ["RELU", "RELU_N1_TO_1", "RELU6"])
def test_fused_activation(kind, activation):
    out = check_against_litert(tc_model(*GEOMETRIES[4], kind=kind, activation=activation))[0]
    if kind == "float":
        assert out.min() >= (-1 if activation == "RELU_N1_TO_1" else 0)


@pytest.mark.parametrize("kind", ["int8_per_channel", "uint8"])
def test_quantized_random_parameters(kind):
    # Many weight/scale draws with channel counts around the 8-channel (int8) and 16-value (uint8) blocks.
    for seed, cout in enumerate([1, 7, 8, 9, 15, 16, 23]):
        geometry = ((2, 3, 4, 5), cout, (3, 3), (2, 1), SAME, (6, 4))
        check_against_litert(tc_model(*geometry, kind=kind, seed=seed), seed=seed)


@pytest.mark.parametrize("kind", ["float", "int8_per_channel"])
def test_output_shape_from_a_tensor(kind):
    # A non-constant output_shape makes the output dynamic: the geometry is resolved at invoke.
    geometry = GEOMETRIES[0]
    model = tc_model(*geometry, kind=kind, shape_input=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(geometry[0]).astype(np.float32) if kind == "float" else \
        rng.integers(-128, 128, geometry[0]).astype(np.int8)
    out = check_against_litert(model, inputs=[np.array([1, 8, 8, 5], np.int32), x])[0]
    assert out.shape == (1, 8, 8, 5)


def _prepare(model: bytes):
    Interpreter(model_content=model).allocate_tensors()


def test_input_size_mismatch_fails():
    # VALID, kernel 3, stride 2, output 8 implies an input of 3, not 4.
    with pytest.raises(KernelError, match="needs input height 3, got 4"):
        _prepare(tc_model((1, 4, 4, 3), 5, (3, 3), (2, 2), VALID, (8, 8)))


def test_channel_mismatch_fails():
    model = single_op_model("TRANSPOSE_CONV", [const(np.array([1, 8, 8, 5], np.int32)),
                                               const(np.ones((5, 3, 3, 2), np.float32)), Spec((1, 4, 4, 3))],
                            [Spec((1, 8, 8, 5))], padding=SAME, stride_h=2, stride_w=2)
    with pytest.raises(KernelError, match="input has 3 channels but the weights expect 2"):
        _prepare(model)


def test_output_channel_mismatch_fails():
    model = single_op_model("TRANSPOSE_CONV", [const(np.array([1, 8, 8, 4], np.int32)),
                                               const(np.ones((5, 3, 3, 3), np.float32)), Spec((1, 4, 4, 3))],
                            [Spec((1, 8, 8, 4))], padding=SAME, stride_h=2, stride_w=2)
    with pytest.raises(KernelError, match="output has 4 channels but the weights have 5"):
        _prepare(model)


def test_int16_fails():
    model = single_op_model("TRANSPOSE_CONV", [const(np.array([1, 8, 8, 5], np.int32)),
                                               const(np.ones((5, 3, 3, 3), np.int8), scale=0.1),
                                               Spec((1, 4, 4, 3), "INT16", scale=0.1)],
                            [Spec((1, 8, 8, 5), "INT16", scale=0.1)], padding=SAME, stride_h=2, stride_w=2)
    with pytest.raises(KernelError, match="INT16"):
        _prepare(model)


@pytest.mark.parametrize("stride", [(2, 2139127552), (32768, 1)])
def test_strides_above_int16_are_refused_as_litert_does(stride):
    # Found by benchmarks/fuzz_models.py --invoke (seed 23, case 4787): stride_w 2139127552 made the weights
    # grouped by stride phase ask for 4 TiB. transpose_conv.cc refuses strides above INT16_MAX in Prepare.
    model = single_op_model("TRANSPOSE_CONV", [const(np.array([1, 8, 8, 2], np.int32)),
                                               const(np.ones((2, 2, 2, 3), np.float32)), Spec((1, 4, 4, 3))],
                            [Spec((1, 8, 8, 2))], padding=VALID, stride_h=stride[0], stride_w=stride[1])
    with pytest.raises(RuntimeError, match="INT16_MAX"):
        run_litert(model, [np.ones((1, 4, 4, 3), np.float32)])
    assert (f"strides must be at most 32767, got stride_h={stride[0]} stride_w={stride[1]}"
            in prepare_error(model))
