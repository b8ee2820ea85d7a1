"""An LLM .tflite as LiteRT-LM runs it: its prefill and decode signatures and the KV cache they pass.

LiteRT-LM (runtime/executor/llm_litert_compiled_model_executor.cc @ 767d74f l.64-84) finds the prefill
signatures by the prefix `prefill` and the decode one by the name `decode`, and recognises KV-cache inputs by
the prefixes `kv_cache_k_` / `kv_cache_v_` (or `k_cache_` / `v_cache_`); each is passed in and the
signature gives the updated cache back under the same name. `read_llm` checks exactly that, and what the
costing needs (weights it can size, composites it knows), and refuses anything else with one line naming
the signature, tensor or op.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from accelsim.runtime.errors import ModelError
from accelsim.runtime.ir import Model, Operator, SignatureDef, Subgraph

KV_PREFIXES = (("kv_cache_k_", "kv_cache_v_"), ("k_cache_", "v_cache_"))
# Composites whose decomposition accelsim runs and costs (litert-torch's HLFB names, layers/*.py).
KNOWN_COMPOSITES = ("odml.rms_norm", "odml.scaled_dot_product_attention", "odml.update_kv_cache",
                    "odml.update_external_kv_cache")
_WEIGHT_TYPES = ("FLOAT32", "FLOAT16", "INT8", "INT4")
_SUBGRAPH_FIELD = re.compile(r"subgraph_index$")


@dataclass(frozen=True)
class LlmGraph:
    """An LLM file's signatures: prefill lengths to their keys, the decode key, the KV pairs and the context."""

    model: Model
    name: str
    prefill: dict[int, str]
    decode: str
    kv: tuple[tuple[str, str], ...]  # (K name, V name) per layer, as the signatures name them
    context: int


def _sig(model: Model, key: str) -> tuple[SignatureDef, Subgraph]:
    sd = next(s for s in model.signature_defs if s.key == key)
    return sd, model.subgraphs[sd.subgraph_index]


def _kv_pairs(model: Model, key: str, where: str) -> tuple[tuple[tuple[str, str], ...], int]:
    sd, sg = _sig(model, key)
    ins, outs = dict(sd.inputs), dict(sd.outputs)
    names = {}
    for kp, vp in KV_PREFIXES:
        for n in ins:
            for p, role in ((kp, "k"), (vp, "v")):
                if n.startswith(p):
                    names[(role, n[len(p):])] = n
    if not names:
        raise ModelError(f"{where}: signature {key!r} has no KV-cache inputs (names starting kv_cache_k_ / "
                         f"kv_cache_v_ or k_cache_ / v_cache_); inputs: {', '.join(sorted(ins))}")
    layers = sorted({layer for _, layer in names}, key=lambda s: (len(s), s))
    pairs, context = [], None
    for layer in layers:
        if ("k", layer) not in names or ("v", layer) not in names:
            have = names.get(("k", layer)) or names.get(("v", layer))
            missing = "V" if ("k", layer) in names else "K"
            raise ModelError(f"{where}: signature {key!r}: KV tensor {have!r} has no {missing} partner for layer "
                             f"{layer}")
        for role in ("k", "v"):
            n = names[(role, layer)]
            if n not in outs:
                raise ModelError(f"{where}: signature {key!r}: KV input {n!r} is not given back as an output of "
                                 f"the same name (outputs: {', '.join(sorted(outs))})")
            t_in, t_out = sg.tensors[ins[n]], sg.tensors[outs[n]]
            if t_in.shape != t_out.shape or t_in.type != t_out.type:
                raise ModelError(f"{where}: signature {key!r}: KV tensor {n!r} goes in as "
                                 f"{t_in.type}{list(t_in.shape)} but comes out as {t_out.type}{list(t_out.shape)}")
        k, v = sg.tensors[ins[names[("k", layer)]]], sg.tensors[ins[names[("v", layer)]]]
        if sorted(k.shape) != sorted(v.shape):
            raise ModelError(f"{where}: signature {key!r}: KV tensors {names[('k', layer)]!r} {list(k.shape)} and "
                             f"{names[('v', layer)]!r} {list(v.shape)} do not pair up (different sizes)")
        length = _cache_length(k.shape, v.shape)
        if context is not None and length != context:
            raise ModelError(f"{where}: signature {key!r}: KV tensor {names[('k', layer)]!r} holds {length} "
                             f"positions, the others {context}")
        context = length
        pairs.append((names[("k", layer)], names[("v", layer)]))
    return tuple(pairs), int(context)


def _cache_length(k: tuple, v: tuple) -> int:
    """The positions a K/V pair holds: K [B, N, T, H] and V [B, N, H, T] (transposed) or both [B, T, N, H]."""
    if len(k) == 4 and k[2:] == (v[3], v[2]) and k[:2] == v[:2]:
        return k[2]
    return k[1] if len(k) == 4 else k[-2]


def _check_ops(model: Model, key: str, where: str) -> None:
    sd, sg = _sig(model, key)
    seen = {sd.subgraph_index}
    todo = [(sd.subgraph_index, key)]
    while todo:
        si, label = todo.pop()
        g = model.subgraphs[si]
        for oi, op in enumerate(g.operators):
            if op.op == "STABLEHLO_COMPOSITE":
                opts = op.options_2
                name = opts.get("name") if opts is not None else None
                if name not in KNOWN_COMPOSITES:
                    raise ModelError(f"{where}: signature {label!r} op {oi}: STABLEHLO_COMPOSITE {name!r} is not a "
                                     f"composite accelsim knows ({', '.join(KNOWN_COMPOSITES)})")
                d = int(opts.decomposition_subgraph_index)
                if d not in seen:
                    seen.add(d)
                    todo.append((d, label))
        for oi, op in enumerate(g.operators):
            if op.op not in ("FULLY_CONNECTED", "EMBEDDING_LOOKUP") or len(op.inputs) < 2 or op.inputs[1] < 0:
                continue
            t = g.tensors[op.inputs[1]]
            if not t.buffer or not len(model.buffer_bytes(t.buffer)):
                continue
            q = t.quantization
            what = f"{where}: signature {label!r} op {oi} ({op.op}): weight tensor {t.name!r}: unsupported quantization"
            if t.type not in _WEIGHT_TYPES:
                raise ModelError(f"{what} ({t.type}; weights must be {', '.join(_WEIGHT_TYPES)})")
            if q is not None and q.blockwise and q.block_zero_points >= 0:
                raise ModelError(f"{what} (blockwise with zero points; only symmetric blockwise int4 is supported)")
            if t.type in ("INT4", "INT8") and (q is None or not (q.blockwise or q.is_quantized)):
                raise ModelError(f"{what} ({t.type} without per-channel or blockwise scales)")


def read_llm(model: Model, name: str = "<model>") -> LlmGraph:
    """The signatures of an LLM file, checked (module docstring).

    Raises:
        ModelError: no prefill or no decode signature, KV tensors that do not pair up, unsupported weights or
            an unknown composite; the message names the file, signature, tensor or op.
    """
    keys = [s.key for s in model.signature_defs]
    prefill = {}
    for k in keys:
        if k.startswith("prefill"):
            sd, sg = _sig(model, k)
            pos = dict(sd.inputs).get("input_pos")
            if pos is None:
                raise ModelError(f"{name}: signature {k!r} has no input_pos input (its prefill length)")
            prefill[int(sg.tensors[pos].shape[0])] = k
    if not prefill:
        raise ModelError(f"{name}: no prefill signature (a name starting 'prefill'); signatures: "
                         f"{', '.join(keys) or 'none'}")
    if "decode" not in keys:
        raise ModelError(f"{name}: signature {sorted(prefill.values())[0]!r} has no decode signature to go with it "
                         f"(signatures: {', '.join(keys)})")
    kv, context = _kv_pairs(model, "decode", name)
    for k in prefill.values():
        pkv, pctx = _kv_pairs(model, k, name)
        if pkv != kv or pctx != context:
            raise ModelError(f"{name}: signature {k!r} passes KV tensors {[n for p in pkv for n in p][:4]}... of "
                             f"{pctx} positions, decode {[n for p in kv for n in p][:4]}... of {context}: they do "
                             "not pair up")
    for k in (*prefill.values(), "decode"):
        _check_ops(model, k, name)
    return LlmGraph(model, name, dict(sorted(prefill.items())), "decode", kv, context)


def _called(op: Operator) -> list[int]:
    """The subgraphs an operator runs (composite decompositions, control-flow bodies)."""
    out = []
    for opts in (op.options, op.options_2):
        for k, v in (opts or {}).items():
            if _SUBGRAPH_FIELD.search(k) and v is not None:
                out.extend(v if isinstance(v, tuple) else (v,))
    return [int(i) for i in out]


def signature_model(model: Model, key: str) -> Model:
    """`model` reduced to signature `key`: its subgraph first (what one-inference simulation runs), then the
    subgraphs it runs (decompositions, bodies), indices remapped; the other signatures' subgraphs are left out."""
    sd = next(s for s in model.signature_defs if s.key == key)
    first = sd.subgraph_index
    seen, todo = {first}, [first]
    while todo:
        for op in model.subgraphs[todo.pop()].operators:
            for callee in _called(op):
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
    order = [first] + sorted(seen - {first})
    new = {old: i for i, old in enumerate(order)}

    def remap(op: Operator) -> Operator:
        changes = {}
        for attr in ("options", "options_2"):
            opts = getattr(op, attr)
            if opts is None:
                continue
            fields = {k: (new[v] if isinstance(v, int) else tuple(new[x] for x in v)) for k, v in opts.items()
                      if _SUBGRAPH_FIELD.search(k) and v is not None}
            if fields:
                changes[attr] = opts.replace(**fields)
        return op if not changes else Operator(**{**op.__dict__, **changes})

    subgraphs = tuple(Subgraph(sg.tensors, sg.inputs, sg.outputs, tuple(remap(o) for o in sg.operators), sg.name)
                      for sg in (model.subgraphs[i] for i in order))
    return model.replace(subgraphs=subgraphs, signature_defs=(SignatureDef(sd.key, 0, sd.inputs, sd.outputs),))
