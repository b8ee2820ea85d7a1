"""The gpu kind (TFLite GPU delegate) and the cpu kind's threads: claims checked against the delegate's rules,
fusion, precision, threads within cores."""

from __future__ import annotations

import re

import numpy as np
import pytest
from support import CUSTOM_OP_FIXTURES, FIXTURES

from accelsim.delegates.spec import ClaimRule, NodeFacts, check_claim
from accelsim.experiments.experiment import SHIPPED_CONFIGS
from accelsim.hardware.config import ConfigError, System, apply_overrides, load_hardware
from accelsim.hardware.cost import cpu, gpu
from accelsim.ops import using_ops
from accelsim.runtime.read import load_model
from accelsim.runtime.work import NodeWork
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.delegation import build_interpreter
from accelsim.simulation.diff import inference_diff
from accelsim.simulation.inference import HOST

GPU_YAML = SHIPPED_CONFIGS / "adreno630_gpu.yaml"


@pytest.fixture(scope="module")
def adreno():
    return load_hardware(GPU_YAML)


@pytest.fixture(scope="module")
def kryo():
    return load_hardware(SHIPPED_CONFIGS / "kryo385_cpu.yaml")


def _with_claim(tmp_path, claim: str) -> tuple:
    """adreno630_gpu.yaml with one more claim line at the end; the file and that line's number."""
    text = GPU_YAML.read_text(encoding="utf-8").rstrip("\n") + "\n" + claim + "\n"
    path = tmp_path / "gpu.yaml"
    path.write_text(text, encoding="utf-8")
    return path, text.count("\n")


@pytest.mark.parametrize("claim, key, words", [
    ("  - {op: ADD, versions: 1-2, dtypes: [float32], constraints: {max_rank: 4, max_runtime_inputs: 3, "
     "allowed_activations: [NONE]}}", "constraints.max_runtime_inputs", "at most 2 runtime input"),
    ("  - {op: ADD, versions: 1-2, dtypes: [float32], constraints: {max_rank: 4, allowed_activations: [NONE]}}",
     "constraints.max_runtime_inputs", "at most 2 runtime input"),
    ("  - {op: CONV_2D, versions: 1-7, dtypes: [float32], constraints: {max_rank: 4, max_runtime_inputs: 2, "
     "allowed_activations: [NONE]}}", "versions", "above the GPU delegate's maximum 6"),
    ("  - {op: BATCH_MATMUL, versions: 1, dtypes: [float32], constraints: {max_rank: 4}}", "op",
     "no parser for BATCH_MATMUL"),
    ("  - {op: RESHAPE, versions: 1, dtypes: [int8], constraints: {max_rank: 4, max_runtime_inputs: 1}}",
     "dtypes", "float tensors only"),
    ("  - {op: RESHAPE, versions: 1, dtypes: [float32], constraints: {max_rank: 5, max_runtime_inputs: 1}}",
     "constraints.max_rank", "BHWC"),
    ("  - {op: CONV_2D, versions: 1-6, dtypes: [float32], constraints: {max_rank: 4, max_runtime_inputs: 2, "
     "allowed_activations: [NONE, SIGN_BIT]}}", "constraints.allowed_activations", "IsActivationSupported"),
])
def test_a_claim_beyond_the_delegate_rules_is_a_config_error_at_its_line(tmp_path, claim, key, words):
    path, line = _with_claim(tmp_path, claim)
    with pytest.raises(ConfigError) as error:
        load_hardware(path)
    assert len(error.value.errors) == 1
    message = error.value.errors[0]
    assert re.match(rf"{re.escape(str(path))}:{line}: claims\[\d+\]\.{re.escape(key)}: ", message), message
    assert words in message


def test_every_shipped_gpu_claim_names_an_op_with_a_cited_rule(adreno):
    assert {c.op for c in adreno.policy.claims} <= set(gpu.RULES)
    assert all("model_builder.cc" in r.source and "gpu_compatibility.cc" in r.source for r in gpu.RULES.values())


def test_max_runtime_inputs_counts_present_non_constant_inputs():
    rule = ClaimRule("ADD", constraints={"max_runtime_inputs": 1})
    facts = NodeFacts("ADD", 1, "float32", input_shapes=((1, 4), (1, 4)), output_shapes=((1, 4),),
                      constant_inputs=(False, True))
    assert check_claim([rule], facts) == (True, "")
    two = NodeFacts("ADD", 1, "float32", input_shapes=((1, 4), (1, 4), None), output_shapes=((1, 4),),
                    constant_inputs=(False, False, False))
    assert check_claim([rule], two) == (False, "2 runtime inputs above max 1")


def _conv_then(op: str, reads: tuple[int, ...]) -> list[NodeWork]:
    conv = NodeWork("CONV_2D", "float32", macs=10**6, weight_bytes=4096, input_bytes=40_000, output_bytes=40_000,
                    elements=10_000, kind="gemm", reads=(40_000, 4096), writes=(40_000,))
    follower = NodeWork(op, "float32", macs=10_000, input_bytes=sum(reads), output_bytes=40_000, elements=10_000,
                        kind="elementwise", reads=reads, writes=(40_000,))
    return [conv, follower]


def test_an_elementwise_op_reading_the_kernel_before_it_is_fused_without_dispatch_or_its_input_traffic(adreno):
    fused, residual = gpu.costs(_conv_then("ADD", (40_000, 40_000)), adreno.hardware)
    assert gpu.fused_flags(_conv_then("ADD", (40_000, 40_000))) == [False, True]
    alone = gpu.costs(_conv_then("ADD", (40_000, 40_000))[1:], adreno.hardware)[0]
    assert residual.cycles < alone.cycles - adreno.hardware.compute.kernel_cycles + 1
    assert residual.bytes_on("dram") == 40_000 and alone.bytes_on("dram") == 120_000  # the residual input only
    # an op that is not linkable, or reads another tensor, launches its own kernel
    assert gpu.fused_flags(_conv_then("SOFTMAX", (40_000,))) == [False, False]
    assert gpu.fused_flags(_conv_then("ADD", (123, 40_000))) == [False, False]  # not its first input


def test_float16_runs_at_the_float16_rate_and_float32_is_a_config_option(adreno):
    works = _conv_then("ADD", (40_000, 40_000))[:1]
    fp32 = apply_overrides(adreno, {"numerics.mode": "reference"})
    assert gpu.precision(adreno.hardware) == "float16" and gpu.precision(fp32.hardware) == "float32"
    assert gpu.alu_rate(adreno.hardware) == 2 * gpu.alu_rate(fp32.hardware)
    assert gpu.costs(works, fp32.hardware)[0].compute_seconds > gpu.costs(works, adreno.hardware)[0].compute_seconds


def test_a_float_fixture_runs_on_the_gpu_with_boundary_conversions(adreno, kryo):
    sim = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_float.tflite"), System(kryo, (adreno,)))
    on_gpu = [t for t in sim.nodes if t.unit == "adreno630_gpu"]
    assert on_gpu and not [t for t in sim.nodes if t.unit == HOST]
    (partition,) = sim.partitions
    assert partition.transfer > 0 and partition.overhead == pytest.approx(adreno.hardware.link.call_overhead)


def test_the_gpu_numerics_show_float16_error_against_float32(adreno, kryo):
    report = inference_diff(str(FIXTURES / "mobilenet_v2_035_96_float.tflite"), System(kryo, (adreno,)), num_runs=1)
    assert 0 < report.outputs[0].max_abs_error < 1e-2
    fp32 = inference_diff(str(FIXTURES / "mobilenet_v2_035_96_float.tflite"),
                          System(kryo, (apply_overrides(adreno, {"numerics.mode": "reference"}),)), num_runs=1)
    assert fp32.outputs[0].max_abs_error < report.outputs[0].max_abs_error / 10


def test_threads_divide_gemm_and_depthwise_compute_only(kryo):
    one = apply_overrides(kryo, {"compute.threads": 1})
    gemm = NodeWork("CONV_2D", "float32", macs=10**7, kind="gemm")
    add = NodeWork("ADD", "float32", macs=10**5, kind="elementwise")
    assert cpu.compute_cycles(gemm, one.hardware) == pytest.approx(4 * cpu.compute_cycles(gemm, kryo.hardware))
    assert cpu.compute_cycles(add, one.hardware) == cpu.compute_cycles(add, kryo.hardware)


def test_threads_above_the_declared_cores_is_a_config_error(tmp_path, kryo):
    text = (SHIPPED_CONFIGS / "kryo385_cpu.yaml").read_text(encoding="utf-8").replace("threads: 4", "threads: 8")
    path = tmp_path / "cpu.yaml"
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("  threads: 8") + 1
    with pytest.raises(ConfigError, match=rf"cpu.yaml:{line}: compute.threads: 8 threads above the 4 cores"):
        load_hardware(path)
    with pytest.raises(ConfigError, match="compute.threads: 5 threads above the 4 cores"):
        apply_overrides(kryo, {"compute.threads": 5})
    assert np.isclose(apply_overrides(kryo, {"compute.threads": 2}).hardware.compute.threads, 2)


FLOAT_FIXTURES = sorted(p for p in FIXTURES.glob("*_float.tflite"))


@pytest.mark.parametrize("model", FLOAT_FIXTURES, ids=lambda p: p.stem)
def test_in_tflite_order_a_float_model_the_gpu_accepts_in_part_runs_a_partition_there(model, adreno, kryo):
    """examples/phone.yaml's order variant: the GPU delegate first, then the DSP; the CPU runs what is left."""
    dsp = load_hardware(SHIPPED_CONFIGS / "hexagon_dsp.yaml")
    system = System(kryo, (adreno, dsp))
    module = CUSTOM_OP_FIXTURES.get(model.stem)  # custom-op fixtures load with their op module's kernels
    with using_ops([module] if module else []):
        interpreter, _ = build_interpreter(load_model(str(model)), system, shapes_only=True)
    report = interpreter.get_delegation_report()
    accepted = [r for r in report if "adreno630_gpu" not in r["reasons"]]
    on_gpu = [r for r in report if r["delegate"] == "adreno630_gpu"]
    assert bool(on_gpu) == bool(accepted)
    for row in report:
        if row["delegate"] is None:  # every node left on the CPU says which GPU rule refused it
            assert row["reasons"]["adreno630_gpu"], row


def test_a_gpu_without_a_float32_rate_is_refused_and_an_unlisted_float16_rate_is_noted(tmp_path, adreno):
    text = GPU_YAML.read_text(encoding="utf-8")
    path = tmp_path / "gpu.yaml"
    path.write_text(text.replace("macs_per_cycle: {float16: 1024, float32: 512}", "macs_per_cycle: {float16: 1024}"),
                    encoding="utf-8")
    line = text.splitlines().index("  macs_per_cycle: {float16: 1024, float32: 512}") + 1
    with pytest.raises(ConfigError, match=rf"gpu.yaml:{line}: compute.macs_per_cycle: needs a float32 rate"):
        load_hardware(path)
    fp32_only = apply_overrides(adreno, {"compute.macs_per_cycle": {"float32": 512}})
    assert gpu.alu_rate(fp32_only.hardware) == 1024
    assert fp32_only.hardware.notes()[0] == ("compute.macs_per_cycle has no float16: it runs at 1024 multiply-adds "
                                             "per cycle")
    assert adreno.hardware.notes() == []
