"""A LiteRT-compatible interpreter over the model IR.

The public methods and detail dicts follow ``ai_edge_litert.interpreter.Interpreter``
so that LiteRT is a drop-in oracle in tests. Inside, each subgraph has its own
tensors, nodes and execution plan (`accelsim.runtime.subgraph.SubgraphRuntime`); kernels see a
`Context` and a `Node` the way TFLite kernels see TfLiteContext and TfLiteNode.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from operator import index as _as_index
from typing import Any

import numpy as np

from accelsim.runtime.errors import (
    InterpreterStateError,
    ModelError,
    OpResolutionError,
)
from accelsim.runtime.ir import Model, Operator, tensor_type_for_dtype
from accelsim.runtime.read import DEFAULT_MAX_TENSOR_BYTES, load_model
from accelsim.runtime.resolver import MutableOpResolver, Registration, default_resolver
from accelsim.runtime.subgraph import Node, SubgraphRuntime
from accelsim.runtime.tensor import ARENA, RuntimeTensor

log = logging.getLogger(__name__)

_INT32_MAX = 2**31 - 1


class Interpreter:
    """Runs a .tflite model with NumPy kernels; LiteRT's Python API.

    Args:
        model_path: path of a .tflite file.
        model_content: the file's bytes.
        experimental_delegates: delegates applied in order after construction.
        op_resolver: a `MutableOpResolver` (default: every builtin kernel, plus the custom kernels of an
            enclosing `accelsim.runtime.resolver.extra_custom_ops` block).
        num_threads: accepted for LiteRT compatibility; kernels are single-threaded.
        experimental_preserve_all_tensors: keep every intermediate for `get_tensor`.
        model: an already-parsed `accelsim.runtime.ir.Model` instead of a path or bytes.
        reference: run every op's plain reference function (`Registration.reference`, the
            specification its fast kernel implements) instead of the kernel's invoke.
        shapes_only: prepare gives every node its shapes and checks them, but kernels skip their
            numeric preparation (tables, folded weights, requantization stages), which only
            invoke needs (`Context.shapes_only`): for cost-only simulation, which reads shapes
            and work. Such an interpreter cannot invoke.
        int16_as_declared: with `shapes_only`, a node with an INT16 tensor whose kernel refuses it at
            prepare (TFLite has the int16 kernel, this runtime does not) keeps the shapes the file
            declares instead of failing; its index and the refusal go to `unprepared` (subgraph,
            node, reason). For costing 16-bit-activation graphs (accelsim.workloads' a16w4 LLMs).

    Raises:
        ModelError: the model cannot be read.
        OpResolutionError: a builtin (op, version) has no kernel in the resolver, or, with
            `reference`, an op has no reference function.
    """

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None,
                 op_resolver: MutableOpResolver | None = None, num_threads: int | None = None,
                 experimental_preserve_all_tensors: bool = False, *, model: Model | None = None,
                 reference: bool = False, shapes_only: bool = False, int16_as_declared: bool = False):
        sources = [s is not None for s in (model_path, model_content, model)]
        if sum(sources) != 1:
            raise ValueError("give exactly one of model_path, model_content or model")
        if num_threads is not None and num_threads < 1 and num_threads != -1:
            raise ValueError(f"num_threads should be >= 1 or -1, got {num_threads}")
        if model is None:
            model = load_model(model_path if model_path is not None else model_content)
        self.model = model
        self.preserve_all_tensors = bool(experimental_preserve_all_tensors)
        self.reference = bool(reference)
        self.shapes_only = bool(shapes_only)
        if int16_as_declared and not shapes_only:
            raise ValueError("int16_as_declared sizes nodes without preparing them: it needs shapes_only=True")
        self.int16_as_declared = bool(int16_as_declared)
        self.unprepared: list[tuple[int, int, str]] = []
        self.op_resolver = op_resolver if op_resolver is not None else default_resolver()
        # Shared by every subgraph, as TFLite's Interpreter owns them (resource::ResourceMap):
        # resource ids by (container, shared_name), resource variables by id, and the
        # init subgraphs CALL_ONCE has already run.
        self.resource_ids: dict[tuple[str, str], int] = {}
        self.resources: dict[int, Any] = {}
        self.initialized_subgraphs: set[int] = set()
        self._subgraphs = [SubgraphRuntime(self, i, self._resolve) for i in range(len(model.subgraphs))]
        try:
            for sg in self._subgraphs:
                sg.init_nodes()
        except Exception:
            self.close()  # every init that ran gets its free
            raise
        self._allocated = False
        self.delegates: list[Any] = []
        for delegate in experimental_delegates or ():
            self.modify_graph_with_delegate(delegate)

    # -- construction helpers ------------------------------------------------------------

    def _resolve(self, op: Operator, subgraph: int, index: int) -> Registration | None:
        reg = self._find_kernel(op, subgraph, index)
        if reg is None or not self.reference:
            return reg
        if reg.reference is None:
            where = f"subgraph {subgraph} operator {index}" if subgraph else f"operator {index}"
            raise OpResolutionError(
                f"reference=True, but {op.display_name} ({where}) has no reference function; ops with "
                f"references: {', '.join(self.op_resolver.reference_ops())}"
            )
        return dataclasses.replace(reg, invoke=reg.reference)

    def _find_kernel(self, op: Operator, subgraph: int, index: int) -> Registration | None:
        if op.op == "CUSTOM":
            name = op.custom_code or ""
            reg = self.op_resolver.find_custom(name, op.version)
            versions = self.op_resolver.custom_versions(name)
            if reg is None and versions:
                # The name is known but not this version: a newer model on an older kernel.
                raise OpResolutionError(
                    f"Didn't find custom op for name '{name}' version '{op.version}'; registered "
                    f"versions: {versions}. Are you using an old kernel with a newer model?\n"
                    f"Registration failed (subgraph {subgraph} operator {index})."
                )
            # An unknown custom name is reported at prepare time (allocate_tensors), as TFLite does.
            return reg
        try:
            return self.op_resolver.resolve_builtin(op.op, op.version)
        except OpResolutionError as exc:
            where = f"subgraph {subgraph} " if subgraph else ""
            raise OpResolutionError(f"{exc}\nRegistration failed ({where}operator {index}).") from None

    @property
    def primary(self) -> SubgraphRuntime:
        return self._subgraphs[0]

    def subgraph(self, index: int) -> SubgraphRuntime:
        if not 0 <= index < len(self._subgraphs):
            raise ValueError(f"subgraph index {index} out of range [0, {len(self._subgraphs)})")
        return self._subgraphs[index]

    def num_subgraphs(self) -> int:
        return len(self._subgraphs)

    def modify_graph_with_delegate(self, delegate) -> None:
        """Let `delegate` take nodes of the primary subgraph (TfLiteDelegate::Prepare)."""
        delegate.apply(self)
        self.delegates.append(delegate)
        self._allocated = False
        self.primary.prepared = False

    # -- LiteRT API ----------------------------------------------------------------------

    def allocate_tensors(self) -> None:
        """Run every kernel's prepare (shape inference, checks, precomputation)."""
        # Subgraph::AllocateTensors resets the variable tensors when it really (re)allocates: the
        # first time and after a resize or a delegate, not when called again with nothing changed.
        reallocating = not self._allocated
        for sg in self._subgraphs:
            sg.prepared = False
        self.primary.prepare()
        for sg in self._subgraphs[1:]:
            sg.prepare()
        if reallocating:
            self.reset_all_variables()
        self._allocated = True

    def invoke(self) -> None:
        if self.shapes_only:
            raise InterpreterStateError("Invoke called on an interpreter built with shapes_only=True: its kernels "
                                        "skipped their numeric preparation; build one without it to invoke")
        if not self._allocated:
            raise InterpreterStateError(
                "Invoke called on model that is not ready: call allocate_tensors() first "
                "(and again after resize_tensor_input)."
            )
        self.primary.invoke()

    def reset_all_variables(self) -> None:
        """Reset every subgraph's variable tensors (LiteRT's reset_all_variables); resource variables stay."""
        for sg in self._subgraphs:
            sg.reset_variable_tensors()

    def _tensor_or_error(self, tensor_index, subgraph_index: int = 0) -> RuntimeTensor:
        tensors = self.subgraph(subgraph_index).tensors
        try:
            idx = _as_index(tensor_index)  # as LiteRT: 1.5 or "0" is a TypeError, not tensor 1 or 0
        except TypeError:
            raise TypeError(f"tensor index must be an integer, got {tensor_index!r}") from None
        if not 0 <= idx < len(tensors):
            raise ValueError(f"Invalid tensor index {idx} exceeds max tensor index {len(tensors)}")
        return tensors[idx]

    def set_tensor(self, tensor_index, value) -> None:
        """Copy `value` into a tensor; dtype and shape must match exactly (as LiteRT checks)."""
        t = self._tensor_or_error(tensor_index)
        if t.is_constant:
            raise ValueError(f"Cannot set tensor: tensor {t.index} ({t.name!r}) is a constant of the model")
        if not self._allocated:
            raise ValueError("Cannot set tensor: Tensor is unallocated. Try calling allocate_tensors() first")
        arr = np.array(value, copy=True, order="C")
        role = f"input {self.primary.inputs.index(t.index)}" if t.index in self.primary.inputs else f"tensor {t.index}"
        if arr.dtype != t.dtype:
            got = _type_name(arr.dtype)
            raise ValueError(
                f"Cannot set tensor: Got value of type {got} but expected type {t.type} for {role}, name: {t.name} "
            )
        if arr.ndim != len(t.shape):
            raise ValueError(
                f"Cannot set tensor: Dimension mismatch. Got {arr.ndim} but expected {len(t.shape)} for {role}."
            )
        for d, (got, want) in enumerate(zip(arr.shape, t.shape)):
            if got != want:
                raise ValueError(
                    f"Cannot set tensor: Dimension mismatch. Got {got} but expected {want} for dimension {d} of {role}."
                )
        t.data = arr

    def get_tensor(self, tensor_index, subgraph_index: int = 0) -> np.ndarray:
        """A copy of a tensor's value."""
        t = self._tensor_or_error(tensor_index, subgraph_index)
        if t.data is None:
            if t.allocation == ARENA and self._allocated:
                raise ValueError(
                    f"tensor {t.index} ({t.name!r}) is an intermediate whose memory was reused; "
                    "construct the Interpreter with experimental_preserve_all_tensors=True to read it"
                )
            return np.zeros(t.shape, dtype=t.dtype)
        return np.array(t.data, copy=True)

    def tensor(self, tensor_index) -> Callable[[], np.ndarray]:
        """A function returning a live view of the tensor (LiteRT's zero-copy accessor)."""
        t = self._tensor_or_error(tensor_index)

        def view() -> np.ndarray:
            if t.data is None:
                t.data = np.zeros(t.shape, dtype=t.dtype)
            return t.data

        return view

    def resize_tensor_input(self, input_index, tensor_size, strict: bool = False) -> None:
        """Change an input's shape; call allocate_tensors() again before invoke()."""
        t = self._tensor_or_error(input_index)
        if t.index not in self.primary.inputs:
            raise ValueError(f"tensor {t.index} ({t.name!r}) is not an input of the model")
        sizes = np.asarray(tensor_size)
        if sizes.ndim > 1:
            raise ValueError(f"Shape should be 1D instead of {sizes.ndim}.")
        shape = tuple(int(d) for d in sizes.reshape(-1))
        if any(d < 0 for d in shape):
            raise ValueError(f"Cannot resize input {t.index} ({t.name!r}) to {list(shape)}: negative dimension")
        # TFLite dims are int32, and no tensor may exceed what load_model accepts (it would be allocated at invoke).
        nbytes = int(np.prod(shape, dtype=object)) * t.dtype.itemsize
        if any(d > _INT32_MAX for d in shape) or nbytes > DEFAULT_MAX_TENSOR_BYTES:
            raise ValueError(f"Cannot resize input {t.index} ({t.name!r}) to {list(shape)}: dimensions must fit "
                             f"in int32 and the tensor in {DEFAULT_MAX_TENSOR_BYTES} bytes (needs {nbytes})")
        if strict:
            sig = t.shape_signature
            if len(sig) != len(shape) or any(s != -1 and s != d for s, d in zip(sig, shape)):
                raise ValueError(
                    f"ResizeInputTensorStrict only allows mutating unknown dimensions identified by -1; "
                    f"tensor {t.index} ({t.name!r}) has signature {list(sig)}, asked {list(shape)}"
                )
        if shape != t.shape:
            t.shape = shape
            t.data = None
        self._allocated = False
        self.primary.prepared = False

    def _details(self, t: RuntimeTensor) -> dict[str, Any]:
        q = t.quantization
        scales = np.asarray(q.scales if q else (), dtype=np.float32)
        zps = np.asarray(q.zero_points if q else (), dtype=np.int32)
        legacy = (float(scales[0]), int(zps[0]) if len(zps) else 0) if len(scales) == 1 else (0.0, 0)
        return {
            "name": t.name,
            "index": t.index,
            "shape": np.asarray(t.shape, dtype=np.int32),
            "shape_signature": np.asarray(t.shape_signature, dtype=np.int32),
            "dtype": t.dtype.type,
            "quantization": legacy,
            "quantization_parameters": {
                "scales": scales,
                "zero_points": zps,
                "quantized_dimension": int(q.quantized_dimension) if q else 0,
                "block_size": 0,
            },
            "sparsity_parameters": _sparsity_details(t.sparsity),
        }

    def get_input_details(self) -> list[dict[str, Any]]:
        return [self._details(self.primary.tensors[i]) for i in self.primary.inputs]

    def get_output_details(self) -> list[dict[str, Any]]:
        return [self._details(self.primary.tensors[i]) for i in self.primary.outputs]

    def get_tensor_details(self, subgraph_index: int = 0) -> list[dict[str, Any]]:
        sg = self.subgraph(subgraph_index)
        return [self._details(t) for t in sg.tensors[: len(sg.ir.tensors)]]

    def get_delegation_report(self) -> list[dict[str, Any]]:
        """One row per original node of the primary subgraph: which delegate runs it, or why none does.

        Row keys: index, op, version, claimed, delegate (name or None), partition (the delegate's
        partition ordinal or None), delegate_node (index or None), reason (None when claimed,
        else every applied delegate's reason joined as "Name: reason; ..."), reasons
        ({delegate name: reason}). Reasons come from each applied delegate's
        `rejection_reasons(interpreter)` when it has one.
        """
        graph = self.primary
        owners: dict[int, Node] = {}
        for ni in graph.execution_plan:
            node = graph.nodes[ni]
            if node.delegate is not None:
                for replaced in getattr(node.params, "nodes_to_replace", ()):
                    owners[replaced] = node
        per_delegate = []
        for d in dict.fromkeys(self.delegates):
            reasons_of = getattr(d, "rejection_reasons", None)
            if reasons_of is not None:
                per_delegate.append((d.name(), reasons_of(self)))
        rows = []
        for ni in range(len(graph.ir.operators)):
            node = graph.nodes[ni]
            owner = owners.get(ni)
            reasons = {name: why[ni] for name, why in per_delegate if ni in why}
            if owner is not None:
                reason = None
            elif reasons:
                reason = "; ".join(f"{k}: {v}" for k, v in reasons.items())
            else:
                reason = "no delegate was applied" if not self.delegates else "not claimed by any delegate"
            rows.append({
                "index": ni,
                "op": node.op_name,
                "version": node.version,
                "claimed": owner is not None,
                "delegate": owner.registration.custom_name if owner is not None else None,
                "partition": getattr(owner.params, "partition", None) if owner is not None else None,
                "delegate_node": owner.index if owner is not None else None,
                "reason": reason,
                "reasons": reasons,
            })
        return rows

    def execution_plan(self) -> list[int]:
        """The node indices the primary subgraph runs, in order (delegated nodes are not in it)."""
        return list(self.primary.execution_plan)

    def _get_ops_details(self) -> list[dict[str, Any]]:
        """One dict per node, as LiteRT lists them: original nodes, then delegate nodes ('DELEGATE')."""
        sg = self.primary
        out = []
        for node in sg.nodes:
            out.append({
                "index": node.index,
                "op_name": node.op_name,
                "inputs": np.asarray(node.inputs, dtype=np.int32),
                "outputs": np.asarray(node.outputs, dtype=np.int32),
                "operand_types": [sg.tensors[i].dtype.type for i in node.inputs if i >= 0],
                "result_types": [sg.tensors[i].dtype.type for i in node.outputs if i >= 0],
            })
        return out

    def get_signature_list(self) -> dict[str, dict[str, list[str]]]:
        return {
            sd.key: {"inputs": [n for n, _ in sd.inputs], "outputs": [n for n, _ in sd.outputs]}
            for sd in self.model.signature_defs
        }

    def get_signature_runner(self, signature_key: str | None = None) -> SignatureRunner:
        sigs = self.model.signature_defs
        if not sigs:
            raise ValueError("SignatureDef signature_key is None and model has no signatures")
        if signature_key is None:
            if len(sigs) > 1:
                raise ValueError(
                    "SignatureDef signature_key is None and model has "
                    f"{len(sigs)} Signatures. None is only allowed when the model has 1 SignatureDef"
                )
            return SignatureRunner(self, sigs[0])
        for sd in sigs:
            if sd.key == signature_key:
                return SignatureRunner(self, sd)
        raise ValueError(
            f"Invalid signature_key provided: {signature_key!r}; signatures: {[s.key for s in sigs]}"
        )

    def close(self) -> None:
        """Free every node's user data (each init is matched by one free)."""
        for sg in getattr(self, "_subgraphs", ()):
            for node in sg.nodes:
                sg.free_node(node)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # never raise from a finalizer
            log.debug("error while freeing nodes", exc_info=True)


class SignatureRunner:
    """Calls one SignatureDef with named inputs and returns named outputs."""

    def __init__(self, interpreter: Interpreter, signature):
        self._interpreter = interpreter
        self._sig = signature
        self._graph = interpreter.subgraph(signature.subgraph_index)
        self._inputs = dict(signature.inputs)
        self._outputs = dict(signature.outputs)

    def get_input_details(self) -> dict[str, dict[str, Any]]:
        return {n: self._interpreter._details(self._graph.tensors[i]) for n, i in self._inputs.items()}

    def get_output_details(self) -> dict[str, dict[str, Any]]:
        return {n: self._interpreter._details(self._graph.tensors[i]) for n, i in self._outputs.items()}

    def __call__(self, **kwargs: Any) -> dict[str, np.ndarray]:
        missing = set(self._inputs) - set(kwargs)
        unknown = set(kwargs) - set(self._inputs)
        if missing or unknown:
            raise ValueError(
                f"signature {self._sig.key!r} takes inputs {sorted(self._inputs)}; "
                f"missing {sorted(missing)}, unknown {sorted(unknown)}"
            )
        graph = self._graph
        resized = False
        for name, value in kwargs.items():
            t = graph.tensors[self._inputs[name]]
            arr = np.asarray(value)
            if arr.shape != t.shape:
                t.shape = arr.shape
                resized = True
        if resized or not graph.prepared:
            if graph.index == 0:
                self._interpreter.allocate_tensors()
            else:
                graph.prepare()
        for name, value in kwargs.items():
            t = graph.tensors[self._inputs[name]]
            arr = np.array(value, copy=True)
            if arr.dtype != t.dtype:
                raise ValueError(
                    f"Cannot set tensor: Got value of type {_type_name(arr.dtype)} but expected type "
                    f"{t.type} for input {name!r}"
                )
            t.data = arr
        graph.invoke()
        return {n: np.array(graph.tensors[i].data, copy=True) for n, i in self._outputs.items()}


def _type_name(dtype) -> str:
    if np.dtype(dtype).kind in "OSU":  # LiteRT calls every str, bytes or object array STRING
        return "STRING"
    try:
        return tensor_type_for_dtype(dtype)
    except ModelError:
        return str(np.dtype(dtype)).upper()


def _sparsity_details(s) -> dict[str, Any]:
    if s is None:
        return {}
    dims = []
    for d in s.dim_metadata:
        if d.format == "DENSE":
            dims.append({"format": 0, "dense_size": d.dense_size})
        else:
            dims.append({
                "format": 1,
                "array_segments": np.asarray(d.array_segments, dtype=np.int32),
                "array_indices": np.asarray(d.array_indices, dtype=np.int32),
            })
    return {
        "traversal_order": np.asarray(s.traversal_order, dtype=np.int32),
        "block_map": np.asarray(s.block_map, dtype=np.int32),
        "dim_metadata": dims,
    }
