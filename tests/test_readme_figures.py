"""Every figure the README quotes from a command comes from that command (issue 31, part B10).

Each README block that starts with `$ accelsim ...` is run (cost-only commands are deterministic) and every
line it quotes must be a line of what the command prints now, except `…` (lines left out) and the lines
that report this machine's wall clock (`VOLATILE`). The default experiment's summary rows and its `accelsim
run` listing are compared with a fresh run of it, and the `--fit` outputs of "How close are the numbers" with
the fits' own lines. A README edit that quotes output must keep to this, so a change that moves a number
fails here until the README says the new one.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# Lines that quote this machine's wall clock: the command prints them, with another number each run.
VOLATILE = (re.compile(r"analysed shapes and work in [\d.]+ms"), re.compile(r"run latency: avg="))


def fenced_blocks(text: str) -> list[list[str]]:
    """The lines (stripped) of every fenced block of `text`, indented or not."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line.strip())
    return blocks


def command_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(command, the lines quoted after it) of every fenced block whose first line is `$ accelsim ...`."""
    out = []
    for lines in fenced_blocks(text):
        if lines and lines[0].startswith("$ accelsim "):
            out.append((lines[0][2:], [line for line in lines[1:] if line and line != "…"]))
    return out


BLOCKS = command_blocks(README.read_text(encoding="utf-8"))


def _workdir(tmp_path: Path) -> Path:
    """A folder that sees the repository's fixtures under their README paths, and the README's own files."""
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    (tmp_path / "docs").mkdir()
    dsp = yaml.safe_load((ROOT / "hw_configs" / "hexagon_dsp.yaml").read_text(encoding="utf-8"))
    dsp.update(name="dsp_truncate", numerics={"mode": "rounding", "rounding": "truncate"})  # as the README says
    (tmp_path / "dsp_truncate.yaml").write_text(yaml.safe_dump(dsp, sort_keys=False), encoding="utf-8")
    dsp = yaml.safe_load((ROOT / "hw_configs" / "hexagon_dsp.yaml").read_text(encoding="utf-8"))
    dsp["partition"] = {**(dsp.get("partition") or {}), "policy": "cost"}
    (tmp_path / "dsp_cost.yaml").write_text(yaml.safe_dump(dsp, sort_keys=False), encoding="utf-8")
    return tmp_path


def test_the_readme_quotes_commands_that_this_test_runs():
    commands = [c.split()[1] for c, _ in BLOCKS]
    assert {"benchmark", "compare", "diff", "whatif", "sensitivity"} <= set(commands)
    assert all(quoted for _, quoted in BLOCKS)


@pytest.mark.slow
@pytest.mark.parametrize("command, quoted", BLOCKS, ids=[c[:60] for c, _ in BLOCKS])
def test_every_line_the_readme_quotes_from_a_command_is_what_it_prints(command, quoted, tmp_path):
    accelsim = shutil.which("accelsim", path=str(Path(sys.executable).parent)) or "accelsim"
    result = subprocess.run([accelsim, *shlex.split(command)[1:]], cwd=_workdir(tmp_path), capture_output=True,
                            text=True, timeout=600)
    printed = {line.strip() for line in (result.stdout + result.stderr).splitlines()}
    stale = [line for line in quoted if line not in printed and not any(v.search(line) for v in VOLATILE)]
    assert not stale, f"README lines that `{command}` no longer prints:\n" + "\n".join(stale) + \
        "\n--- it prints:\n" + result.stdout + result.stderr


def _default_summary_rows(text: str) -> list[list[str]]:
    """The README's rows of the default experiment's summary table, as cells."""
    section = text.split("## The first run and how to read its report", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| mobilenet_v2_100_224_int8")]


@pytest.mark.slow
def test_the_default_experiments_figures_are_what_it_prints(tmp_path):
    """The first run's listing and its summary rows (latency, speed-up, energy, ...) against a fresh run."""
    text = README.read_text(encoding="utf-8")
    accelsim = shutil.which("accelsim", path=str(Path(sys.executable).parent)) or "accelsim"
    result = subprocess.run([accelsim, "run"], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    listing = next(b for b in fenced_blocks(text) if b and b[0] == "default: 6 design points")
    assert listing == [line.strip() for line in result.stdout.strip().splitlines()]
    report = (tmp_path / "reports" / "default" / "report.md").read_text(encoding="utf-8")
    rows = {tuple(c.strip() for c in line.strip().strip("|").split("|")) for line in report.splitlines()
            if line.startswith("| mobilenet_v2_100_224_int8")}
    readme_rows = _default_summary_rows(text)
    assert len(readme_rows) == 4
    for row in readme_rows:
        assert any(row == list(r[:len(row)]) for r in rows), f"README summary row not in report.md: {row}\n{report}"


def _fit_block(text: str, first_line: str) -> list[str]:
    blocks = [b for b in fenced_blocks(text) if b and b[0] == first_line.strip()]
    assert blocks, f"README has no block starting {first_line!r}"
    return blocks[0]


@pytest.mark.slow
def test_the_fit_outputs_the_readme_quotes_are_what_the_fits_print():
    from accelsim.experiments.experiment import SHIPPED_CONFIGS
    from accelsim.hardware.config import load_hardware
    from benchmarks import cost_vs_aihub, cost_vs_coral, cost_vs_pixel3

    text = README.read_text(encoding="utf-8")
    coral = cost_vs_coral.fit_lines(cost_vs_coral.systems(load_hardware(SHIPPED_CONFIGS / "cortex_a53_cpu.yaml")))
    assert _fit_block(text, coral[0]) == [line.strip() for line in coral]
    npu, host = (load_hardware(SHIPPED_CONFIGS / f"{n}.yaml") for n in (cost_vs_aihub.NPU, cost_vs_aihub.HOST_CONFIG))
    aihub = cost_vs_aihub.fit_lines(host, npu)
    assert _fit_block(text, aihub[0]) == [line.strip() for line in aihub]
    pixel3 = cost_vs_pixel3.fit_lines()
    assert _fit_block(text, pixel3[0]) == [line.strip() for line in pixel3]


@pytest.mark.slow
def test_the_assign_cost_table_is_what_its_experiment_prints(tmp_path):
    """The summary table under "assign: cost", from the experiment the README describes beside it."""
    text = README.read_text(encoding="utf-8")
    models = [str(ROOT / "tests" / "fixtures" / "models" / f"{m}.tflite")
              for m in ("mobilenet_v2_100_224_int8", "interleaved_int8")]
    both = ["edgetpu_usb", "hexagon_dsp"]
    experiment = {"name": "assign_cost", "models": models, "host": "kryo385_cpu", "variants": [
        {"name": "cpu_only", "accelerators": []}, {"name": "order", "accelerators": both},
        {"name": "by_cost", "accelerators": both, "assign": "cost"},
        {"name": "by_energy", "accelerators": both, "assign": {"policy": "cost", "objective": "energy"}}]}
    (tmp_path / "assign.yaml").write_text(yaml.safe_dump(experiment), encoding="utf-8")
    accelsim = shutil.which("accelsim", path=str(Path(sys.executable).parent)) or "accelsim"
    result = subprocess.run([accelsim, "run", "assign.yaml", "--out", "out"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    table = next(b for b in fenced_blocks(text) if b and b[0].startswith("| Model") and "| by_cost" in "".join(b))
    report = [line.strip() for line in (tmp_path / "out" / "report.md").read_text(encoding="utf-8").splitlines()]
    start = report.index(table[0])
    assert report[start:start + len(table)] == table


@pytest.mark.slow
def test_the_ethos_u_tables_fixture_rows_are_what_we_simulate_now():
    """Our cycles, SRAM and weight bytes in the README's Vela table for the fixtures (the rows this machine can
    rerun without the model caches; Vela's columns are Vela's) against our cost model now."""
    from accelsim.hardware.config import load_hardware
    from benchmarks.cost_vs_vela import FIXTURES, our_nodes

    text = README.read_text(encoding="utf-8")
    table = next(b for b in fenced_blocks(text) if b and b[0].startswith("model") and "bound c/a/w %" in b[0])
    checked = 0
    for line in table[1:]:
        cells = line.split()
        if len(cells) < 12 or not (FIXTURES / f"{cells[0]}.tflite").exists():
            continue
        device = load_hardware(ROOT / "hw_configs" / f"{cells[2]}.yaml")
        nodes, _, _ = our_nodes(FIXTURES / f"{cells[0]}.tflite", device)
        assert [sum(n.cycles for n in nodes), sum(n.sram_bytes for n in nodes), sum(n.weight_bytes for n in nodes)] \
            == [int(cells[3]), int(cells[7]), int(cells[9])], line
        checked += 1
    assert checked == 25  # five int8 fixtures x five configs


@pytest.mark.slow
def test_the_cost_policy_rows_are_what_the_benchmark_prints(capsys):
    from benchmarks.cost_policy import main

    text = README.read_text(encoding="utf-8")
    table = next(b for b in fenced_blocks(text) if b and b[0].startswith("accelerator     model"))
    assert main([]) == 0
    printed = {line.strip() for line in capsys.readouterr().out.splitlines()}
    assert [line for line in table if line not in printed] == []
