"""TFLite operator versioning: op signatures, builtin op versions, minimum runtime versions.

Follows the converter's rules (tflite/converter/tools/versioning/ in LiteRT, a copy of
tensorflow/compiler/mlir/lite/tools/versioning/): `op_signature.cc` says which facts an
operator's version depends on, `op_version.cc` maps them to a version, and
`runtime_version.cc` names the TFLite release that first runs each (op, version).

This module only reads the IR, so `accelsim.runtime.write` may import it (for
`save_model(..., stamp_versions=True)`) without an import cycle.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelsim.runtime.ir import Model, Operator, Options, Quantization, Subgraph, Tensor

logger = logging.getLogger(__name__)

MIN_RUNTIME_VERSION_KEY = "min_runtime_version"
# The converter reserves a 16-byte buffer for the version string and pads it with NULs.
_MIN_RUNTIME_VERSION_BYTES = 16

# Schema enum values the rules compare against.
_LSTM_KERNEL_FULL = 0
_LSTM_KERNEL_BASIC = 1
_FC_WEIGHTS_SHUFFLED4X16INT8 = 1

_FP8 = "FLOAT8_E4M3FN|FLOAT8_E5M2"
_FP8_TYPES = frozenset(_FP8.split("|"))


# ---------------------------------------------------------------------------
# Signatures.


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


# ---------------------------------------------------------------------------
# Builtin operator versions (op_version.cc's GetBuiltinOperatorVersion).

Rule = Callable[[OpSignature], int]


def _input(i: int) -> Callable[[OpSignature], tuple[str | None, ...]]:
    return lambda sig: (sig.input_type(i),)


_INPUT0 = _input(0)


def _input_and_output(sig: OpSignature) -> tuple[str | None, ...]:
    return (sig.input_type(0), sig.output_type(0))


def _ladder(*steps: tuple[str, int], default: int = 1,
            types: Callable[[OpSignature], tuple[str | None, ...]] = _INPUT0) -> Rule:
    """A rule returning the version of the first step that names one of the op's types.

    Each step is ("TYPE|TYPE", version); the types looked at are input 0's unless `types`
    picks others (any of them may match).
    """
    table = [(frozenset(names.split("|")), version) for names, version in steps]

    def rule(sig: OpSignature) -> int:
        seen = types(sig)
        for names, version in table:
            if any(t in names for t in seen):
                return version
        return default

    return rule


def _conv_2d(sig: OpSignature) -> int:
    # upstream tests `quantized_bias_type` after converting it to a TfLiteType, where even the
    # schema default FLOAT32 is non-zero; we read "set to a non-default bias type" instead.
    if sig.is_int16x8 and sig.option("quantized_bias_type", 0):
        return 8
    if sig.grouped_convolution:
        return 6
    # upstream checks output 1 (which CONV_2D never has) in this int16 test; kept as written.
    if sig.input_type(0) == "INT16" and sig.input_type(1) == "INT16" and sig.output_type(1) == "INT16":
        return 4
    if sig.types_are("INT8", "INT8", "INT8"):
        return 3
    if sig.is_int4_weights:
        return 7
    if sig.is_hybrid:
        return 5 if sig.per_channel_quantized else 2
    return 1


def _depthwise_conv_2d(sig: OpSignature) -> int:
    # As for CONV_2D, upstream's int16 test reads output 1.
    if sig.input_type(0) == "INT16" and sig.input_type(1) == "INT16" and sig.output_type(1) == "INT16":
        return 5
    if sig.is_hybrid:
        return 6 if sig.per_channel_quantized else 4
    if sig.types_are("INT8", "INT8", "INT8"):
        return 3
    if sig.is_int4_weights:
        return 7
    if sig.option("dilation_w_factor", 1) != 1 or sig.option("dilation_h_factor", 1) != 1:
        return 2
    return 1


def _embedding_lookup(sig: OpSignature) -> int:
    if sig.input_type(1) == "INT4" or sig.per_channel_quantized:
        return 4
    if sig.input_type(1) == "INT2":
        return 5
    return 1


def _fully_connected(sig: OpSignature) -> int:
    if sig.input_type(1) == "INT2":
        return 14
    if sig.types_are("INT16", "INT4", "INT16"):
        return 13
    if sig.is_hybrid and sig.per_channel_quantized:
        return 12
    if sig.is_int16x8 and sig.option("quantized_bias_type", 0):  # see _conv_2d
        return 11
    if sig.sparse_weight:
        return 8
    if sig.types_are("INT16", "INT16", "INT16"):
        return 7
    # The count includes omitted inputs: a bias given as -1 is still an input.
    if len(sig.inputs) == 2:
        return 6
    if sig.option("keep_num_dims", False):
        return 5
    if sig.types_are("INT8", "INT8", "INT8"):
        return 4
    if sig.is_int4_weights:
        return 10
    if sig.is_hybrid:
        return 9 if sig.option("asymmetric_quantize_inputs", False) else 3
    if sig.option("weights_format", 0) == _FC_WEIGHTS_SHUFFLED4X16INT8:
        return 2
    return 1


def _gather(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 in _FP8_TYPES:
        return 8
    if t0 == "INT4":
        return 7
    if sig.input_type(1) == "INT16":
        return 6
    if sig.option("batch_dims", 0) != 0:
        return 5
    return {"INT16": 4, "BOOL": 3, "INT8": 2}.get(t0, 1)


def _svdf(sig: OpSignature) -> int:
    if sig.input_type(0) == "INT8":
        return 3
    if sig.is_hybrid:
        return 4 if sig.option("asymmetric_quantize_inputs", False) else 2
    return 1


def _mul(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 == "FLOAT16":
        return 8
    if (t0 == "INT16" and not sig.input_quantized) or t0 == "UINT32":
        return 7
    if t0 in ("COMPLEX64", "INT64", "INT16"):
        return {"COMPLEX64": 6, "INT64": 5, "INT16": 4}[t0]
    # Version 3 handles a rescale (input1 * input2 / output scale) of 1 or more.
    if sig.mul_scales is not None and all(sig.mul_scales):
        s1, s2, so = sig.mul_scales
        if s1 * s2 / so >= 1.0:
            return 3
    return 2 if t0 == "INT8" else 1


def _pool_2d(sig: OpSignature) -> int:
    if sig.input_type(0) == "INT16" and sig.output_type(0) == "INT16":
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _transpose(sig: OpSignature) -> int:
    t0, rank = sig.input_type(0), sig.input_rank(0)
    if t0 == "FLOAT16":
        return 9
    if rank > 6 or t0 == "BFLOAT16":
        return 8
    if t0 == "INT4":
        return 7
    if rank > 5:
        return 6
    if t0 == "INT16":
        return 5
    if rank > 4:
        return 4
    return {"BOOL": 3, "INT8": 2}.get(t0, 1)


def _transpose_conv(sig: OpSignature) -> int:
    if sig.is_int16x8 and sig.option("quantized_bias_type", 0):  # see _conv_2d
        return 5
    if sig.option("fused_activation_function", 0):
        return 4
    if len(sig.inputs) == 4 and sig.input_type(3) is not None:
        return 3
    return 2 if sig.input_type(1) == "INT8" else 1


def _lstm(sig: OpSignature) -> int:
    full = sig.option("kernel_type", _LSTM_KERNEL_FULL) == _LSTM_KERNEL_FULL
    weights = sig.input_type(2)
    if full and sig.input_type(0) == "INT16" and weights == "INT8" and sig.output_type(0) == "INT16":
        return 5
    if full and sig.input_type(0) == "FLOAT32" and weights == "INT8" and sig.output_type(0) == "FLOAT32":
        return 4 if sig.option("asymmetric_quantize_inputs", False) else 3
    return 2 if sig.option("kernel_type") == _LSTM_KERNEL_BASIC else 1


def _unidirectional_sequence_lstm(sig: OpSignature) -> int:
    weights = sig.input_type(2)
    if sig.input_type(0) == "INT16" and weights == "INT8" and sig.output_type(0) == "INT16":
        return 5
    if sig.option("diagonal_recurrent_tensors", False):
        return 4
    if sig.input_type(0) == "FLOAT32" and weights == "INT8" and sig.output_type(0) == "FLOAT32":
        return 3 if sig.option("asymmetric_quantize_inputs", False) else 2
    return 1


def _hybrid_rnn(sig: OpSignature) -> int:
    """RNN, sequence RNNs and the bidirectional LSTM: int8 weights with a float output."""
    if sig.input_type(1) == "INT8" and sig.output_type(0) == "FLOAT32":
        return 3 if sig.option("asymmetric_quantize_inputs", False) else 2
    return 1


def _slice(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 in ("FLOAT16", "INT4", "UINT32"):
        return {"FLOAT16": 8, "INT4": 7, "UINT32": 6}[t0]
    if sig.input_rank(0) > 4:
        return 5
    return {"INT16": 4, "STRING": 3, "INT8": 2}.get(t0, 1)


def _unpack(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 in _FP8_TYPES:
        return 6
    if t0 in ("INT8", "UINT8"):
        return 2
    if t0 == "BOOL":
        return 3
    if t0 == "INT16" and sig.output_type(0) == "INT16":
        return 4
    return 5 if t0 in ("FLOAT16", "BFLOAT16") else 1


def _dequantize(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 in _FP8_TYPES:
        return 9
    by_type = {"UINT4": 8, "INT2": 7, "INT4": 6, "INT16": 3, "FLOAT16": 3}
    if t0 in by_type:
        return by_type[t0]
    if t0 == "INT8":
        return 5 if sig.per_channel_quantized else 2
    return 1


def _quantize(sig: OpSignature) -> int:
    types = (sig.input_type(0), sig.output_type(0))
    if "UINT4" in types:
        return 5
    if "INT4" in types:
        return 4
    if sig.per_channel_quantized:
        return 3
    return 2 if sig.output_type(0) == "INT16" else 1


def _abs(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 == "INT32":
        return 5
    if t0 == "INT16":
        return 3 if sig.input_quantized else 4
    return 2 if t0 in ("INT8", "UINT8") else 1


def _strided_slice(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if sig.option("offset", False):
        return 8
    if t0 == "UINT32":
        return 7
    if sig.option("ellipsis_mask", 0) != 0 or sig.option("new_axis_mask", 0) != 0:
        return 6
    if t0 == "STRING":
        return 5
    if sig.input_rank(0) > 4:
        return 4
    return {"BOOL": 3, "INT8": 2}.get(t0, 1)


def _resize_bilinear(sig: OpSignature) -> int:
    if sig.input_type(0) == "INT16":
        return 4
    if sig.option("half_pixel_centers", False):
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _resize_nearest_neighbor(sig: OpSignature) -> int:
    if sig.input_type(0) == "INT16":
        return 4
    if sig.option("half_pixel_centers", False) or sig.option("align_corners", False):
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _maximum_minimum(sig: OpSignature) -> int:
    if sig.input_type(0) == "INT16" and sig.output_type(0) == "INT16":
        return 4
    if sig.needs_broadcast and sig.max_input_rank > 4:
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _pack(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 in _FP8_TYPES:
        return 5
    if t0 == "INT8":
        return 2
    if t0 == "INT16" and sig.output_type(0) == "INT16":
        return 3
    return 4 if t0 == "UINT32" else 1


def _space_batch_nd(sig: OpSignature) -> int:
    if sig.input_type(0) == "INT16":
        return 4
    if sig.input_rank(0) != 4:
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _add(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 == "FLOAT16":
        return 6
    if t0 == "INT16" and not sig.input_quantized:
        return 5
    if t0 == "INT64":
        return 4
    if t0 == "INT16" and sig.output_type(0) == "INT16" and not sig.option("pot_scale_int16", True):
        return 3
    return 2 if t0 == "INT8" else 1


def _sub(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 == "INT16" and sig.output_type(0) == "INT16" and not sig.option("pot_scale_int16", True):
        return 5
    if t0 == "INT64":
        return 4
    if sig.needs_broadcast and sig.max_input_rank > 4:
        return 3
    return 2 if t0 == "INT8" else 1


def _gather_nd(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 in _FP8_TYPES:
        return 6
    if t0 == "BOOL":
        return 5
    if sig.input_type(1) == "INT16":
        return 4
    return {"INT16": 3, "STRING": 2}.get(t0, 1)


def _div(sig: OpSignature) -> int:
    return 2 if sig.needs_broadcast and sig.max_input_rank > 4 else 1


def _tanh_logistic(sig: OpSignature) -> int:
    if sig.input_type(0) == "INT16" and sig.output_type(0) == "INT16":
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _batch_matmul(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 == "INT16":
        return 3
    if t0 == "INT8":
        return 2
    if sig.is_hybrid and sig.option("asymmetric_quantize_inputs", False):
        return 4
    return 1


def _pad(sig: OpSignature) -> int:
    t0 = sig.input_type(0)
    if t0 in _FP8_TYPES:
        return 6
    if t0 == "BOOL":
        return 5
    if sig.input_rank(0) > 4:
        return 4
    return {"INT16": 3, "INT8": 2}.get(t0, 1)


def _select(sig: OpSignature) -> int:
    # Input 0 is the condition, so the int8 test below (as upstream writes it) sees its type.
    if sig.input_type(0) == "UINT32":
        return 4
    if any(sig.input_rank(i) == 5 for i in range(3)):
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _topk_v2(sig: OpSignature) -> int:
    if "INT16" in (sig.input_type(0), sig.input_type(1), sig.output_type(1)):
        return 3
    return 2 if sig.input_type(0) == "INT8" else 1


def _dynamic_update_slice(sig: OpSignature) -> int:
    by_type = {"BFLOAT16": 6, "INT4": 5, "INT16": 4, "FLOAT16": 3}
    if sig.input_type(0) in by_type:
        return by_type[sig.input_type(0)]
    return 2 if sig.input_type(2) == "INT64" else 1


def _cast(sig: OpSignature) -> int:
    ends = _input_and_output(sig)
    if any(t in _FP8_TYPES for t in ends):
        return 9
    if "INT2" in ends or "UINT4" in ends:
        return 8
    if "BFLOAT16" in ends:
        return 7
    if ends == ("INT4", "FLOAT32"):
        return 6
    return _ladder(("FLOAT64|FLOAT16", 5), ("UINT16", 4), ("INT8", 3), ("UINT32", 2), types=_input_and_output)(sig)


def _where(sig: OpSignature) -> int:
    return 1 if sig.input_type(0) == "BOOL" else 2


_INT8_ONLY = _ladder(("INT8", 2))
_INT16_INT8 = _ladder(("INT16", 3), ("INT8", 2))

_RULES: dict[str, Rule] = {
    "CONV_2D": _conv_2d,
    "DEPTHWISE_CONV_2D": _depthwise_conv_2d,
    "EMBEDDING_LOOKUP": _embedding_lookup,
    "FAKE_QUANT": lambda sig: 2 if sig.option("narrow_range", False) else 1,
    "FULLY_CONNECTED": _fully_connected,
    "GATHER": _gather,
    "SVDF": _svdf,
    "SIGN": _ladder(("INT32", 2)),
    "SIN": _ladder(("FLOAT16", 2)),
    "COS": _ladder(("FLOAT16", 2)),
    "MUL": _mul,
    "MAX_POOL_2D": _pool_2d,
    "AVERAGE_POOL_2D": _pool_2d,
    "TRANSPOSE": _transpose,
    "TRANSPOSE_CONV": _transpose_conv,
    "LSTM": _lstm,
    # SPLIT's data is input 1 (input 0 is the axis).
    "SPLIT": _ladder((_FP8, 5), ("INT16", 4), ("INT32", 3), ("INT8", 2), types=_input(1)),
    # SPARSE_TO_DENSE's values are input 2.
    "SPARSE_TO_DENSE": _ladder(("INT8|UINT8", 3), ("INT64", 2), types=_input(2)),
    "SLICE": _slice,
    "UNPACK": _unpack,
    "DEQUANTIZE": _dequantize,
    "QUANTIZE": _quantize,
    "FLOOR_DIV": _ladder(("INT16|INT8", 3), ("FLOAT32", 2)),
    "FLOOR_MOD": _ladder(("INT16|INT8", 2)),
    "L2_NORMALIZATION": _ladder(("INT8", 2), types=lambda sig: (sig.output_type(0),)),
    "ABS": _abs,
    "RELU": _ladder(("INT16", 3), ("INT8|UINT8", 2)),
    "STRIDED_SLICE": _strided_slice,
    "REVERSE_V2": _ladder((_FP8, 4), ("INT8", 3), ("BOOL", 2)),
    "RESIZE_BILINEAR": _resize_bilinear,
    "RESIZE_NEAREST_NEIGHBOR": _resize_nearest_neighbor,
    "MAXIMUM": _maximum_minimum,
    "MINIMUM": _maximum_minimum,
    "PACK": _pack,
    "TILE": _ladder(("INT8", 3), ("STRING", 2)),
    "SQUEEZE": _ladder(("STRING", 2)),
    "SPACE_TO_BATCH_ND": _space_batch_nd,
    "BATCH_TO_SPACE_ND": _space_batch_nd,
    "ADD": _add,
    "SUB": _sub,
    "GATHER_ND": _gather_nd,
    "DIV": _div,
    "TANH": _tanh_logistic,
    "LOGISTIC": _tanh_logistic,
    # FILL's value is input 1.
    "FILL": _ladder((_FP8, 5), ("FLOAT16", 4), ("INT8|INT16", 3), ("BOOL|STRING", 2), types=_input(1)),
    "EQUAL": _ladder(("INT16", 5), ("STRING", 3), ("INT8", 2)),
    "NOT_EQUAL": _ladder(("INT16", 4), ("STRING", 3), ("INT8", 2)),
    "LEAKY_RELU": _ladder(("INT16", 2)),
    "RANGE": _ladder(("INT64", 2)),
    "BATCH_MATMUL": _batch_matmul,
    "PAD": _pad,
    "PADV2": _pad,
    "CONCATENATION": _ladder((_FP8, 7), ("FLOAT16", 6), ("INT4", 5), ("UINT32", 4), ("INT16", 3), ("INT8", 2)),
    "SOFTMAX": _ladder(("FLOAT16", 4), ("INT16", 3), ("INT8", 2)),
    "MEAN": _INT16_INT8,
    "MIRROR_PAD": _INT16_INT8,
    "REDUCE_MAX": _INT16_INT8,
    "REDUCE_MIN": _INT16_INT8,
    "RELU6": _INT16_INT8,
    "RSQRT": _INT16_INT8,
    "RNN": _hybrid_rnn,
    "UNIDIRECTIONAL_SEQUENCE_RNN": _hybrid_rnn,
    "BIDIRECTIONAL_SEQUENCE_RNN": _hybrid_rnn,
    "BIDIRECTIONAL_SEQUENCE_LSTM": _hybrid_rnn,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _unidirectional_sequence_lstm,
    "ARG_MAX": _ladder(("BOOL", 3), ("INT8", 2)),
    "ARG_MIN": _ladder(("BOOL", 3), ("INT8", 2)),
    "SELECT": _select,
    "LESS": _INT16_INT8,
    "GREATER_EQUAL": _INT16_INT8,
    "SELECT_V2": _ladder(("UINT32", 2)),
    "SPLIT_V": _ladder((_FP8, 3), ("INT8", 2)),
    "SPACE_TO_DEPTH": _INT8_ONLY,
    "SUM": _INT8_ONLY,
    "LOG_SOFTMAX": _INT8_ONLY,
    "GREATER": _INT8_ONLY,
    "LESS_EQUAL": _INT8_ONLY,
    "SQUARED_DIFFERENCE": _INT8_ONLY,
    "DEPTH_TO_SPACE": _INT8_ONLY,
    "TOPK_V2": _topk_v2,
    "EXP": _ladder(("INT8|INT16", 2)),
    "LOG": _ladder(("INT8|INT16", 2)),
    "REDUCE_PROD": _ladder(("INT8|INT16", 2)),
    "SQRT": _ladder(("INT8|INT16", 2)),
    "DYNAMIC_UPDATE_SLICE": _dynamic_update_slice,
    # Version 1 of BROADCAST_TO was rolled back upstream (its op code changed), so it starts at 2.
    "BROADCAST_TO": _ladder((_FP8, 4), ("INT8|INT16", 3), default=2),
    "CAST": _cast,
    "WHERE": _where,
    "GELU": _ladder(("FLOAT16", 3), ("INT8|UINT8", 2)),
}


def get_builtin_operator_version(sig: OpSignature) -> int:
    """The lowest version of a builtin op that supports this signature (1 for ops without rules)."""
    rule = _RULES.get(sig.op)
    return rule(sig) if rule is not None else 1


# ---------------------------------------------------------------------------
# Minimum runtime versions (runtime_version.cc's FindMinimumRuntimeVersionForOp).

# (op -> {version: first TFLite release that runs it}), as upstream lists it. BROADCAST_TO has
# no version 1 (see above); ops absent here (e.g. HARD_SWISH beyond 1) have no known release.
_RUNTIME_VERSIONS: dict[str, dict[int, str]] = {
    "ABS": {1: "1.13.0", 2: "2.4.0", 3: "2.5.0", 4: "2.6.0", 5: "2.12.0"},
    "ADD": {1: "1.5.0", 2: "1.14.0", 3: "2.4.0", 4: "2.6.0", 5: "2.13.0", 6: "2.23.0"},
    "ADD_N": {1: "1.14.0"},
    "ARG_MAX": {1: "1.9.0", 2: "1.14.0", 3: "2.9.0"},
    "ARG_MIN": {1: "1.9.0", 2: "1.14.0", 3: "2.9.0"},
    "ASSIGN_VARIABLE": {1: "2.6.0"},
    "ATAN2": {1: "2.10.0"},
    "AVERAGE_POOL_2D": {1: "1.5.0", 2: "1.14.0", 3: "2.3.0"},
    "BATCH_MATMUL": {1: "2.3.0", 2: "2.3.0", 3: "2.4.0", 4: "2.5.0"},
    "BATCH_TO_SPACE_ND": {1: "1.6.0", 2: "1.14.0", 3: "2.3.0", 4: "2.12.0"},
    "BIDIRECTIONAL_SEQUENCE_LSTM": {1: "1.14.0", 2: "1.14.0", 3: "1.14.0"},
    "BIDIRECTIONAL_SEQUENCE_RNN": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0"},
    "BITCAST": {1: "2.13.0"},
    "BITWISE_XOR": {1: "2.13.0"},
    "BROADCAST_ARGS": {1: "2.6.0"},
    "BROADCAST_TO": {2: "2.5.0", 3: "2.5.0", 4: "2.23.0"},
    "BUCKETIZE": {1: "2.8.0"},
    "CALL_ONCE": {1: "2.5.0"},
    "CAST": {
        1: "1.5.0", 2: "2.7.0", 3: "2.8.0", 4: "2.9.0", 5: "2.12.0", 6: "2.15.0", 7: "2.17.0", 8: "2.21.0", 9: "2.23.0",
    },
    "CEIL": {1: "1.14.0"},
    "COMPLEX_ABS": {1: "2.5.0"},
    "CONCATENATION": {1: "1.5.0", 2: "1.14.0", 3: "2.3.0", 4: "2.14.0", 5: "2.21.0", 6: "2.23.0", 7: "2.23.0"},
    "CONV_2D": {1: "1.5.0", 2: "1.14.0", 3: "1.14.0", 4: "2.3.0", 5: "2.4.0", 6: "2.9.0", 7: "2.11.0", 8: "2.15.0"},
    "CONV_3D": {1: "2.5.0"},
    "CONV_3D_TRANSPOSE": {1: "2.6.0"},
    "COS": {1: "1.14.0", 2: "2.23.0"},
    "CUMSUM": {1: "2.4.0"},
    "DENSIFY": {1: "2.2.0"},
    "DEPTHWISE_CONV_2D": {1: "1.5.0", 2: "1.12.0", 3: "1.14.0", 4: "2.2.0", 5: "2.3.0", 6: "2.3.0", 7: "2.11.0"},
    "DEPTH_TO_SPACE": {1: "2.1.0", 2: "2.5.0"},
    "DEQUANTIZE": {
        1: "1.13.1", 2: "1.14.0", 3: "1.15.0", 4: "2.2.0", 5: "2.7.0", 6: "2.18.0", 7: "2.21.0", 8: "2.22.0",
        9: "2.23.0",
    },
    "DILATE": {1: "2.15.0"},
    "DIV": {1: "1.6.0", 2: "2.3.0"},
    "DYNAMIC_UPDATE_SLICE": {1: "2.9.0", 2: "2.17.0", 3: "2.19.0", 4: "2.20.0", 5: "2.21.0", 6: "2.22.0"},
    "ELU": {1: "1.14.0"},
    "EMBEDDING_LOOKUP": {1: "1.13.0", 2: "1.14.0", 3: "1.14.0", 4: "2.18.0", 5: "2.21.0"},
    "EMBEDDING_LOOKUP_SPARSE": {1: "1.5.0"},
    "EQUAL": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0", 4: "2.13.0", 5: "2.21.0"},
    "EXP": {1: "1.7.0", 2: "2.12.0"},
    "EXPAND_DIMS": {1: "1.10.0"},
    "FAKE_QUANT": {1: "1.5.0", 2: "1.10.0"},
    "FILL": {1: "1.13.0", 2: "2.3.0", 3: "2.5.0", 4: "2.12.0", 5: "2.23.0"},
    "FLOOR": {1: "1.9.0"},
    "FLOOR_DIV": {1: "1.14.0", 2: "1.14.0", 3: "2.13.0"},
    "FLOOR_MOD": {1: "1.13.0", 2: "2.13.0"},
    "FULLY_CONNECTED": {
        1: "1.5.0", 2: "1.10.0", 3: "1.14.0", 4: "1.14.0", 5: "2.0.0", 6: "2.1.0", 7: "2.3.0", 8: "2.3.0", 9: "2.3.0",
        10: "2.11.0", 11: "2.15.0", 12: "2.17.0", 13: "2.18.0", 14: "2.21.0",
    },
    "GATHER": {1: "1.6.0", 2: "1.14.0", 3: "1.15.0", 4: "2.4.0", 5: "2.5.0", 6: "2.13.0", 7: "2.15.0", 8: "2.23.0"},
    "GATHER_ND": {1: "1.14.0", 2: "2.3.0", 3: "2.5.0", 4: "2.13.0", 5: "2.16.0", 6: "2.23.0"},
    "GELU": {1: "2.9.0", 2: "2.9.0", 3: "2.23.0"},
    "GREATER": {1: "1.14.0", 2: "1.14.0"},
    "GREATER_EQUAL": {1: "1.14.0", 2: "1.14.0", 3: "2.13.0"},
    "HARD_SWISH": {1: "1.15.0"},
    "HASHTABLE": {1: "2.5.0"},
    "HASHTABLE_FIND": {1: "2.5.0"},
    "HASHTABLE_IMPORT": {1: "2.5.0"},
    "HASHTABLE_LOOKUP": {1: "1.5.0"},
    "HASHTABLE_SIZE": {1: "2.5.0"},
    "IF": {1: "1.15.0"},
    "IMAG": {1: "2.5.0"},
    "L2_NORMALIZATION": {1: "1.5.0", 2: "1.14.0"},
    "L2_POOL_2D": {1: "1.5.0"},
    "LEAKY_RELU": {1: "1.13.1", 2: "2.3.0"},
    "LESS": {1: "1.14.0", 2: "1.14.0", 3: "2.13.0"},
    "LESS_EQUAL": {1: "1.14.0", 2: "1.14.0"},
    "LOCAL_RESPONSE_NORMALIZATION": {1: "1.5.0"},
    "LOG": {1: "1.14.0", 2: "2.15.0"},
    "LOGICAL_AND": {1: "1.11.0"},
    "LOGICAL_NOT": {1: "1.11.0"},
    "LOGICAL_OR": {1: "1.11.0"},
    "LOGISTIC": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0"},
    "LOG_SOFTMAX": {1: "1.14.0", 2: "1.14.0"},
    "LSH_PROJECTION": {1: "1.5.0"},
    "LSTM": {1: "1.7.0", 2: "1.10.0", 3: "1.14.0", 4: "2.3.0"},
    "MATRIX_DIAG": {1: "1.14.0"},
    "MATRIX_SET_DIAG": {1: "1.14.0"},
    "MAXIMUM": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0", 4: "2.3.0"},
    "MAX_POOL_2D": {1: "1.5.0", 2: "1.14.0", 3: "2.3.0"},
    "MEAN": {1: "1.6.0", 2: "1.14.0", 3: "2.4.0"},
    "MINIMUM": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0", 4: "2.3.0"},
    "MIRROR_PAD": {1: "1.13.1", 2: "2.3.0", 3: "2.12.0"},
    "MUL": {1: "1.5.0", 2: "1.14.0", 3: "1.15.0", 4: "2.3.0", 5: "2.6.0", 6: "2.11.0", 7: "2.13.0", 8: "2.23.0"},
    "MULTINOMIAL": {1: "2.8.0"},
    "NEG": {1: "1.9.0"},
    "NON_MAX_SUPPRESSION_V4": {1: "2.1.0"},
    "NON_MAX_SUPPRESSION_V5": {1: "2.1.0"},
    "NOT_EQUAL": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0", 4: "2.21.0"},
    "ONE_HOT": {1: "1.11.0"},
    "PACK": {1: "1.11.0", 2: "1.14.0", 3: "2.3.0", 4: "2.13.0", 5: "2.23.0"},
    "PAD": {1: "1.5.0", 2: "1.14.0", 3: "2.4.0", 4: "2.6.0", 5: "2.20.0", 6: "2.23.0"},
    "PADV2": {1: "1.9.0", 2: "1.14.0", 3: "2.4.0", 4: "2.6.0", 5: "2.20.0", 6: "2.23.0"},
    "POW": {1: "1.10.0"},
    "PRELU": {1: "1.8.0"},
    "QUANTIZE": {1: "1.14.0", 2: "1.15.0", 3: "2.7.0", 4: "2.21.0", 5: "2.21.0", 6: "2.21.0"},
    "RANDOM_STANDARD_NORMAL": {1: "2.8.0"},
    "RANDOM_UNIFORM": {1: "2.8.0"},
    "RANGE": {1: "1.13.0", 2: "2.14.0"},
    "RANK": {1: "1.14.0"},
    "READ_VARIABLE": {1: "2.6.0"},
    "REAL": {1: "2.5.0"},
    "REDUCE_ALL": {1: "2.6.0"},
    "REDUCE_ANY": {1: "1.11.0"},
    "REDUCE_MAX": {1: "1.11.0", 2: "1.14.0", 3: "2.5.0"},
    "REDUCE_MIN": {1: "1.11.0", 2: "1.14.0", 3: "2.5.0"},
    "REDUCE_PROD": {1: "1.11.0", 2: "2.6.0"},
    "REDUCE_WINDOW": {1: "2.15.0"},
    "RELU": {1: "1.5.0", 2: "2.1.0", 3: "2.5.0"},
    "RELU6": {1: "1.5.0", 2: "1.14.0", 3: "2.5.0"},
    "RELU_0_TO_1": {1: "2.10.0"},
    "RELU_N1_TO_1": {1: "1.5.0"},
    "RESHAPE": {1: "1.5.0"},
    "RESIZE_BILINEAR": {1: "1.7.0", 2: "1.14.0", 3: "2.2.0", 4: "2.5.0"},
    "RESIZE_NEAREST_NEIGHBOR": {1: "1.13.1", 2: "1.14.0", 3: "2.3.0", 4: "2.4.0"},
    "REVERSE_SEQUENCE": {1: "1.14.0"},
    "REVERSE_V2": {1: "1.14.0", 2: "2.2.0", 3: "2.5.0", 4: "2.23.0"},
    "RFFT2D": {1: "2.5.0"},
    "RIGHT_SHIFT": {1: "2.13.0"},
    "RNN": {1: "1.5.0", 2: "1.14.0", 3: "2.3.0"},
    "ROUND": {1: "1.14.0"},
    "RSQRT": {1: "1.10.0", 2: "2.5.0", 3: "2.15.0"},
    "SCATTER_ND": {1: "2.1.0"},
    "SEGMENT_SUM": {1: "2.2.0"},
    "SELECT": {1: "1.14.0", 2: "1.14.0", 3: "2.12.0", 4: "2.12.0"},
    "SELECT_V2": {1: "2.2.0", 2: "2.12.0"},
    "SHAPE": {1: "1.10.0"},
    "SIGN": {1: "2.11.0", 2: "2.12.0"},
    "SIN": {1: "1.9.0", 2: "2.23.0"},
    "SKIP_GRAM": {1: "1.5.0"},
    "SLICE": {1: "1.14.0", 2: "1.14.0", 3: "1.14.0", 4: "2.4.0", 5: "2.5.0", 6: "2.14.0", 7: "2.21.0", 8: "2.23.0"},
    "SOFTMAX": {1: "1.5.0", 2: "1.14.0", 3: "2.3.0", 4: "2.23.0"},
    "SPACE_TO_BATCH_ND": {1: "1.6.0", 2: "1.14.0", 3: "2.3.0", 4: "2.12.0"},
    "SPACE_TO_DEPTH": {1: "1.5.0", 2: "1.14.0"},
    "SPARSE_TO_DENSE": {1: "1.9.0", 2: "1.14.0", 3: "1.15.0"},
    "SPLIT": {1: "1.5.0", 2: "1.14.0", 3: "1.14.0", 4: "2.3.0", 5: "2.23.0"},
    "SPLIT_V": {1: "1.13.1", 2: "2.3.0", 3: "2.23.0"},
    "SQRT": {1: "1.10.0", 2: "2.21.0"},
    "SQUARE": {1: "1.12.0"},
    "SQUARED_DIFFERENCE": {1: "1.13.1", 2: "2.5.0"},
    "SQUEEZE": {1: "1.6.0", 2: "2.5.0"},
    "STABLEHLO_ADD": {1: "2.16.0"},
    "STABLEHLO_AND": {1: "2.17.0"},
    "STABLEHLO_CASE": {1: "2.17.0"},
    "STABLEHLO_CBRT": {1: "2.17.0"},
    "STABLEHLO_COMPOSITE": {1: "2.17.0"},
    "STABLEHLO_GATHER": {1: "2.16.0"},
    "STABLEHLO_MAXIMUM": {1: "2.16.0"},
    "STABLEHLO_MINIMUM": {1: "2.16.0"},
    "STABLEHLO_MULTIPLY": {1: "2.16.0"},
    "STABLEHLO_PAD": {1: "2.16.0"},
    "STABLEHLO_REDUCE_WINDOW": {1: "2.16.0"},
    "STABLEHLO_RNG_BIT_GENERATOR": {1: "2.15.0"},
    "STABLEHLO_SCATTER": {1: "2.15.0"},
    "STABLEHLO_SHIFT_LEFT": {1: "2.17.0"},
    "STRIDED_SLICE": {
        1: "1.6.0", 2: "1.14.0", 3: "2.1.0", 4: "2.2.0", 5: "2.5.0", 6: "2.6.0", 7: "2.14.0", 8: "2.14.0",
    },
    "SUB": {1: "1.6.0", 2: "1.14.0", 3: "2.3.0", 4: "2.4.0", 5: "2.4.0"},
    "SUM": {1: "1.10.0", 2: "1.15.0"},
    "SVDF": {1: "1.5.0", 2: "1.14.0", 3: "2.2.0", 4: "2.3.0"},
    "TANH": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0"},
    "TILE": {1: "1.10.1", 2: "2.2.0", 3: "2.8.0"},
    "TOPK_V2": {1: "1.7.0", 2: "1.14.0", 3: "2.13.0"},
    "TRANSPOSE": {
        1: "1.6.0", 2: "1.14.0", 3: "1.15.0", 4: "2.3.0", 5: "2.4.0", 6: "2.12.0", 7: "2.14.4", 8: "2.22.0",
        9: "2.23.0",
    },
    "TRANSPOSE_CONV": {1: "1.9.0", 2: "2.2.0", 3: "2.3.0", 4: "2.13.0", 5: "2.15.0"},
    "UNIDIRECTIONAL_SEQUENCE_LSTM": {1: "1.13.1", 2: "1.14.0", 3: "2.3.0", 4: "2.12.0"},
    "UNIDIRECTIONAL_SEQUENCE_RNN": {1: "1.14.0", 2: "1.14.0", 3: "2.3.0"},
    "UNIQUE": {1: "1.14.0"},
    "UNPACK": {1: "1.11.0", 2: "1.14.0", 3: "2.2.0", 4: "2.3.0", 5: "2.22.0", 6: "2.23.0"},
    "UNSORTED_SEGMENT_MAX": {1: "2.10.0"},
    "UNSORTED_SEGMENT_MIN": {1: "2.11.0"},
    "UNSORTED_SEGMENT_PROD": {1: "2.10.0"},
    "UNSORTED_SEGMENT_SUM": {1: "2.10.0"},
    "VAR_HANDLE": {1: "2.6.0"},
    "WHERE": {1: "1.14.0", 2: "2.8.0"},
    "WHILE": {1: "1.15.0"},
    "ZEROS_LIKE": {1: "1.12.0"},
}


def runtime_version_key(version: str) -> tuple[int, ...]:
    """A sort key comparing release strings numerically ("1.14.0" < "2.3.0"; "1.14" < "1.14.0")."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def find_minimum_runtime_version(op: str, version: int) -> str:
    """The first TFLite release that runs builtin `op` at `version`, or "" if upstream lists none."""
    return _RUNTIME_VERSIONS.get(op, {}).get(version, "")


def _builtin_op_versions(model: Model) -> list[tuple[str, int]]:
    """Every builtin (op, version) pair the model's operators use, in order of first use."""
    seen: dict[tuple[str, int], None] = {}
    for subgraph in model.subgraphs:
        for op in subgraph.operators:
            if op.op != "CUSTOM":
                seen.setdefault((op.op, op.version), None)
    return list(seen)


def unknown_runtime_versions(model: Model) -> list[tuple[str, int]]:
    """The builtin (op, version) pairs of the model that the runtime-version table lacks."""
    return [pair for pair in _builtin_op_versions(model) if not find_minimum_runtime_version(*pair)]


def min_runtime_version(model: Model) -> str:
    """The oldest TFLite release that runs every builtin operator of the model ("" if none is known).

    Like upstream's UpdateMinimumRuntimeVersionForModel, pairs missing from the table are skipped
    (custom ops never count); a warning names them, and `unknown_runtime_versions` lists them.
    """
    releases = [find_minimum_runtime_version(op, v) for op, v in _builtin_op_versions(model)]
    unknown = unknown_runtime_versions(model)
    if unknown:
        names = ", ".join(f"{op} v{v}" for op, v in unknown)
        logger.warning("no known minimum TFLite runtime for %s; min_runtime_version ignores them", names)
    return max((r for r in releases if r), key=runtime_version_key, default="")


# ---------------------------------------------------------------------------
# Writing versions into a model.


def _with_metadata_buffer(model: Model, name: str, data: bytes) -> Model:
    """A copy of the model whose metadata `name` holds `data` (the entry's buffer is replaced)."""
    buffers = list(model.buffers)
    metadata = list(model.metadata)
    for key, buf in metadata:
        if key == name:
            buffers[buf] = data
            break
    else:
        buffers.append(data)
        metadata.append((name, len(buffers) - 1))
    return model.replace(buffers=tuple(buffers), metadata=tuple(metadata))


def stamp_versions(model: Model) -> Model:
    """A copy of the model with each builtin operator at its computed version, plus min_runtime_version.

    Custom operators keep their version. The metadata entry holds the release string padded
    with NULs to 16 bytes, as the converter writes it; an existing entry is overwritten.
    """
    subgraphs = []
    for subgraph in model.subgraphs:
        ops = tuple(
            op if op.op == "CUSTOM"
            else dataclasses.replace(op, version=get_builtin_operator_version(operator_signature(op, subgraph, model)))
            for op in subgraph.operators
        )
        subgraphs.append(dataclasses.replace(subgraph, operators=ops))
    stamped = model.replace(subgraphs=tuple(subgraphs))
    padded = min_runtime_version(stamped).encode("ascii").ljust(_MIN_RUNTIME_VERSION_BYTES, b"\0")
    return _with_metadata_buffer(stamped, MIN_RUNTIME_VERSION_KEY, padded)


def read_min_runtime_version(model: Model) -> str | None:
    """The model's min_runtime_version metadata without its NUL padding (None if absent)."""
    raw = model.metadata_value(MIN_RUNTIME_VERSION_KEY)
    return None if raw is None else raw.split(b"\0", 1)[0].decode("ascii", "replace")


__all__ = [
    "MIN_RUNTIME_VERSION_KEY",
    "OpSignature",
    "TensorSpec",
    "find_minimum_runtime_version",
    "get_builtin_operator_version",
    "min_runtime_version",
    "op_signature",
    "operator_signature",
    "read_min_runtime_version",
    "runtime_version_key",
    "stamp_versions",
    "unknown_runtime_versions",
]
