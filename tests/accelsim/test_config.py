"""accelsim.hardware.config: shipped files load; every mistake is a ConfigError naming file:line and key path.

Also the claim side that configs feed: delegates.spec.check_claim reasons and facts_from_node.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from accelsim.delegates.spec import (
    MAX_VERSION,
    ClaimRule,
    NodeFacts,
    Numerics,
    PartitionPolicy,
    check_claim,
    facts_from_node,
)
from accelsim.hardware.config import ConfigError, accelerator_policy, apply_overrides, load_hardware, load_system
from accelsim.hardware.cost.cpu import CpuCompute
from accelsim.hardware.cost.systolic import SystolicCompute
from accelsim.hardware.cost.vector import VectorCompute
from accelsim.hardware.memory import Level, Memory
from accelsim.runtime import Interpreter
from accelsim.runtime.errors import AccelsimError
from accelsim.runtime.ir import Quantization, make_operator

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hw_configs"
VERSIONS = "expected versions like 'any', '1-3' (a range), [1, 3] (those versions) or 2"
DTYPE_LIST = ("bfloat16, bool, complex128, complex64, float16, float32, float64, float8_e4m3fn, float8_e5m2, int16, "
              "int2, int32, int4, int64, int8, resource, string, uint16, uint32, uint4, uint64, uint8, variant")
MODELS = ROOT / "tests" / "fixtures" / "models"

BASE = """\
name: tiny
kind: systolic
clock: 500 MHz
compute:
  rows: 8
  cols: 4
  dataflow: os
  vector_lanes: 16
memory:
  levels: {sram: {size: 1 MiB, bandwidth: 8 GB/s}}
  weights: link
link:
  bandwidth: 320 MB/s
  call_overhead: 100 us
claims:
  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}
  - {op: ADD, versions: 2, dtypes: [int8, uint8], constraints: {max_rank: 4}}
"""


def _errors(tmp_path: Path, text: str | bytes) -> tuple[str, list[str]]:
    path = tmp_path / "hw.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert str(info.value) == "\n".join(info.value.errors)
    return str(path), list(info.value.errors)


def _line(path: Path, prefix: str) -> int:
    """The 1-based number of the first line of `path` starting with `prefix`."""
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith(prefix))


# -- shipped files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["edgetpu_usb", "edgetpu_pcie", "hexagon_dsp", "host_cpu"])
def test_every_shipped_file_loads_and_starts_with_a_sources_header(name):
    path = HW / f"{name}.yaml"
    config = load_hardware(path)
    assert config.name == name
    assert config.source == str(path)
    header = path.read_text().splitlines()[0]
    assert header.startswith("# ")
    assert "Where the numbers come from:" in path.read_text()


def test_edgetpu_numbers_reproduce_the_datasheet():
    usb, pcie = load_hardware(HW / "edgetpu_usb.yaml"), load_hardware(HW / "edgetpu_pcie.yaml")
    # 16 x 256 and the link rates are fitted to Coral's Table 1 (benchmarks/cost_vs_coral.py).
    usb_hw = usb.hardware
    assert usb_hw.compute == SystolicCompute(rows=16, cols=256, dataflow="ws", vector_lanes=64, instruction_bytes=1750)
    assert pcie.hardware.compute == usb_hw.compute
    peak_ops = 2 * usb_hw.compute.rows * usb_hw.compute.cols * usb_hw.clock
    assert peak_ops == pytest.approx(4e12, rel=0.03)  # "4 TOPS (int8)"
    # Activations and cached weights share the 8 MiB; the weights live in host memory, over the link.
    sram = Level("sram", 64e9, 8 * 1024**2)
    assert usb_hw.memory == Memory((sram,), weights="link", activations="sram", cache="sram")
    # Below the 500 MB/s of payload that both 5 Gb/s links with 8b/10b coding carry.
    assert usb.hardware.link.bandwidth == 480e6 and pcie.hardware.link.bandwidth == 410e6
    assert usb.policy.partition == PartitionPolicy("prefix", max_delegated_partitions=1)
    assert all(rule.dtypes == {"int8"} for rule in usb.policy.claims)
    assert {r.op for r in usb.policy.claims} >= {
        "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL", "MEAN", "AVERAGE_POOL_2D", "MAX_POOL_2D",
        "CONCATENATION", "RESHAPE", "SOFTMAX", "LOGISTIC", "TANH", "RESIZE_BILINEAR", "PAD", "STRIDED_SLICE",
        "QUANTIZE"}


def test_hexagon_and_host_numbers():
    dsp, host = load_hardware(HW / "hexagon_dsp.yaml"), load_hardware(HW / "host_cpu.yaml")
    assert dsp.hardware.compute == VectorCompute(lanes=128, contexts=4, efficiency=0.5)
    assert dsp.hardware.link.shared_memory and dsp.hardware.link.call_overhead == 300e-6
    assert dsp.policy.partition.min_nodes_per_partition == 2
    conv = next(r for r in dsp.policy.claims if r.op == "CONV_2D")
    assert conv.versions == ((1, 3),) and conv.constraints["max_stride"] == 3
    host_hw = host.hardware
    assert host_hw.compute == CpuCompute(simd_bits=128, macs_per_cycle=(("float32", 8.0), ("int8", 32.0)),
                                         efficiency=0.6)
    assert host_hw.clock == 2.8e9
    assert host_hw.memory == Memory((Level("dram", 15e9, energy=162.5e-12),), "dram", "dram")
    assert dsp.hardware.memory == Memory((Level("dram", 10e9, energy=162.5e-12),), "dram", "dram")
    assert host.hardware.link is None and host.policy.claims == () and not host.is_accelerator


def test_load_system_and_accelerator_policy():
    system = load_system(HW / "host_cpu.yaml", [HW / "edgetpu_usb.yaml", HW / "hexagon_dsp.yaml"])
    assert system.host.name == "host_cpu"
    assert [a.name for a in system.accelerators] == ["edgetpu_usb", "hexagon_dsp"]
    policy = accelerator_policy(system.accelerators[0])
    assert policy is system.accelerators[0].policy
    assert policy.name == "edgetpu_usb" and policy.partition.kind == "prefix"
    assert policy.numerics == Numerics("reference")
    with pytest.raises(ConfigError, match=r"host_cpu.yaml: 'host_cpu' declares no claims; it is not an accelerator"):
        accelerator_policy(system.host)


def test_load_system_reports_roles_and_name_clashes(tmp_path):
    twin = tmp_path / "twin.yaml"
    twin.write_text((HW / "edgetpu_usb.yaml").read_text())
    usb = HW / "edgetpu_usb.yaml"
    with pytest.raises(ConfigError) as info:
        load_system(usb, [HW / "host_cpu.yaml", twin])
    assert info.value.errors == (
        f"{usb}:{_line(usb, 'kind:')}: kind: edgetpu_usb is an accelerator config (kind systolic), not a host; a "
        "host is kind cpu or mcu (give accelerators with --hw, or in an experiment variant's accelerators)",
        f"{HW / 'host_cpu.yaml'}:{_line(HW / 'host_cpu.yaml', 'kind:')}: kind: "
        "host_cpu is a host config (kind cpu); use --host (in an experiment: host:); an accelerator is kind "
        "systolic, vector, npu, gpu or tensor",
        f"{twin}:{_line(usb, 'name:')}: name: 'edgetpu_usb' is also the name in {usb}",
    )



def test_load_system_names_the_host_given_as_an_accelerator_and_duplicates():
    host, usb = HW / "host_cpu.yaml", HW / "edgetpu_usb.yaml"
    with pytest.raises(ConfigError) as info:
        load_system(host, [host, usb, usb])
    assert info.value.errors == (
        f"{usb}: given twice; each accelerator joins the system once (to run it twice, copy the file and give "
        "the copy another name)",
        f"{host}:{_line(host, 'kind:')}: kind: host_cpu is a host config (kind cpu); use --host (in an "
        "experiment: host:); an accelerator is kind systolic, vector, npu, gpu or tensor",
    )


def test_an_experiment_given_as_a_hardware_config_says_so():
    path = ROOT / "examples" / "default" / "default.yaml"
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert info.value.errors == (f"{path}:{_line(path, 'name:')}: this is an experiment, not a hardware config; "
                                 f"run it with `accelsim run {path}`",)


def test_load_system_collects_errors_of_every_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASE.replace("clock: 500 MHz", "clock: fast"))
    with pytest.raises(ConfigError) as info:
        load_system(tmp_path / "missing.yaml", [bad])
    assert info.value.errors[0].startswith(f"{tmp_path / 'missing.yaml'}: cannot read: ")
    assert info.value.errors[1] == f"{bad}:3: clock: expected a frequency like '500 MHz', got 'fast'"


# -- one error class at a time ---------------------------------------------------------------------


@pytest.mark.parametrize("old, new, expected", [
    ("  bandwidth: 320 MB/s", "  bandwidth: fast",
     ["13: link.bandwidth: expected a rate like '320 MB/s', got 'fast'"]),
    ("  call_overhead: 100 us", "  call_overhed: 100 us",
     ["14: link.call_overhed: unknown key; did you mean 'call_overhead'?"]),
    ("  vector_lanes: 16", "  vector_lanes: 16\n  turbo: true",
     ["9: compute.turbo: unknown key; expected one of: rows, cols, dataflow, vector_lanes, instruction_bytes"]),
    ("  vector_lanes: 16", "  vector_lanes: 16\n  instruction_bytes: -1",
     ["9: compute.instruction_bytes: expected a whole number >= 0, got -1"]),
    ("  vector_lanes: 16", "  vector_lanes: 16\n  instruction_bytes: 1.5 KiB",
     ["9: compute.instruction_bytes: expected a whole number like 1750, got '1.5 KiB'"]),
    ("  rows: 8\n", "", ["4: compute.rows: required key missing"]),
    ("link:\n  bandwidth: 320 MB/s\n  call_overhead: 100 us\n", "",
     ["1: link: required key missing"]),
    ("  cols: 4", "  cols: four", ["6: compute.cols: expected a whole number like 64, got 'four'"]),
    ("  cols: 4", "  cols: 4.5", ["6: compute.cols: expected a whole number like 64, got 4.5"]),
    ("  cols: 4", "  cols: true", ["6: compute.cols: expected a whole number like 64, got True"]),
    ("  cols: 4", "  cols: 0", ["6: compute.cols: expected a whole number >= 1, got 0"]),
    ("compute:\n  rows: 8\n  cols: 4\n  dataflow: os\n  vector_lanes: 16\n", "compute: [8, 4]\n",
     ["4: compute: expected a mapping, got a list"]),
    ("  dataflow: os", "  dataflow: wss", ["7: compute.dataflow: expected one of os, ws, is, got 'wss'; "
                                           "did you mean 'ws'?"]),
    ("clock: 500 MHz", "clock: 500", ["3: clock: expected a frequency like '500 MHz', got 500 (missing unit)"]),
    ("clock: 500 MHz", "clock: 4 GB", ["3: clock: expected a frequency like '500 MHz', got '4 GB' (unknown unit "
                                       "'GB'; use one of Hz, kHz, MHz, GHz)"]),
    ("{size: 1 MiB", "{size: -1 MiB",
     ["10: memory.levels.sram.size: expected a size like '8 MiB', got '-1 MiB' (must not be negative)"]),
    ("{size: 1 MiB", "{latency: 2, size: 1 MiB",
     ["10: memory.levels.sram.latency: expected a time like '2 us', got 2 (missing unit)"]),
    ("bandwidth: 8 GB/s}}", "bandwidth: 8 GB/s}, link: {bandwidth: 1 GB/s}}",
     ["10: memory.levels.link: 'link' means host memory over the link; give the level another name"]),
    ("{sram: {", "{s-ram: {", ["10: memory.levels.s-ram: expected a level name of letters, digits and _ like sram, "
                               "got 's-ram'"]),
    ("levels: {sram: {size: 1 MiB, bandwidth: 8 GB/s}}", "levels: [sram]",
     ["10: memory.levels: expected a mapping of level name -> {size, bandwidth, latency}, fastest first, like "
      "{sram: {size: 8 MiB, bandwidth: 64 GB/s}}, got a list"]),
    ("  weights: link", "  weights: lnk", ["11: memory.weights: expected a level name (sram, link), got 'lnk'; "
                                            "did you mean 'link'?"]),
    ("  weights: link", "  weights: link\n  cache: sarm", ["12: memory.cache: expected a level name (sram), "
                                                         "got 'sarm'; did you mean 'sram'?"]),
    ("  weights: link", "  activations: dram", ["11: memory.activations: expected a level name (sram), got 'dram'; "
                                                 "did you mean 'sram'?"]),
    ("  weights: link", "  cache: sram",
     ["11: memory.cache: a cache must be a level above where the weights live ('sram'), got 'sram'"]),
    ("  weights: link", "  cahce: sram", ["11: memory.cahce: unknown key; did you mean 'cache'?"]),
    ("kind: systolic", "kind: systolc", ["2: kind: expected one of systolic, vector, cpu, npu, gpu, tensor, mcu, got "
                                         "'systolc'; did you mean 'systolic'?"]),
    ("name: tiny", "name: ''", ["1: name: expected a one-line name, got ''"]),
    ("op: CONV_2D", "op: CONV2D", ["16: claims[0].op: unknown op 'CONV2D'; did you mean 'CONV_2D'?"]),
    ("op: CONV_2D", "op: CONV_2E", ["16: claims[0].op: expected a builtin op name like CONV_2D or 'any', "
                                    "got 'CONV_2E'; did you mean 'CONV_2D'?"]),
    ("op: CONV_2D", "op: FROBNICATE", ["16: claims[0].op: expected a builtin op name like CONV_2D or 'any', "
                                       "got 'FROBNICATE' (every name: accelsim configs --schema)"]),
    ("op: CONV_2D", "op: REDUCE_MEAN", ["16: claims[0].op: 'REDUCE_MEAN' is TensorFlow's name; TFLite calls it "
                                        "MEAN"]),
    ("op: CONV_2D", "op: MatMul", ["16: claims[0].op: 'MatMul' is TensorFlow's name; TFLite calls it "
                                   "FULLY_CONNECTED or BATCH_MATMUL"]),
    ("op: CONV_2D", "op: 3", ["16: claims[0].op: expected a builtin op name like CONV_2D or 'any', got 3 "
                              "(every name: accelsim configs --schema)"]),
    ("versions: 1-3", "versions: 3-1", ["16: claims[0].versions: " + VERSIONS + ", got '3-1' (min above max)"]),
    ("versions: 1-3", "versions: 0", ["16: claims[0].versions: " + VERSIONS + ", got 0 (versions start at 1)"]),
    ("versions: 1-3", "versions: x", ["16: claims[0].versions: " + VERSIONS + ", got 'x'"]),
    ("versions: 1-3", "versions: [1, x]", ["16: claims[0].versions: " + VERSIONS + ", got [1, 'x']"]),
    ("versions: 1-3", "versions: [0, 2]", ["16: claims[0].versions: " + VERSIONS
                                              + ", got [0, 2] (versions start at 1)"]),
    ("versions: 1-3", "versions: [true]", ["16: claims[0].versions: " + VERSIONS + ", got [True]"]),
    ("dtypes: [int8]}", "dtypes: [int9]}", ["16: claims[0].dtypes[0]: expected a dtype (" + DTYPE_LIST
                                            + "), got 'int9'; did you mean 'int8'?"]),
    ("dtypes: [int8]}", "dtypes: [INT9]}", ["16: claims[0].dtypes[0]: expected a dtype (" + DTYPE_LIST
                                            + "), got 'INT9'"]),
    ("kind: systolic", "kind: fpga", ["2: kind: expected one of systolic, vector, cpu, npu, gpu, tensor, mcu, got "
                                     "'fpga'"]),
    ("  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}", "  - {op: any, dtypes: [int8], except: SOFTMAX}",
     ["16: claims[0].except: expected a list of op names like [SOFTMAX], got 'SOFTMAX'"]),
    ("  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}", "  - {op: any, dtypes: [int8], except: [SOFTMX]}",
     ["16: claims[0].except[0]: expected a builtin op name like CONV_2D, got 'SOFTMX'; did you mean 'SOFTMAX'?"]),
    ("  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}", "  - {op: any, dtypes: [int8], except: [any]}",
     ["16: claims[0].except[0]: expected a builtin op name like CONV_2D, got 'any' "
      "(every name: accelsim configs --schema)"]),
    ("  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}", "  - {op: CONV_2D, versions: 1, dtypes: [int8], "
                                                        "except: [ADD]}",
     ["16: claims[0].except: unknown key; expected one of: op, versions, dtypes, constraints, custom_code"]),
    ("  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}", "  - {op: any, versions: 1}",
     ["16: claims[0].dtypes: required key missing"]),
    ("dtypes: [int8]}", "dtypes: int8}", ["16: claims[0].dtypes: expected a list of dtypes like [int8], "
                                          "got 'int8'"]),
    ("{max_rank: 4}", "{max_rnk: 4}", ["17: claims[1].constraints.max_rnk: unknown key; did you mean 'max_rank'?"]),
    ("{max_rank: 4}", "{max_rank: 0}", ["17: claims[1].constraints.max_rank: expected a whole number >= 1, got 0"]),
    ("{max_rank: 4}", "{allowed_paddings: [SAME, FULL]}",
     ["17: claims[1].constraints.allowed_paddings[1]: expected a padding, got 'FULL'"]),
    ("{max_rank: 4}", "{per_channel: 'no'}", ["17: claims[1].constraints.per_channel: expected true or false, "
                                              "got 'no'"]),
    ("  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}", "  - {op: CONV_2D, dtypes: [int8]}",
     ["16: claims[0].versions: required key missing"]),
    ("claims:", "partition: {policy: greedy}\nclaims:",
     ["15: partition.policy: expected one of tflite, prefix, cost, got 'greedy'"]),
    ("claims:", "partition: {policy: cost, objective: area}\nclaims:",
     ["15: partition.objective: expected one of latency, energy, got 'area'"]),
    ("claims:", "numerics: {mode: rounding}\nclaims:",
     ["15: numerics.rounding: required with mode 'rounding'; one of half_away_from_zero, half_up, half_even, "
      "truncate"]),
    ("claims:", "numerics: {mode: float16, rounding: half_even}\nclaims:",
     ["15: numerics.rounding: only allowed with mode 'rounding', not 'float16'"]),
    ("clock: 500 MHz", "clock: !freq 500 MHz",
     ["3: clock: YAML tag !freq is not allowed (only plain values, lists and mappings)"]),
    ("name: tiny\n", "name: tiny\nname: other\n", ["2: name: duplicate key (first given on line 1)"]),
])
def test_each_error_names_file_line_and_key_path(tmp_path, old, new, expected):
    assert old in BASE
    path, errors = _errors(tmp_path, BASE.replace(old, new, 1))
    assert errors == [f"{path}:{e}" for e in expected]


def test_yaml_tags_that_construct_objects_are_refused_without_running_them(tmp_path):
    marker = tmp_path / "ran"
    path, errors = _errors(tmp_path, BASE + f"extra: !!python/object/apply:os.system ['touch {marker}']\n")
    assert errors == [
        f"{path}:18: extra: YAML tag !!python/object/apply:os.system is not allowed (only plain values, lists "
        "and mappings)",
        f"{path}:18: extra: unknown key; expected one of: name, kind, clock, compute, memory, link, claims, "
        "calibration, energy, partition, numerics",
    ]
    assert not marker.exists()


def test_an_alias_bomb_is_cut_short(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path, errors = _errors(tmp_path, "\n".join(lines) + "\n")
    # a0..a3 expand to about 11 thousand values; the budget runs out inside a4 (10**5 values).
    assert errors[0] == f"{path}:1: a4[7][8][8][8][8]: the document expands to more than 100000 values (aliases?)"


def test_non_utf8_file(tmp_path):
    path, errors = _errors(tmp_path, BASE.encode() + b"# caf\xe9\n")
    assert errors == [f"{path}:18: not UTF-8 text (byte 0xe9 at offset {len(BASE.encode()) + 5})"]


def test_yaml_syntax_error_empty_file_and_wrong_top_level(tmp_path):
    path, errors = _errors(tmp_path, "name: x\n  kind: cpu\n")
    assert errors == [f"{path}:2: YAML syntax error: mapping values are not allowed here"]
    path, errors = _errors(tmp_path, "")
    assert errors == [f"{path}:1: expected a mapping of hardware settings, got an empty file"]
    path, errors = _errors(tmp_path, "- a\n- b\n")
    assert errors == [f"{path}:1: expected a mapping of hardware settings at the top level, got a list"]


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"missing.yaml: cannot read: No such file or directory"):
        load_hardware(tmp_path / "missing.yaml")


def test_all_errors_are_collected_sorted_by_line_and_nothing_is_built(tmp_path):
    text = (BASE.replace("clock: 500 MHz", "clock: fast").replace("  dataflow: os", "  dataflow: diagonal")
            .replace("op: ADD", "op: ADDD"))
    path, errors = _errors(tmp_path, text)
    assert errors == [
        f"{path}:3: clock: expected a frequency like '500 MHz', got 'fast'",
        f"{path}:7: compute.dataflow: expected one of os, ws, is, got 'diagonal'",
        f"{path}:17: claims[1].op: expected a builtin op name like CONV_2D or 'any', got 'ADDD'; did you mean 'ADD'?",
    ]


def test_config_error_is_an_accelsim_error_and_a_value_error(tmp_path):
    (tmp_path / "x.yaml").write_text("name: [")
    with pytest.raises(ConfigError) as info:
        load_hardware(tmp_path / "x.yaml")
    assert isinstance(info.value, AccelsimError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("written, ranges", [
    ("1-3", ((1, 3),)), ("'2-4'", ((2, 4),)), ("2", ((2, 2),)), ("[1, 3]", ((1, 1), (3, 3))),
    ("[1, 2, 3]", ((1, 3),)), ("[3, '5-6', 1]", ((1, 1), (3, 3), (5, 6))), ("any", ((1, MAX_VERSION),)),
    ("all", ((1, MAX_VERSION),)), ("ANY", ((1, MAX_VERSION),)),
])
def test_versions_in_every_accepted_form(tmp_path, written, ranges):
    """'1-3' is a range, a list names exactly those versions, an integer one version, any/all every one."""
    path = tmp_path / "ok.yaml"
    path.write_text(BASE.replace("versions: 1-3", f"versions: {written}"))
    assert load_hardware(path).policy.claims[0].versions == ranges


def test_a_list_of_versions_claims_only_those(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(BASE.replace("versions: 1-3", "versions: [1, 3]"))
    rules = load_hardware(path).policy.claims
    assert check_claim(rules, NodeFacts("CONV_2D", 2, "int8")) == (False, "version 2 not in 1, 3")
    assert check_claim(rules, NodeFacts("CONV_2D", 3, "int8"))[0]
    assert check_claim(rules, NodeFacts("CONV_2D", 4, "int8")) == (False, "version 4 above max 3")


def test_op_and_dtypes_are_matched_case_insensitively(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(BASE.replace("op: CONV_2D", "op: Conv_2d").replace("dtypes: [int8]}", "dtypes: [INT8]}"))
    rule = load_hardware(path).policy.claims[0]
    assert rule.op == "CONV_2D" and rule.dtypes == {"int8"}
    path.write_text(BASE.replace("op: CONV_2D", "op: Mean"))
    assert load_hardware(path).policy.claims[0].op == "MEAN"


def test_op_any_claims_every_op_of_its_dtypes_except_the_listed_ones(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(BASE.replace("  - {op: CONV_2D, versions: 1-3, dtypes: [int8]}",
                                 "  - {op: any, dtypes: [int8], except: [SOFTMAX, Mean]}"))
    rules = load_hardware(path).policy.claims
    assert rules[0].op == "any" and rules[0].excluded == {"SOFTMAX", "MEAN"}
    assert rules[0].versions == ((1, MAX_VERSION),)
    assert check_claim(rules, NodeFacts("TANH", 7, "int8")) == (True, "")
    assert check_claim(rules, NodeFacts("TANH", 1, "float32")) == (False, "dtype float32 not in [int8]")
    assert check_claim(rules, NodeFacts("SOFTMAX", 1, "int8")) == (False, "op SOFTMAX is excluded from op any")
    assert check_claim(rules, NodeFacts("WHILE", 1, "int8")) == (False, "op WHILE not supported")
    assert check_claim(rules, NodeFacts("CUSTOM", 1, "int8", custom_code="Atan")) == (
        False, "op CUSTOM 'Atan' not supported")


def test_claim_rule_refuses_exclusions_on_a_named_op():
    with pytest.raises(ValueError, match="only a rule for op 'any' can exclude ops"):
        ClaimRule("ADD", excluded=frozenset({"SUB"}))



VECTOR = """\
name: dsp
kind: vector
clock: 1 GHz
compute: {lanes: 128, contexts: 4, efficiency: 0.5}
memory: {levels: {dram: {bandwidth: 10 GB/s}}}
link: {bandwidth: 10 GB/s, shared_memory: true}
claims:
  - {op: ADD, versions: 1-2, dtypes: [int8]}
"""

CPU = """\
name: cpu
kind: cpu
clock: 2 GHz
compute:
  simd_bits: 128
  macs_per_cycle: {float32: 8, int8: 32}
memory: {levels: {dram: {bandwidth: 15 GB/s}}}
"""


@pytest.mark.parametrize("base, old, new, expected", [
    (VECTOR, "lanes: 128, ", "", ["4: compute.lanes: required key missing"]),
    (VECTOR, "efficiency: 0.5", "efficiency: 1.5", ["4: compute.efficiency: expected a number in (0, 1] like 0.8, "
                                                    "got 1.5"]),
    (VECTOR, "memory: {levels: {dram: {bandwidth: 10 GB/s}}}", "memory: {weights: link}",
     ["5: memory.levels: required key missing"]),
    (VECTOR, "{dram: {bandwidth: 10 GB/s}}", "{dram: {size: 1 GiB}}",
     ["5: memory.levels.dram.bandwidth: required key missing"]),
    (VECTOR, "shared_memory: true", "shared_memory: maybe", ["6: link.shared_memory: expected true or false, "
                                                             "got 'maybe'"]),
    (CPU, "float32: 8", "flaot32: 8", ["6: compute.macs_per_cycle.flaot32: unknown key; did you mean 'float32'?"]),
    (CPU, "int8: 32", "int8: -32", ["6: compute.macs_per_cycle.int8: expected a number like '0.8', got -32 "
                                    "(must not be negative)"]),
    (CPU, "int8: 32", "int8: 0", ["6: compute.macs_per_cycle.int8: expected a number above 0, got 0"]),
    (CPU, "simd_bits: 128", "simd_bits: 100", ["5: compute.simd_bits: expected a multiple of 8, got 100"]),
])
def test_kind_specific_errors(tmp_path, base, old, new, expected):
    path, errors = _errors(tmp_path, base.replace(old, new))
    assert errors == [f"{path}:{e}" for e in expected]


# -- overrides -------------------------------------------------------------------------------------


def test_overrides_return_a_new_checked_config():
    usb = load_hardware(HW / "edgetpu_usb.yaml")
    swept = apply_overrides(usb, {"link.bandwidth": "1 GB/s", "compute.rows": 32, "claims[0].versions": [1, 2],
                                  "memory.levels.sram.size": "2 MiB", "memory.levels.dram": {"bandwidth": "4 GB/s"},
                                  "memory.activations": "dram"})
    assert swept.hardware.link.bandwidth == 1e9 and swept.hardware.compute.rows == 32
    assert swept.policy.claims[0].versions == ((1, 2),)
    levels = (Level("sram", 64e9, 2 * 1024**2), Level("dram", 4e9))
    assert swept.hardware.memory == Memory(levels, "link", "dram", "sram")
    assert usb.hardware.link.bandwidth == 480e6 and usb.hardware.compute.rows == 16
    assert usb.policy.claims[0].versions == ((1, 3),)
    assert swept != usb and apply_overrides(usb, {}) == usb
    assert apply_overrides(swept, {"compute.rows": 64}).hardware.compute.rows == 64


@pytest.mark.parametrize("overrides, expected", [
    ({"link.bandwidth": "fast"}, ["override link.bandwidth: expected a rate like '320 MB/s', got 'fast'"]),
    ({"link.bandwith": "1 GB/s"}, ["override link.bandwith: unknown key; did you mean 'bandwidth'?"]),
    ({"compute.rows": 0}, ["override compute.rows: expected a whole number >= 1, got 0"]),
    ({"compute..rows": 1}, ["override 'compute..rows': not a key path like 'link.bandwidth' or 'claims[0].versions'"]),
    ({"claims[99].op": "ADD"}, ["override claims[99].op: claims[99] is not an item of a list"]),
    ({"name.first": "x"}, ["override name.first: name is not a mapping"]),
    ({"clock": "1 GHz", "compute.dataflow": "xs", "link.latency": -1},
     ["override compute.dataflow: expected one of os, ws, is, got 'xs'",
      "override link.latency: expected a time like '2 us', got -1 (missing unit)"]),
])
def test_override_errors_name_the_key_path(overrides, expected):
    usb = load_hardware(HW / "edgetpu_usb.yaml")
    with pytest.raises(ConfigError) as info:
        apply_overrides(usb, overrides)
    assert list(info.value.errors) == [f"{usb.source}: {e}" for e in expected]


# -- claims ----------------------------------------------------------------------------------------


def _facts(**kw) -> NodeFacts:
    base = dict(op="CONV_2D", version=3, dtype="int8", input_shapes=((1, 8, 8, 16), (32, 3, 3, 16)),
                output_shapes=((1, 8, 8, 32),), constant_inputs=(False, True), kernel=(3, 3), stride=(1, 1),
                dilation=(1, 1), padding="SAME", activation="RELU", in_channels=16, out_channels=32)
    base.update(kw)
    return NodeFacts(**base)


RULES = (
    ClaimRule("CONV_2D", (1, 3), frozenset({"int8"}), {"max_kernel_size": 5, "max_stride": 2, "max_dilation": 1,
                                                        "max_channels": 1024, "max_rank": 4,
                                                        "allowed_paddings": ["SAME"],
                                                        "allowed_activations": ["NONE", "RELU"],
                                                        "per_channel": False}),
    ClaimRule("SOFTMAX", (1, 2), frozenset({"int8"}), {"max_input_elements": 16000}),
    ClaimRule("ADD", (2, 2), frozenset({"int8"})),
    ClaimRule("ADD", (1, 3), frozenset({"uint8"})),
)


@pytest.mark.parametrize("facts, reason", [
    (_facts(), ""),
    (_facts(op="MEAN"), "op MEAN not supported"),
    (_facts(op="CUSTOM", custom_code="Atan"), "op CUSTOM 'Atan' not supported"),
    (_facts(version=4), "version 4 above max 3"),
    (_facts(dtype="float32"), "dtype float32 not in [int8]"),
    (_facts(kernel=(7, 7)), "kernel 7x7 above max 5"),
    (_facts(stride=(3, 3)), "stride 3 above max 2"),
    (_facts(stride=(3, 1)), "stride 3x1 above max 2"),
    (_facts(dilation=(2, 2)), "dilation 2 above max 1"),
    (_facts(in_channels=2048), "input channels 2048 above max 1024"),
    (_facts(out_channels=4096), "output channels 4096 above max 1024"),
    (_facts(output_shapes=((1, 1, 8, 8, 32),)), "rank 5 above max 4"),
    (_facts(padding="VALID"), "padding VALID not in [SAME]"),
    (_facts(activation="RELU6"), "activation RELU6 not in [NONE, RELU]"),
    (_facts(per_channel=True), "per-channel quantization not supported"),
    (_facts(op="SOFTMAX", version=2, input_shapes=((1, 20000),), constant_inputs=(False,)),
     "input elements 20000 above max 16000"),
    (_facts(op="SOFTMAX", version=2, input_shapes=((1, 1000),), constant_inputs=(False,)), ""),
    (_facts(op="ADD", version=1), "version 1 below min 2; dtype int8 not in [uint8]"),
    (_facts(op="ADD", version=3, dtype="uint8"), ""),
])
def test_check_claim_gives_precise_reasons(facts, reason):
    assert check_claim(RULES, facts) == (reason == "", reason)


def test_claim_rule_validates_itself():
    with pytest.raises(ValueError, match="unknown constraint 'max_kernel'"):
        ClaimRule("CONV_2D", constraints={"max_kernel": 3})
    with pytest.raises(ValueError, match="version range 3-1"):
        ClaimRule("CONV_2D", (3, 1))
    with pytest.raises(ValueError, match="allowed_paddings takes names"):
        ClaimRule("CONV_2D", constraints={"allowed_paddings": ["FULL"]})
    assert hash(ClaimRule("ADD", (1, 2), frozenset({"INT8"}))) == hash(ClaimRule("ADD", (1, 2), frozenset({"int8"})))


def test_facts_from_real_nodes_and_the_shipped_specs_claims():
    it = Interpreter(model_path=str(MODELS / "mobilenet_v2_035_96_int8.tflite"))
    sg = it.primary
    first = facts_from_node(sg.nodes[0], sg.tensors)
    assert (first.op, first.version, first.dtype) == ("CONV_2D", 3, "int8")
    assert (first.kernel, first.stride, first.dilation) == ((3, 3), (2, 2), (1, 1))
    assert (first.padding, first.activation, first.in_channels, first.out_channels) == ("SAME", "RELU6", 3, 16)
    assert first.per_channel and first.rank == 4 and first.input_elements == 96 * 96 * 3
    softmax = facts_from_node(sg.nodes[-1], sg.tensors)
    assert softmax.op == "SOFTMAX" and softmax.kernel is None and softmax.padding is None
    for name in ("edgetpu_usb", "hexagon_dsp"):
        policy = accelerator_policy(load_hardware(HW / f"{name}.yaml"))
        assert [policy.check(facts_from_node(n, sg.tensors)) for n in sg.nodes] == [(True, "")] * len(sg.nodes)


def test_shipped_specs_on_a_dilated_model_refuse_with_reasons():
    it = Interpreter(model_path=str(MODELS / "dilated_cnn_int8.tflite"))
    sg = it.primary
    facts = [facts_from_node(n, sg.tensors) for n in sg.nodes]
    tpu = accelerator_policy(load_hardware(HW / "edgetpu_usb.yaml"))
    dsp = accelerator_policy(load_hardware(HW / "hexagon_dsp.yaml"))
    refused_tpu = {f.op + str(f.dilation): tpu.check(f)[1] for f in facts if not tpu.check(f)[0]}
    refused_dsp = {f.op + str(f.dilation): dsp.check(f)[1] for f in facts if not dsp.check(f)[0]}
    assert refused_tpu == {
        "QUANTIZENone": "dtype float32 not in [int8]",
        "DEPTHWISE_CONV_2D(2, 2)": "dilation 2 above max 1",
        "DEQUANTIZENone": "op DEQUANTIZE not supported",
    }
    assert refused_dsp == {
        "QUANTIZENone": "dtype float32 not in [int8, uint8]",
        "CONV_2D(2, 2)": "dilation 2 above max 1",
        "DEQUANTIZENone": "op DEQUANTIZE not supported",
    }


def test_facts_read_the_data_input_not_leading_constants():
    def tensor(shape, type="INT8", constant=False, quantization=None):
        return SimpleNamespace(shape=shape, type=type, is_constant=constant, quantization=quantization)

    per_channel = Quantization(scales=(0.1,) * 8, zero_points=(0,) * 8)
    tensors = [tensor((4,), "INT32", True), tensor((8, 3, 3, 16), constant=True, quantization=per_channel),
               tensor((1, 5, 5, 16)), tensor((1, 10, 10, 8))]
    operator = make_operator("TRANSPOSE_CONV", [0, 1, 2], [3], version=2, stride_h=2, stride_w=2, padding=1)
    node = SimpleNamespace(operator=operator, options=operator.options, inputs=operator.inputs,
                           outputs=operator.outputs)
    facts = facts_from_node(node, tensors)
    assert (facts.dtype, facts.kernel, facts.stride, facts.padding) == ("int8", (3, 3), (2, 2), "VALID")
    assert (facts.in_channels, facts.out_channels, facts.per_channel, facts.rank) == (16, 8, True, 4)
    assert facts.input_elements == 5 * 5 * 16 and facts.activation == "NONE"


def test_unit_case_and_unitless_zero_in_a_file(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(BASE.replace("clock: 500 MHz", "clock: 500 mhz").replace("size: 1 MiB", "size: 0")
                    .replace("bandwidth: 320 MB/s", "bandwidth: 1 gb/s"))
    config = load_hardware(path)
    hw = config.hardware
    assert (hw.clock, hw.memory.levels[0].size, hw.link.bandwidth) == (500e6, 0, 1e9)


def test_calibration_is_one_of_two_statements(tmp_path):
    """`calibration:` says what the numbers were checked against, or why not; absent, the config is not calibrated."""
    text = (HW / "host_cpu.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "host.yaml"
    bad.write_text(re.sub(r"^calibration: .*$", "calibration: roughly right", text, flags=re.M), encoding="utf-8")
    line = next(i for i, x in enumerate(bad.read_text().splitlines(), 1) if x.startswith("calibration"))
    with pytest.raises(ConfigError, match=rf"host.yaml:{line}: calibration: expected 'calibrated against <what>' "
                                          r"or 'not calibrated: <why>', got 'roughly right'"):
        load_hardware(bad)
    bare = tmp_path / "bare.yaml"
    bare.write_text(re.sub(r"^calibration: .*\n", "", text, flags=re.M), encoding="utf-8")
    assert load_hardware(bare).hardware.calibration.startswith("not calibrated: ")
    for path in sorted(HW.glob("*.yaml")):  # every shipped config says it
        assert re.search(r"^calibration: ", path.read_text(encoding="utf-8"), re.M), path.name
