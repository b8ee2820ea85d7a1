"""`accelsim llm`: one LLM (an architecture by name or an LLM .tflite) generating on a named system, cost only."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from accelsim.runtime.read import load_model
from accelsim.workloads.architectures import ARCHITECTURES, architecture
from accelsim.workloads.builder import QUANTS, build_model, check_quant
from accelsim.workloads.generation import Generation, analyze_generation, generate
from accelsim.workloads.llm_file import read_llm
from accelsim.workloads.systems import SYSTEMS, llm_system


def run_llm(model: str, system: str, backend: str, quant: str | None, prefill: int, decode: int,
            context: int | None) -> Generation:
    """Cost `prefill` prompt tokens then `decode` generated ones of `model` on `system`'s `backend`.

    A builder name builds the graph for `quant`, prefill length `prefill` and `context` (default
    prefill + decode); a .tflite file is read as it is (`quant` and `context` must agree with it or be left out).

    Raises:
        ValueError: an unknown architecture, system, backend or quantization, or lengths that do not fit.
        ModelError: a file that is not an LLM file as LiteRT-LM reads it (accelsim.workloads.llm_file).
    """
    if model in ARCHITECTURES or not model.endswith(".tflite"):
        quant = quant or "int4"
        check_quant(quant)
        arch = architecture(model)
        ctx = context if context is not None else prefill + decode
        graph = read_llm(build_model(arch, quant, prefill, ctx), model)
    else:
        if not Path(model).is_file():
            raise FileNotFoundError(f"{model}: no such file (give a .tflite or one of {', '.join(ARCHITECTURES)})")
        if quant is not None:
            raise ValueError(f"{model}: --quant builds an architecture by name; a .tflite is costed as it is "
                             "quantized (leave --quant out)")
        graph = read_llm(load_model(model), model)
        if context is not None and context != graph.context:
            raise ValueError(f"{model}: its KV cache holds {graph.context} positions, not --context {context}")
    sys_, spec = llm_system(system, backend)
    ga = analyze_generation(graph, sys_)
    result = generate(ga, sys_, system_name=system, backend=backend, prefill=prefill, decode=decode,
                      kv_buffers=spec.kv_buffers[backend])
    return replace(result, quant=quant or "")


def _mib(n: int | None) -> str:
    return "none given" if n is None else f"{n / 2**20:,.0f} MiB"


def llm_lines(g: Generation) -> list[str]:
    """The text `accelsim llm` prints."""
    m = g.memory
    quant = f" {g.quant}" if g.quant else ""
    out = [f"{g.model}{quant} on {g.system} ({g.backend}): {g.prefill_tokens} prefill + {g.decode_tokens} decode "
           f"tokens, KV cache of {g.context} positions",
           f"memory: weights {_mib(m.weights_bytes)} + KV cache {_mib(m.kv_cache_bytes)} + activations "
           f"{_mib(m.activation_bytes)} = {_mib(m.peak_bytes)} of the system's {_mib(m.budget_bytes)}"]
    if g.status != "ok":
        out.append(f"infeasible ({g.reason}): {g.detail}")
        return out
    out += [f"time to first token: {g.ttft_s:.3f} s",
            f"prefill: {g.prefill_tokens_per_s:,.1f} tokens/s",
            f"decode: {g.decode_tokens_per_s:,.2f} tokens/s (every step reads the whole cache buffer)"]
    for p in g.phases:
        sigs = ", ".join(f"{k} x{c}" for k, c in p.signatures)
        total = sum(s for _, s in p.bound_seconds) or 1.0
        shares = ", ".join(f"{b} {s / total:.0%}" for b, s in p.bound_seconds if s > 0)
        out.append(f"{p.name} ({sigs}, {p.seconds_per_call * 1e3:.2f} ms a call): bound by {p.bound} ({shares}); "
                   f"{p.macs_per_call / 1e9:.1f} GMAC, weights {_mib(p.weight_bytes_per_call)}, KV cache "
                   f"{_mib(p.kv_bytes_per_call)} a call")
        out.append("  runs on: " + ", ".join(f"{u} {n} nodes" for u, n in p.units))
        if p.int16_nodes:
            rates = {u: (r16, r8) for u, r16, r8 in p.int16_gemm_rates}
            gemm = {u: f" (GEMM {r16:g} MACs/cycle vs int8's {r8:g})" for u, (r16, r8) in rates.items()}
            out.append("  int16 activations: " + ", ".join(f"{u} {n} nodes{gemm.get(u, '')}"
                                                          for u, n in p.int16_nodes))
        for op, why, n in p.fallbacks:
            out.append(f"  fell back to the host: {op} x{n}: {why}")
    return out


SYSTEM_NAMES = tuple(SYSTEMS)
QUANT_NAMES = QUANTS
QUANT_HELP = (" (default int4; not for a .tflite). int8, int4, int4-block32/128: those weights, float32 activations "
              "(dynamic range); a16w4: int16 activations and int4 weights per output channel (ai-edge-quantizer "
              "static_wi4_ai16; the KV cache, rms_norm and rotary tables stay float32; cost-only)")
ARCHITECTURE_NAMES = tuple(ARCHITECTURES)
