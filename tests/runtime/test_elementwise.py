"""ADD, SUB and MUL against LiteRT: float32, integer types and 8-bit quantized, with broadcasting."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from support import (
    FIXTURES,
    Spec,
    allocated_with_peak,
    check_against_litert,
    const,
    prepare_error,
    run_litert,
    run_ours,
    single_op_model,
)

from accelsim.runtime.errors import OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.read import load_model
from accelsim.runtime.resolver import BuiltinOpResolver

ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
OPS = ("ADD", "SUB", "MUL")
BROADCAST_SHAPES = [
    ((2, 5, 7), (2, 5, 7)),  # elementwise, a SIMD body and a tail
    ((1, 4, 4, 3), (3,)),  # channel vector
    ((2, 1, 3), (1, 5, 1)),  # both inputs broadcast
    ((1, 4, 4, 3), ()),  # scalar second
    ((), (2, 19)),  # scalar first
    ((3, 1, 20), (3, 7, 20)),  # fivefold with an inner run of 20
    ((2, 17, 1), (2, 17, 33)),  # inner broadcast of one value over 33
    ((4, 4, 3), (1, 4, 4, 3)),  # different ranks, same elements
    ((2, 3, 4, 5, 6), (1, 3, 1, 5, 1)),  # 5-D
    ((2, 1, 2, 1, 2, 1), (1, 3, 1, 3, 1, 3)),  # 6-D, generic broadcast
]
VERSIONS_8BIT = {"INT8": 2, "UINT8": 1}


def _model(op, shape1, shape2, type_, *, version=1, activation="NONE", quant=None):
    """A one-op model; quant = ((scale, zp) for input1, input2, output) for 8-bit types."""
    out_shape = tuple(np.broadcast_shapes(shape1, shape2))
    q = quant or ({}, {}, {})
    if quant:
        q = tuple(dict(scale=s, zero_point=z) for s, z in quant)
    return single_op_model(op, [Spec(shape1, type_, **q[0]), Spec(shape2, type_, **q[1])],
                           [Spec(out_shape, type_, **q[2])], version=version,
                           fused_activation_function=ACTIVATIONS[activation])


def _random_quant(rng, op, type_, same_scales=False):
    lo, hi = (-128, 127) if type_ == "INT8" else (0, 255)
    s1, s2 = (float(np.float32(v)) for v in rng.uniform(0.01, 0.2, 2))
    if same_scales:
        s2 = s1
        out = s1 if op != "MUL" else s1 * s2 * 40
    else:
        out = max(s1, s2) * rng.uniform(0.5, 3) if op != "MUL" else s1 * s2 * rng.uniform(20, 200)
    zps = rng.integers(lo, hi, 3, endpoint=True)
    if same_scales:
        zps[1] = zps[2] = zps[0]
    return tuple(zip((s1, s2, float(np.float32(out))), (int(z) for z in zps)))


# ---------------------------------------------------------------------------------------------
# Float32 and int32.


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("type_", ["FLOAT32", "INT32"])
def test_float_and_int32_broadcasting(op, shapes, type_):
    check_against_litert(_model(op, *shapes, type_))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("type_", ["FLOAT32", "INT32"])
def test_fused_activation(op, activation, type_):
    rng = np.random.default_rng(1)
    shapes = ((2, 3, 8), (8,))
    if type_ == "FLOAT32":
        inputs = [rng.uniform(-8, 8, s).astype(np.float32) for s in shapes]
    else:
        inputs = [rng.integers(-9, 9, s, endpoint=True).astype(np.int32) for s in shapes]
    out = check_against_litert(_model(op, *shapes, type_, activation=activation), inputs)[0]
    if activation != "NONE":
        assert out.min() >= (0 if activation != "RELU_N1_TO_1" else -1)


def test_float_overflow_is_clamped_to_float_max_like_litert():
    """The optimized kernels clamp even with no activation: inf becomes FLT_MAX, NaN stays."""
    x1 = np.array([3e38, -3e38, np.inf, np.nan, 1, -np.inf, 0, 2], np.float32)
    x2 = np.array([3e38, -3e38, 1, 1, np.nan, 1, 0, -2], np.float32)
    model = _model("ADD", (8,), (8,), "FLOAT32")
    out = run_ours(model, [x1, x2])[0]
    np.testing.assert_array_equal(out, run_litert(model, [x1, x2])[0])
    assert out[0] == np.finfo(np.float32).max and out[5] == -np.finfo(np.float32).max
    assert np.isnan(out[3]) and np.isnan(out[4])


@pytest.mark.parametrize("activation", ["NONE", "RELU", "RELU6"])
@pytest.mark.parametrize("type_", ["FLOAT32", "INT32"])
def test_large_outputs_clamp_like_litert(activation, type_):
    """Outputs past the size of output-shaped bounds clamp with scalar bounds; overflow included."""
    shape = (1, 300, 300, 1)
    rng = np.random.default_rng(4)
    if type_ == "FLOAT32":
        x1 = (rng.standard_normal(shape) * 4).astype(np.float32)
        x1.reshape(-1)[:4] = [3e38, -3e38, np.inf, np.nan]
        x2 = np.full(shape, 3e38, np.float32)
        x2.reshape(-1)[4:] = rng.standard_normal(x2.size - 4)
    else:
        x1 = rng.integers(-20, 20, shape).astype(np.int32)
        x2 = rng.integers(-20, 20, shape).astype(np.int32)
    model = _model("ADD", shape, shape, type_, activation=activation)
    out = run_ours(model, [x1, x2])[0]
    np.testing.assert_array_equal(out, run_litert(model, [x1, x2])[0])


@pytest.mark.parametrize("op,type_,version", [
    ("ADD", "INT64", 4), ("SUB", "INT64", 4), ("MUL", "INT64", 5), ("ADD", "INT16", 5),
    ("MUL", "INT16", 7), ("MUL", "UINT32", 7), ("SUB", "INT32", 1),
])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_other_integer_types_wrap_and_clamp(op, type_, version, activation):
    """Full-range values: overflow wraps as in the C++ and the activation clamps in the type."""
    rng = np.random.default_rng(2)
    info = np.iinfo(np.dtype(type_.lower()))
    shapes = ((3, 1, 5), (4, 1))
    inputs = [rng.integers(info.min, info.max, s, endpoint=True, dtype=np.dtype(type_.lower())) for s in shapes]
    inputs[0].reshape(-1)[:3] = (0, 1, 5)
    check_against_litert(_model(op, *shapes, type_, version=version, activation=activation), inputs)


def test_complex64_mul():
    rng = np.random.default_rng(3)
    shapes = ((3, 1, 5), (4, 1))
    inputs = [(rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(np.complex64) for s in shapes]
    model = _model("MUL", *shapes, "COMPLEX64", version=6)
    ours, ref = run_ours(model, inputs)[0], run_litert(model, inputs)[0]
    assert ours.dtype == np.complex64 and ours.shape == (3, 4, 5)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-5 * np.abs(ref).max())


# ---------------------------------------------------------------------------------------------
# 8-bit quantized.


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("type_", ["INT8", "UINT8"])
def test_quantized_broadcasting(op, shapes, type_):
    rng = np.random.default_rng(zlib.crc32(repr((op, shapes, type_)).encode()))
    for same_scales in (False, True):
        quant = _random_quant(rng, op, type_, same_scales)
        check_against_litert(_model(op, *shapes, type_, version=VERSIONS_8BIT[type_], quant=quant), seed=3)


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("type_", ["INT8", "UINT8"])
def test_quantized_fused_activation(op, activation, type_):
    rng = np.random.default_rng(4)
    quant = ((0.05, 3), (0.08, -7), (0.03 if op != "MUL" else 0.01, -20))
    if type_ == "UINT8":
        quant = tuple((s, z + 128) for s, z in quant)
    out = check_against_litert(_model(op, (2, 5, 9), (9,), type_, version=VERSIONS_8BIT[type_],
                                      activation=activation, quant=quant), seed=int(rng.integers(100)))[0]
    if activation in ("RELU", "RELU6"):
        assert out.min() >= quant[2][1]


@pytest.mark.parametrize("op", OPS)
def test_quantized_every_input_pair_saturating(op):
    """All 65536 int8 pairs with a narrow output range: most results saturate."""
    x1, x2 = (g.reshape(-1).astype(np.int8) for g in np.meshgrid(np.arange(-128, 128), np.arange(-128, 128)))
    quant = ((0.1, -3), (0.07, 10), (0.02, 5) if op != "MUL" else (0.002, 5))
    out = check_against_litert(_model(op, x1.shape, x2.shape, "INT8", version=2, quant=quant), [x1, x2])[0]
    assert (out == 127).any() and (out == -128).any()


def test_mul_with_output_multiplier_above_one():
    """MUL v3: input1_scale * input2_scale / output_scale >= 1."""
    quant = ((0.5, 0), (0.4, 1), (0.01, -4))
    check_against_litert(_model("MUL", (3, 40), (40,), "INT8", version=3, quant=quant), seed=5)


# LiteRT's x86 build runs the NEON blocks through NEON_2_SSE: in each run of outputs handled
# by one inner call, whole SIMD blocks round differently from the scalar tail. The parameters
# below were found by search so that the two paths disagree; the output must change exactly
# where the block ends.
LANE_CASES = [
    # (type, shape1, shape2, quant, x1 value, x2 value, SIMD block size)
    ("INT8", (19,), (19,), ((0.04209599271416664, -124), (0.18915541470050812, 17), (0.18497781455516815, 2)),
     13, -13, 16),
    ("INT8", (1,), (11,), ((0.15056924521923065, -48), (0.012802555225789547, 8), (0.07258719205856323, -25)),
     -34, 124, 8),
    ("INT8", (11,), (1,), ((0.15056924521923065, -48), (0.012802555225789547, 8), (0.07258719205856323, -25)),
     -34, 124, 8),
    ("UINT8", (19,), (19,), ((0.17177966237068176, 247), (0.143696591258049, 1), (0.16853179037570953, 127)),
     109, 251, 16),
    ("UINT8", (1,), (11,), ((0.17177966237068176, 247), (0.143696591258049, 1), (0.16853179037570953, 127)),
     109, 251, 8),
]


@pytest.mark.parametrize("type_,shape1,shape2,quant,v1,v2,block", LANE_CASES)
def test_add_simd_blocks_round_like_litert(type_, shape1, shape2, quant, v1, v2, block):
    dtype = np.dtype(type_.lower())
    inputs = [np.full(shape1, v1, dtype), np.full(shape2, v2, dtype)]
    out = check_against_litert(_model("ADD", shape1, shape2, type_, version=VERSIONS_8BIT[type_], quant=quant),
                               inputs)[0]
    assert (out[:block] == out[0]).all() and (out[block:] != out[0]).all()


@pytest.mark.parametrize("op", ["ADD", "MUL"])
@pytest.mark.parametrize("type_", ["INT8", "UINT8"])
@pytest.mark.parametrize("shapes", [((20,), (20,)), ((1,), (20,)), ((20,), (1,))], ids=str)
def test_simd_int16_narrowing_wraps_like_litert(op, type_, shapes):
    """A huge output multiplier: SIMD blocks wrap in int16 (extreme outputs flip sign), the tail saturates."""
    in_scale, zp = 1.0, (100 if type_ == "INT8" else 200)
    out_scale = 0.001 if op == "MUL" else float(np.float32(2.0 / (1 << 20) * 1.01))
    quant = ((in_scale, 0), (in_scale, 0), (out_scale, zp))
    dtype = np.dtype(type_.lower())
    inputs = [np.full(shapes[0], 100, dtype), np.full(shapes[1], 27 if op == "ADD" else 100, dtype)]
    version = 3 if op == "MUL" else VERSIONS_8BIT[type_]
    out = check_against_litert(_model(op, *shapes, type_, version=version, quant=quant), inputs)[0]
    info = np.iinfo(dtype)
    assert (out[:16] == info.min).all() and (out[16:] == info.max).all()


CONSTANT_CASES = [
    # (shape1, shape2, which inputs are constants): prepare folds constants into the plan.
    ((2, 5, 7), (), (1,)),  # one constant value
    ((), (2, 19), (0,)),
    ((1, 8, 1), (1, 1, 1), (1,)),  # one constant value of a higher rank
    ((1, 3, 3, 56), (1, 1, 1, 56), (1,)),  # SIMD blocks of 16 and a scalar tail of 8 per run
    ((19,), (19,), (0,)),
    ((1, 8, 1), (1, 1, 32), (1,)),  # the variable input broadcasts
    ((3, 1, 20), (3, 7, 20), (0,)),
    ((2, 17, 1), (1, 1, 33), (0, 1)),  # both constant
]


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("type_", ["INT8", "UINT8", "FLOAT32"])
@pytest.mark.parametrize("shapes,constants", [(c[:2], c[2]) for c in CONSTANT_CASES], ids=str)
def test_constant_inputs(op, type_, shapes, constants):
    rng = np.random.default_rng(zlib.crc32(repr((op, shapes, type_, constants)).encode()))
    q = [{}, {}, {}]
    if type_ != "FLOAT32":
        q = [dict(scale=s, zero_point=z) for s, z in _random_quant(rng, op, type_)]
    dtype = np.dtype(type_.lower())
    specs = []
    for i, shape in enumerate(shapes):
        if i in constants:
            if type_ == "FLOAT32":
                data = rng.standard_normal(shape).astype(dtype)
            else:
                data = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)
            specs.append(const(data, type_, **q[i]))
        else:
            specs.append(Spec(shape, type_, **q[i]))
    out_shape = tuple(np.broadcast_shapes(*shapes))
    version = VERSIONS_8BIT.get(type_, 1)
    model = single_op_model(op, specs, [Spec(out_shape, type_, **q[2])], version=version,
                            fused_activation_function=ACTIVATIONS["RELU6" if op == "MUL" else "NONE"])
    check_against_litert(model, seed=7)


# ---------------------------------------------------------------------------------------------
# Errors and versions.


@pytest.mark.parametrize("op", OPS)
def test_rejects_shapes_that_do_not_broadcast(op):
    model = single_op_model(op, [Spec((2, 3)), Spec((4, 3))], [Spec((2, 3))])
    assert "not broadcastable" in prepare_error(model)


def test_rejects_mixed_input_types():
    model = single_op_model("ADD", [Spec((3,)), Spec((3,), "INT32")], [Spec((3,))])
    assert "input types differ (FLOAT32 and INT32)" in prepare_error(model)


def test_rejects_output_type_different_from_inputs():
    model = single_op_model("MUL", [Spec((3,)), Spec((3,))], [Spec((3,), "INT32")])
    assert "output type INT32 differs from input type FLOAT32" in prepare_error(model)


@pytest.mark.parametrize("op,type_", [("SUB", "INT16"), ("MUL", "BOOL"), ("ADD", "FLOAT16")])
def test_rejects_unsupported_types(op, type_):
    model = single_op_model(op, [Spec((3,), type_), Spec((3,), type_)], [Spec((3,), type_)])
    assert f"type {type_} is not supported" in prepare_error(model)


def test_rejects_quantized_int16():
    q = dict(scale=0.5, zero_point=0)
    model = single_op_model("ADD", [Spec((3,), "INT16", **q), Spec((3,), "INT16", **q)], [Spec((3,), "INT16", **q)],
                            version=2)
    assert "quantized INT16 is not supported" in prepare_error(model)


def test_rejects_int8_without_quantization():
    model = single_op_model("ADD", [Spec((3,), "INT8"), Spec((3,), "INT8")], [Spec((3,), "INT8")], version=2)
    assert "needs a positive quantization scale" in prepare_error(model)


def test_rejects_add_output_scale_too_small():
    """add.cc aborts (QuantizeMultiplierSmallerThanOneExp); we fail the node instead."""
    quant = ((1.0, 0), (1.0, 0), (1e-7, 0))
    assert "output multiplier must be < 1" in prepare_error(_model("ADD", (3,), (3,), "INT8", version=2, quant=quant))


def test_rejects_sub_zero_point_out_of_range():
    quant = ((0.1, 0), (0.1, 300), (0.1, 0))
    assert "zero point 300" in prepare_error(_model("SUB", (3,), (3,), "INT8", version=2, quant=quant))


def test_rejects_activation_on_complex64():
    model = _model("MUL", (3,), (3,), "COMPLEX64", version=6, activation="RELU")
    assert "not allowed for COMPLEX64" in prepare_error(model)


@pytest.mark.parametrize("op,version", [("ADD", 3), ("ADD", 6), ("SUB", 5), ("MUL", 4), ("MUL", 8)])
def test_unimplemented_versions_are_not_registered(op, version):
    with pytest.raises(OpResolutionError, match=f"version '{version}'"):
        Interpreter(model_content=single_op_model(op, [Spec((3,)), Spec((3,))], [Spec((3,))], version=version))


def test_sub_v3_broadcasts_beyond_4d():
    model = _model("SUB", (2, 1, 3, 1, 2), (1, 2, 1, 2, 1), "FLOAT32", version=3)
    inputs = [np.arange(12, dtype=np.float32).reshape(2, 1, 3, 1, 2), np.ones((1, 2, 1, 2, 1), np.float32)]
    assert run_ours(model, inputs)[0].shape == (2, 2, 3, 2, 2)
    assert np.array_equal(run_ours(model, inputs)[0], run_litert(model, inputs)[0])


# ---------------------------------------------------------------------------------------------
# Converter-produced models.

FAMILY_OPS = {"ADD", "SUB", "MUL", "RELU", "RELU6", "LOGISTIC", "TANH", "SOFTMAX", "QUANTIZE", "DEQUANTIZE"}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.tflite")), ids=lambda p: p.stem)
def test_converter_written_versions_are_registered(path):
    """Every (op, version) of these families that TensorFlow's converter wrote has a kernel."""
    resolver = BuiltinOpResolver()
    model = load_model(path.read_bytes())
    used = {(op.op, op.version) for sg in model.subgraphs for op in sg.operators if op.op in FAMILY_OPS}
    assert all(resolver.find_op(op, version) is not None for op, version in used), used


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v2_035_96_int8", "interleaved_int8", "dilated_cnn_int8",
                                  "mobilenet_v2_035_96_fp16"])
def test_converter_models_match_litert(name):
    """Whole models with int8 ADD/MUL/TANH/LOGISTIC/SOFTMAX/QUANTIZE/DEQUANTIZE and fp16 weights."""
    path = FIXTURES / f"{name}.tflite"
    check_against_litert(path.read_bytes())


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("activation", ["NONE", "RELU6"])
@pytest.mark.parametrize("type_,values", [
    ("INT32", [(2**31 - 1, 1), (-2**31, 3), (-7, 5), (46341, 46341)]),  # wrapping, as in C++
    ("INT64", [(2**63 - 1, 2), (-9, 4)]),
    ("FLOAT32", [(3e38, 3e38), (np.inf, 1.0), (np.nan, 2.0), (-2.5, 0.75)]),  # clamped to +-FLT_MAX
])
def test_rank0_operands(op, activation, type_, values):
    """Two 0-d inputs take NumPy scalar arithmetic: the same wrapping and clamping as the arrays."""
    version = {"ADD": 4, "SUB": 4, "MUL": 5}[op] if type_ == "INT64" else 1
    model = _model(op, (), (), type_, version=version, activation=activation)
    dtype = np.dtype(type_.lower())
    for a, b in values:
        inputs = [np.array(a, dtype), np.array(b, dtype)]
        out = run_ours(model, inputs)[0]
        assert out.shape == () and out.dtype == dtype
        np.testing.assert_array_equal(out, run_litert(model, inputs)[0])


@pytest.mark.parametrize("op", OPS)
def test_same_size_lower_rank_runtime_operand(op):
    """A [64] runtime input against [1, 64] (viewed in the output's shape) and the other way round."""
    check_against_litert(_model(op, (1, 64), (64,), "FLOAT32"))
    check_against_litert(_model(op, (64,), (1, 64), "FLOAT32"))


@pytest.mark.slow
@pytest.mark.parametrize("op", ["ADD", "MUL"])
@pytest.mark.parametrize("second", [(), (1, 1, 4099)])
def test_int8_prepare_memory_does_not_grow_with_the_output(op, second):
    """Which SIMD path computes each element is described per run, not listed per output element
    (that list took 9 bytes per element in prepare: 547 MB for a 33.5M-element int8 MUL)."""
    shape = (64, 16, 4099)  # 4.2M values; runs of 4099 end in a 3-element scalar tail
    q = {"scale": 0.05, "zero_point": 3}
    other = const(np.full(second, 7, np.int8), "INT8", **q) if second == () else Spec(second, "INT8", **q)
    model = single_op_model(op, [Spec(shape, "INT8", **q), other], [Spec(shape, "INT8", scale=0.1, zero_point=-2)])
    it, peak = allocated_with_peak(model)
    # The input arrays (4.2 MB each) are allocated here too; a per-element path list would add 38 MB.
    assert peak < 2 * np.prod(shape)
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, shape, dtype=np.int8)]
    if second:
        inputs.append(rng.integers(-128, 128, second, dtype=np.int8))
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    got = it.get_tensor(it.get_output_details()[0]["index"])
    np.testing.assert_array_equal(got, run_litert(model, inputs)[0])
