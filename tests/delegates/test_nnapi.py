"""TFLite's NNAPI delegate policy (accelsim.delegates.nnapi): each DoPrepare rule on fixtures and one-op models."""

from __future__ import annotations

import numpy as np
import pytest
from op_models import conv_model
from support import FIXTURES, Spec, const, single_op_model

from accelsim.delegates.nnapi import (
    DRIVER,
    FEATURE_LEVEL,
    FP16,
    NO_TARGET,
    PARTITION_LIMIT,
    TYPE,
    NnapiDelegate,
    NnapiDriver,
    NnapiOptions,
    NnapiSpec,
    feature_level,
    nnapi_decision,
)
from accelsim.delegates.nnapi_rules import FEATURE_LEVELS, RULES
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.read import load_model

FL6, FL7 = FEATURE_LEVELS["FL6"], FEATURE_LEVELS["FL7"]


def everything(name: str = "npu", level: int = 29, dtypes=()) -> NnapiDriver:
    """A driver supporting every NNAPI op TFLite maps (and their lowerings), for `dtypes` (empty: any)."""
    ops = {*RULES, "TRANSPOSE_CONV_2D", "RELU1", "PAD_V2", "REDUCE_SUM", "ARGMAX", "ARGMIN", "SLICE", "SIN",
           "RESHAPE", "SPLIT", "SUB", "MUL", "ADD", "DEQUANTIZE", "CONCATENATION"}
    return NnapiDriver(name, level, {op: set(dtypes) for op in ops})


def decide(model, spec: NnapiSpec):
    it = Interpreter(model=load_model(model), shapes_only=True)  # the decision reads types and shapes only
    return it, nnapi_decision(it.primary, spec)


def kinds(decision) -> list[str]:
    return [f.kind for v in decision.verdicts.values() for f in v.failures]


def _batch_matmul() -> bytes:
    return single_op_model("BATCH_MATMUL", [Spec((1, 4, 8)), Spec((1, 8, 4))], [Spec((1, 4, 4))],
                           adj_x=False, adj_y=False)


def _mirror_pad() -> bytes:
    return single_op_model("MIRROR_PAD", [Spec((1, 4, 4, 2)), const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]],
                                                                             np.int32))],
                           [Spec((1, 6, 6, 2))], mode=0)


@pytest.mark.parametrize("model, level", [(_batch_matmul, FL6), (_mirror_pad, FL7)])
def test_an_op_is_delegated_from_its_feature_level_on(model, level):
    below = NnapiSpec(29, (everything(level=29),))
    _, d = decide(model(), below)
    assert d.delegated == () and kinds(d) == [FEATURE_LEVEL]
    name = {FL6: "FL6", FL7: "FL7"}[level]
    assert name in d.verdicts[0].reason and "nnapi_delegate.cc" in d.verdicts[0].reason
    # the target level is the runtime's lowered to the drivers' highest (GetTargetFeatureLevel)
    assert NnapiSpec(level, (everything(level=29),)).target_level() == 29
    _, d = decide(model(), NnapiSpec(level, (everything(level=level),)))
    assert d.delegated == (0,)


def test_only_uint8_and_int8_are_quantized_and_int8_conv_needs_api_29():
    int16 = single_op_model("ADD", [Spec((1, 4), "INT16", scale=0.1, zero_point=0)] * 2,
                            [Spec((1, 4), "INT16", scale=0.1, zero_point=0)])
    _, d = decide(int16, NnapiSpec(31, (everything(level=31),)))
    assert kinds(d) == [TYPE] and "int16" in d.verdicts[0].reason
    conv = conv_model("CONV_2D", (1, 6, 6, 3), (4, 3, 3, 3), "int8")
    _, d = decide(conv, NnapiSpec(28, (everything(level=28),), NnapiOptions(disallow_nnapi_cpu=False,
                                                                           accelerator_name="npu")))
    assert kinds(d) == [TYPE] and "[float32, uint8]" in d.verdicts[0].reason
    _, d = decide(conv, NnapiSpec(29, (everything(),)))
    assert d.delegated == (0,)


def test_per_channel_quantization_needs_api_29():
    conv = conv_model("CONV_2D", (1, 6, 6, 3), (4, 3, 3, 3), "uint8")
    per_channel = conv_model("CONV_2D", (1, 6, 6, 3), (4, 3, 3, 3), "int8_per_channel")
    spec28 = NnapiSpec(28, (everything(level=28),), NnapiOptions(accelerator_name="npu"))
    assert decide(conv, spec28)[1].delegated == (0,)
    refused = decide(per_channel, spec28)[1].verdicts[0].reason
    assert "Per-channel".lower() in refused.lower() or "per-channel" in refused
    assert decide(per_channel, NnapiSpec(29, (everything(),)))[1].delegated == (0,)
    # NNAPI 1.0/1.1's uint8 restriction (ExpectIsRestrictedScalesCompliant): input * filter scale < output scale
    tight = conv_model("CONV_2D", (1, 6, 6, 3), (4, 3, 3, 3), "uint8", out_scale_factor=1e-4)
    assert "input_scale * filter_scale < output_scale" in decide(tight, spec28)[1].verdicts[0].reason
    assert decide(tight, NnapiSpec(29, (everything(),)))[1].delegated == (0,)


def test_a_node_is_delegated_only_when_the_drivers_support_all_its_nnapi_ops():
    model = single_op_model("HARD_SWISH", [Spec((1, 8))], [Spec((1, 8))])
    only_mul = NnapiDriver("gpu", 29, {"MUL": {"float32"}, "HARD_SWISH": {"float32"}})
    _, d = decide(model, NnapiSpec(29, (only_mul,)))  # below 30 HARD_SWISH is MUL, MUL, MUL, ADD
    assert d.delegated == () and kinds(d) == [DRIVER] and "ADD on float32" in d.verdicts[0].reason
    both = NnapiDriver("gpu", 29, {"MUL": {"float32"}, "ADD": {"float32"}})
    assert decide(model, NnapiSpec(29, (both,)))[1].delegated == (0,)
    # with the runtime at 30 HARD_SWISH is one NNAPI op
    at30 = NnapiSpec(30, (NnapiDriver("gpu", 30, {"HARD_SWISH": {"float32"}}),))
    assert decide(model, at30)[1].delegated == (0,)
    # int8 reaches a driver as uint8 below API 30 (the +128 conversion)
    q = single_op_model("RELU", [Spec((1, 8), "INT8", scale=0.1, zero_point=0)],
                        [Spec((1, 8), "INT8", scale=0.1, zero_point=0)])
    assert decide(q, NnapiSpec(29, (NnapiDriver("dsp", 29, {"RELU": {"uint8"}}),)))[1].delegated == (0,)


def test_the_largest_three_partitions_are_kept_and_the_limit_is_an_option():
    model = FIXTURES / "transformer_block_float.tflite"
    it, d = decide(model, NnapiSpec(29, (everything(),)))
    assert len(d.partitions) == 3 and PARTITION_LIMIT in kinds(d)
    _, unlimited = decide(model, NnapiSpec(29, (everything(),), NnapiOptions(max_number_delegated_partitions=0)))
    sizes = sorted((len(p.nodes) for p in unlimited.partitions), reverse=True)
    assert len(sizes) > 3 and sorted((len(p.nodes) for p in d.partitions), reverse=True) == sizes[:3]
    assert {ni for p in d.partitions for ni in p.nodes} < {ni for p in unlimited.partitions for ni in p.nodes}
    # the same choice as TFLite's delegate API makes: the delegate's partitions are the decision's
    delegate = NnapiDelegate(NnapiSpec(29, (everything(),)))
    Interpreter(model=load_model(model), experimental_delegates=[delegate], shapes_only=True).allocate_tensors()
    assert sorted(delegate.claimed_nodes()) == sorted(d.delegated)


def test_fp16_weights_delegate_the_whole_model_or_nothing():
    model = FIXTURES / "mobilenet_v2_035_96_fp16.tflite"
    it, whole = decide(model, NnapiSpec(29, (everything(),)))
    assert len(whole.delegated) == len(it.primary.execution_plan)
    no_mean = everything()
    no_mean = NnapiDriver("npu", 29, {k: v for k, v in no_mean.supports.items() if k != "MEAN"})
    _, nothing = decide(model, NnapiSpec(29, (no_mean,)))
    assert nothing.delegated == () and set(kinds(nothing)) == {FP16} and "fp16" in nothing.note


def test_nothing_is_delegated_when_only_the_reference_cpu_driver_exists():
    model = FIXTURES / "mobilenet_v2_035_96_float.tflite"
    _, d = decide(model, NnapiSpec(29, (NnapiDriver("nnapi-reference", 29),)))
    assert d.delegated == () and set(kinds(d)) == {NO_TARGET} and "nnapi-reference" in d.note


def test_accelerator_name_sends_everything_to_that_driver():
    model = FIXTURES / "mobilenet_v2_035_96_float.tflite"
    spec = NnapiSpec(29, (everything("dsp", dtypes=["uint8"]), everything("gpu", dtypes=["float32"])),
                     NnapiOptions(accelerator_name="dsp"))
    _, d = decide(model, spec)
    assert d.targets == ("dsp",) and d.delegated == () and set(kinds(d)) == {DRIVER}
    _, d = decide(model, NnapiSpec(29, spec.drivers, NnapiOptions(accelerator_name="gpu")))
    assert d.targets == ("gpu",) and len(d.delegated) > 0 and all(v.drivers == ("gpu",) for v in
                                                                   d.verdicts.values() if v.delegated)


def test_bad_input_is_one_clear_error_with_the_valid_choices():
    with pytest.raises(ValueError, match=r"unknown NNAPI feature level 'FL9'; valid: FL1 \(27\)"):
        feature_level("FL9")
    with pytest.raises(ValueError, match=r"unknown NNAPI feature level 26"):
        NnapiDriver("x", 26)
    with pytest.raises(ValueError, match=r"Could not find the specified NNAPI accelerator: tpu. Must be one of: "
                                         r"\{dsp, gpu\}"):
        NnapiSpec(29, (everything("dsp"), everything("gpu")), NnapiOptions(accelerator_name="tpu"))
    with pytest.raises(ValueError, match="at least one driver"):
        NnapiSpec(29, ())
    with pytest.raises(ValueError, match="execution_preference must be one of"):
        NnapiOptions(execution_preference="fast")


# -- the shipped NNAPI configs and the simulation (accelsim.hardware.nnapi_config, accelsim.simulation.nnapi) ------

def _nnapi_yaml(tmp_path, body: str):
    hw = tmp_path / "nnapi.yaml"
    hw.write_text(body)
    return hw


def test_the_pixel_configs_load_and_simulate_with_their_drivers():
    from accelsim.experiments.experiment import resolve_config
    from accelsim.hardware.config import load_system
    from accelsim.simulation.analysis import simulate_model

    for host, nnapi in (("kryo385_cpu", "nnapi_pixel3"), ("kryo485_cpu", "nnapi_pixel4")):
        system = load_system(resolve_config(host, FIXTURES), [resolve_config(nnapi, FIXTURES)])
        assert [a.name for a in system.accelerators] == ["qti-dsp", "qti-gpu"]
        assert system.nnapi.spec.android_api == 29 and system.nnapi.spec.options.max_number_delegated_partitions == 3
        quant = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_int8.tflite"), system)
        flt = simulate_model(str(FIXTURES / "mobilenet_v2_035_96_float.tflite"), system)
        assert {p.unit for p in quant.partitions} == {"qti-dsp"} and {p.unit for p in flt.partitions} == {"qti-gpu"}
        # three partitions, each paying its copies and per-execution overhead: slower than the CPU alone
        slow = simulate_model(str(FIXTURES / "transformer_block_float.tflite"), system)
        host_only = simulate_model(str(FIXTURES / "transformer_block_float.tflite"), load_system(
            resolve_config(host, FIXTURES), []))
        assert len(slow.partitions) == 3 and slow.latency > host_only.latency
        assert all(p.overhead > 0 and p.transfer > 0 for p in slow.partitions)


@pytest.mark.parametrize("edit, message", [
    ("feature_level: 29", "feature_level: unknown NNAPI feature level 'FL9'; valid: FL1 (27)"),
    ("accelerator_name: null", "Could not find the specified NNAPI accelerator: qti-tpu. Must be one of: "
                               "{qti-dsp, qti-gpu}"),
    ("\ndrivers:", "drivers: expected a non-empty list of NNAPI drivers"),
])
def test_bad_nnapi_configs_are_one_clear_error(tmp_path, edit, message):
    from accelsim.experiments.experiment import resolve_config
    from accelsim.hardware.config import ConfigError, load_system

    text = (FIXTURES.parents[2] / "hw_configs" / "nnapi" / "nnapi_pixel3.yaml").read_text()
    text = text.replace("../", str(FIXTURES.parents[2] / "hw_configs") + "/")
    replacement = {"feature_level: 29": "feature_level: FL9", "accelerator_name: null": "accelerator_name: qti-tpu",
                   "\ndrivers:": "\ndrivers: []\nunused:"}[edit]
    text = text.replace(edit, replacement, 1)
    if edit == "\ndrivers:":
        text = text[:text.index("unused:")]
    hw = _nnapi_yaml(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_system(resolve_config("kryo385_cpu", FIXTURES), [str(hw)])
    assert message in str(err.value) and str(hw) in str(err.value)


def test_allow_fp16_relaxes_the_drivers_float_math(tmp_path):
    from accelsim.experiments.experiment import SHIPPED_CONFIGS, resolve_config
    from accelsim.hardware.config import load_system
    from accelsim.simulation.analysis import simulate_model

    text = (SHIPPED_CONFIGS / "nnapi" / "nnapi_pixel3.yaml").read_text().replace("../", f"{SHIPPED_CONFIGS}/")
    hw = _nnapi_yaml(tmp_path, text.replace("allow_fp16: false", "allow_fp16: true"))
    host = resolve_config("kryo385_cpu", FIXTURES)
    relaxed, strict = (load_system(host, [str(p)]) for p in (hw, SHIPPED_CONFIGS / "nnapi" / "nnapi_pixel3.yaml"))
    assert {a.hardware.numerics_precision for a in relaxed.accelerators} == {"float16"}
    assert {a.hardware.numerics_precision for a in strict.accelerators} == {"float32"}
    model = str(FIXTURES / "mobilenet_v2_035_96_float.tflite")
    fast, slow = (simulate_model(model, s) for s in (relaxed, strict))
    assert sum(p.compute for p in fast.partitions) < sum(p.compute for p in slow.partitions)
