"""Hardware descriptions: YAML files -> frozen dataclasses, checked strictly.

Every problem is a `ConfigError` that says where and what, e.g.
``hw_configs/x.yaml:14: link.bandwidth: expected a rate like '320 MB/s', got 'fast'``.
A file is checked completely before anything is built: all its errors are collected and
raised together (first line: the first error). Files are read as UTF-8 with
`yaml.compose` (SafeLoader) so every key keeps its line; only plain scalars, lists and
mappings are accepted (no tags that construct objects, no duplicate keys).

Keys: `KEYS` below (everything outside `compute:`) and each kind's compute fields
(`accelsim.kinds`); claim syntax in `_claim`, constraints in `accelsim.delegates.spec.CONSTRAINT_DOCS`.
`accelsim configs --schema` prints them all as one reference (`accelsim.reference`), and
`docs/hw_configs.md` is that text. Units as in `accelsim.units`: '500 MHz', '8 MiB',
'320 MB/s', '2 us'.

A kind's role says what a file of it describes: an accelerator (systolic, vector, npu, tensor) needs
`link` and `claims`; a host (cpu) may omit both. `apply_overrides` changes keys by path for
sweeps (`memory.levels.sram.bandwidth`). Whether activations fit the memory is checked when
a model is costed (`HardwareConfig.costs`), since it depends on the model.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from accelsim import units
from accelsim.cost import Cost
from accelsim.delegates.spec import (
    ANY_OP,
    BOOL_CONSTRAINTS,
    INT_CONSTRAINTS,
    MAX_VERSION,
    NAME_CONSTRAINTS,
    NUMERICS_MODES,
    OBJECTIVES,
    PADDINGS,
    PARTITION_KINDS,
    ROUNDING_MODES,
    AcceleratorSpec,
    ClaimRule,
    Numerics,
    PartitionPolicy,
)
from accelsim.energy import Energy
from accelsim.kinds import Field, Kind, KindRegistry, default_registry, or_list
from accelsim.memory import LINK, Level, Memory
from accelsim.runtime.errors import AccelsimError
from accelsim.runtime.ir import BUILTIN_OPS, TENSOR_TYPES
from accelsim.runtime.work import NodeWork

DTYPES = tuple(sorted(name.lower() for name in TENSOR_TYPES))

_YAML = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_YAML + t for t in ("str", "int", "float", "bool", "null")}
# An unquoted date resolves to a timestamp; it is read as the text it is.
_TEXT_TAGS = {_YAML + "timestamp"}
_KEY_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\[\d+\]")
# Aliases are expanded into copies; this bounds the work a small file full of aliases can cause.
_MAX_VALUES = 100_000
# PyYAML composes recursively and its scanner slows quadratically with nesting; no config nests deeper.
_MAX_DEPTH = 64
# accelsim.units matches quantities with a regex that is quadratic in the text's length.
_MAX_QUANTITY_CHARS = 200


class ConfigError(AccelsimError, ValueError):
    """A hardware description is invalid; `errors` lists every problem, one 'file:line: key: what' each."""

    def __init__(self, errors: Sequence[str]):
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


@dataclass(frozen=True)
class Link:
    bandwidth: float
    latency: float = 0.0
    call_overhead: float = 0.0
    shared_memory: bool = False
    energy: float = 0.0  # joules per byte over the link


@dataclass(frozen=True)
class _Document:
    """Plain data of a YAML file plus the line of every key path; what overrides edit."""

    data: Any
    lines: Mapping[tuple, int]


UNCALIBRATED = "not calibrated: the config does not say what its numbers were checked against"
CALIBRATION_STARTS = ("calibrated against ", "not calibrated: ")


@dataclass(frozen=True)
class HardwareConfig:
    """One accelerator or host, as loaded from YAML (units converted to Hz, bytes, bytes/s, s)."""

    name: str
    kind: str
    clock: float
    compute: Any  # the kind's compute dataclass (kind_record.compute)
    memory: Memory
    kind_record: Kind = field(compare=False, repr=False)
    energy: Energy = Energy()
    link: Link | None = None
    claims: tuple[ClaimRule, ...] = ()
    partition: PartitionPolicy = PartitionPolicy()
    numerics: Numerics = Numerics()
    calibration: str = UNCALIBRATED
    source: str = field(default="<memory>", compare=False)
    document: _Document | None = field(default=None, compare=False, hash=False, repr=False)

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

    def error(self, path: tuple, message: str) -> ConfigError:
        """A ConfigError about key `path` of this config, located at its file:line when known."""
        return ConfigError([_located(self, path, message)])

    def notes(self) -> list[str]:
        """What this config leaves to a silent rule, one line each (validate prints them).

        Its kind's notes, then energy left out (reported as "not modelled").
        """
        silent = [] if self.energy.mac else ["energy.mac is not given: energy is not modelled for this device; "
                                             "reports and compare show its energy as 'not modelled', never 0"]
        return [*self.kind_record.notes(self), *silent]


ASSIGN_POLICIES = ("order", "cost")


@dataclass(frozen=True)
class Assign:
    """How a system shares claimed nodes among its targets (an experiment variant's `assign`).

    'order': TFLite's — accelerators are applied in order and the first that claims a node takes
    it. 'cost': every claimed run of nodes goes to the target (an accelerator that claims it, or
    the host) that gives the least simulated `objective` (`accelsim.system.cost_aware_interpreter`).
    """

    policy: str = "order"
    objective: str = "latency"

    def __post_init__(self):
        if self.policy not in ASSIGN_POLICIES:
            raise ValueError(f"assign must be one of {list(ASSIGN_POLICIES)}, got {self.policy!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"assign objective must be one of {list(OBJECTIVES)}, got {self.objective!r}")


@dataclass(frozen=True)
class System:
    """A host and the accelerators attached to it, and how nodes are shared among them."""

    host: HardwareConfig
    accelerators: tuple[HardwareConfig, ...]
    assign: Assign = Assign()


# ---------------------------------------------------------------------------------------------
# YAML -> plain data with lines.


class _TooDeep(yaml.MarkedYAMLError):
    pass


class _DepthLimitedLoader(yaml.SafeLoader):
    """SafeLoader that stops at nesting deeper than _MAX_DEPTH, before recursion runs out.

    Flow collections (`[[[...`) are cut short in the scanner, which otherwise reads the whole
    nest ahead at a cost quadratic in its depth; block nesting is cut short in the composer.
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def fetch_flow_collection_start(self, TokenClass):
        if self.flow_level >= _MAX_DEPTH:
            raise _TooDeep(problem=f"nesting deeper than {_MAX_DEPTH} levels", problem_mark=self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > _MAX_DEPTH:
                raise _TooDeep(problem=f"nesting deeper than {_MAX_DEPTH} levels",
                               problem_mark=self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Invalid:
    """Stands for a value already reported as an error; checks skip it silently."""

    def __repr__(self) -> str:
        return "..."


_INVALID = _Invalid()


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag


def _keypath(path: Iterable) -> str:
    """('claims', 3, 'op') -> 'claims[3].op'."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


class _Reader:
    """Turns a composed YAML node tree into dicts, lists and scalars, recording lines and errors."""

    def __init__(self, source: str):
        self.source = source
        self.lines: dict[tuple, int] = {}
        self.errors: list[tuple[int, str]] = []
        self.constructor = SafeConstructor()
        self.budget = _MAX_VALUES

    def error(self, node, path: tuple, message: str) -> None:
        line = node.start_mark.line + 1
        where = f"{_keypath(path)}: " if path else ""
        self.errors.append((line, f"{self.source}:{line}: {where}{message}"))

    def read(self, node, path: tuple = ()) -> Any:
        self.budget -= 1
        if self.budget == 0:
            self.error(node, path, f"the document expands to more than {_MAX_VALUES} values (aliases?)")
        if self.budget <= 0:
            return _INVALID
        if len(path) > _MAX_DEPTH:  # only aliases nest this deep here: a file's own nesting is refused earlier
            self.error(node, path, f"nesting deeper than {_MAX_DEPTH} levels (a recursive alias?)")
            return _INVALID
        if isinstance(node, MappingNode) and node.tag == _YAML + "map":
            return self._mapping(node, path)
        if isinstance(node, SequenceNode) and node.tag == _YAML + "seq":
            items = []
            for i, item in enumerate(node.value):
                self.lines[(*path, i)] = item.start_mark.line + 1
                items.append(self.read(item, (*path, i)))
            return items
        if isinstance(node, ScalarNode) and node.tag in _SCALAR_TAGS:
            try:
                return self.constructor.construct_object(node)
            except (ValueError, KeyError) as exc:  # e.g. `!!int abc`, `!!bool maybe`, a 5000-digit int
                shown = node.value if len(node.value) <= 40 else node.value[:40] + "..."
                self.error(node, path, f"{shown!r} is not a valid {_tag_name(node.tag)} ({exc})")
                return _INVALID
        if isinstance(node, ScalarNode) and node.tag in _TEXT_TAGS:
            return node.value
        self.error(node, path, f"YAML tag {_tag_name(node.tag)} is not allowed (only plain values, lists "
                               "and mappings)")
        return _INVALID

    def _mapping(self, node: MappingNode, path: tuple) -> dict:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not (isinstance(key_node, ScalarNode) and key_node.tag == _YAML + "str"):
                shown = key_node.value if isinstance(key_node, ScalarNode) else "a " + type(key_node).__name__
                self.error(key_node, path, f"keys must be plain names, got {shown!r}")
                continue
            key = key_node.value
            child = (*path, key)
            if key in result:
                self.error(key_node, child, f"duplicate key (first given on line {self.lines[child]})")
                continue
            self.lines[child] = key_node.start_mark.line + 1
            result[key] = self.read(value_node, child)
        return result


def read_document(path: str, what: str = "hardware settings") -> tuple[_Document | None, list[tuple[int, str]]]:
    """A YAML file's plain data with the line of every key path, or the errors that prevent reading it.

    `what` names the expected content in the message for an empty file.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return None, [(0, f"{path}: cannot read: {exc.strerror or exc}")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, [(line, f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})")]
    try:
        node = yaml.compose(text, Loader=_DepthLimitedLoader)
    except _TooDeep as exc:
        line = exc.problem_mark.line + 1
        return None, [(line, f"{path}:{line}: {exc.problem}")]
    except yaml.reader.ReaderError as exc:  # a character YAML forbids; its position gives the line
        line = text.count("\n", 0, exc.position) + 1
        return None, [(line, f"{path}:{line}: YAML error: {exc}")]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        return None, [(line, f"{path}:{line}: YAML syntax error: {exc.problem or exc.context}")]
    except yaml.YAMLError as exc:
        return None, [(1, f"{path}:1: YAML error: {exc}")]
    if node is None:
        return None, [(1, f"{path}:1: expected a mapping of {what}, got an empty file")]
    reader = _Reader(path)
    data = reader.read(node)
    reader.lines[()] = node.start_mark.line + 1
    return _Document(data, reader.lines), reader.errors


# ---------------------------------------------------------------------------------------------
# Checking plain data and building the dataclasses.


def _suggest(word: str, choices: Iterable[str]) -> str:
    # Short words need a closer match: 'npu' is two letters from 'cpu' but means something else.
    cutoff = 0.6 if isinstance(word, str) and len(word) > 3 else 0.8
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff) if isinstance(word, str) else []
    return f"; did you mean {close[0]!r}?" if close else ""


def _choices_text(choices: Sequence[str]) -> str:
    return ", ".join(choices)


class Checker:
    """Validates one document against the schema, collecting every error with its file:line: key."""

    def __init__(self, source: str, lines: Mapping[tuple, int], overridden: frozenset = frozenset()):
        self.source = source
        self.lines = lines
        self.overridden = overridden
        self.errors: list[tuple[int, str]] = []

    def error(self, path: tuple, message: str) -> None:
        key = f"{_keypath(path)}: " if path else ""
        if any(path[:i] in self.overridden for i in range(len(path) + 1)):
            self.errors.append((0, f"{self.source}: override {key}{message}"))
            return
        probe = path
        while probe and probe not in self.lines:
            probe = probe[:-1]
        line = self.lines.get(probe)
        where = f"{self.source}:{line}" if line else self.source
        self.errors.append((line or 0, f"{where}: {key}{message}"))

    # -- structure -----------------------------------------------------------------------------

    def mapping(self, path: tuple, value: Any, required: Sequence[str], optional: Sequence[str]) -> dict | None:
        """The mapping at `path`, after reporting unknown and missing keys (None if not a mapping)."""
        if value is _INVALID:
            return None
        if not isinstance(value, dict):
            self.error(path, f"expected a mapping, got {_describe(value)}")
            return None
        allowed = (*required, *optional)
        for key in value:
            if key not in allowed:
                hint = _suggest(key, allowed) or f"; expected one of: {_choices_text(allowed)}"
                self.error((*path, key), f"unknown key{hint}")
        for key in required:
            if key not in value:
                self.error((*path, key), "required key missing")
        return {k: v for k, v in value.items() if k in allowed and v is not _INVALID}

    # -- scalars -------------------------------------------------------------------------------

    def unit(self, path: tuple, value: Any, parse) -> Any:
        if value is _INVALID:
            return None
        if isinstance(value, str) and len(value) > _MAX_QUANTITY_CHARS:
            self.error(path, f"expected a quantity like '8 MiB', got {len(value)} characters of text")
            return None
        try:
            return parse(value)
        except ValueError as exc:
            self.error(path, str(exc))
            return None

    def whole(self, path: tuple, value: Any, minimum: int, example: int = 64) -> int | None:
        if value is _INVALID:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(path, f"expected a whole number like {example}, got {value!r}")
            return None
        if value < minimum:
            self.error(path, f"expected a whole number >= {minimum}, got {value}")
            return None
        return value

    def fraction(self, path: tuple, value: Any) -> float | None:
        number = self.unit(path, value, units.parse_number)
        if number is not None and not 0 < number <= 1:
            self.error(path, f"expected a number in (0, 1] like 0.8, got {value!r}")
            return None
        return number

    def positive(self, path: tuple, value: Any) -> float | None:
        number = self.unit(path, value, units.parse_number)
        if number is not None and number <= 0:
            self.error(path, f"expected a number above 0, got {value!r}")
            return None
        return number

    def choice(self, path: tuple, value: Any, choices: Sequence[str], what: str = "") -> str | None:
        if value is _INVALID:
            return None
        if isinstance(value, str) and value in choices:
            return value
        what = what or f"one of {_choices_text(choices)}"
        self.error(path, f"expected {what}, got {value!r}{_suggest(value, choices)}")
        return None

    def boolean(self, path: tuple, value: Any) -> bool | None:
        if value is _INVALID:
            return None
        if not isinstance(value, bool):
            self.error(path, f"expected true or false, got {value!r}")
            return None
        return value

    def text(self, path: tuple, value: Any) -> str | None:
        if value is _INVALID:
            return None
        if not isinstance(value, str) or not value.strip() or "\n" in value:
            self.error(path, f"expected a one-line name, got {value!r}")
            return None
        return value

    def names(self, path: tuple, value: Any, choices: Sequence[str], what: str, example: str,
              listed: bool = False) -> tuple[str, ...] | None:
        """A non-empty list of names from `choices` (`listed`: an unknown name's error lists them all)."""
        if value is _INVALID:
            return None
        if not isinstance(value, list) or not value:
            self.error(path, f"expected a list of {what} like [{example}], got {value!r}")
            return None
        one = f"a {what[:-1] if what.endswith('s') else what}"
        one = f"{one} ({_choices_text(choices)})" if listed else one
        good = [self.choice((*path, i), v, choices, one) for i, v in enumerate(value)]
        return tuple(good) if None not in good else None


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(value)
    return f"{type(value).__name__} {value!r}"


_VERSION_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")
VERSION_WORDS = ("any", "all")
_VERSION_EXPECT = "expected versions like 'any', '1-3' (a range), [1, 3] (those versions) or 2"


def _version_item(value: Any) -> tuple[int, int] | None:
    """(lo, hi) of one version or 'lo-hi' range; None if it is neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, str) and (m := _VERSION_RANGE.match(value)):
        return (int(m.group(1)), int(m.group(2) or m.group(1)))
    return None


def _versions(check: Checker, path: tuple, value: Any) -> tuple[tuple[int, int], ...] | None:
    """Inclusive version ranges: 'any'/'all', a single version, 'lo-hi', or a list of versions and ranges."""
    if value is _INVALID:
        return None
    if isinstance(value, str) and value.strip().lower() in VERSION_WORDS:
        return ((1, MAX_VERSION),)
    items = value if isinstance(value, list) and value else [value]
    ranges = [_version_item(v) for v in items]
    if None in ranges:
        check.error(path, f"{_VERSION_EXPECT}, got {value!r}")
        return None
    if min(lo for lo, _ in ranges) < 1:
        check.error(path, f"{_VERSION_EXPECT}, got {value!r} (versions start at 1)")
        return None
    if any(lo > hi for lo, hi in ranges):
        check.error(path, f"{_VERSION_EXPECT}, got {value!r} (min above max)")
        return None
    return tuple(sorted(ranges))


# TensorFlow's names (tf.raw_ops, Keras) for ops that TFLite names differently; only for error
# messages. Keys are upper case without underscores; sources: TFLite's converter legalizations
# (tensorflow/compiler/mlir/lite/transforms/legalize_patterns.td) map these TF ops to these TFLite ops.
TF_OP_NAMES = {
    "REDUCEMEAN": "MEAN", "REDUCESUM": "SUM", "MATMUL": "FULLY_CONNECTED or BATCH_MATMUL",
    "DENSE": "FULLY_CONNECTED", "SIGMOID": "LOGISTIC", "BIASADD": "ADD", "ADDV2": "ADD",
    "AVGPOOL": "AVERAGE_POOL_2D", "MAXPOOL": "MAX_POOL_2D", "CONCAT": "CONCATENATION",
    "CONCATV2": "CONCATENATION", "CONV2DBACKPROPINPUT": "TRANSPOSE_CONV",
    "CONV2DTRANSPOSE": "TRANSPOSE_CONV", "DEPTHWISECONV2DNATIVE": "DEPTHWISE_CONV_2D",
    "DEPTHWISECONV2D": "DEPTHWISE_CONV_2D", "REALDIV": "DIV", "RSQRT": "RSQRT", "SELECTV2": "SELECT_V2",
}
_BUILTIN_BY_LOOSE_NAME = {name.replace("_", ""): name for name in BUILTIN_OPS}


def _op_name(check: Checker, path: tuple, value: Any, allow_any: bool) -> str | None:
    """A builtin op name, matched case-insensitively; errors name TFLite's spelling of TF names."""
    if value is _INVALID:
        return None
    if isinstance(value, str):
        upper = value.strip().upper()
        if upper in BUILTIN_OPS:
            return upper
        if allow_any and value.strip().lower() == ANY_OP:
            return ANY_OP
        loose = upper.replace("_", "")
        if loose in TF_OP_NAMES:
            check.error(path, f"{value!r} is TensorFlow's name; TFLite calls it {TF_OP_NAMES[loose]}")
            return None
        if loose in _BUILTIN_BY_LOOSE_NAME:
            check.error(path, f"unknown op {value!r}; did you mean {_BUILTIN_BY_LOOSE_NAME[loose]!r}?")
            return None
    words = "a builtin op name like CONV_2D" + (f" or {ANY_OP!r}" if allow_any else "")
    hint = _suggest(value.upper(), BUILTIN_OPS) if isinstance(value, str) else ""
    check.error(path, f"expected {words}, got {value!r}{hint or ' (every name: accelsim configs --schema)'}")
    return None


def _dtypes(check: Checker, path: tuple, value: Any) -> tuple[str, ...] | None:
    """A non-empty list of tensor types, matched case-insensitively."""
    if isinstance(value, list):
        value = [v.lower() if isinstance(v, str) and v.lower() in DTYPES else v for v in value]
    return check.names(path, value, DTYPES, "dtypes", "int8", listed=True)


def _constraints(check: Checker, path: tuple, value: Any) -> dict | None:
    body = check.mapping(path, value, (), (*INT_CONSTRAINTS, *NAME_CONSTRAINTS, *BOOL_CONSTRAINTS))
    if body is None:
        return None
    result = {}
    for name, v in body.items():
        key = (*path, name)
        if name in INT_CONSTRAINTS:
            result[name] = check.whole(key, v, 1, example=3)
        elif name in NAME_CONSTRAINTS:
            choices = NAME_CONSTRAINTS[name]
            what, example = ("paddings", "SAME") if choices is PADDINGS else ("activations", "NONE, RELU")
            result[name] = check.names(key, v, choices, what, example)
        else:
            result[name] = check.boolean(key, v)
    return result if None not in result.values() else None


def _claim(check: Checker, path: tuple, value: Any) -> ClaimRule | None:
    if isinstance(value, dict) and isinstance(value.get("op"), str) and value["op"].strip().lower() == ANY_OP:
        body = check.mapping(path, value, ("op", "dtypes"), ("versions", "constraints", "except"))
    else:
        body = check.mapping(path, value, ("op", "versions", "dtypes"), ("constraints", "custom_code"))
    if body is None:
        return None
    op = versions = dtypes = None
    if "op" in body:
        op = _op_name(check, (*path, "op"), body["op"], allow_any=True)
    if "versions" in body:
        versions = _versions(check, (*path, "versions"), body["versions"])
    elif op == ANY_OP:
        versions = ((1, MAX_VERSION),)
    if "dtypes" in body:
        dtypes = _dtypes(check, (*path, "dtypes"), body["dtypes"])
    constraints = _constraints(check, (*path, "constraints"), body.get("constraints", {}))
    excluded: list | None = []
    if "except" in body:
        excluded = _op_list(check, (*path, "except"), body["except"])
    custom_code = body.get("custom_code")
    if custom_code is not None and (op != "CUSTOM" or not isinstance(custom_code, str) or not custom_code):
        check.error((*path, "custom_code"), f"expected a custom op's name (with op: CUSTOM), got {custom_code!r}"
                    + ("" if op == "CUSTOM" else f" on op {op}"))
        return None
    if None in (op, versions, dtypes, constraints, excluded):
        return None
    return ClaimRule(op, versions, frozenset(dtypes), constraints, frozenset(excluded), custom_code)


def _op_list(check: Checker, path: tuple, value: Any) -> list[str] | None:
    """A non-empty list of builtin op names."""
    if not isinstance(value, list) or not value:
        check.error(path, f"expected a list of op names like [SOFTMAX], got {value!r}")
        return None
    ops = [_op_name(check, (*path, i), v, allow_any=False) for i, v in enumerate(value)]
    return ops if None not in ops else None


def _claims(check: Checker, value: Any) -> tuple[ClaimRule, ...] | None:
    path = ("claims",)
    if not isinstance(value, list) or not value:
        check.error(path, f"expected a non-empty list of claim rules, got {_describe(value)}")
        return None
    rules = [_claim(check, (*path, i), item) for i, item in enumerate(value)]
    return tuple(rules) if None not in rules else None


@dataclass(frozen=True)
class Key:
    """One key outside `compute:` as the loader accepts it; `accelsim configs --schema` prints these.

    Args:
        path: dotted key path ('link.bandwidth').
        value: what it takes ('rate', 'whole number >= 0', 'tflite or prefix').
        needed: 'required', 'accelerators', 'per kind' or 'optional'.
        default: the value an optional key has when left out ('' when it has none).
        meaning: one line.
        parse: the units parser for a quantity, else None (the checker is in the section's function).
    """

    path: str
    value: str
    needed: str
    default: str
    meaning: str
    parse: Any = None


# Every key outside `compute:`; the section parsers below take their key sets (and the units
# of quantities) from here, so the reference printed from this table is what the loader checks.
KEYS = (
    Key("name", "one-line text", "required", "", "unique within a system; reports name the device by it"),
    Key("kind", "a registered kind", "required", "", "what the file describes; the kinds are listed below"),
    Key("clock", "frequency", "required", "", "clock of the compute units", units.parse_frequency),
    Key("calibration", "one-line text", "optional", "not calibrated", "'calibrated against <what>' or 'not "
        "calibrated: <why>'; reports and `benchmark` print it beside the host's name"),
    Key("compute", "mapping", "required", "", "the kind's compute fields (below)"),
    Key("memory.levels", "mapping level name -> level", "required", "", "the device's memories, fastest first; "
        "names are letters, digits and _ ('link' is host memory over the link); rules in accelsim.memory"),
    Key("memory.levels.NAME.bandwidth", "rate", "required", "", "bandwidth of the level as this device sees it",
        units.parse_rate),
    Key("memory.levels.NAME.size", "size", "optional", "unbounded", "capacity; a working set that does not fit "
        "spills to the level below", units.parse_size),
    Key("memory.levels.NAME.latency", "time", "optional", "0 s", "paid once by every node moving bytes on it",
        units.parse_time),
    Key("memory.levels.NAME.energy", "energy per byte", "optional", "0 pJ/B", "per byte moved on it",
        units.parse_energy_per_byte),
    Key("memory.levels.NAME.static_power", "power", "optional", "0 W", "burnt for the whole inference",
        units.parse_power),
    Key("memory.weights", "a level or link", "optional", "the last level", "where weights live; what is not "
        "cached is read from here at every inference (streamed)"),
    Key("memory.cache", "a level above weights", "optional", "", "caches weights in model order, a whole layer at "
        "a time while they fit (the Edge TPU's parameter cache); none: every weight streams"),
    Key("memory.activations", "a level", "optional", "the first level", "where nodes read and write activations"),
    Key("energy.mac", "mapping dtype -> energy", "optional", "", "energy per MAC by dtype; an unlisted dtype pays "
        "the dearest listed entry"),
    Key("energy.static_power", "power", "optional", "0 W", "of the compute unit, burnt for the whole inference",
        units.parse_power),
    Key("link.bandwidth", "rate", "accelerators", "", "host <-> device transfers", units.parse_rate),
    Key("link.latency", "time", "optional", "0 s", "fixed time per transfer", units.parse_time),
    Key("link.call_overhead", "time", "optional", "0 s", "driver/runtime time per delegate invocation",
        units.parse_time),
    Key("link.shared_memory", "true or false", "optional", "false", "tensors are shared with the host, not "
        "copied over the link"),
    Key("link.energy", "energy per byte", "optional", "0 pJ/B", "per byte over the link (copies, streamed "
        "weights, parameter loads)", units.parse_energy_per_byte),
    Key("claims", "list of claim rules", "accelerators", "", "which nodes the accelerator takes (syntax below)"),
    Key("partition.policy", or_list(PARTITION_KINDS), "optional", "tflite", "tflite: every claimed node, "
        "grouped as TFLite does; prefix: only claimed nodes before the first unclaimed one (Edge TPU); cost: "
        "TFLite's partitions minus those that do not pay for themselves (all subsets searched up to 12 "
        "partitions, greedy beyond)"),
    Key("partition.objective", or_list(OBJECTIVES), "optional", "latency", "what policy cost minimises: "
        "simulated latency or energy per inference"),
    Key("partition.max_delegated_partitions", "whole number >= 0", "optional", "0", "keep the largest N "
        "partitions; 0 keeps all"),
    Key("partition.min_nodes_per_partition", "whole number >= 0", "optional", "0", "smaller partitions stay "
        "on the host"),
    Key("numerics.mode", or_list(NUMERICS_MODES), "optional", "reference", "reference: bit-exact; float16: "
        "float math in half precision; rounding: requantization rounds with numerics.rounding"),
    Key("numerics.rounding", or_list(ROUNDING_MODES), "with mode rounding", "", "how requantization rounds"),
)


def _section(name: str) -> dict[str, Key]:
    """The keys directly under `name` ('link' -> {'bandwidth': Key, ...}; 'memory.levels.NAME' -> {'size': ...})."""
    prefix = name + "."
    return {k.path[len(prefix):]: k for k in KEYS if k.path.startswith(prefix) and "." not in k.path[len(prefix):]}


def _count(check: Checker, path: tuple, value: Any, spec: Field) -> int | None:
    number = check.whole(path, value, spec.minimum, spec.example)
    if number is not None and number % spec.multiple_of:
        check.error(path, f"expected a multiple of {spec.multiple_of}, got {number}")
        return None
    return number


# One checker per accelsim.kinds.FIELD_TYPES entry: (checker, path, value, field) -> value or None.
_FIELD_CHECKS = {
    "count": _count,
    "fraction": lambda check, path, value, spec: check.fraction(path, value),
    "number": lambda check, path, value, spec: check.positive(path, value),
    "choice": lambda check, path, value, spec: check.choice(path, value, spec.choices),
    "dtype_rates": lambda check, path, value, spec: _rates(check, path, value),
}


def _compute(check: Checker, kind: Kind, value: Any):
    """The kind's compute dataclass from the `compute:` mapping, checked field by field."""
    path = ("compute",)
    fields = kind.fields
    body = check.mapping(path, value, [f.name for f in fields if f.required],
                         [f.name for f in fields if not f.required])
    if body is None:
        return None
    parts = {f.name: _FIELD_CHECKS[f.type](check, (*path, f.name), body[f.name], f) for f in fields if f.name in body}
    complete = all(f.name in parts for f in fields if f.required) and None not in parts.values()
    return kind.compute(**parts) if complete else None


def _rates(check: Checker, path: tuple, value: Any) -> tuple[tuple[str, float], ...] | None:
    body = check.mapping(path, value, (), DTYPES)
    if body is None:
        return None
    if not body and not value:
        check.error(path, "expected at least one dtype, like {float32: 8, int8: 32}")
        return None
    rates = {k: check.positive((*path, k), v) for k, v in body.items()}
    if None in rates.values() or len(rates) != len(value):
        return None
    return tuple(sorted(rates.items()))


_LEVEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LEVELS_EXPECT = "a mapping of level name -> {size, bandwidth, latency}, fastest first, like {sram: {size: 8 MiB, " \
                 "bandwidth: 64 GB/s}}"


def _level(check: Checker, path: tuple, name: str, value: Any) -> Level | None:
    if name == LINK:
        check.error(path, f"{LINK!r} means host memory over the link; give the level another name")
        return None
    if not _LEVEL_NAME.fullmatch(name):
        check.error(path, f"expected a level name of letters, digits and _ like sram, got {name!r}")
        return None
    keys = _section("memory.levels.NAME")
    body = check.mapping(path, value, ("bandwidth",), [k for k in keys if k != "bandwidth"])
    if body is None:
        return None
    parts = {k: check.unit((*path, k), v, keys[k].parse) for k, v in body.items()}
    return Level(name, **parts) if "bandwidth" in parts and None not in parts.values() else None


def _memory(check: Checker, value: Any, has_link: bool) -> Memory | None:
    path = ("memory",)
    body = check.mapping(path, value, ("levels",), [k for k in _section("memory") if k != "levels"])
    if body is None:
        return None
    given = body.get("levels", _INVALID)
    levels = None
    if isinstance(given, dict) and given:
        parsed = [_level(check, (*path, "levels", name), name, v) for name, v in given.items()]
        levels = tuple(parsed) if None not in parsed else None
    elif given is not _INVALID:
        check.error((*path, "levels"), f"expected {_LEVELS_EXPECT}, got {_describe(given)}")
    if levels is None:
        return None  # the other keys name levels; with the levels in error there is nothing to check them against
    names = tuple(lvl.name for lvl in levels)
    homes = (*names, LINK) if has_link else names

    def place(key: str, choices: tuple[str, ...], default: str | None) -> str | None:
        if key not in body:
            return default
        return check.choice((*path, key), body[key], choices, f"a level name ({_choices_text(choices)})")

    weights = place("weights", homes, names[-1])
    activations = place("activations", names, names[0])
    cache = place("cache", names, None)
    if weights is None or activations is None or ("cache" in body and cache is None):
        return None
    if cache is not None and homes.index(cache) >= homes.index(weights):
        check.error((*path, "cache"), f"a cache must be a level above where the weights live ({weights!r}), "
                                      f"got {cache!r}")
        return None
    return Memory(levels, weights, activations, cache)


def _link(check: Checker, value: Any) -> Link | None:
    keys = _section("link")
    body = check.mapping(("link",), value, ("bandwidth",), [k for k in keys if k != "bandwidth"])
    if body is None:
        return None
    parts: dict[str, Any] = {k: check.unit(("link", k), v, keys[k].parse) for k, v in body.items()
                             if keys[k].parse is not None}
    if "shared_memory" in body:
        parts["shared_memory"] = check.boolean(("link", "shared_memory"), body["shared_memory"])
    return Link(**parts) if "bandwidth" in parts and None not in parts.values() else None


def _energy(check: Checker, value: Any) -> Energy | None:
    path = ("energy",)
    body = check.mapping(path, value, (), tuple(_section("energy")))
    if body is None:
        return None
    parts: dict[str, Any] = {}
    if "mac" in body:
        table = check.mapping((*path, "mac"), body["mac"], (), DTYPES)
        if table is not None:
            energies = {k: check.unit((*path, "mac", k), v, units.parse_energy) for k, v in table.items()}
            parts["mac"] = tuple(sorted(energies.items())) if None not in energies.values() else None
        else:
            parts["mac"] = None
    if "static_power" in body:
        parts["static_power"] = check.unit((*path, "static_power"), body["static_power"],
                                           _section("energy")["static_power"].parse)
    return Energy(**parts) if None not in parts.values() else None


def _partition(check: Checker, value: Any) -> PartitionPolicy | None:
    path = ("partition",)
    body = check.mapping(path, value, (), tuple(_section("partition")))
    if body is None:
        return None
    parts: dict[str, Any] = {}
    if "policy" in body:
        parts["kind"] = check.choice((*path, "policy"), body["policy"], PARTITION_KINDS)
    if "objective" in body:
        parts["objective"] = check.choice((*path, "objective"), body["objective"], OBJECTIVES)
    for key in ("max_delegated_partitions", "min_nodes_per_partition"):
        if key in body:
            parts[key] = check.whole((*path, key), body[key], 0, 1)
    return PartitionPolicy(**parts) if None not in parts.values() else None


def _numerics(check: Checker, value: Any) -> Numerics | None:
    path = ("numerics",)
    body = check.mapping(path, value, (), tuple(_section("numerics")))
    if body is None:
        return None
    mode = check.choice((*path, "mode"), body["mode"], NUMERICS_MODES) if "mode" in body else "reference"
    rounding = None
    if "rounding" in body:
        if mode != "rounding":
            check.error((*path, "rounding"), f"only allowed with mode 'rounding', not {mode!r}")
            return None
        rounding = check.choice((*path, "rounding"), body["rounding"], ROUNDING_MODES)
    elif mode == "rounding":
        check.error((*path, "rounding"), f"required with mode 'rounding'; one of {_choices_text(ROUNDING_MODES)}")
        return None
    if mode is None or (mode == "rounding" and rounding is None):
        return None
    return Numerics(mode, rounding)


_TOP_KEYS = tuple(dict.fromkeys(k.path.split(".")[0] for k in KEYS))


def _calibration(check: Checker, value: Any) -> str | None:
    """The calibration statement: one line starting with one of CALIBRATION_STARTS."""
    text = check.text(("calibration",), value)
    if text is not None and not text.startswith(CALIBRATION_STARTS):
        check.error(("calibration",), f"expected 'calibrated against <what>' or 'not calibrated: <why>', got {text!r}")
        return None
    return text


def _check_document(doc: _Document, source: str, kinds: KindRegistry, overridden: frozenset = frozenset(),
                    prior: Sequence[tuple[int, str]] = ()) -> HardwareConfig:
    """Validate a whole document and build its HardwareConfig, or raise one ConfigError with every problem."""
    check = Checker(source, doc.lines, overridden)
    check.errors.extend(prior)
    config = None
    data = doc.data
    if data is _INVALID:
        pass  # the reader already said why
    elif not isinstance(data, dict):
        check.error((), f"expected a mapping of hardware settings at the top level, got {_describe(data)}")
    elif "kind" not in data and {"models", "variants"} & data.keys():
        check.error((), f"this is an experiment, not a hardware config; run it with `accelsim run {source}`")
    else:
        name = check.choice(("kind",), data.get("kind", _INVALID), kinds.names())
        kind = kinds.get(name) if name is not None else None
        accelerator = kind is not None and kind.is_accelerator
        required = ("name", "kind", "clock", "compute", "memory", *(("link", "claims") if accelerator else ()))
        body = check.mapping((), data, required, [k for k in _TOP_KEYS if k not in required])
        parts: dict[str, Any] = {}
        if "name" in body:
            parts["name"] = check.text(("name",), body["name"])
        if "clock" in body:
            parts["clock"] = check.unit(("clock",), body["clock"], units.parse_frequency)
        if "calibration" in body:
            parts["calibration"] = _calibration(check, body["calibration"])
        if kind is not None:
            parts["kind"] = kind.name
            parts["kind_record"] = kind
            if "compute" in body:
                parts["compute"] = _compute(check, kind, body["compute"])
        if "memory" in body:
            # an accelerator without its (required) link is reported once, as the missing key
            parts["memory"] = _memory(check, body["memory"], "link" in body or accelerator)
        if "energy" in body:
            parts["energy"] = _energy(check, body["energy"])
        if "link" in body:
            parts["link"] = _link(check, body["link"])
        if "claims" in body:
            parts["claims"] = _claims(check, body["claims"])
        if "partition" in body:
            parts["partition"] = _partition(check, body["partition"])
        if "numerics" in body:
            parts["numerics"] = _numerics(check, body["numerics"])
        if not check.errors and None not in parts.values():
            config = HardwareConfig(**parts, source=source, document=doc)
            for path, message in kind.check(config):  # the kind's own rules across keys (Kind.check)
                check.error(path, message)
    if check.errors or config is None:
        raise ConfigError([message for _, message in sorted(check.errors, key=lambda e: e[0])])
    return config


# ---------------------------------------------------------------------------------------------
# Public API.


def load_hardware(path: str | Path, kinds: KindRegistry = default_registry) -> HardwareConfig:
    """Read and check one hardware YAML file.

    Args:
        kinds: the kinds a file may name.

    Raises:
        ConfigError: the file cannot be read or breaks any rule; lists every problem.
    """
    source = str(path)
    doc, errors = read_document(source)
    if doc is None:
        raise ConfigError([message for _, message in errors])
    return _check_document(doc, source, kinds, prior=errors)


def load_system(host_path: str | Path, accel_paths: Iterable[str | Path],
                kinds: KindRegistry = default_registry) -> System:
    """Load a host (a kind whose role is host) and its accelerators; names must be unique.

    Args:
        kinds: the kinds the files may name.

    Raises:
        ConfigError: every problem of every file, plus role and name clashes.
    """
    errors: list[str] = []

    def load(path) -> HardwareConfig | None:
        try:
            return load_hardware(path, kinds)
        except ConfigError as exc:
            errors.extend(exc.errors)
            return None

    host = load(host_path)
    accelerators: list[HardwareConfig | None] = []
    given: set[str] = set()
    for path in accel_paths:
        if str(path) in given:
            errors.append(f"{path}: given twice; each accelerator joins the system once (to run it twice, "
                          "copy the file and give the copy another name)")
            continue
        given.add(str(path))
        accelerators.append(load(path))
    if host is not None and host.is_accelerator:
        errors.append(_located(host, ("kind",), f"{host.name} is an accelerator config (kind {host.kind}), not a "
                                                f"host; a host is kind {or_list(kinds.names_with_role('host'))} "
                                                "(give accelerators with --hw, or in an experiment variant's "
                                                "accelerators)"))
    for accel in accelerators:
        if accel is not None and not accel.is_accelerator:
            errors.append(_located(accel, ("kind",), f"{accel.name} is a host config (kind {accel.kind}); use "
                                                     "--host (in an experiment: host:); an accelerator is kind "
                                                     f"{or_list(kinds.names_with_role('accelerator'))}"))
    seen: dict[str, HardwareConfig] = {}
    for config in (host, *accelerators):
        if config is None or config.name in seen and seen[config.name].source == config.source:
            continue  # the host file given as an accelerator too: its role error says enough
        if config.name in seen:
            other = seen[config.name].source
            errors.append(_located(config, ("name",), f"{config.name!r} is also the name in {other}"))
        seen.setdefault(config.name, config)
    if errors:
        raise ConfigError(errors)
    return System(host, tuple(accelerators))


def _located(config: HardwareConfig, path: tuple, message: str) -> str:
    line = config.document.lines.get(path) if config.document is not None else None
    where = f"{config.source}:{line}" if line else config.source
    return f"{where}: {_keypath(path)}: {message}"


def to_spec(config: HardwareConfig) -> AcceleratorSpec:
    """The delegate-side view of an accelerator: name, claims, partition policy, numerics.

    Raises:
        ConfigError: the config declares no claims (a host, not an accelerator).
    """
    if not config.claims:
        raise ConfigError([f"{config.source}: {config.name!r} declares no claims; it is not an accelerator"])
    return AcceleratorSpec(config.name, config.claims, config.partition, config.numerics)


def _parse_key_path(text: str) -> tuple | None:
    if not isinstance(text, str):
        return None
    parts: list = []
    for segment in text.split("."):
        tokens = _KEY_PATH.findall(segment)
        if "".join(tokens) != segment or not tokens or tokens[0].startswith("["):
            return None
        parts.extend(int(t[1:-1]) if t.startswith("[") else t for t in tokens)
    return tuple(parts)


def _set_path(data: Any, path: tuple, value: Any) -> str | None:
    """Put `value` at `path` inside `data` (creating missing mappings); a reason if impossible."""
    node = data
    for depth, part in enumerate(path[:-1]):
        nxt = path[depth + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or not 0 <= part < len(node):
                return f"{_keypath(path[:depth + 1])} is not an item of a list"
            node = node[part]
            continue
        if not isinstance(node, dict):
            return f"{_keypath(path[:depth])} is not a mapping"
        if part not in node:
            if isinstance(nxt, int):
                return f"{_keypath(path[:depth + 1])} is not a list"
            node[part] = {}
        node = node[part]
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or not 0 <= last < len(node):
            return f"{_keypath(path)} is not an item of a list"
    elif not isinstance(node, dict):
        return f"{_keypath(path[:-1])} is not a mapping"
    node[last] = value
    return None


def apply_overrides(config: HardwareConfig, overrides: Mapping[str, Any]) -> HardwareConfig:
    """A new config with keys replaced by path, e.g. {"link.bandwidth": "1 GB/s", "compute.rows": 32}.

    Values are written as in YAML ('1 GB/s', 32, [1, 3]) and checked exactly as a file is.

    Raises:
        ConfigError: a malformed or impossible key path, or a value that breaks a rule; the
            message names the key path.
    """
    if config.document is None:
        raise ConfigError([f"{config.source}: built in memory, not from YAML; nothing to override"])
    data = copy.deepcopy(config.document.data)
    errors: list[str] = []
    overridden: set[tuple] = set()
    for key, value in overrides.items():
        path = _parse_key_path(key)
        if path is None:
            errors.append(f"{config.source}: override {key!r}: not a key path like 'link.bandwidth' or "
                          "'claims[0].versions'")
            continue
        why = _set_path(data, path, copy.deepcopy(value))
        if why is not None:
            errors.append(f"{config.source}: override {key}: {why}")
            continue
        overridden.add(path)
    if errors:
        raise ConfigError(errors)
    lines = {p: line for p, line in config.document.lines.items()
             if not any(p[:len(o)] == o for o in overridden)}
    kinds = default_registry.with_kinds(config.kind_record)
    return _check_document(_Document(data, lines), config.source, kinds, frozenset(overridden))


__all__ = [
    "ConfigError",
    "HardwareConfig",
    "Link",
    "Memory",
    "System",
    "apply_overrides",
    "load_hardware",
    "load_system",
    "to_spec",
]
