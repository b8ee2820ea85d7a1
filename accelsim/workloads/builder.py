"""The graph litert-torch's converter writes for a decoder, built directly for a named architecture.

`build_model(arch, quant, prefill, context)` gives the `Model` litert-torch's `convert_to_tflite` writes with
the Gemma3 example's export settings (`mask_as_input=True`, `transpose_kv_cache=True`, one prefill length):
signatures `prefill_<N>` (tokens [1,N], input_pos [N], mask [1,1,N,C], KV in, KV out) and `decode` (tokens
[1,1], input_pos [1], mask [1,1,1,C], KV in, logits and KV out); one K and one V cache tensor per layer,
K [1, kv_heads, C, head_dim] and V [1, kv_heads, head_dim, C] (KV_LAYOUT_TRANSPOSED), float32, written by
DYNAMIC_UPDATE_SLICE at input_pos; every RMSNorm a STABLEHLO_COMPOSITE `odml.rms_norm` with its decomposition
subgraph; attention as BATCH_MATMUL / SOFTMAX over the whole cache buffer (static shapes); the weights shared by
both signatures; the tied embedding both the EMBEDDING_LOOKUP table and the decode logits' FULLY_CONNECTED.
Nodes whose results no output needs are dropped, as the converter drops them (prefill computes the last
layer's K and V, not its attention or FFN, and no logits).

What the converter does that the build follows, read off its tiny Gemma3 conversion (tests check the op
sequence and shapes per signature against tests/fixtures/models/llm/): transposes that only move size-1
dimensions are RESHAPEs, identity reshapes vanish, chains of reshapes are one, common subexpressions (the
rotary tables per rope base, the sliding-window mask, the cache write indices) are computed once.
Llama and Qwen are built with the same export settings (mask input, transposed cache): their examples'
own defaults differ (internal mask, BTNH cache), which changes layout ops, not the weights or attention work.

Quantization (`QUANTS`), as litert-torch's recipes write it (converter.py l.207-229; ai-edge-quantizer
recipes): every FULLY_CONNECTED weight and the embedding table quantized, activations float32 and quantized
on the fly (dynamic range):
- int8: INT8 per output channel (dynamic_int8);
- int4: INT4 per output channel (ai-edge-quantizer dynamic_wi4_afp32, what LiteRT-LM's "4-bit per-channel"
  Gemma3 files use);
- int4-block32 / int4-block128: INT4 with one FLOAT16 scale per 32 / 128 inputs (dynamic_int4_block32/128);
- float32: no quantization.

a16w4 is a fully quantized (static) graph: 16-bit integer activations, INT4 weights per output channel, as
ai-edge-quantizer's policy defines it (google-ai-edge/ai-edge-quantizer ai_edge_quantizer/default_policy.py
@ 18aeb2a0: config `static_wi4_ai16` = activations 16 bits, symmetric, per tensor; weights 4 bits, symmetric,
CHANNELWISE; compute INTEGER; for FULLY_CONNECTED, CONV_2D, INPUT, OUTPUT) and `static_wi8_ai16` for the ops
without weights (ADD, BATCH_MATMUL, CONCATENATION, EMBEDDING_LOOKUP, GELU, LOGISTIC, MEAN, MUL, RESHAPE, RSQRT,
SELECT_V2, SLICE, SOFTMAX, SUB, TRANSPOSE, ...); TFLite's 16x8 mode (EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_
INT16_WEIGHTS_INT8) with int4 in place of int8 weights: int16 activations with zero point 0, INT64 biases.
The graph carries, per op:
- INT16 (one scale, zero point 0; scales are placeholders, cost-only): every FULLY_CONNECTED (INT4 weights per
  output channel, INT64 bias), the embedding (the INT4 table shared with the decode logits; its lookup is
  hybrid, FLOAT32 out as TFLite's kernel requires of a quantized table, then one QUANTIZE), the residual ADDs,
  the q/k/v SLICEs, rotary MUL/SUB/ADD/CONCATENATION, attention BATCH_MATMUL/ADD/SOFTMAX,
  GELU / LOGISTIC / MUL of the FFN, RESHAPE and TRANSPOSE, the decode logits;
- FLOAT32, as that policy leaves them (not in either list): the KV cache (DYNAMIC_UPDATE_SLICE is not
  quantizable, so the cache stays float32 and each layer QUANTIZEs the whole K and V buffers before attention
  and DEQUANTIZEs the new K and V into them), `odml.rms_norm` composites (STABLEHLO_COMPOSITE is not in the
  lists: DEQUANTIZE before, QUANTIZE after), COS/SIN and the position arithmetic (CAST, the angle MUL feeding
  COS/SIN: kept float with them, one QUANTIZE of each table), and the mask (its -inf cannot be int16: one
  QUANTIZE of the mask, and of the sliding-window mask, per signature).
litert-torch writes no a16w4 file: the graph is what the quantizer's policy gives applied to litert-torch's
float graph, with our QUANTIZE/DEQUANTIZE placement (QUANTIZE to INT16 version 2, DEQUANTIZE of INT16
version 3, as TFLite versions them). Cost-only: the interpreter has no int16 kernel for several of these ops
(MUL, ADD, ... refuse INT16 at prepare), so it cannot run the graph numerically; `accelsim.workloads.generation`
sizes those nodes from the file's shapes (`Interpreter(int16_as_declared=True)`). Costed, an int16 node is a
NodeWork of dtype int16: two bytes an activation, each kind's int16 rate or its stated fallback (a cpu host
without an int16 rate: one SIMD register a cycle, simd_bits / 16; a tensor NPU: its slowest listed rate; the
GPU delegate takes float tensors only, so int16 nodes fall back to the host, with that reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from flatbuffers import flexbuffers

from accelsim.runtime.ir import (
    AbsentData,
    Model,
    Operator,
    Options,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    int4_bytes,
    make_operator,
    pack_int4,
)
from accelsim.workloads.architectures import Architecture

QUANTS = ("int8", "int4", "int4-block32", "int4-block128", "a16w4", "float32")
_ACT_SCALE = 2.0 ** -10  # assumed: an int16 activation scale (range +-32), a placeholder: the graph is cost-only
_MASK_VALUE = float("-inf")  # litert-torch causal_mask_value (the fixture's SELECT_V2 constant)


def check_quant(quant: str) -> None:
    if quant not in QUANTS:
        raise ValueError(f"unknown quantization {quant!r}; choose one of {', '.join(QUANTS)}")


@dataclass
class _Buffers:
    """The model's buffers (0 the empty sentinel); weights are absent (cost-only) or seeded random."""

    weights: bool
    rng: np.random.Generator
    data: list = field(default_factory=lambda: [b""])

    def add(self, data) -> int:
        self.data.append(data)
        return len(self.data) - 1


@dataclass
class _T:
    name: str
    type: str
    shape: tuple
    buffer: int = 0
    quantization: Quantization | None = None


class _Graph:
    """One subgraph under construction."""

    def __init__(self, name: str, buffers: _Buffers):
        self.name, self.buffers = name, buffers
        self.tensors: list[_T] = []
        self.ops: list[Operator] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.consts: dict = {}
        self.producer: dict[int, Operator] = {}  # tensor -> the node that writes it
        self.consumed: set[int] = set()  # tensors some node reads

    def tensor(self, name: str, type_: str, shape, buffer: int = 0, quantization=None) -> int:
        if type_ == "INT16" and quantization is None:  # an int16 activation: symmetric, one scale, zero point 0
            quantization = Quantization((_ACT_SCALE,), (0,), 0)
        self.tensors.append(_T(name, type_, tuple(int(d) for d in shape), buffer, quantization))
        return len(self.tensors) - 1

    def const(self, value, type_: str | None = None) -> int:
        arr = np.asarray(value, dtype=np.int32 if type_ == "INT32" else np.float32 if type_ == "FLOAT32" else None)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self.consts:
            t = "INT32" if arr.dtype == np.int32 else "FLOAT32"
            self.consts[key] = self.tensor(f"{self.name}_const{len(self.consts)}", t, arr.shape,
                                           self.buffers.add(arr.tobytes()))
        return self.consts[key]

    def qconst(self, value) -> int:
        """A scalar INT16 constant (symmetric, zero point 0) for an int16 MUL."""
        v = float(value)
        key = ("q16", v)
        if key not in self.consts:
            scale = max(abs(v), 1e-12) / 32767
            data = np.array([round(v / scale)], np.int16).tobytes()
            self.consts[key] = self.tensor(f"{self.name}_const{len(self.consts)}", "INT16", (),
                                           self.buffers.add(data), Quantization((scale,), (0,), 0))
        return self.consts[key]

    def type_of(self, t: int) -> str:
        return self.tensors[t].type

    def shape_of(self, t: int) -> tuple:
        return self.tensors[t].shape

    def op(self, op: str, inputs, shape, type_: str | None = None, options_2=None, **options) -> int:
        """A node of `op` with one output of `shape`, typed `type_` (default: its first input's type)."""
        type_ = type_ or self.tensors[inputs[0]].type
        out = self.tensor(f"{self.name}_{op.lower()}_{len(self.ops)}", type_, shape)
        o = make_operator(op, inputs, [out], **options)
        if options_2 is not None:
            o = Operator(o.op, o.inputs, o.outputs, o.version, o.options, o.options_type, options_2=options_2,
                         options_2_type="StableHLOCompositeOptions")
        self.ops.append(o)
        self.producer[out] = o
        self.consumed.update(inputs)
        return out

    # -- the converter's shape rules ---------------------------------------------------------------
    def reshape(self, x: int, shape) -> int:
        shape = tuple(int(d) for d in shape)
        if self.shape_of(x) == shape:
            return x
        o = self.producer.get(x)
        if o is not None and o.op == "RESHAPE" and x not in self.consumed:  # reshapes in a row are one reshape
            self.ops.remove(o)
            del self.producer[x]
            return self.reshape(o.inputs[0], shape)
        return self.op("RESHAPE", [x, self.const(list(shape), "INT32")], shape)

    def transpose(self, x: int, perm) -> int:
        shape = self.shape_of(x)
        out = tuple(shape[p] for p in perm)
        moved = [p for p in perm if shape[p] != 1]
        if moved == sorted(moved):  # only size-1 dimensions move: the same bytes, a reshape
            return self.reshape(x, out)
        return self.op("TRANSPOSE", [x, self.const(list(perm), "INT32")], out)

    def prune(self) -> None:
        """Drop nodes no output needs (the converter's dead-code elimination)."""
        needed = set(self.outputs)
        keep = []
        for o in reversed(self.ops):
            if any(t in needed for t in o.outputs):
                keep.append(o)
                needed.update(t for t in o.inputs if t >= 0)
        self.ops = keep[::-1]

    def freeze(self) -> Subgraph:
        used = set(self.inputs) | set(self.outputs)
        for o in self.ops:
            used.update(t for t in (*o.inputs, *o.outputs) if t >= 0)
        for t in list(used):
            q = self.tensors[t].quantization
            if q is not None and q.blockwise:
                used.add(q.block_scales)
        order = sorted(used)
        index = {t: i for i, t in enumerate(order)}

        def remap(ts):
            return tuple(index[t] if t >= 0 else -1 for t in ts)

        tensors = []
        for t in order:
            x = self.tensors[t]
            q = x.quantization
            if q is not None and q.blockwise:
                q = Quantization(block_size=q.block_size, block_scales=index[q.block_scales], block_zero_points=-1)
            tensors.append(Tensor(x.name, x.type, x.shape, x.buffer, q))
        ops = tuple(Operator(o.op, remap(o.inputs), remap(o.outputs), o.version, o.options, o.options_type,
                             options_2=o.options_2, options_2_type=o.options_2_type) for o in self.ops)
        return Subgraph(tuple(tensors), remap(self.inputs), remap(self.outputs), ops, self.name)


# TFLite's versions (op_version.cc, runtime/op_versions.py): QUANTIZE to INT16 is version 2, DEQUANTIZE of INT16 3.
def _quantize(g: _Graph, x: int) -> int:
    return g.op("QUANTIZE", [x], g.shape_of(x), type_="INT16", version=2)


def _dequantize(g: _Graph, x: int) -> int:
    return g.op("DEQUANTIZE", [x], g.shape_of(x), type_="FLOAT32", version=3)


@dataclass(frozen=True)
class _Weight:
    """A weight as stored: its buffer (shared by the signatures), type, shape, quantization and scales."""

    buffer: int
    type: str
    shape: tuple
    scales: tuple = ()
    block: int = 0
    scale_buffer: int = 0


class _Builder:
    def __init__(self, arch: Architecture, quant: str, prefill: int, context: int, weights: bool, seed: int):
        self.arch, self.quant, self.prefill, self.context = arch, quant, prefill, context
        self.a16 = quant == "a16w4"
        self.act = "INT16" if self.a16 else "FLOAT32"  # the activations' type (module docstring)
        self.buffers = _Buffers(weights, np.random.default_rng(seed))
        self.weights: dict[str, _Weight] = {}
        self.subgraphs: list[_Graph] = []  # signature graphs first, decompositions after

    # -- weights ------------------------------------------------------------------------------------
    def _values(self, shape, scale: float = 0.05) -> np.ndarray:
        return (self.buffers.rng.standard_normal(shape) * scale).astype(np.float32)

    def weight(self, key: str, shape, quantized: bool = True, bias: bool = False) -> _Weight:
        if key in self.weights:
            return self.weights[key]
        rows, cols = shape if len(shape) == 2 else (1, shape[0])
        b = self.buffers
        if bias and self.a16:  # a 16x8 bias: INT64, scale = input scale x weight scale, zero point 0
            data = np.zeros(shape, np.int64).tobytes() if b.weights else AbsentData(8 * int(np.prod(shape)))
            w = _Weight(b.add(data), "INT64", tuple(shape), scales=(_ACT_SCALE,) * int(np.prod(shape)))
        elif not quantized or self.quant == "float32":
            data = self._values(shape).tobytes() if b.weights else AbsentData(4 * int(np.prod(shape)))
            w = _Weight(b.add(data), "FLOAT32", tuple(shape))
        elif self.quant in ("int4-block32", "int4-block128"):
            block = 32 if self.quant == "int4-block32" else 128
            if cols % block:
                raise ValueError(f"{self.arch.name}: {key} has {cols} inputs, not a multiple of the block size {block}")
            if b.weights:
                v = self._values(shape).reshape(rows, cols // block, block)
                s = np.maximum(np.abs(v).max(axis=2), 1e-6) / 7.0
                q = np.clip(np.round(v / s[..., None]), -8, 7).astype(np.int8)
                data, sdata = pack_int4(q), s.astype(np.float16).tobytes()
            else:
                data, sdata = AbsentData(int4_bytes(rows * cols)), AbsentData(2 * rows * (cols // block))
            w = _Weight(b.add(data), "INT4", tuple(shape), block=block, scale_buffer=b.add(sdata))
        else:
            int4 = self.quant in ("int4", "a16w4")
            top = 7 if int4 else 127
            if b.weights:
                v = self._values(shape)
                s = np.maximum(np.abs(v).max(axis=1), 1e-6) / top
                q = np.clip(np.round(v / s[:, None]), -top - 1, top).astype(np.int8)
                data, scales = (pack_int4(q) if int4 else q.tobytes()), tuple(float(x) for x in s)
            else:
                data = AbsentData(int4_bytes(rows * cols) if int4 else rows * cols)
                scales = (1.0,) * rows
            w = _Weight(b.add(data), "INT4" if int4 else "INT8", tuple(shape), scales=scales)
        self.weights[key] = w
        return w

    def weight_tensor(self, g: _Graph, key: str, shape, quantized: bool = True, bias: bool = False) -> int:
        cache = g.consts
        if ("w", key) in cache:
            return cache[("w", key)]
        w = self.weight(key, shape, quantized, bias)
        q = None
        if w.block:
            rows, cols = w.shape
            st = g.tensor(f"{key}_scales", "FLOAT16", (rows, cols // w.block), w.scale_buffer)
            q = Quantization(block_size=w.block, block_scales=st, block_zero_points=-1)
        elif w.scales:
            q = Quantization(w.scales, (0,) * len(w.scales), 0)
        t = g.tensor(key, w.type, w.shape, w.buffer, q)
        cache[("w", key)] = t
        return t

    # -- composites ---------------------------------------------------------------------------------
    def rms_norm(self, g: _Graph, x: int, key: str, size: int) -> int:
        shape = g.shape_of(x)
        if g.type_of(x) == "INT16":  # the composite stays float (module docstring)
            return _quantize(g, self.rms_norm(g, _dequantize(g, x), key, size))
        w = self.weight_tensor(g, key, (size,), quantized=False)
        d = _Graph(f"odml.rms_norm.impl_{len(self.subgraphs)}", self.buffers)
        a0 = d.tensor(f"{d.name}_arg0", "FLOAT32", shape)
        a1 = d.tensor(f"{d.name}_arg1", "FLOAT32", (size,))
        d.inputs = [a0, a1]
        sq = d.op("MUL", [a0, a0], shape)
        mean = d.op("MEAN", [sq, d.const([len(shape) - 1], "INT32")], shape[:-1], keep_dims=False)
        eps = d.op("ADD", [mean, d.const(np.float32(self.arch.norm_eps), "FLOAT32")], shape[:-1])
        r = d.reshape(eps, (*shape[:-1], 1))
        rs = d.op("RSQRT", [r], (*shape[:-1], 1))
        n = d.op("MUL", [a0, rs], shape)
        d.outputs = [d.op("MUL", [n, a1], shape)]
        self.subgraphs.append(d)
        attrs = bytes(flexbuffers.Dumps({"epsilon": float(np.float32(self.arch.norm_eps))}))
        # The index is into self.subgraphs until `build` numbers the decompositions that survive pruning.
        opts = Options(name="odml.rms_norm", decomposition_subgraph_index=len(self.subgraphs) - 1,
                       composite_attributes=tuple(attrs), composite_attributes_format=0, version=0)
        return g.op("STABLEHLO_COMPOSITE", [x, w], shape, options_2=opts)

    def fc(self, g: _Graph, x: int, key: str, units: int, bias: bool = False) -> int:
        shape = g.shape_of(x)
        w = self.weight_tensor(g, key, (units, shape[-1]))
        b = self.weight_tensor(g, key + "_bias", (units,), quantized=False, bias=True) if bias else -1
        return g.op("FULLY_CONNECTED", [x, w, b], (*shape[:-1], units), keep_num_dims=True)

    def scalar(self, g: _Graph, value) -> int:
        """A scalar multiplier for an activation: FLOAT32, or INT16 in an a16w4 graph."""
        return g.qconst(value) if self.a16 else g.const(np.float32(value), "FLOAT32")

    def to_act(self, g: _Graph, x: int) -> int:
        """`x` (float) as the graph's activations: itself, or QUANTIZEd to INT16 in an a16w4 graph."""
        return _quantize(g, x) if self.a16 else x

    def to_float(self, g: _Graph, x: int) -> int:
        return _dequantize(g, x) if g.type_of(x) == "INT16" else x

    # -- one signature ------------------------------------------------------------------------------
    def signature(self, name: str, steps: int, decode: bool) -> _Graph:
        a, c = self.arch, self.context
        g = _Graph(name, self.buffers)
        tokens = g.tensor(f"{name}_tokens", "INT32", (1, steps))
        pos = g.tensor(f"{name}_input_pos", "INT32", (steps,))
        caches = []
        for i in range(a.layers):
            k = g.tensor(f"{name}_kv_cache_k_{i}", "FLOAT32", (1, a.kv_heads, c, a.head_dim))
            v = g.tensor(f"{name}_kv_cache_v_{i}", "FLOAT32", (1, a.kv_heads, a.head_dim, c))
            caches.append((k, v))
        mask = g.tensor(f"{name}_mask", "FLOAT32", (1, 1, steps, c))
        g.inputs = [tokens, pos, *[t for kv in caches for t in kv], mask]
        # Embedding (tied: the same table is the decode logits' weights).
        ids = g.reshape(tokens, (steps,))
        table = self.weight_tensor(g, "embedding", (a.vocab, a.dim))
        # The INT4 table's lookup is hybrid (FLOAT32 out, TFLite embedding_lookup.cc); a16w4 QUANTIZEs it.
        x = self.to_act(g, g.op("EMBEDDING_LOOKUP", [ids, table], (steps, a.dim), type_="FLOAT32"))
        x = g.reshape(x, (1, steps, a.dim))
        if a.embedding_scale:
            x = g.op("MUL", [x, self.scalar(g, a.embedding_scale)], (1, steps, a.dim))
        # Rotary tables, one per rope base.
        half = a.head_dim // 2
        p3 = g.op("CAST", [g.reshape(pos, (1, steps, 1))], (1, steps, 1), type_="FLOAT32")
        ropes = {}
        for base in dict.fromkeys([a.rope_base] + ([a.global_rope_base] if a.sliding_window and any(
                a.is_global(i) for i in range(a.layers)) else [])):
            inv = (1.0 / base ** (np.arange(half) * 2.0 / a.head_dim)).astype(np.float32).reshape(1, 1, half)
            ang = g.op("MUL", [p3, g.const(inv, "FLOAT32")], (1, steps, half))
            ropes[base] = (self.to_act(g, g.op("COS", [ang], (1, steps, half))),
                           self.to_act(g, g.op("SIN", [ang], (1, steps, half))))
        # The sliding-window mask, once for every local layer.
        local_mask = None
        if a.sliding_window and not all(a.is_global(i) for i in range(a.layers)):
            p2 = g.reshape(pos, (steps, 1))
            arange = g.const(np.arange(c, dtype=np.int32).reshape(1, 1, c), "INT32")
            # The converter folds the window into a [1, 1] constant when the positions are [1, 1] (decode).
            win = g.const(np.full((1, 1) if steps == 1 else (), a.sliding_window, np.int32), "INT32")
            lo = g.reshape(g.op("SUB", [p2, win], (steps, 1), type_="INT32"), (1, steps, 1))
            left = g.op("GREATER", [arange, lo], (1, steps, c), type_="BOOL")
            hi = g.reshape(g.op("ADD", [p2, win], (steps, 1), type_="INT32"), (1, steps, 1))
            right = g.op("LESS", [arange, hi], (1, steps, c), type_="BOOL")
            both = g.op("LOGICAL_AND", [left, right], (1, steps, c), type_="BOOL")
            sel = g.op("SELECT_V2", [both, g.const(np.float32(0), "FLOAT32"), g.const(np.float32(_MASK_VALUE),
                                                                                    "FLOAT32")], (1, steps, c),
                       type_="FLOAT32")
            local_mask = g.op("MINIMUM", [mask, g.reshape(sel, (1, 1, steps, c))], (1, 1, steps, c))
        # The masks as the attention ADD takes them (QUANTIZEd once in an a16w4 graph; pruned when unused).
        mask_act = self.to_act(g, mask)
        local_act = self.to_act(g, local_mask) if local_mask is not None else None
        index_k = index_v = None
        outs_kv = []
        H, KV, D, G = a.heads, a.kv_heads, a.head_dim, a.heads // a.kv_heads
        for i in range(a.layers):
            glob = a.is_global(i)
            cos, sin = ropes[a.global_rope_base if glob and a.sliding_window else a.rope_base]
            h = self.rms_norm(g, x, f"l{i}.pre_atten_norm", a.dim)
            qkv = self.fc(g, h, f"l{i}.qkv", (H + 2 * KV) * D, bias=a.qkv_bias)
            qkv = g.reshape(qkv, (1, steps, H + 2 * KV, D))
            q = g.op("SLICE", [qkv, g.const([0, 0, 0, 0], "INT32"), g.const([1, steps, H, D], "INT32")],
                     (1, steps, H, D))
            k = g.op("SLICE", [qkv, g.const([0, 0, H, 0], "INT32"), g.const([1, steps, KV, D], "INT32")],
                     (1, steps, KV, D))
            v = g.op("SLICE", [qkv, g.const([0, 0, H + KV, 0], "INT32"), g.const([1, steps, KV, D], "INT32")],
                     (1, steps, KV, D))
            if a.qk_norm:
                q = self.rms_norm(g, q, f"l{i}.query_norm", D)
                k = self.rms_norm(g, k, f"l{i}.key_norm", D)
            q = self._rope(g, g.transpose(q, (0, 2, 1, 3)), cos, sin)
            k = self._rope(g, g.transpose(k, (0, 2, 1, 3)), cos, sin)
            v = g.transpose(v, (0, 2, 3, 1))
            if index_k is None:
                pf = g.op("CAST", [pos], (steps,), type_="FLOAT32")
                first = pf if steps == 1 else g.op("SLICE", [pf, g.const([0], "INT32"), g.const([1], "INT32")], (1,))
                zero = g.const(np.zeros(1, np.float32), "FLOAT32")
                index_k = g.op("CAST", [g.op("CONCATENATION", [zero, zero, first, zero], (4,), axis=0)], (4,),
                               type_="INT32")
                index_v = g.op("CAST", [g.op("CONCATENATION", [zero, zero, zero, first], (4,), axis=0)], (4,),
                               type_="INT32")
            kc, vc = caches[i]
            k_all = g.op("DYNAMIC_UPDATE_SLICE", [kc, self.to_float(g, k), index_k], (1, KV, c, D))
            v_all = g.op("DYNAMIC_UPDATE_SLICE", [vc, self.to_float(g, v), index_v], (1, KV, D, c))
            g.tensors[k_all].name = f"{name}_kv_cache_k_{i}_output"
            g.tensors[v_all].name = f"{name}_kv_cache_v_{i}_output"
            outs_kv.append((k_all, v_all))
            # Attention over the whole cache buffer (in an a16w4 graph, the whole float cache QUANTIZEd first).
            qs = g.op("MUL", [q, self.scalar(g, a.q_scale)], (1, H, steps, D))
            qs = g.reshape(qs, (1, KV, G * steps, D))
            s = g.op("BATCH_MATMUL", [qs, self.to_act(g, k_all)], (1, KV, G * steps, c), adj_x=False, adj_y=True)
            s = g.reshape(s, (1, H, steps, c))
            s = g.op("ADD", [s, mask_act if glob or local_act is None else local_act], (1, H, steps, c))
            s = g.reshape(s, (1, KV, G * steps, c))
            p = g.op("SOFTMAX", [s], (1, KV, G * steps, c), beta=1.0)
            o = g.op("BATCH_MATMUL", [p, self.to_act(g, v_all)], (1, KV, G * steps, D), adj_x=False, adj_y=True)
            o = g.reshape(g.transpose(g.reshape(o, (1, H, steps, D)), (0, 2, 1, 3)), (1, steps, H * D))
            o = self.fc(g, o, f"l{i}.o", a.dim)
            if a.post_norms:
                o = self.rms_norm(g, o, f"l{i}.post_atten_norm", a.dim)
            x = g.op("ADD", [x, o], (1, steps, a.dim))
            h = self.rms_norm(g, x, f"l{i}.pre_ff_norm", a.dim)
            gate = self.fc(g, h, f"l{i}.gate", a.ffn)
            if a.activation == "gelu_tanh":
                gate = g.op("GELU", [gate], (1, steps, a.ffn), approximate=True)
            else:
                gate = g.op("MUL", [gate, g.op("LOGISTIC", [gate], (1, steps, a.ffn))], (1, steps, a.ffn))
            up = self.fc(g, h, f"l{i}.up", a.ffn)
            f = self.fc(g, g.op("MUL", [gate, up], (1, steps, a.ffn)), f"l{i}.down", a.dim)
            if a.post_norms:
                f = self.rms_norm(g, f, f"l{i}.post_ff_norm", a.dim)
            x = g.op("ADD", [x, f], (1, steps, a.dim))
        kv_outs = [t for kv in outs_kv for t in kv]
        if decode:
            h = self.rms_norm(g, x, "final_norm", a.dim)
            logits = g.op("FULLY_CONNECTED", [h, table, -1], (1, steps, a.vocab), type_=self.act, keep_num_dims=True)
            g.tensors[logits].name = f"{name}_logits_output"
            g.outputs = [logits, *kv_outs]
        else:
            g.outputs = kv_outs
        g.prune()
        return g

    def _rope(self, g: _Graph, x: int, cos: int, sin: int) -> int:
        shape = g.shape_of(x)
        half = (*shape[:-1], shape[-1] // 2)
        x1 = g.op("SLICE", [x, g.const([0, 0, 0, 0], "INT32"), g.const(list(half), "INT32")], half)
        x2 = g.op("SLICE", [x, g.const([0, 0, 0, half[-1]], "INT32"), g.const(list(half), "INT32")], half)
        a = g.op("SUB", [g.op("MUL", [x1, cos], half), g.op("MUL", [x2, sin], half)], half)
        b = g.op("ADD", [g.op("MUL", [x2, cos], half), g.op("MUL", [x1, sin], half)], half)
        return g.op("CONCATENATION", [a, b], shape, axis=3)

    def build(self) -> Model:
        graphs = [self.signature(f"prefill_{self.prefill}", self.prefill, False), self.signature("decode", 1, True)]
        # Each composite kept names its decomposition; decompositions follow the signature graphs in the order
        # their composites run (those of pruned composites are dropped).
        decomps: list[Subgraph] = []
        subgraphs = []
        for g in graphs:
            ops = []
            for o in g.ops:
                if o.op == "STABLEHLO_COMPOSITE":
                    d = self.subgraphs[o.options_2.decomposition_subgraph_index]
                    o = Operator(o.op, o.inputs, o.outputs, o.version, o.options, o.options_type,
                                 options_2=o.options_2.replace(decomposition_subgraph_index=len(graphs) + len(decomps)),
                                 options_2_type=o.options_2_type)
                    decomps.append(d.freeze())
                ops.append(o)
            g.ops = ops
            subgraphs.append(g.freeze())
        sigs = []
        for si, (g, sg) in enumerate(zip(graphs, subgraphs)):
            strip = len(g.name) + 1
            ins = sorted((sg.tensors[t].name[strip:], t) for t in sg.inputs)
            outs = sorted((sg.tensors[t].name[strip:-len("_output")], t) for t in sg.outputs)
            sigs.append(SignatureDef(g.name, si, tuple(ins), tuple(outs)))
        return Model(subgraphs=(*subgraphs, *decomps), buffers=tuple(self.buffers.data),
                     description=f"accelsim.workloads.builder: {self.arch.name} {self.quant} "
                                 f"prefill {self.prefill} context {self.context}", signature_defs=tuple(sigs))


def build_model(arch: Architecture, quant: str, prefill: int, context: int, *, weights: bool = False,
                seed: int = 0) -> Model:
    """The LLM graph litert-torch writes for `arch` (module docstring), weights random (`weights`) or absent.

    Raises:
        ValueError: an unknown or unsupported quantization, or lengths that do not fit (prefill above context).
    """
    check_quant(quant)
    if not 1 <= prefill <= context:
        raise ValueError(f"prefill length {prefill} must be between 1 and the context {context}")
    return _Builder(arch, quant, prefill, context, weights, seed).build()
