"""Property tests: however a hardware YAML file is broken, loading it raises ConfigError naming file:line.

Hypothesis damages the shipped hw_configs/*.yaml: values of the wrong type or with bad units,
missing and unknown keys, duplicate keys, YAML tags (including !!python/object), anchors and
alias bombs, deep nesting, stray bytes that are not UTF-8. The only outcomes allowed are a loaded
config or a ConfigError whose every line starts with 'file:line:' and, where a key is to blame,
names its key path. No YAML constructor other than SafeConstructor's scalars may run.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from accelsim.hardware import (
    config_yaml as config,  # the YAML reader and its value budget (arch split it from config.py)
)
from accelsim.hardware.config import ConfigError, load_hardware
from accelsim.hardware.device import Device

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "hw_configs").glob("*.yaml"))
FUZZ = settings(max_examples=60, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# Values that are wrong for every key: a config key never takes null, a nested list, an
# unknown mapping or empty text.
NEVER_VALID = [None, [[None]], {"zz_unknown": 1}, ""]
HOSTILE = st.one_of(
    st.sampled_from(NEVER_VALID),
    st.sampled_from([-1, 0, 1, 2**70, 1.5, float("inf"), float("nan"), True, "x" * 300, "\x00", "\u202e",
                     "500 MHzz", "-5 MB/s", "1e999 GHz", "nan GHz", "0 Hz", "5", "5 Mb/s", "1_000 B", " 8 MiB ",
                     "2 µs", "2 μs", "CONV_2D", "int8", [1, 3], "1-3", "3-1", {"int8": 0}]),
    st.integers(), st.floats(), st.text(max_size=20), st.lists(st.integers(), max_size=3),
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("config_fuzz")


@contextlib.contextmanager
def only_safe_yaml():
    """Fail if anything but SafeConstructor's scalar constructors runs, or a non-safe yaml.load is called."""
    def refuse(*args, **kwargs):
        raise AssertionError("a YAML constructor that builds Python objects ran")

    allowed = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null")}
    safe = yaml.constructor.SafeConstructor.construct_object

    def scalars_only(self, node, deep=False):
        assert isinstance(node, yaml.ScalarNode) and node.tag in allowed, node.tag
        return safe(self, node, deep)

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(yaml.constructor.SafeConstructor, "construct_object", scalars_only))
        stack.enter_context(mock.patch.object(yaml.constructor.FullConstructor, "construct_object", refuse))
        for name in ("load", "load_all", "full_load", "unsafe_load", "safe_load"):
            stack.enter_context(mock.patch.object(yaml, name, refuse))
        yield


def load(workdir: Path, content: str | bytes) -> tuple[Path, Device | ConfigError]:
    """Write `content` and load it; any exception but ConfigError fails the test."""
    path = workdir / "hw.yaml"
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    # A hostile file must not make the loader crawl: the values it reads are bounded by the loader's
    # budget (alias bombs expand no further), counted rather than timed.
    reads = 0
    read = config._Reader.read

    def counted(self, node, path=()):
        nonlocal reads
        reads += 1
        assert reads <= 2 * config._MAX_VALUES, "the loader read past its value budget: a hostile file could crawl"
        return read(self, node, path)

    with only_safe_yaml(), mock.patch.object(config._Reader, "read", counted):
        try:
            result = load_hardware(path)
        except ConfigError as exc:
            result = exc
    return path, result


def assert_located(path: Path, result, content: str | bytes) -> list[str]:
    """Every error is 'file:line: ...' with a line inside the file (or just past its last line)."""
    if isinstance(result, Device):
        return []
    assert result.errors and str(result) == "\n".join(result.errors)
    raw = content.encode("utf-8") if isinstance(content, str) else content
    last = raw.count(b"\n") + 1
    for message in result.errors:
        m = re.match(rf"{re.escape(str(path))}:(\d+): \S", message)
        assert m, message
        assert 1 <= int(m.group(1)) <= last, message
    return list(result.errors)


def _keypath(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _paths(data, prefix=()):
    """Every key path of a plain YAML document (mapping keys and list items)."""
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key))


def _parent(data, path):
    for part in path[:-1]:
        data = data[part]
    return data


def _shipped(path: Path):
    return path.read_text(encoding="utf-8"), yaml.safe_load(path.read_text(encoding="utf-8"))


def _names_path(errors: list[str], path: tuple, file: Path) -> bool:
    key = re.escape(_keypath(path))
    return any(re.match(rf"{re.escape(str(file))}:\d+: {key}(?:[.\[:])", e) for e in errors)


# --- damaged documents -------------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ
@given(source=st.sampled_from(SHIPPED), data=st.data())
def test_a_value_of_the_wrong_type_is_refused_at_its_key_path(workdir, source, data):
    _, doc = _shipped(source)
    path = data.draw(st.sampled_from(list(_paths(doc))))
    value = data.draw(HOSTILE)
    _parent(doc, path)[path[-1]] = value
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    file, result = load(workdir, text)
    errors = assert_located(file, result, text)
    event("refused" if errors else "loaded")
    if any(value is v or value == v for v in NEVER_VALID if type(v) is type(value)):
        assert _names_path(errors, path, file), (path, value, errors)


@pytest.mark.slow
@FUZZ
@given(source=st.sampled_from(SHIPPED), data=st.data())
def test_missing_and_unknown_keys_are_named(workdir, source, data):
    _, doc = _shipped(source)
    mappings = [p for p in ((), *_paths(doc)) if isinstance(_parent(doc, (*p, None)), dict)]
    where = data.draw(st.sampled_from(mappings))
    target = _parent(doc, (*where, None))
    if data.draw(st.booleans()) and target:
        key = data.draw(st.sampled_from(sorted(target)))
        del target[key]
        event("missing key")
        file, result = load(workdir, text := yaml.safe_dump(doc, sort_keys=False))
        errors = assert_located(file, result, text)
        if errors and any("required key missing" in e for e in errors):
            assert _names_path(errors, (*where, key), file), errors
    else:
        key = data.draw(st.from_regex(r"[a-z_]{1,12}", fullmatch=True).filter(lambda k: k not in target))
        target[key] = data.draw(HOSTILE)
        event("unknown key")
        file, result = load(workdir, text := yaml.safe_dump(doc, sort_keys=False))
        errors = assert_located(file, result, text)
        if key not in ("float32", "int8", "uint8", "int16", "float16") or where[-1:] != ("macs_per_cycle",):
            assert _names_path(errors, (*where, key), file), errors


@pytest.mark.slow
@FUZZ
@given(source=st.sampled_from(SHIPPED), data=st.data())
def test_a_duplicated_key_line_is_refused_with_both_lines(workdir, source, data):
    text, _ = _shipped(source)
    lines = text.splitlines(keepends=True)
    keyed = [i for i, line in enumerate(lines) if re.match(r"^\s*[a-z_]+:", line)]
    i = data.draw(st.sampled_from(keyed))
    copy = lines[i].split(":")[0] + ": 1\n"  # a scalar copy first: the original keeps its nested block
    damaged = "".join([*lines[:i], copy, *lines[i:]])
    file, result = load(workdir, damaged)
    errors = assert_located(file, result, damaged)
    assert any(e.startswith(f"{file}:{i + 2}: ") and f"duplicate key (first given on line {i + 1})" in e
               for e in errors), errors


# --- damaged text --------------------------------------------------------------------------------------


FRAGMENTS = st.sampled_from([
    "!!python/object/apply:os.system ['touch {marker}']", "!!python/object/new:pathlib.Path ['{marker}']",
    "!!python/name:os.system", "!!python/tuple [1, 2]", "!!binary aGVsbG8=", "!!set {{a, b}}", "!!omap [a: 1]",
    "!custom 5", "!!int abc", "!!float x", "!!bool maybe", "!!str", "&anchor", "*anchor", "*undefined",
    "<<: *anchor", "? [a, b]\n: c", "---", "...", "%YAML 1.1\n---", "{", "[", "]", "\"unterminated", "'",
    "\t", "\x00", "\ufeff", "\x85", "#", "|", ">-", "- ", ": ", "~", "9" * 5000, "[" * 100, "{a: " * 80,
])


@pytest.mark.slow
@FUZZ
@given(source=st.sampled_from(SHIPPED), data=st.data())
def test_text_damage_yields_located_errors_and_never_runs_python_tags(workdir, source, data):
    text, _ = _shipped(source)
    marker = workdir / "marker"
    pieces = data.draw(st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), min_size=1, max_size=3))
    for piece in pieces:
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + piece.replace("{marker}", str(marker)) + text[at:]
    file, result = load(workdir, text)
    event("refused" if assert_located(file, result, text) else "loaded")
    assert not marker.exists()


@FUZZ
@given(source=st.sampled_from(SHIPPED), data=st.data())
def test_bytes_that_are_not_utf8_are_refused_at_their_line(workdir, source, data):
    raw = source.read_bytes()
    at = data.draw(st.integers(0, len(raw)))
    bad = data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xe9t\xe9", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]))
    damaged = raw[:at] + bad + raw[at:]
    file, result = load(workdir, damaged)
    line = raw[:at].count(b"\n") + 1
    assert assert_located(file, result, damaged) == [
        f"{file}:{line}: not UTF-8 text (byte 0x{bad[0]:02x} at offset {at})"]


@pytest.mark.slow
@FUZZ
@given(width=st.integers(2, 12), depth=st.integers(2, 12), where=st.sampled_from(["name", "claims", "extra"]))
def test_alias_bombs_are_cut_short(workdir, width, depth, where):
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, depth)]
    text = SHIPPED[0].read_text() + "\n".join(lines) + f"\n{where}2: *a{depth - 1}\n"
    file, result = load(workdir, text)
    errors = assert_located(file, result, text)
    assert errors, "the anchors' keys alone are unknown keys"
    if width**depth > 100_000:
        assert any("expands to more than 100000 values (aliases?)" in e for e in errors)


@FUZZ
@given(content=st.one_of(st.binary(max_size=200), st.text(max_size=200),
                         st.text(alphabet="[]{}:,-?!&*#|>'\" \n\tab01.", max_size=200)))
def test_arbitrary_content_is_a_config_error(workdir, content):
    file, result = load(workdir, content)
    assert isinstance(result, ConfigError)
    assert_located(file, result, content)


# --- the hostile cases hypothesis found, pinned ---------------------------------------------------------


@pytest.mark.parametrize(("replacement", "message"), [
    ("rows: !!int abc", r":\d+: compute.rows: 'abc' is not a valid !!int"),
    ("rows: !!float abc", r":\d+: compute.rows: 'abc' is not a valid !!float"),
    ("rows: " + "9" * 5000, r":\d+: compute.rows: '9{40}\.\.\.' is not a valid !!int \(Exceeds the limit"),
    ("rows: " + "[" * 5000 + "]" * 5000, r":\d+: nesting deeper than 64 levels"),
    ("rows: &r [*r]", r":\d+: compute.rows(\[0\])+: nesting deeper than 64 levels \(a recursive alias\?\)"),
])
def test_pinned_hostile_values(workdir, replacement, message):
    text = (ROOT / "hw_configs" / "edgetpu_usb.yaml").read_text()  # a config with compute.rows
    damaged = re.sub(r"rows: \d+", lambda m: replacement, text, count=1)
    assert damaged != text
    file, result = load(workdir, damaged)
    errors = assert_located(file, result, damaged)
    assert any(re.match(re.escape(str(file)) + message, e) for e in errors), errors


def test_a_long_quantity_is_refused_before_the_unit_parser_sees_it(workdir):
    text = SHIPPED[0].read_text()
    damaged = re.sub(r"^clock: .*", "clock: '1 a" + " " * 50_000 + "b'", text, count=1, flags=re.M)
    file, result = load(workdir, damaged)
    line = damaged[: damaged.index("\nclock:") + 1].count("\n") + 1
    assert assert_located(file, result, damaged) == [
        f"{file}:{line}: clock: expected a quantity like '8 MiB', got 50004 characters of text"]


def test_a_forbidden_character_is_reported_at_its_line(workdir):
    text = SHIPPED[0].read_text()
    at = text.index("clock:")
    file, result = load(workdir, text[:at] + "\x07" + text[at:])
    line = text[:at].count("\n") + 1
    assert result.errors == (f"{file}:{line}: YAML error: unacceptable character #x0007: special characters are "
                             f"not allowed\n  in \"<unicode string>\", position {at}",)
