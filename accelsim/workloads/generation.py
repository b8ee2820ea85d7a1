"""Text generation costed: prefill then decode through one LLM file's signatures, the KV cache in memory.

One analysis per signature (`accelsim.simulation.analysis.analyze` of the file with that signature's subgraph
first: delegation and every node's work, once), each costed by the system's kinds like any inference
(`simulate_analysis`). Then:

- prefill: LiteRT-LM's chunking (`prefill_plan`: the largest prefill signature while the prompt left is at
  least its length, then the smallest that holds the rest, executor utils.cc GetOptimizedPrefillWorkGroups);
  each call costs its signature's simulated latency. `prefill_tokens_per_s` = prompt tokens / prefill time.
- decode: one `decode` call per generated token. The graph has static shapes: every step computes over the
  whole cache buffer (the mask hides the unwritten positions, it does not skip them), so every step costs
  the same and the decode time over positions p0 .. p0 + M - 1 is M x one step (`decode_seconds`, the
  closed form; `decode_seconds_stepwise` simulates each step and gives the same, tested).
  `decode_tokens_per_s` = M / that time.
- ttft_s: the prefill plus the first decode step (prefill gives no logits: the first token comes out of
  decode).
- memory: weights (every constant buffer once: the signatures share them), the KV cache (its tensors'
  bytes at the precision the backend stores them: float16 where the device runs float32 as float16, times
  the buffers the runtime keeps: LiteRT-LM keeps one on the CPU, updated in place, and two on the GPU,
  swapped after every call, executor l.716-761), and activations (the largest set of live intermediate
  tensors of any signature, in the order its nodes run). Above the system's memory (its host's DRAM level
  `size`) the run is infeasible with reason `memory`.
- RESHAPE moves no bytes (`_shared_reshapes`: LiteRT runs it in place); every other node costs what its
  kernel reports.
- per phase: where the nodes ran (per unit, per op) and why the rest fell back (the delegation report's
  reasons), and what bounds it: the time of each node split into the per-node dispatch of its device
  (overhead), and the rest under its bound: compute, or the memory level, counted as `weights` when the
  node moves mostly constant bytes, `kv_cache` when it reads or writes the cache, `activations` otherwise;
  partition calls and transfers are overhead.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from accelsim.hardware.config import System
from accelsim.runtime.ir import Model
from accelsim.simulation.analysis import Analysis, analyze, simulate_analysis
from accelsim.simulation.inference import HOST, Simulation
from accelsim.workloads.llm_file import LlmGraph, signature_model

BOUNDS = ("compute", "weights", "kv_cache", "activations", "overhead")


def prefill_plan(lengths, tokens: int) -> list[tuple[int, int]]:
    """(signature length, calls) covering `tokens` prompt tokens as LiteRT-LM chunks them."""
    lengths = sorted(lengths, reverse=True)
    plan: dict[int, int] = {}
    left = tokens
    for n in lengths:
        while left >= n:
            plan[n] = plan.get(n, 0) + 1
            left -= n
    if left:
        fit = min(n for n in lengths if n >= left) if any(n >= left for n in lengths) else lengths[0]
        plan[fit] = plan.get(fit, 0) + 1
    return sorted(plan.items(), reverse=True)


@dataclass(frozen=True)
class Phase:
    """One phase (prefill or decode): its calls and where their time went."""

    name: str
    signatures: tuple[tuple[str, int], ...]  # (signature, calls)
    tokens: int
    seconds: float
    seconds_per_call: float
    bound: str
    bound_seconds: tuple[tuple[str, float], ...]  # over the whole phase
    units: tuple[tuple[str, int], ...]  # (unit, nodes) of one call
    ops: tuple[tuple[str, str, int], ...]  # (unit, op, nodes)
    fallbacks: tuple[tuple[str, str, int], ...]  # (op, reason, nodes) left on the host by an accelerator
    macs_per_call: int
    weight_bytes_per_call: int
    kv_bytes_per_call: int
    # 16-bit-activation (a16w4) nodes of one call per unit, and the GEMM rate each unit gives int16 against int8
    # (peak MACs per cycle: the kind's int16 rate or its stated fallback)
    int16_nodes: tuple[tuple[str, int], ...] = ()
    int16_gemm_rates: tuple[tuple[str, float, float], ...] = ()


@dataclass(frozen=True)
class Memory:
    weights_bytes: int
    kv_cache_bytes: int
    activation_bytes: int
    budget_bytes: int | None

    @property
    def peak_bytes(self) -> int:
        return self.weights_bytes + self.kv_cache_bytes + self.activation_bytes


@dataclass(frozen=True)
class Generation:
    model: str
    system: str
    backend: str
    prefill_tokens: int
    decode_tokens: int
    context: int
    status: str  # "ok" or "infeasible"
    reason: str  # "" or "memory"
    detail: str
    memory: Memory
    ttft_s: float | None = None
    prefill_tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = None
    phases: tuple[Phase, ...] = field(default=())
    quant: str = ""  # the builder's quantization ("" for a file costed as it is)

    def as_dict(self) -> dict:
        d = {"model": self.model, "quant": self.quant, "system": self.system, "backend": self.backend,
             "prefill": self.prefill_tokens,
             "decode": self.decode_tokens, "context": self.context, "status": self.status, "reason": self.reason,
             "detail": self.detail, "ttft_s": self.ttft_s, "prefill_tokens_per_s": self.prefill_tokens_per_s,
             "decode_tokens_per_s": self.decode_tokens_per_s, "peak_memory_bytes": self.memory.peak_bytes,
             "memory": {"weights_bytes": self.memory.weights_bytes, "kv_cache_bytes": self.memory.kv_cache_bytes,
                        "activation_bytes": self.memory.activation_bytes,
                        "budget_bytes": self.memory.budget_bytes}}
        d["phases"] = {p.name: {"signatures": dict(p.signatures), "tokens": p.tokens, "seconds": p.seconds,
                                "seconds_per_call": p.seconds_per_call, "bound": p.bound,
                                "bound_seconds": dict(p.bound_seconds), "units": dict(p.units),
                                "ops": [{"unit": u, "op": o, "nodes": n} for u, o, n in p.ops],
                                "fallbacks": [{"op": o, "reason": r, "nodes": n} for o, r, n in p.fallbacks],
                                "macs_per_call": p.macs_per_call, "weight_bytes_per_call": p.weight_bytes_per_call,
                                "kv_bytes_per_call": p.kv_bytes_per_call, "int16_nodes": dict(p.int16_nodes),
                                "int16_gemm_macs_per_cycle": {u: {"int16": r16, "int8": r8}
                                                              for u, r16, r8 in p.int16_gemm_rates}}
                       for p in self.phases}
        return d


@dataclass(frozen=True)
class GenerationAnalysis:
    """An LLM file analysed on one system's claims: one `Analysis` per signature."""

    graph: LlmGraph
    analyses: dict  # signature key -> Analysis


def _shared_reshapes(analysis: Analysis) -> Analysis:
    """The analysis with every RESHAPE moving no bytes: LiteRT runs a reshape in place, its output sharing the
    input's buffer (reshape.cc: kTfLiteInplaceOpInput0Shared; XNNPACK and the GPU delegate alias it too), and an
    LLM graph reshapes its largest tensors (the attention scores) several times a layer."""

    def free(w):
        if w.op != "RESHAPE":
            return w
        return replace(w, weight_bytes=0, input_bytes=0, output_bytes=0, reads=(0,) * len(w.reads),
                       writes=(0,) * len(w.writes), elements=0, macs=0)

    works = analysis.works
    devices = tuple(replace(d, works=tuple(free(w) for w in d.works)) for d in works.devices)
    host = replace(works.host, works=tuple(free(w) for w in works.host.works))
    claimed = {i: free(w) for i, w in works.claimed.items()}
    return replace(analysis, works=replace(works, devices=devices, host=host, claimed=claimed))


def analyze_generation(graph: LlmGraph, system: System, keys=None) -> GenerationAnalysis:
    """Delegate and size the signatures `keys` (default: every prefill signature and decode) once."""
    keys = keys if keys is not None else (*graph.prefill.values(), graph.decode)
    # A 16-bit-activation (a16w4) graph has INT16 nodes this runtime has no kernel for: sized from the file.
    return GenerationAnalysis(graph, {k: _shared_reshapes(analyze(signature_model(graph.model, k), system,
                                                                  int16_as_declared=True))
                                      for k in keys})


def _sig_tensors(model: Model, key: str):
    sd = next(s for s in model.signature_defs if s.key == key)
    return sd, model.subgraphs[sd.subgraph_index]


def weight_bytes(model: Model) -> int:
    """Bytes of every constant buffer the model holds, each once (the signatures share them)."""
    used = {t.buffer for sg in model.subgraphs for t in sg.tensors if t.buffer}
    return sum(len(model.buffer_bytes(b)) for b in used)


def activation_bytes(model: Model, key: str, kv_names) -> int:
    """The most bytes of intermediate tensors alive at once in signature `key`, nodes in model order.

    The KV-cache tensors are not counted (they are the cache), nor constants.
    """
    sd, sg = _sig_tensors(model, key)
    skip = {i for n, i in (*sd.inputs, *sd.outputs) if n.startswith(("kv_cache_", "k_cache_", "v_cache_"))}
    first: dict[int, int] = {i: 0 for i in sg.inputs}
    last: dict[int, int] = {}
    for j, op in enumerate(sg.operators):
        for t in op.inputs:
            if t >= 0:
                last[t] = j
        for t in op.outputs:
            first.setdefault(t, j)
    for t in sg.outputs:
        last[t] = len(sg.operators)
    n = len(sg.operators) + 1
    delta = np.zeros(n + 1, dtype=np.int64)
    for t, start in first.items():
        tensor = sg.tensors[t]
        if t in skip or tensor.buffer and len(model.buffer_bytes(tensor.buffer)):
            continue
        size = int(np.prod(tensor.shape, dtype=np.int64)) * tensor.dtype.itemsize
        delta[start] += size
        delta[last.get(t, start) + 1] -= size
    return int(np.cumsum(delta).max()) if len(delta) else 0


def _device_of(system: System, unit: str):
    return system.host if unit == HOST else next(a for a in system.accelerators if a.hardware.name == unit)


def _fixed_seconds(device) -> float:
    hw = device.hardware
    c = hw.compute
    cycles = getattr(c, "node_cycles", 0) or getattr(c, "kernel_cycles", 0) or 0
    return cycles / hw.clock


def _kv_store_bytes(system: System, unit: str) -> float:
    """Bytes per float32 KV element where the cache's consumer runs (float16 on a device running float32 as fp16)."""
    hw = _device_of(system, unit).hardware
    return 2.0 if getattr(hw.compute, "float_precision", "float32") == "float16" else 4.0


def _kv_nodes(model: Model, key: str) -> dict[int, tuple[int, ...]]:
    """Nodes of signature `key` that read or write the KV cache (its inputs, or what DYNAMIC_UPDATE_SLICE made),
    each with the positions of its inputs that are the cache."""
    sd, sg = _sig_tensors(model, key)
    cache = {i for n, i in sd.inputs if n.startswith(("kv_cache_", "k_cache_", "v_cache_"))}
    nodes = {}
    for j, op in enumerate(sg.operators):
        which = tuple(k for k, t in enumerate(op.inputs) if t in cache)
        if which:
            nodes[j] = which
            if op.op == "DYNAMIC_UPDATE_SLICE":
                cache.update(op.outputs)
    return nodes


def _phase(name: str, calls: list[tuple[str, int]], tokens: int, sims: dict, ga: GenerationAnalysis,
           system: System) -> Phase:
    model = ga.graph.model
    bounds = Counter()
    units, ops, falls = Counter(), Counter(), Counter()
    seconds = 0.0
    total_calls = sum(c for _, c in calls)
    macs = wbytes = kvbytes = 0
    int16 = Counter()
    rates = {}
    for key, count in calls:
        sim: Simulation = sims[key]
        seconds += sim.latency * count
        kv_nodes = _kv_nodes(model, key)
        works = _works_by_index(ga.analyses[key])
        node_total = 0.0
        for n in sim.nodes:
            device = _device_of(system, n.unit)
            fixed = min(_fixed_seconds(device), n.seconds)
            bounds["overhead"] += fixed * count
            rest = n.seconds - fixed
            node_total += n.seconds
            w = works.get(n.index)
            if n.cost.bound in ("compute", ""):
                kind = "compute"
            elif n.index in kv_nodes:
                kind = "kv_cache"
            elif w is not None and w.weight_bytes > w.input_bytes + w.output_bytes:
                kind = "weights"
            else:
                kind = "activations"
            bounds[kind] += rest * count
            if key == calls[0][0]:
                units[n.unit] += 1
                ops[(n.unit, n.op)] += 1
                macs += n.macs
                if w is not None and w.dtype == "int16":
                    int16[n.unit] += 1
                    hw = device.hardware
                    peak = hw.kind_record.peak_macs_per_cycle
                    if w.kind == "gemm" and peak is not None and n.unit not in rates:
                        rates[n.unit] = (float(peak(w, hw)), float(peak(replace(w, dtype="int8"), hw)))
                if w is not None:
                    wbytes += w.weight_bytes
                    if n.index in kv_nodes:  # the cache read (a DYNAMIC_UPDATE_SLICE writes its update only),
                        # at the precision the device keeps it
                        moved = (sum(w.reads[k] for k in kv_nodes[n.index]) if w.op != "DYNAMIC_UPDATE_SLICE"
                                 else w.output_bytes)
                        kvbytes += int(moved * _kv_store_bytes(system, n.unit) / 4)
        bounds["overhead"] += max(sim.latency - node_total, 0.0) * count
        if key == calls[0][0]:
            for rec in sim.delegation:
                if not rec.get("claimed") and rec.get("reasons"):
                    for _acc, why in rec["reasons"].items():
                        falls[(rec["op"], why)] += 1
    bound_seconds = tuple((b, bounds.get(b, 0.0)) for b in BOUNDS)
    return Phase(name=name, signatures=tuple(calls), tokens=tokens, seconds=seconds,
                 seconds_per_call=seconds / max(total_calls, 1),
                 bound=max(bound_seconds, key=lambda kv: kv[1])[0], bound_seconds=bound_seconds,
                 units=tuple(sorted(units.items())), ops=tuple(sorted((u, o, c) for (u, o), c in ops.items())),
                 fallbacks=tuple(sorted((o, r, c) for (o, r), c in falls.items())), macs_per_call=macs,
                 weight_bytes_per_call=wbytes, kv_bytes_per_call=kvbytes, int16_nodes=tuple(sorted(int16.items())),
                 int16_gemm_rates=tuple((u, a, b) for u, (a, b) in sorted(rates.items())))


def _works_by_index(analysis: Analysis) -> dict:
    """Each primary-subgraph node's work, by node index (host or accelerator)."""
    out = dict(analysis.works.claimed)
    works = analysis.works
    for dw in (works.host, *works.devices):
        for idx, w in zip(getattr(dw, "nodes", ()), getattr(dw, "works", ())):
            out[idx] = w
    return out


def memory_budget(system: System) -> int | None:
    """The system's memory: the size of its host's DRAM level (None when the config gives none)."""
    levels = getattr(system.host.hardware, "memory", None)
    for level in getattr(levels, "levels", ()) or ():
        if level.name == "dram":
            return level.size
    return None


def memory_use(ga: GenerationAnalysis, system: System, kv_buffers: int) -> Memory:
    g = ga.graph
    model = g.model
    sd, sg = _sig_tensors(model, g.decode)
    ins = dict(sd.inputs)
    elements = sum(int(np.prod(sg.tensors[ins[n]].shape, dtype=np.int64)) for pair in g.kv for n in pair)
    kv_nodes = _kv_nodes(model, g.decode)
    works = ga.analyses[g.decode].works
    placed = [(HOST, works.host.nodes)] + [(a.hardware.name, d.nodes) for a, d in zip(system.accelerators,
                                                                                      works.devices)]
    sim_units = {unit for unit, nodes in placed if any(i in kv_nodes for i in nodes)} or {HOST}
    per = max((_kv_store_bytes(system, u) for u in sim_units), default=4.0)
    acts = max(activation_bytes(model, k, g.kv) for k in (*g.prefill.values(), g.decode))
    return Memory(weights_bytes=weight_bytes(model), kv_cache_bytes=int(elements * per) * kv_buffers,
                  activation_bytes=acts, budget_bytes=memory_budget(system))


def decode_seconds(step_seconds: float, steps: int) -> float:
    """The decode time of `steps` tokens: every step of a static-shape graph costs the same (module docstring)."""
    return step_seconds * steps


def decode_seconds_stepwise(ga: GenerationAnalysis, system: System, start: int, steps: int) -> float:
    """The decode time simulated one step at a time, positions start .. start + steps - 1 (what the closed form
    `decode_seconds` must equal)."""
    total = 0.0
    for _pos in range(start, start + steps):
        total += simulate_analysis(ga.analyses[ga.graph.decode], system).latency
    return total


def generate(ga: GenerationAnalysis, system: System, *, system_name: str, backend: str, prefill: int, decode: int,
             kv_buffers: int = 1) -> Generation:
    """Cost `prefill` prompt tokens then `decode` generated tokens (module docstring)."""
    g = ga.graph
    if prefill < 1 or decode < 1:
        raise ValueError(f"prefill ({prefill}) and decode ({decode}) must be at least 1 token each")
    if prefill + decode > g.context:
        raise ValueError(f"{g.name}: prefill {prefill} + decode {decode} tokens do not fit the KV cache of "
                         f"{g.context} positions (--context)")
    mem = memory_use(ga, system, kv_buffers)
    base = dict(model=g.name, system=system_name, backend=backend, prefill_tokens=prefill, decode_tokens=decode,
                context=g.context, memory=mem)
    if mem.budget_bytes is not None and mem.peak_bytes > mem.budget_bytes:
        return Generation(status="infeasible", reason="memory",
                          detail=f"weights {mem.weights_bytes / 2**20:.0f} MiB + KV cache "
                                 f"{mem.kv_cache_bytes / 2**20:.0f} MiB + activations "
                                 f"{mem.activation_bytes / 2**20:.0f} MiB = {mem.peak_bytes / 2**20:.0f} MiB, over "
                                 f"the system's {mem.budget_bytes / 2**20:.0f} MiB", **base)
    plan = [(g.prefill[n], c) for n, c in prefill_plan(g.prefill, prefill)]
    sims = {k: simulate_analysis(ga.analyses[k], system) for k in {k for k, _ in plan} | {g.decode}}
    pre = _phase("prefill", plan, prefill, sims, ga, system)
    step = sims[g.decode].latency
    dec = _phase("decode", [(g.decode, decode)], decode, sims, ga, system)
    dec_seconds = decode_seconds(step, decode)
    return Generation(status="ok", reason="", detail="", ttft_s=pre.seconds + step,
                      prefill_tokens_per_s=prefill / pre.seconds, decode_tokens_per_s=decode / dec_seconds,
                      phases=(pre, dec), **base)
