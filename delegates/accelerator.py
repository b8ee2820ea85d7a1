"""AcceleratorDelegate: claim rules from a `DelegationPolicy`, simulated kernels, work records.

The simulated kernels are the interpreter's kernels run with the hardware's declared numerics,
which the delegate asks the runtime for (`Context.set_numerics`, a `accelsim.runtime.numerics.NumericsProfile`)
for the nodes it runs; it never edits a kernel's state:

- ``reference``: LiteRT's numerics, bit-exact with the reference interpreter.
- ``float16``: float32 nodes compute in float16 — their float inputs, constant weights and
  outputs are rounded to float16 (the accelerator stores activations and weights in half
  precision; accumulation stays in the kernel's float32).
- ``rounding``: quantized CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED requantize their
  accumulators with the declared rounding mode instead of TFLite's; other ops are unchanged.

Every partition records the `NodeWork` its nodes' kernels report (shapes and types only) for the cost models.
"""

from __future__ import annotations

from collections.abc import Sequence

from accelsim.delegates.api import DelegateOptions, SimpleDelegate, SimpleDelegateKernel, get_node_and_registration
from accelsim.delegates.partition import NodeSubset, Selection
from accelsim.delegates.spec import DelegationPolicy, facts_from_node
from accelsim.runtime.numerics import invoker
from accelsim.runtime.work import NodeWork, node_work


class AcceleratorDelegate(SimpleDelegate):
    """A delegate for one virtual accelerator, driven by its `DelegationPolicy`.

    Args:
        policy: its name, claim rules, partition policy and numerics (a `accelsim.hardware.device.Device`'s `policy`).
        host_nodes: with partition policy 'cost', chosen partitions holding any of these nodes stay on
            the host; the delegate does not judge that itself, whoever costs the model decides it
            (accelsim.simulation.placement).
        allowed_nodes: when given, the only nodes this delegate may claim whatever its policy (others are
            refused as left to another target; under 'prefix' that refusal ends the prefix, as an
            unsupported op would): whoever shares the nodes among several accelerators names them.

    Both are placement decisions, passed to the delegate for one delegation; the policy never holds them.
    """

    def __init__(self, policy: DelegationPolicy, *, host_nodes: frozenset[int] = frozenset(),
                 allowed_nodes: frozenset[int] | None = None):
        self.policy = policy
        self.host_nodes = frozenset(host_nodes)
        self.allowed_nodes = allowed_nodes
        self.kernels: list[AcceleratorKernel] = []
        self._first_refusal: tuple[int, str, str] | None = None  # node, op, why

    def name(self) -> str:
        return self.policy.name

    def initialize(self, context) -> None:
        self.kernels = []
        self._first_refusal = None

    def options(self) -> DelegateOptions:
        p = self.policy.partition
        return DelegateOptions(p.max_delegated_partitions, p.min_nodes_per_partition)

    def is_node_supported(self, context, node, registration):
        runtime_node, _ = get_node_and_registration(context, node.index)
        if self.policy.partition.kind == "prefix" and self._first_refusal is not None:
            first, op, why = self._first_refusal
            return False, (f"after node {first} ({op}), {why}: {self.policy.name} maps only the graph's prefix "
                           "(partition policy 'prefix')")
        ok, reason = self.policy.check(facts_from_node(runtime_node, context.tensors))
        why = "the first unsupported op"
        allowed = self.allowed_nodes
        if ok and allowed is not None and node.index not in allowed:
            ok, reason = False, f"{self.policy.name} could run it, but the system assigned it to another target"
            why = "the first node assigned to another target"
        if not ok and self.policy.partition.kind == "prefix":
            self._first_refusal = (node.index, node.op_name, why)
        return ok, reason

    def select_partitions(self, partitions: Sequence[NodeSubset]) -> Selection:
        """TFLite's selection; with partition kind 'cost', chosen partitions holding a `host_nodes` node stay home."""
        selection = super().select_partitions(partitions)
        host = self.host_nodes
        if self.policy.partition.kind != "cost" or not host:
            return selection
        moved = [p for p in selection.chosen if host.intersection(p.nodes)]
        why = (f"partition of {{}} node(s) kept on the host: the cost policy found it does not pay for itself "
               f"({self.policy.partition.objective})")
        return Selection(tuple(p for p in selection.chosen if p not in moved),
                         (*selection.dropped, *((p, why.format(len(p.nodes))) for p in moved)))

    def create_kernel(self) -> AcceleratorKernel:
        kernel = AcceleratorKernel(self.policy)
        self.kernels.append(kernel)
        return kernel

    def work_by_node(self) -> dict[int, NodeWork]:
        """Node index -> recorded work, over every partition this delegate runs and has prepared."""
        return {ni: w for k in self.kernels for ni, w in zip(k.nodes, k.work)}

    def claimed_nodes(self) -> tuple[int, ...]:
        """Every node this delegate's partitions replaced, prepared or not, in partition order."""
        return tuple(ni for k in self.kernels for ni in k.nodes)


class AcceleratorKernel(SimpleDelegateKernel):
    """Runs one partition: the replaced nodes' kernels with the declared numerics."""

    def __init__(self, policy: DelegationPolicy):
        self.policy = policy
        self.nodes: tuple[int, ...] = ()
        self.partition = 0
        self.work: tuple[NodeWork, ...] = ()

    def init(self, context, params) -> None:
        self.nodes = tuple(params.nodes_to_replace)
        self.partition = params.partition
        context.set_numerics(self.nodes, self.policy.numerics.profile())

    def prepare(self, context, node) -> None:
        works = []
        for ni in self.nodes:
            inner, registration = get_node_and_registration(context, ni)
            if registration.prepare is not None:
                if registration.prepare(context, inner) is False:
                    raise RuntimeError(f"node {ni} ({inner.op_name}) failed to prepare")
            works.append(node_work(context, inner))
        self.work = tuple(works)

    def eval(self, context, node) -> None:
        for ni in self.nodes:
            inner, registration = get_node_and_registration(context, ni)
            invoker(registration.invoke, inner.numerics)(context, inner)
