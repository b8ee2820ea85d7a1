"""A device as loaded from a hardware config: its hardware facts and its delegation policy, two frozen types.

Vela keeps the chip (`ArchitectureFeatures`) apart from how it is compiled for (`CompilerOptions`);
a device here is the same pair, read from one YAML file (`accelsim.hardware.config` reads and checks it):

- `Hardware`: clock, compute, memory levels, link, energy, calibration, the kind and its record. It is
  all a cost model sees: `Kind.costs(works, hardware)`, the modules of `accelsim.hardware.cost`, memory,
  energy and the schedule take a `Hardware` and nothing else.
- `accelsim.delegates.spec.DelegationPolicy`: the delegate's name, claims, partition policy and
  limits, numerics. It is all delegation sees: `AcceleratorDelegate(policy)`, the claim checks,
  whatif's claim analysis. Where placement keeps nodes on the host is an argument of delegation,
  never a field of a policy.
- `Device`: the two, with the YAML they were read from (`document`: overrides and `identity` work
  on it).

`SECTIONS` says which type each top-level YAML section fills, derived from the two types' fields;
`accelsim.hardware.config.identity` and the analysis key read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from accelsim.delegates.spec import DelegationPolicy, Numerics
from accelsim.hardware.config_yaml import ConfigError, Document
from accelsim.hardware.types import Hardware, located


@dataclass(frozen=True)
class Device:
    """One accelerator or host: its hardware, its delegation policy and the YAML they were read from.

    Raises:
        ValueError: the hardware and the policy name different devices, or the hardware's
            `numerics_precision` is not the policy's numerics'.
    """

    hardware: Hardware
    policy: DelegationPolicy
    document: Document | None = field(default=None, compare=False, hash=False, repr=False)
    # Whether `policy` is what `document` says (False after with_policy): only then may apply_overrides reuse the
    # policy's parsed claims instead of parsing the document's again.
    policy_from_document: bool = field(default=True, compare=False, repr=False)

    def __post_init__(self):
        if self.policy.name != self.hardware.name:
            raise ValueError(f"hardware {self.hardware.name!r} and policy {self.policy.name!r} name different devices")
        if self.hardware.numerics_precision != numerics_precision(self.policy.numerics):
            raise ValueError(f"{self.name}: hardware numerics_precision {self.hardware.numerics_precision!r} is not "
                             f"that of numerics mode {self.policy.numerics.mode!r}")

    @property
    def name(self) -> str:
        return self.hardware.name

    @property
    def source(self) -> str:
        return self.hardware.source

    @property
    def is_accelerator(self) -> bool:
        """Whether the kind's role is accelerator (a host runs what no accelerator takes)."""
        return self.hardware.is_accelerator

    def with_policy(self, **changes: Any) -> Device:
        """This device delegated to another way: its policy with `changes` (e.g. ``claims=...``), its hardware as is.

        Its `document` stays the file's, so `accelsim.hardware.config.identity` does not see the change: a
        search trying policies uses this; a design point changes its policy with `apply_overrides`.
        """
        policy = replace(self.policy, **changes)
        return replace(self, policy=policy, policy_from_document=False,
                       hardware=replace(self.hardware, numerics_precision=numerics_precision(policy.numerics)))

    def error(self, path: tuple, message: str) -> ConfigError:
        """A ConfigError about key `path` of this device's file, located at its file:line when known."""
        return ConfigError([self.located(path, message)])

    def located(self, path: tuple, message: str) -> str:
        """'file:line: key: message' for key `path` of this device's file (without the line when unknown)."""
        return located(self.source, self.document.lines if self.document is not None else {}, path, message)


def numerics_precision(numerics: Numerics) -> str:
    """The precision float math runs in under `numerics`: 'float16' in mode float16, else 'float32'."""
    return "float16" if numerics.mode == "float16" else "float32"


HARDWARE = "hardware"  # the device: a change re-runs only the costs and the schedule of the same analysis
POLICY = "policy"  # how it is delegated to: a change gives another analysis (what is claimed, how partitioned)

# Every top-level section of a hardware config and the type it fills. A section that is a field of the
# policy is POLICY, even where the hardware has it too: `name` names the delegate, and the delegation
# report and every partition carry it. The YAML keeps both in one file; `identity` and the analysis read this.
SECTIONS = {
    **{f.name: HARDWARE for f in fields(Hardware) if f.metadata.get("section", True)},
    **{f.name: POLICY for f in fields(DelegationPolicy)},
}


def hardware_lines(lines: Mapping[tuple, int]) -> dict[tuple, int]:
    """The lines of the keys of hardware sections: what a `Hardware` keeps to locate its errors."""
    return {path: line for path, line in lines.items() if path and SECTIONS.get(path[0]) == HARDWARE}


