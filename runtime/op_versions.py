"""Builtin operator versions: op_version.cc's GetBuiltinOperatorVersion, rule by rule.

Follows the converter's rules (tflite/converter/tools/versioning/op_version.cc in LiteRT, a copy of
tensorflow/compiler/mlir/lite/tools/versioning/): each builtin op with more than one version has a
rule from its `OpSignature` (runtime.op_signature) to the lowest version that supports it.
"""

from __future__ import annotations

from collections.abc import Callable

from accelsim.runtime.op_signature import OpSignature

# Schema enum values the rules compare against.
_LSTM_KERNEL_FULL = 0
_LSTM_KERNEL_BASIC = 1
_FC_WEIGHTS_SHUFFLED4X16INT8 = 1

_FP8 = "FLOAT8_E4M3FN|FLOAT8_E5M2"
_FP8_TYPES = frozenset(_FP8.split("|"))


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
