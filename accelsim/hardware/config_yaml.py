"""Reading a YAML file into plain data with the line of every key path, and the checker that reports problems
as 'file:line: key.path: what' (the hardware configs' and the experiment file's errors).

Files are read as UTF-8 with `yaml.compose` (SafeLoader) so every key keeps its line; only plain
scalars, lists and mappings are accepted (no tags that construct objects, no duplicate keys), and
nesting, aliases and quantity lengths are bounded so a small hostile file cannot cause large work.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from accelsim.core import units
from accelsim.runtime.errors import AccelsimError

_YAML = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_YAML + t for t in ("str", "int", "float", "bool", "null")}
# An unquoted date resolves to a timestamp; it is read as the text it is.
_TEXT_TAGS = {_YAML + "timestamp"}
# Aliases are expanded into copies; this bounds the work a small file full of aliases can cause.
_MAX_VALUES = 100_000
# PyYAML composes recursively and its scanner slows quadratically with nesting; no config nests deeper.
_MAX_DEPTH = 64
# accelsim.core.units matches quantities with a regex that is quadratic in the text's length.
_MAX_QUANTITY_CHARS = 200


class ConfigError(AccelsimError, ValueError):
    """A hardware description is invalid; `errors` lists every problem, one 'file:line: key: what' each."""

    def __init__(self, errors: Sequence[str]):
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


@dataclass(frozen=True)
class Document:
    """Plain data of a YAML file plus the line of every key path; what overrides edit."""

    data: Any
    lines: Mapping[tuple, int]


class _TooDeep(yaml.MarkedYAMLError):
    pass


class _DepthLimitedLoader(yaml.SafeLoader):
    """SafeLoader that stops at nesting deeper than _MAX_DEPTH, before recursion runs out.

    Flow collections (`[[[...`) are cut short in the scanner, which otherwise reads the whole
    nest ahead at a cost quadratic in its depth; block nesting is cut short in the composer.
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def fetch_flow_collection_start(self, TokenClass):
        if self.flow_level >= _MAX_DEPTH:
            raise _TooDeep(problem=f"nesting deeper than {_MAX_DEPTH} levels", problem_mark=self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > _MAX_DEPTH:
                raise _TooDeep(problem=f"nesting deeper than {_MAX_DEPTH} levels",
                               problem_mark=self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Invalid:
    """Stands for a value already reported as an error; checks skip it silently."""

    def __repr__(self) -> str:
        return "..."


INVALID = _Invalid()


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag


def keypath(path: Iterable) -> str:
    """('claims', 3, 'op') -> 'claims[3].op'."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


class _Reader:
    """Turns a composed YAML node tree into dicts, lists and scalars, recording lines and errors."""

    def __init__(self, source: str):
        self.source = source
        self.lines: dict[tuple, int] = {}
        self.errors: list[tuple[int, str]] = []
        self.constructor = SafeConstructor()
        self.budget = _MAX_VALUES

    def error(self, node, path: tuple, message: str) -> None:
        line = node.start_mark.line + 1
        where = f"{keypath(path)}: " if path else ""
        self.errors.append((line, f"{self.source}:{line}: {where}{message}"))

    def read(self, node, path: tuple = ()) -> Any:
        self.budget -= 1
        if self.budget == 0:
            self.error(node, path, f"the document expands to more than {_MAX_VALUES} values (aliases?)")
        if self.budget <= 0:
            return INVALID
        if len(path) > _MAX_DEPTH:  # only aliases nest this deep here: a file's own nesting is refused earlier
            self.error(node, path, f"nesting deeper than {_MAX_DEPTH} levels (a recursive alias?)")
            return INVALID
        if isinstance(node, MappingNode) and node.tag == _YAML + "map":
            return self._mapping(node, path)
        if isinstance(node, SequenceNode) and node.tag == _YAML + "seq":
            items = []
            for i, item in enumerate(node.value):
                self.lines[(*path, i)] = item.start_mark.line + 1
                items.append(self.read(item, (*path, i)))
            return items
        if isinstance(node, ScalarNode) and node.tag in _SCALAR_TAGS:
            try:
                return self.constructor.construct_object(node)
            except (ValueError, KeyError) as exc:  # e.g. `!!int abc`, `!!bool maybe`, a 5000-digit int
                shown = node.value if len(node.value) <= 40 else node.value[:40] + "..."
                self.error(node, path, f"{shown!r} is not a valid {_tag_name(node.tag)} ({exc})")
                return INVALID
        if isinstance(node, ScalarNode) and node.tag in _TEXT_TAGS:
            return node.value
        self.error(node, path, f"YAML tag {_tag_name(node.tag)} is not allowed (only plain values, lists "
                               "and mappings)")
        return INVALID

    def _mapping(self, node: MappingNode, path: tuple) -> dict:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not (isinstance(key_node, ScalarNode) and key_node.tag == _YAML + "str"):
                shown = key_node.value if isinstance(key_node, ScalarNode) else "a " + type(key_node).__name__
                self.error(key_node, path, f"keys must be plain names, got {shown!r}")
                continue
            key = key_node.value
            child = (*path, key)
            if key in result:
                self.error(key_node, child, f"duplicate key (first given on line {self.lines[child]})")
                continue
            self.lines[child] = key_node.start_mark.line + 1
            result[key] = self.read(value_node, child)
        return result


# Documents read in this process, by path, `what` and the file's bytes: an experiment names its host once per variant
# and `validate` reads every config again, and YAML in Python takes milliseconds a file. A Document is never changed
# once read (apply_overrides copies what it sets), so one object serves every reader.
_READ: dict[tuple, tuple[Document | None, list[tuple[int, str]]]] = {}


def read_document(path: str, what: str = "hardware settings") -> tuple[Document | None, list[tuple[int, str]]]:
    """A YAML file's plain data with the line of every key path, or the errors that prevent reading it.

    `what` names the expected content in the message for an empty file.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return None, [(0, f"{path}: cannot read: {exc.strerror or exc}")]
    key = (str(path), what, raw)
    if key not in _READ:
        if len(_READ) >= 64:
            _READ.clear()
        _READ[key] = _read_document(path, what, raw)
    doc, errors = _READ[key]
    return doc, list(errors)


def _read_document(path: str, what: str, raw: bytes) -> tuple[Document | None, list[tuple[int, str]]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, [(line, f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})")]
    try:
        node = yaml.compose(text, Loader=_DepthLimitedLoader)
    except _TooDeep as exc:
        line = exc.problem_mark.line + 1
        return None, [(line, f"{path}:{line}: {exc.problem}")]
    except yaml.reader.ReaderError as exc:  # a character YAML forbids; its position gives the line
        line = text.count("\n", 0, exc.position) + 1
        return None, [(line, f"{path}:{line}: YAML error: {exc}")]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        return None, [(line, f"{path}:{line}: YAML syntax error: {exc.problem or exc.context}")]
    except yaml.YAMLError as exc:
        return None, [(1, f"{path}:1: YAML error: {exc}")]
    if node is None:
        return None, [(1, f"{path}:1: expected a mapping of {what}, got an empty file")]
    reader = _Reader(path)
    data = reader.read(node)
    reader.lines[()] = node.start_mark.line + 1
    return Document(data, reader.lines), reader.errors


def suggest(word: str, choices: Iterable[str]) -> str:
    # Short words need a closer match: 'npu' is two letters from 'cpu' but means something else.
    cutoff = 0.6 if isinstance(word, str) and len(word) > 3 else 0.8
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff) if isinstance(word, str) else []
    return f"; did you mean {close[0]!r}?" if close else ""


def choices_text(choices: Sequence[str]) -> str:
    return ", ".join(choices)


class Checker:
    """Validates one document against the schema, collecting every error with its file:line: key."""

    def __init__(self, source: str, lines: Mapping[tuple, int], overridden: frozenset = frozenset()):
        self.source = source
        self.lines = lines
        self.overridden = overridden
        self.errors: list[tuple[int, str]] = []

    def error(self, path: tuple, message: str) -> None:
        key = f"{keypath(path)}: " if path else ""
        if any(path[:i] in self.overridden for i in range(len(path) + 1)):
            self.errors.append((0, f"{self.source}: override {key}{message}"))
            return
        probe = path
        while probe and probe not in self.lines:
            probe = probe[:-1]
        line = self.lines.get(probe)
        where = f"{self.source}:{line}" if line else self.source
        self.errors.append((line or 0, f"{where}: {key}{message}"))

    # -- structure -----------------------------------------------------------------------------

    def mapping(self, path: tuple, value: Any, required: Sequence[str], optional: Sequence[str]) -> dict | None:
        """The mapping at `path`, after reporting unknown and missing keys (None if not a mapping)."""
        if value is INVALID:
            return None
        if not isinstance(value, dict):
            self.error(path, f"expected a mapping, got {describe(value)}")
            return None
        allowed = (*required, *optional)
        for key in value:
            if key not in allowed:
                hint = suggest(key, allowed) or f"; expected one of: {choices_text(allowed)}"
                self.error((*path, key), f"unknown key{hint}")
        for key in required:
            if key not in value:
                self.error((*path, key), "required key missing")
        return {k: v for k, v in value.items() if k in allowed and v is not INVALID}

    # -- scalars -------------------------------------------------------------------------------

    def unit(self, path: tuple, value: Any, parse) -> Any:
        if value is INVALID:
            return None
        if isinstance(value, str) and len(value) > _MAX_QUANTITY_CHARS:
            self.error(path, f"expected a quantity like '8 MiB', got {len(value)} characters of text")
            return None
        try:
            return parse(value)
        except ValueError as exc:
            self.error(path, str(exc))
            return None

    def whole(self, path: tuple, value: Any, minimum: int, example: int = 64) -> int | None:
        if value is INVALID:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(path, f"expected a whole number like {example}, got {value!r}")
            return None
        if value < minimum:
            self.error(path, f"expected a whole number >= {minimum}, got {value}")
            return None
        return value

    def fraction(self, path: tuple, value: Any) -> float | None:
        number = self.unit(path, value, units.parse_number)
        if number is not None and not 0 < number <= 1:
            self.error(path, f"expected a number in (0, 1] like 0.8, got {value!r}")
            return None
        return number

    def positive(self, path: tuple, value: Any) -> float | None:
        number = self.unit(path, value, units.parse_number)
        if number is not None and number <= 0:
            self.error(path, f"expected a number above 0, got {value!r}")
            return None
        return number

    def choice(self, path: tuple, value: Any, choices: Sequence[str], what: str = "") -> str | None:
        if value is INVALID:
            return None
        if isinstance(value, str) and value in choices:
            return value
        what = what or f"one of {choices_text(choices)}"
        self.error(path, f"expected {what}, got {value!r}{suggest(value, choices)}")
        return None

    def boolean(self, path: tuple, value: Any) -> bool | None:
        if value is INVALID:
            return None
        if not isinstance(value, bool):
            self.error(path, f"expected true or false, got {value!r}")
            return None
        return value

    def text(self, path: tuple, value: Any) -> str | None:
        if value is INVALID:
            return None
        if not isinstance(value, str) or not value.strip() or "\n" in value:
            self.error(path, f"expected a one-line name, got {value!r}")
            return None
        return value

    def names(self, path: tuple, value: Any, choices: Sequence[str], what: str, example: str,
              listed: bool = False) -> tuple[str, ...] | None:
        """A non-empty list of names from `choices` (`listed`: an unknown name's error lists them all)."""
        if value is INVALID:
            return None
        if not isinstance(value, list) or not value:
            self.error(path, f"expected a list of {what} like [{example}], got {value!r}")
            return None
        one = f"a {what[:-1] if what.endswith('s') else what}"
        one = f"{one} ({choices_text(choices)})" if listed else one
        good = [self.choice((*path, i), v, choices, one) for i, v in enumerate(value)]
        return tuple(good) if None not in good else None


def describe(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(value)
    return f"{type(value).__name__} {value!r}"


# What an override (accelsim.hardware.config.apply_overrides) does to a document: a key path parsed, a value
# put at it in a copy that shares the rest, and the line table without the overridden keys.

_KEY_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\[\d+\]")


def parse_key_path(text: str) -> tuple | None:
    """('claims', 0, 'versions') for 'claims[0].versions'; None for text that is no key path."""
    if not isinstance(text, str):
        return None
    parts: list = []
    for segment in text.split("."):
        tokens = _KEY_PATH.findall(segment)
        if "".join(tokens) != segment or not tokens or tokens[0].startswith("["):
            return None
        parts.extend(int(t[1:-1]) if t.startswith("[") else t for t in tokens)
    return tuple(parts)


def set_path(data: Any, path: tuple, value: Any) -> str | None:
    """Put `value` at `path` inside `data` (creating missing mappings); a reason if impossible."""
    node = data
    for depth, part in enumerate(path[:-1]):
        nxt = path[depth + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or not 0 <= part < len(node):
                return f"{keypath(path[:depth + 1])} is not an item of a list"
            node = node[part]
            continue
        if not isinstance(node, dict):
            return f"{keypath(path[:depth])} is not a mapping"
        if part not in node:
            if isinstance(nxt, int):
                return f"{keypath(path[:depth + 1])} is not a list"
            node[part] = {}
        node = node[part]
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or not 0 <= last < len(node):
            return f"{keypath(path)} is not an item of a list"
    elif not isinstance(node, dict):
        return f"{keypath(path[:-1])} is not a mapping"
    node[last] = value
    return None


# lines_without's last few tables (accelsim.hardware.config.apply_overrides): a sweep overrides the same keys of the
# same document at every point.
_LINES: dict[tuple[int, frozenset], tuple[Mapping, Mapping]] = {}


def lines_without(lines: Mapping[tuple, int], overridden: frozenset) -> Mapping[tuple, int]:
    """`lines` without the key paths at or below an overridden one (their lines no longer say where a value is).

    Read only, and shared by every config overridden the same way (the same document, the same keys).
    """
    found = _LINES.get((id(lines), overridden))
    if found is not None and found[0] is lines:
        return found[1]
    depths = {len(o) for o in overridden}
    kept = MappingProxyType({p: line for p, line in lines.items() if not any(p[:n] in overridden for n in depths)})
    if len(_LINES) >= 64:
        _LINES.clear()
    _LINES[(id(lines), overridden)] = (lines, kept)
    return kept


def shallow_copy(node: Any) -> Any:
    """A shallow copy of a mapping or list (anything else as it is)."""
    return dict(node) if isinstance(node, dict) else list(node) if isinstance(node, list) else node


def copy_along(data: Any, path: tuple) -> None:
    """Replace, inside `data` (itself a copy), every mapping or list on `path` by a shallow copy, so that setting
    a value at `path` changes none of the containers `data` shares with the document it was copied from."""
    node = data
    for part in path[:-1]:
        if isinstance(node, dict) and part in node or isinstance(node, list) and isinstance(part, int) \
                and 0 <= part < len(node):
            node[part] = shallow_copy(node[part])
            node = node[part]
        else:
            return
