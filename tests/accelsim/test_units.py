"""accelsim.core.units: every quantity kind parses exactly, and every mistake says what was expected."""

from __future__ import annotations

import math

import pytest

from accelsim.core.units import (
    parse_energy,
    parse_energy_per_byte,
    parse_frequency,
    parse_number,
    parse_power,
    parse_rate,
    parse_size,
    parse_time,
)


@pytest.mark.parametrize("text, hz", [
    ("500 MHz", 500e6), ("1.5 GHz", 1.5e9), ("100kHz", 1e5), ("2 Hz", 2.0), ("  1e3 MHz ", 1e9),
])
def test_frequency(text, hz):
    assert parse_frequency(text) == hz


@pytest.mark.parametrize("text, size", [
    ("8 MiB", 8 * 1024**2), ("512 KiB", 512 * 1024), ("64 B", 64), ("2 MB", 2_000_000), ("1 kB", 1000),
    ("1.5 KiB", 1536), ("1 GiB", 1024**3), ("3 GB", 3 * 10**9), ("0 B", 0),
])
def test_size_distinguishes_si_and_binary_prefixes(text, size):
    assert parse_size(text) == size
    assert isinstance(parse_size(text), int)


@pytest.mark.parametrize("text, rate", [
    ("320 MB/s", 320e6), ("1 GB/s", 1e9), ("1 GiB/s", 1024.0**3), ("5 Gb/s", 625e6), ("8 bit/s", 1.0),
    ("100 Mbps", 12.5e6), ("4 Mbit/s", 0.5e6), ("64 KiB/s", 65536.0),
])
def test_rate_counts_bytes_with_B_and_bits_with_b(text, rate):
    assert parse_rate(text) == rate


@pytest.mark.parametrize("parse, text, value", [
    (parse_energy, "0.23 pJ", 0.23e-12), (parse_energy, "1.3 nJ", 1.3e-9), (parse_energy, "2 \u00b5J", 2e-6),
    (parse_energy, "5 fJ", 5e-15), (parse_energy, "0 J", 0.0), (parse_power, "50 mW", 0.05), (parse_power, "2 W", 2.0),
    (parse_power, "300 uW", 3e-4), (parse_energy_per_byte, "20 pJ/B", 20e-12),
    (parse_energy_per_byte, "4 pJ/bit", 32e-12), (parse_energy_per_byte, "1 nJ/b", 8e-9),
])
def test_energy_power_and_energy_per_byte(parse, text, value):
    assert parse(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text, seconds", [
    ("2 us", 2e-6), ("2 \u00b5s", 2e-6), ("2 \u03bcs", 2e-6), ("1.5 ms", 1.5e-3), ("100 ns", 1e-7), ("1 s", 1.0),
    ("50 us", 5e-5), ("0 s", 0.0),
])
def test_time_accepts_both_micro_signs_and_is_exact(text, seconds):
    assert parse_time(text) == seconds


@pytest.mark.parametrize("parse, text, value", [
    (parse_frequency, "500 mhz", 500e6), (parse_frequency, "1 GHZ", 1e9), (parse_size, "8 mB", 8_000_000),
    (parse_size, "8 mib", 8 * 1024**2), (parse_time, "2 MS", 2e-3), (parse_time, "3 US", 3e-6),
    (parse_rate, "1 gb/s", 1e9), (parse_rate, "1 gB/s", 1e9), (parse_rate, "1 GB/S", 1e9),
    (parse_rate, "1 Gb/s", 125e6), (parse_rate, "1 gbps", 125e6), (parse_rate, "8 kb/s", 1e3),
    (parse_rate, "8 Kb/s", 1e3), (parse_rate, "8 KB/s", 8e3),
])
def test_unit_case_is_free_except_bytes_against_bits(parse, text, value):
    assert parse(text) == value


@pytest.mark.parametrize("parse, value", [
    (parse_size, 0), (parse_size, "0"), (parse_size, 0.0), (parse_time, 0), (parse_time, " 0 "),
])
def test_zero_needs_no_unit(parse, value):
    assert parse(value) == 0


def test_plain_numbers_are_yaml_numbers_only():
    assert parse_number(0.8) == 0.8
    assert parse_number(3) == 3.0


@pytest.mark.parametrize("parse, value, message", [
    (parse_rate, "fast", "expected a rate like '320 MB/s', got 'fast'"),
    (parse_frequency, "500", "expected a frequency like '500 MHz', got '500' (missing unit)"),
    (parse_frequency, 500, "expected a frequency like '500 MHz', got 500 (missing unit)"),
    (parse_size, "-1 MiB", "expected a size like '8 MiB', got '-1 MiB' (must not be negative)"),
    (parse_time, "-2 us", "expected a time like '2 us', got '-2 us' (must not be negative)"),
    (parse_size, "5 MHz", "expected a size like '8 MiB', got '5 MHz' (unknown unit 'MHz'; use one of B, kB, MB, "
                          "GB, TB, KiB, MiB, GiB, TiB)"),
    (parse_time, "2 MB", "expected a time like '2 us', got '2 MB' (unknown unit 'MB'; use one of s, ms, us, "
                         "\u00b5s, \u03bcs, ns)"),
    (parse_frequency, "1 mhzz", "expected a frequency like '500 MHz', got '1 mhzz' (unknown unit 'mhzz'; use one of "
                                "Hz, kHz, MHz, GHz)"),
    (parse_size, "1 Mb", "expected a size like '8 MiB', got '1 Mb' (unknown unit 'Mb'; use one of B, kB, MB, GB, "
                         "TB, KiB, MiB, GiB, TiB)"),
    (parse_size, 5, "expected a size like '8 MiB', got 5 (missing unit)"),
    (parse_rate, 0, "expected a rate like '320 MB/s', got 0 (must be above zero)"),
    (parse_size, "0.5 B", "expected a size like '8 MiB', got '0.5 B' (not a whole number of bytes)"),
    (parse_frequency, "0 Hz", "expected a frequency like '500 MHz', got '0 Hz' (must be above zero)"),
    (parse_rate, "0 MB/s", "expected a rate like '320 MB/s', got '0 MB/s' (must be above zero)"),
    (parse_rate, "1e400 GB/s", "expected a rate like '320 MB/s', got '1e400 GB/s' (not a finite number)"),
    (parse_time, "nan ms", "expected a time like '2 us', got 'nan ms'"),
    (parse_size, True, "expected a size like '8 MiB', got True"),
    (parse_size, None, "expected a size like '8 MiB', got None"),
    (parse_rate, ["1 GB/s"], "expected a rate like '320 MB/s', got ['1 GB/s']"),
    (parse_time, "", "expected a time like '2 us', got ''"),
    (parse_number, "0.8", "expected a number like '0.8', got '0.8'"),
    (parse_number, True, "expected a number like '0.8', got True"),
    (parse_number, -1, "expected a number like '0.8', got -1 (must not be negative)"),
    (parse_number, math.nan, "expected a number like '0.8', got nan (not a finite number)"),
    (parse_number, math.inf, "expected a number like '0.8', got inf (not a finite number)"),
    (parse_energy, "-1 pJ", "expected an energy like '0.2 pJ', got '-1 pJ' (must not be negative)"),
    (parse_energy, "1 pJ/B", "expected an energy like '0.2 pJ', got '1 pJ/B' (unknown unit 'pJ/B'; use one of fJ, pJ, "
                             "nJ, uJ, \u00b5J, \u03bcJ, mJ, J)"),
    (parse_power, "2 J", "expected a power like '50 mW', got '2 J' (unknown unit 'J'; use one of uW, \u00b5W, "
                         "\u03bcW, mW, W)"),
    (parse_energy_per_byte, 20, "expected an energy per byte like '20 pJ/B', got 20 (missing unit)"),
])
def test_errors_say_what_was_expected(parse, value, message):
    with pytest.raises(ValueError) as info:
        parse(value)
    assert str(info.value) == message
