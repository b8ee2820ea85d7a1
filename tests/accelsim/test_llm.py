"""LLM generation (issue 33): the builder's graph against litert-torch's conversion, prefill + decode costing, memory,
the command line, and one clear line for each bad input."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from accelsim.cli.main import main
from accelsim.hardware.config import System, apply_overrides
from accelsim.runtime.errors import ModelError
from accelsim.runtime.ir import Operator, SignatureDef
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model
from accelsim.workloads.architectures import ARCHITECTURES
from accelsim.workloads.builder import build_model
from accelsim.workloads.generation import (
    analyze_generation,
    decode_seconds,
    decode_seconds_stepwise,
    generate,
    prefill_plan,
)
from accelsim.workloads.llm_file import read_llm
from accelsim.workloads.systems import llm_system

ROOT = Path(__file__).resolve().parents[2]
LLM = ROOT / "tests" / "fixtures" / "models" / "llm"
TINY = ARCHITECTURES["gemma3-tiny"]
QUANT_OF_FILE = {"tiny_gemma3_dq8.tflite": "int8", "tiny_gemma3_dq4b32.tflite": "int4-block32",
                 "tiny_gemma3_dq4b128.tflite": "int4-block128"}


def _ops(model, key):
    sd = next(s for s in model.signature_defs if s.key == key)
    sg = model.subgraphs[sd.subgraph_index]

    def spec(i):
        return None if i < 0 else (sg.tensors[i].shape, sg.tensors[i].type)

    return [(o.op, tuple(map(spec, o.inputs)), tuple(map(spec, o.outputs))) for o in sg.operators]


@pytest.mark.parametrize("name", sorted(QUANT_OF_FILE))
def test_builder_writes_litert_torchs_graph_for_the_tiny_config(name):
    theirs = load_model(LLM / name)
    ours = load_model(save_model(build_model(TINY, QUANT_OF_FILE[name], 8, 64, weights=True)))
    for key in ("prefill_8", "decode"):  # op by op: op, input and output shapes and types
        assert _ops(ours, key) == _ops(theirs, key)
    for a, b in zip(ours.signature_defs, theirs.signature_defs):
        assert (a.key, [n for n, _ in a.inputs], [n for n, _ in a.outputs]) == \
               (b.key, [n for n, _ in b.inputs], [n for n, _ in b.outputs])
    quant = {(t.type, t.shape, None if t.quantization is None else t.quantization.block_size)
             for t in ours.subgraphs[1].tensors if t.type in ("INT8", "INT4")}
    assert quant == {(t.type, t.shape, None if t.quantization is None else t.quantization.block_size)
                     for t in theirs.subgraphs[1].tensors if t.type in ("INT8", "INT4")}


@pytest.mark.parametrize("quant", ["int4", "int4-block128"])
def test_a_built_tiny_decoder_runs_in_litert_as_in_accelsim(quant, tmp_path):
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from ai_edge_litert.interpreter import OpResolverType

    from accelsim.runtime.interpreter import Interpreter

    path = tmp_path / "tiny.tflite"
    save_model(build_model(TINY, quant, 8, 64, weights=True, seed=3), path)
    outs = []
    for it in (Interpreter(model_path=path), LiteRT(model_path=str(path), num_threads=1,
               experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)):
        kv = {f"kv_cache_{r}_{i}": np.zeros((1, 1, 64, 64), np.float32) for r in "kv" for i in range(2)}
        mask = np.where(np.arange(64)[None, :] <= np.arange(8)[:, None], 0, -np.inf).astype(np.float32)[None, None]
        out = it.get_signature_runner("prefill_8")(tokens=np.arange(1, 9, dtype=np.int32)[None],
                                                   input_pos=np.arange(8, dtype=np.int32), mask=mask, **kv)
        kv = {k: out[k] for k in kv}
        m = np.where(np.arange(64) <= 8, 0, -np.inf).astype(np.float32).reshape(1, 1, 1, 64)
        outs.append(it.get_signature_runner("decode")(tokens=np.array([[5]], np.int32),
                                                      input_pos=np.array([8], np.int32), mask=m, **kv))
    for key in outs[1]:
        np.testing.assert_allclose(outs[0][key], outs[1][key], rtol=0, atol=1e-5 * np.abs(outs[1][key]).max())


def test_prefill_chunks_as_litert_lm_does():
    assert prefill_plan([8, 64, 128, 256, 512, 1024], 1024) == [(1024, 1)]
    assert prefill_plan([8, 64, 128, 256, 512, 1024], 1100) == [(1024, 1), (64, 1), (8, 2)]  # 4 left: one more 8
    assert prefill_plan([128, 1024], 100) == [(128, 1)]
    assert prefill_plan([128], 300) == [(128, 3)]


@pytest.fixture(scope="module")
def tiny_cpu():
    graph = read_llm(build_model(TINY, "int4", 8, 64), "gemma3-tiny")
    system, spec = llm_system("galaxy_s24_ultra", "cpu")
    return graph, system, analyze_generation(graph, system)


def test_decode_closed_form_equals_stepping_through_the_cache(tiny_cpu):
    graph, system, ga = tiny_cpu
    step = decode_seconds_stepwise(ga, system, 8, 1)
    assert decode_seconds(step, 24) == pytest.approx(decode_seconds_stepwise(ga, system, 8, 24), rel=1e-12)
    result = generate(ga, system, system_name="galaxy_s24_ultra", backend="cpu", prefill=8, decode=24)
    assert result.decode_tokens_per_s == pytest.approx(24 / decode_seconds_stepwise(ga, system, 8, 24), rel=1e-12)
    assert result.ttft_s == pytest.approx(result.phases[0].seconds + step)


def test_static_shapes_attend_over_the_whole_cache_buffer():
    # Decode reads every position of the cache whatever the position: the KV bytes read follow the buffer.
    rates = {}
    for context in (64, 256):
        graph = read_llm(build_model(TINY, "int4", 8, context), "gemma3-tiny")
        system, _ = llm_system("galaxy_s24_ultra", "cpu")
        r = generate(analyze_generation(graph, system), system, system_name="s", backend="cpu", prefill=8, decode=8)
        rates[context] = r.phases[1].kv_bytes_per_call
    per_position = 2 * 2 * 64 * 4  # layers x (K, V) x head_dim x float32
    assert rates[256] - rates[64] == per_position * (256 - 64)


def test_over_the_systems_memory_is_infeasible_with_reason_memory(tiny_cpu):
    graph, system, ga = tiny_cpu
    small = System(apply_overrides(system.host, {"memory.levels.dram.size": "64 KiB"}), (), system.assign)
    r = generate(ga, small, system_name="tiny phone", backend="cpu", prefill=8, decode=8)
    assert (r.status, r.reason) == ("infeasible", "memory")
    assert r.memory.peak_bytes > 64 * 1024 and r.ttft_s is None
    assert "over the system's 0 MiB" in r.detail


def test_the_kv_cache_is_what_the_graph_holds_and_the_gpu_keeps_two_in_fp16(tiny_cpu):
    graph, system, ga = tiny_cpu
    elements = 2 * 2 * 64 * 64  # layers x (K, V) x context x head_dim x kv_heads 1
    cpu = generate(ga, system, system_name="s", backend="cpu", prefill=8, decode=8, kv_buffers=1)
    assert cpu.memory.kv_cache_bytes == 4 * elements
    gpu_system, spec = llm_system("galaxy_s24_ultra", "gpu")
    gpu = generate(analyze_generation(graph, gpu_system), gpu_system, system_name="s", backend="gpu", prefill=8,
                   decode=8, kv_buffers=spec.kv_buffers["gpu"])
    assert gpu.memory.kv_cache_bytes == 2 * 2 * elements
    assert dict(gpu.phases[0].units) == {"s24u_adreno750_gpu": len(_ops(graph.model, "prefill_8"))}


# -- bad input: one clear line naming the signature, tensor or op -----------------------------------------------


@pytest.fixture(scope="module")
def fixture_model():
    return load_model(LLM / "tiny_gemma3_dq4b32.tflite")


def test_a_prefill_without_decode_is_refused(fixture_model):
    model = fixture_model.replace(signature_defs=fixture_model.signature_defs[:1])
    with pytest.raises(ModelError, match=r"f.tflite: signature 'prefill_8' has no decode signature to go with it "
                                         r"\(signatures: prefill_8\)"):
        read_llm(model, "f.tflite")


def test_kv_tensors_that_do_not_pair_up_are_refused(fixture_model):
    sd = fixture_model.signature_defs[1]
    renamed = SignatureDef(sd.key, sd.subgraph_index, tuple(("cache_v_1" if n == "kv_cache_v_1" else n, i)
                                                            for n, i in sd.inputs), sd.outputs)
    model = fixture_model.replace(signature_defs=(fixture_model.signature_defs[0], renamed))
    with pytest.raises(ModelError, match="signature 'decode': KV tensor 'kv_cache_k_1' has no V partner for layer 1"):
        read_llm(model, "f.tflite")


def test_unsupported_weight_quantization_is_refused(fixture_model):
    sg = fixture_model.subgraphs[0]
    tensors = list(sg.tensors)
    tensors[7] = replace(tensors[7], type="UINT8", quantization=None)
    model = fixture_model.replace(subgraphs=(replace(sg, tensors=tuple(tensors)), *fixture_model.subgraphs[1:]))
    with pytest.raises(ModelError, match=r"signature 'prefill_8' op 80 \(FULLY_CONNECTED\): weight tensor '.*': "
                                         r"unsupported quantization \(UINT8; weights must be FLOAT32, FLOAT16, INT8, "
                                         r"INT4\)"):
        read_llm(model, "f.tflite")


def test_an_unknown_composite_is_refused(fixture_model):
    sg = fixture_model.subgraphs[1]
    ops = list(sg.operators)
    o = ops[20]
    ops[20] = Operator(**{**o.__dict__, "options_2": o.options_2.replace(name="acme.fused_norm")})
    model = fixture_model.replace(subgraphs=(fixture_model.subgraphs[0], replace(sg, operators=tuple(ops)),
                                             *fixture_model.subgraphs[2:]))
    with pytest.raises(ModelError, match=r"signature 'decode' op 20: STABLEHLO_COMPOSITE 'acme.fused_norm' is not a "
                                         r"composite accelsim knows \(odml.rms_norm, "):
        read_llm(model, "f.tflite")


@pytest.mark.parametrize(("args", "line"), [
    (["gemma3-tiny", "--system", "pixel_9"], "accelsim llm: error: unknown system 'pixel_9'; choose one of "
                                             "galaxy_s24_ultra, galaxy_s25_ultra, macbook_pro_m3"),
    (["gemma3-tiny", "--system", "macbook_pro_m3", "--backend", "npu"],
     "accelsim llm: error: macbook_pro_m3 has no npu backend here; choose one of cpu"),
    (["gemma3-tiny", "--system", "galaxy_s24_ultra", "--quant", "int3"],
     "accelsim llm: error: unknown quantization 'int3'; choose one of int8, int4, int4-block32, int4-block128, "
     "a16w4, float32"),
    (["gpt-5", "--system", "galaxy_s24_ultra"], "accelsim llm: error: unknown architecture 'gpt-5'; choose one of "
                                                "gemma3-1b, gemma3-tiny, llama3.2-1b"),
    (["gemma3-tiny", "--system", "galaxy_s24_ultra", "--prefill", "60", "--decode", "8", "--context", "64"],
     "accelsim llm: error: gemma3-tiny: prefill 60 + decode 8 tokens do not fit the KV cache of 64 positions"),
])
def test_llm_command_line_errors_are_one_line(args, line, capsys):
    assert main(["llm", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1


def test_a_file_without_decode_is_one_line_on_the_command_line(fixture_model, tmp_path, capsys):
    path = tmp_path / "prefill_only.tflite"
    save_model(fixture_model.replace(signature_defs=fixture_model.signature_defs[:1]), path)
    assert main(["llm", str(path), "--system", "galaxy_s24_ultra", "--prefill", "8", "--decode", "8"]) == 1
    assert capsys.readouterr().err == (f"accelsim llm: error: {path}: signature 'prefill_8' has no decode signature "
                                       "to go with it (signatures: prefill_8)\n")


def test_llm_command_prints_the_outputs_and_json_keys(capsys):
    args = ["llm", "gemma3-tiny", "--system", "galaxy_s25_ultra", "--backend", "npu", "--quant", "int4-block32",
            "--prefill", "8", "--decode", "16", "--context", "64"]
    assert main(args) == 0
    text = capsys.readouterr().out
    for needle in ("time to first token:", "prefill:", "decode:", "memory: weights", "bound by", "runs on:"):
        assert needle in text
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"ttft_s", "prefill_tokens_per_s", "decode_tokens_per_s", "peak_memory_bytes"} <= set(d)
    assert set(d["memory"]) == {"weights_bytes", "kv_cache_bytes", "activation_bytes", "budget_bytes"}
    assert d["peak_memory_bytes"] == sum(d["memory"][k] for k in ("weights_bytes", "kv_cache_bytes",
                                                                  "activation_bytes"))
    for phase in d["phases"].values():
        assert {"bound", "bound_seconds", "units", "ops", "fallbacks"} <= set(phase)
        assert set(phase["bound_seconds"]) == {"compute", "weights", "kv_cache", "activations", "overhead"}


def test_llm_command_runs_a_litert_torch_file(capsys):
    path = LLM / "tiny_gemma3_dq8.tflite"
    assert main(["llm", str(path), "--system", "macbook_pro_m3", "--prefill", "8", "--decode", "16"]) == 0
    assert "KV cache of 64 positions" in capsys.readouterr().out


# -- the four architectures on the three systems ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["gemma3-1b", "llama3.2-1b", "llama3.2-3b", "qwen2.5-1.5b"])
def test_every_architecture_on_every_system(arch):
    a = ARCHITECTURES[arch]
    graph = read_llm(build_model(a, "int4", 128, 1280), arch)
    kv_per_position = a.layers * 2 * a.kv_heads * a.head_dim
    for name, backend in (("galaxy_s24_ultra", "cpu"), ("galaxy_s25_ultra", "npu"), ("macbook_pro_m3", "cpu")):
        system, spec = llm_system(name, backend)
        r = generate(analyze_generation(graph, system), system, system_name=name, backend=backend, prefill=128,
                     decode=64, kv_buffers=spec.kv_buffers[backend])
        assert r.status == "ok" and r.ttft_s > 0 and r.decode_tokens_per_s > 0
        store = 2 if backend == "npu" else 4  # the NPU keeps float32 tensors in fp16
        assert r.memory.kv_cache_bytes == kv_per_position * 1280 * store
        # int4 per channel: half a byte per weight, the tied embedding once, plus scales and norms.
        assert a.params / 2 < r.memory.weights_bytes < a.params / 2 * 1.02
        assert r.phases[1].bound == "weights"


@pytest.mark.slow
def test_readme_fit_and_held_out_rows_are_what_the_benchmark_gives():
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import llm as bench

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (fit|held out) \| (\w+) \| (\w+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| "
                      r"([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", text, re.M)
    assert len(rows) == len(bench.FIT_ROWS) + len(bench.HELD_OUT)
    published = {("fit", *r[:5]) for r in bench.FIT_ROWS} | {("held out", *r[:5]) for r in bench.HELD_OUT}
    models = {}
    for kind, name, backend, ctx, p, pub_p, ratio_p, d, pub_d, ratio_d in rows:
        key = (name, backend, int(ctx))
        row = (*key, float(pub_p), float(pub_d))
        assert (kind, *row) in published
        if key[2] not in models:
            models[key[2]] = read_llm(build_model(ARCHITECTURES["gemma3-1b"], "int4", 1024, key[2]), "gemma3-1b")
        system, _ = llm_system(name, backend)
        got_p, got_d, _ = bench._rates(analyze_generation(models[key[2]], system), system, name, backend)
        assert (f"{got_p:.1f}", f"{got_p / row[3]:.2f}", f"{got_d:.2f}", f"{got_d / row[4]:.2f}") == \
               (p, ratio_p, d, ratio_d)


@pytest.mark.slow
def test_readme_llm_example_is_what_the_command_prints(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8").split("## LLMs on the phone", 1)[1]
    command = re.search(r"\n    accelsim (llm .+)\n", text).group(1).split()
    block = re.search(r"```\n(.+?)```", text, re.S).group(1)
    assert main(command) == 0
    assert capsys.readouterr().out == block
    # The fitted DRAM rates the README names are the configs'.
    for where, figure in ((("galaxy_s24_ultra", "cpu"), "32.49 GB/s on the S24 Ultra CPU"),
                          (("galaxy_s24_ultra", "gpu"), "31.71 GB/s GPU"),
                          (("galaxy_s25_ultra", "npu"), "49.65 GB/s S25 Ultra NPU")):
        system = llm_system(*where)[0]
        unit = system.accelerators[0] if system.accelerators else system.host
        assert f"{unit.hardware.memory.level('dram').bandwidth / 1e9:g} GB/s" == figure.split(" GB/s")[0] + " GB/s"
        assert figure in text


# -- the experiment workload ------------------------------------------------------------------------------------

_EXPERIMENT = """name: llm_sweep
models: [gemma3-tiny, {file}]
host: s24u_cpu
variants:
  - {{name: cpu, accelerators: []}}
  - {{name: npu, accelerators: [s25u_hexagon_npu]}}
generate: {{prefill: 8, decode: 16, context: 64}}
sweeps:
  generate.decode: [16, 32]
  host.memory.levels.dram.bandwidth: [10 GB/s, 40 GB/s]
"""


def test_an_experiment_sweeps_generation_like_any_key(tmp_path):
    from accelsim.experiments.executors import SerialExecutor
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.run import run_experiment

    path = tmp_path / "llm.yaml"
    path.write_text(_EXPERIMENT.format(file=LLM / "tiny_gemma3_dq8.tflite"))
    outcome = run_experiment(load_experiment(path), tmp_path / "out", executor=SerialExecutor())
    recs = json.loads((tmp_path / "out" / "results.json").read_text())["points"]
    assert len(recs) == outcome.computed == 2 * 2 * 2 * 2 and all(r["status"] == "ok" for r in recs)
    for r in recs:
        assert r["latency_us"] == pytest.approx(r["llm"]["ttft_s"] * 1e6)
        assert r["llm"]["decode"] == r["sweep"]["generate.decode"]
    cpu = {(r["model"], r["sweep"]["host.memory.levels.dram.bandwidth"], r["sweep"]["generate.decode"]):
           r["llm"]["decode_tokens_per_s"] for r in recs if r["variant"] == "cpu"}
    # The CPU's decode reads its weights and cache from DRAM: more bandwidth, more tokens per second; the
    # decode length does not change the rate of a static-shape graph.
    assert cpu[("gemma3-tiny", "40 GB/s", 16)] > cpu[("gemma3-tiny", "10 GB/s", 16)]
    assert cpu[("gemma3-tiny", "40 GB/s", 16)] == pytest.approx(cpu[("gemma3-tiny", "40 GB/s", 32)])


@pytest.mark.parametrize(("block", "message"), [
    ("generate: {prefill: 8}", "generate: decode is required"),
    ("generate: {prefill: 8, decode: 4, quant: int3}", "generate.quant: expected one of int8, int4"),
    ("generate: {prefill: 0, decode: 4}", "generate.prefill: expected a whole number >= 1, got 0"),
    ("generate: {prefill: 8, decode: 4}\nsweeps: {generate.window: [1]}",
     "sweeps.generate.window: unknown generate key; expected one of prefill, decode, context, quant, kv_buffers"),
])
def test_a_bad_generate_block_is_one_line(block, message, tmp_path):
    from accelsim.experiments.experiment import load_experiment
    from accelsim.hardware.config_yaml import ConfigError

    path = tmp_path / "llm.yaml"
    path.write_text(f"models: [gemma3-tiny]\nhost: s24u_cpu\nvariants: [{{name: cpu, accelerators: []}}]\n{block}\n")
    with pytest.raises(ConfigError) as err:
        load_experiment(path)
    assert any(message in line for line in err.value.errors), err.value.errors


def test_a_kv_cache_that_spills_from_on_chip_memory_is_costed_in_dram():
    from accelsim.simulation.analysis import simulate_analysis

    graph = read_llm(build_model(TINY, "int4", 8, 64), "gemma3-tiny")
    system, _ = llm_system("galaxy_s25_ultra", "npu")
    small = System(system.host, (apply_overrides(system.accelerators[0], {"memory.levels.vtcm.size": "4 KiB"}),),
                   system.assign)
    levels = {}
    for name, s in (("fits", system), ("spills", small)):
        ga = analyze_generation(graph, s)
        sim = simulate_analysis(ga.analyses["decode"], s)
        attention = [n for n in sim.nodes if n.op == "BATCH_MATMUL"]  # they read the whole cache
        levels[name] = {lvl for n in attention for lvl, b in n.cost.level_bytes if b}
    assert levels["fits"] == {"vtcm"} and "dram" in levels["spills"]


def test_readme_generate_experiment_loads(tmp_path):
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.points import design_points

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\*\*Sweeping it\*\*.*?```yaml\n(.+?)```", text, re.S).group(1)
    (tmp_path / "e.yaml").write_text(block)
    points = design_points(load_experiment(tmp_path / "e.yaml"))
    assert len(points) == 2 * (3 + 3 * 2)  # models x (cpu: bandwidths; npu: bandwidths x MAC rates)
    assert all(p.generate == {"prefill": 1024, "decode": 256, "context": 1280, "quant": "int4", "kv_buffers": 1}
               for p in points)


def test_fallbacks_are_listed_with_their_reason(tmp_path):
    from accelsim.hardware.config import load_system

    hw = ROOT / "hw_configs"
    text = (hw / "s24u_adreno750_gpu.yaml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "op: EMBEDDING_LOOKUP" not in line]
    (tmp_path / "gpu.yaml").write_text("\n".join(lines) + "\n")
    system = load_system(hw / "s24u_cpu.yaml", [tmp_path / "gpu.yaml"])
    graph = read_llm(build_model(TINY, "int4", 8, 64), "gemma3-tiny")
    r = generate(analyze_generation(graph, system), system, system_name="s", backend="gpu", prefill=8, decode=8)
    for phase in r.phases:
        assert phase.fallbacks == (("EMBEDDING_LOOKUP", "op EMBEDDING_LOOKUP not supported", 1),)
        assert dict(phase.units)["host"] == 1
