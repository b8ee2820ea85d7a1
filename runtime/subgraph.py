"""One subgraph at run time: its tensors, its nodes and their execution plan.

Kernels see a `Context` and a `Node` the way TFLite kernels see TfLiteContext and TfLiteNode;
`SubgraphRuntime` prepares the nodes in plan order (re-preparing after dynamic outputs), frees
intermediates after their last reader and runs the invoke loop. The `Interpreter` (interpreter.py)
owns one per subgraph of the model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from accelsim.runtime.errors import (
    DelegateError,
    InterpreterStateError,
    KernelError,
    ModelError,
    OpResolutionError,
)
from accelsim.runtime.ir import Model, Operator
from accelsim.runtime.numerics import LITERT_X86, NumericsProfile, invoker, to_half
from accelsim.runtime.registration import Registration
from accelsim.runtime.tensor import ARENA, CONSTANT, PERSISTENT, TEMPORARY, RuntimeTensor

log = logging.getLogger(__name__)


class InterpreterState(Protocol):
    """What a subgraph and its kernels see of the interpreter that owns them.

    `accelsim.runtime.interpreter.Interpreter` is the one implementation; naming this protocol instead keeps the
    subgraph below the interpreter (which builds subgraphs) with no import back up.
    """

    model: Model
    preserve_all_tensors: bool
    shapes_only: bool
    resource_ids: dict[tuple[str, str], int]
    resources: dict[int, Any]
    initialized_subgraphs: set[int]

    def subgraph(self, index: int) -> SubgraphRuntime: ...

    def num_subgraphs(self) -> int: ...


class Node:
    """One node of the execution plan, as a kernel sees it (TfLiteNode)."""

    __slots__ = (
        "index", "inputs", "outputs", "intermediates", "temporaries", "registration",
        "user_data", "options", "custom_options", "operator", "delegate", "initialized",
        "params", "numerics",
    )

    def __init__(self, index: int, inputs: Sequence[int], outputs: Sequence[int],
                 registration: Registration | None, operator: Operator | None = None,
                 options=None, custom_options: bytes | None = None, intermediates=()):
        self.index = index
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.intermediates = tuple(intermediates)
        self.temporaries: list[int] = []
        self.registration = registration
        self.user_data: Any = None
        self.options = options
        self.custom_options = custom_options
        self.operator = operator
        self.delegate = None
        self.params: Any = None  # for delegate nodes: what the kernel's init receives
        self.numerics = LITERT_X86  # the arithmetic its kernel runs with (Context.set_numerics)
        self.initialized = False

    @property
    def op_name(self) -> str:
        """The op as LiteRT names it in _get_ops_details ('CONV_2D', a custom name, 'DELEGATE')."""
        if self.delegate is not None:
            return "DELEGATE"
        if self.operator is not None:
            return self.operator.display_name
        return self.registration.op_name if self.registration else "<unknown>"

    @property
    def version(self) -> int:
        return self.operator.version if self.operator is not None else 1

    def __repr__(self) -> str:
        return f"Node({self.index}, {self.op_name})"


class Context:
    """What kernels see of their subgraph (TfLiteContext)."""

    def __init__(self, graph: SubgraphRuntime):
        self._graph = graph
        self.errors: list[str] = []

    @property
    def tensors(self) -> list[RuntimeTensor]:
        return self._graph.tensors

    @property
    def interpreter(self) -> InterpreterState:
        return self._graph.interpreter

    @property
    def subgraph_index(self) -> int:
        return self._graph.index

    @property
    def shapes_only(self) -> bool:
        """Whether prepare stops at shapes and checks: no numeric preparation, since nothing will invoke."""
        return self._graph.interpreter.shapes_only

    def tensor(self, index: int) -> RuntimeTensor:
        return self._graph.tensors[index]

    def input(self, node: Node, i: int) -> RuntimeTensor | None:
        """The node's i-th input tensor; None for an omitted optional input (-1) or past the end."""
        if i >= len(node.inputs) or node.inputs[i] < 0:
            return None
        return self._graph.tensors[node.inputs[i]]

    def output(self, node: Node, i: int) -> RuntimeTensor:
        return self._graph.tensors[node.outputs[i]]

    def resize_tensor(self, tensor: RuntimeTensor | int, shape: Sequence[int]) -> None:
        """Set a (non-constant) tensor's shape; its data is dropped (ResizeTensor)."""
        t = tensor if isinstance(tensor, RuntimeTensor) else self._graph.tensors[tensor]
        if type(shape) is tuple and shape == t.shape and not t.is_constant:
            return  # the same dims change nothing (prepares inside loop bodies resize every step)
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise KernelError(f"cannot resize tensor {t.index} ({t.name!r}) to negative shape {list(shape)}")
        if t.is_constant:
            raise KernelError(f"cannot resize constant tensor {t.index} ({t.name!r})")
        if t.shape != shape:
            t.shape = shape
            if t.allocation != PERSISTENT or not t.is_variable:
                t.data = None

    def set_dynamic(self, tensor: RuntimeTensor | int) -> None:
        """Mark a tensor whose shape is only known at invoke (SetTensorToDynamic)."""
        t = tensor if isinstance(tensor, RuntimeTensor) else self._graph.tensors[tensor]
        t.dynamic = True

    def add_tensors(self, count: int, type_name: str = "FLOAT32", shape: Sequence[int] = ()) -> list[int]:
        """Append scratch tensors to the subgraph (AddTensors) and return their indices."""
        first = len(self._graph.tensors)
        for i in range(count):
            self._graph.tensors.append(
                RuntimeTensor(first + i, f"temporary_{first + i}", type_name, tuple(shape), allocation=TEMPORARY)
            )
        return list(range(first, first + count))

    def report_error(self, message: str) -> None:
        """Record an error message; it becomes part of the exception the failing node raises."""
        self.errors.append(str(message))

    def set_numerics(self, nodes: Sequence[int], profile: NumericsProfile) -> None:
        """Run these nodes with `profile` from their next prepare on (a delegate asks this for the nodes it runs).

        A float16 profile also holds in float16 the float32 constants that only these nodes read
        (the device stores its weights in half precision); constants shared with other nodes keep
        their values.
        """
        if not isinstance(profile, NumericsProfile):
            raise TypeError(f"set_numerics needs a runtime.numerics.NumericsProfile, got {type(profile).__name__}")
        graph = self._graph
        chosen = {int(ni) for ni in nodes}
        for ni in chosen:
            graph.nodes[ni].numerics = profile
        graph.prepared = False
        if not profile.half:
            return
        readers: dict[int, set[int]] = {}
        for ni in graph.execution_plan:
            for t in graph.nodes[ni].inputs:
                readers.setdefault(t, set()).add(ni)
        for ni in sorted(chosen):
            for t in graph.nodes[ni].inputs:
                tensor = graph.tensors[t] if t >= 0 else None
                if tensor is None or not tensor.is_constant or tensor.type != "FLOAT32":
                    continue
                if readers.get(t, set()) - chosen:
                    log.debug("constant %d is shared with nodes outside %s; kept in float32", t, sorted(chosen))
                    continue
                tensor.data = to_half(tensor.data)

    def constant(self, node: Node, i: int) -> np.ndarray | None:
        """The data of the node's i-th input when it is a constant, else None."""
        t = self.input(node, i)
        return t.data if t is not None and t.is_constant else None


class SubgraphRuntime:
    """Tensors, nodes and the execution plan of one subgraph."""

    def __init__(self, interpreter: InterpreterState, index: int,
                 resolve: Callable[[Operator, int, int], Registration | None]):
        """`resolve(op, subgraph index, operator index)` gives each operator's registration (None: none)."""
        self.interpreter = interpreter
        self.index = index
        sg = interpreter.model.subgraphs[index]
        self.ir = sg
        self.inputs: list[int] = list(sg.inputs)
        self.outputs: list[int] = list(sg.outputs)
        self.tensors: list[RuntimeTensor] = []
        persistent = set(sg.inputs) | set(sg.outputs)
        for ti, t in enumerate(sg.tensors):
            const = interpreter.model.constant(index, ti) if t.buffer else None
            if const is not None:
                allocation = CONSTANT
            elif t.is_variable or ti in persistent:
                allocation = PERSISTENT
            else:
                allocation = ARENA
            try:
                rt = RuntimeTensor(ti, t.name, t.type, t.shape, t.quantization, t.shape_signature,
                                   allocation, t.is_variable, t.sparsity)
            except ModelError as exc:
                raise ModelError(f"subgraph {index} tensor {ti} ({t.name!r}): {exc}") from None
            if const is not None:
                rt.unchecked_data = const
            self.tensors.append(rt)
        self.context = Context(self)
        self.nodes: list[Node] = []
        self.execution_plan: list[int] = []
        for oi, op in enumerate(sg.operators):
            reg = resolve(op, index, oi)
            node = Node(oi, op.inputs, op.outputs, reg, op, op.options, op.custom_options, op.intermediates)
            self.nodes.append(node)
            self.execution_plan.append(oi)
        # Per plan step, (node, its invoke under its numerics, the tensors freed after it): what the
        # invoke loop walks.
        self._steps: list[tuple[Node, Callable, tuple[RuntimeTensor, ...]]] = []
        self._next_to_prepare = 0  # the plan step invoke prepares from (after a dynamic output)
        # Per plan step, the node's dynamic outputs as its last prepare left them: invoke
        # re-prepares the steps after it only when one of them changed shape.
        self._dynamic_outputs: list[tuple[RuntimeTensor, ...]] = []
        self.prepared = False

    # -- lifecycle ------------------------------------------------------------------

    def init_nodes(self) -> None:
        for node in self.nodes:
            self._init_node(node)

    def _init_node(self, node: Node) -> None:
        reg = node.registration
        if reg is None or node.initialized:
            return
        if reg.init is not None:
            if node.delegate is not None:
                buffer = node.params
            elif reg.custom_name is not None:
                buffer = node.custom_options
            else:
                buffer = node.options
            node.user_data = self._call(node, "init", reg.init, self.context, buffer)
        node.initialized = True

    def free_node(self, node: Node) -> None:
        reg = node.registration
        if reg is not None and node.initialized and reg.free is not None:
            reg.free(self.context, node.user_data)
        node.initialized = False
        node.user_data = None

    def _call(self, node: Node, phase: str, fn: Callable, *args) -> Any:
        self.context.errors.clear()
        try:
            result = fn(*args)
        except Exception as exc:
            raise self._node_error(node, phase, exc) from exc
        if result is False:
            raise KernelError(self._failure(node, phase, "the kernel reported failure"))
        return result

    def _node_error(self, node: Node, phase: str, exc: Exception) -> Exception:
        """What to raise for `exc` from a node: the runtime's errors keep their type, the rest become KernelError."""
        if isinstance(exc, (KernelError, OpResolutionError, InterpreterStateError, DelegateError)):
            return type(exc)(self._failure(node, phase, str(exc)))
        # A kernel's own bug or a user op's error: name the node.
        return KernelError(self._failure(node, phase, f"{type(exc).__name__}: {exc}"))

    def _failure(self, node: Node, phase: str, detail: str) -> str:
        reported = "; ".join(self.context.errors)
        where = f"subgraph {self.index} " if self.index else ""
        msg = f"Node number {node.index} ({node.op_name}) failed to {phase} ({where}node {node.index})"
        parts = [p for p in (reported, detail) if p]
        return f"{msg}: {' | '.join(parts)}" if parts else msg

    # -- delegation (the runtime half of TfLiteContext::ReplaceNodeSubsetsWithDelegateKernels) --

    def add_delegate_node(self, registration: Registration, inputs: Sequence[int], outputs: Sequence[int],
                          delegate: Any, params: Any) -> Node:
        """Append a node that runs `registration` in place of some nodes; `params` goes to its init.

        The node is not in the execution plan until `set_execution_plan` puts it there.
        """
        node = Node(len(self.nodes), inputs, outputs, registration)
        node.delegate = delegate
        node.params = params
        self.nodes.append(node)
        self._init_node(node)
        return node

    def set_execution_plan(self, plan: Sequence[int]) -> None:
        """Replace the execution plan after checking it runs every tensor's producer first."""
        plan = [int(i) for i in plan]
        if len(set(plan)) != len(plan):
            raise InterpreterStateError(f"execution plan runs a node twice: {plan}")
        for ni in plan:
            if not 0 <= ni < len(self.nodes):
                raise InterpreterStateError(f"execution plan names node {ni}, which does not exist")
        # As TFLite: a tensor that no node produces is ready from the start (inputs, constants,
        # variables and zero-byte constants alike); the rest must be produced before being read.
        produced_anywhere = {t for node in self.nodes for t in node.outputs if t >= 0}
        ready = set(range(len(self.tensors))) - produced_anywhere
        for ni in plan:
            node = self.nodes[ni]
            missing = [t for t in node.inputs if t >= 0 and t not in ready]
            if missing:
                raise InterpreterStateError(
                    f"execution plan runs node {ni} ({node.op_name}) before tensors {missing} are produced"
                )
            ready.update(t for t in node.outputs if t >= 0)
        unproduced = [t for t in self.outputs if t not in ready]
        if unproduced:
            raise InterpreterStateError(f"execution plan never produces graph outputs {unproduced}")
        self.execution_plan = plan
        self.prepared = False

    def prepare(self) -> None:
        """Run node prepares in plan order up to the first dynamic output, then plan intermediate lifetimes.

        As TFLite's PrepareOpsStartingAt: the nodes after a node whose output is dynamic are
        prepared during invoke, once that output's shape is known.
        """
        for ni in self.execution_plan:
            node = self.nodes[ni]
            reg = node.registration
            if reg is None or reg.invoke is None:
                name = node.operator.custom_code if node.operator is not None else node.op_name
                raise OpResolutionError(
                    f"Encountered unresolved custom op: {name}.\n"
                    f"Node number {node.index} ({name}) failed to prepare."
                )
            self._init_node(node)
        self._dynamic_outputs = [()] * len(self.execution_plan)
        self._prepare_from(0)
        self._plan_lifetimes()
        self.prepared = True

    def _prepare_from(self, start: int) -> None:
        """Prepare the plan from step `start` through the next node with a dynamic output."""
        plan, tensors = self.execution_plan, self.tensors
        self._next_to_prepare = len(plan)
        for step in range(start, len(plan)):
            node = self.nodes[plan[step]]
            if node.registration.prepare is not None:
                try:
                    self._call(node, "prepare", node.registration.prepare, self.context, node)
                except KernelError as exc:
                    if not self._sized_as_declared(node):
                        raise
                    self.interpreter.unprepared.append((self.index, node.index, str(exc)))
            dynamic = tuple([tensors[t] for t in node.outputs if t >= 0 and tensors[t].dynamic])
            self._dynamic_outputs[step] = dynamic
            if dynamic:
                self._next_to_prepare = step + 1
                return

    def _sized_as_declared(self, node: Node) -> bool:
        """Whether a node whose prepare failed keeps its file shapes (Interpreter int16_as_declared): an INT16
        tensor among its inputs or outputs, every output shape static."""
        if not self.interpreter.int16_as_declared:
            return False
        ts = [self.tensors[t] for t in (*node.inputs, *node.outputs) if t >= 0]
        outs = [self.tensors[t] for t in node.outputs if t >= 0]
        return any(t.type == "INT16" for t in ts) and all(min(t.shape, default=0) >= 0 and not t.dynamic
                                                           for t in outs)

    def _plan_lifetimes(self) -> None:
        """For each plan step, its node and the arena tensors whose last reader (or writer) it is (_steps)."""
        last: dict[int, int] = {}
        for step, ni in enumerate(self.execution_plan):
            node = self.nodes[ni]
            for t in (*node.inputs, *node.outputs, *node.temporaries, *node.intermediates):
                if t >= 0:
                    last[t] = step
        free_after: list[list[RuntimeTensor]] = [[] for _ in self.execution_plan]
        if not self.interpreter.preserve_all_tensors:
            keep = set(self.inputs) | set(self.outputs)
            for t, step in last.items():
                rt = self.tensors[t]
                if t not in keep and rt.allocation in (ARENA, TEMPORARY):
                    free_after[step].append(rt)
        self._steps = []
        for ni, free in zip(self.execution_plan, free_after):
            node = self.nodes[ni]
            self._steps.append((node, invoker(node.registration.invoke, node.numerics), tuple(free)))

    def reset_variable_tensors(self) -> None:
        """Set every variable tensor to its default: the zero point for INT8, else 0 (ResetVariableTensor)."""
        for t in self.tensors:
            if t.is_variable and not t.is_constant:
                fill = t.zero_point if t.type == "INT8" else 0
                t.data = np.full(t.shape, fill, dtype=t.dtype)

    def invoke(self) -> None:
        if not self.prepared:
            raise InterpreterStateError(
                "Invoke called on model that is not ready: call allocate_tensors() first "
                "(and again after resize_tensor_input)."
            )
        for i in self.inputs:
            t = self.tensors[i]
            if t.data is None and not t.is_constant:
                t.data = np.zeros(t.shape, dtype=t.dtype)
        # Kernels compute in C-like arithmetic: float overflow to inf, 0/0 to NaN and integer wrap are
        # results, not warnings (LiteRT prints nothing). One errstate per subgraph invoke instead of one
        # per kernel call (each costs ~1.5 us).
        with np.errstate(all="ignore"):
            self._invoke_plan()

    def invoke_nested(self) -> None:
        """Invoke from inside a running kernel (WHILE, IF): the caller has prepared the graph and set
        every input, and the outer invoke's errstate already applies."""
        self._invoke_plan()

    def _invoke_plan(self) -> None:
        """The hot loop, with _call inlined: per-node overhead dominates small models (541 node runs
        per invoke of a small LSTM+GRU), so everything a step needs was listed by prepare (_steps)."""
        dynamic_outputs = self._dynamic_outputs
        context = self.context
        errors = context.errors
        next_to_prepare = self._next_to_prepare
        for step, (node, invoke, free) in enumerate(self._steps):
            if step == next_to_prepare:
                self._prepare_from(step)
                next_to_prepare = self._next_to_prepare
            dynamic = dynamic_outputs[step]
            if dynamic:
                shapes = [t.shape for t in dynamic]
            if errors:
                errors.clear()
            try:
                result = invoke(context, node)
            except Exception as exc:
                raise self._node_error(node, "invoke", exc) from exc
            if result is False:
                raise KernelError(self._failure(node, "invoke", "the kernel reported failure"))
            if dynamic and any(t.shape != shape for t, shape in zip(dynamic, shapes)):
                # The nodes downstream see the new shape: prepare them again. As Subgraph::Invoke,
                # only when the node resized an output (tensor_resized_since_op_invoke_).
                next_to_prepare = self._next_to_prepare = step + 1
            for t in free:
                t.unchecked_data = None
