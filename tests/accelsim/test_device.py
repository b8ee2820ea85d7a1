"""accelsim.hardware.device: a loaded device is its hardware and its delegation policy, and each side sees only its own.

A cost model gets the `Hardware` and cannot reach a claim; delegation gets the `DelegationPolicy`; the one
identity function (`accelsim.hardware.config.identity`) counts policy sections alone with `hardware=False`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.delegates.spec import ClaimRule, DelegationPolicy, Numerics, PartitionPolicy
from accelsim.hardware.config import System, apply_overrides, identity, load_hardware, load_system
from accelsim.hardware.config_yaml import Document
from accelsim.hardware.device import HARDWARE, SECTIONS, Device
from accelsim.runtime.work import NodeWork
from accelsim.simulation.analysis import analysis_key

HW = Path(__file__).resolve().parents[2] / "hw_configs"
SHIPPED = sorted(HW.glob("*.yaml"))
POLICY_TYPES = (DelegationPolicy, ClaimRule, PartitionPolicy, Numerics, Device, Document)


def _reachable(value, seen: set[int] | None = None):
    """Every value reachable from `value` through dataclass fields, mappings and sequences (not functions or types)."""
    seen = set() if seen is None else seen
    if id(value) in seen or isinstance(value, (str, bytes, int, float, bool, type(None), type)) or callable(value):
        return
    seen.add(id(value))
    yield value
    if dataclasses.is_dataclass(value):
        children = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, Mapping):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (tuple, list, set, frozenset)):
        children = list(value)
    else:
        children = []
    for child in children:
        yield from _reachable(child, seen)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_device_is_its_hardware_and_its_policy_and_the_hardware_reaches_no_policy(path):
    device = load_hardware(path)
    assert Device(device.hardware, device.policy) == device  # document and source are where it came from
    assert device.name == device.hardware.name == device.policy.name
    hardware = list(_reachable(device.hardware))
    assert not [v for v in hardware if isinstance(v, POLICY_TYPES)]
    # its lines locate hardware keys only: a cost model's errors point at memory, link, compute ... never claims
    assert device.hardware.lines and {p[0] for p in device.hardware.lines} <= {s for s, r in SECTIONS.items()
                                                                               if r == HARDWARE}
    # another policy leaves the hardware, and so every cost, as it was
    work = NodeWork("ADD", "int8", macs=16, input_bytes=32, output_bytes=16, elements=16, kind="elementwise")
    other = device.with_policy(claims=(), partition=PartitionPolicy("prefix", 1, 2))
    assert other.hardware == device.hardware and other.hardware.costs([work]) == device.hardware.costs([work])


def test_a_device_refuses_a_hardware_and_a_policy_that_do_not_agree():
    device = load_hardware(HW / "adreno630_gpu.yaml")  # numerics float16
    assert device.hardware.numerics_precision == "float16"
    other = dataclasses.replace(device.policy, name="another")
    with pytest.raises(ValueError, match="hardware 'adreno630_gpu' and policy 'another' name different devices"):
        Device(device.hardware, other)
    with pytest.raises(ValueError, match="adreno630_gpu: hardware numerics_precision 'float16' is not that of "
                                         "numerics mode 'reference'"):
        Device(device.hardware, dataclasses.replace(device.policy, numerics=Numerics()))
    # with_policy keeps the two in step
    assert device.with_policy(numerics=Numerics()).hardware.numerics_precision == "float32"


# Changes to edgetpu_usb.yaml, each differing from the file's value; partition policy 'cost' is left out (with
# it, costs choose the partitions and the analysis key counts the hardware too: test_analysis.py).
HARDWARE_CHANGES = {
    "clock": ["250 MHz", "1 GHz"],
    "compute.rows": [8, 32],
    "compute.vector_lanes": [32, 128],
    "memory.levels.sram.size": ["2 MiB", "4 MiB"],
    "link.bandwidth": ["40 MB/s", "1 GB/s"],
    "link.call_overhead": ["5 us", "1 ms"],
    "energy.static_power": ["300 mW", "1 W"],
    "calibration": ["not calibrated: a sweep"],
}
POLICY_CHANGES = {
    "partition.policy": ["tflite"],
    "partition.max_delegated_partitions": [0, 3],
    "partition.min_nodes_per_partition": [2, 5],
    "numerics.mode": ["float16"],
    "claims[0].versions": [[1, 1]],
}
BASE = load_system(HW / "host_cpu.yaml", [HW / "edgetpu_usb.yaml"])


def _changes(pool: dict[str, list]) -> st.SearchStrategy[dict]:
    return st.dictionaries(st.sampled_from(sorted(pool)), st.none()).flatmap(
        lambda keys: st.fixed_dictionaries({k: st.sampled_from(pool[k]) for k in keys}))


@settings(max_examples=60, deadline=None)
@given(hardware=_changes(HARDWARE_CHANGES), policy=_changes(POLICY_CHANGES))
def test_identity_without_hardware_changes_iff_a_policy_field_does(hardware, policy):
    accel = BASE.accelerators[0]
    changed = apply_overrides(accel, {**hardware, **policy})
    system = System(BASE.host, (changed,))
    key = json.dumps(identity(system, hardware=False), sort_keys=True)
    assert (key != json.dumps(identity(BASE, hardware=False), sort_keys=True)) == bool(policy)
    assert (changed.policy != accel.policy) == bool(policy)
    assert (identity(system) != identity(BASE)) == bool(hardware or policy)
    # the hardware's own fields change with hardware keys alone (numerics_precision follows numerics.mode)
    same_numerics = dataclasses.replace(changed.hardware, numerics_precision=accel.hardware.numerics_precision)
    assert (same_numerics != accel.hardware) == bool(hardware)
    assert (analysis_key("model", system) == analysis_key("model", BASE)) == (not policy)



def test_an_override_of_a_device_delegated_another_way_reads_the_files_claims():
    """apply_overrides reuses parsed claims only when the policy is the file's: after with_policy (NNAPI's drivers,
    placement searches) the overridden device is the file's again, claims included, as it was before that shortcut."""
    usb = load_hardware(HW / "edgetpu_usb.yaml")
    elsewhere = usb.with_policy(claims=usb.policy.claims[:1])
    assert not elsewhere.policy_from_document
    again = apply_overrides(elsewhere, {"clock": "600 MHz"})
    assert again.policy.claims == usb.policy.claims and again.policy_from_document
