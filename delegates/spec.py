"""A device's delegation policy (`DelegationPolicy`): claim rules, partitioning, numerics; never its hardware facts.

Plain frozen dataclasses (no YAML here; `accelsim.hardware.config` builds them from files). A node is
claimed when some `ClaimRule` for its op accepts its `NodeFacts`; `check_claim` says why not.
A rule for `ANY_OP` covers every builtin op except those it lists in `excluded` and the ops
in `NEVER_ANY` (custom ops and control flow, whose bodies are other subgraphs).

Constraint vocabulary of `ClaimRule.constraints`: `CONSTRAINT_DOCS` (what each takes, when a
node is refused, an example); `accelsim configs --schema` prints it. A constraint that does
not apply to an op (e.g. `max_kernel_size` on ADD) is ignored.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from accelsim.runtime.numerics import ROUNDINGS, NumericsProfile
from accelsim.runtime.quant import activation_name
from accelsim.runtime.work import data_input, option

# schema enums Padding and ActivationFunctionType, by name.
PADDINGS = ("SAME", "VALID")
ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")
PARTITION_KINDS = ("tflite", "prefix", "cost")
OBJECTIVES = ("latency", "energy")  # what partition kind 'cost' minimises
NUMERICS_MODES = ("reference", "float16", "rounding")
# How a `rounding` accelerator rounds when it requantizes (the reference kernels follow TFLite).
ROUNDING_MODES = tuple(ROUNDINGS)
MAX_VERSION = 2**31 - 1
ANY_OP = "any"
# `op: any` does not reach these: a custom op needs its own kernel, and control flow runs other subgraphs.
NEVER_ANY = frozenset({"CUSTOM", "DELEGATE", "CALL", "CALL_ONCE", "IF", "WHILE"})

INT_CONSTRAINTS = ("max_kernel_size", "max_stride", "max_dilation", "max_channels", "max_rank", "max_input_elements",
                   "max_runtime_inputs")
NAME_CONSTRAINTS = {"allowed_paddings": PADDINGS, "allowed_activations": ACTIVATIONS}
BOOL_CONSTRAINTS = ("per_channel",)
CONSTRAINTS = (*INT_CONSTRAINTS, *NAME_CONSTRAINTS, *BOOL_CONSTRAINTS)
# name -> (value, a node is refused when, example); one entry per CONSTRAINTS name (tests check).
CONSTRAINT_DOCS = {
    "max_kernel_size": ("int >= 1", "kernel height or width is above it (conv filters, pool windows)",
                        "{max_kernel_size: 5}"),
    "max_stride": ("int >= 1", "stride height or width is above it (convs, pools)", "{max_stride: 2}"),
    "max_dilation": ("int >= 1", "dilation height or width factor is above it (CONV_2D, DEPTHWISE_CONV_2D)",
                     "{max_dilation: 1}"),
    "max_channels": ("int >= 1", "input or output channels are above it (convs, pools, FULLY_CONNECTED)",
                     "{max_channels: 2048}"),
    "max_rank": ("int >= 1", "a non-constant input or an output has more dimensions", "{max_rank: 4}"),
    "max_input_elements": ("int >= 1", "the first input holds more elements", "{max_input_elements: 16000}"),
    "max_runtime_inputs": ("int >= 1", "more of its inputs are non-constant tensors (present, not weights)",
                           "{max_runtime_inputs: 2}"),
    "allowed_paddings": ("list of " + ", ".join(PADDINGS), "its padding is not listed",
                         "{allowed_paddings: [SAME]}"),
    "allowed_activations": ("list of " + ", ".join(ACTIVATIONS), "its fused activation is not listed",
                            "{allowed_activations: [NONE, RELU]}"),
    "per_channel": ("true or false", "false, and a constant input (weights) is quantized per channel",
                    "{per_channel: false}"),
}

_KERNEL_INPUT_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"}
_POOL_OPS = {"AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"}


def _check_constraint(name: str, value: Any) -> Any:
    """The constraint's value in canonical form (int, frozenset of names, bool); ValueError if malformed."""
    if name in INT_CONSTRAINTS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"constraint {name} must be a whole number >= 1, got {value!r}")
        return value
    if name in NAME_CONSTRAINTS:
        choices = NAME_CONSTRAINTS[name]
        names = [value] if isinstance(value, str) else list(value)
        unknown = [v for v in names if v not in choices]
        if unknown or not names:
            raise ValueError(f"constraint {name} takes names from {list(choices)}, got {value!r}")
        return frozenset(names)
    if name in BOOL_CONSTRAINTS:
        if not isinstance(value, bool):
            raise ValueError(f"constraint {name} must be true or false, got {value!r}")
        return value
    raise ValueError(f"unknown constraint {name!r}; known: {', '.join(CONSTRAINTS)}")


@dataclass(frozen=True)
class ClaimRule:
    """Claim nodes of `op` whose version is in `versions` and data dtype in `dtypes`.

    `versions` is one inclusive range `(lo, hi)` or a tuple of such ranges; it is stored as a
    sorted tuple of disjoint ranges (`(1, 3)` becomes `((1, 3),)`). `op` may be `ANY_OP`: every
    builtin op outside `excluded` and `NEVER_ANY`. `dtypes` are lower-case tensor type names
    ('int8', 'float32'); empty means any.
    `constraints` use the vocabulary in this module's docstring. `custom_code` narrows a rule for op
    CUSTOM to the custom ops of that name (None: every custom op).
    """

    op: str
    versions: tuple = (1, MAX_VERSION)
    dtypes: frozenset[str] = frozenset()
    constraints: Mapping[str, Any] = field(default_factory=dict, hash=False)
    excluded: frozenset[str] = frozenset()
    custom_code: str | None = None

    def __post_init__(self):
        ranges = (self.versions,) if all(isinstance(v, int) for v in self.versions) else self.versions
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(ranges):
            if not 1 <= lo <= hi:
                raise ValueError(f"{self.op}: version range {lo}-{hi} must satisfy 1 <= min <= max")
            if merged and lo <= merged[-1][1] + 1:  # overlapping or adjacent: one range
                merged[-1] = (merged[-1][0], max(merged[-1][1], int(hi)))
            else:
                merged.append((int(lo), int(hi)))
        if not merged:
            raise ValueError(f"{self.op}: no versions")
        object.__setattr__(self, "versions", tuple(merged))
        object.__setattr__(self, "dtypes", frozenset(d.lower() for d in self.dtypes))
        if self.excluded and self.op != ANY_OP:
            raise ValueError(f"{self.op}: only a rule for op {ANY_OP!r} can exclude ops")
        if self.custom_code is not None and self.op != "CUSTOM":
            raise ValueError(f"{self.op}: only a rule for op CUSTOM can name a custom_code")
        object.__setattr__(self, "excluded", frozenset(self.excluded))
        checked = {name: _check_constraint(name, value) for name, value in self.constraints.items()}
        object.__setattr__(self, "constraints", MappingProxyType(checked))

    def covers(self, op: str, custom_code: str | None = None) -> bool:
        """Whether this rule speaks about `op` (and its custom code) at all, before versions, dtypes, constraints."""
        if self.op == ANY_OP:
            return op not in self.excluded and op not in NEVER_ANY
        return self.op == op and (self.custom_code is None or self.custom_code == custom_code)


@dataclass(frozen=True)
class PartitionPolicy:
    """How claimed nodes become delegate partitions.

    kind 'tflite': every claimed node is delegated, grouped like TFLite's
    GraphPartitionHelper; 'prefix': only the claimed nodes before the first unclaimed one
    in plan order (the Edge TPU compiler's behaviour). `max_delegated_partitions` keeps the
    largest N partitions (0 = all); partitions with fewer than `min_nodes_per_partition`
    nodes stay on the host. 'cost': TFLite's selection, then the partitions that do not pay
    for themselves (by `objective`, one of OBJECTIVES) stay on the host; which those are is a
    placement decision passed to the delegate (`AcceleratorDelegate(host_nodes=...)`), never a
    field of the policy.
    """

    kind: str = "tflite"
    max_delegated_partitions: int = 0
    min_nodes_per_partition: int = 0
    objective: str = "latency"

    def __post_init__(self):
        if self.kind not in PARTITION_KINDS:
            raise ValueError(f"partition kind must be one of {list(PARTITION_KINDS)}, got {self.kind!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"partition objective must be one of {list(OBJECTIVES)}, got {self.objective!r}")
        for name in ("max_delegated_partitions", "min_nodes_per_partition"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class Numerics:
    """How the accelerator's arithmetic deviates from the reference kernels.

    mode 'reference': bit-exact with the reference kernels; 'float16': float math in float16;
    'rounding': requantization rounds with `rounding` (one of ROUNDING_MODES).
    """

    mode: str = "reference"
    rounding: str | None = None

    def __post_init__(self):
        if self.mode not in NUMERICS_MODES:
            raise ValueError(f"numerics mode must be one of {list(NUMERICS_MODES)}, got {self.mode!r}")
        if (self.mode == "rounding") != (self.rounding is not None):
            raise ValueError("numerics.rounding is required with mode 'rounding' and not allowed otherwise")
        if self.rounding is not None and self.rounding not in ROUNDING_MODES:
            raise ValueError(f"rounding must be one of {list(ROUNDING_MODES)}, got {self.rounding!r}")

    def profile(self) -> NumericsProfile:
        """The runtime's numerics profile for the nodes this accelerator runs."""
        if self.mode == "float16":
            return NumericsProfile(compute="float16")
        return NumericsProfile(rounding=self.rounding or "litert")


@dataclass(frozen=True)
class DelegationPolicy:
    """How a device is delegated to: its name, claim rules, partitioning and numerics.

    Everything `AcceleratorDelegate` consumes, and a device's whole policy (`accelsim.hardware.device.Device.policy`;
    its hardware facts are another type). A host's claims are empty.
    """

    name: str
    claims: tuple[ClaimRule, ...]
    partition: PartitionPolicy = PartitionPolicy()
    numerics: Numerics = Numerics()

    def check(self, facts: NodeFacts) -> tuple[bool, str]:
        """`check_claim` with this accelerator's rules."""
        return check_claim(self.claims, facts)


@dataclass(frozen=True)
class NodeFacts:
    """What claim rules look at: op, version, types, shapes and the options that constraints test.

    `dtype` is the lower-case type of the data input (see `data_input`); fields that
    do not apply to the op are None. Pairs are (height, width).
    """

    op: str
    version: int
    dtype: str | None
    input_dtypes: tuple[str | None, ...] = ()
    input_shapes: tuple[tuple[int, ...] | None, ...] = ()
    output_shapes: tuple[tuple[int, ...], ...] = ()
    constant_inputs: tuple[bool, ...] = ()
    custom_code: str | None = None
    kernel: tuple[int, int] | None = None
    stride: tuple[int, int] | None = None
    dilation: tuple[int, int] | None = None
    padding: str | None = None
    activation: str | None = None
    in_channels: int | None = None
    out_channels: int | None = None
    per_channel: bool = False

    @property
    def rank(self) -> int:
        """The largest rank among non-constant inputs and outputs."""
        shapes = [s for s, c in zip(self.input_shapes, self.constant_inputs) if s is not None and not c]
        return max((len(s) for s in (*shapes, *self.output_shapes)), default=0)

    @property
    def runtime_inputs(self) -> int:
        """Inputs that are present and not constant (TFLite GPU delegate's GetNumberOfRuntimeInputs)."""
        return sum(1 for s, c in zip(self.input_shapes, self.constant_inputs) if s is not None and not c)

    @property
    def input_elements(self) -> int:
        """Elements of the data input (the first non-constant input, else the first one)."""
        present = [(s, c) for s, c in zip(self.input_shapes, self.constant_inputs) if s is not None]
        shapes = [s for s, c in present if not c] or [s for s, _ in present]
        return math.prod(shapes[0]) if shapes else 0


def _pair(options, h: str, w: str) -> tuple[int, int] | None:
    hv, wv = option(options, h), option(options, w)
    return (int(hv), int(wv)) if hv is not None and wv is not None else None


def facts_from_node(node, tensors: Sequence) -> NodeFacts:
    """NodeFacts of a runtime Node, read from its operator, options and tensors (shapes and types only).

    Args:
        node: a runtime.interpreter.Node (uses .operator.op/.version/.custom_code, .options, .inputs, .outputs).
        tensors: the subgraph's tensors indexed by tensor index (RuntimeTensor: .type, .shape,
            .quantization, .is_constant).
    """
    op = node.operator.op
    options = node.options
    ins = [tensors[i] if i >= 0 else None for i in node.inputs]
    outs = [tensors[i] for i in node.outputs if i >= 0]
    weights = ins[1] if len(ins) > 1 else None

    kernel = None
    if op in _KERNEL_INPUT_OPS and weights is not None and len(weights.shape) == 4:
        kernel = (int(weights.shape[1]), int(weights.shape[2]))
    elif op in _POOL_OPS:
        kernel = _pair(options, "filter_height", "filter_width")

    data = data_input(ins)
    in_channels = out_channels = None
    if op == "FULLY_CONNECTED" and weights is not None and len(weights.shape) == 2:
        out_channels, in_channels = (int(d) for d in weights.shape)
    elif kernel is not None and data is not None and data.shape and outs:
        in_channels, out_channels = int(data.shape[-1]), int(outs[0].shape[-1])

    padding = option(options, "padding")
    activation = option(options, "fused_activation_function")
    return NodeFacts(
        op=op,
        version=int(node.operator.version),
        dtype=data.type.lower() if data is not None else None,
        input_dtypes=tuple(t.type.lower() if t is not None else None for t in ins),
        input_shapes=tuple(tuple(int(d) for d in t.shape) if t is not None else None for t in ins),
        output_shapes=tuple(tuple(int(d) for d in t.shape) for t in outs),
        constant_inputs=tuple(bool(t is not None and t.is_constant) for t in ins),
        custom_code=node.operator.custom_code,
        kernel=kernel,
        stride=_pair(options, "stride_h", "stride_w"),
        dilation=_pair(options, "dilation_h_factor", "dilation_w_factor"),
        padding=PADDINGS[int(padding)] if padding is not None else None,
        activation=activation_name(activation) if activation is not None else None,
        in_channels=in_channels,
        out_channels=out_channels,
        per_channel=any(t is not None and t.is_constant and t.quantization is not None
                        and t.quantization.per_channel for t in ins),
    )


def _hw(pair: tuple[int, int]) -> str:
    return str(pair[0]) if pair[0] == pair[1] else f"{pair[0]}x{pair[1]}"


def _names(values: Iterable[str]) -> str:
    return "[" + ", ".join(sorted(values)) + "]"


def _constraint_failure(name: str, limit: Any, facts: NodeFacts) -> str | None:
    """Why `facts` breaks one constraint, or None when it holds or does not apply."""
    if name == "max_kernel_size" and facts.kernel is not None and max(facts.kernel) > limit:
        return f"kernel {facts.kernel[0]}x{facts.kernel[1]} above max {limit}"
    if name == "max_stride" and facts.stride is not None and max(facts.stride) > limit:
        return f"stride {_hw(facts.stride)} above max {limit}"
    if name == "max_dilation" and facts.dilation is not None and max(facts.dilation) > limit:
        return f"dilation {_hw(facts.dilation)} above max {limit}"
    if name == "max_channels":
        for side, channels in (("input", facts.in_channels), ("output", facts.out_channels)):
            if channels is not None and channels > limit:
                return f"{side} channels {channels} above max {limit}"
    if name == "max_rank" and facts.rank > limit:
        return f"rank {facts.rank} above max {limit}"
    if name == "max_input_elements" and facts.input_elements > limit:
        return f"input elements {facts.input_elements} above max {limit}"
    if name == "max_runtime_inputs" and facts.runtime_inputs > limit:
        return f"{facts.runtime_inputs} runtime inputs above max {limit}"
    if name == "allowed_paddings" and facts.padding is not None and facts.padding not in limit:
        return f"padding {facts.padding} not in {_names(limit)}"
    if name == "allowed_activations" and facts.activation is not None and facts.activation not in limit:
        return f"activation {facts.activation} not in {_names(limit)}"
    if name == "per_channel" and not limit and facts.per_channel:
        return "per-channel quantization not supported"
    return None


def _versions_text(ranges: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)


def _rule_failure(rule: ClaimRule, facts: NodeFacts) -> str | None:
    return _match_failure(rule, facts) or _constraints_failure(rule, facts)


def _match_failure(rule: ClaimRule, facts: NodeFacts) -> str | None:
    """Why the node's version or data type is not the rule's (before its constraints), or None."""
    ranges = rule.versions
    if not any(lo <= facts.version <= hi for lo, hi in ranges):
        if len(ranges) > 1 and ranges[0][0] <= facts.version <= ranges[-1][1]:
            return f"version {facts.version} not in {_versions_text(ranges)}"
        if facts.version > ranges[-1][1]:
            return f"version {facts.version} above max {ranges[-1][1]}"
        return f"version {facts.version} below min {ranges[0][0]}"
    if rule.dtypes and facts.dtype not in rule.dtypes:
        return f"dtype {facts.dtype} not in {_names(rule.dtypes)}"
    return None


def _constraints_failure(rule: ClaimRule, facts: NodeFacts) -> str | None:
    """Why the node breaks one of the rule's constraints, or None."""
    for name, limit in rule.constraints.items():
        why = _constraint_failure(name, limit, facts)
        if why is not None:
            return why
    return None


def check_claim(rules: Iterable[ClaimRule], facts: NodeFacts) -> tuple[bool, str]:
    """(True, "") if some rule for the node's op accepts it; else (False, the precise reason).

    With several rules for the op, the reasons of all of them are given, separated by "; ".
    """
    reasons: list[str] = []
    for rule in rules:
        if rule.covers(facts.op, facts.custom_code):
            why = _rule_failure(rule, facts)
            if why is None:
                return True, ""
        elif rule.op == ANY_OP and facts.op in rule.excluded:
            why = f"op {facts.op} is excluded from op {ANY_OP}"
        else:
            continue
        if why not in reasons:
            reasons.append(why)
    if not reasons:
        name = f"{facts.op} {facts.custom_code!r}" if facts.op == "CUSTOM" and facts.custom_code else facts.op
        return False, f"op {name} not supported"
    return False, "; ".join(reasons)


def constraint_refusal(rules: Sequence[ClaimRule], facts: NodeFacts) -> tuple[int, str] | None:
    """(index of the first rule, why) when only constraints refuse the node: some rule matches its op, version and
    data type, none accepts it, and each matching one breaks a constraint. None when a rule accepts the node or none
    matches it (then it is not the accelerator's constraints that keep it off: it does not claim the op at all)."""
    refusals = []
    for k, rule in enumerate(rules):
        if rule.covers(facts.op, facts.custom_code) and _match_failure(rule, facts) is None:
            why = _constraints_failure(rule, facts)
            if why is None:
                return None
            refusals.append((k, why))
    return refusals[0] if refusals else None
