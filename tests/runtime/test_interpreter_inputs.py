"""Hostile calls to the interpreter's API: values that are not arrays, wrong calls, wrong order, NaN/Inf.

tests/runtime/test_interpreter_api.py checks LiteRT's wording for the common mistakes; this file adds
the values and calls a careless or hostile caller makes, each compared with LiteRT where LiteRT
behaves sensibly, and with the deviation spelled out where ours deliberately refuses more.
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter as LiteRT
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

from accelsim.runtime import Interpreter
from accelsim.runtime.errors import AccelsimError, InterpreterStateError


@pytest.fixture(scope="module")
def reshape_model() -> bytes:
    return single_op_model("RESHAPE", [Spec((2, 3)), const(np.array([3, 2], np.int32))], [Spec((3, 2))])


def _allocated(model: bytes, cls=Interpreter):
    it = cls(model_content=model)
    it.allocate_tensors()
    return it


def _error(call, it) -> BaseException:
    with pytest.raises(Exception) as info:
        call(it)
    return info.value


# --- set_tensor -----------------------------------------------------------------------------------


class _Opaque:
    pass


@pytest.mark.parametrize("value", [_Opaque(), "abc", b"abcdef", None, {"a": 1}, np.array(["x"] * 6).reshape(2, 3)],
                         ids=["object", "str", "bytes", "None", "dict", "str-array"])
def test_set_tensor_with_non_numeric_values_names_them_string_like_litert(reshape_model, value):
    ours, ref = _allocated(reshape_model), _allocated(reshape_model, LiteRT)
    mine, theirs = _error(lambda it: it.set_tensor(0, value), ours), _error(lambda it: it.set_tensor(0, value), ref)
    assert type(mine) is type(theirs) is ValueError
    assert str(mine) == str(theirs) == (
        "Cannot set tensor: Got value of type STRING but expected type FLOAT32 for input 0, name: input_0 ")


@pytest.mark.parametrize(("value", "message"), [
    ([[1.0], [1.0, 2.0]], "inhomogeneous"),  # LiteRT: "Failed to convert value into readable tensor."
    (np.float32(1.0), "Dimension mismatch. Got 0 but expected 2"),
    (np.ones((2, 3), bool), "Got value of type BOOL but expected type FLOAT32"),
    (np.ones((2, 3), np.float16), "Got value of type FLOAT16 but expected type FLOAT32"),
    (np.ones((3, 2), np.float32), "Got 3 but expected 2 for dimension 0"),
    (np.ones((2, 3, 1), np.float32), "Dimension mismatch. Got 3 but expected 2"),
    # LiteRT copies big-endian bytes as they are and computes on garbage; ours refuses the dtype.
    (np.ones((2, 3), ">f4"), "Got value of type >F4 but expected type FLOAT32"),
], ids=["ragged", "0-d", "bool", "float16", "transposed-shape", "extra-dim", "big-endian"])
def test_set_tensor_refuses_values_it_cannot_copy_exactly(reshape_model, value, message):
    it = _allocated(reshape_model)
    with pytest.raises(ValueError, match=message):
        it.set_tensor(0, value)


@pytest.mark.parametrize("make", [
    lambda x: x[::-1, ::-1],
    lambda x: np.asfortranarray(x),
    lambda x: np.broadcast_to(x[:1], (2, 3)),
    lambda x: np.frombuffer(x.tobytes(), np.float32).reshape(2, 3),  # read-only
], ids=["negative-strides", "fortran", "zero-strides", "read-only"])
def test_set_tensor_copies_any_layout_of_the_right_dtype_like_litert(reshape_model, make):
    x = make(np.arange(6, dtype=np.float32).reshape(2, 3))
    outputs = []
    for cls in (Interpreter, LiteRT):
        it = _allocated(reshape_model, cls)
        it.set_tensor(0, x)
        it.invoke()
        outputs.append(it.get_tensor(it.get_output_details()[0]["index"]))
    np.testing.assert_array_equal(outputs[0], outputs[1])
    np.testing.assert_array_equal(outputs[0], np.ascontiguousarray(x).reshape(3, 2))


def test_set_tensor_keeps_no_reference_to_the_callers_array(reshape_model):
    it = _allocated(reshape_model)
    x = np.ones((2, 3), np.float32)
    it.set_tensor(0, x)
    x[:] = 7
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(2), np.ones((3, 2), np.float32))


def test_set_tensor_refuses_constants_where_litert_would_overwrite_the_model(reshape_model):
    it = _allocated(reshape_model)
    with pytest.raises(ValueError, match=r"tensor 1 \('input_1'\) is a constant of the model"):
        it.set_tensor(1, np.array([3, 2], np.int32))


def test_set_tensor_after_resize_needs_allocate_like_litert(reshape_model):
    ours, ref = _allocated(reshape_model), _allocated(reshape_model, LiteRT)
    for it in (ours, ref):
        it.resize_tensor_input(0, [3, 2])
    call = lambda it: it.set_tensor(0, np.ones((3, 2), np.float32))  # noqa: E731
    assert str(_error(call, ours)) == str(_error(call, ref))


# --- order of calls --------------------------------------------------------------------------------


def test_invoke_twice_and_allocate_twice_give_the_same_result(reshape_model):
    it = _allocated(reshape_model)
    it.set_tensor(0, np.arange(6, dtype=np.float32).reshape(2, 3))
    it.invoke()
    first = it.get_tensor(2)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(2), first)
    it.allocate_tensors()
    it.set_tensor(0, np.arange(6, dtype=np.float32).reshape(2, 3))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(2), first)


def test_invoke_after_a_failed_allocate_is_refused(reshape_model):
    it = _allocated(reshape_model)
    it.resize_tensor_input(0, [4, 4])  # 16 elements cannot become [3, 2]
    with pytest.raises(AccelsimError, match=r"RESHAPE.*cannot reshape \[4, 4\]"):
        it.allocate_tensors()
    with pytest.raises(InterpreterStateError, match="not ready"):
        it.invoke()


# --- get_tensor --------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [None, "0", 1.5, [0]], ids=["None", "str", "float", "list"])
def test_get_tensor_index_must_be_an_integer_like_litert(reshape_model, bad):
    ours, ref = _allocated(reshape_model), _allocated(reshape_model, LiteRT)
    assert type(_error(lambda it: it.get_tensor(bad), ref)) is TypeError
    with pytest.raises(TypeError, match="tensor index must be an integer"):
        ours.get_tensor(bad)


def test_get_tensor_accepts_numpy_integers_and_checks_the_subgraph(reshape_model):
    ours, ref = _allocated(reshape_model), _allocated(reshape_model, LiteRT)
    np.testing.assert_array_equal(ours.get_tensor(np.int64(1)), ref.get_tensor(np.int64(1)))
    assert type(_error(lambda it: it.get_tensor(0, 3), ref)) is ValueError
    with pytest.raises(ValueError, match=r"subgraph index 3 out of range \[0, 1\)"):
        ours.get_tensor(0, 3)
    with pytest.raises(ValueError, match="Invalid tensor index 1099511627776 exceeds max tensor index 3"):
        ours.get_tensor(2**40)


# --- resize_tensor_input -------------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "exc", "message"), [
    ([[2, 3]], ValueError, "Shape should be 1D instead of 2."),
    (["a", 3], ValueError, "invalid literal for int"),
    (None, TypeError, "int\\(\\) argument must be"),
], ids=["2-D", "str", "None"])
def test_resize_refuses_shapes_that_are_not_integer_lists_like_litert(reshape_model, size, exc, message):
    ours, ref = _allocated(reshape_model), _allocated(reshape_model, LiteRT)
    assert type(_error(lambda it: it.resize_tensor_input(0, size), ref)) is exc
    with pytest.raises(exc, match=message):
        ours.resize_tensor_input(0, size)


@pytest.mark.parametrize("size", [[2**31, 3], [2**30, 6]], ids=["over-int32", "over-2GiB"])
def test_resize_refuses_a_shape_too_large_to_allocate(reshape_model, size):
    it = _allocated(reshape_model)
    with pytest.raises(ValueError, match=r"dimensions must fit in int32 and the tensor in 2147483648 bytes"):
        it.resize_tensor_input(0, size)
    it.invoke()  # a refused resize leaves the interpreter as it was


@pytest.mark.parametrize("index", [7, -1, 1, 2], ids=["past-end", "negative", "constant", "output"])
def test_resize_of_a_tensor_that_is_not_an_input_is_refused(reshape_model, index):
    it = _allocated(reshape_model)
    with pytest.raises(ValueError, match="exceeds max tensor index|is not an input of the model"):
        it.resize_tensor_input(index, [3, 2])


def test_resize_with_floats_truncates_and_to_a_new_rank_works_like_litert(reshape_model):
    for size in ([3.9, 2], [6], np.array([1, 6], np.int64)):
        shapes = []
        for cls in (Interpreter, LiteRT):
            it = _allocated(reshape_model, cls)
            it.resize_tensor_input(0, size)
            it.allocate_tensors()
            shapes.append(tuple(it.get_input_details()[0]["shape"]))
        assert shapes[0] == shapes[1]


# --- NaN and infinities flow through float models as in LiteRT -------------------------------------------


FLOAT_FIXTURES = ["dilated_cnn_float", "mobilenet_v2_035_96_float", "mobilenet_v2_035_96_fp16", "sparse_float",
                  "segmentation_float", "transformer_block_float", "lstm_gru_float", "dilated_cnn_int8",
                  "interleaved_float"]


def _poisoned(details, mode: str) -> list[np.ndarray]:
    xs = random_inputs(details, seed=3)
    for x in xs:
        flat = x.reshape(-1)
        if mode == "mixed":
            flat[::7], flat[3::11], flat[5::13] = np.nan, np.inf, -np.inf
        else:
            flat[:] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[mode]
    return xs


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["mixed", "nan", "inf", "-inf"])
@pytest.mark.parametrize("name", FLOAT_FIXTURES)
def test_nan_and_inf_inputs_propagate_like_litert(name, mode):
    raw = (FIXTURES / f"{name}.tflite").read_bytes()
    details = Interpreter(model_content=raw).get_input_details()
    assert all(np.dtype(d["dtype"]).kind == "f" for d in details)
    inputs = _poisoned(details, mode)
    with np.errstate(all="ignore"):
        ours = run_ours(raw, inputs)
    assert_close_to_reference(ours, run_litert(raw, inputs))
