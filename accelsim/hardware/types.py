"""The hardware side's value types: what a cost model is given and what it returns.

Every layer above names these, so they live here, below all of them, in one module: a device's
`Hardware` (clock, compute, memory, link, energy) with its `Kind` (compute fields, role and cost
function, each field declared with `spec`), the `Energy` of its compute unit, and the `Cost` a
kind's cost function returns for each node (a frozen value with addition, summed per partition
and per run). `accelsim.hardware.kinds` registers kinds, `accelsim.hardware.device` pairs a
`Hardware` with its delegation policy, `accelsim.hardware.cost` holds the built-in kinds' cost
modules and `accelsim.hardware.roofline` the overlap of compute and memory traffic they share.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from accelsim.delegates.spec import DelegationPolicy
from accelsim.hardware.config_yaml import ConfigError, keypath
from accelsim.hardware.memory import Memory
from accelsim.runtime.work import NodeWork

ROLES = ("host", "accelerator")


# Value types a compute field may have; accelsim.hardware.config has one checker for each.
FIELD_TYPES = ("count", "fraction", "number", "choice", "dtype_rates")


UNCALIBRATED = "not calibrated: the config does not say what its numbers were checked against"


CALIBRATION_STARTS = ("calibrated against ", "not calibrated: ")


# Marks a field of `Hardware` that no YAML section fills (derived by the loader, or where the file is).
_DERIVED = {"section": False}


COMPUTE = "compute"


def _merged(a: tuple, b: tuple) -> tuple:
    """(key, amount) pairs of `a` and `b` summed by key, keys in order of first appearance."""
    out = dict(a)
    for key, amount in b:
        out[key] = out.get(key, 0) + amount
    return tuple(out.items())


@dataclass(frozen=True)
class Cost:
    """Time and traffic of some work; `+` adds field by field, `sum(costs, Cost())` totals them.

    Args:
        cycles: device clock cycles (the slowest of compute and every level).
        seconds: wall time.
        macs: multiply-accumulates done.
        bytes_read, bytes_written: bytes the work reads (inputs, weights) and writes (outputs).
        param_bytes_streamed: weight bytes fetched from below the weights level this time.
        compute_seconds: time the compute units alone need; `seconds - compute_seconds` is time
            spent waiting on memory (`stall_seconds`).
        level_bytes: (level name, bytes moved on it), "link" for host memory over the link.
        bound_seconds: (bound, seconds): a node's whole time under the bound that set it
            ("compute" or a level name); sums give the time spent under each bound.
        energy: joules: dynamic (MACs, bytes per level) plus static power over `seconds`.
        static_energy: the static part of `energy`.
    """

    cycles: int = 0
    seconds: float = 0.0
    macs: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    param_bytes_streamed: int = 0
    compute_seconds: float = 0.0
    level_bytes: tuple[tuple[str, int], ...] = ()
    bound_seconds: tuple[tuple[str, float], ...] = ()
    energy: float = 0.0
    static_energy: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        # Written out field by field (a loop over fields() costs ~4x more): costing a design point
        # adds a Cost per node. A test checks every field is summed.
        return Cost(self.cycles + other.cycles, self.seconds + other.seconds, self.macs + other.macs,
                    self.bytes_read + other.bytes_read, self.bytes_written + other.bytes_written,
                    self.param_bytes_streamed + other.param_bytes_streamed,
                    self.compute_seconds + other.compute_seconds, _merged(self.level_bytes, other.level_bytes),
                    _merged(self.bound_seconds, other.bound_seconds), self.energy + other.energy,
                    self.static_energy + other.static_energy)

    def times(self, count: int) -> Cost:
        """This cost `count` times over (a loop body's cost times its trips)."""
        return Cost(*(tuple((k, v * count) for k, v in value) if isinstance(value, tuple) else value * count
                      for value in (getattr(self, f.name) for f in fields(Cost))))

    @property
    def stall_seconds(self) -> float:
        """Time beyond compute: waiting on the slowest memory level."""
        return self.seconds - self.compute_seconds

    @property
    def bound(self) -> str:
        """The bound that took the most time ("compute" or a level name; "" for no work)."""
        return max(self.bound_seconds, key=lambda kv: kv[1], default=("", 0.0))[0]

    def bytes_on(self, level: str) -> int:
        return dict(self.level_bytes).get(level, 0)


def total(costs: Sequence[Cost]) -> Cost:
    """The sum of `costs` in one pass: what `sum(costs, Cost())` gives, without a Cost per addition."""
    if not costs:
        return Cost()
    sums: dict[str, object] = {}
    for f in fields(Cost):
        values = [getattr(c, f.name) for c in costs]
        sums[f.name] = _merged((), tuple(pair for pairs in values for pair in pairs)) \
            if isinstance(f.default, tuple) else sum(values)
    return Cost(**sums)


@dataclass(frozen=True)
class Energy:
    """A compute unit's energy: joules per MAC by lower-case dtype (sorted), static power in watts."""

    mac: tuple[tuple[str, float], ...] = ()
    static_power: float = 0.0

    def per_mac(self, dtype: str) -> float:
        """Joules per MAC of `dtype`; the dearest listed entry for an unlisted dtype (0 with none)."""
        table = dict(self.mac)
        return table.get(dtype, max(table.values(), default=0.0))


@dataclass(frozen=True)
class Link:
    bandwidth: float
    latency: float = 0.0
    call_overhead: float = 0.0
    shared_memory: bool = False
    energy: float = 0.0  # joules per byte over the link


@dataclass(frozen=True)
class Hardware:
    """A device's hardware facts, as loaded from YAML (units converted to Hz, bytes, bytes/s, s).

    Args:
        numerics_precision: the precision the delegation's numerics compute float math in:
            'float16' with `numerics.mode: float16` (the TFLite GPU delegate's
            `precision_loss_allowed`), else 'float32'. It is the one fact of the policy that
            changes a cost (the GPU's half-precision ALUs run twice the multiply-adds per cycle),
            so the loader copies it here and no cost model needs the policy. (A kind whose
            hardware fixes its float precision says so in its compute fields, e.g.
            `compute.float_precision` of kind tensor.)
        source, lines: the file and the line of each hardware key in it, to locate errors (`error`).
    """

    name: str
    kind: str
    clock: float
    compute: Any  # the kind's compute dataclass (kind_record.compute)
    memory: Memory
    kind_record: Kind = field(compare=False, repr=False, metadata=_DERIVED)
    energy: Energy = Energy()
    link: Link | None = None
    calibration: str = UNCALIBRATED
    numerics_precision: str = field(default="float32", metadata=_DERIVED)
    source: str = field(default="<memory>", compare=False, metadata=_DERIVED)
    lines: Mapping[tuple, int] = field(default_factory=dict, compare=False, hash=False, repr=False, metadata=_DERIVED)

    @property
    def is_accelerator(self) -> bool:
        return self.kind_record.is_accelerator

    def costs(self, works: Sequence[NodeWork]) -> list[Cost]:
        """The cost of each of `works` (this device's nodes, in model order) by the kind's cost model.

        Raises:
            ValueError: the kind's cost function did not return one Cost per node.
        """
        costs = self.kind_record.costs(works, self)
        if len(costs) != len(works):
            raise ValueError(f"kind {self.kind!r}: costs() returned {len(costs)} costs for {len(works)} nodes")
        return costs

    def utilizations(self, works: Sequence[NodeWork], costs: Sequence[Cost]) -> list[float | None]:
        """Each node's share of the unit's peak MAC throughput over its whole time.

        None where the kind has no peak (`Kind.peak_macs_per_cycle`) or the node took no cycles. Costing asks once
        per device with the costs it got, so it never calls into a kind's module itself.
        """
        peak = self.kind_record.peak_macs_per_cycle
        return [None if peak is None or c.cycles == 0 else w.macs / (c.cycles * peak(w, self))
                for w, c in zip(works, costs)]

    def node_notes(self, works: Sequence[NodeWork]) -> list[str]:
        """Each node's note for the per-layer table ('' for none), by the kind's `Kind.node_notes`."""
        notes = self.kind_record.node_notes
        return [""] * len(works) if notes is None else notes(works, self)

    def error(self, path: tuple, message: str) -> ConfigError:
        """A ConfigError about key `path` of this device, located at its file:line when known."""
        return ConfigError([located(self.source, self.lines, path, message)])

    def notes(self) -> list[str]:
        """What this device's hardware leaves to a silent rule, one line each (validate prints them).

        Its kind's notes, then energy left out (reported as "not modelled").
        """
        silent = [] if self.energy.mac else ["energy.mac is not given: energy is not modelled for this device; "
                                             "reports and compare show its energy as 'not modelled', never 0"]
        return [*self.kind_record.notes(self), *silent]


def located(source: str, lines: Mapping[tuple, int], path: tuple, message: str) -> str:
    """'source:line: key.path: message', the line left out when `lines` does not know the key."""
    line = lines.get(path)
    where = f"{source}:{line}" if line else source
    return f"{where}: {keypath(path)}: {message}"


@dataclass(frozen=True)
class Field:
    """How one `compute:` key is written and checked.

    Args:
        type: one of FIELD_TYPES: count (a whole number >= minimum, a multiple of
            multiple_of), fraction (a number in (0, 1]), number (a number above 0), choice (one of `choices`) or
            dtype_rates (a mapping lower-case dtype -> number above 0).
        meaning: one line for the key table.
        example: the number an error message shows for a count.
        name, default: filled in from the dataclass field (`Kind.fields`); `required` is
            True when the dataclass gives no default.
    """

    type: str
    meaning: str
    minimum: int = 1
    multiple_of: int = 1
    example: int = 64
    choices: tuple[str, ...] = ()
    name: str = ""
    default: Any = None
    required: bool = True

    def __post_init__(self) -> None:
        if self.type not in FIELD_TYPES:
            raise ValueError(f"field type must be one of {', '.join(FIELD_TYPES)}, got {self.type!r}")
        if self.type == "choice" and not self.choices:
            raise ValueError("a choice field needs its choices")

    def value_text(self) -> str:
        """What the key accepts, as the key table says it ('whole number >= 1', 'os, ws or is')."""
        if self.type == "count":
            text = f"whole number >= {self.minimum}"
            if self.multiple_of > 1:
                text += f", multiple of {self.multiple_of}"
        elif self.type == "fraction":
            text = "number in (0, 1]"
        elif self.type == "number":
            text = "number above 0"
        elif self.type == "choice":
            text = or_list(self.choices)
        else:
            text = "mapping dtype -> number above 0"
        return text if self.required else f"{text} (default {self.default!r})"


def spec(type: str, meaning: str, default: Any = dataclasses.MISSING, **checks: Any) -> Any:
    """A dataclass field of a kind's compute record, carrying its `Field` (type, meaning, checks).

    Used as ``rows: int = spec("count", "rows of MAC cells")``.
    """
    return dataclasses.field(default=default, metadata={"accelsim": Field(type, meaning, **checks)})


def no_notes(hw: Hardware) -> list[str]:
    """The default `Kind.notes`: a kind without silent rules has nothing to say."""
    return []


def no_problems(part: Hardware | DelegationPolicy) -> list[tuple[tuple, str]]:
    """The default `Kind.check` and `Kind.check_policy`: a kind whose keys are checked one by one has no rules
    across them."""
    return []


@dataclass(frozen=True)
class Kind:
    """One hardware kind.

    Args:
        name: what a YAML file writes as `kind:`.
        role: host (runs what no accelerator takes; `link` and `claims` optional) or
            accelerator (`link` and `claims` required).
        summary: one line for listings.
        compute: frozen dataclass of the `compute:` block; every field made with `spec`.
        costs: the cost of a device's nodes, in model order (one Cost per NodeWork), from its hardware.
        macs_per_cycle: how the compute fields give peak MACs per cycle, one line for the
            reference (a user who knows "128 MACs per cycle" reads here which fields to set).
        notes: what a config leaves to a silent rule (e.g. a dtype without its own rate),
            one line each; `accelsim validate` prints them.
        peak_macs_per_cycle: the most MACs per cycle the unit running a node can do (for its
            utilisation in per-layer reports); None leaves utilisation unknown.
        check: rules across the hardware keys of a config otherwise valid (e.g. threads within
            cores): (key path, what is wrong) each, reported at the key's file:line as a ConfigError.
        check_policy: the same for its delegation policy (e.g. claims within what the delegate
            takes).
        node_notes: what the per-layer table says about each of a device's nodes (model order; '' for
            nothing), e.g. that a node runs a slower fallback kernel; None says nothing.
        dtypes: the tensor types (lower-case) the kind's hardware can execute at all; empty: any. `whatif`
            never suggests a claim for another type (an int8-only NPU gets no float32 claim).
    """

    name: str
    role: str
    summary: str
    compute: type
    costs: Callable[[Sequence[NodeWork], Hardware], list[Cost]]
    macs_per_cycle: str = ""
    notes: Callable[[Hardware], list[str]] = no_notes
    peak_macs_per_cycle: Callable[[NodeWork, Hardware], float] | None = None
    check: Callable[[Hardware], list[tuple[tuple, str]]] = no_problems
    check_policy: Callable[[DelegationPolicy], list[tuple[tuple, str]]] = no_problems
    node_notes: Callable[[Sequence[NodeWork], Hardware], list[str]] | None = None
    dtypes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"kind {self.name!r}: role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if not dataclasses.is_dataclass(self.compute):
            raise TypeError(f"kind {self.name!r}: compute must be a dataclass, got {self.compute!r}")
        bare = [f.name for f in dataclasses.fields(self.compute) if "accelsim" not in f.metadata]
        if bare:
            raise TypeError(f"kind {self.name!r}: compute fields {bare} are not declared with "
                            "accelsim.hardware.types.spec")

    @property
    def is_accelerator(self) -> bool:
        return self.role == "accelerator"

    @property
    def fields(self) -> tuple[Field, ...]:
        """The compute fields in declaration order, with their names and defaults."""
        return tuple(dataclasses.replace(f.metadata["accelsim"], name=f.name,
                                         default=None if f.default is dataclasses.MISSING else f.default,
                                         required=f.default is dataclasses.MISSING)
                     for f in dataclasses.fields(self.compute))


def or_list(words: Sequence[str]) -> str:
    """['a', 'b', 'c'] -> 'a, b or c'."""
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
