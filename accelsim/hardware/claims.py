"""Claims in a hardware config: the op, versions, dtypes and constraints a device claims, checked.

The claim syntax (what `claims:` takes) and the vocabulary it is checked against: builtin op names
(TensorFlow spellings accepted, `TF_OP_NAMES`), versions, dtypes and the constraints of
`delegates.spec.CONSTRAINT_DOCS`.
"""

from __future__ import annotations

import re
from typing import Any

from accelsim.delegates.spec import (
    ANY_OP,
    BOOL_CONSTRAINTS,
    INT_CONSTRAINTS,
    MAX_VERSION,
    NAME_CONSTRAINTS,
    PADDINGS,
    ClaimRule,
)
from accelsim.hardware.config_yaml import INVALID, Checker, describe, suggest
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
