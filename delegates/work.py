"""How much work a node is, from tensor shapes and types only (no data): MACs, bytes and layer geometry.

What one MAC means, per op:

| ops                                             | MACs                                          | kind          |
|-------------------------------------------------|-----------------------------------------------|---------------|
| CONV_2D                                         | N*OH*OW*Cout*KH*KW*Cin_per_group              | gemm          |
| DEPTHWISE_CONV_2D                               | N*OH*OW*Cout*KH*KW (one input channel each)   | depthwise     |
| TRANSPOSE_CONV                                  | N*H*W*Cin*KH*KW*Cout (every input pixel       | gemm          |
|                                                 | scattered through the whole kernel)           |               |
| FULLY_CONNECTED                                 | M*K*N, M = input elements / K                 | gemm          |
| BATCH_MATMUL                                    | batch*M*K*N                                   | gemm          |
| AVERAGE/MAX/L2_POOL_2D                          | one add or compare per window tap: out*KH*KW  | window        |
| MEAN, SUM, REDUCE_*, ARG_MAX/MIN                | one accumulate per input element              | reduce        |
| SOFTMAX, LOG_SOFTMAX                            | 3 per input element (max, exp-sum, scale)     | reduce        |
| L2_NORMALIZATION                                | 2 per input element (sum of squares, scale)   | reduce        |
| RESIZE_BILINEAR                                 | 4 per output element (four weighted taps)     | elementwise   |
| reshape-like, CONCATENATION, PAD, slices, ...   | 0: pure data movement (bytes still count)     | move          |
| anything else (ADD, MUL, LOGISTIC, QUANTIZE...) | 1 per output element (one vector-lane op)     | elementwise   |

For GEMM-shaped ops `NodeWork.gemm` gives the (M x K) @ (K x N) view a systolic array maps
(SCALE-Sim's operand matrices: M = output pixels, K = window size, N = filters). Bytes:
`weight_bytes` are constant inputs (weights, bias, shape tensors), `input_bytes` the other
inputs, `output_bytes` the outputs; omitted optional inputs count nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from delegates.spec import data_input
from runtime.kernels.conv import SAME, VALID, out_size_and_padding

_POOLS = {"AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"}
_REDUCERS = {"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "REDUCE_ANY", "REDUCE_ALL",
             "ARG_MAX", "ARG_MIN"}
_PER_INPUT_ELEMENT = {"SOFTMAX": 3, "LOG_SOFTMAX": 3, "L2_NORMALIZATION": 2}
_MOVES = {
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "SHAPE", "CONCATENATION", "PAD", "PADV2", "MIRROR_PAD",
    "STRIDED_SLICE", "SLICE", "SPLIT", "SPLIT_V", "PACK", "UNPACK", "TRANSPOSE", "GATHER", "GATHER_ND",
    "SPACE_TO_DEPTH", "DEPTH_TO_SPACE", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "RESIZE_NEAREST_NEIGHBOR",
    "TILE", "BROADCAST_TO", "REVERSE_V2", "FILL", "ZEROS_LIKE",
}
_TAPS_PER_OUTPUT = {"RESIZE_BILINEAR": 4}


@dataclass(frozen=True)
class ConvGeometry:
    """A conv-like layer in NHWC terms; `transposed` marks TRANSPOSE_CONV (in = the small side)."""

    batch: int
    in_h: int
    in_w: int
    in_c: int
    kernel_h: int
    kernel_w: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    out_h: int
    out_w: int
    out_c: int
    depthwise: bool = False
    transposed: bool = False


@dataclass(frozen=True)
class Gemm:
    """`batch` independent products of an (m x k) and a (k x n) matrix."""

    m: int
    k: int
    n: int
    batch: int = 1

    @property
    def macs(self) -> int:
        return self.batch * self.m * self.k * self.n


@dataclass(frozen=True)
class NodeWork:
    """The work of one node: op, data dtype, MACs, bytes, and geometry for the cost models."""

    op: str
    dtype: str
    macs: int
    weight_bytes: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    elements: int = 0  # output elements
    kind: str = "elementwise"  # gemm | depthwise | window | reduce | move | elementwise
    conv: ConvGeometry | None = None
    gemm: Gemm | None = None

    @property
    def bytes_moved(self) -> int:
        """Every byte the node reads or writes once: inputs, weights and outputs."""
        return self.input_bytes + self.weight_bytes + self.output_bytes


def _count(shape: Sequence[int]) -> int:
    """Elements of a shape; a negative (unknown) dimension counts as 0. Runs per node on every replay."""
    return math.prod(shape) if min(shape, default=0) >= 0 else 0


_PADDINGS = {"SAME": SAME, "VALID": VALID}


def conv_output_size(size: int, kernel: int, stride: int, dilation: int, padding: str) -> int:
    """TFLite's ComputeOutSize (kernels/padding.h), as the interpreter's conv kernels compute it."""
    if padding not in _PADDINGS:
        raise ValueError(f"padding must be SAME or VALID, got {padding!r}")
    return out_size_and_padding(_PADDINGS[padding], size, kernel, stride, dilation)[0]


def conv_work(batch: int, in_h: int, in_w: int, in_c: int, out_c: int, kernel_h: int, kernel_w: int, *,
              stride: int | tuple[int, int] = 1, dilation: int | tuple[int, int] = 1, padding: str = "VALID",
              depthwise: bool = False, dtype: str = "int8", itemsize: int = 1) -> NodeWork:
    """NodeWork of a CONV_2D (or DEPTHWISE_CONV_2D) layer given by its geometry, without a model.

    Weights are counted at `itemsize` bytes per element, activations likewise; bias is left out.
    """
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    out_h = conv_output_size(in_h, kernel_h, sh, dh, padding)
    out_w = conv_output_size(in_w, kernel_w, sw, dw, padding)
    geometry = ConvGeometry(batch, in_h, in_w, in_c, kernel_h, kernel_w, sh, sw, dh, dw, out_h, out_w, out_c,
                            depthwise=depthwise)
    taps_per_output = kernel_h * kernel_w * (1 if depthwise else in_c)
    gemm = None if depthwise else Gemm(batch * out_h * out_w, taps_per_output, out_c)
    weights = kernel_h * kernel_w * out_c * (1 if depthwise else in_c)
    outputs = batch * out_h * out_w * out_c
    return NodeWork(
        op="DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", dtype=dtype,
        macs=outputs * taps_per_output, weight_bytes=weights * itemsize,
        input_bytes=batch * in_h * in_w * in_c * itemsize, output_bytes=outputs * itemsize,
        elements=outputs, kind="depthwise" if depthwise else "gemm", conv=geometry, gemm=gemm,
    )


def gemm_work(m: int, k: int, n: int, *, dtype: str = "int8", itemsize: int = 1,
              op: str = "FULLY_CONNECTED") -> NodeWork:
    """NodeWork of an (m x k) @ (k x n) product with constant (k x n) weights, without a model."""
    return NodeWork(op=op, dtype=dtype, macs=m * k * n, weight_bytes=k * n * itemsize,
                    input_bytes=m * k * itemsize, output_bytes=m * n * itemsize, elements=m * n,
                    kind="gemm", gemm=Gemm(m, k, n))


def _option(options, name: str, default):
    if options is None:
        return default
    # runtime Options (and dicts) have a cheap .get; a missing attribute would cost a raised exception.
    value = options.get(name) if hasattr(options, "get") else getattr(options, name, None)
    return default if value is None else value


def _conv_geometry(op, options, x, w, out) -> tuple[ConvGeometry, int]:
    """Geometry and MACs of CONV_2D / DEPTHWISE_CONV_2D (filters OHWI / 1HWO)."""
    n, h, wd, c = map(int, x.shape)
    _, oh, ow, oc = map(int, out.shape)
    kh, kw = int(w.shape[1]), int(w.shape[2])
    depthwise = op == "DEPTHWISE_CONV_2D"
    geometry = ConvGeometry(
        n, h, wd, c, kh, kw,
        int(_option(options, "stride_h", 1)), int(_option(options, "stride_w", 1)),
        int(_option(options, "dilation_h_factor", 1)), int(_option(options, "dilation_w_factor", 1)),
        oh, ow, oc, depthwise=depthwise,
    )
    per_output = kh * kw * (1 if depthwise else int(w.shape[3]))
    return geometry, n * oh * ow * oc * per_output


def _gemm_and_geometry(op: str, options, ins, outs) -> tuple[int, str, ConvGeometry | None, Gemm | None]:
    """(macs, kind, conv geometry, gemm) for the GEMM-shaped and conv-like ops."""
    out = outs[0]
    if op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        geometry, macs = _conv_geometry(op, options, ins[0], ins[1], out)
        if geometry.depthwise:
            return macs, "depthwise", geometry, None
        k = geometry.kernel_h * geometry.kernel_w * int(ins[1].shape[3])
        return macs, "gemm", geometry, Gemm(geometry.batch * geometry.out_h * geometry.out_w, k, geometry.out_c)
    if op == "TRANSPOSE_CONV":
        w, x = ins[1], ins[2]
        n, h, wd, c = map(int, x.shape)
        oc, kh, kw = int(w.shape[0]), int(w.shape[1]), int(w.shape[2])
        geometry = ConvGeometry(n, h, wd, c, kh, kw, int(_option(options, "stride_h", 1)),
                                int(_option(options, "stride_w", 1)), 1, 1, int(out.shape[1]), int(out.shape[2]),
                                oc, transposed=True)
        gemm = Gemm(n * h * wd, c, kh * kw * oc)
        return gemm.macs, "gemm", geometry, gemm
    if op == "FULLY_CONNECTED":
        n_out, k = map(int, ins[1].shape)
        gemm = Gemm(_count(ins[0].shape) // max(k, 1), k, n_out)
        return gemm.macs, "gemm", None, gemm
    # BATCH_MATMUL: (..., M, K) @ (..., K, N), either side optionally adjoint.
    x, y = ins[0].shape, ins[1].shape
    m, k = (x[-1], x[-2]) if _option(options, "adj_x", False) else (x[-2], x[-1])
    n = y[-2] if _option(options, "adj_y", False) else y[-1]
    batch = _count(out.shape[:-2])
    # A right-hand side shared by the whole batch is one tall GEMM; otherwise `batch` separate ones.
    gemm = Gemm(batch * m, k, n) if _count(y[:-2]) == 1 else Gemm(m, k, n, batch)
    return gemm.macs, "gemm", None, gemm


def _nbytes(t) -> int:
    return _count(t.shape) * t.dtype.itemsize


def node_work(node, tensors: Sequence) -> NodeWork:
    """The NodeWork of a runtime Node, from its tensors' shapes and types (see the module table).

    Args:
        node: a runtime.interpreter.Node (uses .operator, .options, .inputs, .outputs).
        tensors: the subgraph's tensors indexed by tensor index (.shape, .dtype, .type, .is_constant).
    """
    operator = node.operator
    op = operator.op
    ins = [tensors[i] if i >= 0 else None for i in node.inputs]
    outs = [tensors[i] for i in node.outputs if i >= 0]
    present = [t for t in ins if t is not None]
    data = data_input(ins) or (outs[0] if outs else None)
    elements = _count(outs[0].shape) if outs else 0
    in_elements = _count(data.shape) if data is not None else 0

    conv = gemm = None
    if op in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "FULLY_CONNECTED", "BATCH_MATMUL"):
        macs, kind, conv, gemm = _gemm_and_geometry(op, node.options, ins, outs)
    elif op in _POOLS:
        kind = "window"
        macs = elements * int(_option(node.options, "filter_height", 1)) * int(_option(node.options, "filter_width", 1))
    elif op in _REDUCERS or op in _PER_INPUT_ELEMENT:
        kind, macs = "reduce", in_elements * _PER_INPUT_ELEMENT.get(op, 1)
    elif op in _MOVES:
        kind, macs = "move", 0
    else:
        kind, macs = "elementwise", elements * _TAPS_PER_OUTPUT.get(op, 1)

    weight_bytes = input_bytes = 0
    for t in present:
        if t.is_constant:
            weight_bytes += _nbytes(t)
        else:
            input_bytes += _nbytes(t)
    return NodeWork(
        op=operator.display_name,
        dtype=data.type.lower() if data is not None else "",
        macs=int(macs),
        weight_bytes=weight_bytes,
        input_bytes=input_bytes,
        output_bytes=sum([_nbytes(t) for t in outs]),
        elements=elements,
        kind=kind,
        conv=conv,
        gemm=gemm,
    )
