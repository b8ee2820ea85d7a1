"""TFLite's node-subset partitioning and partition selection, on plain graph descriptions.

`partition_graph` follows PartitionGraphIntoIndependentNodeSubsets (tflite/graph_info.cc):
subsets ("epochs") are grown one at a time by sweeping the execution plan and absorbing
every node whose inputs are ready and whose kind (to delegate or not) matches the
subset's, until a sweep adds nothing. `select_partitions` follows
GraphPartitionHelper::GetFirstNLargestPartitions (tflite/delegates/utils.cc).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Subgraph::OpMightHaveSideEffect: control flow ops may run side-effecting subgraphs.
SIDE_EFFECT_OPS = frozenset({"IF", "WHILE", "CALL_ONCE"})

_NOT_READY = -1  # a node output not yet assigned to a subset
_ALWAYS_READY = -2  # graph inputs, constants, variables: anything no plan node produces


@dataclass(frozen=True)
class GraphNode:
    """One execution-plan step: its node index, tensor indices (-1 = omitted) and side-effect flag."""

    index: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    might_have_side_effect: bool = False


@dataclass(frozen=True)
class NodeSubset:
    """A run of nodes of one kind; inputs/outputs are sorted tensor indices crossing its border.

    `nodes` lists node indices in the order they were absorbed, which is a valid run order.
    Inputs include constants and graph inputs; outputs are the tensors a later subset reads
    or that are graph outputs.
    """

    delegated: bool
    nodes: tuple[int, ...]
    input_tensors: tuple[int, ...]
    output_tensors: tuple[int, ...]


@dataclass(frozen=True)
class Selection:
    """Which delegated partitions `select_partitions` keeps, and why the others were dropped."""

    chosen: tuple[NodeSubset, ...]
    dropped: tuple[tuple[NodeSubset, str], ...]


def might_have_side_effect(op: str, tensor_types: Iterable[str]) -> bool:
    """Subgraph::OpMightHaveSideEffect: a RESOURCE input/output (variables) or a control flow op."""
    return op in SIDE_EFFECT_OPS or any(t == "RESOURCE" for t in tensor_types)


def describe_plan(graph) -> list[GraphNode]:
    """The execution plan of a runtime subgraph (`.execution_plan`, `.nodes`, `.tensors`) as GraphNodes."""
    out = []
    for ni in graph.execution_plan:
        node = graph.nodes[ni]
        types = [graph.tensors[t].type for t in (*node.inputs, *node.outputs) if t >= 0]
        op = node.operator.op if node.operator is not None else node.op_name
        out.append(GraphNode(ni, tuple(node.inputs), tuple(node.outputs), might_have_side_effect(op, types)))
    return out


def side_effect_edges(nodes: Sequence[GraphNode]) -> list[tuple[int, int]]:
    """Control edges chaining side-effecting nodes in plan order (plan positions, not node indices)."""
    edges = []
    last = None
    for pos, node in enumerate(nodes):
        if node.might_have_side_effect:
            if last is not None:
                edges.append((last, pos))
            last = pos
    return edges


def partition_graph(nodes: Sequence[GraphNode], outputs: Iterable[int], nodes_to_partition: Iterable[int], *,
                    greedy: bool = True, control_edges: Iterable[tuple[int, int]] | None = None,
                    disable_node_fusion: bool = False) -> list[NodeSubset]:
    """Split the plan `nodes` into independent subsets, each all-delegated or all-not.

    Args:
        nodes: the execution plan, in order.
        outputs: the graph's output tensors (they become outputs of the subset producing them).
        nodes_to_partition: node indices (GraphNode.index) to put in delegated subsets.
        greedy: absorb any ready node of the subset's kind, even past nodes of the other kind
            (TFLite's default); False keeps the original order (delegate clustering disabled).
        control_edges: (before, after) plan positions; default: side-effecting nodes keep their
            relative order when greedy (as graph_info.cc chains them).
        disable_node_fusion: one node per subset (TFLite does this when all tensors are preserved).

    Raises:
        ValueError: a node to partition is not in the plan, a control edge is out of range,
            or the edges leave a node that can never be scheduled.
    """
    positions = {n.index: pos for pos, n in enumerate(nodes)}
    wanted = set(nodes_to_partition)
    stray = sorted(wanted - positions.keys())
    if stray:
        raise ValueError(f"nodes to partition {stray} are not in the execution plan {sorted(positions)}")
    if control_edges is None:
        control_edges = side_effect_edges(nodes) if greedy else []
    edges = sorted(set(control_edges))
    bad = [e for e in edges if not all(0 <= p < len(nodes) for p in e)]
    if bad:
        raise ValueError(f"control edges {bad} name plan positions outside [0, {len(nodes)})")
    state = _Partitioner(nodes, [n.index in wanted for n in nodes], edges, greedy, disable_node_fusion)
    return state.run(list(outputs))


class _Partitioner:
    """The epoch traversal of graph_info.cc; one instance per call."""

    def __init__(self, nodes, delegated, edges, greedy, disable_node_fusion):
        self.nodes = nodes
        self.delegated = delegated
        self.greedy = greedy
        self.disable_node_fusion = disable_node_fusion
        self.successors: dict[int, list[int]] = {}
        self.pending = [0] * len(nodes)  # unscheduled control predecessors per plan position
        for before, after in edges:
            self.successors.setdefault(before, []).append(after)
            self.pending[after] += 1
        self.tensor_epoch = {t: _NOT_READY for n in nodes for t in n.outputs if t >= 0}
        self.node_epoch = [_NOT_READY] * len(nodes)
        self.subsets: list[_Growing] = []

    def run(self, outputs: list[int]) -> list[NodeSubset]:
        while True:
            self.subsets.append(_Growing())
            self._grow()
            if not self.subsets[-1].nodes:
                self.subsets.pop()
                break
        stuck = [self.nodes[p].index for p, e in enumerate(self.node_epoch) if e == _NOT_READY]
        if stuck:
            raise ValueError(f"nodes {stuck} can never be scheduled (a cycle through control edges)")
        for t in outputs:
            epoch = self.tensor_epoch.get(t, _ALWAYS_READY)
            if epoch >= 0:  # a graph input that is also an output belongs to no subset
                self.subsets[epoch].outputs.add(t)
        return [s.freeze() for s in self.subsets]

    def _grow(self) -> None:
        """Sweep the plan until a sweep absorbs nothing (BuildNodeSubset)."""
        while True:
            absorbed = False
            for pos in range(len(self.nodes)):
                if self._absorb(pos):
                    absorbed = True
                elif absorbed and not self.greedy:
                    return
            if not absorbed:
                return

    def _ready(self, pos: int) -> bool:
        if self.node_epoch[pos] != _NOT_READY or self.pending[pos]:
            return False
        return all(t < 0 or self.tensor_epoch.get(t, _ALWAYS_READY) != _NOT_READY for t in self.nodes[pos].inputs)

    def _absorb(self, pos: int) -> bool:
        """UpdateNode: put the node in the current subset if it is ready and of the subset's kind."""
        subset = self.subsets[-1]
        if self.disable_node_fusion and subset.nodes:
            return False
        if not self._ready(pos):
            return False
        kind = self.delegated[pos]
        if subset.delegated is None:  # the first ready node fixes the subset's kind
            subset.delegated = kind
        if subset.delegated != kind:
            return False
        epoch = len(self.subsets) - 1
        node = self.nodes[pos]
        self.node_epoch[pos] = epoch
        subset.nodes.append(node.index)
        for t in node.outputs:
            if t >= 0:
                self.tensor_epoch[t] = epoch
        for t in node.inputs:
            if t < 0:
                continue
            source = self.tensor_epoch.get(t, _ALWAYS_READY)
            if source != epoch:
                subset.inputs.add(t)
                if source >= 0:
                    self.subsets[source].outputs.add(t)
        for after in self.successors.get(pos, ()):
            self.pending[after] -= 1
        return True


class _Growing:
    """A subset under construction."""

    def __init__(self):
        self.delegated: bool | None = None
        self.nodes: list[int] = []
        self.inputs: set[int] = set()
        self.outputs: set[int] = set()

    def freeze(self) -> NodeSubset:
        return NodeSubset(bool(self.delegated), tuple(self.nodes), tuple(sorted(self.inputs)),
                          tuple(sorted(self.outputs)))


def select_partitions(partitions: Sequence[NodeSubset], max_delegated_partitions: int = 0,
                      min_nodes_per_partition: int = 0) -> Selection:
    """Keep the largest partitions first (GetFirstNLargestPartitions); limits <= 0 mean unlimited.

    Partitions are ranked by node count, largest first, ties in their original order; the
    first `max_delegated_partitions` are kept unless smaller than `min_nodes_per_partition`.
    """
    limit = max_delegated_partitions if max_delegated_partitions > 0 else len(partitions)
    ranked = sorted(partitions, key=lambda p: -len(p.nodes))  # sorted() is stable
    chosen = []
    dropped = []
    for rank, p in enumerate(ranked):
        if rank >= limit:
            dropped.append((p, f"partition of {len(p.nodes)} node(s) dropped by max_delegated_partitions="
                               f"{max_delegated_partitions} (it ranks {rank + 1} by size)"))
        elif len(p.nodes) < min_nodes_per_partition:
            dropped.append((p, f"partition of {len(p.nodes)} node(s) dropped: fewer than "
                               f"min_nodes_per_partition={min_nodes_per_partition}"))
        else:
            chosen.append(p)
    return Selection(tuple(chosen), tuple(dropped))
