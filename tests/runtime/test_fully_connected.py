"""FULLY_CONNECTED against LiteRT: float32, int8 (per-tensor, per-channel), uint8, keep_num_dims, no bias."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from op_models import ACTIVATIONS, fc_model
from support import FIXTURES, Spec, check_against_litert, const, fixture_node_models, prepare_error, single_op_model

from accelsim.runtime.errors import OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import DimensionMetadata, Sparsity
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

KINDS = ("float", "int8_per_channel", "int8_per_tensor", "uint8")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_fc_activation(activation, kind):
    out = check_against_litert(fc_model((24, 64), 48, kind, activation=activation, seed=1))
    assert out[0].shape == (24, 48)


@pytest.mark.parametrize("kind", KINDS)
def test_fc_without_bias(kind):
    # Version 6: LiteRT's FC, unlike its conv kernels, accepts the omitted bias.
    check_against_litert(fc_model((5, 33), 17, kind, bias=False, seed=2))


@pytest.mark.parametrize("kind", KINDS)
def test_fc_keep_num_dims(kind):
    out = check_against_litert(fc_model((2, 7, 24), 9, kind, keep_num_dims=True, seed=3))
    assert out[0].shape == (2, 7, 9)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("in_shape, depth", [
    ((2, 7, 24), None),  # rank 3 flattened to [14, 24]
    ((3, 2, 2, 10), None),  # rank 4
    ((4, 12), 6),  # input_size 6 from the weights: [4, 12] read as [8, 6]
    ((31,), None),  # rank 1: a single row
])
def test_fc_flattens_input(in_shape, depth, kind):
    check_against_litert(fc_model(in_shape, 11, kind, depth=depth, seed=4))


def test_fc_int8_weights_with_zero_point():
    # Per-tensor int8 weights may carry a zero point (weights_offset in the optimized kernel).
    check_against_litert(fc_model((4, 20), 12, "int8_per_tensor", weight_zero_point=5, seed=5))


@pytest.mark.parametrize("kind", KINDS[1:])
def test_fc_rounding_of_optimized_kernel(kind):
    # Enough outputs that a wrong rounding rule (ruy's x86 kernel rounds half-up twice) shows up.
    check_against_litert(fc_model((96, 256), 128, kind, seed=6))


@pytest.mark.parametrize("kind", ["float", "int8_per_channel"])
def test_fc_rejects_non_clipping_fused_activation(kind):
    # fully_connected.cc accepts only NONE and the ReLU family outside the hybrid path (LiteRT too).
    model = load_model(fc_model((3, 16), 8, kind, seed=8))
    op = model.subgraphs[0].operators[0]
    op = dataclasses.replace(op, options=op.options.replace(fused_activation_function=4))
    sg = dataclasses.replace(model.subgraphs[0], operators=(op,))
    assert "fused activation TANH is not supported" in prepare_error(save_model(model.replace(subgraphs=(sg,))))


@pytest.mark.parametrize("kind", ["float", "int8_per_tensor"])
def test_fc_weights_given_at_run_time(kind):
    # Weights that are a graph input (as in attention blocks): the GEMM operand is rebuilt per invoke.
    model = load_model(fc_model((4, 16), 8, kind, seed=9))
    sg = model.subgraphs[0]
    w = sg.tensors[1]
    sg = dataclasses.replace(sg, tensors=(sg.tensors[0], dataclasses.replace(w, buffer=0), *sg.tensors[2:]),
                             inputs=(0, 1))
    check_against_litert(save_model(model.replace(subgraphs=(sg,))))


def test_fc_input_resized():
    model = fc_model((1, 16), 8, "float", seed=7)
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    assert check_against_litert(model, [x])[0].shape == (5, 8)


# ---------------------------------------------------------------------------------------------
# Error paths


def _float_fc(in_shape, w_shape, bias_size, **options) -> bytes:
    inputs = [Spec(in_shape), const(np.zeros(w_shape, np.float32)), const(np.zeros(bias_size, np.float32))]
    return single_op_model("FULLY_CONNECTED", inputs, [Spec((1, w_shape[0]))], **options)


def test_fc_rejects_shuffled_weights():
    assert "weights_format" in prepare_error(_float_fc((2, 8), (4, 8), 4, weights_format=1))


def test_fc_rejects_input_not_divisible_by_input_size():
    assert "does not flatten" in prepare_error(_float_fc((2, 7), (4, 8), 4))


def test_fc_rejects_wrong_bias_size():
    assert "bias has 3 elements, expected 4" in prepare_error(_float_fc((2, 8), (4, 8), 3))


def test_fc_rejects_non_matrix_weights():
    assert "weights must be 2-D" in prepare_error(_float_fc((2, 8), (4, 2, 4), 4))


def test_fc_keep_num_dims_needs_matching_last_dim():
    model = _float_fc((4, 12), (5, 6), 5, keep_num_dims=True, version=5)
    assert "keep_num_dims" in prepare_error(model)


def test_fc_hybrid_int8_weights_match_litert():
    # Issue 33: the hybrid path (float input, per-channel int8 weights; litert-torch's dynamic_int8) runs as
    # LiteRT's XNNPACK runs it (per-row asymmetric int8 activations), to float rounding.
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (4, 8)).astype(np.int8)
    inputs = [Spec((3, 8)), const(w, scale=[0.01, 0.02, 0.03, 0.04], zero_point=[0] * 4, quantized_dimension=0),
              const(rng.standard_normal(4).astype(np.float32))]
    check_against_litert(single_op_model("FULLY_CONNECTED", inputs, [Spec((3, 4))], version=1), seed=1, rtol=1e-5)


def test_fc_rejects_hybrid_int16_weights():
    inputs = [Spec((2, 8)), const(np.ones((4, 8), np.int16), scale=0.5), const(np.zeros(4, np.float32))]
    assert "hybrid" in prepare_error(single_op_model("FULLY_CONNECTED", inputs, [Spec((2, 4))], version=1))


def test_fc_rejects_mismatched_uint8_bias_scale():
    # kernel_util.cc: the bias scale must be input_scale * weights_scale (to 2% of the output scale).
    inputs = [Spec((2, 8), "UINT8", scale=0.5, zero_point=128), const(np.ones((4, 8), np.uint8), scale=0.5,
                                                                       zero_point=128),
              const(np.zeros(4, np.int32), scale=1.0)]
    model = single_op_model("FULLY_CONNECTED", inputs, [Spec((2, 4), "UINT8", scale=1.0, zero_point=128)])
    assert "bias scale" in prepare_error(model)


def test_fc_rejects_asymmetric_per_channel_weights():
    inputs = [Spec((2, 8), "INT8", scale=0.5, zero_point=0),
              const(np.ones((4, 8), np.int8), scale=(0.1, 0.2, 0.3, 0.4), zero_point=(0, 1, 0, 0)),
              const(np.zeros(4, np.int32), scale=(0.05, 0.1, 0.15, 0.2))]
    model = single_op_model("FULLY_CONNECTED", inputs, [Spec((2, 4), "INT8", scale=1.0, zero_point=0)], version=4)
    assert "symmetric" in prepare_error(model)


def test_unregistered_versions():
    # Version 3 is hybrid FC and version 7 int16: neither is implemented, so neither resolves.
    for version in (3, 7):
        with pytest.raises(OpResolutionError, match=f"version '{version}'"):
            Interpreter(model_content=_float_fc((2, 8), (4, 8), 4, version=version))


# ---------------------------------------------------------------------------------------------
# Converter-produced nodes


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v2_035_96_int8", "transformer_block_int8", "transformer_block_float",
                                  "interleaved_int8", "interleaved_float", "dilated_cnn_float", "lstm_gru_float"])
def test_fixture_fc_nodes(name):
    path = FIXTURES / f"{name}.tflite"
    count = 0
    for count, model in enumerate(fixture_node_models(path, {"FULLY_CONNECTED"}), start=1):
        check_against_litert(model, seed=count)
    assert count > 0


# ---------------------------------------------------------------------------------------------
# Sparse weights (version 8)


def _row_block_sparsity(w: np.ndarray, block: int):
    """TFLite's FC sparsity: DENSE rows, SPARSE_CSR column blocks of `block` (and a DENSE block level if > 1)."""
    units, depth = w.shape
    blocks = w.reshape(units, depth // block, block)
    keep = np.any(blocks != 0, axis=2)
    segments = tuple(np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).tolist())
    levels = [DimensionMetadata("DENSE", units),
              DimensionMetadata("SPARSE_CSR", 0, segments, tuple(np.nonzero(keep)[1].tolist()))]
    if block > 1:
        levels.append(DimensionMetadata("DENSE", block))
    order, block_map = ((0, 1, 2), (1,)) if block > 1 else ((0, 1), ())
    return Sparsity(order, block_map, tuple(levels)), np.ascontiguousarray(blocks[keep]).reshape(-1)


def sparse_fc_model(in_shape, units, kind, block, density=0.3, seed=0, **kw) -> bytes:
    """fc_model with most 1 x `block` weight blocks zeroed and the weights stored sparse."""
    model = load_model(fc_model(in_shape, units, kind, seed=seed, **kw))
    sg = model.subgraphs[0]
    wi = sg.operators[0].inputs[1]
    w = model.constant(0, wi)
    keep = np.random.default_rng(seed).random((units, w.shape[1] // block)) < density
    w = np.where(np.repeat(keep, block, axis=1), w, 0).astype(w.dtype)
    sparsity, values = _row_block_sparsity(w, block)
    tensors = list(sg.tensors)
    tensors[wi] = dataclasses.replace(tensors[wi], sparsity=sparsity)
    buffers = list(model.buffers)
    buffers[tensors[wi].buffer] = values.tobytes()
    op = dataclasses.replace(sg.operators[0], version=8)
    sg = dataclasses.replace(sg, tensors=tuple(tensors), operators=(op,))
    return save_model(model.replace(subgraphs=(sg,), buffers=tuple(buffers)))


@pytest.mark.parametrize(("kind", "block"), [("float", 1), ("float", 4), ("int8_per_channel", 16),
                                             ("int8_per_tensor", 16)])
@pytest.mark.parametrize("in_shape", [(1, 64), (7, 64), (2, 3, 32)], ids=str)
def test_fc_sparse_weights(kind, block, in_shape):
    out = check_against_litert(sparse_fc_model(in_shape, 24, kind, block, seed=len(in_shape)))[0]
    assert out.shape == (int(np.prod(in_shape)) // in_shape[-1], 24)


@pytest.mark.parametrize(("kind", "block"), [("float", 4), ("int8_per_channel", 16)])
@pytest.mark.parametrize("activation", ["RELU", "RELU6"])
def test_fc_sparse_weights_activation_and_no_bias(kind, block, activation):
    check_against_litert(sparse_fc_model((5, 48), 20, kind, block, activation=activation, seed=11))
    check_against_litert(sparse_fc_model((5, 48), 20, kind, block, bias=False, seed=12))


def test_fc_sparse_int8_rounding():
    # SparseMatrixBatchVectorMultiplyAccumulate1x16 requantizes with the scalar MultiplyByQuantizedMultiplier
    # (round half away from zero twice), not ruy's half-up: many outputs make the difference show.
    for seed in range(4):
        check_against_litert(sparse_fc_model((64, 128), 96, "int8_per_channel", 16, density=0.5, seed=seed),
                             seed=seed)


def test_fc_sparse_keep_num_dims():
    out = check_against_litert(sparse_fc_model((2, 3, 32), 8, "float", 4, keep_num_dims=True, seed=13))[0]
    assert out.shape == (2, 3, 8)


@pytest.mark.parametrize(("kind", "block", "message"), [
    ("float", 2, "random sparse or 1x4 blocks"),
    ("int8_per_channel", 4, "int8 needs 1x16 blocks"),
    ("uint8", 16, "sparse UINT8 weights are not supported"),
])
def test_fc_sparse_unsupported_formats(kind, block, message):
    assert message in prepare_error(sparse_fc_model((2, 32), 8, kind, block))


def test_fixture_sparse_fc_nodes():
    count = 0
    for count, model in enumerate(fixture_node_models(FIXTURES / "sparse_float.tflite", {"FULLY_CONNECTED"}), start=1):
        check_against_litert(model, seed=count)
    assert count == 3


def test_fixture_sparse_float_model():
    model = (FIXTURES / "sparse_float.tflite").read_bytes()
    for seed in range(3):
        check_against_litert(model, seed=seed)
