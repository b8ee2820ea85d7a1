"""Claims in a hardware config: the op, versions, dtypes and constraints a device claims, checked.

The claim syntax (what `claims:` takes) and the vocabulary it is checked against: builtin op names
(TensorFlow spellings accepted, `TF_OP_NAMES`), versions, dtypes and the constraints of
`delegates.spec.CONSTRAINT_DOCS`.

NNAPI configs (`kind: nnapi`, below `KIND`): what a phone's NNAPI drivers claim, its options and drivers.
A phone's NNAPI in a config file (`kind: nnapi`): the Android API level, the delegate's options, the drivers.

Each driver is one of the phone's accelerators behind its vendor's NNAPI HAL: a hardware config (`hardware:`,
a file beside this one), the keys NNAPI changes in it (`overrides:`: how an NNAPI execution reaches it — the
per-execution overhead as `link.call_overhead`, the copies through NNAPI's shared memory pool as the link's
bandwidth and latency), its feature level and the NNAPI operations and types it supports. A driver named
`nnapi-reference` is the CPU reference implementation and names no hardware. `accelsim.hardware.config.load_system`
reads such a file given as an accelerator: the drivers become the system's accelerators and the NNAPI policy
(`accelsim.delegates.nnapi`) decides what they run.

    name: nnapi_pixel3
    kind: nnapi
    android_api: 29
    options: {max_number_delegated_partitions: 3, allow_fp16: false}
    drivers:
      - name: qti-dsp
        hardware: hexagon_dsp.yaml
        feature_level: 29
        overrides: {link.call_overhead: 900 us}
        supports: [{ops: [CONV_2D, ADD], dtypes: [uint8]}]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.delegates.nnapi import NnapiDriver, NnapiOptions, NnapiSpec, feature_level
from accelsim.delegates.nnapi_rules import EXECUTION_PREFERENCES, FEATURE_LEVELS, OPTION_DEFAULTS, REFERENCE_DEVICE
from accelsim.delegates.spec import (
    ANY_OP,
    BOOL_CONSTRAINTS,
    INT_CONSTRAINTS,
    MAX_VERSION,
    NAME_CONSTRAINTS,
    PADDINGS,
    ClaimRule,
)
from accelsim.hardware.config_yaml import INVALID, Checker, ConfigError, Document, describe, suggest
from accelsim.runtime.ir import BUILTIN_OPS, TENSOR_TYPES

DTYPES = tuple(sorted(name.lower() for name in TENSOR_TYPES))


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
    if value is INVALID:
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
    if value is INVALID:
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
    hint = suggest(value.upper(), BUILTIN_OPS) if isinstance(value, str) else ""
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


def parse_claims(check: Checker, value: Any) -> tuple[ClaimRule, ...] | None:
    path = ("claims",)
    if not isinstance(value, list) or not value:
        check.error(path, f"expected a non-empty list of claim rules, got {describe(value)}")
        return None
    rules = [_claim(check, (*path, i), item) for i, item in enumerate(value)]
    return tuple(rules) if None not in rules else None


# -- NNAPI configs (kind: nnapi) ------------------------------------------------------------

KIND = "nnapi"
_LEVELS = ", ".join(f"{k} ({v})" for k, v in FEATURE_LEVELS.items())


@dataclass(frozen=True)
class DriverFile:
    """One driver entry: its NNAPI facts, and the hardware file and overrides that make its device."""

    driver: NnapiDriver
    hardware: Path | None
    overrides: dict


@dataclass(frozen=True)
class NnapiFile:
    """A `kind: nnapi` file as read: the NNAPI spec and each driver's hardware."""

    name: str
    spec: NnapiSpec
    drivers: tuple[DriverFile, ...]
    document: Document
    source: str


def is_nnapi(doc: Document | None) -> bool:
    return doc is not None and isinstance(doc.data, dict) and doc.data.get("kind") == KIND


def _level(check: Checker, path: tuple, value: Any) -> int | None:
    try:
        return feature_level(value)
    except ValueError:
        check.error(path, f"unknown NNAPI feature level {value!r}; valid: {_LEVELS}")
        return None


def _options(check: Checker, value: Any) -> NnapiOptions | None:
    body = check.mapping(("options",), value, (), tuple(OPTION_DEFAULTS))
    if body is None:
        return None
    parts: dict[str, Any] = {}
    for key, v in body.items():
        path = ("options", key)
        if key == "accelerator_name":
            parts[key] = check.text(path, v) if v is not None else "\0none"
        elif key == "execution_preference":
            parts[key] = check.choice(path, v, EXECUTION_PREFERENCES)
        elif key == "max_number_delegated_partitions":
            if isinstance(v, bool) or not isinstance(v, int):
                check.error(path, f"expected a whole number (<= 0: no limit) like 3, got {v!r}")
                parts[key] = None
            else:
                parts[key] = v
        else:
            parts[key] = check.boolean(path, v)
    if parts.get("accelerator_name") == "\0none":
        del parts["accelerator_name"]  # null: no accelerator named (the default)
    return NnapiOptions(**parts) if None not in parts.values() else None


def _supports(check: Checker, path: tuple, value: Any) -> dict | None:
    if not isinstance(value, list) or not value:
        check.error(path, f"expected a list like [{{ops: [CONV_2D], dtypes: [uint8]}}], got {describe(value)}")
        return None
    out: dict[str, set] = {}
    for i, item in enumerate(value):
        body = check.mapping((*path, i), item, ("ops",), ("dtypes",))
        if body is None or "ops" not in body:
            return None
        ops, dtypes = body["ops"], body.get("dtypes", [])
        if not isinstance(ops, list) or not ops or not all(isinstance(o, str) for o in ops):
            check.error((*path, i, "ops"), f"expected a list of NNAPI operation names, got {ops!r}")
            return None
        if not isinstance(dtypes, list) or not all(isinstance(d, str) for d in dtypes):
            check.error((*path, i, "dtypes"), f"expected a list of types like [uint8], got {dtypes!r}")
            return None
        for op in ops:
            out.setdefault(op.upper(), set()).update(d.lower() for d in dtypes)
    return out


def _driver(check: Checker, path: tuple, value: Any, base: Path) -> DriverFile | None:
    body = check.mapping(path, value, ("name", "feature_level"), ("hardware", "overrides", "supports"))
    if body is None:
        return None
    name = check.text((*path, "name"), body["name"]) if "name" in body else None
    level = _level(check, (*path, "feature_level"), body["feature_level"]) if "feature_level" in body else None
    if name == REFERENCE_DEVICE:
        extra = [k for k in ("hardware", "overrides", "supports") if k in body]
        if extra:
            check.error((*path, extra[0]), f"{REFERENCE_DEVICE} is NNAPI's CPU implementation: it names no "
                                           "hardware and supports every operation")
            return None
        return DriverFile(NnapiDriver(name, level), None, {}) if level is not None else None
    for key in ("hardware", "supports"):
        if key not in body:
            check.error((*path, key), f"required key missing (every driver but {REFERENCE_DEVICE} has it)")
    if "hardware" not in body or "supports" not in body:
        return None
    hardware = body["hardware"]
    if not isinstance(hardware, str) or not (base / hardware).is_file():
        check.error((*path, "hardware"), f"expected a hardware config file beside this one, got {hardware!r}")
        return None
    overrides = body.get("overrides", {})
    if not isinstance(overrides, dict):
        check.error((*path, "overrides"), f"expected a mapping of key path -> value, got {describe(overrides)}")
        return None
    supports = _supports(check, (*path, "supports"), body["supports"])
    if None in (name, level, supports):
        return None
    return DriverFile(NnapiDriver(name, level, supports), base / hardware, dict(overrides))


def read_nnapi(doc: Document, source: str) -> NnapiFile:
    """Check a `kind: nnapi` document and build its spec.

    Raises:
        ConfigError: every problem, each at file:line: key, with the valid choices.
    """
    check = Checker(source, doc.lines)
    data = doc.data
    body = check.mapping((), data, ("name", "kind", "android_api", "drivers"), ("options", "calibration"))
    base = Path(source).parent
    name = check.text(("name",), body["name"]) if body and "name" in body else None
    api = _level(check, ("android_api",), body["android_api"]) if body and "android_api" in body else None
    options = _options(check, body.get("options", {})) if body is not None else None
    drivers: list = []
    given = body.get("drivers", INVALID) if body is not None else INVALID
    if given is not INVALID:
        if not isinstance(given, list) or not given:
            check.error(("drivers",), f"expected a non-empty list of NNAPI drivers (each {{name, feature_level, "
                                      f"hardware, supports}}, or {{name: {REFERENCE_DEVICE}, feature_level}}), "
                                      f"got {describe(given)}")
        else:
            drivers = [_driver(check, ("drivers", i), d, base) for i, d in enumerate(given)]
    spec = None
    if not check.errors and None not in (name, api, options) and drivers and None not in drivers:
        try:
            spec = NnapiSpec(api, tuple(d.driver for d in drivers), options)
        except ValueError as exc:
            key = ("options", "accelerator_name") if "accelerator" in str(exc) else ("drivers",)
            check.error(key, str(exc))
    if check.errors or spec is None:
        raise ConfigError([m for _, m in sorted(check.errors, key=lambda e: e[0])] or
                          [f"{source}: not a valid NNAPI config"])
    return NnapiFile(name, spec, tuple(drivers), doc, source)
