"""VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE and CALL_ONCE across invokes, against LiteRT."""

from __future__ import annotations

import re

import numpy as np
import pytest
from support import Graph, assert_close_to_reference, build

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import SignatureDef, tensor_type_for_dtype
from accelsim.runtime.write import save_model


def _litert(model: bytes):
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from ai_edge_litert.interpreter import OpResolverType

    return LiteRT(model_content=model, num_threads=1,
                  experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


def invoke_many(it, runs: list[list[np.ndarray]], between=None) -> list[list[np.ndarray]]:
    """Invoke once per input list on one interpreter; `between(it, k)` runs before invoke k."""
    it.allocate_tensors()
    outs = []
    for k, inputs in enumerate(runs):
        if between is not None:
            between(it, k)
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        outs.append([it.get_tensor(d["index"]) for d in it.get_output_details()])
    return outs


def check_runs(model: bytes, runs: list[list[np.ndarray]], between=None) -> list[list[np.ndarray]]:
    """Both interpreters invoked on the same sequence of inputs give the same outputs each time."""
    ours = invoke_many(Interpreter(model_content=model), runs, between)
    ref = invoke_many(_litert(model), runs, between)
    for o, r in zip(ours, ref):
        assert_close_to_reference(o, r)
    return ours


def accumulator_model(signature: bool = False) -> bytes:
    """v starts at [1, 2] (CALL_ONCE); every invoke does v = v + x and outputs v (signature 'acc': x -> y)."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x, r, s = main.tensor((2,)), main.tensor((2,)), main.tensor((2,))
    main.op("CALL_ONCE", [], [], init_subgraph_index=1)
    h = main.handle("v")
    main.op("READ_VARIABLE", [h], [r])
    main.op("ADD", [r, x], [s])
    main.op("ASSIGN_VARIABLE", [h, s], [])
    init_graph = Graph(buffers)
    init_graph.op("ASSIGN_VARIABLE", [init_graph.handle("v"), init_graph.const(np.array([1.0, 2.0], np.float32))], [])
    model = build((main, [x], [s]), (init_graph, [], []), ir=True)
    if signature:
        model = model.replace(signature_defs=(SignatureDef("acc", 0, (("x", x),), (("y", s),)),))
    return save_model(model)


def test_assign_then_read_across_invokes():
    x = np.array([10.0, 20.0], np.float32)
    outs = check_runs(accumulator_model(), [[x]] * 4)
    np.testing.assert_array_equal(outs[3][0], [41.0, 82.0])


def test_call_once_runs_its_subgraph_at_the_first_invoke_only():
    it = Interpreter(model_content=accumulator_model())
    it.allocate_tensors()
    assert it.resources == {} and it.initialized_subgraphs == set()
    it.set_tensor(it.get_input_details()[0]["index"], np.zeros(2, np.float32))
    it.invoke()
    assert it.initialized_subgraphs == {1}
    np.testing.assert_array_equal(it.resources[0], [1.0, 2.0])


def test_variables_survive_reset_all_variables_and_reallocation():
    """reset_all_variables resets variable tensors, not resource variables; neither does allocate_tensors."""
    def between(it, k):
        if k == 2:
            it.reset_all_variables()
        if k == 3:
            it.allocate_tensors()

    x = np.array([1.0, -1.0], np.float32)
    outs = check_runs(accumulator_model(), [[x]] * 4, between)
    np.testing.assert_array_equal(outs[3][0], [5.0, -2.0])


def test_signature_runner_shares_the_variables_and_call_once():
    """Calls through a signature runner run CALL_ONCE once and keep the variable, like invoke()."""
    model = accumulator_model(signature=True)
    x = np.array([0.5, 0.25], np.float32)
    results = []
    for it in (Interpreter(model_content=model), _litert(model)):
        runner = it.get_signature_runner("acc")
        results.append([runner(x=x)["y"] for _ in range(3)])
    for ours, ref in zip(*results):
        assert_close_to_reference([ours], [ref])
    np.testing.assert_array_equal(results[0][2], [2.5, 2.75])


def test_fresh_interpreter_starts_again():
    x = np.array([3.0, 4.0], np.float32)
    model = accumulator_model()
    first = invoke_many(Interpreter(model_content=model), [[x]])
    again = invoke_many(Interpreter(model_content=model), [[x]])
    np.testing.assert_array_equal(first[0][0], again[0][0])


@pytest.mark.parametrize(("dtype", "shape"), [(np.float32, (2, 3)), (np.int32, (4,)), (np.int64, ()),
                                              (np.bool_, (3,))])
def test_assign_read_types_and_shapes(dtype, shape):
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    type_name = tensor_type_for_dtype(np.dtype(dtype))
    x, r = main.tensor(shape, type_name), main.tensor(shape, type_name)
    h = main.handle("var")
    main.op("ASSIGN_VARIABLE", [h, x], [])
    main.op("READ_VARIABLE", [h], [r])
    model = build((main, [x], [r]))
    rng = np.random.default_rng(0)
    runs = [[(rng.standard_normal(shape) * 5).astype(dtype)] for _ in range(2)]
    outs = check_runs(model, runs)
    np.testing.assert_array_equal(outs[1][0], runs[1][0])


def test_read_gives_the_previous_invokes_value():
    """READ before ASSIGN in the same invoke sees the value the last invoke stored."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x, old = main.tensor((3,)), main.tensor((3,))
    main.op("CALL_ONCE", [], [], init_subgraph_index=1)
    h = main.handle("prev")
    main.op("READ_VARIABLE", [h], [old])
    main.op("ASSIGN_VARIABLE", [h, x], [])
    init_graph = Graph(buffers)
    init_graph.op("ASSIGN_VARIABLE", [init_graph.handle("prev"), init_graph.const(np.zeros(3, np.float32))], [])
    model = build((main, [x], [old]), (init_graph, [], []))
    runs = [[np.full(3, k, np.float32)] for k in (1, 2, 3)]
    outs = check_runs(model, runs)
    assert [o[0][0] for o in outs] == [0.0, 1.0, 2.0]


def test_handles_are_shared_by_name_and_container():
    """Same (container, shared_name) in two subgraphs is one variable; another name or container is not."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    a, b, c = main.tensor((2,)), main.tensor((2,)), main.tensor((2,))
    main.op("CALL_ONCE", [], [], init_subgraph_index=1)
    main.op("READ_VARIABLE", [main.handle("v")], [a])
    main.op("READ_VARIABLE", [main.handle("w")], [b])
    main.op("READ_VARIABLE", [main.handle("v", container="other")], [c])
    init_graph = Graph(buffers)
    for name, container, value in (("v", None, 1.0), ("w", None, 2.0), ("v", "other", 3.0)):
        init_graph.op("ASSIGN_VARIABLE", [init_graph.handle(name, container),
                                          init_graph.const(np.full(2, value, np.float32))], [])
    model = build((main, [], [a, b, c]), (init_graph, [], []))
    outs = check_runs(model, [[], []])
    assert [float(o[0]) for o in outs[1]] == [1.0, 2.0, 3.0]
    it = Interpreter(model_content=model)
    assert it.resource_ids == {("", "v"): 0, ("", "w"): 1, ("other", "v"): 2}


def _growing_variable_model(read_shape) -> bytes:
    """Each invoke appends x to the variable's rows: v = concat(read(v), x)."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x, r, twice = main.tensor((1, 2)), main.tensor(read_shape), main.tensor((1, 2))
    main.op("CALL_ONCE", [], [], init_subgraph_index=1)
    h = main.handle("grow")
    main.op("READ_VARIABLE", [h], [r])
    main.op("CONCATENATION", [r, x], [twice], axis=0)
    main.op("ASSIGN_VARIABLE", [h, twice], [])
    init_graph = Graph(buffers)
    init_graph.op("ASSIGN_VARIABLE", [init_graph.handle("grow"), init_graph.const(np.zeros((1, 2), np.float32))],
                  [])
    return build((main, [x], [twice]), (init_graph, [], []))


def test_read_into_a_rank_0_output_follows_the_variables_shape():
    """A variable takes the shape of whatever is assigned; a rank-0 READ_VARIABLE output follows it."""
    runs = [[np.full((1, 2), k, np.float32)] for k in (1, 2, 3)]
    outs = check_runs(_growing_variable_model(()), runs)
    assert [o[0].shape for o in outs] == [(2, 2), (3, 2), (4, 2)]


def test_read_into_a_shaped_output_copies_its_first_elements():
    """read_variable.cc keeps a ranked output's shape and copies that many elements from the variable."""
    runs = [[np.full((1, 2), k, np.float32)] for k in (1, 2, 3)]
    outs = check_runs(_growing_variable_model((1, 2)), runs)
    np.testing.assert_array_equal(outs[2][0], [[0.0, 0.0], [3.0, 3.0]])


def test_variable_updated_inside_a_while_body():
    """The body adds its counter to a variable each iteration; the main graph reads the total."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    i, i_end, total = main.tensor((), "INT32"), main.tensor((), "INT32"), main.tensor((), "INT32")
    main.op("CALL_ONCE", [], [], init_subgraph_index=3)
    main.op("WHILE", [i], [i_end], cond_subgraph_index=1, body_subgraph_index=2)
    main.op("READ_VARIABLE", [main.handle("sum")], [total])
    cond = Graph(buffers)
    ci, flag = cond.tensor((), "INT32"), cond.tensor((), "BOOL")
    cond.op("LESS", [ci, cond.const(np.int32(5))], [flag])
    body = Graph(buffers)
    bi, bi1, cur, new = (body.tensor((), "INT32") for _ in range(4))
    h = body.handle("sum")
    body.op("ADD", [bi, body.const(np.int32(1))], [bi1])
    body.op("READ_VARIABLE", [h], [cur])
    body.op("ADD", [cur, bi], [new])
    body.op("ASSIGN_VARIABLE", [h, new], [])
    init_graph = Graph(buffers)
    init_graph.op("ASSIGN_VARIABLE", [init_graph.handle("sum"), init_graph.const(np.int32(100))], [])
    model = build((main, [i], [i_end, total]), (cond, [ci], [flag]), (body, [bi], [bi1]), (init_graph, [], []))
    outs = check_runs(model, [[np.array(0, np.int32)], [np.array(3, np.int32)]])
    assert int(outs[0][1]) == 110 and int(outs[1][1]) == 117


# -- errors -----------------------------------------------------------------------------------------

def test_read_before_any_assign():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    r = main.tensor((2,))
    main.op("READ_VARIABLE", [main.handle("never")], [r])
    it = Interpreter(model_content=build((main, [], [r])))
    it.allocate_tensors()
    with pytest.raises(KernelError, match=r"Node number 1 \(READ_VARIABLE\) failed to invoke.*resource 0 was read "
                                          r"before any ASSIGN_VARIABLE"):
        it.invoke()


def test_read_with_another_type():
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x, r = main.tensor((2,)), main.tensor((2,), "INT32")
    h = main.handle("v")
    main.op("ASSIGN_VARIABLE", [h, x], [])
    main.op("READ_VARIABLE", [h], [r])
    it = Interpreter(model_content=build((main, [x], [r])))
    it.allocate_tensors()
    with pytest.raises(KernelError, match="resource 0 holds float32 but the output is INT32"):
        it.invoke()


@pytest.mark.parametrize(("op", "handle_type", "handle_shape", "expected"), [
    ("READ_VARIABLE", "FLOAT32", (), "READ_VARIABLE input 0 must be RESOURCE or INT32, got FLOAT32"),
    ("READ_VARIABLE", "INT32", (2,), "READ_VARIABLE input 0 must hold one resource id, got shape [2]"),
    ("ASSIGN_VARIABLE", "INT64", (), "ASSIGN_VARIABLE input 0 must be RESOURCE or INT32, got INT64"),
])
def test_bad_resource_input(op, handle_type, handle_shape, expected):
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    h, x, r = main.tensor(handle_shape, handle_type), main.tensor((2,)), main.tensor((2,))
    if op == "READ_VARIABLE":
        main.op(op, [h], [r])
    else:
        main.op(op, [h, x], [])
        main.op("NEG", [x], [r])
    it = Interpreter(model_content=build((main, [h, x], [r])))
    with pytest.raises(KernelError, match=rf"Node number 0 \({op}\) failed to prepare.*{re.escape(expected)}"):
        it.allocate_tensors()


def test_int32_handle_from_graph_input():
    """A resource id may come in as an INT32 tensor (assign_variable.cc accepts both types)."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    rid, x, r = main.tensor((1,), "INT32"), main.tensor((2,)), main.tensor((2,))
    main.op("ASSIGN_VARIABLE", [rid, x], [])
    main.op("READ_VARIABLE", [rid], [r])
    model = build((main, [rid, x], [r]))
    outs = check_runs(model, [[np.array([7], np.int32), np.array([1.5, 2.5], np.float32)]])
    np.testing.assert_array_equal(outs[0][0], [1.5, 2.5])
