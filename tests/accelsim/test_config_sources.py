"""Every number in a shipped hardware config says where it comes from (issue 24, part 4).

A numeric value (a count, a quantity with its unit, a version range) carries, on its own line,
on the line of a key above it, or in a paragraph of full-line comments (a `- ` item) that names its
key or its parent's (unless that is a top-level section such as `compute`), one of (issue 31 B8):
- a citation (`CITATION`): a URL or a web address, a document's file (`vela.ini`,
  `architecture_features.py`, `perf.yaml`, `/proc/cpuinfo`), a section of a document (`Table 1`,
  `section 3`, `p. 12`), a named document (a product brief, datasheet, tech specs, an optimization
  guide or reference manual), a paper (`Horowitz, "Computing's energy problem", ISSCC 2014`, or
  `Horowitz 2014 (above)` pointing at it), a tool's output with its version and option
  (`Vela 5.2 --verbose-performance`), or a measurement with its date (`measured ... 2026-11-25`);
- the fit command (`python benchmarks/<script>.py ...`) and its fit rows;
- `assumed: <reason>`.
A comment that says it was fitted needs the command and its rows, one that says it was assumed
needs `assumed: <reason>`, and a comment that is none of these (however many words) fails.
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
# What counts as a citation (the module docstring lists the forms).
CITATION = re.compile("|".join([
    r"https?://\S+", r"\b[\w-]+(\.[\w-]+)*\.(com|org|io|net|dev|ai|edu)\b",  # a URL or a web address
    r"\b[\w./<>-]+\.(py|cpp|cc|h|ini|md|fbs|pdf|c|txt|yaml|json)\b", r"/proc/\w+|/sys/\S+",  # a document's file
    r"\b(Table|Section|section|§|Figure|Fig\.|chapter|Chapter|p\.|pp\.|page)\s*[\w.]+",  # a section of a document
    r"\b(product brief|tech specs|datasheet|data sheet|Optimization Guide|Reference Manual|white paper)\b",
    r'\b[A-Z][a-z]+( et al\.)?,? "[^"]+",? [A-Z]+ (19|20)\d\d\b',  # a paper: author, "title", venue year
    r"\b[A-Z][a-z]+( et al\.)? (19|20)\d\d \(above",  # the paper, cited in the header above
    r"\b[A-Z]\w* \d+(\.\d+)* --[a-z][\w-]+",  # a tool's output: name, version and option
    r"\bmeasured\b.*\b\d{4}-\d\d-\d\d\b",  # a measurement with its date
]))


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
        elif not (CITATION.search(evidence) or re.search(r"assumed: *\S+( +\S+){2,}", evidence)
                  or (re.search(r"python benchmarks/\w+\.py", evidence) and re.search(r"\bfit rows?\b", evidence))):
            out.append(f"{where}: no citation (URL, document and section, paper, tool output, dated measurement), "
                       "fit command with its rows or 'assumed: <reason>'")
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
        "  width: 4                 # the micro-block above, four lanes wide",
        "  banks: 24                # Arm Ethos-U55 datasheet, the shared buffer",
        "  taps: 4                  # https://example.org/npu-notes says so",
        "  passes: 7                # Vela 5.2 --verbose-performance: 7 ops span the tensor",
        "  units: 2                 # the vendor's manual, Table 4-2",
        "  mac: 0.2                 # Horowitz 2014 (above)",
        "  bandwidth: 7             # measured with NumPy copyto of 1 GiB, 2026-11-25",
    ])
    assert problems(text, "x.yaml") == [
        "x.yaml:4: compute.add_cycles: says it was fitted but names no fit command (python benchmarks/...) and "
        "fit rows",
        "x.yaml:5: compute.lanes: says it was assumed but gives no 'assumed: <reason>'",
        "x.yaml:8: compute.depth: no citation (URL, document and section, paper, tool output, dated measurement), "
        "fit command with its rows or 'assumed: <reason>'",
        # Words are not a source (issue 31 B8): six words that cite nothing fail.
        "x.yaml:11: compute.width: no citation (URL, document and section, paper, tool output, dated measurement), "
        "fit command with its rows or 'assumed: <reason>'",
    ]


def test_shipped_configs_are_found():
    assert {"host_cpu", "host_x86", "edgetpu_usb", "ethos_u55_128"} <= {Path(p).stem for p in CONFIGS}


NNAPI_CONFIGS = sorted((SHIPPED_CONFIGS / "nnapi").glob("*.yaml"))


@pytest.mark.parametrize("path", NNAPI_CONFIGS, ids=[p.stem for p in NNAPI_CONFIGS])
def test_every_number_of_a_shipped_nnapi_config_carries_its_source(path):
    """A phone's NNAPI (kind nnapi, hw_configs/nnapi/) holds its drivers' overrides: each cited the same way."""
    assert problems(path.read_text(encoding="utf-8"), path.name) == []
