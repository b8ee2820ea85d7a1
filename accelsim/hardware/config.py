"""Hardware descriptions: YAML files -> frozen dataclasses, checked strictly.

Every problem is a `ConfigError` that says where and what, e.g.
``hw_configs/x.yaml:14: link.bandwidth: expected a rate like '320 MB/s', got 'fast'``.
A file is checked completely before anything is built: all its errors are collected and
raised together (first line: the first error). Files are read by `accelsim.hardware.config_yaml` (UTF-8,
`yaml.compose`, every key with its line; only plain scalars, lists and mappings, no duplicate keys).

Keys: `KEYS` below (everything outside `compute:`) and each kind's compute fields
(`accelsim.hardware.kinds`); claim syntax in `accelsim.hardware.claims`, constraints in
`accelsim.delegates.spec.CONSTRAINT_DOCS`.
`accelsim configs --schema` prints them all as one reference (`accelsim.hardware.config_docs`), and
`docs/hw_configs.md` is that text. Units as in `accelsim.core.units`: '500 MHz', '8 MiB',
'320 MB/s', '2 us'.

A kind's role says what a file of it describes: an accelerator (systolic, vector, npu, tensor) needs
`link` and `claims`; a host (cpu) may omit both. `apply_overrides` changes keys by path for
sweeps (`memory.levels.sram.bandwidth`). Whether activations fit the memory is checked when
a model is costed (`Hardware.costs`), since it depends on the model.

A file becomes an `accelsim.hardware.device.Device`: its `Hardware` (what cost models see) and its
`DelegationPolicy` (what delegation sees), split by the section table `accelsim.hardware.device.SECTIONS`.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.core import units
from accelsim.delegates.nnapi import nnapi_policy
from accelsim.delegates.spec import (
    NUMERICS_MODES,
    OBJECTIVES,
    PARTITION_KINDS,
    ROUNDING_MODES,
    DelegationPolicy,
    Numerics,
    PartitionPolicy,
)
from accelsim.hardware.claims import DTYPES, NnapiFile, is_nnapi, parse_claims, read_nnapi
from accelsim.hardware.config_yaml import (
    INVALID,
    Checker,
    ConfigError,
    Document,
    choices_text,
    copy_along,
    describe,
    lines_without,
    parse_key_path,
    read_document,
    set_path,
    shallow_copy,
)
from accelsim.hardware.device import POLICY, SECTIONS, Device, hardware_lines, numerics_precision
from accelsim.hardware.kinds import KindRegistry, default_registry
from accelsim.hardware.memory import LINK, Level, Memory
from accelsim.hardware.types import CALIBRATION_STARTS, Energy, Field, Hardware, Kind, Link, or_list

ASSIGN_POLICIES = ("order", "cost")


@dataclass(frozen=True)
class Assign:
    """How a system shares claimed nodes among its targets (an experiment variant's `assign`).

    'order': TFLite's — accelerators are applied in order and the first that claims a node takes
    it. 'cost': every claimed run of nodes goes to the target (an accelerator that claims it, or
    the host) that gives the least simulated `objective` (`accelsim.simulation.placement`).
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

    host: Device
    accelerators: tuple[Device, ...]
    assign: Assign = Assign()
    nnapi: NnapiFile | None = None  # the accelerators are NNAPI drivers and the NNAPI policy delegates


# ---------------------------------------------------------------------------------------------
# YAML -> plain data with lines.


# ---------------------------------------------------------------------------------------------
# Checking plain data and building the dataclasses.


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
        "names are letters, digits and _ ('link' is host memory over the link); rules in accelsim.hardware.memory"),
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


# One checker per accelsim.hardware.types.FIELD_TYPES entry: (checker, path, value, field) -> value or None.
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
    given = body.get("levels", INVALID)
    levels = None
    if isinstance(given, dict) and given:
        parsed = [_level(check, (*path, "levels", name), name, v) for name, v in given.items()]
        levels = tuple(parsed) if None not in parsed else None
    elif given is not INVALID:
        check.error((*path, "levels"), f"expected {_LEVELS_EXPECT}, got {describe(given)}")
    if levels is None:
        return None  # the other keys name levels; with the levels in error there is nothing to check them against
    names = tuple(lvl.name for lvl in levels)
    homes = (*names, LINK) if has_link else names

    def place(key: str, choices: tuple[str, ...], default: str | None) -> str | None:
        if key not in body:
            return default
        return check.choice((*path, key), body[key], choices, f"a level name ({choices_text(choices)})")

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
        check.error((*path, "rounding"), f"required with mode 'rounding'; one of {choices_text(ROUNDING_MODES)}")
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


def _check_document(doc: Document, source: str, kinds: KindRegistry, overridden: frozenset = frozenset(),
                    prior: Sequence[tuple[int, str]] = (), claims: tuple | None = None) -> Device:
    """Validate a whole document and build its Device, or raise one ConfigError with every problem.

    Args:
        claims: the document's claims as parsed before (apply_overrides, when no override touches them).
    """
    check = Checker(source, doc.lines, overridden)
    check.errors.extend(prior)
    device = None
    data = doc.data
    if data is INVALID:
        pass  # the reader already said why
    elif not isinstance(data, dict):
        check.error((), f"expected a mapping of hardware settings at the top level, got {describe(data)}")
    elif "kind" not in data and {"models", "variants"} & data.keys():
        check.error((), f"this is an experiment, not a hardware config; run it with `accelsim run {source}`")
    else:
        name = check.choice(("kind",), data.get("kind", INVALID), kinds.names())
        kind = kinds.get(name) if name is not None else None
        accelerator = kind is not None and kind.is_accelerator
        required = ("name", "kind", "clock", "compute", "memory", *(("link", "claims") if accelerator else ()))
        body = check.mapping((), data, required, [k for k in _TOP_KEYS if k not in required])
        parts: dict[str, Any] = {}  # the Hardware's fields
        policy: dict[str, Any] = {}  # the DelegationPolicy's, but its name
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
            policy["claims"] = claims if claims is not None else parse_claims(check, body["claims"])
        if "partition" in body:
            policy["partition"] = _partition(check, body["partition"])
        if "numerics" in body:
            policy["numerics"] = _numerics(check, body["numerics"])
        if not check.errors and None not in parts.values() and None not in policy.values():
            policy.setdefault("claims", ())
            hardware = Hardware(**parts, numerics_precision=numerics_precision(policy.get("numerics", Numerics())),
                                source=source, lines=hardware_lines(doc.lines))
            device = Device(hardware, DelegationPolicy(parts["name"], **policy), doc)
            # the kind's own rules across keys (Kind.check_policy, Kind.check)
            for path, message in [*kind.check_policy(device.policy), *kind.check(hardware)]:
                check.error(path, message)
    if check.errors or device is None:
        raise ConfigError([message for _, message in sorted(check.errors, key=lambda e: e[0])])
    return device


# ---------------------------------------------------------------------------------------------
# Public API.


def load_hardware(path: str | Path, kinds: KindRegistry = default_registry) -> Device:
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
                kinds: KindRegistry = default_registry, *, loaded: dict[str, Device] | None = None) -> System:
    """Load a host (a kind whose role is host) and its accelerators; names must be unique.

    Args:
        kinds: the kinds the files may name.
        loaded: configs already read, by path, and where those read now are kept: a caller loading several
            systems from the same files (an experiment's variants) reads each file once.

    Raises:
        ConfigError: every problem of every file, plus role and name clashes.
    """
    errors: list[str] = []

    def load(path) -> Device | None:
        if loaded is not None and str(path) in loaded:
            return loaded[str(path)]
        try:
            config = load_hardware(path, kinds)
        except ConfigError as exc:
            errors.extend(exc.errors)
            return None
        if loaded is not None:
            loaded[str(path)] = config
        return config

    host = load(host_path)
    accelerators: list[Device | None] = []
    given: set[str] = set()
    nnapi: NnapiFile | None = None
    accel_paths = list(accel_paths)
    for path in accel_paths:
        doc, _ = read_document(str(path))
        if is_nnapi(doc):
            try:
                nnapi = read_nnapi(doc, str(path))
                accelerators.extend(nnapi_drivers(nnapi))
            except ConfigError as exc:
                errors.extend(exc.errors)
            if len(accel_paths) > 1:
                errors.append(f"{path}: an NNAPI config brings the phone's accelerators as its drivers; give it "
                              "alone (without other accelerators)")
            continue
        if str(path) in given:
            errors.append(f"{path}: given twice; each accelerator joins the system once (to run it twice, "
                          "copy the file and give the copy another name)")
            continue
        given.add(str(path))
        accelerators.append(load(path))
    if host is not None and host.is_accelerator:
        errors.append(host.located(("kind",), f"{host.name} is an accelerator config (kind "
                                              f"{host.hardware.kind}), not a host; a host is kind "
                                              f"{or_list(kinds.names_with_role('host'))} (give accelerators with "
                                              "--hw, or in an experiment variant's accelerators)"))
    for accel in accelerators:
        if accel is not None and not accel.is_accelerator:
            errors.append(accel.located(("kind",), f"{accel.name} is a host config (kind {accel.hardware.kind}); "
                                                   "use --host (in an experiment: host:); an accelerator is kind "
                                                   f"{or_list(kinds.names_with_role('accelerator'))}"))
    seen: dict[str, Device] = {}
    for config in (host, *accelerators):
        if config is None or config.name in seen and seen[config.name].source == config.source:
            continue  # the host file given as an accelerator too: its role error says enough
        if config.name in seen:
            other = seen[config.name].source
            errors.append(config.located(("name",), f"{config.name!r} is also the name in {other}"))
        seen.setdefault(config.name, config)
    if errors:
        raise ConfigError(errors)
    return System(host, tuple(accelerators), nnapi=nnapi)


def load_devices(path: str | Path) -> list[Device]:
    """The devices one accelerator path brings: the file's device, or an NNAPI config's driver devices.

    Raises:
        ConfigError: the file, or a driver's hardware file, breaks a rule.
    """
    doc, _ = read_document(str(path))
    if is_nnapi(doc):
        return nnapi_drivers(read_nnapi(doc, str(path)))
    return [load_hardware(path)]


def nnapi_drivers(nnapi: NnapiFile) -> list[Device]:
    """The devices of an NNAPI file's drivers (the reference CPU driver has none): each hardware file with the
    driver's name and overrides, numerics float16 when `allow_fp16` relaxes float32, no claims of its own.

    Raises:
        ConfigError: a driver's hardware file or overrides break a rule.
    """
    mode = "float16" if nnapi.spec.options.allow_fp16 else "reference"
    out = []
    for d in nnapi.drivers:
        if d.hardware is None:
            continue
        changes = {**d.overrides, "name": d.driver.name, "numerics.mode": mode, "partition.policy": "tflite",
                   "partition.max_delegated_partitions": 0, "partition.min_nodes_per_partition": 0}
        device = apply_overrides(load_hardware(d.hardware), changes)
        out.append(device.with_policy(claims=nnapi_policy(d.driver.name, False).claims))
    return out


def identity(system: System, *, hardware: bool = True) -> dict[str, Any]:
    """What a system is, as plain data: the one key of design-point ids, shared analyses and their batches.

    Each device is its kind and its YAML data after the overrides: the input its `Hardware` and
    its `DelegationPolicy` are resolved from (devices come from files: `load_system` then
    `apply_overrides`, so change a device with `apply_overrides` and its identity follows), plain
    data that JSON writes the same way in every process and that holds no file location, so a
    results cache survives moving the checkout. repr() of the resolved devices would do neither: a
    claim's dtypes are a frozenset, whose order follows Python's per-process string hashing, and a
    kind record prints its functions' addresses.

    Args:
        hardware: whether the hardware sections count (`accelsim.hardware.device.SECTIONS`: those that fill
            a `Hardware`); without them, only what delegation sees is left: each accelerator's
            policy sections (those that fill its `DelegationPolicy`) and the system's `assign`
            (the host claims nothing).
    """
    def one(c: Device) -> dict[str, Any]:
        if hardware:
            return {"kind": c.hardware.kind, "yaml": c.document.data}
        return {"yaml": {k: v for k, v in c.document.data.items() if SECTIONS.get(k) == POLICY}}

    accelerators = [one(a) for a in system.accelerators]
    if system.nnapi is not None:  # the file, and the spec as resolved (options a run may have changed)
        spec = system.nnapi.spec
        accelerators.append({"nnapi": system.nnapi.document.data, "options": dataclasses.asdict(spec.options),
                             "android_api": spec.android_api,
                             "drivers": [[d.name, d.level, {k: sorted(v) for k, v in sorted(d.supports.items())}]
                                         for d in spec.drivers]})
    if not hardware:
        return {"accelerators": accelerators, "assign": dataclasses.asdict(system.assign)}
    return {"host": one(system.host), "accelerators": accelerators, "assign": dataclasses.asdict(system.assign)}


def accelerator_policy(device: Device) -> DelegationPolicy:
    """The delegation policy an accelerator's delegate is built from: name, claims, partition policy, numerics.

    Raises:
        ConfigError: the device declares no claims (a host, not an accelerator).
    """
    if not device.policy.claims:
        raise ConfigError([f"{device.source}: {device.name!r} declares no claims; it is not an accelerator"])
    return device.policy


def apply_overrides(config: Device, overrides: Mapping[str, Any]) -> Device:
    """A new config with keys replaced by path, e.g. {"link.bandwidth": "1 GB/s", "compute.rows": 32}.

    Values are written as in YAML ('1 GB/s', 32, [1, 3]) and checked exactly as a file is.

    Raises:
        ConfigError: a malformed or impossible key path, or a value that breaks a rule; the
            message names the key path.
    """
    if config.document is None:
        raise ConfigError([f"{config.source}: built in memory, not from YAML; nothing to override"])
    data = shallow_copy(config.document.data)
    errors: list[str] = []
    overridden: set[tuple] = set()
    for key, value in overrides.items():
        path = parse_key_path(key)
        if path is None:
            errors.append(f"{config.source}: override {key!r}: not a key path like 'link.bandwidth' or "
                          "'claims[0].versions'")
            continue
        copy_along(data, path)  # the base config's own data stays as it was; the rest is shared, read only
        why = set_path(data, path, copy.deepcopy(value))
        if why is not None:
            errors.append(f"{config.source}: override {key}: {why}")
            continue
        overridden.add(path)
    if errors:
        raise ConfigError(errors)
    lines = lines_without(config.document.lines, frozenset(overridden))
    kinds = default_registry.with_kinds(config.hardware.kind_record)
    # Claims no override touches are the base config's, already checked: parsed again they come out the same.
    same_claims = config.policy_from_document and not any(o[0] in ("claims", "kind") for o in overridden)
    return _check_document(Document(data, lines), config.source, kinds, frozenset(overridden),
                           claims=config.policy.claims if same_claims else None)


__all__ = [
    "ConfigError",
    "System",
    "accelerator_policy",
    "apply_overrides",
    "load_hardware",
    "load_system",
]
