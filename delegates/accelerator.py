"""AcceleratorDelegate: claim rules from an `AcceleratorSpec`, simulated kernels, work records.

The simulated kernels are the reference kernels (the slow simple path is the specification)
plus the hardware's declared deviation:

- ``reference``: bit-exact with the reference interpreter.
- ``float16``: float32 nodes compute in float16 — their float inputs, constant weights and
  outputs are rounded to float16 (the accelerator stores activations and weights in half
  precision; accumulation stays in the reference kernel's float32).
- ``rounding``: quantized CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED requantize their
  accumulators with the declared rounding mode instead of TFLite's; other ops are reference.

Every partition records the `NodeWork` its nodes' kernels report (shapes and types only) for the cost models.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

import numpy as np

from delegates.api import DelegateOptions, SimpleDelegate, SimpleDelegateKernel, get_node_and_registration
from delegates.spec import AcceleratorSpec, facts_from_node
from runtime.work import NodeWork, node_work

log = logging.getLogger(__name__)

_REQUANTIZING_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


# -- requantization rounding modes (x * q * 2**(shift - 31), one rounding) ---------------------------


def _split(x, multiplier, shift):
    product = np.asarray(x, dtype=np.int64) * np.asarray(multiplier, dtype=np.int64)
    total = 31 - np.asarray(shift, dtype=np.int64)
    return product, total


def _round_half_away(x, multiplier, shift):
    product, total = _split(x, multiplier, shift)
    magnitude = (np.abs(product) + (np.int64(1) << (total - 1))) >> total
    return np.where(product < 0, -magnitude, magnitude)


def _round_half_up(x, multiplier, shift):
    product, total = _split(x, multiplier, shift)
    return (product + (np.int64(1) << (total - 1))) >> total


def _round_half_even(x, multiplier, shift):
    product, total = _split(x, multiplier, shift)
    floor = product >> total
    remainder = product - (floor << total)
    half = np.int64(1) << (total - 1)
    return floor + ((remainder > half) | ((remainder == half) & (floor % 2 == 1)))


def _round_truncate(x, multiplier, shift):
    product, total = _split(x, multiplier, shift)
    magnitude = np.abs(product) >> total
    return np.where(product < 0, -magnitude, magnitude)


ROUNDING_FUNCTIONS: dict[str, Callable] = {
    "half_away_from_zero": _round_half_away,
    "half_up": _round_half_up,
    "half_even": _round_half_even,
    "truncate": _round_truncate,
}


# -- the delegate ------------------------------------------------------------------------------


class AcceleratorDelegate(SimpleDelegate):
    """A delegate for one virtual accelerator, driven by its `AcceleratorSpec`.

    Args:
        spec: claim rules, partition policy and numerics (``accelsim.config.to_spec`` makes one).
    """

    def __init__(self, spec: AcceleratorSpec):
        self.spec = spec
        self.kernels: list[AcceleratorKernel] = []
        self._first_refusal: tuple[int, str] | None = None

    def name(self) -> str:
        return self.spec.name

    def initialize(self, context) -> None:
        self.kernels = []
        self._first_refusal = None

    def options(self) -> DelegateOptions:
        p = self.spec.partition
        return DelegateOptions(p.max_delegated_partitions, p.min_nodes_per_partition)

    def is_node_supported(self, context, node, registration):
        runtime_node, _ = get_node_and_registration(context, node.index)
        if self.spec.partition.kind == "prefix" and self._first_refusal is not None:
            first, op = self._first_refusal
            return False, (f"after node {first} ({op}), the first unsupported op: {self.spec.name} maps only "
                           "the graph's prefix (partition policy 'prefix')")
        ok, reason = self.spec.check(facts_from_node(runtime_node, context.tensors))
        if not ok and self.spec.partition.kind == "prefix":
            self._first_refusal = (node.index, node.op_name)
        return ok, reason

    def create_kernel(self) -> AcceleratorKernel:
        kernel = AcceleratorKernel(self.spec)
        self.kernels.append(kernel)
        return kernel

    def work_by_node(self) -> dict[int, NodeWork]:
        """Node index -> recorded work, over every partition this delegate runs."""
        return {ni: w for k in self.kernels for ni, w in zip(k.nodes, k.work)}


class AcceleratorKernel(SimpleDelegateKernel):
    """Runs one partition: the replaced nodes' reference kernels plus the declared numerics."""

    def __init__(self, spec: AcceleratorSpec):
        self.spec = spec
        self.nodes: tuple[int, ...] = ()
        self.partition = 0
        self.work: tuple[NodeWork, ...] = ()

    def init(self, context, params) -> None:
        self.nodes = tuple(params.nodes_to_replace)
        self.partition = params.partition
        if self.spec.numerics.mode == "float16":
            self._round_constant_weights(context)

    def prepare(self, context, node) -> None:
        works = []
        for ni in self.nodes:
            inner, registration = get_node_and_registration(context, ni)
            if registration.prepare is not None:
                if registration.prepare(context, inner) is False:
                    raise RuntimeError(f"node {ni} ({inner.op_name}) failed to prepare")
            if self.spec.numerics.mode == "rounding" and inner.operator.op in _REQUANTIZING_OPS:
                self._use_declared_rounding(inner)
            works.append(node_work(context, inner))
        self.work = tuple(works)

    def eval(self, context, node) -> None:
        half = self.spec.numerics.mode == "float16"
        for ni in self.nodes:
            inner, registration = get_node_and_registration(context, ni)
            if not half:
                registration.invoke(context, inner)
                continue
            # The device reads float16 copies; the host's tensors keep their float32 values.
            originals = _round_to_half(context, inner.inputs)
            registration.invoke(context, inner)
            for tensor, data in originals:
                tensor.data = data
            _round_to_half(context, inner.outputs)

    def _use_declared_rounding(self, inner) -> None:
        """Requantize this conv/FC node's accumulators with the declared rounding mode."""
        plan = inner.user_data
        if not getattr(plan, "quantized", True):
            return  # float nodes have no requantization
        requant = getattr(plan, "requant", None)
        if requant is None:
            raise RuntimeError(f"node {inner.index} ({inner.op_name}) has no requantizer to apply rounding "
                               f"{self.spec.numerics.rounding!r} to")
        plan.requant = dataclasses.replace(requant, rounding=ROUNDING_FUNCTIONS[self.spec.numerics.rounding])
        if hasattr(plan, "stage"):
            plan.stage = None  # the precomputed output stage bakes in ruy's rounding

    def _round_constant_weights(self, context) -> None:
        """Float32 constants read only inside this partition are held in float16 on the device."""
        graph = context.interpreter.subgraph(context.subgraph_index)
        inside = set(self.nodes)
        readers: dict[int, set[int]] = {}
        for ni in graph.execution_plan:
            for t in graph.nodes[ni].inputs:
                readers.setdefault(t, set()).add(ni)
        for ni in self.nodes:
            for t in graph.nodes[ni].inputs:
                tensor = graph.tensors[t] if t >= 0 else None
                if tensor is None or not tensor.is_constant or tensor.type != "FLOAT32":
                    continue
                if readers.get(t, set()) - inside:
                    log.debug("constant %d is shared with host nodes; kept in float32", t)
                    continue
                tensor._data = tensor.data.astype(np.float16).astype(np.float32)


def _round_to_half(context, indices) -> list[tuple]:
    """Round the float32, non-constant tensors among `indices` to float16 precision; return their old data."""
    originals = []
    for t in indices:
        tensor = context.tensor(t) if t >= 0 else None
        if tensor is None or tensor.type != "FLOAT32" or tensor.data is None or tensor.is_constant:
            continue
        originals.append((tensor, tensor.data))
        tensor.data = tensor.data.astype(np.float16).astype(np.float32)
    return originals
