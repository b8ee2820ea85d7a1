"""accelsim.ops.mediapipe: each op against builtins (ours and LiteRT) where an equivalent exists, against
hand-computed cases from MediaPipe's C++ formulas where none does; versions, errors, work, the CLI."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import FIXTURES, Spec, const, run_litert, run_ours, single_op_model

from accelsim.cli.main import main
from accelsim.ops import using_ops
from accelsim.ops.mediapipe import (
    OPS,
    TransposeConvParams,
    conv2d_transpose_bias,
    conv2d_transpose_bias_fast,
    landmarks_to_matrix_v1,
    landmarks_to_matrix_v2,
    matrix_params,
    max_unpooling,
    pool_params,
    transform_landmarks,
    transpose_conv_padding,
)
from accelsim.runtime import Interpreter, KernelError, OpResolutionError
from accelsim.runtime.custom import encode_options
from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator
from accelsim.runtime.work import node_work
from accelsim.runtime.write import save_model

PACK = "accelsim.ops.mediapipe"
SELFIE = FIXTURES / "selfie_like_float.tflite"
HEXAGON = Path(__file__).resolve().parents[2] / "hw_configs" / "hexagon_dsp.yaml"
EPS = float(np.finfo(np.float32).eps)
SAME, VALID = 0, 1  # the IR's (schema) padding codes; MediaPipe's structs use TfLitePadding 1 and 2


def _tcb_options(padding: int, stride_h: int, stride_w: int) -> bytes:
    return struct.pack("<3i", {SAME: 1, VALID: 2}[padding], stride_w, stride_h)


def _pool_options(padding: int, stride: tuple[int, int], filt: tuple[int, int], activation: int = 0) -> bytes:
    return struct.pack("<6i", {SAME: 1, VALID: 2}[padding], stride[1], stride[0], filt[1], filt[0], activation)


def _run_pack(model: bytes, inputs, **kwargs):
    with using_ops([PACK]):
        return run_ours(model, inputs, **kwargs)


def _builtin_pair(x_shape, w, b, padding, stride, out_shape) -> bytes:
    """TRANSPOSE_CONV (no bias) followed by an ADD of the bias: the builtin equivalent."""
    tensors = (Tensor("x", "FLOAT32", tuple(x_shape)), Tensor("shape", "INT32", (4,), buffer=1),
               Tensor("w", "FLOAT32", w.shape, buffer=2), Tensor("conv", "FLOAT32", tuple(out_shape)),
               Tensor("b", "FLOAT32", b.shape, buffer=3), Tensor("y", "FLOAT32", tuple(out_shape)))
    ops = (make_operator("TRANSPOSE_CONV", [1, 2, 0], [3], padding=padding, stride_h=stride[0], stride_w=stride[1]),
           make_operator("ADD", [3, 4], [5]))
    buffers = (b"", np.array(out_shape, np.int32).tobytes(), w.tobytes(), b.tobytes())
    return save_model(Model((Subgraph(tensors, (0,), (5,), ops, "main"),), buffers))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2), h=st.integers(1, 6), w=st.integers(1, 6), cin=st.integers(1, 5), cout=st.integers(1, 4),
       kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
       padding=st.sampled_from([SAME, VALID]), seed=st.integers(0, 2**16))
def test_transpose_conv_bias_is_transpose_conv_then_a_bias_add(n, h, w, cin, cout, kh, kw, sh, sw, padding, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, h, w, cin)).astype(np.float32)
    wt = rng.standard_normal((cout, kh, kw, cin)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    params = TransposeConvParams(padding="SAME" if padding == SAME else "VALID", stride_h=sh, stride_w=sw)
    (oh, ow), _ = transpose_conv_padding(params, (h, w), (kh, kw))
    out_shape = (n, oh, ow, cout)
    custom = single_op_model("CUSTOM", [Spec(x.shape), const(wt), const(b)], [Spec(out_shape)],
                             custom_code="Convolution2DTransposeBias", custom_options=_tcb_options(padding, sh, sw))
    builtin = _builtin_pair(x.shape, wt, b, padding, (sh, sw), out_shape)
    fast, = _run_pack(custom, [x])
    reference, = _run_pack(custom, [x], reference=True)
    # Each output sums the bias and at most L = Cin * ceil(KH/sh) * ceil(KW/sw) products, in an order that
    # differs between MediaPipe (bias first), TRANSPOSE_CONV + ADD (bias last) and our GEMM: each order's
    # float32 error is at most (L + 1) eps times the sum of the terms' magnitudes, so two differ by twice that.
    length = cin * -(-kh // sh) * -(-kw // sw)
    magnitude = conv2d_transpose_bias(np.abs(x), np.abs(wt), np.abs(b), params)
    tolerance = 2 * (length + 1) * EPS * magnitude + 1e-30
    for other in (reference, run_ours(builtin, [x])[0], run_litert(builtin, [x])[0]):
        assert other.shape == fast.shape == out_shape
        assert np.all(np.abs(fast - other) <= tolerance)


def test_transpose_conv_bias_fast_path_implements_the_reference():
    rng = np.random.default_rng(1)
    x, wt, b = rng.standard_normal((2, 5, 4, 3)), rng.standard_normal((6, 3, 2, 3)), rng.standard_normal(6)
    for params in (TransposeConvParams(padding="SAME", stride_h=2, stride_w=3),
                   TransposeConvParams(padding="VALID", stride_h=1, stride_w=2)):
        args = (x.astype(np.float32), wt.astype(np.float32), b.astype(np.float32), params)
        np.testing.assert_allclose(conv2d_transpose_bias_fast(*args), conv2d_transpose_bias(*args), rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("padding, activation, op_activation", [(SAME, 0, 0), (VALID, 0, 0), (SAME, 3, 3)])
def test_max_pooling_with_argmax_pools_as_max_pool_2d(padding, activation, op_activation):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((2, 7, 6, 3)) * 4).astype(np.float32)
    stride, filt = (2, 2), (3, 2)
    pooled_shape = (2, 4, 3, 3) if padding == SAME else (2, 3, 3, 3)
    custom = single_op_model("CUSTOM", [Spec(x.shape)], [Spec(pooled_shape), Spec(pooled_shape)],
                             custom_code="MaxPoolingWithArgmax2D",
                             custom_options=_pool_options(padding, stride, filt, activation))
    builtin = single_op_model("MAX_POOL_2D", [Spec(x.shape)], [Spec(pooled_shape)], padding=padding,
                              stride_h=2, stride_w=2, filter_height=3, filter_width=2,
                              fused_activation_function=op_activation)
    pooled, indices = _run_pack(custom, [x])
    np.testing.assert_array_equal(pooled, run_ours(builtin, [x])[0])
    np.testing.assert_array_equal(pooled, run_litert(builtin, [x])[0])
    # each index, truncated, names the window tap that holds the (pre-activation) maximum
    idx = indices.astype(np.int64)  # C++'s truncating cast
    np.testing.assert_array_equal(indices, idx.astype(np.float32) + np.float32(0.1))
    top = (filt[0] - 1) // 2 if padding == SAME else 0  # ComputePadding with these sizes
    b, oy, ox, c = np.indices(pooled.shape)
    iy, ix = oy * stride[0] - top + idx // filt[1], ox * stride[1] + idx % filt[1]
    np.testing.assert_array_equal(np.clip(x[b, iy, ix, c], 0, 6) if activation else x[b, iy, ix, c], pooled)


def test_argmax_takes_the_first_of_equal_maxima_and_unpooling_puts_them_back():
    # C++ scans the window row by row with a strict '>': ties keep the first tap.
    x = np.array([[5, 5, 1, 2], [0, 1, 7, 7], [3, 9, 4, 4], [9, 0, 4, 8]], np.float32).reshape(1, 4, 4, 1)
    options = _pool_options(VALID, (2, 2), (2, 2))
    custom = single_op_model("CUSTOM", [Spec(x.shape)], [Spec((1, 2, 2, 1)), Spec((1, 2, 2, 1))],
                             custom_code="MaxPoolingWithArgmax2D", custom_options=options)
    pooled, indices = _run_pack(custom, [x])
    np.testing.assert_array_equal(pooled.reshape(2, 2), [[5, 7], [9, 8]])
    np.testing.assert_array_equal(indices.reshape(2, 2), np.float32([[0, 2], [1, 3]]) + np.float32(0.1))
    unpool = single_op_model("CUSTOM", [Spec((1, 2, 2, 1)), Spec((1, 2, 2, 1))], [Spec((1, 4, 4, 1))],
                             custom_code="MaxUnpooling2D", custom_options=options)
    restored, = _run_pack(unpool, [pooled, indices])
    np.testing.assert_array_equal(restored.reshape(4, 4), [[5, 0, 0, 0], [0, 0, 7, 0], [0, 9, 0, 0], [0, 0, 0, 8]])


def test_unpooling_follows_the_cpp_scatter_by_hand():
    # 2x2 filter, stride 1 (overlapping windows): output 4x4, ComputePadding(1, 1, 4, 2, 2) = 0; input (y, x) goes
    # to (y + idx // 2, x + idx % 2), the later input winning a shared target.
    p = pool_params(_pool_options(VALID, (1, 1), (2, 2)), "MaxUnpooling2D")
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)
    idx = np.array([3, 2, 1, 0], np.float32).reshape(1, 2, 2, 1) + np.float32(0.1)
    expected = np.zeros((4, 4), np.float32)
    expected[1, 1] = 4  # inputs (0,0) idx 3 -> (1,1), (0,1) idx 2 -> (1,1), (1,0) idx 1 -> (1,1), (1,1) -> (1,1)
    np.testing.assert_array_equal(max_unpooling(x, idx, p).reshape(4, 4), expected)
    with pytest.raises(KernelError, match=r"MaxUnpooling2D: index 9\.1 at input \[0, 0, 0, 0\] lands outside"):
        max_unpooling(x, np.full_like(idx, 9.1), p)


def _bilinear_model(in_shape, out_hw) -> bytes:
    return single_op_model("CUSTOM", [Spec(in_shape), Spec((1, 4, 4))], [Spec((1, *out_hw, in_shape[3]))],
                           custom_code="TransformTensorBilinear", version=2,
                           custom_options=encode_options({"output_height": out_hw[0], "output_width": out_hw[1]}))


def test_transform_tensor_bilinear_by_hand_and_against_resize_bilinear():
    image = np.arange(12, dtype=np.float32).reshape(1, 2, 3, 2)
    identity = np.eye(4, dtype=np.float32)[None]
    same, = _run_pack(_bilinear_model((1, 2, 3, 2), (2, 3)), [image, identity])
    np.testing.assert_array_equal(same, image)  # v2's half-pixel shift is 0 for the identity
    # x' = 0.5 ox + (0.5 * 0.5 - 0.5) = 0.5 ox - 0.25, y' = oy: ox 0 falls outside (0), ox 1 blends
    # 0.75 * column 0 + 0.25 * column 1, ox 2 is 0.75 * column 0... of the next pair, and so on.
    half = np.diag([0.5, 1, 1, 1]).astype(np.float32)[None]
    out, = _run_pack(_bilinear_model((1, 2, 3, 2), (2, 5)), [image, half])
    row = image[0, 0, :, 0]
    expected = [0, 0.75 * row[0] + 0.25 * row[1], 0.25 * row[0] + 0.75 * row[1], 0.75 * row[1] + 0.25 * row[2],
                0.25 * row[1] + 0.75 * row[2]]
    np.testing.assert_allclose(out[0, 0, :, 0], expected, rtol=1e-6)
    # A scale matrix samples like RESIZE_BILINEAR with half-pixel centres, except that it is 0 (not clamped)
    # outside [0, W-1] x [0, H-1]: inside they agree.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 5, 6, 3)).astype(np.float32)
    scale = np.diag([6 / 10, 5 / 8, 1, 1]).astype(np.float32)[None]
    warped, = _run_pack(_bilinear_model((1, 5, 6, 3), (8, 10)), [x, scale])
    resize = single_op_model("RESIZE_BILINEAR", [Spec(x.shape), const(np.array([8, 10], np.int32))],
                             [Spec((1, 8, 10, 3))], version=3, half_pixel_centers=True)
    resized = run_litert(resize, [x])[0]
    tx, ty = (np.arange(10) + 0.5) * 0.6 - 0.5, (np.arange(8) + 0.5) * 0.625 - 0.5
    inside = ((ty >= 0) & (ty <= 4))[:, None] & ((tx >= 0) & (tx <= 5))[None, :]
    np.testing.assert_allclose(warped[0][inside], resized[0][inside], rtol=1e-5, atol=1e-6)
    assert np.all(warped[0][~inside] == 0)


def test_transform_landmarks_by_hand():
    m = np.array([[2, 0, 9, 1], [0, 3, 9, -1], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32)[None]
    v1 = np.array([1, 2, 7, 3, 4, 8], np.float32).reshape(1, 1, 2, 3)
    # x' = 2x + 0y + 9*0 + 1*scale, y' = 3y - 1*scale, z kept
    np.testing.assert_array_equal(transform_landmarks(v1, m, 3, 2.0).reshape(-1), [4, 4, 7, 8, 10, 8])
    model = single_op_model("CUSTOM", [Spec((1, 1, 2, 3)), Spec((1, 4, 4))], [Spec((1, 1, 2, 3))],
                            custom_code="TransformLandmarks", version=1,
                            custom_options=encode_options({"dimensions": 3, "scale": 2.0}))
    np.testing.assert_array_equal(_run_pack(model, [v1, m])[0].reshape(-1), [4, 4, 7, 8, 10, 8])
    v2 = single_op_model("CUSTOM", [Spec((1, 2, 2)), Spec((1, 4, 4))], [Spec((1, 2, 2))],
                         custom_code="TransformLandmarks", version=2, custom_options=b"not read")  # v2 ignores them
    out, = _run_pack(v2, [np.array([[[1, 2], [3, 4]]], np.float32), m])  # dimensions from the last axis, scale 1
    np.testing.assert_array_equal(out.reshape(-1), [3, 5, 7, 11])


def test_landmarks_to_transform_matrix_by_hand():
    # v1: left (0,0), right (1,0): alpha 0; subset box (0,0)-(4,2), range 4, multiplier 1; input 5x5, output 3x3:
    # to_absolute [[2,0,2],[0,2,2]] . rotation [[1,0,0],[0,1,-0.5]] . scale diag(1, 0.5) . to_relative
    # [[1,0,-1],[0,1,-1]] = [[2,0,0],[0,1,0]].
    landmarks = np.array([0, 0, 0, 1, 0, 0, 4, 0, 0, 0, 2, 0, 4, 2, 0], np.float32).reshape(1, 1, 1, 15)
    v1 = matrix_params(encode_options({"input_hw": [5, 5], "output_hw": [3, 3], "dimensions": 3,
                                       "landmarks_range": 4, "bbox_size_multiplier": 1.0, "left_rotation_idx": 0,
                                       "right_rotation_idx": 1, "subset": [0, 2, 3, 4]}), 1)
    expected = np.array([[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32)
    np.testing.assert_allclose(landmarks_to_matrix_v1(landmarks, v1)[0], expected, atol=1e-6)
    # v2: left (0,0), right (0,1): rotation = 0 - atan2(1, 0) = -pi/2; the subset (0,0), (0,2), (1,0), (1,2)
    # rotated is the box (0,-1)-(2,0): width 2, height 1, centre (1,-0.5) -> (0.5, 1) rotated back; output 2x2:
    # shift(0.5, 1) . rotate(pi/2) . scale(1, 0.5) . shift(-1, -1) = [[0,-0.5,0,1],[1,0,0,0]].
    points = np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 0, 0], [1, 2, 0]], np.float32)[None]
    v2 = matrix_params(encode_options({"subset_idxs": [0, 2, 3, 4], "left_rotation_idx": 0, "right_rotation_idx": 1,
                                       "target_rotation_radians": 0.0, "output_height": 2, "output_width": 2,
                                       "scale_x": 1.0, "scale_y": 1.0}), 2)
    expected = np.array([[0, -0.5, 0, 1], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32)
    np.testing.assert_allclose(landmarks_to_matrix_v2(points, v2)[0], expected, atol=1e-6)
    model = single_op_model("CUSTOM", [Spec((1, 5, 3))], [Spec((1, 4, 4))], custom_code="Landmarks2TransformMatrix",
                            version=2, custom_options=encode_options({
                                "subset_idxs": [0, 2, 3, 4], "left_rotation_idx": 0, "right_rotation_idx": 1,
                                "output_height": 2, "output_width": 2, "scale_x": 1.0, "scale_y": 1.0}))
    np.testing.assert_allclose(_run_pack(model, [points])[0][0], expected, atol=1e-6)


@pytest.mark.parametrize("model, message", [
    (single_op_model("CUSTOM", [Spec((1, 2, 2, 1)), const(np.ones((1, 1, 1, 1), np.float32)),
                                const(np.ones(1, np.float32))], [Spec((1, 2, 2, 1))],
                     custom_code="Convolution2DTransposeBias", version=2, custom_options=_tcb_options(SAME, 1, 1)),
     r"Didn't find custom op for name 'Convolution2DTransposeBias' version '2'; registered versions: \[1\]"),
    (single_op_model("CUSTOM", [Spec((1, 2, 2, 1)), const(np.ones((1, 1, 1, 1), np.float32)),
                                const(np.ones(1, np.float32))], [Spec((1, 2, 2, 1))],
                     custom_code="Convolution2DTransposeBias", custom_options=b"\x01\x00\x00\x00"),
     r"failed to init .*Convolution2DTransposeBias: custom options are 4 bytes; the kernel reads a "
     r"TfLiteTransposeConvParams \(padding, stride_width, stride_height: 12 bytes"),
    (single_op_model("CUSTOM", [Spec((1, 2, 2, 1), "INT8", scale=0.5, zero_point=0)],
                     [Spec((1, 1, 1, 1)), Spec((1, 1, 1, 1))], custom_code="MaxPoolingWithArgmax2D",
                     custom_options=_pool_options(VALID, (2, 2), (2, 2))),
     "MaxPoolingWithArgmax2D: supports float32 tensors only, got INT8"),
    (single_op_model("CUSTOM", [Spec((1, 2, 2, 1)), Spec((1, 4, 4))], [Spec((1, 2, 2, 1))],
                     custom_code="TransformTensorBilinear", version=2, custom_options=encode_options({"mode": 1})),
     "TransformTensorBilinear: custom options need positive integers output_height and output_width"),
    (single_op_model("CUSTOM", [Spec((1, 2, 3))], [Spec((1, 4, 4))], custom_code="Landmarks2TransformMatrix",
                     version=2, custom_options=encode_options({
                         "subset_idxs": [0, 5], "left_rotation_idx": 0, "right_rotation_idx": 1,
                         "output_height": 2, "output_width": 2, "scale_x": 1.0, "scale_y": 1.0})),
     r"Incorrect subset value: index = 1, value = 5 \(the input has 2 landmarks\)"),
])
def test_bad_models_fail_in_prepare_with_the_op_and_the_reason(model, message):
    with using_ops([PACK]), pytest.raises((KernelError, OpResolutionError), match=message):
        Interpreter(model_content=model).allocate_tensors()


def test_the_selfie_like_fixture_reports_transpose_conv_work():
    with using_ops([PACK]):
        it = Interpreter(model_path=SELFIE, shapes_only=True)
        it.allocate_tensors()
        graph = it.primary
        works = [node_work(graph.context, graph.nodes[i]) for i in graph.execution_plan]
    custom = [w for w in works if w.op == "Convolution2DTransposeBias"]
    # 16x16x24 -> 2x2x16 and 32x32x16 -> 2x2x1: N*H*W*Cin*KH*KW*Cout MACs each, as TRANSPOSE_CONV
    assert [(w.kind, w.macs, w.gemm.k) for w in custom] == [("gemm", 16 * 16 * 24 * 4 * 16, 24),
                                                             ("gemm", 32 * 32 * 16 * 4 * 1, 16)]
    assert all(w.conv.transposed and (w.conv.stride_h, w.conv.stride_w) == (2, 2) for w in custom)


def _claiming_config(tmp_path: Path, custom_code: str) -> str:
    text = HEXAGON.read_text()
    path = tmp_path / f"claims_{custom_code}.yaml"
    # one node per partition is enough: the two custom nodes sit apart
    head = text[:text.index("claims:")].replace("min_nodes_per_partition: 2", "min_nodes_per_partition: 1")
    path.write_text(head.replace("name: hexagon_dsp", "name: mp_dsp")
                    + f"claims:\n  - {{op: CUSTOM, custom_code: {custom_code}, versions: 1, dtypes: [float32]}}\n")
    return str(path)


def test_the_selfie_like_model_runs_under_every_verb_and_an_accelerator_claims_its_custom_op(tmp_path, capsys):
    ops = ["--ops", PACK]
    claims = _claiming_config(tmp_path, "Convolution2DTransposeBias")
    assert main(["benchmark", str(SELFIE), *ops, "--hw", claims, "--num-runs", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["delegated_nodes"] == 2  # the two custom nodes, nothing else
    assert main(["benchmark", str(SELFIE), *ops, "--hw", _claiming_config(tmp_path, "MaxUnpooling2D"),
                 "--num-runs", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["delegated_nodes"] == 0  # a claim names one custom op
    assert main(["whatif", str(SELFIE), *ops, "--hw", "hexagon_dsp"]) == 0  # it suggests the claim line by name
    assert ("add to claims: - {op: CUSTOM, custom_code: Convolution2DTransposeBias, versions: 1, dtypes: [float32]}"
            in capsys.readouterr().out)
    assert main(["diff", str(SELFIE), *ops, "--hw", claims, "--num-runs", "2", "--json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert diff["delegated_nodes"] == {"mp_dsp": 2} and diff["outputs"][0]["max_abs_error"] < 1e-5
    experiment = tmp_path / "selfie.yaml"
    experiment.write_text(f"models: [{SELFIE}]\nhost: host_cpu\nops: [{PACK}]\nvariants: [{{name: cpu_only, "
                          f"accelerators: []}}, {{name: dsp, accelerators: [{claims}]}}]\n")
    assert main(["validate", str(experiment)]) == 0
    assert main(["run", str(experiment), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    assert "(0 cached, 2 run, 0 failed)" in capsys.readouterr().out


def test_every_op_of_the_pack_is_registered_with_a_reference_and_a_work_hook():
    from accelsim.ops import load_op_modules

    resolver = load_op_modules([PACK]).resolver
    rows = {(name, lo, hi) for name, custom, lo, hi in resolver.registrations() if custom}
    assert rows == {("Convolution2DTransposeBias", 1, 1), ("MaxPoolingWithArgmax2D", 1, 1), ("MaxUnpooling2D", 1, 1),
                    ("TransformTensorBilinear", 2, 2), ("TransformLandmarks", 1, 2),
                    ("Landmarks2TransformMatrix", 1, 2)}
    assert sorted(OPS) == resolver.custom_names()
    for name, _, lo, hi in resolver.registrations():
        for version in range(lo, hi + 1):
            reg = resolver.find_custom(name, version)
            assert reg.reference is not None and reg.work is not None
