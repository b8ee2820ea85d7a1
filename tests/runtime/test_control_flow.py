"""WHILE, IF and CALL_ONCE on hand-built multi-subgraph models, against LiteRT."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from support import FIXTURES, Graph, build, check_against_litert, prepare_error, run_litert

from accelsim.runtime.errors import KernelError, ModelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model, make_operator
from accelsim.runtime.resolver import BuiltinOpResolver


def _counter_while(buffers: list[bytes], x_shape, x_type: str = "FLOAT32"):
    """A main graph running WHILE (cond subgraph 1, body 2) over an INT32 counter i and a tensor x."""
    main = Graph(buffers)
    i, x = main.tensor((), "INT32"), main.tensor(x_shape, x_type)
    outs = [main.tensor((), "INT32"), main.tensor(x_shape, x_type)]
    main.op("WHILE", [i, x], outs, cond_subgraph_index=1, body_subgraph_index=2)
    return main, i, x, outs


def less_than_cond(buffers, limit: int, shapes, types) -> tuple[Graph, list[int], list[int]]:
    """A cond subgraph: loop variable 0 (INT32 scalar) < limit."""
    g = Graph(buffers)
    ins = [g.tensor(s, t) for s, t in zip(shapes, types)]
    flag = g.tensor((), "BOOL")
    g.op("LESS", [ins[0], g.const(np.int32(limit))], [flag])
    return g, ins, [flag]


def counter_body(buffers, shape) -> tuple[Graph, list[int], list[int]]:
    """A body subgraph: (i, x) -> (i + 1, x * 1.5 + 0.25)."""
    g = Graph(buffers)
    i, x = g.tensor((), "INT32"), g.tensor(shape)
    i1, xm, x1 = g.tensor((), "INT32"), g.tensor(shape), g.tensor(shape)
    g.op("ADD", [i, g.const(np.int32(1))], [i1])
    g.op("MUL", [x, g.const(np.float32(1.5))], [xm])
    g.op("ADD", [xm, g.const(np.float32(0.25))], [x1])
    return g, [i, x], [i1, x1]


def while_model(limit: int = 5, shape=(2, 3), cond_index: int = 1, body_index: int = 2,
                ir: bool = False) -> bytes | Model:
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, x = main.tensor((), "INT32"), main.tensor(shape)
    i_out, x_out = main.tensor((), "INT32"), main.tensor(shape)
    main.op("WHILE", [i, x], [i_out, x_out], cond_subgraph_index=cond_index, body_subgraph_index=body_index)
    cond = less_than_cond(buffers, limit, [(), shape], ["INT32", "FLOAT32"])
    return build((main, [i, x], [i_out, x_out]), cond, counter_body(buffers, shape), ir=ir)


def _run_with_counter(model: bytes, start: int, shape=(2, 3)) -> list[np.ndarray]:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return check_against_litert(model, [np.array(start, np.int32), x])


# -- WHILE ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("start", "iterations"), [(0, 5), (3, 2), (4, 1), (5, 0), (9, 0), (-3, 8)])
def test_while_counts_iterations_like_litert(start, iterations):
    i, x = _run_with_counter(while_model(limit=5), start)
    assert int(i) == start + iterations


@pytest.mark.parametrize("shape", [(), (1,), (4, 1, 3)])
def test_while_loop_variable_shapes(shape):
    _run_with_counter(while_model(limit=3, shape=shape), 0, shape)


def test_while_passes_through_unchanged_loop_variables():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, x, k = main.tensor((), "INT32"), main.tensor((3,)), main.tensor((3,))
    outs = [main.tensor((), "INT32"), main.tensor((3,)), main.tensor((3,))]
    main.op("WHILE", [i, x, k], outs, cond_subgraph_index=1, body_subgraph_index=2)
    cond = less_than_cond(buffers, 4, [(), (3,), (3,)], ["INT32", "FLOAT32", "FLOAT32"])
    body = Graph(buffers)
    bi, bx, bk = body.tensor((), "INT32"), body.tensor((3,)), body.tensor((3,))
    bi1, bx1 = body.tensor((), "INT32"), body.tensor((3,))
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("ADD", [bx, bk], [bx1])
    model = build((main, [i, x, k], outs), cond, (body, [bi, bx, bk], [bi1, bx1, bk]))
    rng = np.random.default_rng(1)
    x0, k0 = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    _, x_end, k_end = check_against_litert(model, [np.array(0, np.int32), x0, k0])
    np.testing.assert_allclose(x_end, x0 + 4 * k0, rtol=1e-6)
    np.testing.assert_array_equal(k_end, k0)


def test_while_same_tensor_twice_as_input():
    """The converter feeds one tensor to two loop variables (e.g. both counters start at 0)."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i = main.tensor((), "INT32")
    outs = [main.tensor((), "INT32"), main.tensor((), "INT32")]
    main.op("WHILE", [i, i], outs, cond_subgraph_index=1, body_subgraph_index=2)
    cond = less_than_cond(buffers, 6, [(), ()], ["INT32", "INT32"])
    body = Graph(buffers)
    a, b = body.tensor((), "INT32"), body.tensor((), "INT32")
    a1, b1 = body.tensor((), "INT32"), body.tensor((), "INT32")
    body.op("ADD", [a, body.const(np.int32(1))], [a1])
    body.op("ADD", [b, a], [b1])
    model = build((main, [i], outs), cond, (body, [a, b], [a1, b1]))
    a_end, b_end = check_against_litert(model, [np.array(0, np.int32)])
    assert (int(a_end), int(b_end)) == (6, 15)


def _swap_model(fibonacci: bool) -> bytes:
    """Loop variables (i, a, b); the body gives (i + 1, b, a) or, for Fibonacci, (i + 1, b, a + b)."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, a, b = main.tensor((), "INT32"), main.tensor((2,)), main.tensor((2,))
    outs = [main.tensor((), "INT32"), main.tensor((2,)), main.tensor((2,))]
    main.op("WHILE", [i, a, b], outs, cond_subgraph_index=1, body_subgraph_index=2)
    cond = less_than_cond(buffers, 5, [(), (2,), (2,)], ["INT32", "FLOAT32", "FLOAT32"])
    body = Graph(buffers)
    bi, ba, bb, bi1 = body.tensor((), "INT32"), body.tensor((2,)), body.tensor((2,)), body.tensor((), "INT32")
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    second = ba
    if fibonacci:
        second = body.tensor((2,))
        body.op("ADD", [ba, bb], [second])
    return build((main, [i, a, b], outs), cond, (body, [bi, ba, bb], [bi1, bb, second]))


def test_while_body_swapping_loop_variables_matches_litert_aliasing():
    """LiteRT's static WHILE aliases the body inputs to the WHILE outputs and copies the body outputs
    one by one, so (a, b) -> (b, a) leaves both holding b; the interpreter reproduces that."""
    a0, b0 = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    _, a_end, b_end = check_against_litert(_swap_model(False), [np.array(0, np.int32), a0, b0])
    np.testing.assert_array_equal(a_end, b0)
    np.testing.assert_array_equal(b_end, b0)


def test_while_fibonacci():
    a0, b0 = np.array([0.0, 1.0], np.float32), np.array([1.0, 1.0], np.float32)
    _, a_end, b_end = check_against_litert(_swap_model(True), [np.array(0, np.int32), a0, b0])
    np.testing.assert_array_equal(a_end, [5.0, 8.0])
    np.testing.assert_array_equal(b_end, [8.0, 13.0])


def growing_model(limit: int = 3) -> bytes:
    """A body that concatenates x with itself: the loop variable's shape doubles every iteration."""
    buffers: list[bytes] = [b""]
    main, i, x, outs = _counter_while(buffers, (1, 2))
    cond = less_than_cond(buffers, limit, [(), (1, 2)], ["INT32", "FLOAT32"])
    body = Graph(buffers)
    bi, bx = body.tensor((), "INT32"), body.tensor((1, 2))
    bi1, bx1, bx2 = body.tensor((), "INT32"), body.tensor((2, 2)), body.tensor((2, 2))
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("CONCATENATION", [bx, bx], [bx1], axis=0)
    body.op("ADD", [bx1, body.const(np.float32(1.0))], [bx2])
    return build((main, [i, x], outs), cond, (body, [bi, bx], [bi1, bx2]))


@pytest.mark.parametrize(("limit", "rows"), [(0, 1), (1, 2), (3, 8), (5, 32)])
def test_while_body_output_grows_dynamic_shape(limit, rows):
    x = np.array([[1.0, -2.0]], np.float32)
    _, out = check_against_litert(growing_model(limit), [np.array(0, np.int32), x])
    assert out.shape == (rows, 2)


def test_while_invoked_twice_restarts_from_the_inputs():
    model = growing_model(3)
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    idx = [d["index"] for d in it.get_input_details()]
    results = []
    for start in (0, 2):
        it.set_tensor(idx[0], np.array(start, np.int32))
        it.set_tensor(idx[1], np.ones((1, 2), np.float32))
        it.invoke()
        results.append(it.get_tensor(it.get_output_details()[1]["index"]))
    ref = [run_litert(model, [np.array(s, np.int32), np.ones((1, 2), np.float32)])[1] for s in (0, 2)]
    for ours, theirs in zip(results, ref):
        np.testing.assert_array_equal(ours, theirs)
    assert [r.shape for r in results] == [(8, 2), (2, 2)]


def test_nested_while_in_body():
    """The outer body runs an inner WHILE (subgraphs 3 and 4): x grows by 1.5x+0.25 three times per step."""
    buffers: list[bytes] = [b""]
    main, i, x, outs = _counter_while(buffers, (2,))
    cond = less_than_cond(buffers, 2, [(), (2,)], ["INT32", "FLOAT32"])
    body = Graph(buffers)
    bi, bx = body.tensor((), "INT32"), body.tensor((2,))
    bi1, j_end, bx1 = body.tensor((), "INT32"), body.tensor((), "INT32"), body.tensor((2,))
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("WHILE", [body.const(np.int32(0)), bx], [j_end, bx1], cond_subgraph_index=3, body_subgraph_index=4)
    inner_cond = less_than_cond(buffers, 3, [(), (2,)], ["INT32", "FLOAT32"])
    model = build((main, [i, x], outs), cond, (body, [bi, bx], [bi1, bx1]), inner_cond, counter_body(buffers, (2,)))
    x0 = np.array([1.0, -1.0], np.float32)
    _, x_end = check_against_litert(model, [np.array(0, np.int32), x0])
    expected = x0.astype(np.float64)
    for _ in range(6):
        expected = expected * 1.5 + 0.25
    np.testing.assert_allclose(x_end, expected, rtol=1e-6)


def test_while_subgraphs_not_invoked_at_allocate():
    it = Interpreter(model_content=while_model())
    it.allocate_tensors()
    body = it.subgraph(2)
    assert all(body.tensors[t].data is None for t in body.outputs)
    it.invoke()
    assert body.tensors[body.outputs[0]].data is not None


def _counting_prepares(op: str, version: int = 1) -> tuple[BuiltinOpResolver, list[tuple[int, ...]]]:
    """A resolver whose `op` kernel logs its input shape at every prepare."""
    resolver = BuiltinOpResolver()
    reg = resolver.resolve_builtin(op, version)
    seen: list[tuple[int, ...]] = []

    def prepare(ctx, node):
        seen.append(ctx.input(node, 0).shape)
        return reg.prepare(ctx, node)

    resolver.add_builtin(op, dataclasses.replace(reg, prepare=prepare), version, version)
    return resolver, seen


def test_node_after_while_prepared_again_only_when_the_loop_output_changes_shape():
    """As Subgraph::Invoke: a dynamic output that keeps its shape does not re-prepare the nodes after it."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, x = main.tensor((), "INT32"), main.tensor((1, 2))
    i_out, x_out, flat = main.tensor((), "INT32"), main.tensor((1, 2)), main.tensor((2,))
    main.op("WHILE", [i, x], [i_out, x_out], cond_subgraph_index=1, body_subgraph_index=2)
    main.op("RESHAPE", [x_out, main.const(np.array([-1], np.int32))], [flat])
    cond = less_than_cond(buffers, 3, [(), (1, 2)], ["INT32", "FLOAT32"])
    body = Graph(buffers)
    bi, bx = body.tensor((), "INT32"), body.tensor((1, 2))
    bi1, bx1 = body.tensor((), "INT32"), body.tensor((2, 2))
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("CONCATENATION", [bx, bx], [bx1], axis=0)
    model = build((main, [i, x], [i_out, flat]), cond, (body, [bi, bx], [bi1, bx1]))
    resolver, seen = _counting_prepares("RESHAPE")
    it = Interpreter(model_content=model, op_resolver=resolver)
    it.allocate_tensors()
    x0 = np.array([[1.0, -2.0]], np.float32)
    for start, prepared in [(1, [(4, 2)]), (1, [(4, 2)]), (0, [(4, 2), (8, 2)]), (0, [(4, 2), (8, 2)])]:
        it.set_tensor(it.get_input_details()[0]["index"], np.array(start, np.int32))
        it.set_tensor(it.get_input_details()[1]["index"], x0)
        it.invoke()
        ours = it.get_tensor(it.get_output_details()[1]["index"])
        np.testing.assert_array_equal(ours, run_litert(model, [np.array(start, np.int32), x0])[1])
        assert [s for s in seen if s != (1, 2)] == prepared


@pytest.mark.parametrize("grow", [False, True], ids=["static", "dynamic"])
def test_while_cond_reads_the_body_outputs_before_the_aliasing_copies(grow):
    """Loop variables (i, x, k) -> (i + 1, x or [x, x], i), the cond testing k < 3: the cond sees k = i
    from before the step (body output 2 as computed), the next step sees it advanced."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, x, k = main.tensor((), "INT32"), main.tensor((1,)), main.tensor((), "INT32")
    outs = [main.tensor((), "INT32"), main.tensor((1,)), main.tensor((), "INT32")]
    main.op("WHILE", [i, x, k], outs, cond_subgraph_index=1, body_subgraph_index=2)
    cond = Graph(buffers)
    ci, cx, ck, flag = cond.tensor((), "INT32"), cond.tensor((1,)), cond.tensor((), "INT32"), cond.tensor((), "BOOL")
    cond.op("LESS", [ck, cond.const(np.int32(3))], [flag])
    body = Graph(buffers)
    bi, bx, bk = body.tensor((), "INT32"), body.tensor((1,)), body.tensor((), "INT32")
    bi1 = body.tensor((), "INT32")
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    bx1 = bx
    if grow:
        bx1 = body.tensor((2,))
        body.op("CONCATENATION", [bx, bx], [bx1], axis=0)
    model = build((main, [i, x, k], outs), (cond, [ci, cx, ck], [flag]), (body, [bi, bx, bk], [bi1, bx1, bi]))
    i_end, x_end, k_end = check_against_litert(model, [np.array(0, np.int32), np.array([0.5], np.float32),
                                                       np.array(0, np.int32)])
    assert (int(i_end), int(k_end)) == (4, 4)
    assert x_end.shape == ((16,) if grow else (1,))


def test_while_body_reading_an_earlier_loop_variable_late_in_a_dynamic_loop():
    """A dynamic loop aliases like a static one: Eval_dynamic hands the WHILE outputs' memory to the body
    inputs (a shallow copy) and copies the body outputs back in order, so output 2 = body input 0 reads
    the counter after output 0's copy already advanced it."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, x, k = main.tensor((), "INT32"), main.tensor((1,)), main.tensor((), "INT32")
    outs = [main.tensor((), "INT32"), main.tensor((1,)), main.tensor((), "INT32")]
    main.op("WHILE", [i, x, k], outs, cond_subgraph_index=1, body_subgraph_index=2)
    cond = less_than_cond(buffers, 3, [(), (1,), ()], ["INT32", "FLOAT32", "INT32"])
    body = Graph(buffers)
    bi, bx, bk = body.tensor((), "INT32"), body.tensor((1,)), body.tensor((), "INT32")
    bi1, bx1 = body.tensor((), "INT32"), body.tensor((2,))
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("CONCATENATION", [bx, bx], [bx1], axis=0)
    model = build((main, [i, x, k], outs), cond, (body, [bi, bx, bk], [bi1, bx1, bi]))
    i_end, x_end, k_end = check_against_litert(model, [np.array(0, np.int32), np.array([0.5], np.float32),
                                                       np.array(9, np.int32)])
    assert (int(i_end), x_end.shape, int(k_end)) == (3, (8,), 3)


# -- IF -------------------------------------------------------------------------------------------

def if_model(then_op: str = "ADD", else_op: str = "MUL", shape=(2, 3)) -> bytes:
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    c, x, y, out = main.tensor((), "BOOL"), main.tensor(shape), main.tensor(shape), main.tensor(shape)
    main.op("IF", [c, x, y], [out], then_subgraph_index=1, else_subgraph_index=2)
    branches = []
    for op in (then_op, else_op):
        g = Graph(buffers)
        a, b, r = g.tensor(shape), g.tensor(shape), g.tensor(shape)
        g.op(op, [a, b], [r])
        branches.append((g, [a, b], [r]))
    return build((main, [c, x, y], [out]), *branches)


@pytest.mark.parametrize("flag", [True, False])
def test_if_runs_the_chosen_branch(flag):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    (out,) = check_against_litert(if_model(), [np.array(flag), x, y])
    np.testing.assert_allclose(out, x + y if flag else x * y, rtol=1e-6)


def test_if_condition_of_shape_one():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    c, x, out = main.tensor((1,), "BOOL"), main.tensor((3,)), main.tensor((3,))
    main.op("IF", [c, x], [out], then_subgraph_index=1, else_subgraph_index=2)
    branches = []
    for k in (2.0, -1.0):
        g = Graph(buffers)
        a, r = g.tensor((3,)), g.tensor((3,))
        g.op("MUL", [a, g.const(np.float32(k))], [r])
        branches.append((g, [a], [r]))
    model = build((main, [c, x], [out]), *branches)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    for flag, k in ((True, 2.0), (False, -1.0)):
        (out,) = check_against_litert(model, [np.array([flag]), x])
        np.testing.assert_array_equal(out, k * x)


def test_if_branches_with_different_output_shapes():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    c, x, out = main.tensor((), "BOOL"), main.tensor((1, 2)), main.tensor((1, 2))
    main.op("IF", [c, x], [out], then_subgraph_index=1, else_subgraph_index=2)
    then = Graph(buffers)
    a, r = then.tensor((1, 2)), then.tensor((2, 2))
    then.op("CONCATENATION", [a, a], [r], axis=0)
    other = Graph(buffers)
    b, s = other.tensor((1, 2)), other.tensor((1, 2))
    other.op("NEG", [b], [s])
    model = build((main, [c, x], [out]), (then, [a], [r]), (other, [b], [s]))
    x = np.array([[1.0, 2.0]], np.float32)
    assert check_against_litert(model, [np.array(True), x])[0].shape == (2, 2)
    assert check_against_litert(model, [np.array(False), x])[0].shape == (1, 2)


def test_if_inside_while_body():
    """The body doubles x on even steps and adds one on odd steps."""
    buffers: list[bytes] = [b""]
    main, i, x, outs = _counter_while(buffers, (2,))
    cond = less_than_cond(buffers, 5, [(), (2,)], ["INT32", "FLOAT32"])
    body = Graph(buffers)
    bi, bx = body.tensor((), "INT32"), body.tensor((2,))
    bi1, rem, even, bx1 = body.tensor((), "INT32"), body.tensor((), "INT32"), body.tensor((), "BOOL"), body.tensor((2,))
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("FLOOR_MOD", [bi, body.const(np.int32(2))], [rem])
    body.op("EQUAL", [rem, body.const(np.int32(0))], [even])
    body.op("IF", [even, bx], [bx1], then_subgraph_index=3, else_subgraph_index=4)
    branches = []
    for op, k in (("MUL", 2.0), ("ADD", 1.0)):
        g = Graph(buffers)
        a, r = g.tensor((2,)), g.tensor((2,))
        g.op(op, [a, g.const(np.float32(k))], [r])
        branches.append((g, [a], [r]))
    model = build((main, [i, x], outs), cond, (body, [bi, bx], [bi1, bx1]), *branches)
    x0 = np.array([1.0, -3.0], np.float32)
    _, x_end = check_against_litert(model, [np.array(0, np.int32), x0])
    expected = x0.copy()
    for step in range(5):
        expected = expected * 2 if step % 2 == 0 else expected + 1
    np.testing.assert_array_equal(x_end, expected)


# -- CALL_ONCE ------------------------------------------------------------------------------------

def test_call_once_without_resources_is_a_no_op_for_outputs():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x, y = main.tensor((3,)), main.tensor((3,))
    main.op("CALL_ONCE", [], [], init_subgraph_index=1)
    main.op("NEG", [x], [y])
    init = Graph(buffers)
    model = build((main, [x], [y]), (init, [], []))
    x = np.array([1.0, -2.0, 3.0], np.float32)
    np.testing.assert_array_equal(check_against_litert(model, [x])[0], -x)


# -- the converter's LSTM/GRU model: two WHILE loops over five subgraphs ---------------------------

def test_lstm_gru_fixture_matches_litert():
    model = (FIXTURES / "lstm_gru_float.tflite").read_bytes()
    for seed in (0, 1):
        check_against_litert(model, seed=seed)


def test_lstm_gru_fixture_invoked_twice_on_one_interpreter():
    """The loops restart from the node inputs on every invoke; nothing leaks from the previous run."""
    model = (FIXTURES / "lstm_gru_float.tflite").read_bytes()
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    rng = np.random.default_rng(3)
    shape = tuple(it.get_input_details()[0]["shape"])
    for _ in range(2):
        x = rng.standard_normal(shape).astype(np.float32)
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        ours = it.get_tensor(it.get_output_details()[0]["index"])
        np.testing.assert_allclose(ours, run_litert(model, [x])[0], rtol=0, atol=1e-5 * np.abs(ours).max())


# -- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("cond_index", "body_index", "bad"), [(7, 2, "cond subgraph index 7"),
                                                               (1, 9, "body subgraph index 9"),
                                                               (-1, 2, "cond subgraph index -1")])
def test_while_subgraph_index_out_of_range(cond_index, body_index, bad):
    msg = prepare_error(while_model(cond_index=cond_index, body_index=body_index, ir=True))
    assert "Node number 0 (WHILE) failed to prepare" in msg
    assert bad in msg and "out of range" in msg and "3 subgraphs" in msg


def test_while_subgraph_index_out_of_range_refused_when_loading():
    with pytest.raises(ModelError, match=r"operator 0 \(WHILE\): body_subgraph_index 9 is out of range"):
        Interpreter(model_content=while_model(body_index=9))


def test_while_same_cond_and_body():
    assert "same subgraph 1" in prepare_error(while_model(cond_index=1, body_index=1, ir=True))


def test_while_calling_its_own_subgraph():
    assert "cond subgraph 0 is the subgraph the node is in" in prepare_error(while_model(cond_index=0, ir=True))


def _while_with(cond_out_type: str, cond_out_shape, body_outputs: str = "ok") -> bytes:
    buffers: list[bytes] = [b""]
    main, i, x, outs = _counter_while(buffers, (2,))
    cond = Graph(buffers)
    ci, cx = cond.tensor((), "INT32"), cond.tensor((2,))
    flag = cond.tensor(cond_out_shape, cond_out_type)
    if cond_out_type == "BOOL":
        cond.op("LESS", [ci, cond.const(np.zeros(cond_out_shape, np.int32))], [flag])
    else:
        cond.op("ADD", [cx, cond.const(np.zeros(cond_out_shape, np.float32))], [flag])
    body = Graph(buffers)
    bi, bx = body.tensor((), "INT32"), body.tensor((2,))
    bi1 = body.tensor((), "INT32")
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body_outs = {"ok": [bi1, bx], "short": [bi1], "swapped": [bx, bi1]}[body_outputs]
    return build((main, [i, x], outs), (cond, [ci, cx], [flag]), (body, [bi, bx], body_outs))


def test_while_cond_output_not_bool():
    msg = prepare_error(_while_with("FLOAT32", (2,)))
    assert "cond subgraph 1 output must be a BOOL scalar or [1], got FLOAT32 [2]" in msg


def test_while_cond_output_not_scalar():
    msg = prepare_error(_while_with("BOOL", (2,)))
    assert "cond subgraph 1 output must be a BOOL scalar or [1], got BOOL [2]" in msg


def test_while_body_output_count_mismatch():
    msg = prepare_error(_while_with("BOOL", (), "short"))
    assert "body subgraph 2 takes 2 inputs and gives 1 outputs; the node needs 2 and 2" in msg


def test_while_body_output_type_mismatch():
    msg = prepare_error(_while_with("BOOL", (), "swapped"))
    assert "body subgraph 2 output 0 is FLOAT32 but loop variable 0 is INT32" in msg


def test_while_cond_with_wrong_input_count():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, out = main.tensor((), "INT32"), main.tensor((), "INT32")
    main.op("WHILE", [i], [out], cond_subgraph_index=1, body_subgraph_index=2)
    cond = less_than_cond(buffers, 3, [(), ()], ["INT32", "INT32"])
    body = Graph(buffers)
    b = body.tensor((), "INT32")
    msg = prepare_error(build((main, [i], [out]), cond, (body, [b], [b])))
    assert "cond subgraph 1 takes 2 inputs and gives 1 outputs; the node needs 1 and 1" in msg


def test_while_input_type_differs_from_subgraph_input():
    buffers: list[bytes] = [b""]
    main, i, x, outs = _counter_while(buffers, (2,), "INT32")
    cond = less_than_cond(buffers, 3, [(), (2,)], ["INT32", "FLOAT32"])
    msg = prepare_error(build((main, [i, x], outs), cond, counter_body(buffers, (2,))))
    assert "cond subgraph 1 input 1 is FLOAT32 but is given int32" in msg


def test_error_inside_body_names_the_subgraph():
    """A body node that fails at invoke is reported with its subgraph under the WHILE node."""
    buffers: list[bytes] = [b""]
    main, i, x, outs = _counter_while(buffers, (4,))
    cond = less_than_cond(buffers, 3, [(), (4,)], ["INT32", "FLOAT32"])
    body = Graph(buffers)
    bi, bx = body.tensor((), "INT32"), body.tensor((4,))
    bi1, shape, bx1 = body.tensor((), "INT32"), body.tensor((1,), "INT32"), body.tensor((4,))
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("RESHAPE", [bi1, body.const(np.array([1], np.int32))], [shape])
    body.op("RESHAPE", [bx, shape], [bx1])  # [4] -> [i + 1]: fails on the first step
    model = build((main, [i, x], outs), cond, (body, [bi, bx], [bi1, bx1]))
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    with pytest.raises(KernelError) as info:
        it.invoke()
    msg = str(info.value)
    assert msg.startswith("Node number 0 (WHILE) failed to invoke")
    assert "(subgraph 2 node 2)" in msg and "RESHAPE" in msg


def _if_with(cond_type: str = "BOOL", cond_shape=(), then_index: int = 1, else_index: int = 2,
             branch_inputs: int = 1) -> Model:
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    c, x, out = main.tensor(cond_shape, cond_type), main.tensor((2,)), main.tensor((2,))
    main.op("IF", [c, x], [out], then_subgraph_index=then_index, else_subgraph_index=else_index)
    branches = []
    for _ in range(2):
        g = Graph(buffers)
        ins = [g.tensor((2,)) for _ in range(branch_inputs)]
        r = g.tensor((2,))
        g.op("NEG", [ins[0]], [r])
        branches.append((g, ins, [r]))
    return build((main, [c, x], [out]), *branches, ir=True)


@pytest.mark.parametrize(("kw", "expected"), [
    ({"cond_type": "INT32"}, "IF condition must be a single BOOL, got INT32 []"),
    ({"cond_shape": (2,)}, "IF condition must be a single BOOL, got BOOL [2]"),
    ({"then_index": 3}, "then subgraph index 3 out of range: the model has 3 subgraphs"),
    ({"else_index": 5}, "else subgraph index 5 out of range"),
    ({"branch_inputs": 2}, "then subgraph 1 takes 2 inputs and gives 1 outputs; the node needs 1 and 1"),
])
def test_if_errors(kw, expected):
    msg = prepare_error(_if_with(**kw))
    assert "Node number 0 (IF) failed to prepare" in msg and expected in msg


def test_call_once_errors():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x, y = main.tensor((3,)), main.tensor((3,))
    main.op("CALL_ONCE", [], [], init_subgraph_index=1)
    main.op("NEG", [x], [y])
    init = Graph(buffers)
    a = init.tensor((3,))
    msg = prepare_error(build((main, [x], [y]), (init, [a], [a])))
    assert "init subgraph 1 takes 1 inputs and gives 1 outputs; the node needs 0 and 0" in msg
    main.ops[0] = make_operator("CALL_ONCE", [], [], init_subgraph_index=4)
    msg = prepare_error(build((main, [x], [y]), (init, [], []), ir=True))
    assert "init subgraph index 4 out of range" in msg
    main.ops[0] = make_operator("CALL_ONCE", [], [], init_subgraph_index=0)
    msg = prepare_error(build((main, [x], [y]), (init, [], []), ir=True))
    assert "CALL_ONCE cannot call its own subgraph 0" in msg
