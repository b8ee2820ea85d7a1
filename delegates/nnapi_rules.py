"""TFLite's NNAPI delegate as data: feature levels, each op's Validate rule, its NNAPI lowering, the options.

Source of every line number: google-ai-edge/LiteRT @ f67457790c9c2ab67347d6fe53270e8d3df20868,
`tflite/delegates/nnapi/nnapi_delegate.cc` ("cc"), `nnapi_delegate.h` ("h"), `nnapi_delegate_kernel.h`
("kernel.h"), `tflite/nnapi/NeuralNetworksTypes.h` ("types.h") — the continuation of TensorFlow's
`tensorflow/lite/delegates/nnapi/` (research notes: /work/research/nnapi.md, sections 1-3).

`RULES[op]` is `NNAPIDelegateKernel::Validate`'s case for the op (cc 2358-3656): the minimum target feature
level, the highest op version, the input-0 types accepted from each level on, the checks it makes beyond
those (by name; `accelsim.delegates.nnapi` implements them) and the source lines. An op not in `RULES`
falls to Validate's `default:` ("Unsupported operation type.", cc 3650-3653).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

# NNAPI feature levels (kernel.h 41-48; types.h 250-271): FL1-FL5 are Android API levels 27-31, then the
# levels "updated between Android API releases" (types.h 262-264).
FEATURE_LEVELS = MappingProxyType({
    "FL1": 27, "FL2": 28, "FL3": 29, "FL4": 30, "FL5": 31, "FL6": 1000006, "FL7": 1000007, "FL8": 1000008})
FL6, FL7 = FEATURE_LEVELS["FL6"], FEATURE_LEVELS["FL7"]
LEVEL_NAMES = MappingProxyType({v: k for k, v in FEATURE_LEVELS.items()})
# The nnapi-reference device reports feature level 1000 (cc 669-671); only named here to refuse it as a driver.
REFERENCE_DEVICE = "nnapi-reference"

F32, F16, U8, I8, I32, BOOL, I64 = "float32", "float16", "uint8", "int8", "int32", "bool", "int64"
Q8 = (U8, I8)  # IsQuantized: uint8 and int8 only, "kTfLiteInt16 isn't supported as quantized type yet" (cc 184-193)


@dataclass(frozen=True)
class OpRule:
    """One case of Validate.

    Args:
        min_level: ExpectMinAndroidSdkVersion's bound (27: no check, DoPrepare does nothing below 27, cc 6837-6840).
        max_version: ExpectMaxOpVersion / ExpectOpVersion (both `version <= max`, cc 2155-2167); None: no check.
        types: {level: accepted input-0 types}; the entry with the largest level <= the target applies;
            None: no type check at that level.
        checks: names of the further checks `accelsim.delegates.nnapi` makes (`CHECKS`).
        lines: (first, last) line of the case in cc.
    """

    min_level: int
    max_version: int | None
    types: MappingProxyType
    checks: tuple[str, ...] = ()
    lines: tuple[int, int] = (0, 0)

    def accepted_types(self, level: int) -> tuple[str, ...] | None:
        keys = [k for k in self.types if k <= level]
        return self.types[max(keys)] if keys else ()


def _r(min_level, max_version, types, checks=(), lines=(0, 0)) -> OpRule:
    return OpRule(min_level, max_version, MappingProxyType(dict(types)), tuple(checks), lines)


_ARITH = {27: (F32, *Q8), 30: (F32, *Q8, I32)}
_ACT = {27: (F32, *Q8)}

RULES = MappingProxyType({
    # ADD: int32 from 30; int32 needs activation NONE; ranks <= 4 (cc 2372-2392)
    "ADD": _r(27, 2, _ARITH, ("int32_no_activation", "ranks_le_4"), (2372, 2392)),
    # MUL: version 3 only when an accelerator is specified (cc 2434-2458)
    "MUL": _r(27, 2, _ARITH, ("int32_no_activation", "ranks_le_4", "mul_v3_if_accelerator"), (2434, 2458)),
    "SUB": _r(28, 3, {28: (F32,), 29: (F32, *Q8), 30: (F32, *Q8, I32)},
              ("int32_no_activation", "ranks_le_4"), (2857, 2882)),
    "DIV": _r(28, 1, {28: (F32,)}, ("ranks_le_4",), (2883, 2897)),
    # CONV_2D: <29 float/uint8 only, per-tensor filter, no hybrid, no grouped conv; bias required;
    # dilation != 1 needs 29 (cc 2490-2533)
    "CONV_2D": _r(27, 5, {27: (F32, U8), 29: None},
                  ("pre29_per_tensor", "pre29_not_hybrid", "pre29_restricted_scales", "bias_present",
                   "dilation_needs_29", "pre29_not_grouped"), (2490, 2533)),
    "DEPTHWISE_CONV_2D": _r(27, 3, {27: (F32, U8), 29: None}, ("pre29_restricted_scales", "pre29_no_dilation"),
                            (2534, 2554)),
    "FULLY_CONNECTED": _r(27, 5, {27: (F32, U8), 29: None},
                          ("pre29_not_hybrid", "pre29_restricted_scales", "output_not_int16", "keep_num_dims_needs_30"),
                          (2555, 2578)),
    # quantized AVERAGE_POOL_2D without a specified accelerator: window area <= 256 (cc 2459-2472)
    "AVERAGE_POOL_2D": _r(27, 2, _ACT, ("quant_pool_area_256",), (2459, 2472)),
    "MAX_POOL_2D": _r(27, 2, _ACT, (), (2473, 2476)),
    "L2_POOL_2D": _r(27, 1, {27: (F32,)}, ("pre29_no_activation",), (2477, 2489)),
    "HARD_SWISH": _r(27, None, _ACT, (), (2579, 2584)),
    "SOFTMAX": _r(27, 2, _ACT, ("rank_le_4", "pre29_rank_2_or_4"), (2585, 2606)),
    "RESHAPE": _r(27, 1, {27: (F32, *Q8), FL6: (F32, *Q8, I32)}, ("ranks_le_4", "shape_constant"), (2607, 2642)),
    "RESIZE_BILINEAR": _r(27, 3, {27: (F32,), 29: (F32, *Q8)}, ("input_rank_4",), (2643, 2682)),
    "RESIZE_NEAREST_NEIGHBOR": _r(29, 3, {29: (F32, *Q8)}, (), (2683, 2707)),
    "SQUEEZE": _r(28, 1, {28: None}, (), (2708, 2719)),
    "L2_NORMALIZATION": _r(27, 2, {27: (F32,), 29: None}, ("no_activation",), (2733, 2748)),
    "LOCAL_RESPONSE_NORMALIZATION": _r(27, 1, {27: None}, (), (2749, 2751)),
    # CONCATENATION: activation NONE, rank <= 4 (cc 2769-2798)
    "CONCATENATION": _r(27, 2, {27: (F16, F32, *Q8)}, ("no_activation", "rank_le_4"), (2769, 2798)),
    "DEQUANTIZE": _r(27, 2, {27: (U8,), 29: Q8}, (), (2799, 2827)),
    "FLOOR": _r(27, 1, {27: None}, (), (2837, 2839)),
    "RELU": _r(27, 2, _ACT, (), (2840, 2846)),
    "RELU_N1_TO_1": _r(27, 2, _ACT, (), (2840, 2846)),
    "RELU6": _r(27, 2, _ACT, (), (2840, 2846)),
    "LOGISTIC": _r(27, 2, _ACT, (), (2840, 2846)),
    "TANH": _r(27, 2, {27: (F32,), 29: (F32, *Q8)}, (), (2847, 2856)),
    "PAD": _r(28, 2, {28: (F32,), 29: (F32, *Q8)}, (), (2898, 2931)),
    "PADV2": _r(29, 2, {29: (F32, *Q8)}, (), (2898, 2931)),
    "SPACE_TO_BATCH_ND": _r(28, 2, {28: None}, (), (2940, 2944)),
    "BATCH_TO_SPACE_ND": _r(28, 2, {28: None}, (), (2945, 2955)),
    "STRIDED_SLICE": _r(28, 2, {28: (F32, *Q8)}, (), (2956, 2961)),
    "TRANSPOSE": _r(28, 2, {28: None}, ("perm_constant",), (2962, 2974)),
    "ABS": _r(29, 1, {29: (F32,)}, (), (2975, 2983)),
    "EXP": _r(29, 1, {29: (F32,)}, (), (2975, 2983)),
    "LOG": _r(29, 1, {29: (F32,)}, (), (2975, 2983)),
    "POW": _r(29, 1, {29: (F32,)}, (), (2975, 2983)),
    "RSQRT": _r(29, 2, {29: (F32,), FL7: (F32, *Q8)}, (), (2984, 2993)),
    "SLICE": _r(29, 2, {29: (F32, I32, *Q8)}, (), (2994, 3009)),
    "SIN": _r(29, 1, {29: (F32,)}, (), (3010, 3016)),
    "COS": _r(29, 1, {29: (F32,)}, (), (3010, 3016)),
    "TRANSPOSE_CONV": _r(29, 4, {29: None}, ("filter_constant",), (3017, 3028)),
    "SQRT": _r(29, 1, {29: (F32,)}, (), (3029, 3034)),
    "SPACE_TO_DEPTH": _r(27, 2, _ACT, (), (3048, 3054)),
    "MEAN": _r(28, 2, {28: (F32,), 29: (F32, *Q8)}, ("rank_le_4",), (3151, 3172)),
    "MAXIMUM": _r(29, 3, {29: (F32, *Q8, I32)}, (), (3185, 3205)),
    "MINIMUM": _r(29, 3, {29: (F32, *Q8, I32)}, (), (3185, 3205)),
    "CAST": _r(29, 1, {29: (F32, I32, U8), 30: (F32, I32, *Q8)}, (), (3206, 3236)),
    "LEAKY_RELU": _r(29, 1, {29: (F32, *Q8)}, (), (3237, 3245)),
    "PRELU": _r(29, 1, {29: (F32, *Q8)}, (), (3237, 3245)),
    "TILE": _r(29, 1, {29: (F32, *Q8, I32)}, (), (3246, 3258)),
    "LOGICAL_AND": _r(29, 1, {29: (BOOL,)}, (), (3259, 3269)),
    "LOGICAL_OR": _r(29, 1, {29: (BOOL,)}, (), (3259, 3269)),
    "LOGICAL_NOT": _r(29, 1, {29: (BOOL,)}, (), (3259, 3269)),
    **{op: _r(29, 2, {29: (F32, *Q8, BOOL, I32)}, (), (3270, 3282))
       for op in ("LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL", "NOT_EQUAL")},
    "NEG": _r(29, 2, {29: (F32, I32)}, (), (3283, 3289)),
    "TOPK_V2": _r(29, 2, {29: (F32, I32, *Q8)}, (), (3290, 3302)),
    "SELECT": _r(29, 2, {29: (F32, I32, *Q8)}, (), (3303, 3318)),
    "GATHER": _r(29, 2, {29: (F32, F16, I32, *Q8)}, (), (3319, 3335)),
    "EXPAND_DIMS": _r(29, 1, {29: (F32, F16, I32, *Q8)}, (), (3344, 3355)),
    "SPLIT": _r(29, 3, {29: (F32, U8, I32), 30: (F32, *Q8, I32)}, ("split_types_on_input_1",), (3356, 3373)),
    "SPLIT_V": _r(30, 2, {30: (F32, *Q8, I32)}, (), (3374, 3406)),
    "LOG_SOFTMAX": _r(29, 1, {29: (F32,)}, (), (3407, 3415)),
    "QUANTIZE": _r(29, 2, {29: (F32, *Q8)}, ("pre30_quantize_output_uint8",), (3416, 3446)),
    "REDUCE_ANY": _r(29, 2, {29: None}, (), (3447, 3454)),
    "REDUCE_MAX": _r(29, 2, {29: (F32, *Q8)}, (), (3455, 3467)),
    "REDUCE_MIN": _r(29, 2, {29: (F32, *Q8)}, (), (3455, 3467)),
    "DEPTH_TO_SPACE": _r(27, None, _ACT, (), (3468, 3473)),
    "REDUCE_PROD": _r(29, 1, {29: (F32,)}, (), (3474, 3486)),
    "SUM": _r(29, 1, {29: (F32,)}, (), (3474, 3486)),
    "ELU": _r(30, 1, {30: (F32,)}, (), (3487, 3495)),
    "PACK": _r(30, 2, {30: (F32, I8), FL6: (I32, F32, *Q8)}, (), (3540, 3558)),
    "UNPACK": _r(30, 2, {30: (F32, *Q8)}, (), (3559, 3580)),
    "SQUARED_DIFFERENCE": _r(28, 2, {28: (F32,), 29: (F32, U8), 30: (F32, *Q8, I32)}, ("ranks_le_4",),
                             (3581, 3601)),
    # BATCH_MATMUL: FL6, both inputs the same type, 2 <= rank <= 4, no broadcasting (cc 3602-3620)
    "BATCH_MATMUL": _r(FL6, 2, {FL6: (F32, I32, I8)}, ("same_input_types", "batch_matmul_no_broadcast"),
                       (3602, 3620)),
    # MIRROR_PAD: FL7, exactly 2 inputs (cc 3621-3640)
    "MIRROR_PAD": _r(FL7, 2, {FL7: (F32, *Q8, I32)}, (), (3621, 3640)),
    "REVERSE_V2": _r(FL7, 3, {FL7: (F32, *Q8, I32)}, (), (3641, 3649)),
})

# The NNAPI operations a TFLite op becomes (AddOpsAndTensors / Map, cc 3656-4700). The per-device check asks the
# drivers about these: "A TfLite op is supported only if all the associated NNAPI ones are." (cc 4838-4850).
# Ops not listed map to the NNAPI op of the same name.
LOWERINGS = MappingProxyType({
    "TRANSPOSE_CONV": ("TRANSPOSE_CONV_2D",),
    "RELU_N1_TO_1": ("RELU1",),  # cc 3957
    "PADV2": ("PAD_V2",),  # cc 3992
    "SUM": ("REDUCE_SUM",),  # cc 4528
    "ARG_MAX": ("ARGMAX",),  # cc 3715
    "ARG_MIN": ("ARGMIN",),
    "SQUARED_DIFFERENCE": ("SUB", "MUL"),  # cc 5673-5677
    "SPLIT_V": ("SLICE",),  # cc 5667-5671
    "UNPACK": ("RESHAPE", "SPLIT"),  # cc 5661-5665
    "COS": ("SIN",),  # cc 5679-5683
})
# Lowerings that depend on the target level: HARD_SWISH below 30 is x*relu1(x/3)... as MUL, MUL, MUL, ADD
# (TransformHardSwishIntoSupportedOps, cc 1014-1131; used when SDK < 30, cc 5801-5810); PACK below FL6 is
# CONCATENATION + RESHAPE (cc 5654-5659); a hybrid CONV_2D / FULLY_CONNECTED gets a DEQUANTIZE on its weights
# (AddDequantizeOperatorsWhereNeeded, cc 5340-5392).
HARD_SWISH_PRE30 = ("MUL", "MUL", "MUL", "ADD")
PACK_PRE_FL6 = ("CONCATENATION", "RESHAPE")

# StatefulNnApiDelegate::Options and their defaults (h 49-185).
EXECUTION_PREFERENCES = ("undefined", "low_power", "fast_single_answer", "sustained_speed")  # h 53-61
OPTION_DEFAULTS = MappingProxyType({
    "accelerator_name": None,  # h 69
    "execution_preference": "undefined",  # kUndefined (-1), h 53-61
    "disallow_nnapi_cpu": True,  # h 88
    "max_number_delegated_partitions": 3,  # h 97; "A value <= 0 means no limit" (h 91)
    "allow_fp16": False,  # h 100
    "use_burst_computation": False,  # h 143
})
