"""Builtin kernels, one module per op family; each module's `register` adds its ops explicitly.

Where each builtin op's kernel lives (tests/runtime/test_kernel_table.py checks this table against the
registrations):

    activations     ELU, HARD_SWISH, LEAKY_RELU, LOGISTIC, PRELU, RELU, RELU6, TANH
    cast            CAST
    concat          CONCATENATION, PACK
    control_flow    CALL_ONCE, IF, WHILE
    conv            CONV_2D, DEPTHWISE_CONV_2D
    conv3d          CONV_3D
    cumsum          CUMSUM
    division        DIV, FLOOR_DIV, FLOOR_MOD
    elementwise     ADD, MUL, SUB
    fill            FILL, RANGE, ZEROS_LIKE
    fully_connected FULLY_CONNECTED
    gelu            GELU
    generative      COS, DYNAMIC_UPDATE_SLICE, EMBEDDING_LOOKUP, SIN, STABLEHLO_COMPOSITE
    gather          GATHER, GATHER_ND
    logical         EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, LOGICAL_AND, LOGICAL_NOT, LOGICAL_OR,
                    NOT_EQUAL, SELECT, SELECT_V2
    lstm            LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM
    math            ABS, EXP, LOG, MAXIMUM, MINIMUM, NEG, POW, RSQRT, SQRT, SQUARE, SQUARED_DIFFERENCE
    matmul          BATCH_MATMUL
    normalization   L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION
    pad             MIRROR_PAD, PAD, PADV2
    pooling         AVERAGE_POOL_2D, MAX_POOL_2D
    quantize        DEQUANTIZE, QUANTIZE
    reduce          ARG_MAX, ARG_MIN, MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, SUM
    resize          RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR
    shape           EXPAND_DIMS, RESHAPE, SHAPE, SQUEEZE
    slicing         SLICE, STRIDED_SLICE
    softmax         LOG_SOFTMAX, SOFTMAX
    space           BATCH_TO_SPACE_ND, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, SPACE_TO_DEPTH
    sparse          DENSIFY
    split           SPLIT, SPLIT_V, UNPACK
    tile            BROADCAST_TO, TILE
    transpose       TRANSPOSE
    transpose_conv  TRANSPOSE_CONV
    variables       ASSIGN_VARIABLE, READ_VARIABLE, VAR_HANDLE

`common.py` is the helper library the kernels share (checks, prepare helpers, tables and LiteRT's LUTs;
the fixed-point arithmetic is `accelsim.runtime.quant`); it registers nothing, and no kernel imports another's
private names.

Every op's reference (`Registration.reference`, what `Interpreter(reference=True)` runs) is the node
form of a public function of NumPy arrays and resolved options in its module, which states the TFLite
rule it follows (e.g. `shape.reshape`, `conv.reference.conv2d`, `logical.compare`); fast invokes are
tested against them in tests/runtime/test_references.py, which also checks that this holds for every
builtin. Six ops cannot be functions of arrays, and their reference is their invoke:

    control_flow    WHILE, IF and CALL_ONCE run other subgraphs through the interpreter: WHILE runs cond
                    then body while cond's flag holds (while.cc Eval_static / Eval_dynamic), IF runs the
                    branch its condition picks (if.cc), CALL_ONCE runs its init subgraph at the first
                    invoke only (call_once.cc). Under reference=True those subgraphs' nodes run their
                    own references, so the arithmetic is still the array functions'.
    variables       VAR_HANDLE, READ_VARIABLE and ASSIGN_VARIABLE move values into and out of the
                    interpreter's resource variables (var_handle.cc, read_variable.cc,
                    assign_variable.cc), state that outlives the node and the invoke.
"""

from __future__ import annotations

from accelsim.runtime.kernels import (
    activations,
    cast,
    concat,
    control_flow,
    conv,
    conv3d,
    cumsum,
    division,
    elementwise,
    fill,
    fully_connected,
    gather,
    gelu,
    generative,
    logical,
    lstm,
    math,
    matmul,
    normalization,
    pad,
    pooling,
    quantize,
    reduce,
    resize,
    shape,
    slicing,
    softmax,
    space,
    sparse,
    split,
    tile,
    transpose,
    transpose_conv,
    variables,
)
from accelsim.runtime.registration import MutableOpResolver

FAMILIES = (activations, cast, concat, control_flow, conv, conv3d, cumsum, division, elementwise, fill,
            fully_connected, gather, gelu, generative, logical, lstm, math, matmul, normalization, pad, pooling,
            quantize, reduce, resize, shape, slicing, softmax, space, sparse, split, tile, transpose, transpose_conv,
            variables)


def register_builtins(resolver) -> None:
    """Add every builtin kernel, each with the exact version range it implements."""
    for family in FAMILIES:
        family.register(resolver)


class BuiltinOpResolver(MutableOpResolver):
    """Every builtin kernel of the reference interpreter, each with the versions it implements."""

    def __init__(self) -> None:
        super().__init__()
        register_builtins(self)
