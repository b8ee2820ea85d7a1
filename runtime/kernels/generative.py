"""The ops litert-torch's generative converter adds to a decoder: COS, SIN, EMBEDDING_LOOKUP,
DYNAMIC_UPDATE_SLICE and STABLEHLO_COMPOSITE.

* COS, SIN (sin.cc, cos.cc): float32 `std::cos` / `std::sin` per element (the rotary embedding's angles).
* EMBEDDING_LOOKUP (embedding_lookup.cc): rows of a table picked by int32 ids. A float table gives its rows;
  an int8 or int4 table with a float output gives `scale * q` (the hybrid path), one scale per row
  (per-channel or per-tensor) or one per block of columns (blockwise, the scales a FLOAT16 tensor).
* DYNAMIC_UPDATE_SLICE (dynamic_update_slice.cc): the operand with `update` written at the start indices,
  each clamped to [0, operand_dim - update_dim] as StableHLO's dynamic_update_slice says. The KV cache's write.
* STABLEHLO_COMPOSITE (stablehlo_composite.cc): runs its decomposition subgraph on its inputs and gives that
  subgraph's outputs; its work is one fused kernel doing that subgraph's arithmetic over the composite's own
  inputs and outputs. Which composite it is (odml.rms_norm, odml.scaled_dot_product_attention,
  odml.update_kv_cache, ...) is its `name` in builtin_options_2; LiteRT's builtin kernel runs every
  composite's decomposition, so does this one (ai-edge-litert's reference kernels agree with it on the
  fixtures; note litert-torch 0.10.0 writes a wrong decomposition for odml.scaled_dot_product_attention in
  its BTNH layout, which this reproduces as LiteRT's reference kernels do, fixture report section 6).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check, check_inputs, check_type, unary_prepare
from accelsim.runtime.registration import Registration
from accelsim.runtime.work import NodeWork, measured, subgraph_work


def cosine(x: np.ndarray) -> np.ndarray:
    """COS: float32 cosine per element."""
    return np.cos(x, dtype=np.float32)


def sine(x: np.ndarray) -> np.ndarray:
    """SIN: float32 sine per element."""
    return np.sin(x, dtype=np.float32)


def _trig(op: str, fn) -> Registration:
    def prepare(ctx, node) -> None:
        unary_prepare(ctx, node, op, ("FLOAT32",))

    def invoke(ctx, node) -> None:
        out = ctx.output(node, 0)
        out.data = fn(ctx.input(node, 0).data).reshape(out.shape)

    return Registration(prepare=prepare, invoke=invoke, reference=invoke, work=work.elementwise)


# -- EMBEDDING_LOOKUP ---------------------------------------------------------------------------------


def dequantized_rows(q: np.ndarray, scales: np.ndarray, zero_points: np.ndarray | None = None,
                     block_size: int = 0) -> np.ndarray:
    """`scale * (q - zero_point)` of a [rows, columns] table: `scales` one per row (or one in all), or
    with `block_size` a [rows, columns / block_size] array, one per block of columns."""
    qf = q.astype(np.float32)
    if block_size:
        s = np.repeat(np.asarray(scales, np.float32), block_size, axis=-1)
        return qf * s
    s = np.asarray(scales, np.float32).reshape(-1, *([1] * (q.ndim - 1)))
    zp = np.zeros_like(s) if zero_points is None or not np.size(zero_points) else (
        np.asarray(zero_points, np.float32).reshape(s.shape))
    return (qf - zp) * s


def embedding_lookup(ids: np.ndarray, table: np.ndarray) -> np.ndarray:
    """EMBEDDING_LOOKUP: table rows by id (ids outside the table are refused before)."""
    return table[ids.astype(np.int64)]


def _block_scales(ctx, t) -> np.ndarray | None:
    q = t.quantization
    if q is None or not q.blockwise:
        return None
    return ctx.tensors[q.block_scales].data


def _table(ctx, t) -> np.ndarray:
    """The lookup table as float32 values when it is quantized, else as stored."""
    if t.type == "FLOAT32":
        return t.data
    blocks = _block_scales(ctx, t)
    if blocks is not None:
        return dequantized_rows(t.data, blocks, block_size=t.quantization.block_size)
    return dequantized_rows(t.data, t.scales, t.zero_points)


def _embedding_prepare(ctx, node) -> None:
    check_inputs(node, 2)
    check(len(node.outputs) == 1, "EMBEDDING_LOOKUP takes one output")
    ids, table, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    check_type("EMBEDDING_LOOKUP", ids, ("INT32",))
    check(len(ids.shape) == 1, f"EMBEDDING_LOOKUP: ids must be 1-D, got shape {list(ids.shape)}")
    check(len(table.shape) >= 2,
          f"EMBEDDING_LOOKUP: the table must have 2 or more dimensions, got {list(table.shape)}")
    check_type("EMBEDDING_LOOKUP", table, ("FLOAT32", "INT8", "UINT8", "INT4"))
    quantized = table.type != "FLOAT32"
    check(not quantized or out.type == "FLOAT32",
          f"EMBEDDING_LOOKUP: a quantized ({table.type}) table needs a FLOAT32 output (hybrid), got {out.type}")
    check(quantized or out.type == table.type,
          f"EMBEDDING_LOOKUP: output type {out.type} differs from the table's {table.type}")
    ctx.resize_tensor(out, (ids.shape[0], *table.shape[1:]))


def _embedding_invoke(ctx, node) -> None:
    ids, table, out = ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)
    rows = table.shape[0]
    bad = ids.data[(ids.data < 0) | (ids.data >= rows)]
    check(bad.size == 0, f"EMBEDDING_LOOKUP: id {int(bad[0]) if bad.size else 0} is outside the table's {rows} rows")
    out.data = embedding_lookup(ids.data, _table(ctx, table)).astype(out.dtype).reshape(out.shape)


def _embedding_work(ctx, node) -> NodeWork:
    """Only the picked rows move: the table's bytes read are the rows looked up, not the whole table."""
    w = measured(ctx, node, "move", 0)
    table = ctx.tensors[node.inputs[1]]
    rows = ctx.tensors[node.inputs[0]].shape[0] if ctx.tensors[node.inputs[0]].shape else 1
    row_bytes = work.tensor_bytes(table) // max(table.shape[0], 1)
    read = rows * row_bytes
    reads = (w.reads[0], read)
    return replace(w, reads=reads, weight_bytes=read, input_bytes=reads[0])


# -- DYNAMIC_UPDATE_SLICE -------------------------------------------------------------------------------


def dynamic_update_slice(operand: np.ndarray, update: np.ndarray, start: np.ndarray) -> np.ndarray:
    """DYNAMIC_UPDATE_SLICE: `operand` with `update` at `start`, each index clamped to [0, dim - update dim]."""
    begin = np.clip(np.asarray(start, np.int64), 0, np.subtract(operand.shape, update.shape))
    out = operand.copy()
    out[tuple(slice(b, b + n) for b, n in zip(begin.tolist(), update.shape))] = update
    return out


def _dus_prepare(ctx, node) -> None:
    check_inputs(node, 3)
    check(len(node.outputs) == 1, "DYNAMIC_UPDATE_SLICE takes one output")
    operand, update, start, out = (ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0))
    check(update.type == operand.type and out.type == operand.type,
          f"DYNAMIC_UPDATE_SLICE: operand {operand.type}, update {update.type} and output {out.type} must agree")
    check_type("DYNAMIC_UPDATE_SLICE", start, ("INT32", "INT64"))
    check(len(update.shape) == len(operand.shape) and all(u <= o for u, o in zip(update.shape, operand.shape)),
          f"DYNAMIC_UPDATE_SLICE: update shape {list(update.shape)} does not fit in operand {list(operand.shape)}")
    check(tuple(start.shape) == (len(operand.shape),),
          f"DYNAMIC_UPDATE_SLICE: start indices need shape [{len(operand.shape)}], got {list(start.shape)}")
    ctx.resize_tensor(out, operand.shape)


def _dus_invoke(ctx, node) -> None:
    out = ctx.output(node, 0)
    out.data = dynamic_update_slice(ctx.input(node, 0).data, ctx.input(node, 1).data, ctx.input(node, 2).data)


def _dus_work(ctx, node) -> NodeWork:
    """Only the update is written: LiteRT runs the op in place when the operand is not read again
    (dynamic_update_slice.cc shares the buffer), so the operand is neither read nor copied."""
    w = measured(ctx, node, "move", 0)
    update = w.reads[1]
    reads = (0, update, w.reads[2])
    return replace(w, reads=reads, writes=(update,), input_bytes=sum(reads) - w.weight_bytes, output_bytes=update)


# -- STABLEHLO_COMPOSITE ---------------------------------------------------------------------------------


def composite_options(node):
    """The node's StableHLOCompositeOptions (ModelError-free: a KernelError names the node when absent)."""
    opts = node.operator.options_2 if node.operator is not None else None
    check(opts is not None and "decomposition_subgraph_index" in opts,
          "STABLEHLO_COMPOSITE has no StableHLOCompositeOptions (builtin_options_2)")
    return opts


def _decomposition(ctx, node):
    opts = composite_options(node)
    index = int(opts.decomposition_subgraph_index)
    count = ctx.interpreter.num_subgraphs()
    check(0 <= index < count and index != ctx.subgraph_index,
          f"STABLEHLO_COMPOSITE {opts.name}: decomposition subgraph {index} is not another of the model's "
          f"{count} subgraphs")
    graph = ctx.interpreter.subgraph(index)
    check(len(graph.inputs) == len(node.inputs) and len(graph.outputs) == len(node.outputs),
          f"STABLEHLO_COMPOSITE {opts.name}: decomposition subgraph {index} takes {len(graph.inputs)} inputs and "
          f"gives {len(graph.outputs)} outputs; the node has {len(node.inputs)} and {len(node.outputs)}")
    return graph


def _composite_prepare(ctx, node) -> None:
    graph = _decomposition(ctx, node)
    for i, ti in enumerate(node.inputs):
        src, dst = ctx.tensors[ti], graph.tensors[graph.inputs[i]]
        check(src.type == dst.type, f"STABLEHLO_COMPOSITE input {i} is {src.type} but its decomposition takes "
                                    f"{dst.type}")
        if dst.shape != src.shape:
            graph.context.resize_tensor(dst, src.shape)
    graph.prepare()
    for i, ti in enumerate(node.outputs):
        ctx.resize_tensor(ctx.tensors[ti], graph.tensors[graph.outputs[i]].shape)


def _composite_invoke(ctx, node) -> None:
    graph = _decomposition(ctx, node)
    for i, ti in enumerate(node.inputs):
        graph.tensors[graph.inputs[i]].unchecked_data = ctx.tensors[ti].data
    graph.invoke_nested()
    for i, ti in enumerate(node.outputs):
        ctx.tensors[ti].data = graph.tensors[graph.outputs[i]].data


def _composite_work(ctx, node) -> NodeWork:
    """One fused kernel: the decomposition's arithmetic (every op and fused activation of its nodes) over the
    composite's own inputs and outputs (its intermediates never reach memory), as the delegates that implement
    a composite natively run it (XNNPACK, LiteRT's GPU and NPU paths, fixture report section 6)."""
    index = int(composite_options(node).decomposition_subgraph_index)
    body = subgraph_work(ctx.interpreter, index)
    return measured(ctx, node, "elementwise", sum(w.macs + w.activation_ops for w in body))


def register(resolver) -> None:
    add = resolver.add_builtin
    add("COS", _trig("COS", cosine), 1, 1)
    add("SIN", _trig("SIN", sine), 1, 1)
    # EMBEDDING_LOOKUP: v2 int8 table (hybrid), v3 int4 table, v4 per-channel scales.
    add("EMBEDDING_LOOKUP", Registration(prepare=_embedding_prepare, invoke=_embedding_invoke,
                                         reference=_embedding_invoke, work=_embedding_work), 1, 4)
    add("DYNAMIC_UPDATE_SLICE", Registration(prepare=_dus_prepare, invoke=_dus_invoke, reference=_dus_invoke,
                                             work=_dus_work), 1, 4)
    add("STABLEHLO_COMPOSITE", Registration(prepare=_composite_prepare, invoke=_composite_invoke,
                                            reference=_composite_invoke, work=_composite_work), 1, 1)
