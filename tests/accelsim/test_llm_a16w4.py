"""`--quant a16w4`: int16 activations, int4 weights per output channel (accelsim.workloads.builder docstring)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from accelsim.cli.main import main
from accelsim.experiments.executors import SerialExecutor
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.run import run_experiment
from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.write import save_model
from accelsim.workloads.architectures import ARCHITECTURES
from accelsim.workloads.builder import build_model
from accelsim.workloads.generation import analyze_generation, generate
from accelsim.workloads.llm_file import read_llm
from accelsim.workloads.systems import llm_system

TINY = ARCHITECTURES["gemma3-tiny"]
QDQ = ("QUANTIZE", "DEQUANTIZE")


def _signatures(model):
    return [(sd.key, model.subgraphs[sd.subgraph_index]) for sd in model.signature_defs]


@pytest.mark.parametrize("arch", ["gemma3-tiny", "qwen2.5-1.5b"])
def test_a16w4_graph_has_int16_activations_and_int4_weights_per_channel(arch):
    model = build_model(ARCHITECTURES[arch], "a16w4", prefill=8, context=32)
    for key, sg in _signatures(model):
        t = sg.tensors
        ops = list(sg.operators)
        seen = set()
        int16_slices = 0
        # what feeds the cache-write index: the CONCATENATIONs before a CAST, and the SLICE before them
        index_inputs = {i for o in ops if o.op == "CAST" for i in o.inputs}
        index_inputs |= {i for o in ops if o.op == "CONCATENATION" and o.outputs[0] in index_inputs
                         for i in o.inputs}
        for o in ops:
            ins = [t[i] for i in o.inputs if i >= 0]
            out = t[o.outputs[0]]
            seen.add(o.op)
            if o.op == "FULLY_CONNECTED":
                x, w = ins[0], ins[1]
                assert (x.type, w.type, out.type) == ("INT16", "INT4", "INT16"), key
                q = w.quantization
                assert len(q.scales) == w.shape[0] and set(q.zero_points) == {0} and not q.blockwise
                if len(ins) > 2:  # qwen's qkv bias: INT64, as TFLite's 16x8 mode
                    assert ins[2].type == "INT64"
            elif o.op in ("BATCH_MATMUL", "SOFTMAX", "GELU", "LOGISTIC", "SLICE", "CONCATENATION"):
                if o.op in ("SLICE", "CONCATENATION") and out.type == "FLOAT32":  # the cache-write index (positions)
                    assert ins[0].type == "FLOAT32" and o.outputs[0] in index_inputs
                else:
                    assert ins[0].type == out.type == "INT16", (key, o.op)
                    int16_slices += o.op == "SLICE"
            elif o.op in ("DYNAMIC_UPDATE_SLICE", "STABLEHLO_COMPOSITE", "COS", "SIN"):
                assert out.type == "FLOAT32", (key, o.op)  # left float by the policy: KV cache, rms_norm, rope
            elif o.op == "EMBEDDING_LOOKUP":
                assert (ins[1].type, out.type) == ("INT4", "FLOAT32")  # hybrid lookup, QUANTIZEd next
                assert ops[ops.index(o) + 1].op == "QUANTIZE"
        for i in sg.inputs:
            if "kv_cache" in t[i].name:
                assert t[i].type == "FLOAT32"
        # every int16 tensor: symmetric, one scale, zero point 0
        for x in t:
            if x.type == "INT16":
                assert len(x.quantization.scales) == 1 and x.quantization.zero_points == (0,)
        assert {"QUANTIZE", "DEQUANTIZE", "FULLY_CONNECTED", "BATCH_MATMUL", "SOFTMAX"} <= seen
        assert int16_slices >= 3  # q, k, v (and the rotary halves) slice int16
    decode = dict(_signatures(model))["decode"]
    assert decode.tensors[decode.outputs[0]].type == "INT16"  # logits: OUTPUT is quantized by the policy


def test_a16w4_is_the_float_graph_with_quantize_and_dequantize_added():
    a16 = build_model(TINY, "a16w4", prefill=8, context=32)
    int4 = build_model(TINY, "int4", prefill=8, context=32)
    for (k1, s1), (k2, s2) in zip(_signatures(a16), _signatures(int4)):
        assert k1 == k2
        assert [o.op for o in s1.operators if o.op not in QDQ] == [o.op for o in s2.operators]
        assert [s1.tensors[o.outputs[0]].shape for o in s1.operators if o.op not in QDQ] == \
               [s2.tensors[o.outputs[0]].shape for o in s2.operators]


@pytest.fixture(scope="module")
def tiny_runs():
    sys_, spec = llm_system("galaxy_s24_ultra", "cpu")
    out = {}
    for q in ("int8", "a16w4", "float32"):
        ga = analyze_generation(read_llm(build_model(TINY, q, prefill=8, context=32), "tiny"), sys_)
        out[q] = (ga, generate(ga, sys_, system_name="galaxy_s24_ultra", backend="cpu", prefill=8, decode=8))
    return out


def _works(ga, key):
    works = ga.analyses[key].works
    return [w for dw in (works.host, *works.devices) for w in dw.works]


def test_a16w4_moves_two_bytes_per_activation_and_costs_int16_rates(tiny_runs):
    ga16, g16 = tiny_runs["a16w4"]
    ga8, g8 = tiny_runs["int8"]
    gaf, gf = tiny_runs["float32"]
    key = ga16.graph.decode
    fc16 = [w for w in _works(ga16, key) if w.op == "FULLY_CONNECTED"]
    fc8 = [w for w in _works(ga8, key) if w.op == "FULLY_CONNECTED"]
    fcf = [w for w in _works(gaf, key) if w.op == "FULLY_CONNECTED"]
    assert {w.dtype for w in fc16} == {"int16"} and {w.dtype for w in fc8} == {"int8"}
    for w16, w8, wf in zip(fc16, fc8, fcf):
        # int16 activations: 2 bytes an element, twice an int8 activation, half a float32 one (the repo's int8
        # is dynamic range: its activation tensors are float32, quantized inside the kernel)
        elements = w16.output_bytes // 2
        assert w16.output_bytes == 2 * elements and wf.output_bytes == 4 * elements
        assert w16.input_bytes * 2 == wf.input_bytes
        assert w16.weight_bytes <= w8.weight_bytes  # int4 weights, not int8
    # the activation memory: between an int8-activation graph's (1 byte) and the float graph's (4 bytes)
    assert gf.memory.activation_bytes / 4 < g16.memory.activation_bytes < gf.memory.activation_bytes
    assert g16.memory.kv_cache_bytes == gf.memory.kv_cache_bytes  # the cache stays float32 (policy: no int16 DUS)
    # the host has no int16 GEMM rate: one SIMD register a cycle (simd_bits / 16) on every thread, shown
    dec = g16.phases[1]
    hw = llm_system("galaxy_s24_ultra", "cpu")[0].host.hardware
    c = hw.compute
    assert dec.int16_gemm_rates == (("host", c.simd_bits // 16 * c.threads, 40.0 * c.threads),)
    assert dict(dec.int16_nodes)["host"] > 0 and not g8.phases[1].int16_nodes


def test_the_interpreter_does_not_run_a16w4_and_says_which_op(tmp_path):
    """Cost-only: this runtime lacks TFLite's int16 kernels for several ops; invoking names the first."""
    model = build_model(TINY, "a16w4", prefill=8, context=32, weights=True)
    with pytest.raises(KernelError, match=r"Node number \d+ \(\w+\) failed to prepare.*INT16"):
        Interpreter(model=model).allocate_tensors()


def test_int16_as_declared_needs_shapes_only_and_only_excuses_int16_nodes():
    model = build_model(TINY, "a16w4", prefill=8, context=32)
    with pytest.raises(ValueError, match="int16_as_declared .* needs shapes_only=True"):
        Interpreter(model=model, int16_as_declared=True)
    it = Interpreter(model=model, shapes_only=True, int16_as_declared=True)
    it.allocate_tensors()
    assert it.unprepared and all("INT16" in why for _, _, why in it.unprepared)
    # a float graph whose kernel refuses it is still refused
    float_model = build_model(TINY, "float32", prefill=8, context=32)
    sg = float_model.subgraphs[0]
    bad = next(i for i, o in enumerate(sg.operators) if o.op == "SOFTMAX")
    out = sg.operators[bad].outputs[0]
    tensors = list(sg.tensors)
    tensors[out] = replace(tensors[out], type="INT32")
    broken = float_model.replace(subgraphs=(replace(sg, tensors=tuple(tensors)), *float_model.subgraphs[1:]))
    with pytest.raises(KernelError, match="SOFTMAX"):
        Interpreter(model=broken, shapes_only=True, int16_as_declared=True).allocate_tensors()


def test_llm_command_prints_a16w4_and_its_json(capsys):
    assert main(["llm", "gemma3-tiny", "--system", "galaxy_s24_ultra", "--quant", "a16w4", "--prefill", "8",
                 "--decode", "8", "--context", "32"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gemma3-tiny a16w4 on galaxy_s24_ultra (cpu)")
    assert "  int16 activations: host " in out and "MACs/cycle vs int8's" in out
    assert main(["llm", "gemma3-tiny", "--system", "galaxy_s24_ultra", "--quant", "a16w4", "--prefill", "8",
                 "--decode", "8", "--context", "32", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["quant"] == "a16w4" and d["phases"]["decode"]["int16_nodes"]["host"] > 0
    assert d["phases"]["decode"]["int16_gemm_macs_per_cycle"]["host"]["int16"] > 0


def test_a16w4_with_a_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "tiny.tflite"
    save_model(build_model(TINY, "int4", prefill=8, context=32, weights=True), path)
    assert main(["llm", str(path), "--system", "galaxy_s24_ultra", "--quant", "a16w4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"accelsim llm: error: {path}: --quant builds an architecture by name") and \
        err.count("\n") == 1


@pytest.mark.slow
def test_gemma3_1b_a16w4_on_the_three_systems():
    runs = {}
    for system, backend, ctx in [("galaxy_s24_ultra", "cpu", 4096), ("galaxy_s24_ultra", "gpu", 4096),
                                 ("galaxy_s24_ultra", "npu", 1280), ("galaxy_s25_ultra", "npu", 1280),
                                 ("macbook_pro_m3", "cpu", 4096)]:
        sys_, spec = llm_system(system, backend)
        for q in ("int4", "a16w4"):
            model = build_model(ARCHITECTURES["gemma3-1b"], q, prefill=1024, context=ctx)
            ga = analyze_generation(read_llm(model, "gemma3-1b"), sys_)
            runs[system, backend, q] = generate(ga, sys_, system_name=system, backend=backend, prefill=1024,
                                                decode=256, kv_buffers=spec.kv_buffers[backend])
    for (system, backend, q), g in runs.items():
        assert g.status == "ok" and g.decode_tokens_per_s > 1 and g.prefill_tokens_per_s > 1
        if q == "a16w4":
            base = runs[system, backend, "int4"]
            # the same int4 weights (scalar constants int16 instead of float32); int16 activations take less
            # memory than float32 ones
            assert abs(g.memory.weights_bytes - base.memory.weights_bytes) < 1024
            assert g.memory.activation_bytes < base.memory.activation_bytes
    # CPU: no int16 GEMM rate (SIMD fallback) and a QUANTIZE of the whole float cache per layer: slower than int4
    for system in ("galaxy_s24_ultra", "macbook_pro_m3"):
        assert runs[system, "cpu", "a16w4"].prefill_tokens_per_s < runs[system, "cpu", "int4"].prefill_tokens_per_s
        assert runs[system, "cpu", "a16w4"].decode_tokens_per_s < runs[system, "cpu", "int4"].decode_tokens_per_s
    # GPU: the delegate takes float tensors only: every int16 node falls back to the host, with its reason
    gpu = runs["galaxy_s24_ultra", "gpu", "a16w4"].phases[1]
    assert any(op == "FULLY_CONNECTED" and "int16" in why for op, why, _ in gpu.fallbacks)
    # NPU: the Hexagon runs int16 (Qualcomm 80-63195-1): nothing falls back
    for system in ("galaxy_s24_ultra", "galaxy_s25_ultra"):
        npu = runs[system, "npu", "a16w4"].phases[1]
        assert not npu.fallbacks and "host" not in dict(npu.units)


@pytest.mark.slow
def test_readme_a16w4_example_is_what_the_command_prints(capsys):
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    text = text.split("## LLMs on the phone", 1)[1]
    command = re.search(r"\n      accelsim (llm .+--quant a16w4.*)\n", text).group(1).split()
    block = re.search(r"\n  ```\n(.+?)  ```", text, re.S).group(1)
    assert main(command) == 0
    assert capsys.readouterr().out == "".join(line[2:] + "\n" for line in block.splitlines())


def test_an_experiment_sweeps_quant_into_a16w4(tmp_path):
    path = tmp_path / "llm.yaml"
    path.write_text("models: [gemma3-tiny]\nhost: s24u_cpu\nvariants: [{name: cpu, accelerators: []}, "
                    "{name: npu, accelerators: [s25u_hexagon_npu]}]\n"
                    "generate: {prefill: 8, decode: 8, context: 32}\nsweeps: {generate.quant: [int4, a16w4]}\n")
    run_experiment(load_experiment(path), tmp_path / "out", executor=SerialExecutor())
    recs = json.loads((tmp_path / "out" / "results.json").read_text())["points"]
    assert len(recs) == 4 and all(r["status"] == "ok" for r in recs)
    by = {(r["variant"], r["sweep"]["generate.quant"]): r["llm"] for r in recs}
    for v in ("cpu", "npu"):
        assert by[v, "a16w4"]["memory"]["activation_bytes"] < by[v, "int4"]["memory"]["activation_bytes"]
        assert by[v, "a16w4"]["phases"]["decode"]["int16_nodes"]
        assert not by[v, "int4"]["phases"]["decode"]["int16_nodes"]
