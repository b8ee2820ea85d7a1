"""PADV2, MIRROR_PAD, TRANSPOSE, TILE, BROADCAST_TO, EXPAND_DIMS, FILL, RANGE, ZEROS_LIKE, CUMSUM,
DEPTH_TO_SPACE and SPACE_TO_DEPTH against LiteRT, plus registration ranges and converter-fixture nodes."""

from __future__ import annotations

import numpy as np
import pytest
from support import (
    FIXTURES,
    Spec,
    check_against_litert,
    const,
    distinct_values,
    run_litert,
    run_ours,
    single_op_model,
    with_dynamic_outputs,
)

from accelsim.runtime import BuiltinOpResolver
from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator, numpy_dtype
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

INT8 = {"scale": 0.05, "zero_point": -3}
QUANT = {"INT8": INT8, "UINT8": {"scale": 0.1, "zero_point": 120}, "INT16": {"scale": 0.01, "zero_point": 0}}
RNG = np.random.default_rng(5)
REFLECT, SYMMETRIC = 0, 1


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


def _values(shape, typ: str) -> np.ndarray:
    return distinct_values(shape, typ, RNG)


def _spec(shape, typ: str, quantized: bool = True) -> Spec:
    return Spec(tuple(shape), typ, **(QUANT.get(typ, {}) if quantized else {}))


# -- registration ---------------------------------------------------------------------------------

REGISTERED = {
    "PADV2": (1, 5), "MIRROR_PAD": (1, 3), "TRANSPOSE": (1, 6), "TILE": (1, 3), "BROADCAST_TO": (2, 3),
    "EXPAND_DIMS": (1, 1), "FILL": (1, 3), "RANGE": (1, 2), "ZEROS_LIKE": (1, 1), "CUMSUM": (1, 1),
    "DEPTH_TO_SPACE": (1, 2), "SPACE_TO_DEPTH": (1, 2), "SLICE": (1, 6), "GATHER": (1, 6), "GATHER_ND": (1, 5),
    "SPLIT": (1, 4), "SPLIT_V": (1, 2), "UNPACK": (1, 4),
}


@pytest.mark.parametrize(("op", "versions"), REGISTERED.items(), ids=list(REGISTERED))
def test_registered_version_range(op, versions):
    resolver = BuiltinOpResolver()
    lo, hi = versions
    assert all(resolver.find_op(op, v) is not None for v in range(lo, hi + 1))
    assert resolver.find_op(op, lo - 1) is None and resolver.find_op(op, hi + 1) is None


# -- PADV2 ----------------------------------------------------------------------------------------

PADV2_TYPES = [("FLOAT32", True, 1), ("INT8", True, 2), ("INT8", False, 2), ("UINT8", True, 1),
               ("INT16", True, 3), ("INT32", False, 1), ("INT64", False, 1), ("BOOL", False, 5)]


@pytest.mark.parametrize(("typ", "quantized", "version"), PADV2_TYPES,
                         ids=[f"{t}{'q' if q and t in QUANT else ''}" for t, q, _ in PADV2_TYPES])
@pytest.mark.parametrize("pads", [[[0, 0], [1, 2], [3, 0], [0, 0]], [[1, 1], [0, 0], [0, 2], [1, 0]]],
                         ids=["image", "generic"])
def test_padv2(typ, quantized, version, pads):
    in_shape = (2, 3, 4, 2)
    out_shape = tuple(s + a + b for s, (a, b) in zip(in_shape, pads))
    # The int8 pad value is a quantized value in the output's scale (pad.cc EvalInt requires it).
    value = np.array(True if typ == "BOOL" else 7, numpy_dtype(typ))
    model = single_op_model("PADV2", [_spec(in_shape, typ, quantized), const(np.array(pads, np.int32)),
                                      Spec((), typ, value, **(QUANT.get(typ, {}) if quantized else {}))],
                            [_spec(out_shape, typ, quantized)], version=version)
    ours = check_against_litert(model)[0]
    border = np.ones(out_shape, bool)
    border[tuple(slice(a, a + s) for s, (a, _) in zip(in_shape, pads))] = False
    assert np.all(ours[border] == value)


def test_padv2_rank5_v4_and_runtime_value_and_paddings():
    model = single_op_model("PADV2", [Spec((1, 2, 3, 2, 2)), const(np.array([[0, 1]] * 5, np.int32)),
                                      const(np.array(-1.5, np.float32))], [Spec((2, 3, 4, 3, 3))], version=4)
    check_against_litert(model)
    model = with_dynamic_outputs(single_op_model("PADV2", [Spec((2, 3)), Spec((2, 2), "INT64"), Spec((), "FLOAT32")],
                                             [Spec((2, 3))]))
    ours = check_against_litert(model, [_values((2, 3), "FLOAT32"), np.array([[1, 0], [2, 1]], np.int64),
                                        np.array(4.0, np.float32)])[0]
    assert ours.shape == (3, 6) and ours[0, 0] == 4.0


def test_padv2_value_quantization_must_match_output():
    model = single_op_model("PADV2", [_spec((2, 3), "INT8"), const(np.array([[1, 1], [0, 0]], np.int32)),
                                      Spec((), "INT8", np.array(3, np.int8), scale=0.5, zero_point=0)],
                            [_spec((4, 3), "INT8")], version=2)
    with pytest.raises(KernelError, match="constant_values must share the output's scale and zero point"):
        _prepare(model)


# -- MIRROR_PAD -----------------------------------------------------------------------------------

MIRROR_TYPES = [("FLOAT32", 1), ("INT8", 2), ("INT16", 3), ("UINT8", 1), ("INT32", 1), ("INT64", 1), ("BOOL", 1)]


@pytest.mark.parametrize(("typ", "version"), MIRROR_TYPES, ids=[t for t, _ in MIRROR_TYPES])
@pytest.mark.parametrize("mode", [REFLECT, SYMMETRIC], ids=["reflect", "symmetric"])
def test_mirror_pad_types(typ, version, mode):
    in_shape = (2, 4, 5, 3)
    most = 0 if mode == SYMMETRIC else 1
    pads = [[0, 1], [4 - most, 2], [1, 5 - most], [2, 0]]
    out_shape = tuple(s + a + b for s, (a, b) in zip(in_shape, pads))
    model = single_op_model("MIRROR_PAD", [_spec(in_shape, typ), const(np.array(pads, np.int32))],
                            [_spec(out_shape, typ)], version=version, mode=mode)
    x = _values(in_shape, typ)
    ours = check_against_litert(model, [x])[0]
    assert np.array_equal(ours, np.pad(x, pads, mode="reflect" if mode == REFLECT else "symmetric"))


@pytest.mark.parametrize("rank", [1, 2, 3, 5])
@pytest.mark.parametrize("mode", [REFLECT, SYMMETRIC], ids=["reflect", "symmetric"])
def test_mirror_pad_ranks_int64_paddings(rank, mode):
    in_shape = tuple(range(2, 2 + rank))
    pads = np.array([[1, 1 - mode % 2 if d == 2 else 0] for d in in_shape], np.int64)
    out_shape = tuple(int(s) for s in np.asarray(in_shape) + pads.sum(axis=1))
    model = single_op_model("MIRROR_PAD", [Spec(in_shape), const(pads)], [Spec(out_shape)], mode=mode)
    check_against_litert(model)


def test_mirror_pad_runtime_paddings():
    model = with_dynamic_outputs(single_op_model("MIRROR_PAD", [Spec((3, 4)), Spec((2, 2), "INT32")], [Spec((3, 4))],
                                             mode=REFLECT))
    ours = check_against_litert(model, [_values((3, 4), "FLOAT32"), np.array([[2, 1], [0, 3]], np.int32)])[0]
    assert ours.shape == (6, 7)


@pytest.mark.parametrize(("pads", "mode", "message"), [
    ([[2, 0], [0, 0]], REFLECT, r"padding \(2, 0\) of axis 0 exceeds its size 2 minus 1"),
    ([[0, 0], [0, 4]], SYMMETRIC, r"padding \(0, 4\) of axis 1 exceeds its size 3"),
    ([[0, -1], [0, 0]], SYMMETRIC, "paddings must be >= 0"),
])
def test_mirror_pad_too_much_padding_raises(pads, mode, message):
    model = single_op_model("MIRROR_PAD", [Spec((2, 3)), const(np.array(pads, np.int32))], [Spec((2, 3))], mode=mode)
    with pytest.raises(KernelError, match=message):
        _prepare(model)


def test_mirror_pad_quantization_must_match():
    model = single_op_model("MIRROR_PAD", [_spec((2, 3), "INT8"), const(np.zeros((2, 2), np.int32))],
                            [Spec((2, 3), "INT8", scale=0.5, zero_point=0)], version=2)
    with pytest.raises(KernelError, match="quantization"):
        _prepare(model)


# -- TRANSPOSE ------------------------------------------------------------------------------------

TRANSPOSE_TYPES = [("FLOAT32", 1), ("INT8", 2), ("BOOL", 3), ("INT16", 5), ("UINT8", 1), ("INT32", 1), ("INT64", 1)]


@pytest.mark.parametrize(("typ", "version"), TRANSPOSE_TYPES, ids=[t for t, _ in TRANSPOSE_TYPES])
def test_transpose_types(typ, version):
    model = single_op_model("TRANSPOSE", [_spec((2, 3, 4, 5), typ), const(np.array([0, 2, 3, 1], np.int32))],
                            [_spec((2, 4, 5, 3), typ)], version=version)
    x = _values((2, 3, 4, 5), typ)
    assert np.array_equal(check_against_litert(model, [x])[0], x.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5, 6])
def test_transpose_ranks(rank):
    shape = tuple(range(2, 2 + rank))
    perm = RNG.permutation(rank)
    signed = np.where(np.arange(rank) % 2 == 1, perm - rank, perm).astype(np.int32)  # some entries negative
    version = 6 if rank == 6 else 4 if rank == 5 else 1
    model = single_op_model("TRANSPOSE", [Spec(shape), const(signed)], [Spec(tuple(shape[p] for p in perm))],
                            version=version)
    x = _values(shape, "FLOAT32")
    assert np.array_equal(check_against_litert(model, [x])[0], x.transpose(perm))


def test_transpose_runtime_perm():
    model = with_dynamic_outputs(
        single_op_model("TRANSPOSE", [Spec((2, 3, 4)), Spec((3,), "INT32")], [Spec((2, 3, 4))]))
    ours = check_against_litert(model, [_values((2, 3, 4), "FLOAT32"), np.array([2, 0, 1], np.int32)])[0]
    assert ours.shape == (4, 2, 3)


@pytest.mark.parametrize(("perm", "message"), [
    ([0, 0, 1], "duplicate"), ([0, 3, 1], "out of bounds"), ([0, 1], r"perm must have shape \[3\]"),
])
def test_transpose_bad_perm_raises(perm, message):
    model = single_op_model("TRANSPOSE", [Spec((2, 3, 4)), const(np.array(perm, np.int32))], [Spec((2, 3, 4))])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


# -- TILE, BROADCAST_TO, EXPAND_DIMS --------------------------------------------------------------

TILE_TYPES = [("FLOAT32", 1), ("INT8", 3), ("STRING", 2), ("BOOL", 1), ("INT32", 1), ("INT64", 1), ("UINT8", 1),
              ("INT16", 1)]


@pytest.mark.parametrize(("typ", "version"), TILE_TYPES, ids=[t for t, _ in TILE_TYPES])
@pytest.mark.parametrize("multiples", [[1, 1, 1], [2, 1, 3], [1, 0, 2]])
def test_tile(typ, version, multiples):
    in_shape = (2, 3, 2)
    out_shape = tuple(s * m for s, m in zip(in_shape, multiples))
    model = single_op_model("TILE", [_spec(in_shape, typ), const(np.array(multiples, np.int32))],
                            [_spec(out_shape, typ)], version=version)
    x = _values(in_shape, typ)
    if typ == "STRING":
        ours, ref = run_ours(model, [x])[0], run_litert(model, [x])[0]
        assert ours.tolist() == ref.tolist() == np.tile(x, multiples).tolist()
    else:
        assert np.array_equal(check_against_litert(model, [x])[0], np.tile(x, multiples))


def test_tile_runtime_int64_multiples():
    model = with_dynamic_outputs(single_op_model("TILE", [Spec((2, 3)), Spec((2,), "INT64")], [Spec((2, 3))]))
    assert check_against_litert(model, [_values((2, 3), "FLOAT32"), np.array([3, 2], np.int64)])[0].shape == (6, 6)


@pytest.mark.parametrize(("multiples", "message"), [([1, -1], "must be >= 0"),
                                                    ([2], "1 multiples for an input of rank 2")])
def test_tile_bad_multiples_raise(multiples, message):
    model = single_op_model("TILE", [Spec((2, 3)), const(np.array(multiples, np.int32))], [Spec((2, 3))])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


@pytest.mark.parametrize(("typ", "version"), [("FLOAT32", 2), ("INT8", 3), ("INT16", 3), ("INT32", 2), ("BOOL", 2)])
@pytest.mark.parametrize(("in_shape", "shape"), [((3, 1), (2, 3, 4)), ((), (2, 2)), ((1, 4), (1, 4)),
                                                 ((2, 1, 1), (4, 2, 5, 3)), ((1,), (0,))])
def test_broadcast_to(typ, version, in_shape, shape):
    model = single_op_model("BROADCAST_TO", [_spec(in_shape, typ), const(np.array(shape, np.int32))],
                            [_spec(shape, typ)], version=version)
    x = _values(in_shape, typ)
    assert np.array_equal(check_against_litert(model, [x])[0], np.broadcast_to(x, shape))


def test_broadcast_to_runtime_int64_shape():
    model = with_dynamic_outputs(single_op_model("BROADCAST_TO", [Spec((3, 1)), Spec((3,), "INT64")], [Spec((3, 1))],
                                             version=2))
    ours = check_against_litert(model, [_values((3, 1), "FLOAT32"), np.array([2, 3, 5], np.int64)])[0]
    assert ours.shape == (2, 3, 5)


@pytest.mark.parametrize("shape", [[4, 2], [3], [2, -3]])
def test_broadcast_to_incompatible_shape_raises(shape):
    model = single_op_model("BROADCAST_TO", [Spec((3, 2)), const(np.array(shape, np.int32))], [Spec((3, 2))],
                            version=2)
    with pytest.raises(KernelError, match="BROADCAST_TO: shape"):
        _prepare(model)


@pytest.mark.parametrize("typ", ["FLOAT32", "INT8", "BOOL", "INT64"])
@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
@pytest.mark.parametrize("axis_type", [np.int32, np.int64])
def test_expand_dims(typ, axis, axis_type):
    in_shape = (2, 3, 4)
    out_shape = np.expand_dims(np.zeros(in_shape), axis).shape
    model = single_op_model("EXPAND_DIMS", [_spec(in_shape, typ), const(np.array([axis], axis_type))],
                            [_spec(out_shape, typ)])
    assert check_against_litert(model, [_values(in_shape, typ)])[0].shape == out_shape


def test_expand_dims_runtime_axis():
    model = with_dynamic_outputs(single_op_model("EXPAND_DIMS", [Spec((2, 3)), Spec((), "INT32")], [Spec((2, 3, 1))]))
    assert check_against_litert(model, [_values((2, 3), "FLOAT32"), np.array(-2, np.int32)])[0].shape == (2, 1, 3)


def test_expand_dims_bad_axis_raises():
    model = single_op_model("EXPAND_DIMS", [Spec((2, 3)), const(np.array(3, np.int32))], [Spec((2, 3, 1))])
    with pytest.raises(KernelError, match=r"axis 3 is out of range \[-3, 3\)"):
        _prepare(model)


# -- FILL, RANGE, ZEROS_LIKE ----------------------------------------------------------------------

FILL_TYPES = [("FLOAT32", 1), ("INT32", 1), ("INT64", 1), ("BOOL", 2), ("INT8", 3), ("INT16", 3), ("UINT8", 1)]


@pytest.mark.parametrize(("typ", "version"), FILL_TYPES, ids=[t for t, _ in FILL_TYPES])
@pytest.mark.parametrize("dims_type", [np.int32, np.int64])
def test_fill(typ, version, dims_type):
    model = single_op_model("FILL", [const(np.array([2, 1, 3], dims_type)), _spec((), typ)], [_spec((2, 1, 3), typ)],
                            version=version)
    value = _values((), typ)
    ours = check_against_litert(model, [value])[0]
    assert np.all(ours == value)


def test_fill_string_v2():
    """LiteRT's Python API garbles a scalar string input, so this checks ours against the expected strings."""
    model = single_op_model("FILL", [const(np.array([2, 2], np.int32)), Spec((), "STRING")], [Spec((2, 2), "STRING")],
                            version=2)
    assert run_ours(model, [np.array(b"ab", dtype=object)])[0].tolist() == [[b"ab"] * 2] * 2


def test_fill_runtime_dims():
    model = with_dynamic_outputs(single_op_model("FILL", [Spec((2,), "INT32"), Spec((), "FLOAT32")], [Spec((1, 1))]))
    ours = check_against_litert(model, [np.array([3, 4], np.int32), np.array(2.5, np.float32)])[0]
    assert ours.shape == (3, 4) and np.all(ours == 2.5)


@pytest.mark.parametrize(("dims", "value", "message"), [
    (np.array([2, -1], np.int32), Spec(()), "dimensions .* must be >= 0"),
    (np.array([2, 1], np.int32), Spec((1,)), "value must be a scalar"),
    (np.array([2, 1], np.float32), Spec(()), "dims must be INT32 or INT64"),
])
def test_fill_bad_inputs_raise(dims, value, message):
    model = single_op_model("FILL", [const(dims), value], [Spec((2, 1))])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


RANGES = [(0, 10, 3), (10, 0, -3), (-5, 7, 2), (4, 4, 1), (4, 4, -2), (3, 100, 1)]


@pytest.mark.parametrize(("typ", "version"), [("INT32", 1), ("INT64", 2), ("FLOAT32", 1)])
@pytest.mark.parametrize(("start", "limit", "delta"), RANGES)
@pytest.mark.parametrize("constant", [True, False], ids=["const", "runtime"])
def test_range(typ, version, start, limit, delta, constant):
    dtype = numpy_dtype(typ)
    values = [np.array(v, dtype) for v in (start, limit, delta)]
    count = len(np.arange(start, limit, delta))
    ins = [const(v) if constant else Spec((), typ) for v in values]
    model = single_op_model("RANGE", ins, [Spec((count,), typ)], version=version)
    if not constant:
        model = with_dynamic_outputs(model)
    if count == 0:
        # LiteRT's Python API cannot read an empty RANGE output ("Invalid tensor size"): check ours alone.
        assert run_ours(model, values)[0].shape == (0,)
        return
    ours = check_against_litert(model, None if constant else values)[0]
    assert ours.shape == (count,)


def test_range_float_accumulates_like_litert():
    """range.cc adds delta to a running float32 value; 0.1 is not exact, so that differs from start + i * delta."""
    values = [np.array(v, np.float32) for v in (0.0, 300.0, 0.1)]
    model = with_dynamic_outputs(single_op_model("RANGE", [Spec((), "FLOAT32")] * 3, [Spec((1,), "FLOAT32")]))
    ours, ref = run_ours(model, values)[0], run_litert(model, values)[0]
    assert ours.shape == ref.shape == (3000,) and np.array_equal(ours, ref)
    assert not np.array_equal(ours, np.float32(0.1) * np.arange(3000, dtype=np.float32))


@pytest.mark.parametrize(("start", "limit", "delta", "message"), [
    (0, 5, 0, "delta must not be 0"), (0, 5, -1, "does not lead from start 0 to limit 5"),
])
def test_range_bad_delta_raises(start, limit, delta, message):
    model = single_op_model("RANGE", [const(np.array(v, np.int32)) for v in (start, limit, delta)],
                            [Spec((1,), "INT32")])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


def test_range_int8_is_not_supported():
    model = single_op_model("RANGE", [Spec((), "INT8", **INT8)] * 3, [Spec((3,), "INT8", **INT8)])
    with pytest.raises(KernelError, match="RANGE: type INT8 is not supported"):
        _prepare(model)


@pytest.mark.parametrize("typ", ["FLOAT32", "INT32", "INT64"])
def test_zeros_like(typ):
    model = single_op_model("ZEROS_LIKE", [Spec((2, 3, 4), typ)], [Spec((2, 3, 4), typ)])
    assert not np.any(check_against_litert(model)[0])


def test_zeros_like_int8_is_not_supported():
    model = single_op_model("ZEROS_LIKE", [Spec((2,), "INT8")], [Spec((2,), "INT8")])
    with pytest.raises(KernelError, match="ZEROS_LIKE: type INT8 is not supported"):
        _prepare(model)


# -- CUMSUM ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("typ", ["FLOAT32", "INT32", "INT64"])
@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum(typ, axis, exclusive, reverse):
    model = single_op_model("CUMSUM", [Spec((3, 4, 5), typ), const(np.array(axis, np.int32))], [Spec((3, 4, 5), typ)],
                            exclusive=exclusive, reverse=reverse)
    x = _values((3, 4, 5), typ)
    ours = check_against_litert(model, [x])[0]
    flipped = np.flip(x, axis) if reverse else x
    expected = np.cumsum(flipped, axis=axis, dtype=x.dtype)
    if exclusive:
        expected = expected - flipped
    assert np.allclose(ours, np.flip(expected, axis) if reverse else expected, atol=1e-5)


@pytest.mark.parametrize(("shape", "axis"), [((3, 4000), 1), ((4000, 3), 0), ((2, 1500, 17), -2)])
@pytest.mark.parametrize(("exclusive", "reverse"), [(False, False), (True, True)])
def test_cumsum_float_rounding_matches_litert_exactly(shape, axis, exclusive, reverse):
    """A long float32 running sum: the order of additions decides every rounding."""
    model = single_op_model("CUMSUM", [Spec(shape), const(np.array([axis], np.int32))], [Spec(shape)],
                            exclusive=exclusive, reverse=reverse)
    x = (RNG.standard_normal(shape) * 100).astype(np.float32)
    assert np.array_equal(run_ours(model, [x])[0], run_litert(model, [x])[0])


def test_cumsum_int32_wraps_like_litert():
    model = single_op_model("CUMSUM", [Spec((4,), "INT32"), const(np.array(0, np.int32))], [Spec((4,), "INT32")])
    x = np.array([2**31 - 1, 1, 5, -7], np.int32)
    assert check_against_litert(model, [x])[0].tolist() == [2**31 - 1, -(2**31), -(2**31) + 5, -(2**31) - 2 + 2**32]


@pytest.mark.parametrize(("x", "axis", "message"), [
    (Spec((2, 3)), 2, r"axis 2 is out of range \[-2, 2\)"),
    (Spec((2, 3), "INT8", **INT8), 0, "CUMSUM: type INT8 is not supported"),
    (Spec(()), 0, "at least one dimension"),
])
def test_cumsum_bad_inputs_raise(x, axis, message):
    model = single_op_model("CUMSUM", [x, const(np.array(axis, np.int32))], [x])
    with pytest.raises(KernelError, match=message):
        run_ours(model, [np.zeros(x.shape, numpy_dtype(x.type))])


# -- DEPTH_TO_SPACE, SPACE_TO_DEPTH ---------------------------------------------------------------

DEPTH_SPACE_TYPES = [("FLOAT32", 1), ("INT8", 2), ("UINT8", 1), ("INT32", 1), ("INT64", 1)]


@pytest.mark.parametrize(("typ", "version"), DEPTH_SPACE_TYPES, ids=[t for t, _ in DEPTH_SPACE_TYPES])
@pytest.mark.parametrize(("block", "in_shape"), [(2, (2, 3, 4, 8)), (3, (1, 2, 1, 18)), (1, (1, 2, 2, 3))])
def test_depth_to_space(typ, version, block, in_shape):
    n, h, w, c = in_shape
    out_shape = (n, h * block, w * block, c // block**2)
    model = single_op_model("DEPTH_TO_SPACE", [_spec(in_shape, typ)], [_spec(out_shape, typ)], version=version,
                            block_size=block)
    check_against_litert(model)


@pytest.mark.parametrize(("typ", "version"), DEPTH_SPACE_TYPES, ids=[t for t, _ in DEPTH_SPACE_TYPES])
@pytest.mark.parametrize(("block", "in_shape"), [(2, (2, 4, 6, 3)), (3, (1, 3, 9, 2)), (1, (1, 2, 2, 3))])
def test_space_to_depth(typ, version, block, in_shape):
    n, h, w, c = in_shape
    out_shape = (n, h // block, w // block, c * block**2)
    model = single_op_model("SPACE_TO_DEPTH", [_spec(in_shape, typ)], [_spec(out_shape, typ)], version=version,
                            block_size=block)
    x = _values(in_shape, typ)
    ours = check_against_litert(model, [x])[0]
    back = single_op_model("DEPTH_TO_SPACE", [_spec(out_shape, typ)], [_spec(in_shape, typ)], version=version,
                           block_size=block)
    assert np.array_equal(run_ours(back, [ours])[0], x)


@pytest.mark.parametrize(("op", "in_shape", "block", "message"), [
    ("DEPTH_TO_SPACE", (1, 2, 2, 6), 2, "depth 6 is not divisible by block_size"),
    ("SPACE_TO_DEPTH", (1, 3, 4, 1), 2, "height 3 and width 4 must be multiples"),
    ("SPACE_TO_DEPTH", (2, 4, 4), 2, "input must be 4-D"),
    ("DEPTH_TO_SPACE", (1, 2, 2, 4), 0, "block_size must be > 0"),
    ("DEPTH_TO_SPACE", (1, 2, 2, 4, 1), 2, "input must be 4-D"),
])
def test_depth_space_bad_shapes_raise(op, in_shape, block, message):
    model = single_op_model(op, [Spec(in_shape)], [Spec((1, 1, 1, 1))], block_size=block)
    with pytest.raises(KernelError, match=message):
        _prepare(model)


def test_depth_to_space_int16_is_not_supported():
    model = single_op_model("DEPTH_TO_SPACE", [Spec((1, 1, 1, 4), "INT16")], [Spec((1, 2, 2, 1), "INT16")],
                            block_size=2)
    with pytest.raises(KernelError, match="type INT16 is not supported"):
        _prepare(model)


# -- converter fixtures ---------------------------------------------------------------------------

OPS = {"PADV2", "MIRROR_PAD", "TRANSPOSE", "TILE", "BROADCAST_TO", "EXPAND_DIMS", "FILL", "RANGE", "ZEROS_LIKE",
       "CUMSUM", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH"}


def _fixture_spec(model, si: int, tensor_index: int) -> Spec:
    t = model.subgraphs[si].tensors[tensor_index]
    q = t.quantization
    quant = {}
    if q is not None and q.scales:
        quant = {"scale": q.scales, "zero_point": q.zero_points, "quantized_dimension": q.quantized_dimension}
    return Spec(t.shape, t.type, model.constant(si, tensor_index), **quant)


def _nodes():
    for path in sorted(FIXTURES.glob("*.tflite")):
        model = load_model(path.read_bytes())
        for si, sg in enumerate(model.subgraphs):
            for index, op in enumerate(sg.operators):
                if op.op in OPS:
                    yield pytest.param(model, si, op, id=f"{path.stem}-sg{si}-{index}-{op.op}-v{op.version}")


@pytest.mark.parametrize(("model", "si", "op"), list(_nodes()))
def test_fixture_node_matches_litert(model, si, op):
    """The node alone, with the converter's tensors, quantization and options (e.g. attention's TRANSPOSEs)."""
    inputs = [_fixture_spec(model, si, i) if i >= 0 else None for i in op.inputs]
    outputs = [_fixture_spec(model, si, i) for i in op.outputs]
    options = dict(op.options) if op.options is not None else {}
    check_against_litert(single_op_model(op.op, inputs, outputs, version=op.version, **options))


def test_dynamic_range_feeds_a_later_op():
    """RANGE's runtime length reaches the next node, which is prepared again once RANGE ran (as in TFLite)."""
    tensors = (Tensor("start", "INT32", ()), Tensor("limit", "INT32", ()), Tensor("delta", "INT32", ()),
               Tensor("range", "INT32", (1,), shape_signature=(-1,)), Tensor("axis", "INT32", (), buffer=1),
               Tensor("out", "INT32", (1, 1), shape_signature=(1, -1)))
    ops = (make_operator("RANGE", (0, 1, 2), (3,)), make_operator("EXPAND_DIMS", (3, 4), (5,)))
    model = save_model(Model((Subgraph(tensors, (0, 1, 2), (5,), ops, "main"),),
                             (b"", np.array(0, np.int32).tobytes())))
    values = [np.array(v, np.int32) for v in (3, 20, 4)]
    assert check_against_litert(model, values)[0].tolist() == [[3, 7, 11, 15, 19]]
