"""Each op's plain reference function against its fast kernel (hypothesis) and against LiteRT.

`Interpreter(reference=True)` runs the references (Registration.reference); the fast kernels must
equal them bit for bit on 8-bit types and within tolerance on float, across shapes, strides,
dilations, zero points and activations, under LiteRT's numerics and under a declared rounding
(which takes the kernels' generic output stage). The references themselves must match LiteRT; for
ops without a fast path the array function (e.g. `reduce`, `gather_nd`) is called directly.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_models import conv3d_model, conv_model, fc_model, pool_model, tc_model
from support import (
    FIXTURES,
    Spec,
    assert_close_to_reference,
    const,
    random_inputs,
    run_litert,
    run_ours,
    single_op_model,
)

from accelsim.runtime.errors import OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Quantization
from accelsim.runtime.kernels.activations import elu, gelu, hard_swish, leaky_relu, logistic, prelu, relu, tanh
from accelsim.runtime.kernels.cast import cast
from accelsim.runtime.kernels.common import QuantParams
from accelsim.runtime.kernels.concat import concatenation, pack
from accelsim.runtime.kernels.conv.geometry import SAME, VALID
from accelsim.runtime.kernels.cumsum import cumsum
from accelsim.runtime.kernels.fill import fill, range_values, zeros_like
from accelsim.runtime.kernels.gather import gather, gather_nd
from accelsim.runtime.kernels.logical import compare, logical_and, logical_not, logical_or, select
from accelsim.runtime.kernels.lstm import LstmOptions, LstmWeights, lstm
from accelsim.runtime.kernels.math import (
    absolute,
    div,
    exp,
    floor_div,
    floor_mod,
    log,
    maximum_minimum,
    neg,
    power,
    rsqrt,
    sqrt,
    square,
    squared_difference,
)
from accelsim.runtime.kernels.normalization import l2_normalization, local_response_normalization
from accelsim.runtime.kernels.pad import mirror_pad, pad
from accelsim.runtime.kernels.quantize import dequantize, quantize, requantize
from accelsim.runtime.kernels.reduce import ReduceQuantization, arg_min_max, mean, reduce
from accelsim.runtime.kernels.resize import ResizeOptions, resize_bilinear, resize_nearest_neighbor
from accelsim.runtime.kernels.shape import expand_dims, reshape, shape_of, squeeze
from accelsim.runtime.kernels.slicing import StridedSliceMasks, slice_, strided_slice
from accelsim.runtime.kernels.softmax import LogSoftmaxTable, log_softmax
from accelsim.runtime.kernels.space import batch_to_space_nd, depth_to_space, space_to_batch_nd, space_to_depth
from accelsim.runtime.kernels.split import split, unpack
from accelsim.runtime.kernels.tile import broadcast_to, tile
from accelsim.runtime.kernels.transpose import transpose
from accelsim.runtime.numerics import ROUNDINGS, NumericsProfile
from accelsim.runtime.quant import activation_name
from accelsim.runtime.read import load_model
from accelsim.runtime.resolver import BuiltinOpResolver

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUANTIZED_KINDS = ("int8_per_channel", "int8_per_tensor", "uint8")
ACTIVATION = st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])


def run_with(model: bytes, inputs, *, reference: bool = False, profile: NumericsProfile | None = None):
    """Our outputs of a one-node model, its node run with `profile` (as a delegate asks for one)."""
    interpreter = Interpreter(model_content=model, reference=reference)
    if profile is not None:
        interpreter.subgraph(0).context.set_numerics([0], profile)
    interpreter.allocate_tensors()
    for d, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def check_fast_equals_reference(model: bytes, seed: int, litert: bool = True, rtol: float = 1e-5) -> None:
    """Fast kernel == reference (bit for bit on integers, rtol on float), the reference == LiteRT, and
    with a declared rounding the fast kernel's generic stage == the reference with that rounding."""
    inputs = random_inputs(Interpreter(model_content=model).get_input_details(), seed)
    reference = run_with(model, inputs, reference=True)
    assert_close_to_reference(run_with(model, inputs), reference, rtol)
    if litert:
        assert_close_to_reference(reference, run_litert(model, inputs), rtol)
    if reference[0].dtype.kind in "iu":
        declared = NumericsProfile(rounding=list(ROUNDINGS)[seed % len(ROUNDINGS)])
        assert_close_to_reference(run_with(model, inputs, profile=declared),
                                  run_with(model, inputs, reference=True, profile=declared))


@st.composite
def conv_cases(draw, op: str):
    depthwise = op == "DEPTHWISE_CONV_2D"
    kind = draw(st.sampled_from(("float", *QUANTIZED_KINDS)))
    cin = draw(st.integers(1, 12))
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    h = draw(st.integers((kh - 1) * dilation[0] + 1, 14))
    w = draw(st.integers((kw - 1) * dilation[1] + 1, 14))
    if depthwise:
        filter_shape = (1, kh, kw, cin * draw(st.integers(1, 3)))
    else:
        groups = draw(st.sampled_from([g for g in (1, 2, 3) if cin % g == 0])) if kind != "uint8" else 1
        filter_shape = (groups * draw(st.integers(1, 6)), kh, kw, cin // groups)
    return dict(op=op, in_shape=(draw(st.integers(1, 2)), h, w, cin), filter_shape=filter_shape, kind=kind,
                padding=draw(st.sampled_from([SAME, VALID])), stride=stride, dilation=dilation,
                activation=draw(ACTIVATION), seed=draw(st.integers(0, 2**16)))


@pytest.mark.slow
@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@SETTINGS
@given(data=st.data())
def test_conv_kernels_equal_their_reference(op, data):
    case = data.draw(conv_cases(op))
    seed = case.pop("seed")
    grouped = op == "CONV_2D" and case["filter_shape"][3] != case["in_shape"][3]
    # LiteRT's builtin CONV_2D takes grouped convolutions only from version 6 with float (its reference
    # kernels), so grouped cases are checked against our reference alone.
    model = conv_model(**case, seed=seed, version=6 if grouped else None)
    check_fast_equals_reference(model, seed, litert=not grouped)


@pytest.mark.slow
@SETTINGS
@given(kind=st.sampled_from(("float", *QUANTIZED_KINDS)), rows=st.integers(1, 5), depth=st.integers(1, 40),
       units=st.integers(1, 24), activation=ACTIVATION, bias=st.booleans(), seed=st.integers(0, 2**16))
def test_fully_connected_equals_its_reference(kind, rows, depth, units, activation, bias, seed):
    model = fc_model((rows, depth), units, kind, activation=activation, bias=bias, seed=seed)
    check_fast_equals_reference(model, seed)


@pytest.mark.slow
@SETTINGS
@given(op=st.sampled_from(["AVERAGE_POOL_2D", "MAX_POOL_2D"]), typ=st.sampled_from(["FLOAT32", "INT8", "UINT8"]),
       shape=st.tuples(st.integers(1, 2), st.integers(1, 12), st.integers(1, 12), st.integers(1, 9)),
       window=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3)),
       padding=st.sampled_from([SAME, VALID]), activation=ACTIVATION, seed=st.integers(0, 2**16))
def test_pools_equal_their_reference(op, typ, shape, window, padding, activation, seed):
    if padding == VALID and (window[0] > shape[1] or window[1] > shape[2]):
        padding = SAME  # an empty VALID output is tested in test_pooling.py
    check_fast_equals_reference(pool_model(op, typ, shape, window, padding, activation), seed)


@st.composite
def binary_cases(draw):
    op = draw(st.sampled_from(["ADD", "SUB", "MUL"]))
    typ = draw(st.sampled_from(["FLOAT32", "INT32", "INT8", "UINT8"]))
    shape = draw(st.lists(st.integers(1, 9), min_size=0, max_size=4))
    other = [d if draw(st.booleans()) else 1 for d in shape][draw(st.integers(0, len(shape))):]
    shapes = (tuple(shape), tuple(other)) if draw(st.booleans()) else (tuple(other), tuple(shape))
    quant = ({}, {}, {})
    if typ in ("INT8", "UINT8"):
        lo, hi = (-128, 127) if typ == "INT8" else (0, 255)
        s1, s2 = draw(st.floats(0.01, 0.2)), draw(st.floats(0.01, 0.2))
        out = max(s1, s2) * draw(st.floats(0.6, 3.0)) if op != "MUL" else s1 * s2 * draw(st.floats(20, 200))
        quant = tuple(dict(scale=float(np.float32(s)), zero_point=draw(st.integers(lo, hi))) for s in (s1, s2, out))
    version = 2 if typ == "INT8" else 1
    out_shape = tuple(np.broadcast_shapes(*shapes))
    model = single_op_model(op, [Spec(shapes[0], typ, **quant[0]), Spec(shapes[1], typ, **quant[1])],
                            [Spec(out_shape, typ, **quant[2])], version=version,
                            fused_activation_function=draw(st.integers(0, 3)))
    return model, draw(st.integers(0, 2**16))


@pytest.mark.slow
@SETTINGS
@given(case=binary_cases())
def test_add_sub_mul_equal_their_reference(case):
    model, seed = case
    check_fast_equals_reference(model, seed)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.tflite")
                                         if p.stem not in ("atan_custom", "mobilenet_v2_100_224_int8")))
def test_reference_interpreter_runs_whole_fixture_models_like_litert(name):
    model = (FIXTURES / f"{name}.tflite").read_bytes()
    inputs = random_inputs(Interpreter(model_content=model).get_input_details(), seed=3)
    assert_close_to_reference(run_ours(model, inputs, reference=True), run_litert(model, inputs))


def test_every_builtin_op_has_a_reference():
    resolver = BuiltinOpResolver()
    builtins = sorted({name for name, custom, _, _ in resolver.registrations() if not custom})
    assert len(builtins) == 97 and resolver.reference_ops() == builtins


def test_reference_refuses_an_op_without_one_by_name():
    from custom_op_atan import atan_resolver

    with pytest.raises(OpResolutionError) as err:
        Interpreter(model_path=FIXTURES / "atan_custom.tflite", op_resolver=atan_resolver(), reference=True)
    message = str(err.value)
    assert "reference=True, but Atan (operator 1) has no reference function" in message
    assert "ops with references: ABS, ADD, ARG_MAX" in message


def test_set_numerics_takes_only_a_profile():
    interpreter = Interpreter(model_path=FIXTURES / "sparse_float.tflite")
    with pytest.raises(TypeError, match="needs a runtime.numerics.NumericsProfile, got str"):
        interpreter.subgraph(0).context.set_numerics([0], "half_even")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"rounding": "banker"}, "numerics rounding must be 'litert' or one of ['half_away_from_zero', 'half_up', "
                             "'half_even', 'truncate'], got 'banker'"),
    ({"compute": "bfloat16"}, "numerics compute must be one of ['native', 'float16'], got 'bfloat16'"),
])
def test_numerics_profile_names_the_valid_choices(kwargs, message):
    with pytest.raises(ValueError) as err:
        NumericsProfile(**kwargs)
    assert str(err.value) == message


@pytest.mark.slow
@SETTINGS
@given(kind=st.sampled_from(("float", "int8_per_channel", "int8_per_tensor", "uint8")), data=st.data())
def test_transpose_conv_equals_its_reference(kind, data):
    in_shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5)),
                data.draw(st.integers(1, 6)))
    kernel = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    padding = data.draw(st.sampled_from([SAME, VALID]))
    # The output sizes whose implied input (transpose_conv.cc ComputePaddingHeightWidth) is in_shape's.
    out_hw = tuple(data.draw(st.integers((i - 1) * s + 1, i * s) if padding == SAME else
                             st.integers((i - 1) * s + k, (i - 1) * s + k + s - 1))
                   for i, k, s in zip(in_shape[1:3], kernel, stride))
    seed = data.draw(st.integers(0, 2**16))
    model = tc_model(in_shape, data.draw(st.integers(1, 9)), kernel, stride, padding, out_hw, kind=kind,
                     activation=data.draw(ACTIVATION), seed=seed)
    check_fast_equals_reference(model, seed)


@pytest.mark.slow
@SETTINGS
@given(data=st.data())
def test_conv3d_equals_its_reference(data):
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(data.draw(st.integers(1, 2)) for _ in range(3))
    dilation = tuple(data.draw(st.integers(1, 2)) for _ in range(3))
    spatial = tuple(data.draw(st.integers((k - 1) * d + 1, 7)) for k, d in zip(kernel, dilation))
    in_shape = (data.draw(st.integers(1, 2)), *spatial, data.draw(st.integers(1, 4)))
    seed = data.draw(st.integers(0, 2**16))
    model = conv3d_model(in_shape, kernel, data.draw(st.integers(1, 5)), stride, dilation,
                         data.draw(st.sampled_from([SAME, VALID])), bias=data.draw(st.booleans()),
                         activation=data.draw(ACTIVATION), seed=seed)
    check_fast_equals_reference(model, seed)


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8"]), shape=st.lists(st.integers(1, 12), min_size=1, max_size=3),
       beta=st.sampled_from([1.0, 0.5, 2.0]), in_scale=st.floats(0.02, 0.3), zero_point=st.integers(-100, 100),
       seed=st.integers(0, 2**16))
def test_softmax_equals_its_reference(typ, shape, beta, in_scale, zero_point, seed):
    quant_in = quant_out = {}
    if typ != "FLOAT32":
        offset = 128 if typ == "UINT8" else 0
        quant_in = dict(scale=float(np.float32(in_scale)), zero_point=zero_point + offset)
        quant_out = dict(scale=1 / 256, zero_point=-128 if typ == "INT8" else 0)
    model = single_op_model("SOFTMAX", [Spec(tuple(shape), typ, **quant_in)], [Spec(tuple(shape), typ, **quant_out)],
                            version=2 if typ == "INT8" else 1, beta=beta)
    check_fast_equals_reference(model, seed)


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8", "INT32"]), data=st.data())
def test_mean_equals_its_reference(typ, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=4)))
    axes = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    keep_dims = data.draw(st.booleans())
    quant_in = quant_out = {}
    if typ in ("INT8", "UINT8"):
        offset = 128 if typ == "UINT8" else 0
        quant_in = dict(scale=float(np.float32(data.draw(st.floats(0.01, 0.2)))),
                        zero_point=data.draw(st.integers(-20, 20)) + offset)
        quant_out = dict(scale=float(np.float32(data.draw(st.floats(0.01, 0.2)))),
                         zero_point=data.draw(st.integers(-20, 20)) + offset)
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape) if keep_dims or i not in axes)
    model = single_op_model("MEAN", [Spec(shape, typ, **quant_in), const(np.array(axes, np.int32))],
                            [Spec(out_shape, typ, **quant_out)], version=2 if typ == "INT8" else 1,
                            keep_dims=keep_dims)
    check_fast_equals_reference(model, data.draw(st.integers(0, 2**16)))


QUANTIZE_CASES = [("FLOAT32", "INT8"), ("FLOAT32", "UINT8"), ("FLOAT32", "INT16"), ("INT8", "INT8"), ("INT8", "UINT8"),
                  ("UINT8", "INT8"), ("UINT8", "UINT8"), ("INT16", "INT8"), ("INT32", "INT8")]


@pytest.mark.slow
@SETTINGS
@given(types=st.sampled_from(QUANTIZE_CASES), shape=st.lists(st.integers(1, 11), min_size=1, max_size=3),
       scales=st.tuples(st.floats(0.01, 0.5), st.floats(0.01, 0.5)), zero_points=st.tuples(st.integers(-50, 50),
                                                                                          st.integers(-50, 50)),
       seed=st.integers(0, 2**16))
def test_quantize_and_dequantize_equal_their_reference(types, shape, scales, zero_points, seed):
    def quant(typ, scale, zp):
        if typ == "FLOAT32":
            return {}
        return dict(scale=float(np.float32(scale)), zero_point=0 if typ in ("INT16", "INT32") else
                    zp + (128 if typ == "UINT8" else 0))
    src, dst = types
    version = 2 if "INT16" in types else 1
    shape = tuple(shape)
    quantize = single_op_model("QUANTIZE", [Spec(shape, src, **quant(src, scales[0], zero_points[0]))],
                               [Spec(shape, dst, **quant(dst, scales[1], zero_points[1]))], version=version)
    check_fast_equals_reference(quantize, seed)
    if src == "FLOAT32" and dst in ("INT8", "UINT8"):
        dequantize = single_op_model("DEQUANTIZE", [Spec(shape, dst, **quant(dst, scales[1], zero_points[1]))],
                                     [Spec(shape)], version=2 if dst == "INT8" else 1)
        check_fast_equals_reference(dequantize, seed)


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8", "INT32"]), data=st.data())
def test_concatenation_and_transpose_equal_their_reference(typ, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    axis = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    quant = [{} for _ in range(len(sizes) + 1)]
    if typ in ("INT8", "UINT8"):
        # int8 inputs must share the output's quantization; uint8 ones are requantized to it.
        common = dict(scale=0.05, zero_point=3 if typ == "INT8" else 128)
        quant = [common if typ == "INT8" else dict(scale=float(np.float32(data.draw(st.floats(0.02, 0.2)))),
                                                    zero_point=data.draw(st.integers(0, 255)))
                 for _ in sizes] + [common]
    inputs = [Spec(shape[:axis] + (n,) + shape[axis + 1:], typ, **q) for n, q in zip(sizes, quant)]
    out_shape = shape[:axis] + (sum(sizes),) + shape[axis + 1:]
    version = 2 if typ == "INT8" else 1
    seed = data.draw(st.integers(0, 2**16))
    concat = single_op_model("CONCATENATION", inputs, [Spec(out_shape, typ, **quant[-1])], version=version,
                             axis=axis)
    check_fast_equals_reference(concat, seed)
    perm = data.draw(st.permutations(range(len(shape))))
    transpose = single_op_model("TRANSPOSE", [Spec(shape, typ, **quant[-1]), const(np.array(perm, np.int32))],
                                [Spec(tuple(shape[p] for p in perm), typ, **quant[-1])], version=version)
    check_fast_equals_reference(transpose, seed)


# (op, type, version): the table ops (LUTPopulate) and the types their kernels take.
LUT_CASES = [("EXP", "FLOAT32", 1), ("EXP", "INT8", 2), ("EXP", "INT16", 2), ("LOG", "FLOAT32", 1), ("LOG", "INT8", 2),
             ("LOGISTIC", "FLOAT32", 1), ("LOGISTIC", "INT8", 2), ("LOGISTIC", "UINT8", 1), ("TANH", "FLOAT32", 1),
             ("TANH", "INT8", 2), ("TANH", "UINT8", 1), ("ELU", "FLOAT32", 1), ("ELU", "INT8", 1),
             ("GELU", "FLOAT32", 1), ("GELU", "INT8", 2), ("GELU", "UINT8", 2), ("GELU", "INT16", 2)]


@pytest.mark.slow
@SETTINGS
@given(case=st.sampled_from(LUT_CASES), shape=st.lists(st.integers(1, 9), min_size=0, max_size=3),
       scales=st.tuples(st.floats(0.01, 0.1), st.floats(0.005, 0.1)), zero_points=st.tuples(st.integers(-40, 40),
                                                                                            st.integers(-40, 40)),
       approximate=st.booleans(), seed=st.integers(0, 2**16))
def test_table_ops_equal_their_reference(case, shape, scales, zero_points, approximate, seed):
    op, typ, version = case
    quant_in = quant_out = {}
    if typ != "FLOAT32":
        offset = 128 if typ == "UINT8" else 0
        zps = (0, 0) if typ == "INT16" else (zero_points[0] + offset, zero_points[1] + offset)
        # int16 spans +-32767 steps: a smaller input scale keeps EXP's samples finite.
        in_scale = scales[0] / 50 if typ == "INT16" else scales[0]
        quant_in = dict(scale=float(np.float32(in_scale)), zero_point=zps[0])
        quant_out = dict(scale=float(np.float32(scales[1])), zero_point=zps[1])
        if op == "LOGISTIC":  # SigmoidPrepare: the output covers [0, 1) in steps of 1/256
            quant_out = dict(scale=1 / 256, zero_point=-128 if typ == "INT8" else 0)
        if op == "TANH":
            quant_out = dict(scale=1 / 128, zero_point=0 if typ == "INT8" else 128)
    options = dict(approximate=approximate) if op == "GELU" else {}
    shape = tuple(shape)
    model = single_op_model(op, [Spec(shape, typ, **quant_in)], [Spec(shape, typ, **quant_out)], version=version,
                            **options)
    check_fast_equals_reference(model, seed)


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8", "INT32"]), data=st.data())
def test_pad_split_gather_equal_their_reference(typ, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    quant = dict(scale=0.05, zero_point=data.draw(st.integers(-10, 10)) + (128 if typ == "UINT8" else 0)) \
        if typ in ("INT8", "UINT8") else {}
    version = 2 if typ == "INT8" else 1
    seed = data.draw(st.integers(0, 2**16))
    amounts = np.array(data.draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=len(shape),
                                          max_size=len(shape))), np.int32)
    padded = tuple(int(d + a + b) for d, (a, b) in zip(shape, amounts))
    pad = single_op_model("PAD", [Spec(shape, typ, **quant), const(amounts)], [Spec(padded, typ, **quant)],
                          version=version)
    check_fast_equals_reference(pad, seed)
    axis = data.draw(st.integers(0, len(shape) - 1))
    parts = data.draw(st.sampled_from([n for n in range(1, shape[axis] + 1) if shape[axis] % n == 0]))
    part = shape[:axis] + (shape[axis] // parts,) + shape[axis + 1:]
    split = single_op_model("SPLIT", [const(np.array(axis, np.int32)), Spec(shape, typ, **quant)],
                            [Spec(part, typ, **quant) for _ in range(parts)], version=version, num_splits=parts)
    check_fast_equals_reference(split, seed)
    positions = np.array(data.draw(st.lists(st.integers(0, shape[axis] - 1), min_size=0, max_size=4)), np.int32)
    if data.draw(st.booleans()) and positions.size:
        positions = positions[:1].reshape(())  # one position: the kernel's view paths
    gathered = shape[:axis] + positions.shape + shape[axis + 1:]
    gather = single_op_model("GATHER", [Spec(shape, typ, **quant), const(positions)], [Spec(gathered, typ, **quant)],
                             version=version, axis=axis)
    check_fast_equals_reference(gather, seed)


@pytest.mark.slow
@SETTINGS
@given(op=st.sampled_from(["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]),
       typ=st.sampled_from(["FLOAT32", "INT32", "INT8", "UINT8"]), data=st.data())
def test_comparisons_equal_their_reference(op, typ, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=0, max_size=3)))
    other = shape[data.draw(st.integers(0, len(shape))):]
    quant = [{}, {}]
    if typ in ("INT8", "UINT8"):
        offset = 128 if typ == "UINT8" else 0
        quant = [dict(scale=float(np.float32(data.draw(st.floats(0.01, 0.5)))),
                      zero_point=data.draw(st.integers(-20, 20)) + offset) for _ in range(2)]
    model = single_op_model(op, [Spec(shape, typ, **quant[0]), Spec(other, typ, **quant[1])], [Spec(shape, "BOOL")],
                            version=2 if typ == "INT8" else 1)
    check_fast_equals_reference(model, data.draw(st.integers(0, 2**16)))


# (op, type, version, options): the remaining elementwise ops, each with a type that takes its table or
# quantized path and one that takes its float path.
UNARY_CASES = [("RELU", "FLOAT32", 1), ("RELU", "INT8", 2), ("RELU", "UINT8", 2), ("RELU6", "FLOAT32", 1),
               ("RELU6", "INT8", 2), ("LEAKY_RELU", "FLOAT32", 1), ("LEAKY_RELU", "INT8", 1),
               ("HARD_SWISH", "FLOAT32", 1), ("HARD_SWISH", "INT8", 1), ("HARD_SWISH", "UINT8", 1),
               ("SQRT", "FLOAT32", 1), ("SQRT", "INT8", 2), ("RSQRT", "FLOAT32", 1), ("RSQRT", "INT8", 2),
               ("ABS", "FLOAT32", 1), ("ABS", "INT8", 2), ("NEG", "INT32", 1), ("SQUARE", "FLOAT32", 1)]


@pytest.mark.slow
@SETTINGS
@given(case=st.sampled_from(UNARY_CASES), shape=st.lists(st.integers(1, 9), min_size=0, max_size=3),
       scales=st.tuples(st.floats(0.01, 0.1), st.floats(0.01, 0.1)), zero_points=st.tuples(st.integers(-40, 40),
                                                                                          st.integers(-40, 40)),
       seed=st.integers(0, 2**16))
def test_unary_ops_equal_their_reference(case, shape, scales, zero_points, seed):
    op, typ, version = case
    quant_in = quant_out = {}
    if typ in ("INT8", "UINT8"):
        offset = 128 if typ == "UINT8" else 0
        # SQRT and RSQRT refuse inputs below the zero point: put it at the type's lowest value.
        in_zp = -128 + offset if op in ("SQRT", "RSQRT") else zero_points[0] + offset
        quant_in = dict(scale=float(np.float32(scales[0])), zero_point=in_zp)
        quant_out = dict(scale=float(np.float32(scales[1])), zero_point=zero_points[1] + offset)
    options = dict(alpha=0.2) if op == "LEAKY_RELU" else {}
    shape = tuple(shape)
    model = single_op_model(op, [Spec(shape, typ, **quant_in)], [Spec(shape, typ, **quant_out)], version=version,
                            **options)
    check_fast_equals_reference(model, seed)


@pytest.mark.slow
@SETTINGS
@given(op=st.sampled_from(["DIV", "SQUARED_DIFFERENCE", "MINIMUM", "MAXIMUM", "PRELU"]),
       typ=st.sampled_from(["FLOAT32", "INT8"]), data=st.data())
def test_binary_math_ops_equal_their_reference(op, typ, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    other = shape[data.draw(st.integers(0, len(shape))):]
    quant = [{}, {}, {}]
    if typ == "INT8":
        quant = [dict(scale=float(np.float32(data.draw(st.floats(0.02, 0.2)))), zero_point=data.draw(
            st.integers(-20, 20))) for _ in range(3)]
    version = 2 if typ == "INT8" and op not in ("DIV", "PRELU") else 1
    model = single_op_model(op, [Spec(shape, typ, **quant[0]), Spec(other, typ, **quant[1])],
                            [Spec(shape, typ, **quant[2])], version=version)
    inputs = random_inputs(Interpreter(model_content=model).get_input_details(), data.draw(st.integers(0, 2**16)))
    if op == "DIV":  # a zero divisor (its zero point when quantized) is an error in LiteRT and here
        zero = quant[1].get("zero_point", 0)
        inputs[1] = np.where(inputs[1] == zero, inputs[1].dtype.type(zero + 1), inputs[1])
    reference = run_with(model, inputs, reference=True)
    assert_close_to_reference(run_with(model, inputs), reference)
    assert_close_to_reference(reference, run_litert(model, inputs))


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8"]), data=st.data())
def test_batch_matmul_and_resize_equal_their_reference(typ, data):
    batch, rows, depth, cols = (data.draw(st.integers(1, 5)) for _ in range(4))
    adj_x, adj_y = data.draw(st.booleans()), data.draw(st.booleans())
    quant = [{}, {}, {}]
    if typ == "INT8":
        quant = [dict(scale=float(np.float32(data.draw(st.floats(0.02, 0.2)))), zero_point=zp)
                 for zp in (data.draw(st.integers(-20, 20)), 0, data.draw(st.integers(-20, 20)))]
    lhs = (batch, depth, rows) if adj_x else (batch, rows, depth)
    rhs = (cols, depth) if adj_y else (depth, cols)
    seed = data.draw(st.integers(0, 2**16))
    matmul = single_op_model("BATCH_MATMUL", [Spec(lhs, typ, **quant[0]), Spec(rhs, typ, **quant[1])],
                             [Spec((batch, rows, cols), typ, **quant[2])], version=2 if typ == "INT8" else 1,
                             adj_x=adj_x, adj_y=adj_y)
    check_fast_equals_reference(matmul, seed)
    shape = (1, data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 3)))
    size = (data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12)))
    half_pixel = data.draw(st.booleans())
    for op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
        resize = single_op_model(op, [Spec(shape, typ, **quant[0]), const(np.array(size, np.int32))],
                                 [Spec((1, *size, shape[3]), typ, **quant[0])], version=2 if typ == "INT8" else 1,
                                 half_pixel_centers=half_pixel)
        check_fast_equals_reference(resize, seed)


# -- array references called directly, against LiteRT ---------------------------------------------
# The ops below have no fast path: the node form of each array function is both invoke and reference,
# so "fast == reference" holds by construction; what is tested here is the array function itself,
# called on plain NumPy arrays and options, against LiteRT running the same op.


def litert_output(op: str, inputs: list[Spec], out: Spec, arrays: list[np.ndarray], version: int = 1,
                  **options) -> np.ndarray:
    """LiteRT's output of a one-`op` model fed `arrays` for its non-constant inputs."""
    return run_litert(single_op_model(op, inputs, [out], version=version, **options), arrays)[0]


def draw_array(data, typ: str, shape: tuple[int, ...], lo: int = -9, hi: int = 9) -> np.ndarray:
    """Small integers (exact in every op below), as float32 or the type's integers."""
    seed = data.draw(st.integers(0, 2**16))
    values = np.random.default_rng(seed).integers(lo, hi + 1, shape)
    return values.astype({"FLOAT32": np.float32, "INT32": np.int32, "INT8": np.int8, "UINT8": np.uint8}[typ])


SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@SETTINGS
@given(op=st.sampled_from(["SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"]),
       typ=st.sampled_from(["FLOAT32", "INT32"]), shape=SHAPES, keep_dims=st.booleans(), data=st.data())
def test_reduce_as_arrays_matches_litert(op, typ, shape, keep_dims, data):
    axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape))))
    x = draw_array(data, typ, shape, -2, 2)
    ours = reduce(op, x, axes, keep_dims)
    theirs = litert_output(op, [Spec(shape, typ), const(np.array(axes, np.int32))], Spec(ours.shape, typ), [x],
                           keep_dims=keep_dims)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["INT8", "UINT8"]), shape=SHAPES, data=st.data())
def test_quantized_sum_as_arrays_matches_litert(typ, shape, data):
    axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1, max_size=len(shape))))
    zero_points = (data.draw(st.integers(-20, 20)), data.draw(st.integers(-20, 20)))
    if typ == "UINT8":
        zero_points = (zero_points[0] + 128, zero_points[1] + 128)
    scales = (float(np.float32(data.draw(st.floats(0.01, 0.1)))), float(np.float32(data.draw(st.floats(0.05, 0.5)))))
    x = draw_array(data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255)))
    q = ReduceQuantization(scales[0], zero_points[0], scales[1], zero_points[1], x.dtype)
    ours = reduce("SUM", x, axes, False, q)
    theirs = litert_output("SUM", [Spec(shape, typ, scale=scales[0], zero_point=zero_points[0]),
                                   const(np.array(axes, np.int32))],
                           Spec(ours.shape, typ, scale=scales[1], zero_point=zero_points[1]), [x],
                           version=2 if typ == "INT8" else 1, keep_dims=False)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(op=st.sampled_from(["ARG_MAX", "ARG_MIN"]), typ=st.sampled_from(["FLOAT32", "INT32", "UINT8"]), shape=SHAPES,
       data=st.data())
def test_arg_min_max_as_arrays_matches_litert(op, typ, shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = draw_array(data, typ, shape, 0, 3)  # few values: ties must pick the first index
    ours = arg_min_max(op, x, axis, np.int32)
    theirs = litert_output(op, [Spec(shape, typ), const(np.array([axis], np.int32))], Spec(ours.shape, "INT32"), [x],
                           output_type=2)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(op=st.sampled_from(["MAXIMUM", "MINIMUM", "FLOOR_DIV", "FLOOR_MOD", "POW", "SELECT_V2"]),
       typ=st.sampled_from(["FLOAT32", "INT32"]), shapes=st.sampled_from([((2, 3), (2, 3)), ((2, 3), (3,)),
                                                                          ((4, 1, 2), (3, 1)), ((3,), ())]),
       data=st.data())
def test_binary_rules_as_arrays_match_litert(op, typ, shapes, data):
    a = draw_array(data, typ, shapes[0], *((1, 3) if op == "POW" else (-9, 9)))
    b = draw_array(data, typ, shapes[1], 0, 3) if op == "POW" else draw_array(data, typ, shapes[1])
    if op in ("FLOOR_DIV", "FLOOR_MOD"):
        b = np.where(b == 0, 3, b).astype(b.dtype)
    out_shape = np.broadcast_shapes(*shapes)
    specs = [Spec(shapes[0], typ), Spec(shapes[1], typ)]
    arrays = [a, b]
    if op == "SELECT_V2":
        cond = draw_array(data, "INT32", shapes[1], 0, 1).astype(np.bool_)
        specs, arrays = [Spec(shapes[1], "BOOL"), *specs], [cond, a, b]
        ours = select(cond, a, b, out_shape)
    else:
        ours = {"MAXIMUM": lambda: maximum_minimum(op, a, b), "MINIMUM": lambda: maximum_minimum(op, a, b),
                "FLOOR_DIV": lambda: floor_div(a, b), "FLOOR_MOD": lambda: floor_mod(a, b),
                "POW": lambda: power(a, b, shapes[0] != shapes[1])}[op]()
    version = 2 if op == "FLOOR_DIV" and typ == "FLOAT32" else 1
    assert_close_to_reference([ours], [litert_output(op, specs, Spec(out_shape, typ), arrays, version=version)])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32"]), shape=SHAPES, exclusive=st.booleans(), reverse=st.booleans(),
       data=st.data())
def test_cumsum_as_arrays_matches_litert(typ, shape, exclusive, reverse, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = draw_array(data, typ, shape)
    ours = cumsum(x, axis, exclusive, reverse)
    theirs = litert_output("CUMSUM", [Spec(shape, typ), const(np.array(axis, np.int32))], Spec(shape, typ), [x],
                           exclusive=exclusive, reverse=reverse)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(params_shape=SHAPES, depth=st.integers(1, 4),
       rows=st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple), data=st.data())
def test_gather_nd_as_arrays_matches_litert(params_shape, depth, rows, data):
    depth = min(depth, len(params_shape))
    params = draw_array(data, "FLOAT32", params_shape)
    seed = data.draw(st.integers(0, 2**16))
    indices = np.random.default_rng(seed).integers(0, params_shape[:depth], (*rows, depth)).astype(np.int32)
    ours = gather_nd(params, indices)
    theirs = litert_output("GATHER_ND", [Spec(params_shape), const(indices)], Spec(ours.shape), [params])
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8"]), block=st.integers(1, 3), n=st.integers(1, 2), h=st.integers(1, 3),
       w=st.integers(1, 3), c=st.integers(1, 3), data=st.data())
def test_depth_and_space_as_arrays_match_litert(typ, block, n, h, w, c, data):
    quant = dict(scale=0.1, zero_point=2) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    deep = draw_array(data, typ, (n, h, w, c * block * block))
    ours = depth_to_space(deep, block)
    assert_close_to_reference([ours], [litert_output("DEPTH_TO_SPACE", [Spec(deep.shape, typ, **quant)],
                                                     Spec(ours.shape, typ, **quant), [deep], version=version,
                                                     block_size=block)])
    wide = draw_array(data, typ, (n, h * block, w * block, c))
    ours = space_to_depth(wide, block)
    assert_close_to_reference([ours], [litert_output("SPACE_TO_DEPTH", [Spec(wide.shape, typ, **quant)],
                                                     Spec(ours.shape, typ, **quant), [wide], version=version,
                                                     block_size=block)])


@SETTINGS
@given(block=st.tuples(st.integers(1, 3), st.integers(1, 3)), pads=st.lists(st.integers(0, 2), min_size=4, max_size=4),
       n=st.integers(1, 2), c=st.integers(1, 3), data=st.data())
def test_space_and_batch_as_arrays_match_litert(block, pads, n, c, data):
    pads = np.array(pads, np.int64).reshape(2, 2)
    # Each padded size a multiple of its block, at least one input pixel.
    size = [max(data.draw(st.integers(1, 4)), -(-(int(p.sum()) + 1) // b)) * b - int(p.sum())
            for b, p in zip(block, pads)]
    x = draw_array(data, "FLOAT32", (n, *size, c))
    ours = space_to_batch_nd(x, list(block), pads, 0)
    consts = [const(np.array(block, np.int32)), const(pads.astype(np.int32))]
    assert_close_to_reference([ours], [litert_output("SPACE_TO_BATCH_ND", [Spec(x.shape), *consts], Spec(ours.shape),
                                                     [x])])
    back = batch_to_space_nd(ours, list(block), pads)
    assert_close_to_reference([back], [litert_output("BATCH_TO_SPACE_ND", [Spec(ours.shape), *consts],
                                                     Spec(back.shape), [ours])])
    assert np.array_equal(back, x)


@SETTINGS
@given(pair=st.sampled_from([("FLOAT32", "INT32"), ("FLOAT32", "UINT8"), ("INT32", "FLOAT32"), ("INT32", "BOOL"),
                             ("INT8", "INT32"), ("FLOAT32", "INT8")]), shape=SHAPES, data=st.data())
def test_cast_as_arrays_matches_litert(pair, shape, data):
    src, dst = pair
    seed = data.draw(st.integers(0, 2**16))
    x = (np.random.default_rng(seed).standard_normal(shape) * 200).astype(np.float32) if src == "FLOAT32" \
        else draw_array(data, src, shape, -9, 9)  # floats out of range: SafeCast saturates
    ours = cast(x, np.dtype({"INT32": np.int32, "UINT8": np.uint8, "INT8": np.int8, "FLOAT32": np.float32,
                             "BOOL": np.bool_}[dst]))
    assert_close_to_reference([ours], [litert_output("CAST", [Spec(shape, src)], Spec(shape, dst), [x])])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8"]), shape=SHAPES, data=st.data())
def test_normalizations_as_arrays_match_litert(typ, shape, data):
    zero_point = {"FLOAT32": 0, "INT8": data.draw(st.integers(-20, 20)), "UINT8": data.draw(st.integers(100, 150))}[typ]
    quant_in = {} if typ == "FLOAT32" else dict(scale=0.05, zero_point=zero_point)
    quant_out = {} if typ == "FLOAT32" else dict(scale=1 / 128, zero_point={"INT8": 0, "UINT8": 128}[typ])
    x = draw_array(data, "FLOAT32", shape) if typ == "FLOAT32" else draw_array(
        data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255)))
    ours = l2_normalization(x, zero_point)
    theirs = litert_output("L2_NORMALIZATION", [Spec(shape, typ, **quant_in)], Spec(shape, typ, **quant_out), [x],
                           version=2 if typ == "INT8" else 1)
    assert_close_to_reference([ours], [theirs])
    log_out = {} if typ == "FLOAT32" else dict(scale=16 / 256, zero_point={"INT8": 127, "UINT8": 255}[typ])
    table = None if typ == "FLOAT32" else LogSoftmaxTable.of(0.05, 16 / 256, log_out["zero_point"])
    ours = log_softmax(x, table)
    theirs = litert_output("LOG_SOFTMAX", [Spec(shape, typ, **quant_in)], Spec(shape, typ, **log_out), [x],
                           version=2 if typ == "INT8" else 1)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 9)),
       radius=st.integers(0, 4), bias=st.floats(0.5, 2), alpha=st.floats(0.01, 1), beta=st.floats(0.25, 1),
       data=st.data())
def test_local_response_normalization_as_arrays_matches_litert(shape, radius, bias, alpha, beta, data):
    x = draw_array(data, "FLOAT32", shape)
    f32 = [float(np.float32(v)) for v in (bias, alpha, beta)]
    ours = local_response_normalization(x, radius, *f32)
    theirs = litert_output("LOCAL_RESPONSE_NORMALIZATION", [Spec(shape)], Spec(shape), [x], radius=radius,
                           bias=f32[0], alpha=f32[1], beta=f32[2])
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT64"]), start=st.integers(-20, 20), delta=st.integers(-5, 5),
       count=st.integers(1, 12), half=st.booleans())
def test_range_as_arrays_matches_litert(typ, start, delta, count, half):
    if delta == 0:
        delta = 1
    dtype = {"FLOAT32": np.float32, "INT32": np.int32, "INT64": np.int64}[typ]
    step = delta / 2 if half and typ == "FLOAT32" else delta
    scalars = [dtype(start), dtype(start + step * count), dtype(step)]
    ours = range_values(*scalars)
    theirs = litert_output("RANGE", [const(np.array(v, dtype)) for v in scalars], Spec(ours.shape, typ), [],
                           version=2 if typ == "INT64" else 1)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_split_and_unpack_as_arrays_match_litert(typ, shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    cuts = sorted(data.draw(st.lists(st.integers(0, shape[axis]), max_size=3)))
    sizes = np.diff([0, *cuts, shape[axis]]).astype(np.int32)
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=1) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    ours = split(x, axis, sizes.tolist())
    outs = [Spec(p.shape, typ, **quant) for p in ours]
    model = single_op_model("SPLIT_V", [Spec(shape, typ, **quant), const(sizes), const(np.array(axis, np.int32))],
                            outs, version=version, num_splits=len(sizes))
    assert_close_to_reference(ours, run_litert(model, [x]))
    ours = unpack(x, axis)
    model = single_op_model("UNPACK", [Spec(shape, typ, **quant)], [Spec(p.shape, typ, **quant) for p in ours],
                            version=version, num=shape[axis], axis=axis)
    assert_close_to_reference(ours, run_litert(model, [x]))


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8", "UINT8"]), shape=SHAPES, keep_dims=st.booleans(),
       spatial=st.booleans(), data=st.data())
def test_mean_as_arrays_matches_litert(typ, shape, keep_dims, spatial, data):
    if spatial:  # optimized_integer_ops/mean.h's 4-D rule: NHWC, axes {1, 2}, keep_dims; 16+ channels vectorised
        shape, axes, keep_dims = (1, *shape[:2], data.draw(st.integers(1, 40))), (1, 2), True
    else:
        axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1, max_size=len(shape))))
    quantized = typ in ("INT8", "UINT8")
    x = draw_array(data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255) if typ == "UINT8" else (-9, 9)))
    q_in = dict(scale=float(np.float32(data.draw(st.floats(0.01, 0.1)))), zero_point=data.draw(
        st.integers(-10, 10)) + (128 if typ == "UINT8" else 0)) if quantized else {}
    q_out = dict(scale=float(np.float32(data.draw(st.floats(0.01, 0.1)))), zero_point=data.draw(
        st.integers(-10, 10)) + (128 if typ == "UINT8" else 0)) if quantized else {}
    quantization = ReduceQuantization(q_in["scale"], q_in["zero_point"], q_out["scale"], q_out["zero_point"],
                                      x.dtype) if quantized else None
    ours = mean(x, axes, keep_dims, quantization)
    theirs = litert_output("MEAN", [Spec(shape, typ, **q_in), const(np.array(axes, np.int32))],
                           Spec(ours.shape, typ, **q_out), [x], version=2 if typ == "INT8" else 1, keep_dims=keep_dims)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple), data=st.data())
def test_gather_as_arrays_matches_litert(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    batch_dims = data.draw(st.integers(0, axis))
    extra = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    seed = data.draw(st.integers(0, 2**16))
    positions = np.random.default_rng(seed).integers(0, shape[axis], shape[:batch_dims] + extra).astype(np.int32)
    x = draw_array(data, "INT8", shape, -128, 127)
    ours = gather(x, positions, axis, batch_dims)
    quant = dict(scale=0.1, zero_point=0)
    theirs = litert_output("GATHER", [Spec(shape, "INT8", **quant), const(positions)],
                           Spec(ours.shape, "INT8", **quant), [x], version=5, axis=axis, batch_dims=batch_dims)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "UINT8"]), shape=SHAPES, count=st.integers(1, 3), data=st.data())
def test_concatenation_as_arrays_matches_litert(typ, shape, count, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    values = [draw_array(data, typ, shape[:axis] + (data.draw(st.integers(1, 3)),) + shape[axis + 1:], 0, 255)
              for _ in range(count)]
    quant = [dict(scale=float(np.float32(data.draw(st.floats(0.02, 0.2)))), zero_point=data.draw(st.integers(0, 255)))
             if typ == "UINT8" else {} for _ in range(count + 1)]
    pairs = [(q["scale"], q["zero_point"]) for q in quant] if typ == "UINT8" else [None] * (count + 1)
    ours = concatenation(values, axis, pairs[:-1] if typ == "UINT8" else None, pairs[-1])
    theirs = litert_output("CONCATENATION", [Spec(v.shape, typ, **q) for v, q in zip(values, quant)],
                           Spec(ours.shape, typ, **quant[-1]), values, axis=axis)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(types=st.sampled_from(QUANTIZE_CASES), shape=SHAPES,
       scales=st.tuples(st.floats(0.01, 0.5), st.floats(0.01, 0.5)),
       zero_points=st.tuples(st.integers(-50, 50), st.integers(-50, 50)), seed=st.integers(0, 2**16))
def test_quantize_and_dequantize_as_arrays_match_litert(types, shape, scales, zero_points, seed):
    src, dst = types
    dtypes = {"FLOAT32": np.float32, "INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16, "INT32": np.int32}
    pairs = [(float(np.float32(s)), 0 if typ in ("INT16", "INT32") else z + (128 if typ == "UINT8" else 0))
             for typ, s, z in zip(types, scales, zero_points)]
    specs = [Spec(shape, typ, **({} if typ == "FLOAT32" else dict(scale=p[0], zero_point=p[1])))
             for typ, p in zip(types, pairs)]
    x = random_inputs([dict(dtype=dtypes[src], shape=shape)], seed)[0]
    if src == "FLOAT32":
        ours = quantize(x, Quantization((pairs[1][0],), (pairs[1][1],)), np.dtype(dtypes[dst]))
    else:
        ours = requantize(x, pairs[0], pairs[1], np.dtype(dtypes[dst]), (src, dst) in {
            ("INT8", "INT8"), ("INT8", "UINT8"), ("UINT8", "INT8"), ("UINT8", "UINT8")})
    version = 2 if "INT16" in types else 1
    assert_close_to_reference([ours], [litert_output("QUANTIZE", specs[:1], specs[1], [x], version=version)])
    if dst in ("INT8", "UINT8"):
        back = dequantize(ours, Quantization((pairs[1][0],), (pairs[1][1],)))
        assert_close_to_reference([back], [litert_output("DEQUANTIZE", specs[1:], Spec(shape), [ours],
                                                         version=2 if dst == "INT8" else 1)])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_shape_ops_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    new_shape = [int(np.prod(shape))] if data.draw(st.booleans()) else list(shape[::-1])
    new_shape[data.draw(st.integers(0, len(new_shape) - 1))] = -1
    ours = reshape(x, new_shape)
    assert_close_to_reference([ours], [litert_output("RESHAPE", [Spec(shape, typ, **quant),
                                                                 const(np.array(new_shape, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x])])
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    ours = expand_dims(x, axis + len(shape) + 1 if axis < 0 else axis)
    assert_close_to_reference([ours], [litert_output("EXPAND_DIMS", [Spec(shape, typ, **quant),
                                                                     const(np.array(axis, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x])])
    ones = tuple(i for i, d in enumerate(shape) if d == 1)
    dims = data.draw(st.sampled_from([(), ones, ones[:1], tuple(d - len(shape) for d in ones)]))
    ours = squeeze(x, dims)
    assert_close_to_reference([ours], [litert_output("SQUEEZE", [Spec(shape, typ, **quant)],
                                                     Spec(ours.shape, typ, **quant), [x], squeeze_dims=list(dims))])
    out_type = data.draw(st.sampled_from([("INT32", np.int32, 2), ("INT64", np.int64, 4)]))
    ours = shape_of(x, out_type[1])
    assert_close_to_reference([ours], [litert_output("SHAPE", [Spec(shape, typ, **quant)], Spec((len(shape),),
                                                     out_type[0]), [x], out_type=out_type[2])])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_pad_and_transpose_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    amounts = np.array([[data.draw(st.integers(0, d)) for _ in range(2)] for d in shape], np.int32)
    padded = tuple(int(d + a.sum()) for d, a in zip(shape, amounts))
    fill = data.draw(st.integers(-5, 5))
    # PADV2's constant_values: it must share the output's quantization, so an int8 fill is its own value.
    ours = pad(x, amounts, fill)
    fill_spec = const(np.array([fill], x.dtype), typ, **quant)
    assert_close_to_reference([ours], [litert_output("PADV2", [Spec(shape, typ, **quant), const(amounts), fill_spec],
                                                     Spec(padded, typ, **quant), [x], version=version)])
    # PAD's fill for an int8 tensor is the output zero point.
    ours = pad(x, amounts, quant.get("zero_point", 0))
    assert_close_to_reference([ours], [litert_output("PAD", [Spec(shape, typ, **quant), const(amounts)],
                                                     Spec(padded, typ, **quant), [x], version=version)])
    mode = data.draw(st.sampled_from([0, 1]))  # REFLECT, SYMMETRIC
    mirror = np.minimum(amounts, np.array(shape, np.int32)[:, None] - (1 - mode))
    ours = mirror_pad(x, mirror, mode)
    assert_close_to_reference([ours], [litert_output("MIRROR_PAD", [Spec(shape, typ, **quant), const(mirror)],
                                                     Spec(ours.shape, typ, **quant), [x],
                                                     version=2 if typ == "INT8" else 1, mode=mode)])
    perm = data.draw(st.permutations(range(len(shape))))
    ours = transpose(x, perm)
    assert_close_to_reference([ours], [litert_output("TRANSPOSE", [Spec(shape, typ, **quant),
                                                                   const(np.array(perm, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x],
                                                     version=2 if typ == "INT8" else 1)])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_slices_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    begin = [data.draw(st.integers(0, d)) for d in shape]
    size = [data.draw(st.integers(-1, d - b)) for d, b in zip(shape, begin)]
    ours = slice_(x, begin, size)
    assert_close_to_reference([ours], [litert_output("SLICE", [Spec(shape, typ, **quant),
                                                               const(np.array(begin, np.int32)),
                                                               const(np.array(size, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x], version=version)])
    count = data.draw(st.integers(1, len(shape)))  # indices for the leading axes; the rest are whole
    shrink = data.draw(st.integers(0, 2**count - 1))
    begin, end, strides = [], [], []
    for axis, d in enumerate(shape[:count]):
        if shrink >> axis & 1:
            begin.append(data.draw(st.integers(-d, d - 1)))
            end.append(begin[-1] + 1)
            strides.append(1)
        else:
            begin.append(data.draw(st.integers(-d - 1, d + 1)))
            end.append(data.draw(st.integers(-d - 1, d + 1)))
            strides.append(data.draw(st.sampled_from([-2, -1, 1, 2, 3])))
    masks = StridedSliceMasks(begin_mask=data.draw(st.integers(0, 2**count - 1)) & ~shrink,
                              end_mask=data.draw(st.integers(0, 2**count - 1)) & ~shrink, shrink_axis_mask=shrink)
    ours = strided_slice(x, np.array(begin), np.array(end), np.array(strides), masks)
    consts = [const(np.array(v, np.int32)) for v in (begin, end, strides)]
    theirs = litert_output("STRIDED_SLICE", [Spec(shape, typ, **quant), *consts], Spec(ours.shape, typ, **quant), [x],
                           version=version, begin_mask=masks.begin_mask, end_mask=masks.end_mask,
                           shrink_axis_mask=shrink)
    assert_close_to_reference([ours], [theirs])


# op -> its array reference as f(x, quantization), for the unary cases below.
UNARY_REFERENCES = {
    "RELU": lambda x, q: relu("RELU", x, q), "RELU6": lambda x, q: relu("RELU6", x, q), "LOGISTIC": logistic,
    "TANH": tanh, "ELU": elu, "GELU": lambda x, q: gelu(x, False, q), "HARD_SWISH": hard_swish,
    "LEAKY_RELU": lambda x, q: leaky_relu(x, 0.2, q), "EXP": exp, "LOG": log, "SQRT": sqrt, "RSQRT": rsqrt,
    "ABS": absolute, "NEG": lambda x, q: neg(x), "SQUARE": lambda x, q: square(x)}
UNARY_ARRAY_CASES = [("RELU", "FLOAT32", 1), ("RELU", "INT8", 2), ("RELU6", "UINT8", 2), ("LOGISTIC", "FLOAT32", 1),
                     ("LOGISTIC", "INT8", 2), ("TANH", "UINT8", 1), ("TANH", "FLOAT32", 1), ("ELU", "FLOAT32", 1),
                     ("ELU", "INT8", 1), ("GELU", "FLOAT32", 1), ("GELU", "INT8", 2), ("HARD_SWISH", "FLOAT32", 1),
                     ("HARD_SWISH", "INT8", 1), ("LEAKY_RELU", "FLOAT32", 1), ("LEAKY_RELU", "INT8", 1),
                     ("EXP", "FLOAT32", 1), ("EXP", "INT8", 2), ("EXP", "INT16", 2), ("LOG", "FLOAT32", 1),
                     ("LOG", "INT8", 2), ("SQRT", "FLOAT32", 1), ("SQRT", "INT8", 2), ("RSQRT", "FLOAT32", 1),
                     ("RSQRT", "INT8", 2), ("RSQRT", "INT16", 3), ("ABS", "FLOAT32", 1), ("ABS", "INT8", 2),
                     ("ABS", "INT32", 5), ("NEG", "INT32", 1), ("SQUARE", "FLOAT32", 1)]


@SETTINGS
@given(case=st.sampled_from(UNARY_ARRAY_CASES), shape=st.lists(st.integers(1, 6), min_size=0, max_size=3),
       scales=st.tuples(st.floats(0.01, 0.1), st.floats(0.01, 0.1)), zero_points=st.tuples(st.integers(-40, 40),
                                                                                          st.integers(-40, 40)),
       seed=st.integers(0, 2**16))
def test_unary_ops_as_arrays_match_litert(case, shape, scales, zero_points, seed):
    op, typ, version = case
    shape = tuple(shape)
    quant_in = quant_out = {}
    if typ in ("INT8", "UINT8", "INT16"):
        offset = 128 if typ == "UINT8" else 0
        zps = (0, 0) if typ == "INT16" else (zero_points[0] + offset, zero_points[1] + offset)
        if op in ("SQRT", "RSQRT") and typ != "INT16":  # no input below the zero point
            zps = (-128 + offset, zps[1])
        quant_in = dict(scale=float(np.float32(scales[0] / (50 if typ == "INT16" else 1))), zero_point=zps[0])
        quant_out = dict(scale=float(np.float32(scales[1])), zero_point=zps[1])
        if op == "LOGISTIC":
            quant_out = dict(scale=1 / 256, zero_point=-128 if typ == "INT8" else 0)
        if op == "TANH":
            quant_out = dict(scale=1 / 128, zero_point=0 if typ == "INT8" else 128)
    x = random_inputs([dict(dtype=np.dtype({"FLOAT32": np.float32, "INT8": np.int8, "UINT8": np.uint8,
                                            "INT16": np.int16, "INT32": np.int32}[typ]), shape=shape)], seed)[0]
    if typ == "FLOAT32" and op in ("LOG", "SQRT", "RSQRT"):
        x = np.abs(x) + np.float32(0.01)
    if typ == "INT16" and op == "RSQRT":
        x = np.abs(x).astype(np.int16)
    quantization = tuple(QuantParams(q["scale"], q["zero_point"]) for q in (quant_in, quant_out)) if quant_in else None
    ours = UNARY_REFERENCES[op](x, quantization)
    options = dict(alpha=0.2) if op == "LEAKY_RELU" else {}
    theirs = litert_output(op, [Spec(shape, typ, **quant_in)], Spec(shape, typ, **quant_out), [x], version=version,
                           **options)
    assert_close_to_reference([np.asarray(ours)], [theirs])


@SETTINGS
@given(op=st.sampled_from(["DIV", "SQUARED_DIFFERENCE", "PRELU"]), typ=st.sampled_from(["FLOAT32", "INT8", "INT32"]),
       activation=st.integers(0, 3), data=st.data())
def test_binary_math_as_arrays_match_litert(op, typ, activation, data):
    if typ == "INT32" and op == "PRELU":
        typ = "FLOAT32"
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    other = shape[data.draw(st.integers(0, len(shape))):]
    specs = [Spec(shape, typ), Spec(other, typ), Spec(shape, typ)]
    a, b = draw_array(data, typ, shape, -100, 100), draw_array(data, typ, other, -100, 100)
    quantization = None
    if typ == "INT8":
        pairs = [(float(np.float32(data.draw(st.floats(0.02, 0.2)))), data.draw(st.integers(-20, 20)))
                 for _ in range(3)]
        specs = [Spec(s.shape, typ, scale=sc, zero_point=zp) for s, (sc, zp) in zip(specs, pairs)]
        quantization = tuple(QuantParams(*p) for p in pairs)
    if op == "DIV":  # a zero divisor (its zero point when quantized) is an error in LiteRT and here
        zero = quantization[1].zero_point if quantization else 0
        b = np.where(b == zero, b.dtype.type(zero + 1), b)
        ours = div(a, b, activation if typ != "INT8" or activation != 3 else 0, quantization)
        options = dict(fused_activation_function=activation if typ != "INT8" or activation != 3 else 0)
    elif op == "SQUARED_DIFFERENCE":
        ours, options = squared_difference(a, b, quantization), {}
    else:
        ours, options = prelu(a, b, quantization), {}
    version = 2 if typ == "INT8" and op == "SQUARED_DIFFERENCE" else 1
    theirs = litert_output(op, specs[:2], specs[2], [a, b], version=version, **options)
    assert_close_to_reference([ours], [theirs])


@SETTINGS
@given(op=st.sampled_from(["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]),
       typ=st.sampled_from(["FLOAT32", "INT32", "INT8", "UINT8"]), data=st.data())
def test_comparisons_and_logical_ops_as_arrays_match_litert(op, typ, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    other = shape[data.draw(st.integers(0, len(shape))):]
    lo, hi = {"INT8": (-128, 127), "UINT8": (0, 255)}.get(typ, (-3, 3))
    a, b = draw_array(data, typ, shape, lo, hi), draw_array(data, typ, other, lo, hi)
    specs, quantization = [Spec(shape, typ), Spec(other, typ)], None
    if typ in ("INT8", "UINT8"):
        pairs = [(float(np.float32(data.draw(st.floats(0.01, 0.5)))),
                  data.draw(st.integers(-20, 20)) + (128 if typ == "UINT8" else 0)) for _ in range(2)]
        specs = [Spec(s.shape, typ, scale=sc, zero_point=zp) for s, (sc, zp) in zip(specs, pairs)]
        quantization = tuple(QuantParams(*p) for p in pairs)
    ours = compare(op, a, b, quantization)
    theirs = litert_output(op, specs, Spec(ours.shape, "BOOL"), [a, b], version=2 if typ == "INT8" else 1)
    assert_close_to_reference([ours], [theirs])
    p, q = a > 0, b > 0
    for name, fn in (("LOGICAL_AND", logical_and), ("LOGICAL_OR", logical_or)):
        ours = fn(p, q)
        theirs = litert_output(name, [Spec(shape, "BOOL"), Spec(other, "BOOL")], Spec(ours.shape, "BOOL"), [p, q])
        assert_close_to_reference([ours], [theirs])
    assert_close_to_reference([logical_not(p)], [litert_output("LOGICAL_NOT", [Spec(shape, "BOOL")],
                                                               Spec(shape, "BOOL"), [p])])


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT32", "INT8"]), shape=SHAPES, data=st.data())
def test_repeating_and_filling_ops_as_arrays_match_litert(typ, shape, data):
    x = draw_array(data, typ, shape)
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    multiples = [data.draw(st.integers(0, 3)) for _ in shape]
    ours = tile(x, multiples)
    assert_close_to_reference([ours], [litert_output("TILE", [Spec(shape, typ, **quant),
                                                              const(np.array(multiples, np.int32))],
                                                     Spec(ours.shape, typ, **quant), [x],
                                                     version=3 if typ == "INT8" else 1)])
    target = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2))) + tuple(
        d if d != 1 else data.draw(st.integers(1, 3)) for d in shape)
    ones = draw_array(data, typ, tuple(1 if d != t else d for d, t in zip(shape, target[-len(shape):])))
    ours = broadcast_to(ones, target)
    assert_close_to_reference([ours], [litert_output("BROADCAST_TO", [Spec(ones.shape, typ, **quant),
                                                                      const(np.array(target, np.int32))],
                                                     Spec(target, typ, **quant), [ones],
                                                     version=3 if typ == "INT8" else 2)])
    count = data.draw(st.integers(1, 3))
    values = [draw_array(data, typ, shape) for _ in range(count)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    ours = pack(values, axis + len(shape) + 1 if axis < 0 else axis)
    assert_close_to_reference([ours], [litert_output("PACK", [Spec(shape, typ, **quant)] * count,
                                                     Spec(ours.shape, typ, **quant), values, version=version,
                                                     values_count=count, axis=axis)])
    value = x.reshape(-1)[:1].reshape(())
    ours = fill(shape, value)
    assert_close_to_reference([ours], [litert_output("FILL", [const(np.array(shape, np.int32)), Spec((), typ, **quant)],
                                                     Spec(shape, typ, **quant), [value],
                                                     version=3 if typ == "INT8" else 1)])
    if typ != "INT8":  # zeros_like.cc: int64, int32 and float32
        assert_close_to_reference([zeros_like(x)], [litert_output("ZEROS_LIKE", [Spec(shape, typ)], Spec(shape, typ),
                                                                  [x])])


@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8", "UINT8"]), flags=st.sampled_from([(False, False), (True, False),
                                                                                  (False, True)]), data=st.data())
def test_resizes_as_arrays_match_litert(typ, flags, data):
    shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)),
             data.draw(st.integers(1, 3)))
    size = (data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12)))
    x = draw_array(data, typ, shape, *((-128, 127) if typ == "INT8" else (0, 255) if typ == "UINT8" else (-9, 9)))
    if typ == "FLOAT32":
        x = x + np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    quant = dict(scale=0.1, zero_point=-3 if typ == "INT8" else 120) if typ != "FLOAT32" else {}
    options = ResizeOptions(*flags)
    version = 3 if any(flags) else 2 if typ == "INT8" else 1
    for op, fn in (("RESIZE_BILINEAR", resize_bilinear), ("RESIZE_NEAREST_NEIGHBOR", resize_nearest_neighbor)):
        ours = fn(x, size, options)
        theirs = litert_output(op, [Spec(shape, typ, **quant), const(np.array(size, np.int32))],
                               Spec(ours.shape, typ, **quant), [x], version=version, align_corners=flags[0],
                               half_pixel_centers=flags[1])
        assert_close_to_reference([ours], [theirs])


@pytest.mark.slow
@SETTINGS
@given(variant=st.sampled_from([{}, dict(cifg=True), dict(peephole=True), dict(projection=True, projection_bias=True),
                                dict(layer_norm=True), dict(cifg=True, peephole=True, layer_norm=True)]),
       time_major=st.booleans(), activation=st.sampled_from([0, 1, 4]), seed=st.integers(0, 2**16))
def test_lstm_as_arrays_matches_litert(variant, time_major, activation, seed):
    from tests.runtime.test_lstm import lstm_model

    model = lstm_model(time_major=time_major, fused_activation_function=activation, seed=seed, n_output=4 if
                       variant.get("projection") else None, **variant)
    constants = Interpreter(model_content=model)
    constants.allocate_tensors()
    index = load_model(model).subgraphs[0].operators[0].inputs

    def value(i):
        return None if index[i] < 0 else constants.get_tensor(index[i])

    weights = LstmWeights.from_gates([value(i) for i in (1, 2, 3, 4)], [value(i) for i in (5, 6, 7, 8)],
                                     [value(i) for i in (12, 13, 14, 15)],
                                     tuple(value(i) for i in (9, 10, 11)) if variant.get("peephole") else None,
                                     tuple(value(i) for i in (20, 21, 22, 23)) if variant.get("layer_norm") else None,
                                     value(16), value(17))
    x = random_inputs(constants.get_input_details(), seed)[0]
    steps = x if time_major else x.transpose(1, 0, 2)
    batch = steps.shape[1]
    ours, _, _ = lstm(steps, np.zeros((batch, weights.n_output), np.float32),
                      np.zeros((batch, weights.n_cell), np.float32), weights, LstmOptions(activation_name(activation)),
                      time_major)
    assert_close_to_reference([ours if time_major else ours.transpose(1, 0, 2)], run_litert(model, [x]))


# Ops whose reference cannot be a function of arrays: they run subgraphs or hold resource state.
# runtime/kernels/__init__.py says what their reference is (the interpreter invoking the subgraphs,
# the subgraph's resource variables).
NOT_ARRAY_FUNCTIONS = {"CALL_ONCE", "IF", "WHILE", "ASSIGN_VARIABLE", "READ_VARIABLE", "VAR_HANDLE"}


def _reached(fn) -> list:
    """The runtime.kernels functions `fn` reaches: closure cells, partials, and the module-level names
    its code (nested code included) reads, followed transitively."""
    found, seen, stack = [], set(), [fn]
    while stack:
        f = stack.pop()
        f = getattr(f, "func", f)  # functools.partial
        if not inspect.isfunction(f) or f in seen or not f.__module__.startswith("accelsim.runtime.kernels"):
            continue
        seen.add(f)
        found.append(f)
        codes, names = [f.__code__], []
        while codes:
            code = codes.pop()
            names += code.co_names
            codes += [c for c in code.co_consts if inspect.iscode(c)]
        stack += [c.cell_contents for c in f.__closure__ or ()] + [f.__globals__.get(n) for n in names]
    return found


def _array_references(op: str, reference) -> list:
    """The plain array functions `reference` reaches that state `op`'s rule: public, not taking a
    context and node, at most 30 lines below the docstring, their docstring's summary naming the op."""
    plain = []
    for f in _reached(reference):
        params = list(inspect.signature(f).parameters)
        lines = inspect.getsource(f).splitlines()
        body = len(lines) - (len(f.__doc__.splitlines()) if f.__doc__ else 0)
        if (not f.__name__.startswith("_") and params[:1] != ["ctx"] and body <= 30 and f.__doc__
                and re.search(rf"\b{op}\b", f.__doc__.split("\n\n")[0])):
            plain.append(f)
    return plain


@pytest.mark.slow
def test_every_builtin_reference_is_a_plain_array_function():
    registrations = BuiltinOpResolver()._builtins.values()
    missing = sorted({reg.op_name for reg in registrations if reg.op_name not in NOT_ARRAY_FUNCTIONS
                      and not _array_references(reg.op_name, reg.reference)})
    assert missing == []
    # The exceptions are registered, and the check does find no array function for them.
    stateful = [reg for reg in registrations if reg.op_name in NOT_ARRAY_FUNCTIONS]
    assert {reg.op_name for reg in stateful} == NOT_ARRAY_FUNCTIONS
    assert not any(_array_references(reg.op_name, reg.reference) for reg in stateful)


@pytest.mark.slow
@SETTINGS
@given(typ=st.sampled_from(["FLOAT32", "INT8"]), shape=SHAPES, data=st.data())
def test_reshape_and_slices_equal_their_reference(typ, shape, data):
    quant = dict(scale=0.1, zero_point=-3) if typ == "INT8" else {}
    version = 2 if typ == "INT8" else 1
    seed = data.draw(st.integers(0, 2**16))
    new_shape = list(shape[::-1])
    reshape_model = single_op_model("RESHAPE", [Spec(shape, typ, **quant), const(np.array(new_shape, np.int32))],
                                    [Spec(tuple(new_shape), typ, **quant)])
    check_fast_equals_reference(reshape_model, seed)
    begin = [data.draw(st.integers(0, d - 1)) for d in shape]
    size = [data.draw(st.integers(1, d - b)) for d, b in zip(shape, begin)]
    slice_model = single_op_model("SLICE", [Spec(shape, typ, **quant), const(np.array(begin, np.int32)),
                                            const(np.array(size, np.int32))],
                                  [Spec(tuple(size), typ, **quant)], version=version)
    check_fast_equals_reference(slice_model, seed)
    strides = [data.draw(st.sampled_from([-2, -1, 1, 2])) for _ in shape]
    begin_mask, end_mask = data.draw(st.integers(0, 2**len(shape) - 1)), data.draw(st.integers(0, 2**len(shape) - 1))
    ends = [data.draw(st.integers(-d, d)) for d in shape]
    picked = strided_slice(np.zeros(shape, np.int8), np.array(begin), np.array(ends), np.array(strides),
                           StridedSliceMasks(begin_mask, end_mask))
    strided_model = single_op_model("STRIDED_SLICE", [Spec(shape, typ, **quant)] + [
        const(np.array(v, np.int32)) for v in (begin, ends, strides)], [Spec(picked.shape, typ, **quant)],
        version=version, begin_mask=begin_mask, end_mask=end_mask)
    check_fast_equals_reference(strided_model, seed)
