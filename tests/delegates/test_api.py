"""SimpleDelegate.apply end to end: partitions become delegate nodes, errors leave the interpreter as it was."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import random_inputs, run_ours

from accelsim.delegates import (
    DelegateError,
    DelegateKernelError,
    DelegateOptions,
    Selection,
    SimpleDelegate,
    SimpleDelegateKernel,
    delegation_report,
    get_node_and_registration,
    node_view,
)
from accelsim.delegates.partition import describe_plan
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model, Quantization, Subgraph, Tensor, make_operator
from accelsim.runtime.read import load_model
from accelsim.runtime.resolver import MutableOpResolver, Registration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"

# x, w -> ADD -> SUB -> MUL -> ADD(c) -> SUB -> y (tensor 7); c is constant tensor 5.
DEMO = [("ADD", (0, 1), 2), ("SUB", (2, 1), 3), ("MUL", (3, 0), 4), ("ADD", (4, 5), 6), ("SUB", (6, 0), 7)]
# Runs of ADD/SUB of sizes 1, 3 and 2, separated by MULs.
RUNS = [("ADD", (0, 1), 2), ("MUL", (2, 1), 3), ("ADD", (3, 1), 4), ("SUB", (4, 1), 5), ("ADD", (5, 0), 6),
        ("MUL", (6, 1), 7), ("SUB", (7, 0), 8), ("ADD", (8, 1), 9)]
C = np.linspace(-1, 1, 6, dtype=np.float32)


class RunNodesKernel(SimpleDelegateKernel):
    """Runs the replaced nodes with their own CPU kernels; `fail` names a hook that raises."""

    def __init__(self, fail=None):
        self.fail = fail

    def _maybe_fail(self, phase):
        if self.fail == phase:
            raise ValueError(f"boom in {phase}")

    def init(self, context, params):
        self._maybe_fail("init")
        self.nodes = params.nodes_to_replace

    def prepare(self, context, node):
        self._maybe_fail("prepare")
        for i in self.nodes:
            inner, reg = get_node_and_registration(context, i)
            if reg.prepare is not None:
                reg.prepare(context, inner)

    def eval(self, context, node):
        self._maybe_fail("eval")
        for i in self.nodes:
            inner, reg = get_node_and_registration(context, i)
            reg.invoke(context, inner)


class OpsDelegate(SimpleDelegate):
    """Claims nodes by op name (or by index); `fail` names a hook that raises."""

    def __init__(self, ops=("ADD", "SUB"), name="Test", indices=None, options=None, fail=None):
        self.ops, self._name, self.indices, self._options, self.fail = ops, name, indices, options, fail
        self.seen = []

    def name(self):
        return self._name

    def initialize(self, context):
        if self.fail == "initialize":
            raise RuntimeError("cannot start")

    def options(self):
        return self._options or DelegateOptions()

    def is_node_supported(self, context, node, registration):
        self.seen.append(node.index)
        if self.fail == "is_node_supported" and node.index == 2:
            raise KeyError("no table")
        if self.indices is not None:
            return node.index in self.indices
        if node.op not in self.ops:
            return False, f"op {node.op} unsupported"
        return True

    def create_kernel(self):
        if self.fail == "create_kernel":
            return object()
        return RunNodesKernel(self.fail)


def state(it: Interpreter):
    g = it.primary
    return list(g.execution_plan), len(g.nodes), len(g.tensors), [t.shape for t in g.tensors]


@pytest.fixture
def demo(model_builder):
    return model_builder(DEMO, 2, [7], {5: C})


def inputs_for(model, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((2, 3)).astype(np.float32) for _ in model.subgraphs[0].inputs]


def test_partitions_become_delegate_nodes_with_identical_results(demo, resolver_factory, runner):
    plain = Interpreter(model=demo, op_resolver=resolver_factory())
    it = Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate()])
    g = it.primary
    assert g.execution_plan == [5, 2, 6]
    assert [g.nodes[i].op_name for i in g.execution_plan] == ["DELEGATE", "MUL", "DELEGATE"]
    assert [d["op_name"] for d in it._get_ops_details()][5:] == ["DELEGATE", "DELEGATE"]
    first, second = g.nodes[5], g.nodes[6]
    assert (first.params.nodes_to_replace, first.params.input_tensors, first.params.output_tensors) == (
        (0, 1), (0, 1), (3,))
    assert (second.params.nodes_to_replace, second.params.input_tensors, second.params.output_tensors) == (
        (3, 4), (0, 4, 5), (7,))
    assert first.inputs == (0, 1) and second.inputs == (0, 4, 5)
    assert (first.params.partition, second.params.partition) == (0, 1)
    assert first.registration.custom_name == "Test" and first.op_name == "DELEGATE"
    x = inputs_for(demo)
    np.testing.assert_array_equal(runner(it, x)[0], runner(plain, x)[0])


def test_modify_graph_with_delegate_after_allocation(demo, resolver_factory, runner):
    it = Interpreter(model=demo, op_resolver=resolver_factory())
    x = inputs_for(demo)
    before = runner(it, x)[0]
    it.modify_graph_with_delegate(OpsDelegate())
    assert it.primary.execution_plan == [5, 2, 6]
    np.testing.assert_array_equal(runner(it, x)[0], before)


def test_logs_tflite_lines(demo, resolver_factory, caplog):
    with caplog.at_level(logging.INFO, logger="accelsim.delegates.api"):
        Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate()])
    assert [r.getMessage() for r in caplog.records if r.name == "accelsim.delegates.api"] == [
        "Test delegate: 4 nodes delegated out of 5 nodes with 2 partitions.",
        "Replacing 4 out of 5 node(s) with delegate (Test) node, yielding 3 partitions for subgraph 0 (main).",
    ]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "accelsim.delegates.api")


def test_nothing_supported_changes_nothing(demo, resolver_factory, caplog):
    it = Interpreter(model=demo, op_resolver=resolver_factory())
    before = state(it)
    with caplog.at_level(logging.INFO, logger="accelsim.delegates.api"):
        it.modify_graph_with_delegate(OpsDelegate(ops=("CONV_2D",)))
    assert state(it) == before
    assert [r.getMessage() for r in caplog.records if r.name == "accelsim.delegates.api"] == [
        "Test delegate: 0 nodes delegated out of 5 nodes with 0 partitions."]


@pytest.mark.parametrize("opts, partitions", [
    (DelegateOptions(), [(0,), (2, 3, 4), (6, 7)]),
    (DelegateOptions(max_delegated_partitions=1), [(2, 3, 4)]),
    (DelegateOptions(min_nodes_per_partition=2), [(2, 3, 4), (6, 7)]),
    (DelegateOptions(max_delegated_partitions=2, min_nodes_per_partition=3), [(2, 3, 4)]),
    (DelegateOptions(min_nodes_per_partition=4), []),
])
def test_partition_limits(model_builder, resolver_factory, runner, opts, partitions):
    model = model_builder(RUNS, 2, [9])
    plain = Interpreter(model=model, op_resolver=resolver_factory())
    it = Interpreter(model=model, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate(options=opts)])
    g = it.primary
    got = sorted(g.nodes[i].params.nodes_to_replace for i in g.execution_plan if g.nodes[i].delegate is not None)
    assert got == sorted(partitions)
    x = inputs_for(model)
    np.testing.assert_array_equal(runner(it, x)[0], runner(plain, x)[0])


def test_report_explains_dropped_partitions(model_builder, resolver_factory):
    model = model_builder(RUNS, 2, [9])
    opts = DelegateOptions(max_delegated_partitions=2, min_nodes_per_partition=2)
    it = Interpreter(model=model, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate(options=opts)])
    rows = {r["index"]: r for r in delegation_report(it)}
    assert [rows[i]["claimed"] for i in range(8)] == [False, False, True, True, True, False, True, True]
    assert rows[0]["reason"] == ("Test: partition of 1 node(s) dropped by max_delegated_partitions=2 "
                                 "(it ranks 3 by size)")
    assert rows[1]["reason"] == "Test: op MUL unsupported"
    assert rows[2] | {"reasons": None} == {"index": 2, "op": "ADD", "version": 1, "claimed": True, "delegate": "Test",
                                           "partition": 0, "delegate_node": 8, "reason": None, "reasons": None}
    assert rows[6]["partition"] == 1 and rows[6]["delegate_node"] == 9
    opts = DelegateOptions(min_nodes_per_partition=3)
    it = Interpreter(model=model, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate(options=opts)])
    assert delegation_report(it)[6]["reason"] == (
        "Test: partition of 2 node(s) dropped: fewer than min_nodes_per_partition=3")


def test_report_without_delegates(demo, resolver_factory):
    rows = delegation_report(Interpreter(model=demo, op_resolver=resolver_factory()))
    assert [(r["op"], r["claimed"], r["reason"]) for r in rows] == [
        (op, False, "no delegate was applied") for op, _, _ in DEMO]


def test_second_delegate_sees_first_ones_nodes_as_claimed(demo, resolver_factory, runner):
    first = OpsDelegate(ops=("SUB",), name="First")
    second = OpsDelegate(ops=("ADD", "SUB", "MUL"), name="Second")
    it = Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[first, second])
    rows = delegation_report(it)
    assert [r["delegate"] for r in rows] == ["Second", "First", "Second", "Second", "First"]
    assert rows[1]["reasons"] == {"Second": "claimed by an earlier delegate (First)"}
    assert rows[0]["reasons"] == {"First": "op ADD unsupported"}
    assert second.seen == [0, 2, 3]  # First's delegate nodes 5 and 6 are never offered
    x = inputs_for(demo)
    plain = Interpreter(model=demo, op_resolver=resolver_factory())
    np.testing.assert_array_equal(runner(it, x)[0], runner(plain, x)[0])


# -- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize("phase, message", [
    ("initialize", r"Test delegate: initialize raised RuntimeError: cannot start"),
    ("is_node_supported", r"Test delegate: is_node_supported raised on node 2 \(MUL v1\): KeyError"),
    ("create_kernel", r"Test delegate kernel for partition 0 \(nodes \[0, 1\]\): create_kernel\(\) returned object, "
                      r"not a SimpleDelegateKernel"),
    ("init", r"Node number 5 \(DELEGATE\) failed to init .*Test delegate kernel for partition 0 \(nodes \[0, 1\]\) "
             r"failed in init: ValueError: boom in init"),
    ("prepare", r"Test delegate: the graph failed to prepare after delegation; restored the original execution "
                r"plan: Node number 5 \(DELEGATE\) failed to prepare .*partition 0 \(nodes \[0, 1\]\) failed in "
                r"prepare: ValueError: boom in prepare"),
])
@pytest.mark.parametrize("allocated", [False, True])
def test_failures_restore_the_interpreter(demo, resolver_factory, runner, phase, message, allocated):
    it = Interpreter(model=demo, op_resolver=resolver_factory())
    x = inputs_for(demo)
    expected = runner(it, x)[0] if allocated else None
    before = state(it)
    with pytest.raises(DelegateError, match=message):
        it.modify_graph_with_delegate(OpsDelegate(fail=phase))
    assert state(it) == before
    assert it.delegates == []
    assert it.primary.prepared == allocated
    if allocated:  # still invokable without allocate_tensors, with the original plan
        for d, v in zip(it.get_input_details(), x):
            it.set_tensor(d["index"], v)
        it.invoke()
        np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), expected)
    assert runner(it, x)[0].shape == (2, 3)


def test_construction_with_failing_delegate_raises(demo, resolver_factory):
    with pytest.raises(DelegateError, match="Test delegate"):
        Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate(fail="init")])


def test_eval_failure_names_delegate_partition_and_node(demo, resolver_factory):
    it = Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate(fail="eval")])
    it.allocate_tensors()
    with pytest.raises(DelegateKernelError, match=r"Node number 5 \(DELEGATE\) failed to invoke .*Test delegate "
                                                  r"kernel for partition 0 \(nodes \[0, 1\]\) failed in eval: "
                                                  r"ValueError: boom in eval") as info:
        it.invoke()
    assert isinstance(info.value, DelegateError)


def test_kernel_returning_false_fails(demo, resolver_factory):
    class Quiet(RunNodesKernel):
        def eval(self, context, node):
            return False

    class D(OpsDelegate):
        def create_kernel(self):
            return Quiet()

    it = Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[D()])
    it.allocate_tensors()
    with pytest.raises(DelegateError, match=r"partition 0 \(nodes \[0, 1\]\) reported failure in eval"):
        it.invoke()


def test_double_claim_is_rejected(demo, resolver_factory):
    class Greedy(OpsDelegate):
        def select_partitions(self, partitions):
            return Selection((partitions[0], partitions[0]), ())

    it = Interpreter(model=demo, op_resolver=resolver_factory())
    before = state(it)
    with pytest.raises(DelegateError, match=r"Test delegate claims node 0 twice \(in partitions 0 and 1\)"):
        it.modify_graph_with_delegate(Greedy())
    assert state(it) == before


def test_claiming_an_unsupported_node_is_rejected(demo, resolver_factory):
    from accelsim.delegates.partition import NodeSubset

    class Sneaky(OpsDelegate):
        def select_partitions(self, partitions):
            return Selection((NodeSubset(True, (2,), (3, 0), (4,)),), ())

    with pytest.raises(DelegateError, match=r"claims node 2 \(partition 0\), which it did not support"):
        Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[Sneaky()])


def test_select_partitions_must_return_a_selection(demo, resolver_factory):
    class Wrong(OpsDelegate):
        def select_partitions(self, partitions):
            return list(partitions)

    with pytest.raises(DelegateError, match="select_partitions returned list, not a Selection"):
        Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[Wrong()])


@pytest.mark.parametrize("answer", [None, "yes", (1, "x"), (True,)])
def test_is_node_supported_answer_must_be_bool_or_pair(demo, resolver_factory, answer):
    class Odd(OpsDelegate):
        def is_node_supported(self, context, node, registration):
            return answer

    with pytest.raises(DelegateError, match=r"is_node_supported returned .* for node 0; expected a bool"):
        Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[Odd()])


def test_numpy_bool_and_reason_pairs_are_accepted(demo, resolver_factory):
    class NumpyBool(OpsDelegate):
        def is_node_supported(self, context, node, registration):
            return (np.bool_(node.op == "SUB"), "") if node.index < 2 else np.bool_(False)

    it = Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[NumpyBool()])
    rows = delegation_report(it)
    assert [r["claimed"] for r in rows] == [False, True, False, False, False]
    assert rows[0]["reason"] == "Test: op ADD (version 1) not supported by Test"


# -- what the delegate sees ---------------------------------------------------------------


def test_node_view_is_a_read_only_picture():
    q = Quantization((0.5,), (3,))
    tensors = (Tensor("x", "INT8", (1, 4), 0, q, (-1, 4)), Tensor("shape", "INT32", (1,), 1),
               Tensor("y", "INT8", (4,), 0, q), Tensor("z", "FLOAT32", (4,)))
    ops = (make_operator("RESHAPE", (0, 1), (2,)), make_operator("CUSTOM", (2, -1), (3,), version=2,
                                                                  custom_code="Mystery", custom_options=b"\x01"))
    model = Model((Subgraph(tensors, (0,), (3,), ops, "main"),), (b"", np.array([4], np.int32).tobytes()))
    views = {}

    class Look(OpsDelegate):
        def is_node_supported(self, context, node, registration):
            views[node.index] = (node, registration)
            return node.op == "CUSTOM"

    class Atan(RunNodesKernel):
        def prepare(self, context, node):
            pass

        def eval(self, context, node):
            context.tensor(3).data = np.arctan(context.tensor(2).data.astype(np.float32))

    class D(Look):
        def create_kernel(self):
            return Atan()

    it = Interpreter(model=model, experimental_delegates=[D()])
    reshape, reg = views[0]
    assert (reshape.op, reshape.op_name, reshape.version, reshape.custom_name) == ("RESHAPE", "RESHAPE", 1, None)
    assert reg.op_name == "RESHAPE" and reshape.builtin_code == 22
    x, shape = reshape.inputs
    assert (x.type, x.dtype, x.shape, x.shape_signature, x.is_constant) == ("INT8", np.int8, (1, 4), (-1, 4), False)
    assert (x.scales, x.zero_points, x.is_quantized, x.data) == ((0.5,), (3,), True, None)
    assert shape.is_constant and shape.data.tolist() == [4]
    with pytest.raises(ValueError, match="read-only"):
        shape.data[0] = 7
    assert reshape.options.new_shape is None
    custom, _ = views[1]
    assert (custom.op, custom.op_name, custom.custom_name, custom.version) == ("CUSTOM", "Mystery", "Mystery", 2)
    assert custom.inputs[1] is None and custom.input_indices == (2, -1)
    assert custom.custom_options == b"\x01" and custom.outputs[0].type == "FLOAT32"
    with pytest.raises(AttributeError):
        custom.op = "ADD"
    # The delegate runs the custom op the CPU has no kernel for.
    it.allocate_tensors()
    it.set_tensor(0, np.array([[1, 2, 3, 4]], np.int8))
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(3), np.arctan([1, 2, 3, 4]).astype(np.float32))


def test_preserve_all_tensors_disables_node_fusion(demo, resolver_factory, runner):
    it = Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[OpsDelegate()],
                     experimental_preserve_all_tensors=True)
    g = it.primary
    assert [g.nodes[i].params.nodes_to_replace if g.nodes[i].delegate else i for i in g.execution_plan] == [
        (0,), (1,), 2, (3,), (4,)]
    x = inputs_for(demo)
    plain = Interpreter(model=demo, op_resolver=resolver_factory())
    np.testing.assert_array_equal(runner(it, x)[0], runner(plain, x)[0])


def test_resource_tensors_and_control_flow_mark_side_effects(resolver_factory):
    tensors = (Tensor("x", "FLOAT32", (2, 3)), Tensor("var", "RESOURCE", ()), Tensor("y", "FLOAT32", (2, 3)),
               Tensor("z", "FLOAT32", (2, 3)))
    ops = (make_operator("CUSTOM", (1, 0), (2,), custom_code="AssignLike"), make_operator("ADD", (0, 2), (3,)))
    model = Model((Subgraph(tensors, (0,), (3,), ops, "main"),), (b"",))
    resolver = resolver_factory()
    resolver.add_custom("AssignLike", Registration(invoke=lambda ctx, node: None))
    flags = [n.might_have_side_effect for n in describe_plan(Interpreter(model=model, op_resolver=resolver).primary)]
    assert flags == [True, False]


# -- properties ---------------------------------------------------------------------------


@st.composite
def random_graphs(draw):
    """A random ADD/SUB/MUL DAG over two inputs and a constant, with random delegate settings."""
    n = draw(st.integers(1, 9))
    available = [0, 1, 2]  # 0, 1: inputs; 2: a constant
    ops = []
    for i in range(n):
        a, b = draw(st.sampled_from(available)), draw(st.sampled_from(available))
        ops.append((draw(st.sampled_from(["ADD", "SUB", "MUL"])), (a, b), 3 + i))
        available.append(3 + i)
    outputs = sorted(set(draw(st.lists(st.sampled_from(available[3:]), min_size=1, max_size=3))))
    claimed = draw(st.sets(st.integers(0, n - 1)))
    opts = DelegateOptions(draw(st.integers(0, 3)), draw(st.integers(0, 3)))
    return ops, outputs, claimed, opts


def counting_resolver(base, calls):
    resolver = MutableOpResolver()
    for op in ("ADD", "SUB", "MUL"):
        reg = base.find_op(op, 1)

        def invoke(ctx, node, _inner=reg.invoke):
            calls.append(node.index)
            _inner(ctx, node)

        resolver.add_builtin(op, Registration(invoke=invoke, prepare=reg.prepare, init=reg.init, free=reg.free))
    return resolver


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(random_graphs(), st.booleans())
def test_random_graphs_run_every_node_once_with_identical_outputs(model_builder, resolver_factory, runner,
                                                                  case, allocate_first):
    ops, outputs, claimed, opts = case
    model = model_builder(ops, 2, outputs, {2: C})
    x = inputs_for(model, seed=len(ops))
    expected = runner(Interpreter(model=model, op_resolver=resolver_factory()), x)
    calls: list[int] = []
    it = Interpreter(model=model, op_resolver=counting_resolver(resolver_factory(), calls))
    if allocate_first:
        it.allocate_tensors()
    it.modify_graph_with_delegate(OpsDelegate(indices=claimed, options=opts))
    g = it.primary
    g.set_execution_plan(g.execution_plan)  # the runtime's own topological check
    delegated = [g.nodes[i] for i in g.execution_plan if g.nodes[i].delegate is not None]
    replaced = [m for d in delegated for m in d.params.nodes_to_replace]
    assert len(replaced) == len(set(replaced)) and set(replaced) <= claimed
    if opts.max_delegated_partitions > 0:
        assert len(delegated) <= opts.max_delegated_partitions
    assert all(len(d.params.nodes_to_replace) >= opts.min_nodes_per_partition for d in delegated)
    cpu = [i for i in g.execution_plan if g.nodes[i].delegate is None]
    assert sorted(cpu + replaced) == list(range(len(ops)))
    calls.clear()
    got = runner(it, x)
    assert sorted(calls) == list(range(len(ops))), "every original node runs exactly once"
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_prepare_failure_after_resize_names_the_partition(demo, resolver_factory):
    class Once(RunNodesKernel):
        prepared = 0

        def prepare(self, context, node):
            Once.prepared += 1
            if Once.prepared > 1:
                raise ValueError("shape changed")
            super().prepare(context, node)

    class D(OpsDelegate):
        def create_kernel(self):
            return Once()

    it = Interpreter(model=demo, op_resolver=resolver_factory(), experimental_delegates=[D(ops=("MUL",))])
    assert node_view(it.primary.context, 5).op == "DELEGATE"
    assert node_view(it.primary.context, 5).custom_name == "Test"
    with pytest.raises(DelegateKernelError, match=r"Node number 5 \(DELEGATE\) failed to prepare .*Test delegate "
                                                  r"kernel for partition 0 \(nodes \[2\]\) failed in prepare: "
                                                  r"ValueError: shape changed"):
        it.allocate_tensors()


FIXTURE_CASES = [
    ("mobilenet_v2_035_96_int8.tflite", ("CONV_2D", "ADD"), DelegateOptions()),
    ("mobilenet_v2_035_96_float.tflite", ("DEPTHWISE_CONV_2D", "CONV_2D"), DelegateOptions(max_delegated_partitions=3)),
    ("interleaved_int8.tflite", ("CONV_2D", "TANH", "ADD", "MUL", "PAD"), DelegateOptions(min_nodes_per_partition=2)),
    ("dilated_cnn_int8.tflite", ("QUANTIZE", "CONV_2D", "RESHAPE", "SOFTMAX"), DelegateOptions()),
    ("lstm_gru_float.tflite", ("FULLY_CONNECTED", "RESHAPE", "STRIDED_SLICE"), DelegateOptions()),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, ops, opts", FIXTURE_CASES)
def test_fixture_models_delegated_to_their_own_kernels(name, ops, opts):
    path = FIXTURES / name
    model = load_model(path)
    plain = Interpreter(model=model)
    x = random_inputs(plain.get_input_details(), seed=3)
    expected = run_ours(path.read_bytes(), x)
    it = Interpreter(model=model, experimental_delegates=[OpsDelegate(ops=ops, options=opts)])
    rows = delegation_report(it)
    claimed = [r for r in rows if r["claimed"]]
    assert claimed and all(r["op"] in ops for r in claimed)
    parts = {r["partition"] for r in claimed}
    if opts.max_delegated_partitions:
        assert len(parts) <= opts.max_delegated_partitions
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), x):
        it.set_tensor(d["index"], v)
    it.invoke()
    for d, want in zip(it.get_output_details(), expected):
        np.testing.assert_array_equal(it.get_tensor(d["index"]), want)
