"""`--host native`: the shipped x86 host profile that matches the running CPU's instruction set.

An x86 core's int8 and float32 throughput follows its vector instructions: the register width
(AVX2: 256 bits, AVX-512: 512) and whether int8 dot products are one instruction (AVX512-VNNI's
VPDPBUSD) or a chain of three (VPMADDUBSW, VPMADDWD, VPADDD). `PROFILES` lists the shipped host
configs by instruction set, most capable first, each with the `/proc/cpuinfo` flags it needs;
`native_host` picks the first whose flags the CPU has. Only `host_x86` (AVX-512 VNNI) is fitted
to measurements; the others are derived from it by instruction set and say "not calibrated".
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from accelsim.hardware.config_yaml import ConfigError

NATIVE = "native"
CPUINFO = Path("/proc/cpuinfo")
# (shipped host config, the cpuinfo flags it needs, what it describes), most capable first.
PROFILES: tuple[tuple[str, frozenset[str], str], ...] = (
    ("host_x86", frozenset({"avx512f", "avx512_vnni"}), "AVX-512 with VNNI (int8 dot products in one instruction)"),
    ("host_x86_avx512", frozenset({"avx512f"}), "AVX-512 without VNNI"),
    ("host_x86_avx2", frozenset({"avx2", "fma"}), "AVX2 with FMA"),
)


def cpu_flags(text: str) -> frozenset[str]:
    """The instruction-set flags of the first processor in a /proc/cpuinfo text (x86: `flags`; empty if none)."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def native_host(flags: Iterable[str], where: str = str(CPUINFO)) -> str:
    """The name of the first PROFILES host whose flags are all in `flags`.

    Raises:
        ConfigError: no profile matches (not an x86 CPU with AVX2 and FMA, or its flags could not be read); the
            message names the flags each profile needs and says to pass a host by name.
    """
    have = frozenset(flags)
    for name, needs, _ in PROFILES:
        if needs <= have:
            return name
    needs = "; ".join(f"{name} needs {', '.join(sorted(req))}" for name, req, _ in PROFILES)
    raise ConfigError([f"--host native: {where} names no instruction set a shipped x86 host describes ({needs}); "
                       "pass a host by name or path instead (accelsim configs lists them)"])


def read_native_host(path: Path = CPUINFO) -> str:
    """native_host of this machine's CPU, read from `path`."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError([f"--host native: cannot read {path} ({exc.strerror}); pass a host by name or path "
                           "instead (accelsim configs lists them)"]) from exc
    return native_host(cpu_flags(text), str(path))
