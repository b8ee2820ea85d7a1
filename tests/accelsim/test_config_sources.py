"""Every number in a shipped hardware config says where it comes from (issue 24, part 4).

A numeric value (a count, a quantity with its unit, a version range) carries, on its own line,
on the line of a key above it, or in a paragraph of full-line comments (a `- ` item) that names its
key or its parent's (unless that is a top-level section such as `compute`):
a source (three words or more), or, when it says it was fitted, the fit command
(`python benchmarks/<script>.py ...`) and its fit rows, or, when it says it was assumed,
`assumed:` with a reason. A bare `fitted` or `assumed` fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from accelsim.experiments.experiment import SHIPPED_CONFIGS
from accelsim.hardware.config import load_hardware
from accelsim.hardware.types import CALIBRATION_STARTS

CONFIGS = sorted(SHIPPED_CONFIGS.glob("*.yaml"))
_NUMBER = re.compile(r"^-?\d")
# Keys a full-line comment may name for a whole list below it (the claims are cited as a table).
_LIST_KEYS = {"claims"}


def _comment(line: str) -> str:
    """The comment of a YAML line ('' when none); the shipped configs quote no '#'."""
    quoted = re.sub(r'"[^"]*"', "", line)
    return quoted.split("#", 1)[1].strip() if "#" in quoted else ""


def numeric_leaves(text: str) -> list[tuple[tuple, int, list[int]]]:
    """(key path, line, lines of the keys above it) of every numeric scalar of a YAML document (lines from 1)."""
    out: list[tuple[tuple, int, list[int]]] = []

    def walk(node, path: tuple, above: list[int]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, (*path, key.value), [*above, key.start_mark.line + 1])
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*path, i), [*above, item.start_mark.line + 1])
        elif _NUMBER.match(str(node.value)):
            out.append((path, node.start_mark.line + 1, above))

    walk(yaml.compose(text), (), [])
    return out


def comment_paragraphs(lines: list[str]) -> list[str]:
    """The full-line comments joined into paragraphs: one per `- ` item or `Heading:` line, ended by an empty
    comment or code."""
    out: list[str] = []
    current: list[str] = []
    for line in [*lines, ""]:
        body = line.strip()[1:].strip() if line.strip().startswith("#") else None
        if current and (body is None or not body or re.match(r"- |[A-Z][\w ]*: ", body)):
            out.append(" ".join(current))
            current = []
        if body:
            current.append(body)
    return out


def problems(text: str, source: str = "<text>") -> list[str]:
    """One line per number without a source, as `file:line: key.path: why`."""
    lines = text.splitlines()
    blocks = comment_paragraphs(lines)
    out = []
    for path, line, above in numeric_leaves(text):
        named = {path[-1], *(path[-2:-1] if len(path) > 2 else ())} | (_LIST_KEYS & set(path))
        named = {k for k in named if isinstance(k, str)}
        pieces = [_comment(lines[n - 1]) for n in {line, *above}]
        pieces += [b for b in blocks if any(re.search(rf"\b{re.escape(k)}\b", b) for k in named)]
        evidence = " ".join(p for p in pieces if p)
        where = f"{source}:{line}: {'.'.join(map(str, path))}"
        if re.search(r"\bfitted\b", evidence, re.I) and not (
                re.search(r"python benchmarks/\w+\.py", evidence) and re.search(r"\bfit rows?\b", evidence)):
            out.append(f"{where}: says it was fitted but names no fit command (python benchmarks/...) "
                       "and fit rows")
        elif re.search(r"\bassum", evidence, re.I) and not re.search(r"assumed: *\S+( +\S+){2,}", evidence):
            out.append(f"{where}: says it was assumed but gives no 'assumed: <reason>'")
        elif len(evidence.split()) < 3:
            out.append(f"{where}: no source, fit command or 'assumed: <reason>'")
    return out


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_number_of_a_shipped_config_carries_its_source(path):
    assert problems(path.read_text(encoding="utf-8"), path.name) == []
    assert load_hardware(path).hardware.calibration.startswith(CALIBRATION_STARTS)


def test_a_bare_fitted_or_assumed_fails_and_a_cited_or_explained_one_passes():
    text = "\n".join([
        "# window_efficiency: fitted by `python benchmarks/cost_vs_vela.py --fit` over the fit rows a, b.",
        "compute:",
        "  window_efficiency: 0.7   # fitted (above)",
        "  add_cycles: 1.5          # fitted",
        "  lanes: 64                # assumed",
        "  rows: 16                 # assumed: no published figure; the square array of the same MACs",
        "  clock_mhz: 500           # vela.ini: core_clock=500e6, the system clock",
        "  depth: 8",
        "  rates:                   # fitted by python benchmarks/fit_host_x86.py over fit rows: all fixtures",
        "    int8: 3",
    ])
    assert problems(text, "x.yaml") == [
        "x.yaml:4: compute.add_cycles: says it was fitted but names no fit command (python benchmarks/...) and "
        "fit rows",
        "x.yaml:5: compute.lanes: says it was assumed but gives no 'assumed: <reason>'",
        "x.yaml:8: compute.depth: no source, fit command or 'assumed: <reason>'",
    ]


def test_shipped_configs_are_found():
    assert {"host_cpu", "host_x86", "edgetpu_usb", "ethos_u55_128"} <= {Path(p).stem for p in CONFIGS}


NNAPI_CONFIGS = sorted((SHIPPED_CONFIGS / "nnapi").glob("*.yaml"))


@pytest.mark.parametrize("path", NNAPI_CONFIGS, ids=[p.stem for p in NNAPI_CONFIGS])
def test_every_number_of_a_shipped_nnapi_config_carries_its_source(path):
    """A phone's NNAPI (kind nnapi, hw_configs/nnapi/) holds its drivers' overrides: each cited the same way."""
    assert problems(path.read_text(encoding="utf-8"), path.name) == []
