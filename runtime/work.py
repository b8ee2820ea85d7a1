"""How much work a node is, reported by its own kernel from shapes, options and constant sizes.

Every `Registration` may carry a ``work(context, node) -> NodeWork`` hook; the builtin kernel
modules pass one of the estimators below (or their own) for each op they register, so the work
of a node comes from the code that runs it and an op without a hook is an error, never a guess
(`node_work`). Estimators read shapes and types only (never tensor values), so cost-only runs
stay fast. One op of each class means:

| class (`NodeWork.kind`) | one op is                                          | e.g.                          |
|-------------------------|----------------------------------------------------|-------------------------------|
| gemm                    | a multiply-accumulate of an (M x K) @ (K x N)      | CONV_2D, FULLY_CONNECTED      |
| depthwise               | a MAC of a per-channel window (one input channel)  | DEPTHWISE_CONV_2D             |
| window                  | an add or compare per window tap                   | AVERAGE/MAX_POOL_2D           |
| reduce                  | an accumulate per input element (x passes)         | MEAN, SUM, SOFTMAX (3 passes) |
| elementwise             | one vector-lane operation per output element       | ADD, float LOGISTIC, QUANTIZE |
| lookup                  | one table lookup per output element                | int8 LOGISTIC/TANH/EXP        |
| move                    | nothing computed: only bytes move                  | RESHAPE, CONCATENATION, PAD   |
| control                 | the work of the subgraphs it ran, times trips      | WHILE, IF, CALL_ONCE          |

A fused activation (CONV_2D with RELU6) adds one elementwise op per output element in
`NodeWork.activation_ops`. For GEMM-shaped ops `NodeWork.gemm` gives the (M x K) @ (K x N)
view a systolic array maps (SCALE-Sim's operand matrices: M = output pixels, K = window
size, N = filters). Bytes: `reads`/`writes` per input/output tensor (0 for an omitted
optional input); `weight_bytes` sums the constant inputs (weights, bias, shape tensors),
`input_bytes` the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from accelsim.runtime.errors import WorkError

KINDS = ("gemm", "depthwise", "window", "reduce", "elementwise", "lookup", "move", "control")

# Where a control-flow node's trip count came from (NodeWork.trips_from).
TRIPS_FROM = ("run", "constant", "shape", "branch", "override", "default")


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
    """The work of one node: op, data dtype, ops of its class, bytes, geometry; control flow nests its bodies.

    A control-flow node (`kind == "control"`) does no work of its own: it ran `body` `trips`
    times and `once` once (WHILE's last, failing cond). `trips` is None while unknown (cost-only,
    no constant or shape bound); `resolve_trips` fills it from overrides or a default.
    """

    op: str
    dtype: str
    macs: int
    weight_bytes: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    elements: int = 0  # output elements
    kind: str = "elementwise"
    conv: ConvGeometry | None = None
    gemm: Gemm | None = None
    activation_ops: int = 0
    reads: tuple[int, ...] = ()
    writes: tuple[int, ...] = ()
    body: tuple[NodeWork, ...] = ()
    once: tuple[NodeWork, ...] = ()
    trips: int | None = 1
    trips_from: str = ""
    where: str = ""  # "<subgraph>:<node>", the key a trip-count override names
    rows: int = 0  # independent rows a row-wise op works along its last axis (SOFTMAX); 0: not row-wise

    @property
    def bytes_moved(self) -> int:
        """Every byte the node reads or writes once: inputs, weights and outputs."""
        return self.input_bytes + self.weight_bytes + self.output_bytes

    @property
    def total_ops(self) -> int:
        """Ops of every class this node stands for, bodies times trips included (unknown trips count 0)."""
        if self.kind != "control":
            return self.macs + self.activation_ops
        inner = sum([w.total_ops for w in self.body])
        return (self.trips or 0) * inner + sum([w.total_ops for w in self.once])


@dataclass(frozen=True)
class LoopTrips:
    """Trip counts for control-flow nodes whose count the model does not fix.

    Args:
        default_trips: trips of any loop whose count is unknown (None: such a loop is an error).
        nodes: "<subgraph>:<node>" -> trips, overriding what the run or the model says.
    """

    default_trips: int | None = None
    nodes: Mapping[str, int] = field(default_factory=dict)


def node_work(context, node) -> NodeWork:
    """The work its registration's `work` hook reports for `node` (prepared).

    Raises:
        WorkError: the registration has no work hook (the op would otherwise be costed silently).
    """
    registration = node.registration
    hook = getattr(registration, "work", None)
    if hook is None:
        raise WorkError(
            f"{_node_name(context, node)} has no work model: its Registration has no work hook. Give it "
            "Registration(work=...), e.g. one of runtime.work's estimators (elementwise, lookup, move, reduce, "
            "window, conv, depthwise_conv, fully_connected, batch_matmul) or your own returning a NodeWork")
    work = hook(context, node)
    if not isinstance(work, NodeWork):
        raise WorkError(f"{_node_name(context, node)}: the work hook returned {type(work).__name__}, not a NodeWork")
    return work


def subgraph_work(interpreter, index: int) -> tuple[NodeWork, ...]:
    """The work of every node in subgraph `index`'s execution plan, in plan order (it must be prepared)."""
    graph = interpreter.subgraph(index)
    return tuple([node_work(graph.context, graph.nodes[ni]) for ni in graph.execution_plan])


def _node_name(context, node) -> str:
    op = node.operator.display_name if node.operator is not None else node.op_name
    return f"subgraph {context.subgraph_index} node {node.index} ({op})"


def where(context, node) -> str:
    """The "<subgraph>:<node>" key that names a node in trip-count overrides."""
    return f"{context.subgraph_index}:{node.index}"


# -- trip counts ---------------------------------------------------------------------------------


def resolve_trips(work: NodeWork, loops: LoopTrips, how_to_set: str = "LoopTrips") -> NodeWork:
    """`work` with every control-flow trip count fixed: override, else what is known, else the default.

    Args:
        work: a node's work, possibly a control-flow node with nested bodies.
        loops: overrides and default.
        how_to_set: how the caller lets users set them, for the error message.

    Raises:
        WorkError: a loop's trip count is unknown and `loops` has no override or default for it.
    """
    if work.kind != "control":
        return work
    body = tuple([resolve_trips(w, loops, how_to_set) for w in work.body])
    once = tuple([resolve_trips(w, loops, how_to_set) for w in work.once])
    trips, source = work.trips, work.trips_from
    if work.where in loops.nodes:
        trips, source = int(loops.nodes[work.where]), "override"
    elif trips is None and loops.default_trips is not None:
        trips, source = int(loops.default_trips), "default"
    elif trips is None:
        raise WorkError(
            f"subgraph {work.where.replace(':', ' node ')} ({work.op}): the trip count is unknown (no constant "
            f"or shape bound in its cond subgraph); set it for node {work.where!r} or a default ({how_to_set})")
    return replace(work, body=body, once=once, trips=trips, trips_from=source)


def control_nodes(work: NodeWork) -> list[NodeWork]:
    """Every control-flow node in `work`, itself first, then those nested in its bodies."""
    if work.kind != "control":
        return []
    found = [work]
    for w in (*work.body, *work.once):
        found.extend(control_nodes(w))
    return found


# -- folding shape arithmetic (loop bounds) ------------------------------------------------------


class Folded(NamedTuple):
    """A tensor's value known before anything runs, and whether it came from a tensor's shape."""

    value: np.ndarray
    from_shape: bool


def _strided_slice_1d(x: np.ndarray, begin, end, strides, options) -> np.ndarray | None:
    """STRIDED_SLICE of a 1-D value (what loop bounds slice out of a SHAPE), masks honoured; else None."""
    if x.ndim != 1 or len(begin) != 1:
        return None
    b = None if int(option(options, "begin_mask", 0)) & 1 else int(begin[0])
    e = None if int(option(options, "end_mask", 0)) & 1 else int(end[0])
    if int(option(options, "shrink_axis_mask", 0)) & 1:
        return np.asarray(x[int(begin[0])])
    return x[b:e:int(strides[0])]


def _fold_op(op: str, node, args: list[np.ndarray], out) -> np.ndarray | None:
    """The value of one foldable op on known arguments, or None for an op this folder does not know."""
    options = node.options
    if op in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS") and min(out.shape, default=0) >= 0:
        return args[0].reshape(out.shape)
    if op == "CAST":
        return args[0].astype(out.dtype)
    if op == "GATHER" and int(option(options, "batch_dims", 0)) == 0:
        return np.take(args[0], args[1], axis=int(option(options, "axis", 0)))
    if op == "STRIDED_SLICE":
        return _strided_slice_1d(args[0], *args[1:4], options)
    if op == "PACK":
        return np.stack(args, axis=int(option(options, "axis", 0)))
    if op in _FOLD_ARITHMETIC and int(option(options, "fused_activation_function", 0)) == 0:
        return _FOLD_ARITHMETIC[op](args[0], args[1]).astype(out.dtype)
    return None


_FOLD_ARITHMETIC = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "MINIMUM": np.minimum,
                    "MAXIMUM": np.maximum}


def fold(graph, index: int, known: Mapping[int, Folded] | None = None) -> Folded | None:
    """A tensor's value when constants and static shapes fix it (a loop's start or bound), else None.

    Follows SHAPE, STRIDED_SLICE/GATHER/RESHAPE/CAST/PACK and integer ADD/SUB/MUL/MIN/MAX back to
    constants and shapes; `known` gives values of other tensors (a cond subgraph's loop invariants).

    Args:
        graph: a prepared runtime subgraph (.tensors, .nodes, .execution_plan).
        index: the tensor.
        known: tensor index -> value already known.
    """
    known = known or {}
    producer = {t: graph.nodes[ni] for ni in graph.execution_plan for t in graph.nodes[ni].outputs}

    def value(t: int) -> Folded | None:
        if t in known:
            return known[t]
        tensor = graph.tensors[t]
        if tensor.is_constant:
            return Folded(np.asarray(tensor.data), False)
        node = producer.get(t)
        if node is None or node.operator is None:
            return None
        op = node.operator.op
        if op == "SHAPE":
            source = graph.tensors[node.inputs[0]]
            if source.dynamic or min(source.shape, default=0) < 0:
                return None
            return Folded(np.asarray(source.shape, dtype=tensor.dtype), True)
        args = [value(i) for i in node.inputs if i >= 0]
        if any(a is None for a in args):
            return None
        result = _fold_op(op, node, [a.value for a in args], tensor)
        return None if result is None else Folded(result, any(a.from_shape for a in args))

    return value(index)


# -- estimators ----------------------------------------------------------------------------------


def _count(shape: Sequence[int]) -> int:
    """Elements of a shape; a negative (unknown) dimension counts as 0."""
    return math.prod(shape) if min(shape, default=0) >= 0 else 0


def _nbytes(t) -> int:
    count = _count(t.shape)
    return (count + 1) // 2 if t.type == "INT4" else count * t.dtype.itemsize


def tensor_bytes(t) -> int:
    """The bytes a tensor takes as stored (INT4 packed two a byte)."""
    return _nbytes(t)


def _scale_bytes(tensors, t) -> int:
    """The bytes of a blockwise-quantized constant's scale tensor (read with its weights), else 0."""
    q = getattr(t, "quantization", None)
    return _nbytes(tensors[q.block_scales]) if q is not None and q.blockwise and q.block_scales >= 0 else 0


def option(options, name: str, default=None):
    """An op option by name (runtime Options, a dict or an object), `default` when absent or None."""
    if options is None:
        return default
    value = options.get(name) if hasattr(options, "get") else getattr(options, name, None)
    return default if value is None else value


def data_input(inputs: Sequence):
    """The input an op computes on: the first non-constant one, else the first present one, else None.

    SPLIT's axis and TRANSPOSE_CONV's output shape come first but are constants, so they are skipped.
    """
    present = [t for t in inputs if t is not None]
    return next((t for t in present if not t.is_constant), present[0] if present else None)


def measured(context, node, kind: str, macs: int, **extra) -> NodeWork:
    """A NodeWork of `kind` and `macs` with the node's bytes, dtype, elements and fused activation filled in.

    The helper custom-op hooks use too: ``measured(context, node, "elementwise", elements)``.
    """
    tensors = context.tensors
    ins = [tensors[i] if i >= 0 else None for i in node.inputs]
    outs = [tensors[i] for i in node.outputs if i >= 0]
    reads = tuple([_nbytes(t) + (_scale_bytes(tensors, t) if t.is_constant else 0) if t is not None else 0
                   for t in ins])
    writes = tuple([_nbytes(t) for t in outs])
    weight_bytes = sum([r for t, r in zip(ins, reads) if t is not None and t.is_constant])
    data = data_input(ins) or (outs[0] if outs else None)
    elements = _count(outs[0].shape) if outs else 0
    fused = option(node.options, "fused_activation_function", 0)
    # ActivationFunctionType 0 is NONE; any other clamps or maps every output element once more.
    activation = elements if int(fused) else 0
    op = node.operator.display_name if node.operator is not None else node.op_name
    return NodeWork(op=op, dtype=data.type.lower() if data is not None else "", macs=int(macs),
                    weight_bytes=weight_bytes, input_bytes=sum(reads) - weight_bytes, output_bytes=sum(writes),
                    elements=elements, kind=kind, activation_ops=activation, reads=reads, writes=writes, **extra)


def _out_elements(context, node) -> int:
    outs = [t for t in node.outputs if t >= 0]
    return _count(context.tensors[outs[0]].shape) if outs else 0


def _in_elements(context, node) -> int:
    data = data_input([context.tensors[i] if i >= 0 else None for i in node.inputs])
    return _count(data.shape) if data is not None else 0


def elementwise(context, node) -> NodeWork:
    """One vector-lane op per output element (ADD, MUL, comparisons, float activations, QUANTIZE, CAST)."""
    return measured(context, node, "elementwise", _out_elements(context, node))


def per_output(ops: int) -> Callable:
    """An estimator of `ops` elementwise ops per output element (RESIZE_BILINEAR: 4 weighted taps)."""

    def estimate(context, node) -> NodeWork:
        return measured(context, node, "elementwise", ops * _out_elements(context, node))

    return estimate


def lookup(context, node) -> NodeWork:
    """One table lookup per output element: 8/16-bit transcendentals read a table built at prepare."""
    return measured(context, node, "lookup", _out_elements(context, node))


def lookup_if_quantized(context, node) -> NodeWork:
    """`lookup` for integer inputs (the kernel reads a table), `elementwise` for float ones."""
    data = data_input([context.tensors[i] if i >= 0 else None for i in node.inputs])
    if data is not None and data.type in ("INT8", "UINT8", "INT16"):
        return lookup(context, node)
    return elementwise(context, node)


def move(context, node) -> NodeWork:
    """Pure data movement: nothing computed, every byte read and written once (RESHAPE, PAD, GATHER, ...)."""
    return measured(context, node, "move", 0)


def reduce(context, node) -> NodeWork:
    """One accumulate per input element (MEAN, SUM, REDUCE_*, ARG_MAX/MIN, CUMSUM)."""
    return measured(context, node, "reduce", _in_elements(context, node))


def per_input(passes: int) -> Callable:
    """A reduce estimator of `passes` ops per input element (SOFTMAX: max, exp-sum, scale = 3)."""

    def estimate(context, node) -> NodeWork:
        return measured(context, node, "reduce", passes * _in_elements(context, node))

    return estimate


def row_wise(passes: int) -> Callable:
    """`per_input(passes)` for an op that works row by row along its last axis (SOFTMAX, LOG_SOFTMAX: max,
    exp-sum, scale = 3 passes; TFLite's softmax kernels reduce over the last dimension), recording its rows."""
    reduce_passes = per_input(passes)

    def estimate(context, node) -> NodeWork:
        work = reduce_passes(context, node)
        data = data_input([context.tensors[i] if i >= 0 else None for i in node.inputs])
        depth = int(data.shape[-1]) if data is not None and len(data.shape) else 0
        return replace(work, rows=_count(data.shape) // depth) if depth > 0 else work

    return estimate


def window(context, node) -> NodeWork:
    """One add or compare per window tap: output elements x filter height x filter width."""
    options = node.options
    taps = int(option(options, "filter_height", 1)) * int(option(options, "filter_width", 1))
    return measured(context, node, "window", _out_elements(context, node) * taps)


def _conv_geometry(context, node, depthwise: bool) -> ConvGeometry:
    tensors, options = context.tensors, node.options
    n, h, wd, c = map(int, tensors[node.inputs[0]].shape)
    w = tensors[node.inputs[1]].shape
    _, oh, ow, oc = map(int, tensors[node.outputs[0]].shape)
    return ConvGeometry(
        n, h, wd, c, int(w[1]), int(w[2]),
        int(option(options, "stride_h", 1)), int(option(options, "stride_w", 1)),
        int(option(options, "dilation_h_factor", 1)), int(option(options, "dilation_w_factor", 1)),
        oh, ow, oc, depthwise=depthwise,
    )


def conv(context, node) -> NodeWork:
    """CONV_2D (filters OHWI, grouped when I < input channels): out pixels x filters x KH*KW*I MACs."""
    g = _conv_geometry(context, node, False)
    k = g.kernel_h * g.kernel_w * int(context.tensors[node.inputs[1]].shape[3])
    gemm = Gemm(g.batch * g.out_h * g.out_w, k, g.out_c)
    return measured(context, node, "gemm", gemm.macs, conv=g, gemm=gemm)


def depthwise_conv(context, node) -> NodeWork:
    """DEPTHWISE_CONV_2D (filters 1HWO): one input channel per output, KH*KW MACs each."""
    g = _conv_geometry(context, node, True)
    macs = g.batch * g.out_h * g.out_w * g.out_c * g.kernel_h * g.kernel_w
    return measured(context, node, "depthwise", macs, conv=g)


def transpose_conv(context, node) -> NodeWork:
    """TRANSPOSE_CONV: every input pixel scattered through the whole kernel, N*H*W*Cin*KH*KW*Cout MACs."""
    tensors, options = context.tensors, node.options
    w, x, out = tensors[node.inputs[1]], tensors[node.inputs[2]], tensors[node.outputs[0]]
    n, h, wd, c = map(int, x.shape)
    oc, kh, kw = int(w.shape[0]), int(w.shape[1]), int(w.shape[2])
    g = ConvGeometry(n, h, wd, c, kh, kw, int(option(options, "stride_h", 1)), int(option(options, "stride_w", 1)),
                     1, 1, int(out.shape[1]), int(out.shape[2]), oc, transposed=True)
    gemm = Gemm(n * h * wd, c, kh * kw * oc)
    return measured(context, node, "gemm", gemm.macs, conv=g, gemm=gemm)


def conv3d(context, node) -> NodeWork:
    """CONV_3D (filters DHWIO): output voxels x filters x KD*KH*KW*I MACs."""
    tensors = context.tensors
    w, out = tensors[node.inputs[1]].shape, tensors[node.outputs[0]].shape
    gemm = Gemm(_count(out[:-1]), _count(w[:-1]), int(w[-1]))
    return measured(context, node, "gemm", gemm.macs, gemm=gemm)


def done_at_prepare(context, node) -> NodeWork:
    """Nothing per invoke: the kernel computed its output at prepare (e.g. DEQUANTIZE of a constant)."""
    work = measured(context, node, "move", 0)
    return replace(work, weight_bytes=0, input_bytes=0, output_bytes=0, reads=(0,) * len(work.reads),
                   writes=(0,) * len(work.writes), activation_ops=0)


def fully_connected(context, node) -> NodeWork:
    """FULLY_CONNECTED: (M x K) @ (K x N), M = input elements / K, weights N x K."""
    tensors = context.tensors
    n_out, k = map(int, tensors[node.inputs[1]].shape)
    gemm = Gemm(_count(tensors[node.inputs[0]].shape) // max(k, 1), k, n_out)
    work = measured(context, node, "gemm", gemm.macs, gemm=gemm)
    if tensors[node.inputs[0]].type == "FLOAT32" and tensors[node.inputs[1]].type in ("INT8", "INT4"):
        # The hybrid path quantizes each input row to int8 and multiplies in integers: int8 MACs.
        work = replace(work, dtype="int8")
    return work


def batch_matmul(context, node) -> NodeWork:
    """BATCH_MATMUL: (..., M, K) @ (..., K, N), either side optionally adjoint."""
    tensors, options = context.tensors, node.options
    x, y = tensors[node.inputs[0]].shape, tensors[node.inputs[1]].shape
    m, k = (x[-1], x[-2]) if option(options, "adj_x", False) else (x[-2], x[-1])
    n = y[-2] if option(options, "adj_y", False) else y[-1]
    batch = _count(tensors[node.outputs[0]].shape[:-2])
    # A right-hand side shared by the whole batch is one tall GEMM; otherwise `batch` separate ones.
    gemm = Gemm(batch * m, k, n) if _count(y[:-2]) == 1 else Gemm(m, k, n, batch)
    return measured(context, node, "gemm", gemm.macs, gemm=gemm)


# -- work without a model (benchmarks and cross-checks) -------------------------------------------


def conv_output_size(size: int, kernel: int, stride: int, dilation: int, padding: str) -> int:
    """TFLite's ComputeOutSize (kernels/padding.h), as the interpreter's conv kernels compute it."""
    # Imported here: the kernel modules import this one for their work hooks.
    from accelsim.runtime.kernels.conv.geometry import SAME, VALID, out_size_and_padding

    paddings = {"SAME": SAME, "VALID": VALID}
    if padding not in paddings:
        raise ValueError(f"padding must be SAME or VALID, got {padding!r}")
    return out_size_and_padding(paddings[padding], size, kernel, stride, dilation)[0]


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
