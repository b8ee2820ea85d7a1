"""Cost of a node on a mobile GPU driven by TFLite's GPU delegate, and the delegate's claim rules.

A node takes, on top of the partition's submit/sync (`link.call_overhead`, once per delegate
invocation) and the layout conversion of its boundary tensors (see below):

- kernel_cycles of dispatch (one shader program launch), unless it is fused;
- the longer of compute and memory:
  - compute: its ops / (macs_per_cycle[precision] * efficiency). The precision is float16 when
    the config's numerics run in half precision (`numerics.mode: float16`, the delegate's
    `precision_loss_allowed`/`TFLITE_GPU_INFERENCE_PRIORITY_MIN_LATENCY` default), else float32
    (`Hardware.numerics_precision`, which the loader copies from the numerics);
  - memory: the config's levels (`accelsim.hardware.memory`); a GPU shares the phone's DRAM.
- Fusion: the delegate links a "linkable" (elementwise or activation) op into the kernel that
  produces its first input when that input has no other consumer
  (tensorflow/lite/delegates/gpu/common/gpu_model.cc: LinkNodes, MergeElementwiseNodes), so it
  launches no kernel of its own and that input never goes through memory. The cost model sees a
  device's nodes in model order, without tensor ids: a fusable op (`FUSABLE`) directly after
  another of the device's nodes is fused when its first input has that node's output size; it
  pays its ALU work and the bytes of its other inputs only.
- Layout: the delegate keeps tensors in its own layout (PHWC4: channels in slices of 4), so each
  tensor entering or leaving a partition is converted by a copy kernel, even though CPU and GPU
  share memory. The config's `link` is that conversion: `bandwidth` its rate, `latency` its
  launch, `shared_memory: false` so that every boundary tensor pays it.

`RULES` holds what the delegate accepts per op, each with the rule it follows; `check_claims` refuses
a config whose claims go beyond them (an op it has no parser for, versions above its maximum, a
dtype other than float, more runtime inputs, other fused activations, rank above 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.delegates.spec import DelegationPolicy
from accelsim.hardware import energy, memory
from accelsim.hardware.memory import Traffic
from accelsim.hardware.roofline import levels_of, timed
from accelsim.hardware.types import Cost, Hardware, Kind, spec
from accelsim.runtime.work import NodeWork


@dataclass(frozen=True)
class GpuCompute:
    """The `compute:` block of a `kind: gpu` config."""

    macs_per_cycle: tuple[tuple[str, float], ...] = spec(
        "dtype_rates", "ALU multiply-adds per cycle of the whole GPU by precision (float16, float32)")
    efficiency: float = spec("fraction", "fraction of peak reached", default=1.0)
    kernel_cycles: int = spec("count", "cycles of dispatch per kernel launched (fused ops launch none)",
                              default=0, minimum=0, example=10000)


# Ops the delegate links into the kernel that produces their input (see the module docstring).
FUSABLE = frozenset({"ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "RELU", "RELU6", "RELU_N1_TO_1",
                     "LEAKY_RELU", "PRELU", "LOGISTIC", "TANH", "HARD_SWISH", "ABS", "NEG", "EXP", "LOG",
                     "SQRT", "RSQRT", "SQUARE", "SQUARED_DIFFERENCE", "POW", "SIN", "COS", "ELU", "GELU"})


def precision(hw: Hardware) -> str:
    """'float16' when the config computes in half precision, else 'float32'."""
    return hw.numerics_precision


def alu_rate(hw: Hardware) -> float:
    """Multiply-adds per cycle at the config's precision; float16 unlisted runs at twice float32 (`check`
    requires float32), the rate of the Adreno and Mali ALUs that pack two halves in a 32-bit lane."""
    rates = dict(hw.compute.macs_per_cycle)
    return rates.get(precision(hw)) or rates["float32"] * 2


def fused_flags(works: Sequence[NodeWork]) -> list[bool]:
    """Whether each node (model order) is fused into the node before it (see the module docstring)."""
    flags = [False] * len(works)
    for i in range(1, len(works)):
        w, before = works[i], works[i - 1]
        flags[i] = (w.op in FUSABLE and w.kind != "control" and before.kind != "control"
                    and before.output_bytes > 0 and w.reads[:1] == (before.output_bytes,))
    return flags


def costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """Costs of the GPU's nodes in model order: dispatch plus the roofline of ALUs and memory; fused ops less."""
    levels = levels_of(hw)
    placed = memory.traffic(works, hw.memory, hw.error)
    watts = energy.static_power(hw)
    rate = alu_rate(hw) * hw.compute.efficiency
    out = []
    for w, t, fused in zip(works, placed, fused_flags(works)):
        compute = math.ceil(w.total_ops / rate)
        if fused:
            # its input comes in registers from the kernel it joins, whose output write it takes over
            keep = max(0, w.input_bytes - w.reads[0]) / max(1, w.bytes_moved)
            t = Traffic(tuple((name, round(nbytes * keep)) for name, nbytes in t.level_bytes), t.streamed)
        out.append(timed(w, compute, hw, t, levels, watts, 0 if fused else hw.compute.kernel_cycles))
    return out


def peak_macs_per_cycle(work: NodeWork, hw: Hardware) -> float:
    """The ALU multiply-adds per cycle at the config's precision."""
    return alu_rate(hw)


def notes(hw: Hardware) -> list[str]:
    """A precision without its own rate says which rate it gets."""
    rates = dict(hw.compute.macs_per_cycle)
    wanted = precision(hw)
    if wanted in rates:
        return []
    return [f"compute.macs_per_cycle has no {wanted}: it runs at {alu_rate(hw):g} multiply-adds per cycle"]


# ---------------------------------------------------------------------------------------------
# The delegate's claim rules.

@dataclass(frozen=True)
class Rule:
    """What the GPU delegate accepts for one op.

    Args:
        max_version: the highest op version its parser takes (None: its parser checks none).
        runtime_inputs: the most non-constant inputs it takes (None: any number).
        activation: the op has a fused activation the delegate checks (IsActivationSupported).
        source: the rule, as `file: function` in tensorflow/lite.
    """

    max_version: int | None
    runtime_inputs: int | None
    activation: bool
    source: str


_MB = "delegates/gpu/common/model_builder.cc"
_GC = "tools/versioning/gpu_compatibility.cc"
# Float tensors only: model_builder.cc IsAllAllowedTensors (float32 or float16 unless quantized ops are enabled).
DTYPES = frozenset({"float32", "float16"})
# gpu_compatibility.cc IsActivationSupported: NONE, RELU, RELU_N1_TO_1, RELU6, TANH (and SIGMOID); SIGN_BIT refused.
ACTIVATIONS = frozenset({"NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH"})
# The delegate's tensors are BHWC (model_builder.cc SetAllDimensions<BHWC>: "Dimensions are not BHWC").
MAX_RANK = 4


def _rule(max_version: int | None, runtime_inputs: int | None, activation: bool, parser: str, check: str) -> Rule:
    return Rule(max_version, runtime_inputs, activation, f"{_MB} {parser}::IsSupported; {_GC} {check}")


_ONE_ARG = ("LOGISTIC", "TANH", "ABS", "NEG", "EXP", "LOG", "SQRT", "RSQRT", "SQUARE", "SIN", "COS", "ELU", "GELU")
_TWO_ARG = ("SUB", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "POW")

RULES: dict[str, Rule] = {
    "CONV_2D": _rule(6, 2, True, "Conv2DOperationParser", "CheckConvoultionInputOutput, IsActivationSupported"),
    "DEPTHWISE_CONV_2D": _rule(6, 2, True, "DepthwiseConvolutionOperationParser",
                               "CheckDepthwiseConvGpuDelegateCompatibility"),
    "FULLY_CONNECTED": _rule(9, 2, True, "FullyConnectedOperationParser",
                             "kTfLiteBuiltinFullyConnected: 'doesn't support more than 2 runtime inputs'"),
    "TRANSPOSE_CONV": _rule(3, 2, False, "TransposeConvOperationParser", "kTfLiteBuiltinTransposeConv: "
                            "CheckConvoultionInputOutput (version 4 adds a fused activation the parser lacks)"),
    "AVERAGE_POOL_2D": _rule(2, 1, True, "Pooling2DOperationParser", "CheckPooling2DGpuDelegateCompatibility"),
    "MAX_POOL_2D": _rule(2, 1, True, "Pooling2DOperationParser", "CheckPooling2DGpuDelegateCompatibility"),
    "CONCATENATION": _rule(2, None, True, "ConcatenationOperationParser", "kTfLiteBuiltinConcatenation"),
    "ADD": _rule(2, 2, True, "ElementwiseOperationParser", "kTfLiteBuiltinAdd: 'ADD requires two input tensors'"),
    "MUL": _rule(3, 2, True, "ElementwiseOperationParser (MUL: 3)",
                 "kTfLiteBuiltinMul: 'MUL requires two input tensors', IsActivationSupported"),
    **{op: _rule(2, 2, op in ("SUB", "DIV"), "ElementwiseOperationParser",
                 "two-argument elementwise: 'Op can only handle 1 or 2 operand(s)'") for op in _TWO_ARG},
    **{op: _rule(2, 1, False, "ElementwiseOperationParser", "one-argument elementwise: 1 runtime input, 0 const")
       for op in _ONE_ARG},
    "RELU": _rule(2, 1, False, "ReLUOperationParser", "kTfLiteBuiltinRelu"),
    "RELU6": _rule(2, 1, False, "ReLUOperationParser", "kTfLiteBuiltinRelu6"),
    "LEAKY_RELU": _rule(2, 1, False, "ReLUOperationParser", "kTfLiteBuiltinLeakyRelu"),
    "PRELU": _rule(1, 1, False, "PReLUOperationParser", "kTfLiteBuiltinPrelu"),
    "HARD_SWISH": _rule(None, 1, False, "HardSwishOperationParser", "kTfLiteBuiltinHardSwish: 1 runtime input"),
    "MEAN": _rule(None, 1, False, "MeanOperationParser", "kTfLiteBuiltinMean: 1 runtime, 1 const int32 axes"),
    "PAD": _rule(2, 1, False, "PadOperationParser", "kTfLiteBuiltinPad: 1 runtime input, 4x2 or 3x2 paddings"),
    "MIRROR_PAD": _rule(2, 1, False, "PadOperationParser", "kTfLiteBuiltinMirrorPad: reflect only"),
    "RESHAPE": _rule(1, 1, False, "ReshapeOperationParser", "kTfLiteBuiltinReshape: 1 runtime input"),
    "RESIZE_BILINEAR": _rule(3, 1, False, "Resize2DOperationParser", "kTfLiteBuiltinResizeBilinear"),
    "RESIZE_NEAREST_NEIGHBOR": _rule(3, 1, False, "Resize2DOperationParser", "kTfLiteBuiltinResizeNearestNeighbor"),
    "SOFTMAX": _rule(2, 1, False, "SoftmaxOperationParser", "kTfLiteBuiltinSoftmax: beta == 1"),
    "SPACE_TO_DEPTH": _rule(2, 1, False, "SpaceToDepthOperationParser", "kTfLiteBuiltinSpaceToDepth"),
    "DEPTH_TO_SPACE": _rule(None, 1, False, "DepthToSpaceOperationParser", "kTfLiteBuiltinDepthToSpace"),
    "SLICE": _rule(2, 1, False, "SliceOperationParser", "kTfLiteBuiltinSlice: 3 or 4 dimensions"),
    "STRIDED_SLICE": _rule(2, 1, False, "StridedSliceOperationParser", "kTfLiteBuiltinStridedSlice: no masks"),
}


def _claim_problems(index: int, claim) -> list[tuple[tuple, str]]:
    """How one claim goes beyond the delegate's rule for its op (key path, what)."""
    at = ("claims", index)
    rule = RULES.get(claim.op)
    if rule is None:
        return [((*at, "op"), f"the TFLite GPU delegate has no parser for {claim.op} ({_MB} NewOperationParser); "
                              f"ops it takes: {', '.join(sorted(RULES))}")]
    problems = []
    top = claim.versions[-1][1]
    if rule.max_version is not None and top > rule.max_version:
        problems.append(((*at, "versions"), f"{claim.op} version {top} is above the GPU delegate's maximum "
                                            f"{rule.max_version} ({rule.source})"))
    if not claim.dtypes or not claim.dtypes <= DTYPES:
        given = ", ".join(sorted(claim.dtypes)) or "any dtype"
        problems.append(((*at, "dtypes"), f"the GPU delegate takes float tensors only ({_MB} IsAllAllowedTensors): "
                                          f"list dtypes from [float16, float32], got {given}"))
    limits = claim.constraints
    if limits.get("max_rank", MAX_RANK + 1) > MAX_RANK:
        problems.append(((*at, "constraints", "max_rank"), f"the GPU delegate's tensors are BHWC: set "
                                                           f"max_rank: {MAX_RANK} or less ({_MB} SetAllDimensions)"))
    most = rule.runtime_inputs
    if most is not None and limits.get("max_runtime_inputs", most + 1) > most:
        problems.append(((*at, "constraints", "max_runtime_inputs"),
                         f"{claim.op} takes at most {rule.runtime_inputs} runtime input(s) on the GPU delegate "
                         f"({rule.source}): set max_runtime_inputs: {rule.runtime_inputs} or less"))
    if rule.activation and not limits.get("allowed_activations", frozenset({"SIGN_BIT"})) <= ACTIVATIONS:
        problems.append(((*at, "constraints", "allowed_activations"),
                         f"the GPU delegate fuses only {', '.join(sorted(ACTIVATIONS))} into {claim.op} "
                         f"({_GC} IsActivationSupported): list allowed_activations from those"))
    return problems


def check(hw: Hardware) -> list[tuple[tuple, str]]:
    """A compute.macs_per_cycle without float32."""
    if "float32" not in dict(hw.compute.macs_per_cycle):
        return [(("compute", "macs_per_cycle"), "needs a float32 rate (the delegate's full precision)")]
    return []


def check_claims(policy: DelegationPolicy) -> list[tuple[tuple, str]]:
    """Claims beyond the delegate's rules (`RULES`)."""
    return [p for i, claim in enumerate(policy.claims) for p in _claim_problems(i, claim)]


KIND = Kind("gpu", "accelerator", "mobile GPU behind TFLite's GPU delegate: kernel dispatch, fused elementwise ops, "
            "fp16/fp32 ALUs against shared DRAM, layout conversion at partition boundaries", GpuCompute,
            costs=costs, macs_per_cycle="compute.macs_per_cycle at the numerics' precision (float16 when "
                                        "numerics.mode is float16, else float32), times efficiency",
            notes=notes, peak_macs_per_cycle=peak_macs_per_cycle, check=check, check_policy=check_claims)
