"""A phone's NNAPI in a config file (`kind: nnapi`): the Android API level, the delegate's options, the drivers.

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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.delegates.nnapi import NnapiDriver, NnapiOptions, NnapiSpec, feature_level
from accelsim.delegates.nnapi_rules import EXECUTION_PREFERENCES, FEATURE_LEVELS, OPTION_DEFAULTS, REFERENCE_DEVICE
from accelsim.hardware.config_yaml import INVALID, Checker, ConfigError, Document, describe

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
