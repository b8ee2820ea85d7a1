"""Structural verification of a .tflite FlatBuffer before anything reads it.

flatc's Python reader trusts every offset and length in the file: a corrupt
vector length makes the object API loop over garbage, a shared table can be
unpacked millions of times, and a stray offset raises whatever `struct` or
NumPy happens to raise. `verify_model` walks the buffer first, the way
flatbuffers' C++ Verifier does (flatbuffers/verifier.h: every table, vtable,
vector and string must lie inside the buffer; depth and table count are
bounded), driven by the schema in schema/tflite.fbs, and raises ModelError
naming the path of the first bad object ("subgraphs[0].tensors[3].shape").

On top of the C++ rules it refuses zero offsets (no builder writes one: an
object cannot sit on its own offset), a union type without its table (the
Python object API would dereference None), and files whose objects, counted
as the object API will unpack them, outnumber the file's bytes: a FlatBuffer
written without sharing never does, so only a file that points many times at
the same data (an amplification attack) reaches that limit.

`layout` returns where every object is, for fuzzers that mutate structure.
"""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass
from importlib import resources

from accelsim.runtime.errors import ModelError

# flatbuffers/verifier.h defaults.
MAX_DEPTH = 64
MAX_TABLES = 1_000_000
# Objects that may be unpacked beyond one per byte of the file (small files, the root).
_BUDGET_SLACK = 4096

_SCALAR_SIZES = {
    "bool": 1, "byte": 1, "ubyte": 1, "int8": 1, "uint8": 1,
    "short": 2, "ushort": 2, "int16": 2, "uint16": 2,
    "int": 4, "uint": 4, "int32": 4, "uint32": 4, "float": 4, "float32": 4,
    "long": 8, "ulong": 8, "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}
# Vectors the reader keeps as one bytes object instead of unpacking element by element.
_BYTE_TYPES = {"byte", "ubyte", "int8", "uint8"}

SCALAR, STRING, TABLE, UNION, VECTOR, VECTOR_STRING, VECTOR_TABLE = (
    "scalar", "string", "table", "union", "vector", "vector of strings", "vector of tables",
)


@dataclass(frozen=True)
class Field:
    """One non-deprecated field of a table, as the verifier needs it."""

    name: str
    voffset: int  # where its entry sits in the vtable: 4 + 2 * field id
    kind: str
    size: int = 0  # SCALAR: byte size; VECTOR: element size
    target: str = ""  # TABLE / VECTOR_TABLE: table name; UNION: union name
    type_voffset: int = 0  # UNION: the vtable entry of its `<name>_type` field
    counted: bool = False  # VECTOR: the reader unpacks it element by element


@dataclass(frozen=True)
class Schema:
    """Tables (fields in vtable order) and unions (type code -> table) of a .fbs file."""

    tables: dict[str, tuple[Field, ...]]
    unions: dict[str, dict[int, str]]
    root: str
    identifier: bytes


# ---------------------------------------------------------------------------
# A small .fbs reader: namespace, include, attribute, file_identifier,
# file_extension, root_type, enum, union and table (structs are not used by TFLite).

_TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|(?P<tok>"(?:[^"\\]|\\.)*"|[A-Za-z_][\w.]*|[-+]?[\w.]+|[{}\[\]():;=,])',
    re.S,
)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"schema: unexpected character {text[pos]!r} at offset {pos}")
        if m.group("tok"):
            out.append(m.group("tok"))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str:
        return self.toks[self.i] if self.i < len(self.toks) else ""

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if not tok or (expected is not None and tok != expected):
            raise ValueError(f"schema: expected {expected or 'a token'} at token {self.i}, got {tok!r}")
        self.i += 1
        return tok

    def attributes(self) -> dict[str, str]:
        attrs: dict[str, str] = {}
        if self.peek() != "(":
            return attrs
        self.take("(")
        while self.peek() != ")":
            key = self.take()
            attrs[key] = ""
            if self.peek() == ":":
                self.take(":")
                attrs[key] = self.take()
            if self.peek() == ",":
                self.take(",")
        self.take(")")
        return attrs

    def members(self) -> list[tuple[str, str | None, dict[str, str]]]:
        """`{ A = 1, B (deprecated), C: Table, }` as (name, explicit value, attributes)."""
        out = []
        self.take("{")
        while self.peek() != "}":
            name = self.take()
            if self.peek() == ":":  # union alias `Name: Type`
                self.take(":")
                name = self.take()
            value = None
            if self.peek() == "=":
                self.take("=")
                value = self.take()
            out.append((name, value, self.attributes()))
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return out


def parse_schema(text: str) -> Schema:
    """Read the tables, unions and root of a FlatBuffers schema.

    Raises:
        ValueError: the text uses something this reader does not know (structs, services).
    """
    p = _Parser(text)
    enums: dict[str, str] = {}
    unions: dict[str, dict[int, str]] = {}
    raw_tables: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    root, identifier = "", b""
    while p.peek():
        word = p.take()
        if word in ("namespace", "include", "attribute", "file_extension"):
            p.take()
            p.take(";")
        elif word == "file_identifier":
            identifier = p.take().strip('"').encode()
            p.take(";")
        elif word == "root_type":
            root = p.take()
            p.take(";")
        elif word == "enum":
            name = p.take()
            p.take(":")
            enums[name] = p.take()
            p.attributes()
            p.members()
        elif word == "union":
            name = p.take()
            p.attributes()
            codes, nxt = {}, 1
            for member, value, _ in p.members():
                nxt = int(value, 0) if value is not None else nxt
                codes[nxt] = member
                nxt += 1
            unions[name] = codes
        elif word == "table":
            name = p.take()
            p.attributes()
            p.take("{")
            fields = []
            while p.peek() != "}":
                fname = p.take()
                p.take(":")
                ftype = p.take()
                if ftype == "[":
                    ftype = "[" + p.take() + "]"
                    p.take("]")
                if p.peek() == "=":
                    p.take("=")
                    p.take()
                fields.append((fname, ftype, p.attributes()))
                p.take(";")
            p.take("}")
            raw_tables[name] = fields
        else:
            raise ValueError(f"schema: {word!r} declarations are not supported")
    tables = {name: _resolve_fields(name, fields, enums, unions, raw_tables) for name, fields in raw_tables.items()}
    if root not in tables:
        raise ValueError(f"schema: root_type {root!r} is not a table")
    return Schema(tables, unions, root, identifier)


def _resolve_fields(table, fields, enums, unions, tables) -> tuple[Field, ...]:
    out = []
    slot = 0
    for fname, ftype, attrs in fields:
        is_union = ftype in unions
        if "id" in attrs:
            slot = int(attrs["id"]) - (1 if is_union else 0)
        if "deprecated" not in attrs:
            out.extend(_field(table, fname, ftype, slot, enums, unions, tables))
        slot += 2 if is_union else 1
    return tuple(sorted(out, key=lambda f: f.voffset))


def _field(table, name, ftype, slot, enums, unions, tables) -> list[Field]:
    voffset = 4 + 2 * slot
    vector = ftype.startswith("[")
    base = ftype.strip("[]")
    base = enums.get(base, base)
    if base in _SCALAR_SIZES:
        if vector:
            return [Field(name, voffset, VECTOR, _SCALAR_SIZES[base], counted=base not in _BYTE_TYPES)]
        return [Field(name, voffset, SCALAR, _SCALAR_SIZES[base])]
    if base == "string":
        return [Field(name, voffset, VECTOR_STRING if vector else STRING, 4)]
    if base in tables:
        return [Field(name, voffset, VECTOR_TABLE if vector else TABLE, 4, base)]
    if base in unions and not vector:
        return [Field(f"{name}_type", voffset, SCALAR, 1),
                Field(name, voffset + 2, UNION, 4, base, type_voffset=voffset)]
    raise ValueError(f"schema: field {table}.{name} has unsupported type {ftype}")


@functools.cache
def tflite_schema() -> Schema:
    """The schema of .tflite files (schema/tflite.fbs, the source flatc's reader was generated from)."""
    return parse_schema(resources.files("accelsim.schema").joinpath("tflite.fbs").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# The walk.

_U8 = struct.Struct("<B").unpack_from
_U16 = struct.Struct("<H").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
_MAX_OFFSET = (1 << 31) - 1


@dataclass(frozen=True)
class Region:
    """Where one object of the file lies: kind is 'table', 'vtable', 'vector', 'string',
    'offset' (a uoffset field or vector element) or 'scalar'; name is 'Table.field'."""

    kind: str
    pos: int
    size: int
    name: str


class _Corrupt(Exception):
    pass


class _Walker:
    def __init__(self, schema: Schema, buf, budget: int, collect: bool):
        self.schema = schema
        self.buf = buf
        self.size = len(buf)
        self.budget = budget
        self.tables = 0
        self.depth = 0
        self.path: list[object] = []
        self.regions: list[Region] | None = [] if collect else None

    def fail(self, problem: str):
        raise _Corrupt(problem)

    def mark(self, kind: str, pos: int, size: int, name: str) -> None:
        if self.regions is not None:
            self.regions.append(Region(kind, pos, size, name))

    def spend(self, units: int) -> None:
        self.budget -= units
        if self.budget < 0:
            self.fail("the file refers to the same objects so many times that unpacking them would take more "
                      "objects than the file has bytes (a shared-offset amplification)")

    def need(self, pos: int, n: int, what: str) -> None:
        if pos < 0 or pos + n > self.size:
            self.fail(f"{what} at byte {pos} ({n} bytes) runs past the end of the buffer ({self.size} bytes)")

    def offset(self, pos: int, what: str, name: str) -> int:
        """The object a uoffset at `pos` points to."""
        self.need(pos, 4, f"offset to {what}")
        self.mark("offset", pos, 4, name)
        o = _U32(self.buf, pos)[0]
        if o == 0:
            self.fail(f"offset to {what} at byte {pos} is 0 (it points at itself)")
        if o > _MAX_OFFSET or pos + o >= self.size:
            self.fail(f"offset to {what} at byte {pos} points to byte {pos + o}, outside the buffer "
                      f"({self.size} bytes)")
        return pos + o

    def table(self, pos: int, name: str) -> None:
        self.tables += 1
        self.depth += 1
        if self.depth > MAX_DEPTH or self.tables > MAX_TABLES:
            self.fail(f"tables nest deeper than {MAX_DEPTH} or number more than {MAX_TABLES}")
        self.spend(1)
        self.need(pos, 4, f"table {name}")
        vt = pos - _I32(self.buf, pos)[0]
        self.need(vt, 2, f"vtable of table {name} (at byte {pos})")
        vsize = _U16(self.buf, vt)[0]
        if vsize & 1:
            self.fail(f"vtable of table {name} at byte {vt} has odd size {vsize}")
        self.need(vt, vsize, f"vtable of table {name} (at byte {pos})")
        self.mark("table", pos, 4, name)
        self.mark("vtable", vt, vsize, name)
        for f in self.schema.tables[name]:
            fo = _U16(self.buf, vt + f.voffset)[0] if f.voffset < vsize else 0
            if fo:
                self.path.append(f.name)
                self.field(pos, pos + fo, vt, vsize, f, name)
                self.path.pop()
            elif f.kind == UNION and self.union_member(pos, vt, vsize, f) is not None:
                self.path.append(f.name)
                self.fail(f"union {f.target} has type {self.union_member(pos, vt, vsize, f)} but no table")
        self.depth -= 1

    def union_member(self, table_pos: int, vt: int, vsize: int, f: Field) -> str | None:
        """The table type a union field's `_type` field names (None for NONE or an unknown code)."""
        to = _U16(self.buf, vt + f.type_voffset)[0] if f.type_voffset < vsize else 0
        return self.schema.unions[f.target].get(_U8(self.buf, table_pos + to)[0]) if to else None

    def field(self, table_pos: int, pos: int, vt: int, vsize: int, f: Field, table: str) -> None:
        label = f"{table}.{f.name}"
        kind = f.kind
        if kind == SCALAR:
            self.need(pos, f.size, f"field {label}")
            self.mark("scalar", pos, f.size, label)
        elif kind == TABLE:
            self.table(self.offset(pos, f"table {f.target}", label), f.target)
        elif kind == STRING:
            self.string(self.offset(pos, "a string", label), label)
        elif kind == UNION:
            target = self.offset(pos, f"union {f.target}", label)
            member = self.union_member(table_pos, vt, vsize, f)
            if member is not None:
                self.table(target, member)
        else:
            self.vector(self.offset(pos, "a vector", label), f, label)

    def string(self, pos: int, label: str) -> None:
        self.spend(1)
        self.need(pos, 4, "string length")
        n = _U32(self.buf, pos)[0]
        self.need(pos + 4, n + 1, f"string of {n} bytes")
        if self.buf[pos + 4 + n] != 0:
            self.fail(f"string of {n} bytes at byte {pos} is not NUL-terminated")
        self.mark("string", pos, 4 + n + 1, label)

    def vector(self, pos: int, f: Field, label: str) -> None:
        self.need(pos, 4, "vector length")
        n = _U32(self.buf, pos)[0]
        start = pos + 4
        self.need(start, n * f.size, f"vector of {n} {f.size}-byte elements")
        self.mark("vector", pos, 4 + n * f.size, label)
        if f.kind == VECTOR:
            if f.counted:
                self.spend(n)
            return
        for i in range(n):
            self.path.append(i)
            if f.kind == VECTOR_TABLE:
                self.table(self.offset(start + 4 * i, f"table {f.target}", label), f.target)
            else:
                self.string(self.offset(start + 4 * i, "a string", label), label)
            self.path.pop()

    def where(self) -> str:
        parts = [self.schema.root]
        for p in self.path:
            if isinstance(p, int):
                parts[-1] += f"[{p}]"
            else:
                parts.append(p)
        return ".".join(parts)


def _run(buf, schema: Schema | None, collect: bool) -> _Walker:
    schema = schema or tflite_schema()
    w = _Walker(schema, buf, len(buf) + _BUDGET_SLACK, collect)
    try:
        w.need(0, 8, "root offset and file identifier")
        w.table(w.offset(0, f"root table {schema.root}", "root"), schema.root)
    except _Corrupt as exc:
        raise ModelError(f"corrupt model FlatBuffer at {w.where()}: {exc}") from None
    return w


def verify_model(buf, where: str = "<bytes>", schema: Schema | None = None) -> None:
    """Check that every object of a .tflite FlatBuffer lies inside `buf` and is bounded.

    Raises:
        ModelError: "<where>: corrupt model FlatBuffer at Model.subgraphs[0]...: <what is wrong>".
    """
    try:
        _run(buf, schema, False)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None


def layout(buf, schema: Schema | None = None) -> list[Region]:
    """Every table, vtable, vector, string, offset and scalar field of a FlatBuffer, in walk order.

    Raises:
        ModelError: the buffer does not verify.
    """
    return _run(buf, schema, True).regions or []


__all__ = ["MAX_DEPTH", "MAX_TABLES", "Field", "Region", "Schema", "layout", "parse_schema", "tflite_schema",
           "verify_model"]
