"""`--host native`: the shipped x86 profile of the running CPU's instruction set (issue 31 B11)."""

from __future__ import annotations

import pytest

from accelsim.experiments import experiment, hosts
from accelsim.experiments.experiment import SHIPPED_CONFIGS, resolve_config
from accelsim.hardware.config import load_hardware
from accelsim.hardware.config_yaml import ConfigError

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Some CPU
flags\t\t: fpu sse sse2 avx {extra}
"""


@pytest.mark.parametrize("extra, host", [
    ("avx2 fma avx512f avx512_vnni", "host_x86"),
    ("avx2 fma avx512f", "host_x86_avx512"),
    ("avx2 fma", "host_x86_avx2"),
])
def test_native_picks_the_most_capable_profile_the_cpu_has(extra, host, tmp_path):
    (tmp_path / "cpuinfo").write_text(CPUINFO.format(extra=extra))
    assert hosts.read_native_host(tmp_path / "cpuinfo") == host


def test_a_cpu_no_profile_describes_is_one_error_naming_what_each_profile_needs(tmp_path):
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nFeatures\t: fp asimd asimddp\n")  # an Arm core
    with pytest.raises(ConfigError) as info:
        hosts.read_native_host(tmp_path / "cpuinfo")
    message = str(info.value)
    assert "cpuinfo names no instruction set a shipped x86 host describes" in message
    assert "host_x86_avx2 needs avx2, fma" in message and "pass a host by name or path instead" in message
    with pytest.raises(ConfigError, match="cannot read"):
        hosts.read_native_host(tmp_path / "missing")


def test_host_native_resolves_like_a_shipped_name(monkeypatch):
    monkeypatch.setattr(experiment, "read_native_host", lambda: "host_x86_avx2")
    assert resolve_config("native", SHIPPED_CONFIGS) == str(SHIPPED_CONFIGS / "host_x86_avx2.yaml")


def test_the_profiles_differ_by_instruction_set_and_only_host_x86_is_calibrated():
    rates = {}
    for name, _, _ in hosts.PROFILES:
        device = load_hardware(SHIPPED_CONFIGS / f"{name}.yaml")
        compute = device.hardware.compute
        rates[name] = (compute.simd_bits, dict(compute.macs_per_cycle)["float32"], dict(compute.macs_per_cycle)["int8"])
        assert device.hardware.calibration.startswith("calibrated" if name == "host_x86" else "not calibrated: ")
        # No rate above the instruction set's peak: two ports of simd_bits each.
        assert dict(compute.vector_per_cycle)["float32"] <= 2 * compute.simd_bits // 32
    assert rates == {"host_x86": (512, 32, 128), "host_x86_avx512": (512, 32, 64), "host_x86_avx2": (256, 16, 32)}
