"""PAD, STRIDED_SLICE, SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND against LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, run_litert, run_ours, single_op_model

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.resolver import BuiltinOpResolver

INT8 = {"scale": 0.2, "zero_point": -4}
# (type, quantization, the lowest op version of PAD that takes it)
PAD_TYPES = [
    ("FLOAT32", {}, 1), ("UINT8", {"scale": 0.1, "zero_point": 100}, 1), ("INT32", {}, 1), ("INT64", {}, 1),
    ("INT8", INT8, 2), ("INT8", {}, 2), ("INT16", {"scale": 0.2, "zero_point": 0}, 3), ("BOOL", {}, 5),
]


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


def _litert_output_shape(model: bytes) -> tuple[int, ...]:
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    it = LiteRT(model_content=model)
    it.allocate_tensors()
    return tuple(int(d) for d in it.get_output_details()[0]["shape"])


# -- PAD ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("typ", "quant", "version"), PAD_TYPES,
                         ids=[f"{t}{'q' if q else ''}" for t, q, _ in PAD_TYPES])
@pytest.mark.parametrize("pads", [[[0, 0], [1, 2], [3, 0], [0, 0]], [[1, 1], [0, 0], [0, 2], [1, 0]]],
                         ids=["image", "generic"])
@pytest.mark.parametrize("pad_dtype", [np.int32, np.int64])
def test_pad(typ, quant, version, pads, pad_dtype):
    in_shape = (2, 3, 4, 5)
    out_shape = tuple(s + a + b for s, (a, b) in zip(in_shape, pads))
    model = single_op_model("PAD", [Spec(in_shape, typ, **quant), const(np.array(pads, pad_dtype))],
                            [Spec(out_shape, typ, **quant)], version=version)
    ours = check_against_litert(model)[0]
    border = np.ones(out_shape, bool)
    border[tuple(slice(a, a + s) for s, (a, _) in zip(in_shape, pads))] = False
    # Quantized types pad with the output zero point, the rest with 0.
    assert np.all(ours[border] == quant.get("zero_point", 0))


def test_pad_rank5_is_v4():
    model = single_op_model("PAD", [Spec((1, 2, 3, 2, 2)), const(np.array([[0, 1], [1, 0], [2, 2], [0, 0], [1, 1]],
                                                                          np.int32))],
                            [Spec((2, 3, 7, 2, 4))], version=4)
    check_against_litert(model)


def test_pad_rank1():
    model = single_op_model("PAD", [Spec((5,)), const(np.array([[2, 3]], np.int32))], [Spec((10,))])
    check_against_litert(model)


def test_pad_paddings_from_graph_input():
    model = single_op_model("PAD", [Spec((2, 3)), Spec((2, 2), "INT32")], [Spec((2, 3))])
    x = np.ones((2, 3), np.float32)
    ours = check_against_litert(model, [x, np.array([[1, 0], [2, 1]], np.int32)])
    assert ours[0].shape == (3, 6)


@pytest.mark.parametrize(("paddings", "message"), [
    ([[0, -1], [0, 0]], "must be >= 0"),
    ([[0, 1]], r"must have shape \[2, 2\]"),
])
def test_pad_bad_paddings_raise(paddings, message):
    model = single_op_model("PAD", [Spec((2, 3)), const(np.array(paddings, np.int32))], [Spec((2, 3))])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


def test_pad_float_paddings_raise():
    model = single_op_model("PAD", [Spec((2,)), const(np.array([[1, 1]], np.float32))], [Spec((4,))])
    with pytest.raises(KernelError, match="paddings type FLOAT32 is not supported"):
        _prepare(model)


# -- STRIDED_SLICE --------------------------------------------------------------------------------

def _slice_model(in_spec, begin, end, strides, version=1, out_shape=(1,), **options) -> bytes:
    ints = [const(np.asarray(v, np.int32)) for v in (begin, end, strides)]
    return single_op_model("STRIDED_SLICE", [in_spec, *ints], [Spec(tuple(out_shape), in_spec.type,
                                                                       scale=in_spec.scale,
                                                                       zero_point=in_spec.zero_point)],
                           version=version, **options)


def _random_slice(rng, rank):
    k = int(rng.integers(1, rank + 1))
    begin = rng.integers(-7, 7, k)
    end = rng.integers(-7, 7, k)
    strides = rng.choice([-3, -2, -1, 1, 2, 3], k)
    options = dict(begin_mask=int(rng.integers(0, 1 << k)), end_mask=int(rng.integers(0, 1 << k)),
                   shrink_axis_mask=int(rng.integers(0, 1 << k)) if rng.random() < 0.3 else 0,
                   ellipsis_mask=1 << int(rng.integers(0, k)) if rng.random() < 0.25 else 0)
    options["new_axis_mask"] = int(rng.integers(0, 1 << k)) & ~options["ellipsis_mask"] if rng.random() < 0.25 else 0
    # A shrunk axis must index inside the dimension (LiteRT would leave the output unwritten).
    strides[(options["shrink_axis_mask"] >> np.arange(k) & 1).astype(bool)] = 1
    return begin, end, strides, options


@pytest.mark.slow
def test_strided_slice_random_masks_sweep():
    # Begin/end out of range and negative, strides of both signs, every mask, checked 150 times.
    rng = np.random.default_rng(0)
    in_shape = (3, 5, 6, 4)
    checked = 0
    while checked < 150:
        begin, end, strides, options = _random_slice(rng, len(in_shape))
        version = 6 if options["ellipsis_mask"] or options["new_axis_mask"] else 1
        probe = _slice_model(Spec(in_shape), begin, end, strides, version, **options)
        out_shape = _litert_output_shape(probe)
        model = _slice_model(Spec(in_shape), begin, end, strides, version, out_shape, **options)
        try:
            run_litert(model, [np.zeros(in_shape, np.float32)])
        except (RuntimeError, ValueError):
            continue
        shrunk = [i for i in range(len(begin)) if options["shrink_axis_mask"] >> i & 1]
        try:
            check_against_litert(model, seed=checked)
        except KernelError as exc:
            # Only an out-of-range shrink index may fail, and it must say so.
            assert shrunk and "shrink_axis_mask index" in str(exc)
            continue
        checked += 1


@pytest.mark.parametrize(("begin", "end", "strides", "options", "out_shape"), [
    ([1, -1], [3, 0], [1, -1], {}, (2, 4, 6, 4)),
    ([0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1], {"begin_mask": 15, "end_mask": 15}, (3, 5, 6, 4)),
    ([-1, 0, 0, 0], [0, 5, 6, 4], [-1, 2, 3, 1], {"end_mask": 1}, (3, 3, 2, 4)),
    ([1, 2], [2, 3], [1, 1], {"shrink_axis_mask": 3}, (6, 4)),
    ([0, 1], [0, 3], [1, 1], {"ellipsis_mask": 1}, (3, 5, 6, 2)),
    ([0, 0, 1], [0, 0, 3], [1, 1, 1], {"new_axis_mask": 1, "ellipsis_mask": 2}, (1, 3, 5, 6, 2)),
    ([2, 0, 0], [3, 0, 0], [1, 1, 1], {"shrink_axis_mask": 1, "new_axis_mask": 4, "ellipsis_mask": 2},
     (5, 6, 4, 1)),
])
def test_strided_slice_cases(begin, end, strides, options, out_shape):
    version = 6 if options.get("ellipsis_mask") or options.get("new_axis_mask") else 1
    model = _slice_model(Spec((3, 5, 6, 4)), begin, end, strides, version, out_shape, **options)
    assert check_against_litert(model)[0].shape == out_shape


@pytest.mark.parametrize(("begin", "size", "strides"), [
    ([0, 1, 2, 0], [3, 2, 3, 4], [1, 1, 1, 1]),
    ([1, 0, -4, 1], [2, 5, 2, 2], [1, 2, 1, 1]),
])
def test_strided_slice_offset_v8(begin, size, strides):
    # offset=True: `end` holds sizes relative to `begin`.
    model = _slice_model(Spec((3, 5, 6, 4)), begin, size, strides, 8, tuple(size), offset=True)
    model = _slice_model(Spec((3, 5, 6, 4)), begin, size, strides, 8, _litert_output_shape(model), offset=True)
    check_against_litert(model)


@pytest.mark.parametrize(("typ", "quant", "version"), [
    ("INT8", INT8, 2), ("BOOL", {}, 3), ("UINT32", {}, 7), ("INT16", {}, 1), ("INT64", {}, 1),
    ("UINT8", {"scale": 0.5, "zero_point": 9}, 1),
])
def test_strided_slice_types(typ, quant, version):
    model = _slice_model(Spec((3, 5, 6, 4), typ, **quant), [0, 1, -1], [3, 4, 0], [2, 1, -2], version, (2, 3, 3, 4))
    check_against_litert(model)


def test_strided_slice_rank5_is_v4():
    model = _slice_model(Spec((2, 3, 4, 5, 6)), [0, 1, 0, 1, -1], [2, 3, 4, 5, 0], [1, 1, 2, 3, -2], 4,
                         (2, 2, 2, 2, 3))
    check_against_litert(model)


def test_strided_slice_string_v5():
    model = _slice_model(Spec((4,), "STRING"), [3], [0], [-2], 5, (2,))
    x = np.array([b"a", b"bb", b"ccc", b"dddd"], dtype=object)
    assert run_ours(model, [x])[0].tolist() == run_litert(model, [x])[0].tolist() == [b"dddd", b"bb"]


def test_strided_slice_begin_end_from_graph_inputs():
    ints = [Spec((2,), "INT32"), Spec((2,), "INT32"), const(np.array([1, -1], np.int32))]
    model = single_op_model("STRIDED_SLICE", [Spec((4, 5)), *ints], [Spec((1, 1))])
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    ours = check_against_litert(model, [x, np.array([1, 4], np.int32), np.array([3, 0], np.int32)])
    assert ours[0].shape == (2, 4)


def test_strided_slice_zero_stride_raises():
    model = _slice_model(Spec((4,)), [0], [4], [0])
    with pytest.raises(KernelError, match="stride value has to be non-zero"):
        _prepare(model)


def test_strided_slice_shrink_out_of_range_raises():
    model = _slice_model(Spec((3, 4)), [5], [6], [1], out_shape=(4,), shrink_axis_mask=1)
    with pytest.raises(KernelError, match="shrink_axis_mask index 5 is out of range for axis 0 of size 3"):
        run_ours(model, [np.zeros((3, 4), np.float32)])


def test_strided_slice_length_mismatch_raises():
    model = single_op_model("STRIDED_SLICE", [Spec((4, 4)), const(np.array([0, 0], np.int32)),
                                              const(np.array([1], np.int32)), const(np.array([1, 1], np.int32))],
                            [Spec((1, 4))])
    with pytest.raises(KernelError, match="differ in length"):
        _prepare(model)


# -- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND --------------------------------------------------------

SB_TYPES = [
    ("FLOAT32", {}, 1), ("UINT8", {"scale": 0.1, "zero_point": 100}, 1), ("INT32", {}, 1), ("INT64", {}, 1),
    ("INT8", INT8, 2), ("INT16", {"scale": 0.2, "zero_point": 0}, 4),
]
BLOCKS = [([2, 2], [[0, 0], [0, 0]]), ([2, 3], [[0, 2], [2, 1]]), ([3, 2], [[2, 0], [0, 1]])]
S2B_INPUTS = [(2, 4, 6, 3), (2, 4, 6, 3), (2, 4, 5, 3)]


@pytest.mark.parametrize(("typ", "quant", "version"), SB_TYPES, ids=[t[0] for t in SB_TYPES])
@pytest.mark.parametrize(("in_shape", "block", "pads"), [(s, *b) for s, b in zip(S2B_INPUTS, BLOCKS)],
                         ids=["2x2", "2x3", "3x2"])
def test_space_to_batch_nd(typ, quant, version, in_shape, block, pads):
    padded = [in_shape[1] + sum(pads[0]), in_shape[2] + sum(pads[1])]
    out_shape = (2 * block[0] * block[1], padded[0] // block[0], padded[1] // block[1], 3)
    model = single_op_model("SPACE_TO_BATCH_ND", [Spec(in_shape, typ, **quant), const(np.array(block, np.int32)),
                                                  const(np.array(pads, np.int32))],
                            [Spec(out_shape, typ, **quant)], version=version)
    check_against_litert(model)


@pytest.mark.parametrize(("typ", "quant", "version"), SB_TYPES, ids=[t[0] for t in SB_TYPES])
@pytest.mark.parametrize(("block", "crops"), BLOCKS, ids=["2x2", "2x3", "3x2"])
def test_batch_to_space_nd(typ, quant, version, block, crops):
    in_shape = (2 * block[0] * block[1], 3, 4, 3)
    out_shape = (2, 3 * block[0] - sum(crops[0]), 4 * block[1] - sum(crops[1]), 3)
    model = single_op_model("BATCH_TO_SPACE_ND", [Spec(in_shape, typ, **quant), const(np.array(block, np.int32)),
                                                  const(np.array(crops, np.int32))],
                            [Spec(out_shape, typ, **quant)], version=version)
    check_against_litert(model)


def test_space_batch_round_trip_as_dilated_conv_wrapper():
    # A converter's dilated conv: SPACE_TO_BATCH_ND (rate 2, padded) ... BATCH_TO_SPACE_ND (cropped).
    x = np.random.default_rng(1).standard_normal((1, 7, 7, 2)).astype(np.float32)
    s2b = single_op_model("SPACE_TO_BATCH_ND", [Spec((1, 7, 7, 2)), const(np.array([2, 2], np.int32)),
                                                const(np.array([[1, 2], [1, 2]], np.int32))], [Spec((4, 5, 5, 2))])
    blocks = check_against_litert(s2b, [x])[0]
    b2s = single_op_model("BATCH_TO_SPACE_ND", [Spec((4, 5, 5, 2)), const(np.array([2, 2], np.int32)),
                                                const(np.array([[1, 2], [1, 2]], np.int32))], [Spec((1, 7, 7, 2))])
    np.testing.assert_array_equal(check_against_litert(b2s, [blocks])[0], x)


def test_space_batch_3d_is_v3():
    s2b = single_op_model("SPACE_TO_BATCH_ND", [Spec((2, 5, 3)), const(np.array([3], np.int32)),
                                                const(np.array([[1, 0]], np.int32))], [Spec((6, 2, 3))], version=3)
    check_against_litert(s2b)
    b2s = single_op_model("BATCH_TO_SPACE_ND", [Spec((6, 2, 3)), const(np.array([3], np.int32)),
                                                const(np.array([[1, 0]], np.int32))], [Spec((2, 5, 3))], version=3)
    check_against_litert(b2s)


def test_space_to_batch_block_from_graph_input():
    model = single_op_model("SPACE_TO_BATCH_ND", [Spec((1, 4, 4, 1)), Spec((2,), "INT32"),
                                                  const(np.array([[0, 0], [0, 0]], np.int32))], [Spec((4, 2, 2, 1))])
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    ours = check_against_litert(model, [x, np.array([2, 4], np.int32)])
    assert ours[0].shape == (8, 2, 1, 1)


def test_space_to_batch_indivisible_raises():
    model = single_op_model("SPACE_TO_BATCH_ND", [Spec((1, 5, 4, 1)), const(np.array([2, 2], np.int32)),
                                                  const(np.array([[0, 0], [0, 0]], np.int32))], [Spec((4, 2, 2, 1))])
    with pytest.raises(KernelError, match="padded size 5 is not a multiple of block size 2"):
        _prepare(model)


def test_batch_to_space_indivisible_batch_raises():
    model = single_op_model("BATCH_TO_SPACE_ND", [Spec((3, 2, 2, 1)), const(np.array([2, 2], np.int32)),
                                                  const(np.array([[0, 0], [0, 0]], np.int32))], [Spec((1, 4, 4, 1))])
    with pytest.raises(KernelError, match="batch 3 is not divisible by the block shape product 4"):
        _prepare(model)


def test_space_to_batch_quantization_mismatch_raises():
    model = single_op_model("SPACE_TO_BATCH_ND", [Spec((1, 2, 2, 1), "INT8", **INT8), const(np.array([2, 2], np.int32)),
                                                  const(np.array([[0, 0], [0, 0]], np.int32))],
                            [Spec((4, 1, 1, 1), "INT8", scale=0.5)], version=2)
    with pytest.raises(KernelError, match="share scale and zero point"):
        _prepare(model)


def test_registered_versions():
    resolver = BuiltinOpResolver()
    assert resolver.builtin_versions("PAD") == [1, 2, 3, 4, 5]  # v6 (float8) is not implemented
    assert resolver.builtin_versions("STRIDED_SLICE") == list(range(1, 9))
    assert resolver.builtin_versions("SPACE_TO_BATCH_ND") == [1, 2, 3, 4]
    assert resolver.builtin_versions("BATCH_TO_SPACE_ND") == [1, 2, 3, 4]
