"""TFLite's NNAPI delegate (`StatefulNnApiDelegate`): which nodes it delegates, to which NNAPI drivers, and why not.

`nnapi_decision` follows `StatefulNnApiDelegate::DoPrepare` (LiteRT `tflite/delegates/nnapi/nnapi_delegate.cc`
6825-7094; rules as data in `accelsim.delegates.nnapi_rules`, line numbers there and below are that file's):

1. the device gate (6845-6879): with `disallow_nnapi_cpu` (default true) or an `accelerator_name`, the target
   devices are the named driver (an unknown name is an error: `GetDeviceHandle` 556-589) or every driver but
   nnapi-reference (732-752); no target left: nothing delegated ("Only nnapi-reference is available",
   6858-6862). The target feature level is the runtime's, lowered to the targets' highest (650-686);
2. `Validate` on every node (6912-6937) at that level: op, version, input types, per-op checks;
3. the per-device check (`GetNodesSupportedByAccelerator` 6701-6750, only when devices are targeted): a node
   stays only if every NNAPI operation it lowers to is supported by the targets (4838-4850);
4. fp16 weights (constant float16 DEQUANTIZE, 6893-6911): whole model or nothing once the device check drops a
   node ("Only allow full model delegation for fp16 model.", 7035-7062);
5. `LimitDelegatedPartitions` (6752-6791): with more partitions than `max_number_delegated_partitions`
   (default 3; <= 0 no limit) only that many, with the most nodes, are kept.

The NNAPI runtime then runs each delegated node on a driver that supports it (ModelBuilder's
findBestDeviceForEachOperation): `NodeVerdict.drivers` lists them; which one is fastest is the simulation's
question (`accelsim.simulation.nnapi`). Nothing here knows YAML or hardware.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.delegates.nnapi_rules import (
    EXECUTION_PREFERENCES,
    FEATURE_LEVELS,
    FL6,
    HARD_SWISH_PRE30,
    I8,
    I32,
    LEVEL_NAMES,
    LOWERINGS,
    OPTION_DEFAULTS,
    PACK_PRE_FL6,
    Q8,
    REFERENCE_DEVICE,
    RULES,
    U8,
)
from accelsim.delegates.partition import NodeSubset, Selection, describe_plan, partition_graph
from accelsim.delegates.spec import ANY_OP, ClaimRule, DelegationPolicy, NodeFacts, Numerics, facts_from_node
from accelsim.runtime.work import option

# What refused a node (whatif and the report group by these).
FEATURE_LEVEL, VERSION, TYPE, CHECK, UNSUPPORTED = "feature level", "version", "type", "op rule", "op not supported"
DRIVER, FP16, PARTITION_LIMIT, NO_TARGET = "driver support", "fp16 weights", "partition limit", "no target device"
RULE_KINDS = (FEATURE_LEVEL, VERSION, TYPE, CHECK, UNSUPPORTED, DRIVER, FP16, PARTITION_LIMIT, NO_TARGET)


def feature_level(value) -> int:
    """A feature level from an API level (27-31), FL name ('FL6') or its number (1000006); ValueError otherwise."""
    if isinstance(value, str) and value.upper() in FEATURE_LEVELS:
        return FEATURE_LEVELS[value.upper()]
    if isinstance(value, int) and not isinstance(value, bool) and value in LEVEL_NAMES:
        return value
    choices = ", ".join(f"{k} ({v})" for k, v in FEATURE_LEVELS.items())
    raise ValueError(f"unknown NNAPI feature level {value!r}; valid: {choices}")


def level_name(level: int) -> str:
    name = LEVEL_NAMES.get(level, str(level))
    return f"{name} (API {level})" if level < 1000 else name


@dataclass(frozen=True)
class NnapiOptions:
    """StatefulNnApiDelegate::Options that change what is delegated or how it runs (defaults: nnapi_rules)."""

    accelerator_name: str | None = OPTION_DEFAULTS["accelerator_name"]
    execution_preference: str = OPTION_DEFAULTS["execution_preference"]
    disallow_nnapi_cpu: bool = OPTION_DEFAULTS["disallow_nnapi_cpu"]
    max_number_delegated_partitions: int = OPTION_DEFAULTS["max_number_delegated_partitions"]
    allow_fp16: bool = OPTION_DEFAULTS["allow_fp16"]
    use_burst_computation: bool = OPTION_DEFAULTS["use_burst_computation"]

    def __post_init__(self):
        if self.execution_preference not in EXECUTION_PREFERENCES:
            raise ValueError(f"execution_preference must be one of {list(EXECUTION_PREFERENCES)}, "
                             f"got {self.execution_preference!r}")
        if isinstance(self.max_number_delegated_partitions, bool) or \
                not isinstance(self.max_number_delegated_partitions, int):
            raise ValueError("max_number_delegated_partitions must be a whole number (<= 0: no limit), "
                             f"got {self.max_number_delegated_partitions!r}")


@dataclass(frozen=True)
class NnapiDriver:
    """One NNAPI device (an `IDevice` of the vendor's HAL): its name, feature level and the NNAPI ops it supports.

    `supports` maps an NNAPI operation name to the input types the driver takes for it (empty: any). The
    reference CPU device is named `nnapi_rules.REFERENCE_DEVICE` and supports everything.
    """

    name: str
    level: int
    supports: Mapping[str, frozenset[str]] = field(default_factory=dict, hash=False)

    def __post_init__(self):
        feature_level(self.level)
        object.__setattr__(self, "supports", MappingProxyType({k: frozenset(v) for k, v in self.supports.items()}))

    @property
    def is_reference(self) -> bool:
        return self.name == REFERENCE_DEVICE

    def runs(self, nn_op: str, dtype: str | None) -> bool:
        if self.is_reference:
            return True
        if nn_op not in self.supports:
            return False
        types = self.supports[nn_op]
        return not types or dtype in types


@dataclass(frozen=True)
class NnapiSpec:
    """A device's NNAPI: the Android API level (the runtime's feature level), its drivers, the delegate's options."""

    android_api: int
    drivers: tuple[NnapiDriver, ...]
    options: NnapiOptions = NnapiOptions()

    def __post_init__(self):
        feature_level(self.android_api)
        if not self.drivers:
            raise ValueError(f"an NNAPI system needs at least one driver (e.g. qti-dsp, qti-gpu, or "
                             f"{REFERENCE_DEVICE!r} for the CPU reference); got none")
        names = [d.name for d in self.drivers]
        if len(set(names)) != len(names):
            raise ValueError(f"NNAPI driver names must be unique, got {names}")
        name = self.options.accelerator_name
        if name is not None and name not in names:
            # GetDeviceHandle: "Could not find the specified NNAPI accelerator: %s. Must be one of: {%s}." (583-587)
            raise ValueError(f"Could not find the specified NNAPI accelerator: {name}. Must be one of: "
                             f"{{{', '.join(names)}}} (DoPrepare fails: nothing is delegated)")

    def targets(self) -> tuple[NnapiDriver, ...] | None:
        """GetTargetDevices (706-755): the named driver, or all but the reference; None: no target list."""
        name = self.options.accelerator_name
        if name is not None:
            return tuple(d for d in self.drivers if d.name == name)
        if self.options.disallow_nnapi_cpu and self.android_api >= 29:
            return tuple(d for d in self.drivers if not d.is_reference)
        return None

    def accelerator_specified(self) -> bool:
        """ShouldUseTargetDevices(exclude_nnapi_reference=true) (690-705, used at 6889-6891)."""
        name = self.options.accelerator_name
        return (self.options.disallow_nnapi_cpu and self.android_api >= 29) or (
            name is not None and name != REFERENCE_DEVICE)

    def target_level(self) -> int:
        """GetTargetFeatureLevel (650-686): the runtime's level, lowered to the targets' highest."""
        targets = self.targets()
        if not targets:
            return self.android_api
        return min(self.android_api, max(d.level for d in targets))


@dataclass(frozen=True)
class Failure:
    """One rule a node broke: its kind (RULE_KINDS), the words, and the source line range."""

    kind: str
    text: str
    lines: tuple[int, int] = (0, 0)

    def __str__(self) -> str:
        where = f" (nnapi_delegate.cc {self.lines[0]}-{self.lines[1]})" if self.lines[0] else ""
        return f"NNAPI {self.kind}: {self.text}{where}"


@dataclass(frozen=True)
class NodeVerdict:
    """Whether NNAPI delegates a node, what it broke if not, and the target drivers that can run it."""

    delegated: bool
    failures: tuple[Failure, ...] = ()
    drivers: tuple[str, ...] = ()
    nn_ops: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        return "; ".join(str(f) for f in self.failures)


@dataclass(frozen=True)
class NnapiDecision:
    """What DoPrepare decided for one subgraph."""

    level: int
    targets: tuple[str, ...]
    verdicts: Mapping[int, NodeVerdict]
    partitions: tuple[NodeSubset, ...]
    dropped: tuple[tuple[NodeSubset, str], ...]
    note: str = ""

    @property
    def delegated(self) -> tuple[int, ...]:
        return tuple(ni for p in self.partitions for ni in p.nodes)


def _dtype(tensor) -> str | None:
    return tensor.type.lower() if tensor is not None else None


def _is_fp16_const_dequantize(node, tensors) -> bool:
    """IsDequantizeConstFloat16 (434-440): DEQUANTIZE of a constant float16 tensor."""
    if node.operator is None or node.operator.op != "DEQUANTIZE" or not node.inputs or node.inputs[0] < 0:
        return False
    t = tensors[node.inputs[0]]
    return t.is_constant and t.type == "FLOAT16"


def _hybrid(facts: NodeFacts) -> bool:
    """IsHybridOperator (386-432) for CONV_2D / FULLY_CONNECTED: float input, quantized weights."""
    return (facts.op in ("CONV_2D", "FULLY_CONNECTED") and len(facts.input_dtypes) > 1
            and facts.input_dtypes[0] == "float32" and facts.input_dtypes[1] in Q8)


def _scales(tensor) -> int:
    q = tensor.quantization if tensor is not None else None
    return len(q.scales) if q is not None else 0


def _restricted_scales(inp, filt, out) -> bool:
    """input_scale * filter_scale < output_scale (ExpectIsRestrictedScalesCompliant, cc 2220-2234)."""
    scale = [t.quantization.scales[0] if t is not None and t.quantization is not None and t.quantization.scales
             else 0.0 for t in (inp, filt, out)]
    return scale[0] * scale[1] < scale[2]


def _checks(name: str, facts: NodeFacts, node, tensors, level: int, specified: bool) -> str | None:
    """Why the node breaks the named check of its Validate case (None: it holds)."""
    ins = [tensors[i] if i >= 0 else None for i in node.inputs]
    ranks = [len(s) for s in facts.input_shapes if s is not None]
    if name == "ranks_le_4" and any(r > 4 for r in ranks[:2]):
        return f"input rank {max(ranks[:2])} above 4"
    if name == "rank_le_4" and ranks and ranks[0] > 4:
        return f"input rank {ranks[0]} above 4"
    if name == "input_rank_4" and ranks and ranks[0] != 4:
        return f"input rank {ranks[0]} is not 4"
    if name == "int32_no_activation" and facts.input_dtypes[:1] == (I32,) and facts.activation not in (None, "NONE"):
        return f"int32 with fused activation {facts.activation} (NONE required)"
    if name == "no_activation" and facts.activation not in (None, "NONE"):
        return f"fused activation {facts.activation} (NONE required)"
    if name == "pre29_no_activation" and level < 29 and facts.activation not in (None, "NONE"):
        return f"fused activation {facts.activation} before API 29"
    if name == "mul_v3_if_accelerator" and facts.version == 3 and not specified:
        return "version 3 only with an accelerator specified"
    if name == "pre29_per_tensor" and level < 29 and len(ins) > 1 and _scales(ins[1]) > 1:
        return "Per-channel quantized convolution not supported before NNAPI 1.2 (API 29)"
    if name == "pre29_restricted_scales" and level < 29 and facts.input_dtypes[:1] == (U8,) and len(ins) > 1 \
            and node.outputs and not _restricted_scales(ins[0], ins[1], tensors[node.outputs[0]]):
        return "uint8 before API 29 needs input_scale * filter_scale < output_scale (ExpectIsRestrictedScalesCompliant)"
    if name == "pre29_not_grouped" and level < 29 and len(ins) > 1 and ins[0] is not None and ins[1] is not None \
            and ins[0].shape[-1] != ins[1].shape[-1]:
        return "Grouped convolution not supported before NNAPI 1.2"
    if name == "keep_num_dims_needs_30" and level < 30 and option(node.options, "keep_num_dims", False):
        return "keep_num_dims needs API 30"
    if name == "pre29_not_hybrid" and level < 29 and _hybrid(facts):
        return "hybrid (float input, quantized weights) before API 29"
    if name == "bias_present" and len(node.inputs) < 3:
        return "no bias input"
    if name == "dilation_needs_29" and level < 29 and facts.dilation not in (None, (1, 1)):
        return "dilation before API 29"
    if name == "pre29_no_dilation" and level < 29 and facts.dilation not in (None, (1, 1)):
        return "dilation before API 29"
    if name == "output_not_int16" and node.outputs and _dtype(tensors[node.outputs[0]]) == "int16":
        return "int16 output"
    if name == "quant_pool_area_256" and not specified and facts.dtype in Q8 and facts.kernel is not None \
            and facts.kernel[0] * facts.kernel[1] > 256:
        return f"quantized pool window {facts.kernel[0]}x{facts.kernel[1]} above 256 elements"
    if name == "pre29_rank_2_or_4" and level < 29 and ranks and ranks[0] not in (2, 4):
        return f"rank {ranks[0]} (2 or 4 before API 29)"
    if name in ("shape_constant",) and len(ins) > 1 and ins[1] is not None and not ins[1].is_constant:
        return "shape input not constant"
    if name == "perm_constant" and len(ins) > 1 and ins[1] is not None and not ins[1].is_constant:
        return "permutation not constant"
    if name == "filter_constant" and len(ins) > 1 and not all(t is not None and t.is_constant for t in ins[:2]):
        return "output shape or filter not constant"
    if name == "pre30_quantize_output_uint8" and level < 30 and node.outputs \
            and _dtype(tensors[node.outputs[0]]) != U8:
        return f"output {_dtype(tensors[node.outputs[0]])} (uint8 before API 30)"
    if name == "same_input_types" and len(set(facts.input_dtypes[:2])) > 1:
        return f"input types differ ({', '.join(str(d) for d in facts.input_dtypes[:2])})"
    if name == "batch_matmul_no_broadcast":
        a, b = facts.input_shapes[:2]
        if a is None or b is None or not 2 <= len(a) <= 4 or len(a) != len(b) or a[:-2] != b[:-2]:
            return "needs 2 <= rank <= 4 and the same batch dimensions (no broadcasting)"
    return None


def validate(facts: NodeFacts, node, tensors, level: int, specified: bool) -> tuple[Failure, ...]:
    """NNAPIDelegateKernel::Validate (2358-3656): every check the node breaks at target level `level`."""
    rule = RULES.get(facts.op)
    if rule is None:
        return (Failure(UNSUPPORTED, f"{facts.op} is not mapped to NNAPI", (3650, 3653)),)
    out = []
    if level < rule.min_level:
        out.append(Failure(FEATURE_LEVEL, f"{facts.op} needs {level_name(rule.min_level)}, target is "
                                          f"{level_name(level)}", rule.lines))
    limit = rule.max_version
    if facts.op == "MUL" and specified:
        limit = 3  # cc 2434-2458
    if limit is not None and facts.version > limit:
        out.append(Failure(VERSION, f"{facts.op} version {facts.version} above {limit}", rule.lines))
    if level >= rule.min_level:
        types = rule.accepted_types(level)
        index = 1 if facts.op == "SPLIT" else 0
        dtype = facts.input_dtypes[index] if len(facts.input_dtypes) > index else None
        if types is not None and dtype not in types:
            out.append(Failure(TYPE, f"{facts.op} input {dtype} not in [{', '.join(types)}] at {level_name(level)}",
                               rule.lines))
    for name in rule.checks:
        why = _checks(name, facts, node, tensors, level, specified)
        if why is not None:
            out.append(Failure(CHECK, f"{facts.op}: {why}", rule.lines))
    return tuple(out)


def nnapi_ops(facts: NodeFacts, level: int) -> tuple[str, ...]:
    """The NNAPI operations a delegated TFLite node becomes at `level` (nnapi_rules.LOWERINGS and the level-dependent
    ones: HARD_SWISH < 30, PACK < FL6, hybrid CONV_2D / FULLY_CONNECTED's DEQUANTIZE)."""
    if facts.op == "HARD_SWISH" and level < 30:
        return HARD_SWISH_PRE30
    if facts.op == "PACK" and level < FL6:
        return PACK_PRE_FL6
    ops = LOWERINGS.get(facts.op, (facts.op,))
    return ("DEQUANTIZE", *ops) if _hybrid(facts) and level >= 29 else ops


def driver_dtype(facts: NodeFacts, level: int) -> str | None:
    """The type a driver sees: int8 goes to NNAPI as uint8 (+128) below API 30 (need_int8_conversion, 5782-5786)."""
    dtype = facts.input_dtypes[0] if facts.input_dtypes else facts.dtype
    if facts.op in ("SPLIT",) and len(facts.input_dtypes) > 1:
        dtype = facts.input_dtypes[1]
    return U8 if dtype == I8 and level < 30 else dtype


def nnapi_decision(graph, spec: NnapiSpec) -> NnapiDecision:
    """DoPrepare on a runtime subgraph (`.execution_plan`, `.nodes`, `.tensors`, `.outputs`); see the module doc."""
    targets = spec.targets()
    target_names = tuple(d.name for d in targets) if targets else ()
    level = spec.target_level()
    plan = list(graph.execution_plan)
    tensors = graph.tensors

    def nothing(why: str, kind: str = NO_TARGET) -> NnapiDecision:
        f = Failure(kind, why, (6858, 6862) if kind == NO_TARGET else (7035, 7062))
        return NnapiDecision(level, target_names, {ni: NodeVerdict(False, (f,)) for ni in plan}, (), (), why)

    if spec.android_api < 27:
        return nothing("Android API below 27 has no NNAPI (6837-6840)")
    if targets is not None and not targets:
        return nothing(f"only {REFERENCE_DEVICE} is available, and disallow_nnapi_cpu excludes it")
    if targets is None and len(spec.drivers) <= 1 and spec.options.accelerator_name is None:
        return nothing("no accelerator: one NNAPI device only (6867-6877)")
    specified = spec.accelerator_specified()
    device_check = specified and spec.android_api >= 29  # 7020-7033
    pool = targets if targets is not None else spec.drivers
    verdicts: dict[int, NodeVerdict] = {}
    fp16_dequant = [ni for ni in plan if _is_fp16_const_dequantize(graph.nodes[ni], tensors)]
    device_dropped = []
    for ni in plan:
        node = graph.nodes[ni]
        if node.operator is None:
            verdicts[ni] = NodeVerdict(False, (Failure(UNSUPPORTED, "not an original node"),))
            continue
        facts = facts_from_node(node, tensors)
        if ni in fp16_dequant:
            verdicts[ni] = NodeVerdict(False, (Failure(FP16, "constant float16 DEQUANTIZE: delegated only with the "
                                                             "whole model", (6893, 6911)),))
            continue
        failures = validate(facts, node, tensors, level, specified)
        ops = nnapi_ops(facts, level)
        dtype = driver_dtype(facts, level)
        able = tuple(d.name for d in pool if all(d.runs(op, dtype) for op in ops))
        if not failures and device_check:
            missing = [op for op in ops if not any(d.runs(op, dtype) for d in pool)]
            if missing:
                failures = (Failure(DRIVER, f"{', '.join(missing)} on {dtype} not supported by "
                                            f"{', '.join(target_names)}", (4815, 4872)),)
                device_dropped.append(ni)
        verdicts[ni] = NodeVerdict(not failures, failures, able, ops)
    supported = [ni for ni in plan if verdicts[ni].delegated]
    if fp16_dequant:
        if device_dropped:  # 7039-7040: the device check removed nodes of an fp16 model
            return nothing("fp16-weight model: the device check dropped "
                           f"{len(device_dropped)} node(s), so nothing is delegated", FP16)
        if len(supported) + len(fp16_dequant) == len(plan):  # utils.cc 206-214, "Scenario 1: Full Delegation"
            for ni in fp16_dequant:
                verdicts[ni] = NodeVerdict(True, (), tuple(d.name for d in pool), ())
            supported = list(plan)
    subsets = [s for s in partition_graph(describe_plan(graph), graph.outputs, supported) if s.delegated]
    limit = spec.options.max_number_delegated_partitions
    chosen, dropped = list(subsets), []
    if 0 < limit < len(subsets):  # 6756-6787: reverse sort by node count, keep the first `limit`
        ranked = sorted(subsets, key=lambda s: -len(s.nodes))  # stable; TFLite's std::sort leaves ties unordered
        chosen = [s for s in subsets if s in ranked[:limit]]
        for rank, s in enumerate(ranked[limit:], start=limit + 1):
            why = (f"partition of {len(s.nodes)} node(s) ranks {rank} by size; max_number_delegated_partitions="
                   f"{limit} keeps the largest")
            dropped.append((s, why))
            for ni in s.nodes:
                old = verdicts[ni]
                verdicts[ni] = NodeVerdict(False, (Failure(PARTITION_LIMIT, why, (6752, 6791)),), old.drivers,
                                           old.nn_ops)
    return NnapiDecision(level, target_names, MappingProxyType(verdicts), tuple(chosen), tuple(dropped))


def nnapi_policy(name: str, allow_fp16: bool) -> DelegationPolicy:
    """The delegation policy of an NNAPI delegate or driver: claims decided by `nnapi_decision`, not by rules;
    float math relaxed to float16 when `allow_fp16` (relaxComputationFloat32toFloat16, 6352-6360)."""
    return DelegationPolicy(name, (ClaimRule(ANY_OP),), numerics=Numerics("float16" if allow_fp16 else "reference"))


class NnapiDelegate(AcceleratorDelegate):
    """TFLite's NNAPI delegate as one delegate: `nnapi_decision`'s nodes and partitions, its reasons for the rest.

    Its kernels run the nodes with the reference numerics (float16 when `allow_fp16`).
    """

    def __init__(self, spec: NnapiSpec, name: str = "nnapi"):
        super().__init__(nnapi_policy(name, spec.options.allow_fp16))
        self.spec = spec
        self.decision: NnapiDecision | None = None

    def initialize(self, context) -> None:
        super().initialize(context)
        self.decision = nnapi_decision(context.interpreter.subgraph(context.subgraph_index), self.spec)

    def is_node_supported(self, context, node, registration):
        verdict = self.decision.verdicts.get(node.index)
        if verdict is None:
            return False, "not in the NNAPI delegate's plan"
        if not verdict.delegated and verdict.failures and verdict.failures[0].kind == PARTITION_LIMIT:
            return True, ""  # claimed, then dropped by the partition limit in select_partitions
        return verdict.delegated, verdict.reason

    def select_partitions(self, partitions: Sequence[NodeSubset]) -> Selection:
        keep = {p.nodes for p in self.decision.partitions}
        return Selection(tuple(p for p in partitions if p.nodes in keep),
                         tuple((p, why) for p, why in self.decision.dropped))


class NnapiDriverDelegate(AcceleratorDelegate):
    """One NNAPI driver's share of an NNAPI delegation: the delegated nodes the runtime gave it (`assigned`).

    A node NNAPI did not delegate is refused with NNAPI's reason; one given to another driver says which.
    Every driver refuses an undelegated node for the same NNAPI reason, so only the one with `speaks` reports
    its reasons (`rejection_reasons`): a delegation report gives each reason once.
    """

    def __init__(self, policy: DelegationPolicy, decision: NnapiDecision, assigned: Mapping[int, str],
                 speaks: bool = True):
        super().__init__(policy, allowed_nodes=frozenset(ni for ni, d in assigned.items() if d == policy.name))
        self.decision = decision
        self.assigned = MappingProxyType(dict(assigned))
        self.speaks = speaks

    def rejection_reasons(self, interpreter) -> dict[int, str]:
        return super().rejection_reasons(interpreter) if self.speaks else {}

    def is_node_supported(self, context, node, registration):
        verdict = self.decision.verdicts.get(node.index)
        if verdict is None or not verdict.delegated:
            return False, verdict.reason if verdict is not None else "not in the NNAPI delegate's plan"
        driver = self.assigned.get(node.index)
        if driver != self.policy.name:
            return False, f"NNAPI delegated it; the runtime runs it on {driver or 'the CPU'}"
        return True, ""


__all__ = ["NnapiDecision", "NnapiDelegate", "NnapiDriver", "NnapiDriverDelegate", "NnapiOptions", "NnapiSpec",
           "NodeVerdict", "Failure", "I8", "feature_level", "nnapi_decision", "nnapi_ops", "validate"]
