"""Named delegate providers, `load_delegate` and the `accelsim.delegates` entry points.

A provider is a factory plus typed options, so a command line's ``--delegate NAME
--delegate-option key=value`` becomes ``create_delegate(NAME, key="value")`` and each value
is parsed to the option's type (TFLite's delegate providers and tool flags). `load_delegate`
is the Python counterpart of loading an external delegate library through
``tflite_plugin_create_delegate``: it imports ``package.module:factory`` and calls it.
Plugins published under the entry-point group ``accelsim.delegates`` are imported only when
their name is asked for.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ENTRY_POINT_GROUP = "accelsim.delegates"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class OptionSpec:
    """One delegate option: its type (bool, int, float or str), default and help text."""

    type: type = str
    default: Any = None
    help: str = ""

    def parse(self, value: Any) -> Any:
        """`value` as this option's type; strings are parsed, other values checked."""
        if isinstance(value, str) and self.type is not str:
            return _parse_text(self.type, value)
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            raise ValueError(f"expected {self.type.__name__}, got {type(value).__name__} {value!r}")
        return value


def _parse_text(kind: type, text: str) -> Any:
    if kind is bool:
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"expected a boolean (true/false/1/0/yes/no/on/off), got {text!r}")
    try:
        return kind(text.strip())
    except ValueError:
        raise ValueError(f"expected {kind.__name__}, got {text!r}") from None


@dataclass(frozen=True)
class DelegateProvider:
    """A named way to build a delegate: `factory(**options)`.

    With `options` (a mapping, possibly empty) values are checked and parsed to each option's
    type and defaults are filled in; with None they are passed through untouched.
    """

    name: str
    factory: Callable[..., Any]
    options: Mapping[str, OptionSpec] | None = None
    help: str = ""

    def create(self, **values: Any) -> Any:
        """Build a delegate; the result must have an ``apply(interpreter)`` method.

        Raises:
            ValueError: an unknown option, a value of the wrong type, or a non-delegate result;
                whatever the factory raises propagates.
        """
        return _checked(self.factory(**self.parse(values)))

    def parse(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values` typed and completed with defaults (unchanged when the provider is untyped)."""
        if self.options is None:
            return dict(values)
        unknown = sorted(set(values) - set(self.options))
        if unknown:
            raise ValueError(f"delegate {self.name!r} has no option(s) {unknown}; options: {self.describe_options()}")
        out = {}
        for key, spec in self.options.items():
            if key not in values:
                out[key] = spec.default
                continue
            try:
                out[key] = spec.parse(values[key])
            except ValueError as exc:
                raise ValueError(f"delegate {self.name!r} option {key!r}: {exc}") from None
        return out

    def describe_options(self) -> str:
        """One line per option: name (type, default): help."""
        if not self.options:
            return "none"
        return "; ".join(f"{k} ({s.type.__name__}, default {s.default!r}): {s.help}" for k, s in self.options.items())


def _checked(delegate: Any) -> Any:
    if not callable(getattr(delegate, "apply", None)):
        raise ValueError(f"the factory returned {type(delegate).__name__}, which has no apply(interpreter) method")
    return delegate


def parse_option_strings(items: Iterable[str]) -> dict[str, str]:
    """["key=value", ...] -> {key: value} (the value keeps any further '=')."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"delegate option {item!r} is not of the form key=value")
        out[key.strip()] = value
    return out


def _option_specs(spec: Mapping[str, Any] | None) -> dict[str, OptionSpec] | None:
    if spec is None:
        return None
    out = {}
    for key, value in spec.items():
        if isinstance(value, OptionSpec):
            out[key] = value
        elif isinstance(value, tuple):
            out[key] = OptionSpec(*value)
        else:
            raise TypeError(f"option {key!r}: expected an OptionSpec or (type, default, help), got {value!r}")
        if out[key].type not in (bool, int, float, str):
            raise TypeError(f"option {key!r}: type must be bool, int, float or str, not {out[key].type!r}")
    return out


def load_delegate(spec: str, options: Mapping[str, Any] | None = None) -> Any:
    """Import ``package.module:factory`` and build a delegate from it with `options`.

    A `DelegateProvider` target gets typed parsing; any other callable is called with the
    options as given (strings from a command line stay strings, as a plugin's char** would).

    Raises:
        ValueError: ``Failed to load delegate from <spec>: <reason>`` for any failure.
    """
    return _load(spec, lambda: _provider_for(spec, _import_target(spec)).create(**dict(options or {})))


def _load(source: str, make: Callable[[], Any]) -> Any:
    try:
        return make()
    except Exception as exc:
        reason = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise ValueError(f"Failed to load delegate from {source}: {reason}") from exc


def _import_target(spec: str) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError("expected 'package.module:factory'")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


def _provider_for(name: str, target: Any) -> DelegateProvider:
    """A provider object as is; a plain factory as an untyped provider."""
    if isinstance(target, DelegateProvider):
        return target
    if not callable(target):
        raise TypeError(f"{target!r} is neither a DelegateProvider nor callable")
    return DelegateProvider(name, target)


class DelegateRegistry:
    """Named providers registered in-process, then the entry points of `group` (imported on demand)."""

    def __init__(self, group: str = ENTRY_POINT_GROUP):
        self.group = group
        self._providers: dict[str, DelegateProvider] = {}

    def register_provider(self, name: str, factory: Callable[..., Any],
                          options_spec: Mapping[str, Any] | None = None, help: str = "") -> DelegateProvider:
        """Register `factory` under `name`.

        Args:
            options_spec: option name -> OptionSpec or (type, default, help); None passes
                options through untyped.
        """
        if not name:
            raise ValueError("a delegate provider needs a non-empty name")
        if name in self._providers:
            raise ValueError(f"a delegate provider named {name!r} is already registered")
        provider = DelegateProvider(name, factory, _option_specs(options_spec), help)
        self._providers[name] = provider
        return provider

    def _entry_points(self) -> dict[str, importlib.metadata.EntryPoint]:
        return {ep.name: ep for ep in importlib.metadata.entry_points(group=self.group)}

    def names(self) -> list[str]:
        """Registered names and entry-point names, without importing any plugin."""
        return sorted(set(self._providers) | set(self._entry_points()))

    def provider(self, name: str) -> DelegateProvider:
        """The provider called `name`; an entry point is imported here, and only here.

        Raises:
            ValueError: no such name, or the plugin fails to import.
        """
        if name in self._providers:
            return self._providers[name]
        ep = self._entry_points().get(name)
        if ep is None:
            raise ValueError(f"Unknown delegate {name!r}; available: {', '.join(self.names()) or 'none'}")
        return _load(ep.value, lambda: _provider_for(name, ep.load()))

    def create_delegate(self, name: str, /, **options: Any) -> Any:
        """A delegate from a registered name, an entry-point name or ``package.module:factory``.

        Raises:
            ValueError: unknown name, bad options, or a failing factory.
        """
        if name not in self._providers and ":" in name and name not in self._entry_points():
            return load_delegate(name, options)
        provider = self.provider(name)
        return _load(name, lambda: provider.create(**options))


# The process-wide registry the command line consults (like TFLite's REGISTER_DELEGATE_PROVIDER).
default_registry = DelegateRegistry()
register_provider = default_registry.register_provider
create_delegate = default_registry.create_delegate
provider_names = default_registry.names
