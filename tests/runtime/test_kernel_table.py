"""The op -> module table in runtime/kernels/__init__.py names the module that registers each builtin."""

from __future__ import annotations

import re

import accelsim.runtime.kernels as kernels
from accelsim.runtime.resolver import BuiltinOpResolver, MutableOpResolver


def _table() -> dict[str, str]:
    """op -> module, read from the package docstring (a module name, then its ops, continued on indented lines)."""
    body = kernels.__doc__.split("registrations):\n\n", 1)[1].split("\n\n", 1)[0]
    table: dict[str, str] = {}
    module = None
    for line in body.splitlines():
        first, _, rest = line.strip().partition(" ")
        if re.fullmatch(r"[a-z_0-9]+", first):
            module, ops = first, rest
        else:
            ops = line
        for op in filter(None, (o.strip() for o in ops.split(","))):
            assert op not in table, f"{op} is listed twice"
            table[op] = module
    return table


def _registered_by(family) -> set[str]:
    resolver = MutableOpResolver()
    family.register(resolver)
    return {name for name, _custom, _lo, _hi in resolver.registrations()}


def test_every_builtin_is_registered_by_the_module_the_table_names():
    table = _table()
    actual = {op: family.__name__.rsplit(".", 1)[1] for family in kernels.FAMILIES for op in _registered_by(family)}
    assert actual == table


def test_the_table_covers_the_builtin_resolver():
    registered = {name for name, custom, _lo, _hi in BuiltinOpResolver().registrations() if not custom}
    assert registered == set(_table())
