"""TFLite's SimpleDelegate API: a delegate claims nodes, each chosen partition becomes one node.

A `SimpleDelegate` says which nodes it supports (`is_node_supported` sees a read-only
`DelegateNodeView`: op, version, options and its tensors' types, shapes, quantization and
constant data). `apply` is TfLiteDelegate::Prepare of simple_delegate.cc plus the runtime half
of Subgraph::ReplaceNodeSubsetsWithDelegateKernels: the supported nodes of the primary plan
are partitioned, the largest partitions are selected, and each becomes a node whose kernel is
a fresh `SimpleDelegateKernel` from `create_kernel()`. Application is all-or-nothing.
"""

from __future__ import annotations

import abc
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelsim.delegates.partition import NodeSubset, Selection, describe_plan, partition_graph, select_partitions
from accelsim.runtime.errors import DelegateError, KernelError
from accelsim.runtime.ir import BUILTIN_OPS, Options, Quantization, numpy_dtype
from accelsim.runtime.resolver import Registration

log = logging.getLogger(__name__)


class DelegateKernelError(DelegateError, KernelError):
    """A delegate kernel failed in init, prepare or eval; names the delegate and its partition."""


@dataclass(frozen=True)
class DelegateOptions:
    """SimpleDelegateInterface::Options: partition limits; values <= 0 mean unlimited."""

    max_delegated_partitions: int = 0
    min_nodes_per_partition: int = 0


@dataclass(frozen=True)
class DelegateParams:
    """TfLiteDelegateParams: what a delegate kernel's init receives for its partition."""

    delegate: SimpleDelegate
    nodes_to_replace: tuple[int, ...]  # node indices, in a valid run order
    input_tensors: tuple[int, ...]
    output_tensors: tuple[int, ...]
    partition: int = 0  # this partition's ordinal among the delegate's partitions


@dataclass(frozen=True, eq=False)
class TensorView:
    """A read-only picture of one tensor, for deciding support."""

    index: int
    name: str
    type: str  # TensorType name, e.g. "FLOAT32"
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...]
    quantization: Quantization | None
    is_constant: bool
    is_variable: bool
    data: np.ndarray | None  # a read-only view of a constant's values; None otherwise

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.type)

    @property
    def is_quantized(self) -> bool:
        return self.quantization is not None and self.quantization.is_quantized

    @property
    def scales(self) -> tuple[float, ...]:
        return self.quantization.scales if self.quantization is not None else ()

    @property
    def zero_points(self) -> tuple[int, ...]:
        return self.quantization.zero_points if self.quantization is not None else ()


@dataclass(frozen=True, eq=False)
class DelegateNodeView:
    """A read-only picture of one node: what `is_node_supported` judges.

    `op` is the builtin name ('CONV_2D'), 'CUSTOM' (then `custom_name` is set) or 'DELEGATE'
    for a node an earlier delegate made; `inputs` holds None for an omitted optional input.
    """

    index: int
    op: str
    custom_name: str | None
    version: int
    options: Options | None
    custom_options: bytes | None
    input_indices: tuple[int, ...]
    output_indices: tuple[int, ...]
    inputs: tuple[TensorView | None, ...]
    outputs: tuple[TensorView, ...]

    @property
    def op_name(self) -> str:
        """The custom name for custom ops, else the builtin name."""
        return self.custom_name if self.op == "CUSTOM" and self.custom_name else self.op

    @property
    def builtin_code(self) -> int:
        return BUILTIN_OPS[self.op]


def _tensor_view(t) -> TensorView:
    data = None
    if t.is_constant and t.data is not None:
        data = t.data.view()
        data.flags.writeable = False
    return TensorView(t.index, t.name, t.type, tuple(t.shape), tuple(t.shape_signature), t.quantization,
                      t.is_constant, t.is_variable, data)


def _graph_of(context):
    return context.interpreter.subgraph(context.subgraph_index)


def node_view(context, node_index: int) -> DelegateNodeView:
    """The read-only view of node `node_index` of the context's subgraph."""
    graph = _graph_of(context)
    node = graph.nodes[node_index]
    op = node.operator
    tensors = graph.tensors
    if node.delegate is not None or op is None:
        kind, custom, version = "DELEGATE", node.registration.custom_name if node.registration else None, 1
    else:
        kind, custom, version = op.op, op.custom_code if op.op == "CUSTOM" else None, op.version
    return DelegateNodeView(
        index=node.index, op=kind, custom_name=custom, version=version, options=node.options,
        custom_options=node.custom_options, input_indices=tuple(node.inputs), output_indices=tuple(node.outputs),
        inputs=tuple(_tensor_view(tensors[i]) if i >= 0 else None for i in node.inputs),
        outputs=tuple(_tensor_view(tensors[i]) for i in node.outputs if i >= 0),
    )


def get_node_and_registration(context, node_index: int):
    """The runtime Node and Registration of node `node_index` (TfLiteContext::GetNodeAndRegistration).

    For delegate kernels that run or inspect the nodes they replaced.
    """
    node = _graph_of(context).nodes[node_index]
    return node, node.registration


class SimpleDelegateKernel(abc.ABC):
    """SimpleDelegateKernelInterface: runs one delegated partition.

    Raising, or returning False, from any hook fails the delegate node with a
    `DelegateKernelError` (a `DelegateError`) naming the delegate and the partition.
    """

    @abc.abstractmethod
    def init(self, context, params: DelegateParams) -> None:
        """Once per partition: remember what `params.nodes_to_replace` compute."""

    def prepare(self, context, node) -> None:
        """After every (re)allocation: check shapes, set output shapes, precompute (default: nothing)."""
        return None

    @abc.abstractmethod
    def eval(self, context, node) -> None:
        """Compute the partition: read `params.input_tensors`, write `params.output_tensors`."""


class SimpleDelegate(abc.ABC):
    """SimpleDelegateInterface: which nodes a delegate takes and the kernels that run them.

    Subclasses implement `name`, `is_node_supported` and `create_kernel`; `initialize`,
    `options` and `select_partitions` have TFLite's defaults.
    """

    @abc.abstractmethod
    def name(self) -> str:
        """Identifies the delegate in logs, errors and reports."""

    def initialize(self, context) -> None:
        """Called at the start of every `apply`, before any node is examined (default: nothing)."""
        return None

    @abc.abstractmethod
    def is_node_supported(self, context, node: DelegateNodeView, registration: Registration) -> bool | tuple[bool, str]:
        """True to claim `node`; or (False, reason) to say why not (shown by `delegation_report`)."""

    @abc.abstractmethod
    def create_kernel(self) -> SimpleDelegateKernel:
        """A new kernel for one partition."""

    def options(self) -> DelegateOptions:
        return DelegateOptions()

    def rejection_reasons(self, interpreter) -> dict[int, str]:
        """Why each node this delegate saw in `interpreter` was not taken (node index -> reason)."""
        record = _records(self).get(interpreter)
        return dict(record.reasons) if record is not None else {}

    def select_partitions(self, partitions: Sequence[NodeSubset]) -> Selection:
        """Which candidate partitions to delegate (default: GetFirstNLargestPartitions with `options()`)."""
        opts = self.options()
        return select_partitions(partitions, opts.max_delegated_partitions, opts.min_nodes_per_partition)

    def apply(self, interpreter) -> None:
        """Replace the supported nodes of the interpreter's primary plan with delegate nodes.

        Raises:
            DelegateError: a hook raised or misbehaved, or the graph failed to prepare
                afterwards; the interpreter's plan, nodes and tensors are as before.
        """
        name = str(_call_hook(type(self).__name__, "name", self.name))
        graph = interpreter.primary
        snapshot = _Snapshot(graph)
        try:
            record = self._delegate(name, interpreter, graph)
        except DelegateError:
            snapshot.restore(graph)
            raise
        except Exception as exc:
            snapshot.restore(graph)
            raise DelegateError(f"{name} delegate: {type(exc).__name__}: {exc}") from exc
        _records(self)[interpreter] = record

    # -- the steps of apply ---------------------------------------------------------

    def _delegate(self, name: str, interpreter, graph) -> _Record:
        """DelegatePrepare: judge every plan node, partition, select, then replace."""
        _call_hook(name, "initialize", self.initialize, graph.context)
        plan = list(graph.execution_plan)
        record = _Record(name)
        supported = self._judge_plan(name, graph, record)
        info = describe_plan(graph)
        fusion_off = bool(interpreter.preserve_all_tensors)  # Subgraph::PartitionGraph
        candidates = [s for s in partition_graph(info, graph.outputs, supported, disable_node_fusion=fusion_off)
                      if s.delegated]
        selection = _call_hook(name, "select_partitions", self.select_partitions, candidates)
        chosen = _check_selection(name, selection, set(supported))
        for subset, why in selection.dropped:
            record.reasons.update(dict.fromkeys(subset.nodes, why))
        log.info("%s delegate: %d nodes delegated out of %d nodes with %d partitions.",
                 name, len(chosen), len(plan), len(candidates))
        if not chosen:  # ReplaceNodeSubsetsWithDelegateKernels ignores an empty set
            return record
        # As TFLite does, the chosen nodes are partitioned afresh before being replaced.
        subsets = partition_graph(info, graph.outputs, chosen, disable_node_fusion=fusion_off)
        log.info("Replacing %d out of %d node(s) with delegate (%s) node, yielding %d partitions "
                 "for subgraph %d (%s).", len(chosen), len(plan), name, len(subsets), graph.index, graph.ir.name)
        self._replace(name, graph, subsets, record)
        return record

    def _judge_plan(self, name: str, graph, record: _Record) -> list[int]:
        """The plan nodes this delegate supports, in plan order; reasons for the others go in `record`."""
        supported = []
        for ni in graph.execution_plan:
            node = graph.nodes[ni]
            if node.delegate is not None:
                # TFLite would offer the node as op DELEGATE; every shipped delegate refuses it.
                why = f"claimed by an earlier delegate ({node.registration.custom_name})"
                record.reasons.update(dict.fromkeys(getattr(node.params, "nodes_to_replace", ()), why))
                continue
            reason = self._verdict(name, graph.context, graph, ni)
            if reason is None:
                supported.append(ni)
            else:
                record.reasons[ni] = reason
        return supported

    def _replace(self, name: str, graph, subsets: Sequence[NodeSubset], record: _Record) -> None:
        """One delegate node per delegated subset, the new plan, then a prepare of the whole graph."""
        registration = _kernel_registration(self, name)
        new_plan = []
        for subset in subsets:
            if not subset.delegated:
                new_plan.extend(subset.nodes)
                continue
            params = DelegateParams(self, subset.nodes, subset.input_tensors, subset.output_tensors,
                                    len(record.partitions))
            node = graph.add_delegate_node(registration, subset.input_tensors, subset.output_tensors, self, params)
            record.partitions.append((node.index, subset.nodes))
            new_plan.append(node.index)
        graph.set_execution_plan(new_plan)
        try:
            graph.prepare()  # EnsureMemoryAllocations: a failing prepare undoes the delegation
        except Exception as exc:
            raise DelegateError(
                f"{name} delegate: the graph failed to prepare after delegation; restored the original "
                f"execution plan: {exc}") from exc

    def _verdict(self, name: str, context, graph, ni: int) -> str | None:
        """None if this delegate takes node `ni`, else the reason it does not."""
        node = graph.nodes[ni]
        view = node_view(context, ni)
        try:
            answer = self.is_node_supported(context, view, node.registration)
        except Exception as exc:
            raise DelegateError(f"{name} delegate: is_node_supported raised on node {ni} ({view.op_name} "
                                f"v{view.version}): {type(exc).__name__}: {exc}") from exc
        ok, reason = _parse_verdict(name, ni, answer)
        if ok:
            return None
        return reason or f"op {view.op_name} (version {view.version}) not supported by {name}"


def _parse_verdict(name: str, ni: int, answer) -> tuple[bool, str | None]:
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer), None
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], (bool, np.bool_)):
        return bool(answer[0]), (str(answer[1]) if answer[1] else None)
    raise DelegateError(f"{name} delegate: is_node_supported returned {answer!r} for node {ni}; "
                        "expected a bool or (bool, reason)")


def _call_hook(name: str, hook: str, fn, *args):
    try:
        return fn(*args)
    except DelegateError:
        raise
    except Exception as exc:
        raise DelegateError(f"{name} delegate: {hook} raised {type(exc).__name__}: {exc}") from exc


def _check_selection(name: str, selection, supported: set[int]) -> list[int]:
    """The chosen nodes, in partition order; each at most once and each one the delegate supports."""
    if not isinstance(selection, Selection):
        raise DelegateError(f"{name} delegate: select_partitions returned {type(selection).__name__}, "
                            "not a Selection")
    owner: dict[int, int] = {}
    nodes = []
    for k, subset in enumerate(selection.chosen):
        for ni in subset.nodes:
            if ni in owner:
                raise DelegateError(f"{name} delegate claims node {ni} twice (in partitions {owner[ni]} and {k})")
            if ni not in supported:
                raise DelegateError(f"{name} delegate claims node {ni} (partition {k}), which it did not "
                                    "support or which is not in the execution plan")
            owner[ni] = k
            nodes.append(ni)
    return nodes


def _kernel_registration(delegate: SimpleDelegate, name: str) -> Registration:
    """GetDelegateKernelRegistration: each delegate node owns one kernel from create_kernel()."""

    def init(context, params: DelegateParams):
        kernel = delegate.create_kernel()
        if not isinstance(kernel, SimpleDelegateKernel):
            raise DelegateKernelError(f"{_where(name, params)}: create_kernel() returned "
                                      f"{type(kernel).__name__}, not a SimpleDelegateKernel")
        _run_kernel(name, params, "init", kernel.init, context, params)
        return kernel

    def prepare(context, node) -> None:
        _run_kernel(name, node.params, "prepare", node.user_data.prepare, context, node)

    def invoke(context, node) -> None:
        _run_kernel(name, node.params, "eval", node.user_data.eval, context, node)

    return Registration(invoke=invoke, prepare=prepare, init=init, builtin_code=BUILTIN_OPS["DELEGATE"],
                        custom_name=name)


def _where(name: str, params: DelegateParams) -> str:
    return f"{name} delegate kernel for partition {params.partition} (nodes {list(params.nodes_to_replace)})"


def _run_kernel(name: str, params: DelegateParams, phase: str, fn, *args) -> None:
    # A subclass of KernelError, so the interpreter keeps the type when it adds the node's name.
    try:
        result = fn(*args)
    except Exception as exc:
        raise DelegateKernelError(f"{_where(name, params)} failed in {phase}: {type(exc).__name__}: {exc}") from exc
    if result is False:
        raise DelegateKernelError(f"{_where(name, params)} reported failure in {phase}")


class _Snapshot:
    """What `apply` may change in a subgraph, to put back if it fails."""

    def __init__(self, graph):
        self.num_nodes = len(graph.nodes)
        self.plan = list(graph.execution_plan)
        self.prepared = graph.prepared
        self.tensors = list(graph.tensors)
        self.tensor_state = [(t.shape, t.dynamic, t.data) for t in graph.tensors]
        self.node_state = [(n.user_data, list(n.temporaries)) for n in graph.nodes]

    def restore(self, graph) -> None:
        for node in graph.nodes[self.num_nodes:]:
            try:
                graph.free_node(node)
            except Exception:  # the failure being reported matters more than a failing free
                log.debug("error while freeing delegate node %d", node.index, exc_info=True)
        del graph.nodes[self.num_nodes:]
        graph.tensors[:] = self.tensors
        for t, (shape, dynamic, data) in zip(graph.tensors, self.tensor_state):
            t.shape, t.dynamic = shape, dynamic
            t.data = data
        for n, (user_data, temporaries) in zip(graph.nodes, self.node_state):
            n.user_data, n.temporaries = user_data, temporaries
        graph.execution_plan = list(self.plan)
        graph.prepared = False
        if self.prepared:
            # RemoveAllDelegates re-allocates; kernels' prepare state must match the restored plan.
            graph.prepare()


@dataclass
class _Record:
    """What one `apply` decided, for `delegation_report`."""

    name: str
    reasons: dict[int, str] = field(default_factory=dict)  # node index -> why it was not taken
    partitions: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)  # (delegate node, nodes)


def _records(delegate: SimpleDelegate) -> weakref.WeakKeyDictionary:
    """Per-interpreter records of `delegate`, created on first use (subclasses need not call super().__init__)."""
    return delegate.__dict__.setdefault("_accelsim_records", weakref.WeakKeyDictionary())


def delegation_report(interpreter) -> list[dict[str, Any]]:
    """One row per original node: who runs it, or why no delegate does (see Interpreter.get_delegation_report)."""
    return interpreter.get_delegation_report()
