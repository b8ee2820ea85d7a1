"""SLICE, GATHER, GATHER_ND, SPLIT, SPLIT_V and UNPACK against LiteRT, plus their converter-fixture nodes."""

from __future__ import annotations

import dataclasses

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

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model, Subgraph, numpy_dtype
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

INT8 = {"scale": 0.05, "zero_point": -3}
RNG = np.random.default_rng(11)


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


def _assert_both_fail(model: bytes, inputs, message: str) -> None:
    """LiteRT rejects the inputs too, and we say why."""
    with pytest.raises(Exception):  # noqa: B017 - LiteRT raises a plain RuntimeError
        run_litert(model, inputs)
    with pytest.raises(KernelError, match=message):
        run_ours(model, inputs)


def _values(shape, typ: str) -> np.ndarray:
    return distinct_values(shape, typ, RNG)


def _quant(typ: str) -> dict:
    return INT8 if typ == "INT8" else {}


# -- SLICE ----------------------------------------------------------------------------------------

SLICE_TYPES = [("FLOAT32", 1), ("INT8", 2), ("STRING", 3), ("INT16", 4), ("UINT32", 6), ("BOOL", 1),
               ("INT64", 1), ("UINT8", 1), ("INT32", 1)]


@pytest.mark.parametrize(("typ", "version"), SLICE_TYPES, ids=[t for t, _ in SLICE_TYPES])
def test_slice_types(typ, version):
    x = _values((3, 4, 5), typ)
    model = single_op_model("SLICE", [Spec((3, 4, 5), typ, **_quant(typ)), const(np.array([1, 0, 2], np.int32)),
                                      const(np.array([2, -1, 3], np.int32))],
                            [Spec((2, 4, 3), typ, **_quant(typ))], version=version)
    ref, ours = run_litert(model, [x])[0], run_ours(model, [x])[0]
    assert ours.tolist() == ref.tolist() == x[1:3, :, 2:5].tolist()


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_slice_ranks(rank, index_type):
    shape = tuple(range(2, 2 + rank))
    begin = np.array([d // 2 for d in shape], index_type)
    size = np.array([-1 if i % 2 else 1 for i in range(rank)], index_type)
    out = tuple(d - b if s == -1 else s for d, b, s in zip(shape, begin, size))
    model = single_op_model("SLICE", [Spec(shape), const(begin), const(size)], [Spec(out)],
                            version=5 if rank > 4 else 1)
    assert check_against_litert(model)[0].shape == out


def test_slice_empty_and_full():
    model = single_op_model("SLICE", [Spec((4, 3)), const(np.array([4, 0], np.int32)),
                                      const(np.array([0, -1], np.int32))], [Spec((0, 3))])
    assert check_against_litert(model)[0].shape == (0, 3)
    model = single_op_model("SLICE", [Spec((4, 3)), const(np.zeros(2, np.int32)),
                                      const(np.array([-1, -1], np.int32))], [Spec((4, 3))])
    check_against_litert(model)


@pytest.mark.parametrize("runtime_input", ["begin", "size"])
def test_slice_runtime_indices_give_a_dynamic_output(runtime_input):
    begin, size = np.array([1, 2], np.int32), np.array([2, -1], np.int32)
    ins = [Spec((4, 6)), Spec((2,), "INT32") if runtime_input == "begin" else const(begin),
           Spec((2,), "INT32") if runtime_input == "size" else const(size)]
    model = with_dynamic_outputs(single_op_model("SLICE", ins, [Spec((1, 1))]))
    x = _values((4, 6), "FLOAT32")
    ours = check_against_litert(model, [x, begin if runtime_input == "begin" else size])[0]
    assert ours.shape == (2, 4)


def test_slice_fully_specified_output_is_kept_and_checked():
    """LiteRT keeps an output shape the model fixes and fails the invoke when the slice does not fit it."""
    model = single_op_model("SLICE", [Spec((3, 10)), const(np.zeros(2, np.int32)), Spec((2,), "INT32")],
                            [Spec((1, 1))])
    x = _values((3, 10), "FLOAT32")
    check_against_litert(model, [x, np.array([1, 1], np.int32)])
    _assert_both_fail(model, [x, np.array([2, 3], np.int32)], r"slice has shape \[2, 3\].*fixed at \[1, 1\]")


@pytest.mark.parametrize(("begin", "size", "message"), [
    ([-1, 0], [1, 1], "begin -1 for axis 0 is negative"),
    ([0, 0], [1, -2], "size -2 for axis 1 is invalid"),
    ([2, 1], [2, 1], r"begin 2 \+ size 2 exceeds axis 0 of size 3"),
    ([4, 0], [-1, 1], "begin 4 is past the end of axis 0"),
])
def test_slice_bad_window_raises(begin, size, message):
    model = single_op_model("SLICE", [Spec((3, 4)), const(np.array(begin, np.int32)), const(np.array(size, np.int32))],
                            [Spec((1, 1))])
    with pytest.raises(KernelError, match=message):
        _prepare(with_dynamic_outputs(model))


def test_slice_index_shape_and_type_raise():
    model = single_op_model("SLICE", [Spec((3, 4)), const(np.zeros(3, np.int32)), const(np.ones(3, np.int32))],
                            [Spec((1, 1))])
    with pytest.raises(KernelError, match=r"begin must have shape \[2\]"):
        _prepare(model)
    model = single_op_model("SLICE", [Spec((3, 4)), const(np.zeros(2, np.int32)), const(np.ones(2, np.int64))],
                            [Spec((1, 1))])
    with pytest.raises(KernelError, match="must both be INT32 or INT64"):
        _prepare(model)


# -- GATHER ---------------------------------------------------------------------------------------

GATHER_TYPES = [("FLOAT32", 1), ("INT8", 2), ("BOOL", 3), ("INT16", 4), ("UINT8", 1), ("INT32", 1), ("INT64", 1)]


@pytest.mark.slow
@pytest.mark.parametrize(("typ", "version"), GATHER_TYPES, ids=[t for t, _ in GATHER_TYPES])
@pytest.mark.parametrize("axis", [0, 1, -1, -3])
@pytest.mark.parametrize("positions_shape", [(), (4,), (2, 3)], ids=["scalar", "vector", "matrix"])
def test_gather(typ, version, axis, positions_shape):
    in_shape = (3, 4, 5)
    a = axis % 3
    positions = RNG.integers(0, in_shape[a], positions_shape).astype(np.int32)
    out_shape = in_shape[:a] + positions_shape + in_shape[a + 1:]
    model = single_op_model("GATHER", [Spec(in_shape, typ, **_quant(typ)), Spec(positions_shape, "INT32")],
                            [Spec(out_shape, typ, **_quant(typ))], version=version, axis=axis)
    x = _values(in_shape, typ)
    ours = check_against_litert(model, [x, positions])[0]
    assert np.array_equal(ours, np.take(x, positions, axis=a))


@pytest.mark.parametrize(("positions_type", "version"), [("INT16", 6), ("INT64", 1)])
def test_gather_constant_positions_of_other_types(positions_type, version):
    positions = np.array([[2, 0], [1, 1]], dtype=np.int16 if positions_type == "INT16" else np.int64)
    model = single_op_model("GATHER", [Spec((3, 5)), const(positions, positions_type)], [Spec((2, 2, 5))],
                            version=version)
    check_against_litert(model)


@pytest.mark.parametrize(("axis", "batch_dims", "in_shape", "positions_shape"), [
    (1, 1, (2, 4, 3), (2, 5)),
    (2, 1, (2, 3, 4, 2), (2, 3)),
    (2, 2, (2, 3, 4, 2), (2, 3, 2)),
    (-1, -1, (2, 3, 4), (2, 3, 2)),
    (3, 1, (2, 3, 2, 5), (2,)),
])
def test_gather_batch_dims_v5(axis, batch_dims, in_shape, positions_shape):
    rank = len(in_shape)
    a = axis % rank
    b = batch_dims % len(positions_shape)
    out_shape = in_shape[:a] + positions_shape[b:] + in_shape[a + 1:]
    model = single_op_model("GATHER", [Spec(in_shape, "INT8", **INT8), Spec(positions_shape, "INT32")],
                            [Spec(out_shape, "INT8", **INT8)], version=5, axis=axis, batch_dims=batch_dims)
    positions = RNG.integers(0, in_shape[a], positions_shape).astype(np.int32)
    check_against_litert(model, [_values(in_shape, "INT8"), positions])


def test_gather_strings():
    model = single_op_model("GATHER", [Spec((4,), "STRING"), const(np.array([3, 0, 3], np.int32))],
                            [Spec((3,), "STRING")])
    x = _values((4,), "STRING")
    assert run_ours(model, [x])[0].tolist() == run_litert(model, [x])[0].tolist() == [b"3", b"0", b"3"]


@pytest.mark.parametrize(("index", "message"), [(3, "index 3 .* out of bounds .* size 3"),
                                                  (-1, "index -1 .* out of bounds")])
def test_gather_index_out_of_range_fails_like_litert(index, message):
    model = single_op_model("GATHER", [Spec((3, 4)), Spec((2,), "INT32")], [Spec((2, 4))])
    _assert_both_fail(model, [_values((3, 4), "FLOAT32"), np.array([0, index], np.int32)],
                      f"GATHER: {message}")


@pytest.mark.parametrize(("options", "positions", "message"), [
    ({"axis": 2}, Spec((2,), "INT32"), "axis 2 is out of range"),
    ({"axis": 0, "batch_dims": 1}, Spec((3, 2), "INT32"), "batch_dims 1 must not exceed axis 0"),
    ({"axis": 1, "batch_dims": 1}, Spec((2, 2), "INT32"), "batch dimension 0 differs"),
    ({}, Spec((2,), "FLOAT32"), "positions of type FLOAT32 are not supported"),
])
def test_gather_bad_options_raise(options, positions, message):
    model = single_op_model("GATHER", [Spec((3, 4)), positions], [Spec((2, 4))], **options)
    with pytest.raises(KernelError, match=message):
        _prepare(model)


# -- GATHER_ND ------------------------------------------------------------------------------------

@pytest.mark.parametrize("indices_shape", [(2, 1), (2, 2), (4, 3), (3,), (2, 2, 2), (0, 2), (0, 0)])
@pytest.mark.parametrize(("typ", "index_type", "version"), [
    ("FLOAT32", "INT32", 1), ("INT8", "INT64", 1), ("INT16", "INT32", 3), ("FLOAT32", "INT16", 4),
    ("BOOL", "INT32", 5), ("INT64", "INT32", 1),
])
def test_gather_nd(indices_shape, typ, index_type, version):
    params_shape = (3, 4, 5)
    nd = indices_shape[-1]
    indices = RNG.integers(0, params_shape[:nd], indices_shape).astype(numpy_dtype(index_type))
    out_shape = indices_shape[:-1] + params_shape[nd:]
    model = single_op_model("GATHER_ND", [Spec(params_shape, typ, **_quant(typ)), Spec(indices_shape, index_type)],
                            [Spec(out_shape, typ, **_quant(typ))], version=version)
    x = _values(params_shape, typ)
    ours = check_against_litert(model, [x, indices])[0]
    expected = x[tuple(np.moveaxis(indices, -1, 0))] if nd else np.empty(out_shape, x.dtype)  # (0, 0): no slices
    assert np.array_equal(ours, expected)


def test_gather_nd_strings_v2():
    model = single_op_model("GATHER_ND", [Spec((2, 2), "STRING"), const(np.array([[1, 0], [0, 1]], np.int32))],
                            [Spec((2,), "STRING")], version=2)
    x = _values((2, 2), "STRING")
    assert run_ours(model, [x])[0].tolist() == run_litert(model, [x])[0].tolist() == [b"2", b"1"]


def test_gather_nd_empty_index_depth_fails_like_litert():
    """LiteRT fails indices whose innermost dimension is 0 (each would pick all of params)."""
    model = single_op_model("GATHER_ND", [Spec((3, 4)), Spec((2, 0), "INT32")], [Spec((2, 3, 4))])
    _assert_both_fail(model, [_values((3, 4), "FLOAT32"), np.zeros((2, 0), np.int32)], "empty innermost dimension")


@pytest.mark.parametrize(("index", "message"), [([0, 5], "index 5 .* out of bounds .* size 4"),
                                                  ([1, -1], "index -1 .* out of bounds")])
def test_gather_nd_index_out_of_range_fails_like_litert(index, message):
    """An index past its own dimension fails even when its flat offset would land inside params."""
    model = single_op_model("GATHER_ND", [Spec((3, 4)), Spec((2, 2), "INT32")], [Spec((2,))])
    _assert_both_fail(model, [_values((3, 4), "FLOAT32"), np.array([[0, 0], index], np.int32)],
                      f"GATHER_ND: {message}")


@pytest.mark.parametrize(("params", "indices", "message"), [
    (Spec((3, 4)), Spec((2, 3), "INT32"), "index depth 3 .* exceeds params rank 2"),
    (Spec((3, 4)), Spec((2, 2), "FLOAT32"), "indices of type FLOAT32 are not supported"),
    (Spec((3, 4)), Spec((), "INT32"), "indices must be at least a vector"),
])
def test_gather_nd_bad_shapes_raise(params, indices, message):
    model = single_op_model("GATHER_ND", [params, indices], [Spec((2,))])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


# -- SPLIT, SPLIT_V -------------------------------------------------------------------------------

SPLIT_TYPES = [("FLOAT32", 1), ("INT8", 2), ("INT32", 3), ("INT16", 4), ("UINT8", 1), ("INT64", 1)]


@pytest.mark.parametrize(("typ", "version"), SPLIT_TYPES, ids=[t for t, _ in SPLIT_TYPES])
@pytest.mark.parametrize(("axis", "count"), [(0, 2), (1, 3), (-1, 4), (2, 1)])
def test_split(typ, version, axis, count):
    in_shape = (4, 6, 8)
    a = axis % 3
    out_shape = in_shape[:a] + (in_shape[a] // count,) + in_shape[a + 1:]
    model = single_op_model("SPLIT", [const(np.array(axis, np.int32)), Spec(in_shape, typ, **_quant(typ))],
                            [Spec(out_shape, typ, **_quant(typ))] * count, version=version, num_splits=count)
    x = _values(in_shape, typ)
    ours = check_against_litert(model, [x])
    assert all(np.array_equal(o, p) for o, p in zip(ours, np.split(x, count, axis=a)))


def test_split_runtime_axis_giveswith_dynamic_outputs():
    model = with_dynamic_outputs(single_op_model("SPLIT", [Spec((1,), "INT32"), Spec((3, 4))], [Spec((1, 1))] * 2,
                                             num_splits=2))
    ours = check_against_litert(model, [np.array([-1], np.int32), _values((3, 4), "FLOAT32")])
    assert [o.shape for o in ours] == [(3, 2), (3, 2)]


def test_split_empty_parts():
    model = single_op_model("SPLIT", [const(np.array(0, np.int32)), Spec((0, 4))], [Spec((0, 4))] * 2, num_splits=2)
    assert [o.shape for o in check_against_litert(model, [np.zeros((0, 4), np.float32)])] == [(0, 4), (0, 4)]


@pytest.mark.parametrize(("in_shape", "typ", "count", "message"), [
    ((4, 5), "FLOAT32", 2, "not an even split"),
    ((4, 6), "BOOL", 2, "type BOOL is not supported"),
])
def test_split_bad_inputs_raise(in_shape, typ, count, message):
    model = single_op_model("SPLIT", [const(np.array(1, np.int32)), Spec(in_shape, typ)], [Spec((4, 3), typ)] * count,
                            num_splits=count)
    with pytest.raises(KernelError, match=message):
        _prepare(model)


def test_split_num_splits_must_match_outputs():
    model = single_op_model("SPLIT", [const(np.array(0, np.int32)), Spec((4,))], [Spec((2,))] * 2, num_splits=4)
    with pytest.raises(KernelError, match="num_splits is 4 but the node has 2 outputs"):
        _prepare(model)


SPLIT_V_TYPES = [("FLOAT32", 1), ("INT8", 2), ("INT16", 1), ("UINT8", 1), ("INT32", 1), ("INT64", 1)]


@pytest.mark.parametrize(("typ", "version"), SPLIT_V_TYPES, ids=[t for t, _ in SPLIT_V_TYPES])
@pytest.mark.parametrize(("sizes", "axis"), [([1, 2, 3], 1), ([2, -1, 1], -1), ([0, 6, 0], 1), ([-1], 0)])
@pytest.mark.parametrize("size_type", [np.int32, np.int64])
def test_split_v(typ, version, sizes, axis, size_type):
    in_shape = (3, 6, 6) if axis != 0 else (5, 2)
    a = axis % len(in_shape)
    resolved = [in_shape[a] - sum(s for s in sizes if s != -1) if s == -1 else s for s in sizes]
    outs = [Spec(in_shape[:a] + (s,) + in_shape[a + 1:], typ, **_quant(typ)) for s in resolved]
    model = single_op_model("SPLIT_V", [Spec(in_shape, typ, **_quant(typ)), const(np.array(sizes, size_type)),
                                        const(np.array(axis, np.int32))], outs, version=version,
                            num_splits=len(sizes))
    ours = check_against_litert(model, [_values(in_shape, typ)])
    assert [o.shape[a] for o in ours] == resolved


def test_split_v_runtime_sizes_givewith_dynamic_outputs():
    model = with_dynamic_outputs(single_op_model("SPLIT_V", [Spec((2, 7)), Spec((3,), "INT32"),
                                                         const(np.array([1], np.int32))],
                                             [Spec((2, 1))] * 3, num_splits=3))
    ours = check_against_litert(model, [_values((2, 7), "FLOAT32"), np.array([3, -1, 1], np.int32)])
    assert [o.shape for o in ours] == [(2, 3), (2, 3), (2, 1)]


@pytest.mark.parametrize(("sizes", "message"), [
    ([-1, -1, 2], "more than one -1"),
    ([1, 2, 2], r"must sum to axis 1 of size 6"),
    ([4, 3, -1], "sum past axis 1 of size 6"),
    ([7, -2, 1], "has a negative size"),
])
def test_split_v_bad_sizes_raise(sizes, message):
    model = single_op_model("SPLIT_V", [Spec((2, 6)), const(np.array(sizes, np.int32)), const(np.array(1, np.int32))],
                            [Spec((2, 2))] * 3, num_splits=3)
    with pytest.raises(KernelError, match=message):
        _prepare(model)


# -- UNPACK ---------------------------------------------------------------------------------------

UNPACK_TYPES = [("FLOAT32", 1), ("INT32", 1), ("UINT8", 2), ("INT8", 2), ("BOOL", 3), ("INT16", 4)]


@pytest.mark.parametrize(("typ", "version"), UNPACK_TYPES, ids=[t for t, _ in UNPACK_TYPES])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unpack(typ, version, axis):
    in_shape = (2, 3, 4)
    a = axis % 3
    count = in_shape[a]
    out_shape = in_shape[:a] + in_shape[a + 1:]
    model = single_op_model("UNPACK", [Spec(in_shape, typ, **_quant(typ))],
                            [Spec(out_shape, typ, **_quant(typ))] * count, version=version, num=count, axis=axis)
    x = _values(in_shape, typ)
    ours = check_against_litert(model, [x])
    assert all(np.array_equal(o, np.take(x, i, axis=a)) for i, o in enumerate(ours))


def test_unpack_rank1_gives_scalars():
    model = single_op_model("UNPACK", [Spec((3,))], [Spec(())] * 3, num=3)
    assert [o.shape for o in check_against_litert(model)] == [(), (), ()]


@pytest.mark.parametrize(("in_spec", "out_spec", "num", "message"), [
    (Spec((2, 3)), Spec((3,)), 3, r"num 3 differs from dimension 0"),
    (Spec((2, 3), "INT64"), Spec((3,), "INT64"), 2, "type INT64 is not supported"),
    (Spec((2, 3), "INT8", **INT8), Spec((3,), "INT8", scale=0.1, zero_point=-3), 2, "quantization"),
])
def test_unpack_bad_inputs_raise(in_spec, out_spec, num, message):
    model = single_op_model("UNPACK", [in_spec], [out_spec] * num, num=num)
    with pytest.raises(KernelError, match=message):
        _prepare(model)


# -- converter fixtures ---------------------------------------------------------------------------

OPS = {"SLICE", "GATHER", "GATHER_ND", "SPLIT", "SPLIT_V", "UNPACK"}


def _isolate(model: Model, si: int, op) -> bytes:
    """The node alone in a model: its tensors (shape signatures, quantization, constants) and options."""
    sg = model.subgraphs[si]
    used = [i for i in (*op.inputs, *op.outputs) if i >= 0]
    index = {t: n for n, t in enumerate(dict.fromkeys(used))}
    buffers = [b""]
    tensors = []
    for t in index:
        tensor = sg.tensors[t]
        data = model.constant(si, t)
        if data is not None:
            buffers.append(np.ascontiguousarray(data).tobytes())
        tensors.append(dataclasses.replace(tensor, buffer=len(buffers) - 1 if data is not None else 0))
    inputs = tuple(index[t] for t in op.inputs if t >= 0 and model.constant(si, t) is None)
    node = dataclasses.replace(op, inputs=tuple(index[t] if t >= 0 else -1 for t in op.inputs),
                               outputs=tuple(index[t] for t in op.outputs))
    sg1 = Subgraph(tuple(tensors), inputs, node.outputs, (node,), "main")
    return save_model(Model((sg1,), tuple(buffers)))


def _fixture_inputs(model: Model, si: int, op) -> list[np.ndarray]:
    """Inputs within range for the node's index operands (positions, slice windows)."""
    sg = model.subgraphs[si]
    x = sg.tensors[op.inputs[0]] if op.op != "SPLIT" else sg.tensors[op.inputs[1]]
    inputs = []
    for k, t in enumerate(op.inputs):
        if t < 0 or model.constant(si, t) is not None:
            continue
        tensor = sg.tensors[t]
        if op.op == "GATHER" and k == 1:
            inputs.append(RNG.integers(0, x.shape[op.options.axis], tensor.shape).astype(tensor.dtype))
        elif op.op == "SLICE" and k == 1:
            inputs.append(np.array([d // 2 for d in x.shape], tensor.dtype))
        elif op.op == "SLICE" and k == 2:
            inputs.append(np.array([max(1, d // 3) for d in x.shape], tensor.dtype))
        else:
            inputs.append(_values(tensor.shape, tensor.type))
    return inputs


def _nodes():
    for path in sorted(FIXTURES.glob("*.tflite")):
        model = load_model(path.read_bytes())
        for si, sg in enumerate(model.subgraphs):
            for index, op in enumerate(sg.operators):
                if op.op in OPS:
                    yield pytest.param(model, si, op, id=f"{path.stem}-sg{si}-{index}-{op.op}-v{op.version}")


@pytest.mark.parametrize(("model", "si", "op"), list(_nodes()))
def test_fixture_node_matches_litert(model, si, op):
    check_against_litert(_isolate(model, si, op), _fixture_inputs(model, si, op))


# -- one GATHER position (the loop-step read of a converted LSTM) ---------------------------------

@pytest.mark.parametrize("typ", ["FLOAT32", "INT64", "BOOL"])
def test_gather_scalar_position_from_a_vector_gives_a_scalar(typ):
    model = single_op_model("GATHER", [Spec((5,), typ), Spec((), "INT32")], [Spec((), typ)])
    x = _values((5,), typ)
    ours = check_against_litert(model, [x, np.array(3, np.int32)])[0]
    assert ours.shape == () and ours == x[3]


@pytest.mark.parametrize("positions_type", ["INT16", "INT64"])
def test_gather_scalar_position_of_other_index_types(positions_type):
    model = single_op_model("GATHER", [Spec((4, 3)), Spec((), positions_type)], [Spec((3,))], version=6, axis=0)
    x = _values((4, 3), "FLOAT32")
    ours = run_ours(model, [x, np.array(2, numpy_dtype(positions_type))])[0]
    np.testing.assert_array_equal(ours, x[2])


@pytest.mark.parametrize(("index", "message"), [(4, "index 4 .* out of bounds .* size 4"),
                                                  (-1, "index -1 .* out of bounds")])
def test_gather_scalar_position_out_of_range_fails_like_litert(index, message):
    model = single_op_model("GATHER", [Spec((2, 4)), Spec((), "INT32")], [Spec((2,))], axis=1)
    _assert_both_fail(model, [_values((2, 4), "FLOAT32"), np.array(index, np.int32)], f"GATHER: {message}")


def test_slice_runtime_window_changing_between_invokes():
    """A dynamic SLICE output takes each invoke's window, including a return to an earlier one."""
    model = with_dynamic_outputs(single_op_model("SLICE", [Spec((5, 4)), Spec((2,), "INT32"), Spec((2,), "INT32")],
                                             [Spec((1, 1))]))
    x = _values((5, 4), "FLOAT32")
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    for begin, size in [([1, 0], [2, -1]), ([0, 1], [5, 3]), ([1, 0], [2, -1]), ([4, 3], [1, 1])]:
        inputs = [x, np.array(begin, np.int32), np.array(size, np.int32)]
        for d, v in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], v)
        it.invoke()
        ours = it.get_tensor(it.get_output_details()[0]["index"])
        np.testing.assert_array_equal(ours, run_litert(model, inputs)[0])
