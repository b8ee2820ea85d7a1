"""RESHAPE, SQUEEZE, SHAPE, PACK and CONCATENATION against LiteRT."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from support import Graph, Spec, build, check_against_litert, const, run_litert, run_ours, single_op_model

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.resolver import BuiltinOpResolver

INT8 = {"scale": 0.2, "zero_point": -4}
# (type, quantization, the op version that type needs) for the data-movement ops.
TYPES = [
    ("FLOAT32", {}, 1), ("INT32", {}, 1), ("INT64", {}, 1), ("UINT8", {"scale": 0.1, "zero_point": 128}, 1),
    ("INT8", INT8, 2), ("INT16", {"scale": 0.2, "zero_point": 0}, 3), ("UINT32", {}, 4),
]


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


# -- RESHAPE --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("in_shape", "target", "out_shape"), [
    ((2, 3, 4), [-1, 4], (6, 4)),
    ((2, 3, 4), [4, -1], (4, 6)),
    ((2, 3, 4), [24], (24,)),
    ((1, 1), [], ()),
    ((0, 3), [-1, 3], (0, 3)),
    ((0, 3), [0, -1], (0, 3)),
    ((5,), [1, 5, 1], (1, 5, 1)),
])
def test_reshape_shape_tensor(in_shape, target, out_shape):
    model = single_op_model("RESHAPE", [Spec(in_shape), const(np.array(target, np.int32))], [Spec(out_shape)])
    assert check_against_litert(model)[0].shape == out_shape


@pytest.mark.parametrize(("new_shape", "out_shape"), [([4, -1], (4, 6)), ([2, 12], (2, 12)), ([-1], (24,))])
def test_reshape_new_shape_option_without_shape_tensor(new_shape, out_shape):
    model = single_op_model("RESHAPE", [Spec((2, 3, 4))], [Spec(out_shape)], new_shape=new_shape)
    assert check_against_litert(model)[0].shape == out_shape


def test_reshape_legacy_zero_new_shape_means_scalar():
    model = single_op_model("RESHAPE", [Spec((1,))], [Spec(())], new_shape=[0])
    assert check_against_litert(model)[0].shape == ()


def test_reshape_int8_keeps_values():
    model = single_op_model("RESHAPE", [Spec((2, 3, 4), "INT8", **INT8), const(np.array([4, -1], np.int32))],
                            [Spec((4, 6), "INT8", **INT8)])
    x = np.arange(-12, 12, dtype=np.int8).reshape(2, 3, 4)
    np.testing.assert_array_equal(check_against_litert(model, [x])[0], x.reshape(4, 6))


def test_reshape_shape_from_graph_input():
    model = single_op_model("RESHAPE", [Spec((2, 3, 4)), Spec((2,), "INT32")], [Spec((6, 4))])
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ours = check_against_litert(model, [x, np.array([3, -1], np.int32)])
    assert ours[0].shape == (3, 8)


@pytest.mark.parametrize(("target", "message"), [
    ([5, -1], "cannot reshape"),
    ([7, 4], "cannot reshape"),
    ([-1, -1], "at most one -1"),
    ([-2, 12], "negative dimension"),
])
def test_reshape_bad_shape_raises(target, message):
    model = single_op_model("RESHAPE", [Spec((2, 3, 4)), const(np.array(target, np.int32))], [Spec((24,))])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


# -- SQUEEZE --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("dims", "out_shape"), [
    (None, (3,)), ([], (3,)), ([0], (3, 1, 1)), ([-1], (1, 3, 1)), ([0, 2, 0], (3, 1)), ([-2, 3], (1, 3)),
])
def test_squeeze(dims, out_shape):
    model = single_op_model("SQUEEZE", [Spec((1, 3, 1, 1))], [Spec(out_shape)], squeeze_dims=dims)
    assert check_against_litert(model)[0].shape == out_shape


def test_squeeze_int8():
    model = single_op_model("SQUEEZE", [Spec((1, 4, 1), "INT8", **INT8)], [Spec((4,), "INT8", **INT8)])
    check_against_litert(model)


def test_squeeze_string_v2():
    model = single_op_model("SQUEEZE", [Spec((1, 3), "STRING")], [Spec((3,), "STRING")], version=2)
    x = np.array([[b"a", b"bc", b""]], dtype=object)
    ref, ours = run_litert(model, [x])[0], run_ours(model, [x])[0]
    assert ours.tolist() == ref.tolist() == [b"a", b"bc", b""]


@pytest.mark.parametrize("dims", [[1], [4], [-5]])
def test_squeeze_non_unit_dimension_raises(dims):
    model = single_op_model("SQUEEZE", [Spec((1, 3, 1, 1))], [Spec((3,))], squeeze_dims=dims)
    with pytest.raises(KernelError, match="is not of size 1"):
        _prepare(model)


# -- SHAPE ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("out_type", "typ"), [(2, "INT32"), (4, "INT64")])
@pytest.mark.parametrize("in_shape", [(2, 3, 5), (7,), (1, 1, 1, 1, 9)])
def test_shape(out_type, typ, in_shape):
    model = single_op_model("SHAPE", [Spec(in_shape)], [Spec((len(in_shape),), typ)], out_type=out_type)
    assert check_against_litert(model)[0].tolist() == list(in_shape)


def test_shape_of_scalar_is_empty():
    # LiteRT's Python get_tensor cannot return a zero-byte tensor, so this checks ours alone.
    model = single_op_model("SHAPE", [Spec(())], [Spec((0,), "INT32")], out_type=2)
    out = run_ours(model, [np.float32(1.0).reshape(())])[0]
    assert out.shape == (0,) and out.dtype == np.int32


def test_shape_out_type_mismatch_raises():
    model = single_op_model("SHAPE", [Spec((2, 3))], [Spec((2,), "INT32")], out_type=4)
    with pytest.raises(KernelError, match="out_type is INT64 but the output tensor is INT32"):
        _prepare(model)


def test_shape_float_out_type_raises():
    model = single_op_model("SHAPE", [Spec((2, 3))], [Spec((2,))], out_type=0)
    with pytest.raises(KernelError, match="unknown output data type 0"):
        _prepare(model)


# -- PACK -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("typ", "quant", "version"), TYPES, ids=[t[0] for t in TYPES])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_pack(typ, quant, version, axis):
    out_shape = [2, 3]
    out_shape.insert(axis + 3 if axis < 0 else axis, 3)
    model = single_op_model("PACK", [Spec((2, 3), typ, **quant)] * 3, [Spec(tuple(out_shape), typ, **quant)],
                            version=version, axis=axis, values_count=3)
    check_against_litert(model)


def test_pack_int8_needs_equal_quantization():
    model = single_op_model("PACK", [Spec((2,), "INT8", **INT8), Spec((2,), "INT8", scale=0.1, zero_point=-4)],
                            [Spec((2, 2), "INT8", **INT8)], version=2, values_count=2)
    with pytest.raises(KernelError, match="input 1 quantization"):
        _prepare(model)


def test_pack_shape_mismatch_raises():
    model = single_op_model("PACK", [Spec((2, 3)), Spec((3, 2))], [Spec((2, 2, 3))], values_count=2)
    with pytest.raises(KernelError, match=r"input 1 has shape \[3, 2\]"):
        _prepare(model)


def test_pack_values_count_mismatch_raises():
    model = single_op_model("PACK", [Spec((2,)), Spec((2,))], [Spec((3, 2))], values_count=3)
    with pytest.raises(KernelError, match="values_count is 3 but the node has 2 inputs"):
        _prepare(model)


# -- CONCATENATION --------------------------------------------------------------------------------

CONCAT_TYPES = [*TYPES, ("BOOL", {}, 1)]


@pytest.mark.parametrize(("typ", "quant", "version"), CONCAT_TYPES, ids=[t[0] for t in CONCAT_TYPES])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concatenation(typ, quant, version, axis):
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    shapes[1][axis], shapes[2][axis] = 1, 5
    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    model = single_op_model("CONCATENATION", [Spec(tuple(s), typ, **quant) for s in shapes],
                            [Spec(tuple(out_shape), typ, **quant)], version=version, axis=axis)
    check_against_litert(model)


def test_concatenation_uint8_requantizes_each_input():
    rng = np.random.default_rng(3)
    for seed in range(10):
        quants = [{"scale": float(rng.uniform(0.01, 0.5)), "zero_point": int(rng.integers(0, 256))} for _ in range(4)]
        model = single_op_model(
            "CONCATENATION", [Spec((2, 3), "UINT8", **quants[0]), Spec((2, 4), "UINT8", **quants[1]),
                              Spec((2, 2), "UINT8", **quants[2])],
            [Spec((2, 9), "UINT8", **quants[3])], axis=1)
        check_against_litert(model, seed=seed)


def test_concatenation_constant_scalars():
    model = single_op_model("CONCATENATION", [const(np.float32(1.5)), const(np.float32(2.5))], [Spec((2,))])
    assert check_against_litert(model)[0].tolist() == [1.5, 2.5]


def test_concatenation_mismatched_shapes_raise():
    model = single_op_model("CONCATENATION", [Spec((2, 3)), Spec((3, 3))], [Spec((2, 6))], axis=1)
    with pytest.raises(KernelError, match=r"input 1 shape \[3, 3\] differs from input 0 shape \[2, 3\] outside axis 1"):
        _prepare(model)


def test_concatenation_int8_different_scales_raise():
    # concatenation.cc: int8 inputs are not requantized, so their quantization must equal the output's.
    model = single_op_model("CONCATENATION", [Spec((2,), "INT8", **INT8), Spec((2,), "INT8", scale=0.4)],
                            [Spec((4,), "INT8", **INT8)], version=2)
    with pytest.raises(KernelError, match="int8 input 1 quantization"):
        _prepare(model)
    with pytest.raises(RuntimeError, match="scale"):
        run_litert(model, [np.zeros(2, np.int8), np.zeros(2, np.int8)])


def test_concatenation_fused_activation_raises():
    model = single_op_model("CONCATENATION", [Spec((2,)), Spec((2,))], [Spec((4,))], fused_activation_function=1)
    with pytest.raises(KernelError, match="fused activation RELU is not supported"):
        _prepare(model)


@pytest.mark.parametrize("axis", [2, -3])
def test_concatenation_bad_axis_raises(axis):
    model = single_op_model("CONCATENATION", [Spec((2, 3)), Spec((2, 3))], [Spec((4, 3))], axis=axis)
    with pytest.raises(KernelError, match=f"axis {axis} is out of range"):
        _prepare(model)


def test_registered_versions():
    resolver = BuiltinOpResolver()
    assert resolver.builtin_versions("RESHAPE") == [1]
    assert resolver.builtin_versions("SQUEEZE") == [1, 2]
    assert resolver.builtin_versions("SHAPE") == [1]
    # PACK v5 (float8) and CONCATENATION v5-v7 (int4, float16, float8) are not implemented.
    assert resolver.builtin_versions("PACK") == [1, 2, 3, 4]
    assert resolver.builtin_versions("CONCATENATION") == [1, 2, 3, 4]


# -- prepared again after an upstream resize ------------------------------------------------------

def _slice_concat_reshape_model() -> bytes:
    """x[:rows] (rows from an input, so dynamic) concatenated with a constant row, then flattened; in
    between, the same on a static input y, which is prepared again whenever the slice's shape changes."""
    buffers: list[bytes] = [b""]
    g = Graph(buffers)
    x, size, y = g.tensor((6, 2)), g.tensor((2,), "INT32"), g.tensor((3, 2))
    part, joined, flat = g.tensor((1, 2)), g.tensor((2, 2)), g.tensor((4,))
    y_joined, y_flat = g.tensor((4, 2)), g.tensor((8,))
    row, flatten = g.const(np.full((1, 2), 7.0, np.float32)), g.const(np.array([-1], np.int32))
    g.op("SLICE", [x, g.const(np.zeros(2, np.int32)), size], [part])
    g.op("CONCATENATION", [y, row], [y_joined], axis=0)
    g.op("RESHAPE", [y_joined, flatten], [y_flat])
    g.op("CONCATENATION", [part, row], [joined], axis=0)
    g.op("RESHAPE", [joined, flatten], [flat])
    for t in (part, joined, flat):  # the converter marks the row counts it cannot know as -1
        g.tensors[t] = dataclasses.replace(g.tensors[t], shape_signature=(-1,) + g.tensors[t].shape[1:])
    return build((g, [x, size, y], [flat, y_flat]))


def test_concat_and_reshape_follow_an_upstream_shape_that_changes_and_returns():
    """CONCATENATION and RESHAPE are prepared again after every resize upstream in the plan: for a new
    input shape, for one they saw before, and for their unchanged one."""
    model = _slice_concat_reshape_model()
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = -np.arange(6, dtype=np.float32).reshape(3, 2)
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    for rows in (2, 5, 2, 2, 6):
        inputs = [x, np.array([rows, -1], np.int32), y]
        for d, v in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], v)
        it.invoke()
        ours = [it.get_tensor(d["index"]) for d in it.get_output_details()]
        for got, want in zip(ours, run_litert(model, inputs)):
            np.testing.assert_array_equal(got, want)
        assert ours[0].shape == (2 * rows + 2,)
