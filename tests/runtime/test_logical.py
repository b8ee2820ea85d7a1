"""Differential tests of comparisons, logical ops, SELECT / SELECT_V2 and CAST against LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, assert_close_to_reference, check_against_litert, run_litert, run_ours, single_op_model

from accelsim.runtime.errors import KernelError
from accelsim.runtime.resolver import BuiltinOpResolver

RNG = np.random.default_rng(99)
COMPARISONS = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]
BROADCASTS = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (1, 3, 1)), ((5,), ()),
              ((2, 1, 3, 1, 4), (3, 2, 1))]


def _out(sa, sb):
    return tuple(np.broadcast_shapes(sa, sb))


def _ints(shape, dtype, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return RNG.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def _compare(op, a, b, spec_a, spec_b, version=1):
    model = single_op_model(op, [spec_a, spec_b], [Spec(_out(a.shape, b.shape), "BOOL")], version=version)
    return check_against_litert(model, [a, b])


# -- comparisons -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("sa,sb", BROADCASTS, ids=str)
def test_compare_float(op, sa, sb):
    # Few distinct values so that equal pairs occur; NaN compares false (and unequal).
    values = np.array([-1.5, 0.0, -0.0, 2.0, np.inf, -np.inf, np.nan], np.float32)
    a, b = RNG.choice(values, sa), RNG.choice(values, sb)
    _compare(op, np.asarray(a, np.float32), np.asarray(b, np.float32), Spec(sa), Spec(sb))


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("type_name", ["INT32", "INT64"])
@pytest.mark.parametrize("sa,sb", BROADCASTS[:4], ids=str)
def test_compare_int(op, type_name, sa, sb):
    dtype = np.dtype(type_name.lower())
    _compare(op, _ints(sa, dtype, -3, 3), _ints(sb, dtype, -3, 3), Spec(sa, type_name), Spec(sb, type_name))


@pytest.mark.parametrize("op,version", [("EQUAL", 4), ("LESS", 3), ("LESS_EQUAL", 1), ("GREATER", 1),
                                        ("GREATER_EQUAL", 3)])
def test_compare_plain_int16(op, version):
    a, b = _ints((3, 50), np.int16, -4, 4), _ints((50,), np.int16, -4, 4)
    _compare(op, a, b, Spec(a.shape, "INT16"), Spec(b.shape, "INT16"), version=version)


@pytest.mark.parametrize("op", COMPARISONS)
def test_compare_float16(op):
    values = np.array([-1.5, 0.0, 2.0, 65504.0, np.inf, np.nan], np.float16)
    a, b = RNG.choice(values, (3, 6)), RNG.choice(values, (6,))
    _compare(op, a, b, Spec(a.shape, "FLOAT16"), Spec(b.shape, "FLOAT16"))


@pytest.mark.parametrize("op", ["EQUAL", "NOT_EQUAL"])
def test_compare_bool(op):
    a, b = RNG.random((4, 5)) < 0.5, RNG.random((5,)) < 0.5
    _compare(op, a, b, Spec(a.shape, "BOOL"), Spec(b.shape, "BOOL"))


QUANT_PAIRS = [((0.05, 3), (0.05, 3)), ((0.05, 3), (0.1, -20)), ((0.0123, -128), (0.5, 127)), ((0.9, 0), (0.02, 5))]


@pytest.mark.slow
@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("qa,qb", QUANT_PAIRS, ids=str)
@pytest.mark.parametrize("type_name", ["INT8", "UINT8"])
def test_compare_8bit_every_pair(op, qa, qb, type_name):
    dtype = np.dtype(type_name.lower())
    lo = np.iinfo(dtype).min
    a = (np.repeat(np.arange(256), 256) + lo).astype(dtype)
    b = (np.tile(np.arange(256), 256) + lo).astype(dtype)
    shift = 128 if type_name == "UINT8" else 0
    sa = Spec(a.shape, type_name, scale=qa[0], zero_point=qa[1] + shift)
    sb = Spec(b.shape, type_name, scale=qb[0], zero_point=qb[1] + shift)
    _compare(op, a, b, sa, sb, version=2 if type_name == "INT8" else 1)


@pytest.mark.parametrize("op", COMPARISONS)
def test_compare_int8_broadcast(op):
    a, b = _ints((2, 1, 3, 1, 4), np.int8), _ints((3, 2, 1), np.int8)
    _compare(op, a, b, Spec(a.shape, "INT8", scale=0.04, zero_point=-2),
             Spec(b.shape, "INT8", scale=0.07, zero_point=9), version=2)


@pytest.mark.parametrize("op,version", [("EQUAL", 5), ("NOT_EQUAL", 4)])
def test_compare_quantized_int16(op, version):
    a = _ints((4, 300), np.int16, -2000, 2000)
    b = (a // 2).astype(np.int16)  # equal real values: scale 0.001 vs 0.002
    b[:, ::3] += 1
    _compare(op, a, b, Spec(a.shape, "INT16", scale=0.001), Spec(b.shape, "INT16", scale=0.002), version=version)


def test_ordering_int16_ignores_quantization():
    # LESS on int16 compares raw values even when the inputs are quantized differently (comparisons.cc).
    a, b = np.array([10, 20, 30], np.int16), np.array([20, 20, 20], np.int16)
    model = single_op_model("LESS", [Spec((3,), "INT16", scale=0.01), Spec((3,), "INT16", scale=0.1)],
                            [Spec((3,), "BOOL")], version=3)
    ours = check_against_litert(model, [a, b])
    np.testing.assert_array_equal(ours[0], [True, False, False])


# -- LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT ----------------------------------------------------


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
@pytest.mark.parametrize("sa,sb", BROADCASTS, ids=str)
def test_logical_binary(op, sa, sb):
    a, b = RNG.random(sa) < 0.5, RNG.random(sb) < 0.5
    model = single_op_model(op, [Spec(sa, "BOOL"), Spec(sb, "BOOL")], [Spec(_out(sa, sb), "BOOL")])
    check_against_litert(model, [np.asarray(a), np.asarray(b)])


def test_logical_not():
    x = RNG.random((3, 7)) < 0.5
    ours = check_against_litert(single_op_model("LOGICAL_NOT", [Spec(x.shape, "BOOL")], [Spec(x.shape, "BOOL")]),
                                [x])
    np.testing.assert_array_equal(ours[0], ~x)


# -- SELECT, SELECT_V2 -----------------------------------------------------------------------

SELECT_TYPES = [("FLOAT32", 1), ("INT8", 2), ("UINT8", 1), ("INT16", 1), ("INT32", 1), ("INT64", 1), ("BOOL", 1),
                ("UINT32", 4)]


def _values(shape, type_name):
    if type_name == "FLOAT32":
        return RNG.standard_normal(shape).astype(np.float32)
    if type_name == "BOOL":
        return RNG.random(shape) < 0.5
    return _ints(shape, np.dtype(type_name.lower()))


def _select(op, cond_shape, x_shape, y_shape, type_name="FLOAT32", version=1, out_shape=None):
    cond = np.asarray(RNG.random(cond_shape) < 0.5)
    x, y = _values(x_shape, type_name), _values(y_shape, type_name)
    quant = {"scale": 0.1, "zero_point": 2} if type_name in ("INT8", "UINT8") else {}
    if out_shape is None:
        out_shape = np.broadcast_shapes(cond_shape, x_shape, y_shape)
    model = single_op_model(op, [Spec(cond_shape, "BOOL"), Spec(x_shape, type_name, **quant),
                                 Spec(y_shape, type_name, **quant)], [Spec(tuple(out_shape), type_name, **quant)],
                            version=version)
    return check_against_litert(model, [cond, np.asarray(x), np.asarray(y)])


@pytest.mark.parametrize("type_name,version", SELECT_TYPES)
@pytest.mark.parametrize("op", ["SELECT", "SELECT_V2"])
def test_select_same_shape(op, type_name, version):
    v = version if op == "SELECT" else (2 if type_name == "UINT32" else 1)
    _select(op, (2, 3, 5), (2, 3, 5), (2, 3, 5), type_name, v)


@pytest.mark.parametrize("cond_shape", [(), (4,)], ids=str)
def test_select_low_rank_condition(cond_shape):
    # SELECT (v1) takes a scalar condition or a rank-1 one that picks whole slices of dimension 0.
    ours = _select("SELECT", cond_shape, (4, 3, 2), (4, 3, 2), out_shape=(4, 3, 2))
    assert ours[0].shape == (4, 3, 2)


def test_select_five_dims():
    _select("SELECT", (2, 1, 3, 2, 2), (2, 1, 3, 2, 2), (2, 1, 3, 2, 2), version=3)


def test_select_mixed_one_element_shapes_keep_output_shape():
    ours = _select("SELECT", (1,), (), (1, 1), out_shape=(1, 1))
    assert ours[0].shape == (1, 1)


V2_SHAPES = [((4,), (2, 3, 4), (1,)), ((2, 1, 4), (1, 3, 1), (2, 3, 4)), ((), (3, 2), (2,)),
             ((2, 1, 1, 1, 3), (1, 2, 1, 3), (1, 1, 2, 1))]


@pytest.mark.parametrize("shapes", V2_SHAPES, ids=str)
@pytest.mark.parametrize("type_name", ["FLOAT32", "INT8", "INT32"])
def test_select_v2_broadcast(shapes, type_name):
    _select("SELECT_V2", *shapes, type_name=type_name)


# -- CAST ------------------------------------------------------------------------------------

CAST_TYPES = ["FLOAT32", "FLOAT64", "FLOAT16", "INT64", "INT32", "UINT32", "INT16", "UINT16", "INT8", "UINT8", "BOOL"]


def _cast_version(src: str, dst: str) -> int:
    """op_version.cc GetBuiltinOperatorVersion for CAST."""
    pair = {src, dst}
    for version, types in ((5, {"FLOAT64", "FLOAT16"}), (4, {"UINT16"}), (3, {"INT8"}), (2, {"UINT32"})):
        if pair & types:
            return version
    return 1


def _cast_input(type_name: str) -> np.ndarray:
    if type_name == "BOOL":
        return np.array([True, False, True, True, False])
    if type_name.startswith("FLOAT"):
        edges = [0.0, -0.0, 0.7, -0.7, 1.5, -1.5, 127.9, -128.9, 200.5, 255.9, -300.2, 40000.0, 70000.0, -70000.0,
                 3e9, -3e9, 5e18, 1e30, -1e30, np.inf, -np.inf, np.nan]
        with np.errstate(over="ignore"):  # float16 turns the large ones into infinities
            return np.array(edges, dtype=np.dtype(type_name.lower()))
    info = np.iinfo(np.dtype(type_name.lower()))
    edges = [0, 1, -1, 127, -128, 128, 255, 256, -129, 32767, -32768, 65535, 65536, 2**31 - 1, -(2**31), 2**32 - 1,
             2**24 + 1, 2**53 + 1, 2**63 - 1]
    return np.array([v for v in edges if info.min <= v <= info.max], dtype=info.dtype)


@pytest.mark.slow
@pytest.mark.parametrize("src", CAST_TYPES)
@pytest.mark.parametrize("dst", CAST_TYPES)
def test_cast(src, dst):
    x = _cast_input(src)
    model = single_op_model("CAST", [Spec(x.shape, src)], [Spec(x.shape, dst)], version=_cast_version(src, dst))
    ref = run_litert(model, [x])
    ours = run_ours(model, [x])
    if dst.startswith("FLOAT"):
        # Infinities and NaN are part of the expected result: compare them exactly, the rest closely.
        np.testing.assert_array_equal(np.isnan(ours[0]), np.isnan(ref[0]))
        finite = np.isfinite(ref[0])
        np.testing.assert_array_equal(ours[0][~finite & ~np.isnan(ref[0])], ref[0][~finite & ~np.isnan(ref[0])])
        assert_close_to_reference([ours[0][finite]], [ref[0][finite]])
    else:
        assert_close_to_reference(ours, ref)


def test_cast_float_to_int_truncates_and_saturates():
    x = np.array([2.9, -2.9, 1e10, -1e10, np.nan], np.float32)
    model = single_op_model("CAST", [Spec(x.shape)], [Spec(x.shape, "INT32")])
    ours = check_against_litert(model, [x])
    np.testing.assert_array_equal(ours[0], [2, -2, 2**31 - 1, -(2**31), 2**31 - 1])


@pytest.mark.parametrize("dst", ["FLOAT32", "INT32", "BOOL", "COMPLEX64"])
def test_cast_complex64(dst):
    x = np.array([1.5 + 2j, -2.7 - 1j, 0 + 3j, 0j], np.complex64)
    model = single_op_model("CAST", [Spec(x.shape, "COMPLEX64")], [Spec(x.shape, dst)])
    ref = run_litert(model, [x])
    ours = run_ours(model, [x])
    np.testing.assert_array_equal(ours[0], ref[0])


def test_cast_float_to_complex64():
    x = np.array([1.5, -2.0, np.inf], np.float32)
    model = single_op_model("CAST", [Spec(x.shape)], [Spec(x.shape, "COMPLEX64")])
    np.testing.assert_array_equal(run_ours(model, [x])[0], run_litert(model, [x])[0])


# -- registered versions ---------------------------------------------------------------------


def test_registered_versions():
    resolver = BuiltinOpResolver()
    assert resolver.builtin_versions("EQUAL") == [1, 2, 4, 5]  # v3 (string) is not implemented
    assert resolver.builtin_versions("NOT_EQUAL") == [1, 2, 4]
    assert resolver.builtin_versions("CAST") == [1, 2, 3, 4, 5]
    assert resolver.builtin_versions("SELECT") == [1, 2, 3, 4]
    assert resolver.builtin_versions("SELECT_V2") == [1, 2]


# -- error paths -----------------------------------------------------------------------------


def _raises(model: bytes, inputs, match: str):
    with pytest.raises(KernelError, match=match):
        run_ours(model, inputs)


def test_error_compare_types_differ():
    model = single_op_model("LESS", [Spec((2,)), Spec((2,), "INT32")], [Spec((2,), "BOOL")])
    _raises(model, [np.ones(2, np.float32), np.ones(2, np.int32)], r"LESS: input types differ \(FLOAT32 and INT32\)")


def test_error_compare_output_not_bool():
    model = single_op_model("GREATER", [Spec((2,)), Spec((2,))], [Spec((2,))])
    _raises(model, [np.ones(2, np.float32)] * 2, "GREATER: the output must be BOOL, got FLOAT32")


def test_error_compare_bool_ordering_unsupported():
    model = single_op_model("LESS", [Spec((2,), "BOOL"), Spec((2,), "BOOL")], [Spec((2,), "BOOL")])
    _raises(model, [np.ones(2, np.bool_)] * 2, "LESS: type BOOL is not supported")


def test_error_compare_shapes_do_not_broadcast():
    model = single_op_model("EQUAL", [Spec((2, 3)), Spec((2,))], [Spec((2, 3), "BOOL")])
    _raises(model, [np.ones((2, 3), np.float32), np.ones(2, np.float32)], "not broadcastable")


def test_error_not_equal_plain_int16():
    model = single_op_model("NOT_EQUAL", [Spec((2,), "INT16"), Spec((2,), "INT16")], [Spec((2,), "BOOL")])
    _raises(model, [np.ones(2, np.int16)] * 2, "NOT_EQUAL: INT16 inputs must be quantized")


def test_error_quantized_compare_scale_not_below_one():
    model = single_op_model("EQUAL", [Spec((2,), "INT8", scale=1.0), Spec((2,), "INT8", scale=0.5)],
                            [Spec((2,), "BOOL")], version=2)
    _raises(model, [np.ones(2, np.int8)] * 2, r"EQUAL: quantized INT8 input .* scale in \(0, 1\)")


def test_error_logical_needs_bool():
    model = single_op_model("LOGICAL_AND", [Spec((2,)), Spec((2,))], [Spec((2,), "BOOL")])
    _raises(model, [np.ones(2, np.float32)] * 2, "LOGICAL_AND: inputs must be BOOL")


def test_error_select_condition_shape():
    model = single_op_model("SELECT", [Spec((3,), "BOOL"), Spec((2, 3)), Spec((2, 3))], [Spec((2, 3))])
    _raises(model, [np.ones(3, np.bool_), np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)],
            r"SELECT: condition shape \[3\] must equal")


def test_error_select_value_shapes():
    model = single_op_model("SELECT", [Spec((), "BOOL"), Spec((2, 3)), Spec((3,))], [Spec((2, 3))])
    _raises(model, [np.ones((), np.bool_), np.ones((2, 3), np.float32), np.ones(3, np.float32)],
            "SELECT: the value inputs differ in shape")


def test_error_select_condition_type():
    model = single_op_model("SELECT_V2", [Spec((2,)), Spec((2,)), Spec((2,))], [Spec((2,))])
    _raises(model, [np.ones(2, np.float32)] * 3, "SELECT_V2: the condition must be BOOL, got FLOAT32")


def test_error_select_value_types():
    model = single_op_model("SELECT_V2", [Spec((2,), "BOOL"), Spec((2,)), Spec((2,), "INT32")], [Spec((2,))])
    _raises(model, [np.ones(2, np.bool_), np.ones(2, np.float32), np.ones(2, np.int32)],
            r"SELECT_V2: the value inputs differ in type \(FLOAT32 and INT32\)")


def test_error_cast_unsupported_type():
    model = single_op_model("CAST", [Spec((2,), "UINT64")], [Spec((2,), "INT32")])
    _raises(model, [np.ones(2, np.uint64)], "CAST: type UINT64 is not supported")


@pytest.mark.parametrize("op", [*COMPARISONS, "LOGICAL_AND", "LOGICAL_OR"])
def test_rank0_operands(op):
    """Two 0-d inputs take NumPy scalar comparisons; the output is a 0-d BOOL array."""
    logical = op.startswith("LOGICAL")
    pairs = ([(True, False), (True, True), (False, False)] if logical
             else [(3, 5), (5, 5), (-2**31, 2**31 - 1), (7, -7)])
    type_ = "BOOL" if logical else "INT32"
    for a, b in pairs:
        x = np.array(a, bool if logical else np.int32)
        y = np.array(b, bool if logical else np.int32)
        out = _compare(op, x, y, Spec((), type_), Spec((), type_))[0]
        assert out.shape == () and out.dtype == np.bool_
