"""partition_graph and select_partitions on plain graph descriptions (TFLite's graph_info_test cases)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.delegates.partition import GraphNode, NodeSubset, partition_graph, select_partitions, side_effect_edges


def graph(*nodes, offset: int = 0) -> list[GraphNode]:
    """GraphNodes from (inputs, outputs[, side_effect]) tuples, numbered from `offset`."""
    out = []
    for i, spec in enumerate(nodes):
        ins, outs, *rest = spec
        out.append(GraphNode(offset + i, tuple(ins), tuple(outs), bool(rest and rest[0])))
    return out


def P(nodes, ins, outs):  # noqa: N802 - reads like TFLite's kTfPartition
    return NodeSubset(True, tuple(nodes), tuple(ins), tuple(outs))


def N(nodes, ins, outs):  # noqa: N802 - kTfNonPartition
    return NodeSubset(False, tuple(nodes), tuple(ins), tuple(outs))


# -- graph_info_test.cc cases -------------------------------------------------------------


def test_empty_graph_has_no_subsets():
    assert partition_graph([], [], []) == []
    assert partition_graph([], [0], []) == []  # a tensor that is both input and output


def test_single_node_not_partitioned():
    assert partition_graph(graph(([0], [1])), [1], []) == [N([0], [0], [1])]


def test_single_node_with_offset_keeps_original_index():
    assert partition_graph(graph(([0], [1]), offset=17), [1], []) == [N([17], [0], [1])]


def test_node_without_inputs_fully_partitioned():
    assert partition_graph(graph(([], [0])), [0], [0]) == [P([0], [], [0])]


def test_chain_second_node_partitioned():
    g = graph(([0], [1]), ([1], [2]))
    assert partition_graph(g, [2], [1]) == [N([0], [0], [1]), P([1], [1], [2])]
    assert partition_graph(graph(([0], [1]), ([1], [2]), offset=17), [2], [18]) == [
        N([17], [0], [1]), P([18], [1], [2])]


def test_chain_fully_partitioned_is_one_subset():
    assert partition_graph(graph(([0], [1]), ([1], [2])), [2], [0, 1]) == [P([0, 1], [0], [2])]


def test_dependency_through_cpu_node_splits_partitions():
    g = graph(([0], [1]), ([1], [2]), ([1, 2], [3]))
    assert partition_graph(g, [3], [0, 2]) == [P([0], [0], [1]), N([1], [1], [2]), P([2], [1, 2], [3])]


def test_greedy_merges_independent_successor():
    g = graph(([0], [1]), ([1], [2]), ([1], [3]))
    assert partition_graph(g, [2, 3], [0, 2]) == [P([0, 2], [0], [1, 3]), N([1], [1], [2])]


def test_non_greedy_keeps_plan_order():
    g = graph(([0], [1]), ([1], [2]), ([1], [3]))
    assert partition_graph(g, [2, 3], [0, 2], greedy=False) == [
        P([0], [0], [1]), N([1], [1], [2]), P([2], [1], [3])]


COMPLEX = graph(([0], [1]), ([1], [2, 5]), ([2], [3]), ([3], [4]), ([5], [6]), ([6], [7]))


def test_complex_greedily():
    assert partition_graph(COMPLEX, [4, 7], [0, 1, 4, 5]) == [P([0, 1, 4, 5], [0], [2, 7]), N([2, 3], [2], [4])]


def test_complex_non_greedily():
    assert partition_graph(COMPLEX, [4, 7], [0, 1, 4, 5], greedy=False) == [
        P([0, 1], [0], [2, 5]), N([2, 3], [2], [4]), P([4, 5], [5], [7])]


def test_side_effect_nodes_keep_their_order():
    # Nodes 0, 1, 3, 4 touch a resource: 3 and 4 must wait for 1, even though they are ready.
    g = graph(([0], [1], True), ([1], [2], True), ([2], [3]), ([1, 3], [], True), ([1], [4], True))
    assert side_effect_edges(g) == [(0, 1), (1, 3), (3, 4)]
    assert partition_graph(g, [4], [0, 1, 3, 4]) == [
        P([0, 1], [0], [1, 2]), N([2], [2], [3]), P([3, 4], [1, 3], [4])]


def test_without_side_effects_the_greedy_sweep_reorders():
    g = graph(([0], [1]), ([1], [2]), ([2], [3]), ([1, 3], []), ([1], [4]))
    assert partition_graph(g, [4], [0, 1, 3, 4]) == [
        P([0, 1, 4], [0], [1, 2, 4]), N([2], [2], [3]), P([3], [1, 3], [])]


def test_external_control_edges_replace_side_effect_chain():
    g = graph(([0], [1]), ([1], [2]), ([2], [3]), ([1, 3], []), ([1], [4]))
    edges = [(0, 1), (1, 3), (3, 4)]
    assert partition_graph(g, [4], [0, 1, 3, 4], control_edges=edges) == [
        P([0, 1], [0], [1, 2]), N([2], [2], [3]), P([3, 4], [1, 3], [4])]


def test_non_greedy_ignores_side_effect_chain_because_order_is_kept():
    g = graph(([0], [1], True), ([0], [2]), ([1], [3], True))
    assert partition_graph(g, [2, 3], [0, 2], greedy=False) == [
        P([0], [0], [1]), N([1], [0], [2]), P([2], [1], [3])]


def test_disable_node_fusion_gives_one_node_per_subset():
    g = graph(([0], [1]), ([1], [2]), ([2], [3]))
    assert partition_graph(g, [3], [0, 1, 2], disable_node_fusion=True) == [
        P([0], [0], [1]), P([1], [1], [2]), P([2], [2], [3])]


def test_optional_inputs_and_constants():
    # Tensor 5 is a constant (no producer): it is an input of the subset that reads it.
    g = graph(([0, -1, 5], [1]), ([1, 5], [2]))
    assert partition_graph(g, [2], [1]) == [N([0], [0, 5], [1]), P([1], [1, 5], [2])]


def test_graph_output_read_inside_subset_is_still_an_output():
    g = graph(([0], [1]), ([1], [2]))
    assert partition_graph(g, [1, 2], [0, 1]) == [P([0, 1], [0], [1, 2])]


def test_the_documented_six_node_example():
    # Delegating {2, 3}: node 4 does not depend on them, so it joins the first CPU subset.
    g = graph(([0], [1]), ([1], [2]), ([2], [3]), ([3], [4]), ([1], [5]), ([4, 5], [6]))
    subsets = partition_graph(g, [6], [2, 3])
    assert [(s.delegated, s.nodes) for s in subsets] == [(False, (0, 1, 4)), (True, (2, 3)), (False, (5,))]
    assert subsets[1] == P([2, 3], [2], [4])


def test_rejects_nodes_not_in_plan():
    with pytest.raises(ValueError, match=r"nodes to partition \[1\] are not in the execution plan"):
        partition_graph(graph(([0], [1])), [1], [1])


@pytest.mark.parametrize("edge", [(-1, 0), (0, -1), (2, 0), (0, 2)])
def test_rejects_control_edges_out_of_range(edge):
    with pytest.raises(ValueError, match="control edges"):
        partition_graph(graph(([0], [1]), ([1], [2])), [2], [0], control_edges=[edge])


def test_rejects_unschedulable_nodes():
    with pytest.raises(ValueError, match=r"nodes \[1\] can never be scheduled"):
        partition_graph(graph(([0], [2]), ([1], [3])), [2], [0, 1], control_edges=[(1, 1)])


# -- selection (delegates/utils_test.cc) --------------------------------------------------

PARTS = [P([1], [], []), P([0, 3, 7, 8], [], []), P([2, 4, 9], [], []), P([5, 6], [], [])]


def test_select_largest_partition():
    sel = select_partitions(PARTS, 1, 0)
    assert [p.nodes for p in sel.chosen] == [(0, 3, 7, 8)]
    assert {p.nodes: why for p, why in sel.dropped}[(2, 4, 9)].startswith(
        "partition of 3 node(s) dropped by max_delegated_partitions=1 (it ranks 2 by size)")


def test_select_requires_min_nodes():
    sel = select_partitions(PARTS, 1, 5)
    assert sel.chosen == ()
    assert "fewer than min_nodes_per_partition=5" in dict((p.nodes, w) for p, w in sel.dropped)[(0, 3, 7, 8)]


def test_select_many_with_min_nodes():
    sel = select_partitions(PARTS, 10, 3)
    assert [p.nodes for p in sel.chosen] == [(0, 3, 7, 8), (2, 4, 9)]
    assert sorted(len(p.nodes) for p, _ in sel.dropped) == [1, 2]


def test_select_unlimited_keeps_all_largest_first_ties_stable():
    parts = [P([0], [], []), P([1, 2], [], []), P([3], [], []), P([4, 5], [], [])]
    sel = select_partitions(parts, 0, 0)
    assert [p.nodes for p in sel.chosen] == [(1, 2), (4, 5), (0,), (3,)]
    assert sel.dropped == ()


# -- properties on random DAGs ------------------------------------------------------------


@st.composite
def dags(draw):
    """A random plan: node i reads 1-3 tensors produced earlier (or graph inputs 0, 1) and writes 1-2."""
    n = draw(st.integers(1, 12))
    available = [0, 1]
    nodes = []
    next_tensor = 2
    for i in range(n):
        ins = draw(st.lists(st.sampled_from(available), min_size=1, max_size=3))
        outs = list(range(next_tensor, next_tensor + draw(st.integers(1, 2))))
        next_tensor += len(outs)
        available.extend(outs)
        nodes.append(GraphNode(i, tuple(ins), tuple(outs), draw(st.booleans()) and draw(st.booleans())))
    outputs = draw(st.lists(st.sampled_from(available), min_size=1, max_size=3))
    supported = draw(st.sets(st.integers(0, n - 1)))
    return nodes, outputs, supported


def _check_partition(nodes, outputs, supported, subsets):
    by_index = {n.index: n for n in nodes}
    order = [i for s in subsets for i in s.nodes]
    assert sorted(order) == sorted(by_index), "every node in exactly one subset"
    producer_subset = {}
    for k, s in enumerate(subsets):
        assert all((i in supported) == s.delegated for i in s.nodes), "subsets are homogeneous"
        for i in s.nodes:
            for t in by_index[i].outputs:
                producer_subset[t] = k
    done: set[int] = set()
    for k, s in enumerate(subsets):
        internal = {t for i in s.nodes for t in by_index[i].outputs}
        reads = {t for i in s.nodes for t in by_index[i].inputs if t >= 0}
        assert set(s.input_tensors) == reads - internal, "inputs are what the subset reads from outside"
        read_later = {t for j, other in enumerate(subsets) if j != k for i in other.nodes
                      for t in by_index[i].inputs}
        assert set(s.output_tensors) == internal & (read_later | set(outputs))
        for t in s.input_tensors:  # each subset as one node still runs after its producers
            assert producer_subset.get(t, -1) < k
        for i in s.nodes:  # and inside a subset, the listed order is a run order
            assert all(t not in producer_subset or t in done for t in by_index[i].inputs if t >= 0)
            done.update(by_index[i].outputs)
    positions = {i: p for p, i in enumerate(order)}
    effects = [n.index for n in nodes if n.might_have_side_effect]
    assert [positions[i] for i in effects] == sorted(positions[i] for i in effects), "side effects keep order"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(dags())
def test_partitions_are_valid_on_random_dags(case):
    nodes, outputs, supported = case
    for greedy in (True, False):
        _check_partition(nodes, outputs, supported, partition_graph(nodes, outputs, supported, greedy=greedy))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(dags())
def test_greedy_subsets_alternate_and_are_maximal(case):
    nodes, outputs, supported = case
    subsets = partition_graph(nodes, outputs, supported)
    assert all(a.delegated != b.delegated for a, b in zip(subsets, subsets[1:]))
    assert len(partition_graph(nodes, outputs, supported, greedy=False)) >= len(subsets)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(dags(), st.integers(0, 3), st.integers(0, 4))
def test_selection_is_largest_first_within_limits(case, max_parts, min_nodes):
    nodes, outputs, supported = case
    parts = [s for s in partition_graph(nodes, outputs, supported) if s.delegated]
    sel = select_partitions(parts, max_parts, min_nodes)
    assert len(sel.chosen) + len(sel.dropped) == len(parts)
    if max_parts > 0:
        assert len(sel.chosen) <= max_parts
    assert all(len(p.nodes) >= min_nodes for p in sel.chosen)
    sizes = [len(p.nodes) for p in sel.chosen]
    assert sizes == sorted(sizes, reverse=True)
    if sel.chosen and sel.dropped:
        assert min(sizes) >= max(len(p.nodes) for p, _ in sel.dropped)
