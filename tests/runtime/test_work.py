"""Work reported by the kernels themselves: per-op counts by hand, control-flow trips, the no-hook error."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
from support import CUSTOM_OP_FIXTURES, FIXTURES, Graph, build, counter_loop_model

from accelsim.ops import using_ops
from accelsim.runtime import BuiltinOpResolver, Interpreter, Registration
from accelsim.runtime.errors import WorkError
from accelsim.runtime.ir import make_operator, numpy_dtype
from accelsim.runtime.work import Gemm, LoopTrips, NodeWork, control_nodes, node_work, resolve_trips, subgraph_work

RESOLVER = BuiltinOpResolver()


@dataclass
class _Tensor:
    """The RuntimeTensor attributes the estimators read."""

    shape: tuple[int, ...]
    type: str = "INT8"
    is_constant: bool = False

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.type)


def W(*shape, type="INT8"):
    return _Tensor(shape, type, is_constant=True)


def _work(op: str, ins: list[_Tensor], outs: list[_Tensor], version: int = 1, **options) -> NodeWork:
    """The work the registered kernel of (op, version) reports for a node over these tensors."""
    operator = make_operator(op, range(len(ins)), range(len(ins), len(ins) + len(outs)), version=version, **options)
    node = SimpleNamespace(index=0, operator=operator, options=operator.options, inputs=operator.inputs,
                           outputs=operator.outputs, registration=RESOLVER.find_op(op, version), op_name=op)
    return node_work(_Context([*ins, *outs]), node)


@dataclass
class _Context:
    """What work hooks read of a Context: tensors by index, a node's inputs and outputs."""

    tensors: list[_Tensor]
    subgraph_index: int = 0

    def input(self, node, i: int) -> _Tensor | None:
        return self.tensors[node.inputs[i]] if i < len(node.inputs) and node.inputs[i] >= 0 else None

    def output(self, node, i: int) -> _Tensor:
        return self.tensors[node.outputs[i]]


# -- per op, by hand ------------------------------------------------------------------------------


@pytest.mark.parametrize("op, ins, outs, options, kind, macs", [
    ("TRANSPOSE_CONV", [W(4, type="INT32"), W(8, 3, 3, 16), _Tensor((1, 5, 5, 16))], [_Tensor((1, 10, 10, 8))],
     {"stride_h": 2, "stride_w": 2}, "gemm", 5 * 5 * 16 * 9 * 8),
    ("BATCH_MATMUL", [_Tensor((2, 4, 6)), _Tensor((2, 6, 5))], [_Tensor((2, 4, 5))], {}, "gemm", 2 * 4 * 6 * 5),
    ("BATCH_MATMUL", [_Tensor((2, 6, 4)), _Tensor((6, 5))], [_Tensor((2, 4, 5))], {"adj_x": True}, "gemm",
     2 * 4 * 6 * 5),
    ("AVERAGE_POOL_2D", [_Tensor((1, 8, 8, 4))], [_Tensor((1, 4, 4, 4))],
     {"filter_height": 2, "filter_width": 2, "stride_h": 2, "stride_w": 2}, "window", 64 * 4),
    ("MAX_POOL_2D", [_Tensor((1, 8, 8, 4))], [_Tensor((1, 6, 6, 4))], {"filter_height": 3, "filter_width": 3},
     "window", 144 * 9),
    ("RESHAPE", [_Tensor((1, 2, 3)), W(2, type="INT32")], [_Tensor((6, 1))], {}, "move", 0),
    ("CONCATENATION", [_Tensor((1, 2, 2)), _Tensor((1, 2, 3))], [_Tensor((1, 2, 5))], {"axis": 2}, "move", 0),
    ("PAD", [_Tensor((1, 4, 4, 2)), W(4, 2, type="INT32")], [_Tensor((1, 6, 6, 2))], {}, "move", 0),
    ("RESIZE_BILINEAR", [_Tensor((1, 4, 4, 2)), W(2, type="INT32")], [_Tensor((1, 8, 8, 2))], {}, "elementwise",
     4 * 128),
    ("QUANTIZE", [_Tensor((1, 10), "FLOAT32")], [_Tensor((1, 10))], {}, "elementwise", 10),
    ("DEQUANTIZE", [_Tensor((1, 10))], [_Tensor((1, 10), "FLOAT32")], {}, "elementwise", 10),
    ("LOGISTIC", [_Tensor((3, 7))], [_Tensor((3, 7))], {}, "lookup", 21),
    ("LOGISTIC", [_Tensor((3, 7), "FLOAT32")], [_Tensor((3, 7), "FLOAT32")], {}, "elementwise", 21),
    ("SUM", [_Tensor((2, 3, 4)), W(1, type="INT32")], [_Tensor((2, 4))], {}, "reduce", 24),
    ("SOFTMAX", [_Tensor((2, 10), "FLOAT32")], [_Tensor((2, 10), "FLOAT32")], {}, "reduce", 3 * 20),
    ("SPLIT", [W(1, type="INT32"), _Tensor((4, 6))], [_Tensor((4, 3)), _Tensor((4, 3))], {"num_splits": 2},
     "move", 0),
    ("GATHER", [_Tensor((10, 4), "FLOAT32"), _Tensor((3,), "INT32")], [_Tensor((3, 4), "FLOAT32")], {}, "move", 0),
    ("FLOOR_DIV", [_Tensor((5,), "FLOAT32"), _Tensor((5,), "FLOAT32")], [_Tensor((5,), "FLOAT32")], {},
     "elementwise", 5),
])
def test_work_per_op(op, ins, outs, options, kind, macs):
    work = _work(op, ins, outs, **options)
    assert (work.op, work.kind, work.macs, work.activation_ops) == (op, kind, macs, 0)
    nbytes = [math.prod(t.shape) * t.dtype.itemsize for t in ins]
    assert work.reads == tuple(nbytes)
    assert work.weight_bytes == sum(n for t, n in zip(ins, nbytes) if t.is_constant)
    assert work.input_bytes == sum(n for t, n in zip(ins, nbytes) if not t.is_constant)
    assert work.output_bytes == sum(work.writes) == sum(math.prod(t.shape) * t.dtype.itemsize for t in outs)


def test_softmax_records_its_rows_along_the_last_axis_and_other_ops_none():
    softmax = _work("SOFTMAX", [_Tensor((1, 4, 8, 8))], [_Tensor((1, 4, 8, 8))])
    log_softmax = _work("LOG_SOFTMAX", [_Tensor((3, 1000))], [_Tensor((3, 1000))], version=2)
    assert (softmax.rows, softmax.macs, log_softmax.rows) == (4 * 8, 3 * 256, 3)
    assert _work("SUM", [_Tensor((2, 3, 4)), W(1, type="INT32")], [_Tensor((2, 4))]).rows == 0


def test_every_builtin_registration_reports_its_work():
    missing = sorted({reg.op_name for reg in RESOLVER._builtins.values() if reg.work is None})
    assert missing == []


def test_a_constant_dequantized_at_prepare_costs_nothing_per_inference():
    fp16 = _Tensor((4, 8), "FLOAT16", is_constant=True)
    work = _work("DEQUANTIZE", [fp16], [_Tensor((4, 8), "FLOAT32")], version=3)
    assert (work.kind, work.macs, work.bytes_moved, work.elements) == ("move", 0, 0, 32)


def test_conv_with_fused_relu6_counts_the_activation_in_its_own_class():
    # 1x8x8x3 -> 1x4x4x16, 3x3 stride 2 SAME, RELU6 (ActivationFunctionType 3), int8 filters and int32 bias.
    work = _work("CONV_2D", [_Tensor((1, 8, 8, 3)), W(16, 3, 3, 3), W(16, type="INT32")], [_Tensor((1, 4, 4, 16))],
                 version=3, stride_h=2, stride_w=2, padding=0, fused_activation_function=3)
    assert (work.kind, work.macs, work.activation_ops) == ("gemm", 16 * 16 * 27, 16 * 16)
    assert work.total_ops == 16 * 16 * 27 + 16 * 16
    assert work.gemm == Gemm(16, 27, 16) and (work.conv.stride_h, work.conv.out_h, work.conv.in_c) == (2, 4, 3)
    assert (work.weight_bytes, work.input_bytes, work.output_bytes) == (16 * 27 + 16 * 4, 8 * 8 * 3, 16 * 16)
    plain = _work("CONV_2D", [_Tensor((1, 8, 8, 3)), W(16, 3, 3, 3)], [_Tensor((1, 4, 4, 16))], version=3,
                  stride_h=2, stride_w=2)
    assert plain.activation_ops == 0


def test_depthwise_fully_connected_and_elementwise_with_activation():
    dw = _work("DEPTHWISE_CONV_2D", [_Tensor((1, 6, 6, 8)), W(1, 3, 3, 8)], [_Tensor((1, 4, 4, 8))], version=3)
    assert (dw.kind, dw.macs, dw.gemm, dw.conv.depthwise) == ("depthwise", 4 * 4 * 8 * 9, None, True)
    fc = _work("FULLY_CONNECTED", [_Tensor((3, 20), "FLOAT32"), W(7, 20, type="FLOAT32"), W(7, type="FLOAT32")],
               [_Tensor((3, 7), "FLOAT32")], fused_activation_function=1)
    assert (fc.kind, fc.gemm, fc.macs, fc.activation_ops) == ("gemm", Gemm(3, 20, 7), 420, 21)
    assert fc.weight_bytes == (7 * 20 + 7) * 4 and fc.dtype == "float32"
    add = _work("ADD", [_Tensor((2, 5)), _Tensor((2, 5))], [_Tensor((2, 5))], version=2, fused_activation_function=1)
    assert (add.kind, add.macs, add.activation_ops) == ("elementwise", 10, 10)


def test_gemm_views_of_transpose_conv_and_batch_matmul():
    work = _work("TRANSPOSE_CONV", [W(4, type="INT32"), W(8, 3, 3, 16), _Tensor((1, 5, 5, 16))],
                 [_Tensor((1, 10, 10, 8))], stride_h=2, stride_w=2)
    assert work.gemm == Gemm(25, 16, 72) and work.conv.transposed and work.dtype == "int8"
    shared = _work("BATCH_MATMUL", [_Tensor((2, 6, 4)), _Tensor((6, 5))], [_Tensor((2, 4, 5))], adj_x=True)
    assert shared.gemm == Gemm(8, 6, 5)  # one RHS for the batch: one tall GEMM
    batched = _work("BATCH_MATMUL", [_Tensor((2, 4, 6)), _Tensor((2, 6, 5))], [_Tensor((2, 4, 5))])
    assert batched.gemm == Gemm(4, 6, 5, batch=2)


def test_mobilenet_nodes_report_their_geometry_and_bytes():
    it = Interpreter(model_path=str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"))
    it.allocate_tensors()
    graph = it.primary
    works = subgraph_work(it, 0)
    conv = works[0]  # 96x96x3 -> 48x48x16, 3x3 stride 2, SAME, RELU6
    assert (conv.op, conv.dtype, conv.kind, conv.macs) == ("CONV_2D", "int8", "gemm", 48 * 48 * 16 * 27)
    assert conv.activation_ops == 48 * 48 * 16
    mean = next(w for w in works if w.op == "MEAN")
    assert (mean.kind, mean.macs, mean.elements) == ("reduce", 3 * 3 * 1280, 1280)
    for ni, work in zip(graph.execution_plan, works):
        node = graph.nodes[ni]
        assert work.weight_bytes + work.input_bytes == sum(graph.tensors[i].nbytes for i in node.inputs if i >= 0)
        assert work.output_bytes == sum(graph.tensors[i].nbytes for i in node.outputs)


# -- every op is modelled -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.tflite")), ids=lambda p: p.stem)
def test_every_fixture_node_in_every_subgraph_reports_its_work(path):
    module = CUSTOM_OP_FIXTURES.get(path.stem)
    with using_ops([module] if module else []):  # custom-op fixtures with their op module's kernels
        it = Interpreter(model_path=str(path))
        it.allocate_tensors()
    for index in range(it.num_subgraphs()):
        for work in subgraph_work(it, index):
            assert work.kind in ("gemm", "depthwise", "window", "reduce", "elementwise", "lookup", "move", "control")
            for loop in control_nodes(resolve_trips(work, LoopTrips())):
                assert loop.trips_from in ("constant", "shape")  # every fixture's loops are bounded by the model


def test_an_op_without_a_work_hook_is_an_error_naming_it_and_its_node():
    from custom_op_atan import ATAN, build_model

    resolver = BuiltinOpResolver()
    resolver.add_custom("Atan", Registration(init=ATAN.init, prepare=ATAN.prepare, invoke=ATAN.invoke))
    it = Interpreter(model_content=build_model(), op_resolver=resolver)
    it.allocate_tensors()
    it.invoke()  # numerics need no work model
    with pytest.raises(WorkError, match=r"subgraph 0 node 1 \(Atan\) has no work model: its Registration has no "
                                        r"work hook.*Registration\(work=\.\.\.\)"):
        subgraph_work(it, 0)


def test_a_work_hook_must_return_a_node_work():
    from custom_op_atan import ATAN, build_model

    resolver = BuiltinOpResolver()
    resolver.add_custom("Atan", Registration(prepare=ATAN.prepare, invoke=ATAN.invoke, work=lambda ctx, node: 12))
    it = Interpreter(model_content=build_model(), op_resolver=resolver)
    it.allocate_tensors()
    with pytest.raises(WorkError, match=r"subgraph 0 node 1 \(Atan\): the work hook returned int, not a NodeWork"):
        subgraph_work(it, 0)


# -- control flow ---------------------------------------------------------------------------------


def _while_work(model: bytes, loops: LoopTrips | None = None, invoke_with: int | None = None) -> NodeWork:
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    if invoke_with is not None:
        it.set_tensor(it.get_input_details()[0]["index"], np.array(invoke_with, np.int32))
        it.invoke()
    (work,) = [w for w in subgraph_work(it, 0) if w.kind == "control"]
    return resolve_trips(work, loops or LoopTrips())


@pytest.mark.parametrize("start, limit, step, compare, trips", [
    (0, 5, 1, "LESS", 5), (0, 10, 3, "LESS", 4), (0, 10, 3, "LESS_EQUAL", 4), (0, 9, 3, "LESS_EQUAL", 4),
    (10, 0, -1, "GREATER", 10), (10, 0, -2, "GREATER_EQUAL", 6), (0, 10, 2, "NOT_EQUAL", 5), (7, 5, 1, "LESS", 0),
])
def test_while_trips_folded_from_constant_start_step_and_bound(start, limit, step, compare, trips):
    work = _while_work(counter_loop_model(start, limit, step, compare))
    assert (work.trips, work.trips_from, work.where) == (trips, "constant", "0:0")
    assert [w.op for w in work.body] == [compare, "ADD", "MUL"] and [w.op for w in work.once] == [compare]
    assert work.total_ops == trips * (1 + 1 + 6) + 1


def test_while_trips_folded_from_an_input_shape():
    work = _while_work(counter_loop_model(0, "shape", x_shape=(6, 3)))
    assert (work.trips, work.trips_from) == (6, "shape")


def test_while_trips_counted_by_the_run():
    model = counter_loop_model(None, 5)
    assert _while_work(model, invoke_with=3).trips == 2
    assert _while_work(model, invoke_with=3).trips_from == "run"
    assert _while_work(model, LoopTrips(nodes={"0:0": 7}), invoke_with=3).trips_from == "override"


def test_while_trips_unknown_without_a_run_need_an_override_or_a_default():
    model = counter_loop_model(None, 5)  # the counter starts at a model input
    with pytest.raises(WorkError, match=r"subgraph 0 node 0 \(WHILE\): the trip count is unknown .* set it for "
                                        r"node '0:0' or a default \(LoopTrips\)"):
        _while_work(model)
    assert (_while_work(model, LoopTrips(default_trips=7)).trips, "default") == (7, "default")
    work = _while_work(model, LoopTrips(default_trips=7, nodes={"0:0": 3}))
    assert (work.trips, work.trips_from) == (3, "override")


def test_while_with_an_endless_or_non_counter_bound_is_unknown():
    default = LoopTrips(default_trips=2)
    assert _while_work(counter_loop_model(0, 5, step=-1), default).trips_from == "default"
    assert _while_work(counter_loop_model(0, 5, step=2, compare="NOT_EQUAL"), default).trips_from == "default"


def _if_model(condition: bool | None) -> bytes:
    """IF(c, x): then = x + x + x (two ADDs), else = x * x; c a constant, or a model input when None."""
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x, out = main.tensor((4,)), main.tensor((4,))
    c = main.tensor((), "BOOL") if condition is None else main.const(np.bool_(condition))
    main.op("IF", [c, x], [out], then_subgraph_index=1, else_subgraph_index=2)
    then, other = Graph(buffers), Graph(buffers)
    a, a2, a3 = then.tensor((4,)), then.tensor((4,)), then.tensor((4,))
    then.op("ADD", [a, a], [a2])
    then.op("ADD", [a2, a], [a3])
    b, b2 = other.tensor((4,)), other.tensor((4,))
    other.op("MUL", [b, b], [b2])
    inputs = [c, x] if condition is None else [x]
    return build((main, inputs, [out]), (then, [a], [a3]), (other, [b], [b2]))


def _if_work(model: bytes, invoke_with: bool | None = None) -> NodeWork:
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    if invoke_with is not None:
        it.set_tensor(it.get_input_details()[0]["index"], np.array(invoke_with))
        it.invoke()
    (work,) = subgraph_work(it, 0)
    return work


def test_if_reports_the_branch_it_ran_or_a_constant_picks_or_the_costlier():
    run = _if_work(_if_model(None), invoke_with=False)
    assert ([w.op for w in run.body], run.trips, run.trips_from) == (["MUL"], 1, "run")
    assert [w.op for w in _if_work(_if_model(False)).body] == ["MUL"]
    assert _if_work(_if_model(False)).trips_from == "constant"
    unknown = _if_work(_if_model(None))
    assert ([w.op for w in unknown.body], unknown.trips_from) == (["ADD", "ADD"], "branch")


def test_lstm_gru_loops_run_the_sequence_length():
    it = Interpreter(model_path=str(FIXTURES / "lstm_gru_float.tflite"))
    it.allocate_tensors()
    works = subgraph_work(it, 0)
    loops = [w for w in works if w.kind == "control"]
    assert [(w.where, w.trips, w.trips_from) for w in loops] == [("0:1", 10, "constant"), ("0:2", 10, "constant")]
    body_fc = [w for w in loops[0].body if w.op == "FULLY_CONNECTED"]
    assert [w.gemm for w in body_fc] == [Gemm(1, 16, 64), Gemm(1, 8, 64)]  # recurrent and input kernels, per step
    it.set_tensor(it.get_input_details()[0]["index"], np.zeros((1, 10, 8), np.float32))
    it.invoke()
    assert [(w.trips, w.trips_from) for w in subgraph_work(it, 0) if w.kind == "control"] == [(10, "run")] * 2
