"""Strict parsing of human-written quantities: frequencies, sizes, rates, times, energies, powers, numbers.

Every parser returns SI base units (Hz, bytes, bytes per second, seconds, joules, watts,
joules per byte) and raises
ValueError saying what was expected, e.g. "expected a rate like '320 MB/s', got 'fast'".

Prefixes are exact: kB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB powers of 1024.
Rates count bytes with "B" and bits with "b" (or "bit", "bps"): "5 Gb/s" is 625e6 bytes/s.

The case of a unit matters only where it changes the meaning, bytes ("B") against bits
("b"): "500 mhz", "8 mB" and "2 MS" are read as MHz, MB and ms (there are no millibytes
or megaseconds). A unit written all in lower case means bytes ("1 gb/s" is 1 GB/s), except
"kb/s", SI's spelling of kilobits; write "Gb/s", "Gbit/s" or "Gbps" for bits. Zero needs no
unit ("0" is zero of any quantity; rates and frequencies must still be above zero).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
# Matched against the stripped value: greedy and anchored, so linear in its length (a lazy unit
# group followed by trailing whitespace backtracks quadratically on long runs of spaces).
_QUANTITY = re.compile(rf"({_NUMBER})\s*(\S.*)?", re.DOTALL)

_FREQUENCY_UNITS = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}
_SIZE_UNITS = {
    "B": 1, "kB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4,
    "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4,
}
_BIT_PREFIXES = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_RATE_UNITS = {
    **{f"{unit}/s": float(factor) for unit, factor in _SIZE_UNITS.items()},
    **{f"{p}b/s": f / 8 for p, f in _BIT_PREFIXES.items()},
    **{f"{p}bit/s": f / 8 for p, f in _BIT_PREFIXES.items()},
    **{f"{p}bps": f / 8 for p, f in _BIT_PREFIXES.items()},
}
# Divisors, not factors, so that '50 us' is exactly 50 / 1e6 s. Both micro signs are
# accepted: U+00B5 (keyboard) and U+03BC (Greek mu).
_TIME_DIVISORS = {"s": 1.0, "ms": 1e3, "us": 1e6, "\u00b5s": 1e6, "\u03bcs": 1e6, "ns": 1e9}

_ENERGY_UNITS = {"fJ": 1e-15, "pJ": 1e-12, "nJ": 1e-9, "uJ": 1e-6, "\u00b5J": 1e-6, "\u03bcJ": 1e-6, "mJ": 1e-3,
                 "J": 1.0}
_POWER_UNITS = {"uW": 1e-6, "\u00b5W": 1e-6, "\u03bcW": 1e-6, "mW": 1e-3, "W": 1.0}
# Energy per byte moved: per byte ("pJ/B") or per bit ("pJ/bit", "pJ/b"; eight to a byte).
_ENERGY_PER_BYTE_UNITS = {
    **{f"{unit}/B": factor for unit, factor in _ENERGY_UNITS.items()},
    **{f"{unit}/{bit}": 8 * factor for unit, factor in _ENERGY_UNITS.items() for bit in ("b", "bit")},
}

_EXAMPLES = {
    "frequency": "500 MHz",
    "energy": "0.2 pJ",
    "power": "50 mW",
    "energy per byte": "20 pJ/B",
    "size": "8 MiB",
    "rate": "320 MB/s",
    "time": "2 us",
    "number": "0.8",
}


def _fail(kind: str, value, why: str | None = None) -> ValueError:
    article = "an" if kind[0] in "aeiou" else "a"
    message = f"expected {article} {kind} like '{_EXAMPLES[kind]}', got {value!r}"
    return ValueError(f"{message} ({why})" if why else message)


def _unit(unit: str, units: Mapping[str, float]) -> str | None:
    """The key of `units` that `unit` means, reading case loosely where that is unambiguous."""
    if unit in units:
        return unit
    # The byte/bit letter keeps its meaning as written ('Mb' is not 'MB'); all lower case means
    # bytes, except in 'bps' and 'bit', which are bits however they are written.
    letters = "".join(c for c in unit if c in "Bb")
    if unit.islower() and not unit.endswith("bps") and "bit" not in unit:
        letters = letters.upper()
    same = [u for u in units if u.lower() == unit.lower() and "".join(c for c in u if c in "Bb") == letters]
    return same[0] if len(same) == 1 else None


def _quantity(kind: str, value, units: Mapping[str, float], divide: bool = False) -> float:
    """Number times (or, with `divide`, over) the unit's factor.

    Rejects non-strings, missing or unknown units, negatives and non-finite values; zero
    needs no unit.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _fail(kind, value)
    if not isinstance(value, str):
        if value == 0:
            return 0.0
        raise _fail(kind, value, "missing unit")
    match = _QUANTITY.fullmatch(value.strip())
    if match is None:
        raise _fail(kind, value)
    number, unit = float(match.group(1)), match.group(2)
    if unit is None:
        if number == 0:
            return 0.0
        raise _fail(kind, value, "missing unit")
    known = _unit(unit, units)
    if known is None:
        raise _fail(kind, value, f"unknown unit {unit!r}; use one of {', '.join(units)}")
    unit = known
    result = number / units[unit] if divide else number * units[unit]
    if not math.isfinite(result):
        raise _fail(kind, value, "not a finite number")
    if result < 0:
        raise _fail(kind, value, "must not be negative")
    return result


def parse_frequency(value) -> float:
    """A clock frequency in Hz, from '500 MHz' or '1.5 GHz'; must be above zero."""
    hz = _quantity("frequency", value, _FREQUENCY_UNITS)
    if hz == 0:
        raise _fail("frequency", value, "must be above zero")
    return hz


def parse_size(value) -> int:
    """A size in whole bytes, from '8 MiB', '512 KiB', '2 MB' or '64 B'."""
    size = _quantity("size", value, _SIZE_UNITS)
    if size != int(size):
        raise _fail("size", value, "not a whole number of bytes")
    return int(size)


def parse_rate(value) -> float:
    """A data rate in bytes per second, from '320 MB/s', '1 GiB/s' or '5 Gb/s' (bits); must be above zero."""
    rate = _quantity("rate", value, _RATE_UNITS)
    if rate == 0:
        raise _fail("rate", value, "must be above zero")
    return rate


def parse_time(value) -> float:
    """A duration in seconds, from '2 us', '2 µs', '1.5 ms', '100 ns' or '1 s'."""
    return _quantity("time", value, _TIME_DIVISORS, divide=True)


def parse_number(value) -> float:
    """A dimensionless, finite, non-negative number given as a YAML int or float (not a string, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail("number", value)
    if not math.isfinite(value):
        raise _fail("number", value, "not a finite number")
    if value < 0:
        raise _fail("number", value, "must not be negative")
    return float(value)


def parse_energy(value) -> float:
    """An energy in joules, from '0.2 pJ', '1.5 nJ', '3 uJ' or '1 J'."""
    return _quantity("energy", value, _ENERGY_UNITS)


def parse_power(value) -> float:
    """A power in watts, from '50 mW', '2 W' or '300 uW'."""
    return _quantity("power", value, _POWER_UNITS)


def parse_energy_per_byte(value) -> float:
    """Energy per byte moved in joules, from '20 pJ/B' or per bit, '4 pJ/bit' (= 32 pJ/B)."""
    return _quantity("energy per byte", value, _ENERGY_PER_BYTE_UNITS)


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """A count with its noun in the right number: '1 variant', '4 variants', '1 design point', '0 partitions'."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"
