"""partition_graph against real TFLite: LiteRT's XNNPACK delegate nodes are TFLite's partitions.

XNNPACK claims float ADD/SUB/MUL (and resource-variable ops) but not SIGN, ZEROS_LIKE or
hash tables, and delegates every partition it can; so the DELEGATE nodes LiteRT lists, in
order, with their input and output tensors, are the delegated subsets graph_info.cc made.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.delegates.partition import GraphNode, might_have_side_effect, partition_graph
from accelsim.runtime.ir import TENSOR_TYPES, Model, Subgraph, Tensor, make_operator
from accelsim.runtime.write import save_model

XNNPACK_OPS = {"ADD", "SUB", "MUL", "VAR_HANDLE", "ASSIGN_VARIABLE", "READ_VARIABLE"}


def litert_delegate_nodes(model: Model) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    it = LiteRT(model_content=save_model(model))
    it.allocate_tensors()
    return [(tuple(int(i) for i in d["inputs"]), tuple(int(o) for o in d["outputs"]))
            for d in it._get_ops_details() if d["op_name"] == "DELEGATE"]


def our_delegated_subsets(nodes: list[GraphNode], model: Model) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    sg = model.subgraphs[0]
    supported = [i for i, op in enumerate(sg.operators) if op.op in XNNPACK_OPS]
    return [(s.input_tensors, s.output_tensors) for s in partition_graph(nodes, sg.outputs, supported) if s.delegated]


@st.composite
def mixed_graphs(draw):
    """Random DAGs of XNNPACK-supported binary ops and unsupported unary ones, over two inputs and a constant."""
    n = draw(st.integers(1, 10))
    available = [0, 1, 2]
    ops = []
    for i in range(n):
        op = draw(st.sampled_from(["ADD", "SUB", "MUL", "SIGN", "ZEROS_LIKE"]))
        arity = 2 if op in ("ADD", "SUB", "MUL") else 1
        ops.append((op, tuple(draw(st.sampled_from(available)) for _ in range(arity)), 3 + i))
        available.append(3 + i)
    outputs = sorted(set(draw(st.lists(st.sampled_from(available[3:]), min_size=1, max_size=3))))
    return ops, outputs


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(mixed_graphs())
def test_random_graphs_partition_like_litert(model_builder, case):
    ops, outputs = case
    model = model_builder(ops, 2, outputs, {2: np.ones(6, np.float32)})
    nodes = [GraphNode(i, op.inputs, op.outputs) for i, op in enumerate(model.subgraphs[0].operators)]
    assert our_delegated_subsets(nodes, model) == litert_delegate_nodes(model)


def test_side_effect_chain_matches_litert():
    # VAR_HANDLE, HASHTABLE, HASHTABLE_SIZE and ASSIGN_VARIABLE touch resources, so they keep
    # their order: ASSIGN_VARIABLE cannot join the first partition although it is ready.
    shape = (2, 3)
    tensors = (Tensor("x", "FLOAT32", shape), Tensor("var", "RESOURCE", ()), Tensor("table", "RESOURCE", ()),
               Tensor("size", "INT64", (1,)), Tensor("y", "FLOAT32", shape))
    ops = (
        make_operator("VAR_HANDLE", (), (1,), shared_name="v"),
        make_operator("HASHTABLE", (), (2,), table_id=1, key_dtype=TENSOR_TYPES["INT64"],
                      value_dtype=TENSOR_TYPES["STRING"]),
        make_operator("HASHTABLE_SIZE", (2,), (3,)),
        make_operator("ASSIGN_VARIABLE", (1, 0), ()),
        make_operator("ADD", (0, 0), (4,)),
    )
    model = Model((Subgraph(tensors, (0,), (4, 3), ops, "main"),), (b"",))
    nodes = [GraphNode(i, op.inputs, op.outputs, might_have_side_effect(op.op, [tensors[t].type for t in
                                                                                 (*op.inputs, *op.outputs)]))
             for i, op in enumerate(ops)]
    assert [n.might_have_side_effect for n in nodes] == [True, True, True, True, False]
    ours = our_delegated_subsets(nodes, model)
    assert ours == litert_delegate_nodes(model) == [((0,), (1, 4)), ((0, 1), ())]
    assert [s.nodes for s in partition_graph(nodes, (4, 3), [0, 3, 4])] == [(0, 4), (1, 2), (3,)]

