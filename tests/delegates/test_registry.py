"""Delegate providers, typed options, load_delegate and the accelsim.delegates entry points."""

from __future__ import annotations

import sys
import textwrap

import pytest

from accelsim.delegates import registry
from accelsim.delegates.registry import (
    DelegateProvider,
    DelegateRegistry,
    OptionSpec,
    load_delegate,
    parse_option_strings,
)

PLUGIN = '''
from accelsim.delegates.registry import DelegateProvider, OptionSpec


class Dummy:
    def __init__(self, **options):
        self.options = options

    def apply(self, interpreter):
        pass


provider = DelegateProvider("dummy", Dummy, {
    "level": OptionSpec(int, 1, "how hard to try"),
    "fast": OptionSpec(bool, False, "skip checks"),
    "scale": OptionSpec(float, 1.0, "a factor"),
})


def plain(**options):
    return Dummy(**options)


def broken(**options):
    raise RuntimeError("no device attached")


def not_a_delegate(**options):
    return 42


answer = 42
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """Two plugin modules on sys.path, published as accelsim.delegates entry points of a fake distribution."""
    (tmp_path / "accelsim_plugin_a.py").write_text(PLUGIN)
    (tmp_path / "accelsim_plugin_b.py").write_text("raise ImportError('driver library missing')\n")
    info = tmp_path / "accelsim_test_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: accelsim-test-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""
        [accelsim.delegates]
        dummy = accelsim_plugin_a:provider
        plain = accelsim_plugin_a:plain
        broken = accelsim_plugin_a:broken
        missing = accelsim_plugin_b:anything
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("accelsim_plugin_a", "accelsim_plugin_b"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


class Fake:
    def __init__(self, **options):
        self.options = options

    def apply(self, interpreter):
        pass


SPEC = {"level": OptionSpec(int, 1, "how hard"), "fast": (bool, False, "skip checks"),
        "scale": OptionSpec(float, 0.5, "factor"), "mode": OptionSpec(str, "sim", "what to run")}


# -- options ------------------------------------------------------------------------------


def test_parse_option_strings():
    assert parse_option_strings(["a=1", "path=x=y", " b =", "c= spaced "]) == {
        "a": "1", "path": "x=y", "b": "", "c": " spaced "}


@pytest.mark.parametrize("item", ["novalue", "=3"])
def test_parse_option_strings_rejects_malformed(item):
    with pytest.raises(ValueError, match="is not of the form key=value"):
        parse_option_strings([item])


@pytest.mark.parametrize("kind, text, value", [
    (bool, "true", True), (bool, "Off", False), (bool, "1", True), (bool, "no", False),
    (int, "42", 42), (int, " -3 ", -3), (float, "2.5", 2.5), (float, "1e-3", 1e-3), (str, "abc", "abc"),
])
def test_option_spec_parses_text(kind, text, value):
    got = OptionSpec(kind).parse(text)
    assert got == value and type(got) is kind


@pytest.mark.parametrize("kind, raw, message", [
    (bool, "maybe", "expected a boolean"), (int, "1.5", "expected int, got '1.5'"),
    (float, "fast", "expected float"), (int, True, "expected int, got bool True"), (str, 3, "expected str"),
])
def test_option_spec_rejects_bad_values(kind, raw, message):
    with pytest.raises(ValueError, match=message):
        OptionSpec(kind).parse(raw)


def test_option_spec_accepts_typed_values():
    assert OptionSpec(float).parse(2) == 2.0 and OptionSpec(bool).parse(False) is False


# -- registered providers -----------------------------------------------------------------


def test_create_delegate_types_options_and_fills_defaults():
    reg = DelegateRegistry(group="accelsim.none")
    reg.register_provider("fake", Fake, SPEC, help="a fake")
    d = reg.create_delegate("fake", **parse_option_strings(["level=3", "fast=yes"]))
    assert d.options == {"level": 3, "fast": True, "scale": 0.5, "mode": "sim"}
    assert reg.create_delegate("fake", scale=2).options["scale"] == 2.0
    assert reg.names() == ["fake"]
    assert reg.provider("fake").help == "a fake"


def test_unknown_and_bad_options_are_explained():
    reg = DelegateRegistry(group="accelsim.none")
    reg.register_provider("fake", Fake, SPEC)
    with pytest.raises(ValueError, match=r"delegate 'fake' has no option\(s\) \['speed'\]; options: level \(int, "
                                         r"default 1\): how hard; fast \(bool"):
        reg.create_delegate("fake", speed="9")
    with pytest.raises(ValueError, match=r"Failed to load delegate from fake: delegate 'fake' option 'level': "
                                         r"expected int, got 'high'"):
        reg.create_delegate("fake", level="high")


def test_untyped_provider_passes_options_through():
    reg = DelegateRegistry(group="accelsim.none")
    reg.register_provider("raw", Fake)
    assert reg.create_delegate("raw", anything="1").options == {"anything": "1"}


def test_provider_without_options_rejects_any():
    reg = DelegateRegistry(group="accelsim.none")
    reg.register_provider("bare", Fake, {})
    assert reg.create_delegate("bare").options == {}
    with pytest.raises(ValueError, match=r"has no option\(s\) \['x'\]; options: none"):
        reg.create_delegate("bare", x="1")


def test_registration_errors():
    reg = DelegateRegistry(group="accelsim.none")
    reg.register_provider("fake", Fake)
    with pytest.raises(ValueError, match="already registered"):
        reg.register_provider("fake", Fake)
    with pytest.raises(ValueError, match="non-empty name"):
        reg.register_provider("", Fake)
    with pytest.raises(TypeError, match="type must be bool, int, float or str"):
        reg.register_provider("listy", Fake, {"xs": OptionSpec(list, [], "")})
    with pytest.raises(TypeError, match="expected an OptionSpec or"):
        reg.register_provider("odd", Fake, {"x": 3})


def test_failing_factory_and_non_delegate_result():
    reg = DelegateRegistry(group="accelsim.none")

    def broken():
        raise RuntimeError("no device attached")

    reg.register_provider("broken", broken, {})
    reg.register_provider("number", lambda: 42, {})
    with pytest.raises(ValueError, match="Failed to load delegate from broken: RuntimeError: no device attached"):
        reg.create_delegate("broken")
    with pytest.raises(ValueError, match=r"Failed to load delegate from number: the factory returned int, which "
                                         r"has no apply\(interpreter\) method"):
        reg.create_delegate("number")


def test_unknown_name_lists_what_exists():
    reg = DelegateRegistry(group="accelsim.none")
    reg.register_provider("fake", Fake)
    with pytest.raises(ValueError, match="Unknown delegate 'gpu'; available: fake"):
        reg.create_delegate("gpu")


def test_module_level_functions_use_the_default_registry(monkeypatch):
    monkeypatch.setattr(registry.default_registry, "_providers", {})
    registry.register_provider("fake", Fake, SPEC)
    assert "fake" in registry.provider_names()
    assert registry.create_delegate("fake", level="7").options["level"] == 7


def test_name_option_does_not_clash_with_the_provider_name():
    reg = DelegateRegistry(group="accelsim.none")
    reg.register_provider("fake", Fake, {"name": OptionSpec(str, "", "")})
    assert reg.create_delegate("fake", name="x").options == {"name": "x"}


# -- load_delegate ------------------------------------------------------------------------


def test_load_delegate_from_provider_and_plain_factory(plugins):
    d = load_delegate("accelsim_plugin_a:provider", {"level": "4", "scale": "0.25"})
    assert d.options == {"level": 4, "fast": False, "scale": 0.25}
    assert load_delegate("accelsim_plugin_a:plain", {"k": "v"}).options == {"k": "v"}
    assert load_delegate("accelsim_plugin_a:Dummy").options == {}


@pytest.mark.parametrize("spec, reason", [
    ("accelsim_plugin_a:broken", "RuntimeError: no device attached"),
    ("accelsim_plugin_a:not_a_delegate", r"the factory returned int, which has no apply\(interpreter\) method"),
    ("accelsim_plugin_a:answer", "TypeError: 42 is neither a DelegateProvider nor callable"),
    ("accelsim_plugin_a:nothing", "AttributeError: module 'accelsim_plugin_a' has no attribute 'nothing'"),
    ("accelsim_plugin_b:anything", "ImportError: driver library missing"),
    ("no_such_module_xyz:make", "ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ("accelsim_plugin_a", "expected 'package.module:factory'"),
    ("accelsim_plugin_a:provider", "delegate 'dummy' option 'level': expected int, got 'lots'"),
])
def test_load_delegate_failures(plugins, spec, reason):
    options = {"level": "lots"} if spec.endswith(":provider") else None
    with pytest.raises(ValueError, match=f"Failed to load delegate from {spec}: {reason}"):
        load_delegate(spec, options)


def test_create_delegate_accepts_module_factory_specs(plugins):
    reg = DelegateRegistry(group="accelsim.none")
    assert reg.create_delegate("accelsim_plugin_a:provider", fast="on").options["fast"] is True


# -- entry points -------------------------------------------------------------------------


def test_entry_points_are_listed_without_importing(plugins):
    reg = DelegateRegistry()
    assert {"dummy", "plain", "broken", "missing"} <= set(reg.names())
    assert "accelsim_plugin_a" not in sys.modules and "accelsim_plugin_b" not in sys.modules


def test_entry_point_provider_is_imported_only_when_named(plugins):
    reg = DelegateRegistry()
    d = reg.create_delegate("dummy", level="2")
    assert d.options == {"level": 2, "fast": False, "scale": 1.0}
    assert reg.create_delegate("plain", raw="x").options == {"raw": "x"}
    assert "accelsim_plugin_a" in sys.modules
    assert "accelsim_plugin_b" not in sys.modules


def test_entry_point_failures(plugins):
    reg = DelegateRegistry()
    with pytest.raises(ValueError, match="Failed to load delegate from broken: RuntimeError: no device attached"):
        reg.create_delegate("broken")
    with pytest.raises(ValueError, match="Failed to load delegate from accelsim_plugin_b:anything: ImportError: "
                                         "driver library missing"):
        reg.create_delegate("missing")


def test_registered_provider_wins_over_entry_point(plugins):
    reg = DelegateRegistry()
    reg.register_provider("dummy", Fake, {})
    assert isinstance(reg.create_delegate("dummy"), Fake)
    assert "accelsim_plugin_a" not in sys.modules


def test_provider_objects_are_values():
    p = DelegateProvider("x", Fake, {"a": OptionSpec(int, 0, "")})
    assert p.parse({"a": "5"}) == {"a": 5}
    assert p.describe_options() == "a (int, default 0): "
