"""What users read: µs (never 'us'), counts with the right number, build output ignored (issue 31 C14)."""

from __future__ import annotations

import re
from pathlib import Path

from support import FIXTURES

from accelsim.cli.main import main
from accelsim.core.units import counted

ROOT = Path(__file__).resolve().parents[2]
# 'us' as a unit: after a number or in '(us)' / 'in us'
US = re.compile(r"(\d us\b|\(us\)|\bin us\b)")


def test_counts_take_the_right_number():
    assert [counted(1, "variant"), counted(4, "variant"), counted(0, "partition"), counted(1, "stale entry",
            "stale entries"), counted(2, "stale entry", "stale entries"), counted(1500, "node")] == [
        "1 variant", "4 variants", "0 partitions", "1 stale entry", "2 stale entries", "1,500 nodes"]


def test_benchmark_and_whatif_say_microseconds_and_singular_counts(capsys, tmp_path):
    model = str(FIXTURES / "mobilenet_v2_035_96_int8.tflite")
    assert main(["benchmark", model, "--hw", "hexagon_dsp", "--num-runs", "1", "--warmup-runs", "1"]) == 0
    out = capsys.readouterr().out
    assert not US.findall(out), US.findall(out)
    assert "Simulated latency in µs:" in out and "Inference timings in µs" in out
    assert "Delegated 65 of 65 nodes in 1 partition;" in out
    assert main(["whatif", model, "--hw", "edgetpu_usb"]) == 0
    out = capsys.readouterr().out
    assert not US.findall(out) and " µs" in out
    experiment = tmp_path / "one.yaml"
    experiment.write_text(f"models: [{model}]\nhost: host_cpu\nvariants: [{{name: cpu, accelerators: []}}]\n")
    assert main(["validate", str(experiment)]) == 0
    assert "(experiment 'one', 1 variant)" in capsys.readouterr().out


def test_help_says_microseconds():
    from accelsim.cli.main import build_parser

    text = build_parser().format_help() + "".join(
        a.choices[name].format_help() for a in build_parser()._subparsers._group_actions for name in a.choices)
    assert not US.findall(text), US.findall(text)


def test_build_output_is_ignored():
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "dist/" in ignored and "build/" in ignored


def test_the_help_examples_use_the_sample_models_accelsim_examples_writes(tmp_path, capsys):
    """Issue 31 C15: wheel users get the models the help examples name; no help text points into tests/."""
    from accelsim.cli.help import EPILOGS

    assert main(["examples", str(tmp_path / "models")]) == 0
    written = {Path(line).name for line in capsys.readouterr().out.splitlines() if line.startswith(str(tmp_path))}
    named = {m for text in EPILOGS.values() for m in re.findall(r"models/(\w+\.(?:tflite|py))", text)}
    assert named and named <= written, named - written
    assert not any("tests/" in text for text in EPILOGS.values())
    for name in written:  # copies of the shipped files, not links into a checkout
        assert not (tmp_path / "models" / name).is_symlink() and (tmp_path / "models" / name).stat().st_size > 0
    ops = str(tmp_path / "models" / "custom_op_atan.py")
    assert main(["benchmark", str(tmp_path / "models" / "atan_custom.tflite"), "--ops", ops, "--num-runs", "0"]) == 0


def test_validate_notes_keep_the_files_key_order(tmp_path, capsys):
    """Issue 31 C14: a tensor config's notes alternated macs_per_cycle and vector_per_cycle, dtype by dtype."""
    path = tmp_path / "tiny.yaml"
    path.write_text("name: tiny\nkind: tensor\nclock: 1 GHz\n"
                    "compute: {macs_per_cycle: {int16: 64}, vector_per_cycle: {int16: 32}}\n"
                    "memory: {levels: {dram: {bandwidth: 10 GB/s}}, weights: dram, activations: dram}\n"
                    "link: {bandwidth: 10 GB/s, shared_memory: true}\n"
                    "claims:\n  - {op: ADD, versions: 1-2, dtypes: [int8]}\n")
    assert main(["validate", str(path)]) == 0
    keys = [line.split(": ")[1].split(" ")[0] for line in capsys.readouterr().out.splitlines()
            if line.startswith(("  note: compute.", "  note: energy.", "  assumed: "))]
    order = ["compute.macs_per_cycle", "compute.vector_per_cycle", "energy.mac", "memory.", "link."]
    rank = [next(k for k, prefix in enumerate(order) if key.startswith(prefix)) for key in keys]
    assert rank == sorted(rank) and len(set(rank)) == 5, keys


def test_the_summary_links_what_to_change_when_the_report_has_it():
    """Issue 31 C14: the top summary points to the sensitivity section (a link in HTML and Markdown)."""
    from accelsim.reports.document import render_html, render_markdown
    from accelsim.reports.report import build_document

    experiment = {"sensitivity": [{"title": "m on v", "lines": ["m: 1.0 µs"]}]}
    blocks = build_document("x", [], [], experiment, [], {}, [], {}, False)
    html = render_html(blocks, "x", {})
    first = html.split("<p>", 1)[1].split("</p>", 1)[0]
    assert '<a href="#what-to-change-sensitivity-and-bottlenecks">What to change: sensitivity and bottlenecks</a>' \
        in first
    assert '<h2 id="what-to-change-sensitivity-and-bottlenecks">' in html
    md = render_markdown(blocks)
    assert "[What to change: sensitivity and bottlenecks](#what-to-change-sensitivity-and-bottlenecks)" in md
    assert "What to change" not in render_markdown(build_document("x", [], [], {}, [], {}, [], {}, False))
