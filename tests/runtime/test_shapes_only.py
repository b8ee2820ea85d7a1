"""Interpreter(shapes_only=True): every node's shapes, checks and work as a full prepare gives them, no invoke."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import CUSTOM_OP_FIXTURES, FIXTURES, Spec, const, single_op_model

from accelsim.ops import using_ops
from accelsim.runtime import Interpreter
from accelsim.runtime.errors import InterpreterStateError, KernelError
from accelsim.runtime.work import node_work

MODELS = sorted(p.name for p in FIXTURES.glob("*.tflite"))


def _sized(interpreter: Interpreter) -> list[tuple]:
    """(subgraph, node, output shapes, work) of every planned node."""
    out = []
    for s in range(interpreter.num_subgraphs()):
        graph = interpreter.subgraph(s)
        for ni in graph.execution_plan:
            node = graph.nodes[ni]
            shapes = [graph.tensors[t].shape for t in node.outputs if t >= 0]
            out.append((s, ni, shapes, node_work(graph.context, node)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_shapes_and_work_equal_a_full_prepare_on_every_fixture(name):
    # custom-op fixtures prepare with their op module's kernels
    module = CUSTOM_OP_FIXTURES.get(Path(name).stem)
    with using_ops([module] if module else []):
        full = Interpreter(model_path=FIXTURES / name)
        full.allocate_tensors()
        sized = Interpreter(model_path=FIXTURES / name, shapes_only=True)
        sized.allocate_tensors()
        assert _sized(sized) == _sized(full)


def test_a_shapes_only_interpreter_refuses_to_invoke():
    it = Interpreter(model_path=FIXTURES / "mobilenet_v2_035_96_int8.tflite", shapes_only=True)
    it.allocate_tensors()
    with pytest.raises(InterpreterStateError, match="shapes_only=True"):
        it.invoke()


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"])
def test_shapes_only_still_checks_types(op):
    """A float input with int8 weights fails in prepare whether or not numerics will run (int16 for
    FULLY_CONNECTED, whose int8/int4 hybrid path is implemented, issue 33)."""
    shapes = {"CONV_2D": ((1, 2, 2, 3), (2, 1, 1, 3), (1, 2, 2, 2)),
              "DEPTHWISE_CONV_2D": ((1, 2, 2, 3), (1, 1, 1, 3), (1, 2, 2, 3)),
              "FULLY_CONNECTED": ((1, 3), (2, 3), (1, 2))}[op]
    x, w, y = shapes
    options = {} if op == "FULLY_CONNECTED" else {"stride_w": 1, "stride_h": 1}
    wtype = (np.int16, "INT16") if op == "FULLY_CONNECTED" else (np.int8, "INT8")
    model = single_op_model(op, [Spec(x), const(np.zeros(w, wtype[0]), wtype[1], scale=0.5, zero_point=0)], [Spec(y)],
                            **options)
    for shapes_only in (False, True):
        it = Interpreter(model_content=model, shapes_only=shapes_only)
        with pytest.raises(KernelError, match="weights"):
            it.allocate_tensors()
