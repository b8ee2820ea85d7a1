"""Operator signatures: what TFLite's version rules see of an operator (op_signature.cc).

An `OpSignature` holds an operator's input and output types, shapes and quantization, its options
and the derived facts op_signature.cc computes (`ext_options`: per-channel quantization, grouped
convolution, sparse weights, ...). `accelsim.runtime.op_versions` maps a signature to a builtin op version.
It only reads the IR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelsim.runtime.ir import Model, Operator, Options, Quantization, Subgraph, Tensor


@dataclass(frozen=True)
class TensorSpec:
    """What the version rules see of one operator input or output."""

    type: str | None  # TensorType name; None for an omitted optional input (index -1)
    shape: tuple[int, ...] = ()
    is_const: bool = False
    is_shape_dynamic: bool = False
    quantization: Quantization | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class OpSignature:
    """An operator as TFLite's version rules see it: types, shapes, options and derived facts.

    The derived facts mirror op_signature.cc's `ext_options`; each is only computed for the
    ops whose rule reads it and is False/None elsewhere.
    """

    op: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    options: Options | None = None
    custom_name: str | None = None
    version: int = 1  # the version the file declares
    # CONV_2D / DEPTHWISE_CONV_2D filter, FULLY_CONNECTED weights, EMBEDDING_LOOKUP table,
    # DEQUANTIZE input or QUANTIZE output carry one scale per channel.
    per_channel_quantized: bool = False
    # CONV_2D whose input has more channels than its filter (groups > 1).
    grouped_convolution: bool = False
    # FULLY_CONNECTED with sparse (TFLite sparsity format) weights.
    sparse_weight: bool = False
    # ADD / ABS: input 0 has quantization parameters; MUL: input 0 or input 1 has them.
    input_quantized: bool = False
    # MUL: (input1 scale, input2 scale, output scale) when all three are quantized.
    mul_scales: tuple[float, float, float] | None = None

    def input_type(self, i: int) -> str | None:
        """Input i's TensorType name (None if omitted or absent)."""
        return self.inputs[i].type if 0 <= i < len(self.inputs) else None

    def output_type(self, i: int) -> str | None:
        """Output i's TensorType name (None if absent)."""
        return self.outputs[i].type if 0 <= i < len(self.outputs) else None

    def input_rank(self, i: int) -> int:
        return self.inputs[i].rank if 0 <= i < len(self.inputs) else 0

    def option(self, name: str, default: Any = None) -> Any:
        """A builtin option's value, or `default` when the op has no such option."""
        if self.options is None:
            return default
        return self.options.get(name, default)

    @property
    def const_inputs(self) -> tuple[bool, ...]:
        return tuple(t.is_const for t in self.inputs)

    def types_are(self, input0: str, input1: str, output0: str) -> bool:
        """Input 0, input 1 and output 0 have exactly these types (the rules' usual test)."""
        return self.input_type(0) == input0 and self.input_type(1) == input1 and self.output_type(0) == output0

    @property
    def is_hybrid(self) -> bool:
        """Float activations with int8 weights and a float output (dynamic-range quantization)."""
        return self.types_are("FLOAT32", "INT8", "FLOAT32")

    @property
    def is_int16x8(self) -> bool:
        """int16 activations with int8 weights (16x8 quantization)."""
        return self.types_are("INT16", "INT8", "INT16")

    @property
    def is_int4_weights(self) -> bool:
        """int8 activations with 4-bit weights."""
        return self.types_are("INT8", "INT4", "INT8")

    @property
    def needs_broadcast(self) -> bool:
        """The first two inputs' shapes differ (op_version.cc's NeedBroadcastForBinaryInputs)."""
        return len(self.inputs) >= 2 and self.inputs[0].shape != self.inputs[1].shape

    @property
    def max_input_rank(self) -> int:
        return max((t.rank for t in self.inputs), default=0)


def _tensor_spec(index: int, subgraph: Subgraph, model: Model) -> TensorSpec:
    if not 0 <= index < len(subgraph.tensors):
        return TensorSpec(None)
    t = subgraph.tensors[index]
    # op_signature.cc: constant means a non-zero buffer index whose buffer holds data.
    is_const = t.buffer != 0 and len(model.buffer_bytes(t.buffer)) > 0
    dynamic = t.shape_signature is not None and -1 in t.shape_signature
    return TensorSpec(t.type, tuple(t.shape), is_const, dynamic, t.quantization)


def _scale_count(t: Tensor) -> int:
    return len(t.quantization.scales) if t.quantization is not None else 0


def _dim(t: Tensor, axis: int) -> int | None:
    return t.shape[axis] if -len(t.shape) <= axis < len(t.shape) else None


def _one_scale_per_slice(t: Tensor, axis: int, *, min_scales: int = 1) -> bool:
    """The tensor has `min_scales` or more scales and exactly one per slice along `axis`."""
    n = _scale_count(t)
    return n >= min_scales and _dim(t, axis) == n


def _derived_facts(op: Operator, subgraph: Subgraph) -> dict[str, Any]:
    """The ext_options op_signature.cc computes for this op (empty for most ops)."""

    def tensor(indices: tuple[int, ...], i: int) -> Tensor | None:
        if i < len(indices) and 0 <= indices[i] < len(subgraph.tensors):
            return subgraph.tensors[indices[i]]
        return None

    inp = [tensor(op.inputs, i) for i in range(3)]
    out0 = tensor(op.outputs, 0)
    name = op.op
    if name == "DEPTHWISE_CONV_2D" and inp[1] is not None:
        # Filter is [1, H, W, channels]: per-channel means one scale per output channel.
        return {"per_channel_quantized": _one_scale_per_slice(inp[1], 3)}
    if name == "CONV_2D" and inp[1] is not None:
        facts = {"per_channel_quantized": _one_scale_per_slice(inp[1], 0)}
        if inp[0] is not None and len(inp[0].shape) == 4 and len(inp[1].shape) == 4:
            facts["grouped_convolution"] = inp[0].shape[3] != inp[1].shape[3]
        return facts
    if name == "FULLY_CONNECTED" and inp[1] is not None:
        return {
            "sparse_weight": inp[1].sparsity is not None,
            "per_channel_quantized": _one_scale_per_slice(inp[1], 0),
        }
    if name == "EMBEDDING_LOOKUP" and inp[1] is not None:
        return {"per_channel_quantized": _one_scale_per_slice(inp[1], 0, min_scales=2)}
    if name == "DEQUANTIZE" and inp[0] is not None and inp[0].quantization is not None:
        axis = inp[0].quantization.quantized_dimension
        return {"per_channel_quantized": _one_scale_per_slice(inp[0], axis, min_scales=2)}
    if name == "QUANTIZE" and out0 is not None and out0.quantization is not None:
        axis = out0.quantization.quantized_dimension
        return {"per_channel_quantized": _one_scale_per_slice(out0, axis, min_scales=2)}
    # Upstream asks whether the quantization table exists; the IR keeps one only when it holds
    # scales or a range, so an empty table (which upstream would count) reads as unquantized here.
    if name in ("ADD", "ABS") and inp[0] is not None:
        return {"input_quantized": inp[0].quantization is not None}
    if name == "MUL" and inp[1] is not None and out0 is not None:
        quants = (inp[0].quantization, inp[1].quantization, out0.quantization)
        facts = {"input_quantized": quants[0] is not None or quants[1] is not None}
        if all(q is not None and q.scales for q in quants):
            facts["mul_scales"] = tuple(float(q.scales[0]) for q in quants)
        return facts
    return {}


def operator_signature(op: Operator, subgraph: Subgraph, model: Model) -> OpSignature:
    """The signature of `op`, an operator of `subgraph` (one of `model`'s subgraphs)."""
    return OpSignature(
        op=op.op,
        inputs=tuple(_tensor_spec(i, subgraph, model) for i in op.inputs),
        outputs=tuple(_tensor_spec(i, subgraph, model) for i in op.outputs),
        options=op.options,
        custom_name=op.custom_code if op.op == "CUSTOM" else None,
        version=op.version,
        **_derived_facts(op, subgraph),
    )


def op_signature(model: Model, subgraph_index: int, operator_index: int) -> OpSignature:
    """The signature of operator `operator_index` of subgraph `subgraph_index`."""
    subgraph = model.subgraphs[subgraph_index]
    return operator_signature(subgraph.operators[operator_index], subgraph, model)
