"""Reports: golden md/json/csv, numbers that agree across formats, plots, Chrome traces, atomic writes.

The golden tests read fixed input records (golden/records.json, made once by the simulator) so
that they test the report alone; a change in a cost model does not touch them. After an
intended change of the report, regenerate the expected files and review the diff:

    python tests/accelsim/test_report.py               # golden/report.md, results.json, results.csv
    python tests/accelsim/test_report.py --resimulate  # also golden/records.json from the simulator
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import io
import json
import random
import re
from pathlib import Path

import pytest

from accelsim.core import files
from accelsim.core.units import parse_rate
from accelsim.hardware.config import System, apply_overrides, load_system
from accelsim.reports import exports, labels, partition_plot, point_detail, report
from accelsim.reports.report import write_report
from accelsim.reports.results import (
    CSV_COLUMNS,
    ID_COLUMNS,
    LAYER_COLUMNS,
    NUMERICS_COLUMNS,
    area,
    error_record,
    record,
)
from accelsim.simulation.analysis import simulate_model
from accelsim.simulation.diff import inference_diff

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
MODELS = "tests/fixtures/models"
BANDWIDTH = "edgetpu_usb.link.bandwidth"
NAME = "golden"
# The experiment file's order, which the report follows (not the alphabet: the baseline comes first).
EXPERIMENT = {"source": "tests/accelsim/golden/experiment.yaml", "points": 8,
              "models": ["interleaved_int8", "dilated_cnn_int8", "transformer_block_int8"],
              "variants": ["cpu_only", "hexagon_dsp", "edgetpu_usb"], "sweep_keys": [BANDWIDTH]}
MISSING = [{"id": "0123456789abcdef", "model_name": "interleaved_int8", "variant": "edgetpu_usb",
            "sweep": {BANDWIDTH: "4 GB/s"}}]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# -- fixtures ------------------------------------------------------------------------------------


def _point(model: str, variant: str, accelerators: list[str], sweep: dict, numerics_runs: int = 0) -> dict:
    """A real record, made as an experiment makes one: sweep values applied to the named accelerator."""
    system = load_system(str(ROOT / "hw_configs/host_cpu.yaml"),
                         [str(ROOT / f"hw_configs/{a}.yaml") for a in accelerators])
    accels = []
    for a in system.accelerators:
        changes = {k.split(".", 1)[1]: v for k, v in sweep.items() if k.split(".", 1)[0] == a.name}
        accels.append(apply_overrides(a, changes) if changes else a)
    system = System(system.host, tuple(accels))
    path = str(ROOT / MODELS / model)
    diff = inference_diff(path, system, numerics_runs) if numerics_runs else None
    rec = record(simulate_model(path, system), point_id=_id(model, variant, sweep), model=f"{MODELS}/{model}",
                 variant=variant, sweep=sweep, diff=diff)
    return {**rec, **area(system)}  # as an experiment stores it


def _id(model: str, variant: str, sweep: dict) -> str:
    return hashlib.sha256(json.dumps([model, variant, sweep], sort_keys=True).encode()).hexdigest()[:16]


def _fill_speedups(records: list[dict]) -> None:
    base = {r["model"]: r["latency_us"] for r in records if r["status"] == "ok" and not r["accelerators"]}
    for r in records:
        if r["status"] == "ok" and r["model"] in base:
            r["speedup"] = round(base[r["model"]] / r["latency_us"], 3)


def simulate_records() -> list[dict]:
    """The golden input: a CPU baseline, a DSP with numerics, a swept Edge TPU, a prefix-rejected model, a failure."""
    m = "interleaved_int8.tflite"
    records = [_point(m, "cpu_only", [], {}), _point(m, "hexagon_dsp", ["hexagon_dsp"], {}, numerics_runs=2)]
    records += [_point(m, "edgetpu_usb", ["edgetpu_usb"], {BANDWIDTH: bw}) for bw in ("40 MB/s", "320 MB/s", "1 GB/s")]
    records.append(_point("dilated_cnn_int8.tflite", "edgetpu_usb", ["edgetpu_usb"], {BANDWIDTH: "320 MB/s"}))
    sweep = {BANDWIDTH: "40 MB/s"}
    error = "OpResolutionError: Didn't find op for builtin opcode 'BATCH_MATMUL' version '2'"
    failed = error_record(point_id=_id("transformer_block_int8.tflite", "edgetpu_usb", sweep),
                          model=f"{MODELS}/transformer_block_int8.tflite", variant="edgetpu_usb", sweep=sweep,
                          host="host_cpu", accelerators=["edgetpu_usb"], schedule="sequential", error=error)
    records.append({**failed, **area(load_system(str(ROOT / "hw_configs/host_cpu.yaml"),
                                                 [str(ROOT / "hw_configs/edgetpu_usb.yaml")]))})
    _fill_speedups(records)
    return records


def golden_records() -> list[dict]:
    return json.loads((GOLDEN / "records.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, dict[str, Path], list[dict]]:
    out = tmp_path_factory.mktemp("report")
    records = golden_records()
    return out, write_report(out, NAME, records, missing=MISSING, experiment=EXPERIMENT), records


# -- golden files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt, filename", [("md", "report.md"), ("json", "results.json"), ("csv", "results.csv")])
def test_matches_golden_file(written, fmt, filename):
    _, files, _ = written
    expected = (GOLDEN / filename).read_bytes()
    assert files[fmt].read_bytes() == expected, (
        f"{filename} differs from tests/accelsim/golden/{filename}; if the change is intended, run "
        "`python tests/accelsim/test_report.py` and review the diff")


@pytest.mark.slow
def test_same_records_in_any_order_give_identical_files(written, tmp_path):
    out, files, records = written
    shuffled = list(records)
    random.Random(1).shuffle(shuffled)
    again = write_report(tmp_path, NAME, shuffled, missing=MISSING, experiment=EXPERIMENT)
    for fmt in ("md", "json", "csv"):
        assert again[fmt].read_bytes() == files[fmt].read_bytes(), fmt
    assert sorted(again) == sorted(files)


def test_golden_records_cover_the_report_features():
    records = golden_records()
    assert any(r["status"] == "error" for r in records)
    assert any(r["speedup"] is None for r in records if r["status"] == "ok")
    assert any(r["numerics"] for r in records if r["status"] == "ok")
    assert any(len(r["rejected"]) > point_detail._LONG_NODE_LIST for r in records if r["status"] == "ok")
    assert any(r["partitions"] > 1 for r in records if r["status"] == "ok")


# -- numbers agree across md, json and csv -------------------------------------------------------------


def _md_section(md: str, heading: str) -> str:
    start = md.index(f"\n{heading}\n")
    end = md.find("\n## ", start + 1)
    return md[start:end if end >= 0 else None]


def _md_point(md: str, label: str) -> str:
    """A design point's detail section: from its heading to the next heading of level 2 or 3."""
    start = md.index(f"\n### {label}\n")
    ends = [i for i in (md.find("\n### ", start + 1), md.find("\n## ", start + 1)) if i >= 0]
    return md[start:min(ends, default=len(md))]


def _md_table(section: str) -> list[dict[str, str]]:
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    split = [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines]
    header, rows = split[0], split[2:]
    return [dict(zip(header, r)) for r in rows]


def _num(text: str) -> float:
    return float(text.replace(",", "").rstrip("×"))


def test_summary_numbers_agree_across_md_json_csv(written):
    _, files, records = written
    points = json.loads(files["json"].read_text(encoding="utf-8"))["points"]
    rows_csv = list(csv.DictReader(io.StringIO(files["csv"].read_text(encoding="utf-8"))))
    rows_md = _md_table(_md_section(files["md"].read_text(encoding="utf-8"), "## Summary"))
    assert len(points) == len(rows_csv) == len(rows_md) == len(records)
    for p, c, m in zip(points, rows_csv, rows_md):
        assert (m["Model"], m["Variant"], c["model_name"], c["variant"]) == (p["model_name"], p["variant"]) * 2
        assert c["id"] == p["id"] and c["status"] == p["status"]
        assert m[BANDWIDTH] == p["sweep"].get(BANDWIDTH, "—")
        # Tidy: the swept key is a number in B/s with the unit in its header, not text to parse.
        assert c[f"{BANDWIDTH} [B/s]"] == (str(round(parse_rate(p["sweep"][BANDWIDTH]))) if p["sweep"] else "")
        assert (int(c["area_macs"]), int(c["area_onchip_bytes"])) == (p["area_macs"], p["area_onchip_bytes"])
        if p["status"] != "ok":
            assert m["Latency (µs)"] == "error" and c["latency_us"] == "" and c["error"] == p["error"]
            continue
        for key in ("latency_us", "compute_us", "transfer_us", "overhead_us", "partition_overhead_pct", "init_us"):
            assert float(c[key]) == p[key], key
        for key in ("partitions", "delegated_nodes", "total_nodes", "transfer_bytes", "init_param_bytes",
                    "streamed_param_bytes"):
            assert int(c[key]) == p[key], key
        assert c["accelerators"] == "+".join(p["accelerators"])
        assert _num(m["Latency (µs)"]) == pytest.approx(p["latency_us"], abs=0.005)
        assert _num(m["Partition overhead (%)"]) == pytest.approx(p["partition_overhead_pct"], abs=0.05)
        assert _num(m["Transfer (bytes)"]) == p["transfer_bytes"]
        assert int(m["Partitions"]) == p["partitions"]
        assert m["Delegated / total nodes"] == f"{p['delegated_nodes']} / {p['total_nodes']}"
        if p["speedup"] is None:
            assert m["Speed-up"] == "—" and c["speedup"] == ""
        else:
            assert float(c["speedup"]) == p["speedup"]
            assert _num(m["Speed-up"]) == pytest.approx(p["speedup"], abs=0.005)


def test_json_holds_sorted_points_and_missing(written):
    _, files, records = written
    doc = json.loads(files["json"].read_text(encoding="utf-8"))
    assert doc["experiment"] == NAME
    assert doc["missing"] == MISSING
    assert sorted(p["id"] for p in doc["points"]) == sorted(r["id"] for r in records)
    # Swept values sort as quantities, not as text ("1 GB/s" after "320 MB/s").
    swept = [p["sweep"][BANDWIDTH] for p in doc["points"]
             if p["model_name"] == "interleaved_int8" and p["variant"] == "edgetpu_usb"]
    assert swept == ["40 MB/s", "320 MB/s", "1 GB/s"]
    header, *rows = csv.reader(io.StringIO(files["csv"].read_text(encoding="utf-8")))
    # The golden input has a numerics check, so its columns are there; the swept key comes after the identity.
    assert header == [*ID_COLUMNS, f"{BANDWIDTH} [B/s]", *CSV_COLUMNS, *NUMERICS_COLUMNS, "error"]
    assert doc["columns"] == header
    assert [["" if v is None else str(v) for v in row] for row in doc["rows"]] == rows


def test_results_csv_is_tidy_numbers_that_pivot(written):
    """A dataframe-style group-by needs no string parsing: swept values and objectives are plain numbers."""
    _, files, records = written
    rows = list(csv.DictReader(io.StringIO(files["csv"].read_text(encoding="utf-8"))))
    by_bandwidth: dict[float, list[float]] = {}
    for row in rows:
        if row["status"] == "ok" and row[f"{BANDWIDTH} [B/s]"]:
            by_bandwidth.setdefault(float(row[f"{BANDWIDTH} [B/s]"]), []).append(float(row["latency_us"]))
    assert sorted(by_bandwidth) == [40e6, 320e6, 1e9]
    # More bandwidth never makes the interleaved model (the only one at 40 MB/s and 1 GB/s) slower.
    assert min(by_bandwidth[40e6]) > min(by_bandwidth[1e9])
    for row in rows:
        for column in ("energy_uj", "area_macs", "area_onchip_bytes"):
            if row["status"] == "ok":
                float(row[column])
    dsp = next(r for r in rows if r["variant"] == "hexagon_dsp")
    numerics = next(r["numerics"] for r in records if r["variant"] == "hexagon_dsp")
    assert float(dsp["numerics_max_abs_error"]) == max(o["max_abs_error"] for o in numerics["outputs"])
    assert int(dsp["numerics_runs"]) == numerics["runs"]


def test_partition_and_numerics_tables_show_record_values(written):
    _, files, records = written
    md = files["md"].read_text(encoding="utf-8")
    dsp = next(r for r in records if r["variant"] == "hexagon_dsp")
    section = _md_point(md, "interleaved_int8 | hexagon_dsp")
    rows = _md_table(section[section.index("#### Partitions"):section.index("#### Nodes not delegated")])
    assert len(rows) == len(dsp["partition_table"]) == 2
    for row, part in zip(rows, dsp["partition_table"]):
        assert int(row["Partition"]) == part["partition"] and row["Unit"] == part["unit"]
        assert row["Nodes (count)"].endswith(f"({len(part['nodes'])})")
        assert _num(row["Compute (µs)"]) == pytest.approx(part["compute_us"], abs=0.005)
        assert _num(row["Overhead (µs)"]) == pytest.approx(part["overhead_us"], abs=0.005)
        assert _num(row["% of latency"]) == pytest.approx(part["pct_of_latency"], abs=0.05)
        counted = sum(int(m.group(1) or 1) for m in re.finditer(r"[A-Z0-9_]+(?:×(\d+))?", row["Ops"]))
        assert counted == len(part["ops"])
    numerics = _md_table(section[section.index("#### Numerics"):])
    assert [int(r["Output"]) for r in numerics] == [o["index"] for o in dsp["numerics"]["outputs"]]
    assert [float(r["Max error"]) for r in numerics] == [o["max_abs_error"] for o in dsp["numerics"]["outputs"]]


def _html_details(page: str, point_anchor: str, summary: str) -> str:
    """The unescaped body of the <details> titled `summary` inside the detail section of one point."""
    start = page.index(f'id="{point_anchor}"')
    start = page.index(f">{html.escape(summary)}</h4></summary>", start)
    return html.unescape(page[start:page.index("</details>", start)])


def test_op_profile_is_in_benchmark_model_layout_in_microseconds(written):
    _, files, records = written
    page = files["html"].read_text(encoding="utf-8")
    cpu = next(r for r in records if r["variant"] == "cpu_only")
    text = _html_details(page, "interleaved_int8__cpu_only", "Op profile (benchmark_model's layout)")
    assert exports.op_profile_text(cpu) in text and "<details>" in page  # collapsed: no `open`
    lines = exports.op_profile_text(cpu).splitlines()
    run_order = lines.index("============================== Run Order ==============================")
    assert lines[run_order + 1].split("\t")[1:] == [f"{'[node type]':>40}", f"{'[first]':>9}", f"{'[avg µs]':>9}",
                                                    f"{'[%]':>8}", f"{'[cdf%]':>8}", f"{'[times called]':>9}",
                                                    "[Name]"]
    body = lines[run_order + 2:run_order + 2 + len(cpu["op_profile"])]
    for line, row in zip(body, cpu["op_profile"]):
        fields = [f.strip() for f in line.split("\t")[1:]]
        assert fields[0] == row["op"]
        assert float(fields[2]) == pytest.approx(row["avg_ms"] * 1e3, abs=5e-4)
        assert float(fields[2]) > 0 or row["avg_ms"] == 0  # a small model's nodes do not round to zero
        assert float(fields[3].rstrip("%")) == pytest.approx(row["pct"], abs=5e-4)
        assert float(fields[4].rstrip("%")) == pytest.approx(row["cdf_pct"], abs=5e-4)
        assert fields[6] == f"[host]:{row['node']}"
    top = lines.index("============================== Top by Computation Time ==============================")
    top_rows = lines[top + 2:top + 2 + exports.TOP_BY_TIME]
    times = [float(ln.split("\t")[3]) for ln in top_rows]
    assert times == sorted(times, reverse=True) and len(top_rows) == exports.TOP_BY_TIME
    assert f"Number of nodes executed: {len(cpu['op_profile'])}" in lines
    summary = lines.index("============================== Summary by node type ==============================")
    assert [ln.split("\t")[1].strip() for ln in lines[summary + 2:]] == [s["op"] for s in cpu["op_summary"]]


def test_small_node_times_keep_their_digits():
    rec = {"op_profile": [{"node": 0, "op": "ADD", "unit": "host", "partition": None, "first_ms": 2.1e-05,
                           "avg_ms": 2.1e-05, "pct": 100.0, "cdf_pct": 100.0, "times_called": 1}],
           "op_summary": [{"op": "ADD", "count": 1, "avg_ms": 2.1e-05, "pct": 100.0, "cdf_pct": 100.0,
                           "times_called": 1}]}
    text = exports.op_profile_text(rec)
    assert "\t    0.021\t    0.021\t" in text and "0.0000" not in text  # 21 ns, as µs


def test_markdown_leaves_per_node_tables_to_layers_csv_and_html(written):
    out, files, records = written
    md = files["md"].read_text(encoding="utf-8")
    page = files["html"].read_text(encoding="utf-8")
    ok = [r for r in records if r["status"] == "ok"]
    assert "Operator-wise Profiling" not in md and "Run Order" not in md
    # it was 442 with three per-node tables per point; the glossary (issue 21) is one fixed table, not per point
    assert len(md.split("\n## Glossary\n")[0].splitlines()) < 200
    for heading in ("## Summary", "## Latency breakdown", "## Sweeps", "#### Partitions"):
        assert f"\n{heading}\n" in md
    layer_files = sorted((out / "layers").iterdir())
    assert len(layer_files) == len(ok) == sum(1 for k in files if k.startswith("layers/"))
    by_name = {f"{slug}.csv": r for slug, r in zip(labels.slugs(sorted(ok, key=labels.Order().key)),
                                                    sorted(ok, key=labels.Order().key))}
    for path in layer_files:
        rec = by_name[path.name]
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
        assert tuple(rows[0]) == LAYER_COLUMNS and len(rows) == rec["total_nodes"]
        assert [int(r["node"]) for r in rows] == [r["node"] for r in rec["op_profile"]]
        total_ms = sum(r["avg_ms"] for r in rec["op_profile"])
        assert sum(float(r["time_us"]) for r in rows) == pytest.approx(total_ms * 1e3, abs=1e-3 * len(rows))
        rejected = {r["node"] for r in rec["rejected"]}
        assert {int(r["node"]) for r in rows if r["not_delegated_because"]} == rejected
        assert f"layers/{path.name}" in md or "bandwidth-320_MB_s" in path.name  # named by each point in detail
    dsp = next(r for r in records if r["variant"] == "hexagon_dsp")
    table = _html_details(page, "interleaved_int8__hexagon_dsp", "Per node (20 nodes)")
    assert table.count("<tr>") == 1 + dsp["total_nodes"] and 'class="interactive"' in table
    assert "hexagon_dsp: version 3 above max 2" in table


@pytest.mark.slow
def test_the_report_follows_the_experiment_order(written, tmp_path):
    _, files, records = written
    md = files["md"].read_text(encoding="utf-8")
    rows = _md_table(_md_section(md, "## Summary"))
    usb = ("interleaved_int8", "edgetpu_usb")
    assert [(r["Model"], r["Variant"]) for r in rows] == [
        ("interleaved_int8", "cpu_only"), ("interleaved_int8", "hexagon_dsp"), usb, usb, usb,
        ("dilated_cnn_int8", "edgetpu_usb"), ("transformer_block_int8", "edgetpu_usb")]
    assert "on 3 variants (cpu_only, hexagon_dsp, edgetpu_usb)" in md
    alphabetical = write_report(tmp_path, NAME, records, formats=("md",))["md"].read_text(encoding="utf-8")
    rows = _md_table(_md_section(alphabetical, "## Summary"))
    assert [r["Variant"] for r in rows[:4]] == ["edgetpu_usb", "cpu_only", "edgetpu_usb", "edgetpu_usb"]


def test_sweep_keys_follow_the_experiment_order():
    order = labels.Order(keys=("z.rows", "a.cols"))
    rec = {"model_name": "m", "variant": "v", "sweep": {"a.cols": 8, "z.rows": 16, "b.other": 1}}
    assert list(order.sweep(rec["sweep"])) == ["z.rows", "a.cols", "b.other"]
    assert labels.point_label({**rec, "sweep": order.sweep(rec["sweep"]), "accelerators": []}) == \
        "m | v | z.rows=16 | a.cols=8 | b.other=1"
    assert order.sorted(["b", "a.cols", "z.rows"], "keys") == ["z.rows", "a.cols", "b"]


# -- what the report says ------------------------------------------------------------------------------


def test_markdown_names_failures_missing_points_and_rejections(written):
    _, files, records = written
    md = files["md"].read_text(encoding="utf-8")
    assert "1 failed, 1 missing" in md.split("\n\n")[1]
    failed = _md_table(_md_section(md, "## Failed design points"))
    assert failed == [{"Model": "transformer_block_int8", "Variant": "edgetpu_usb", "Sweep": f"{BANDWIDTH}=40 MB/s",
                       "Error": next(r["error"] for r in records if r["status"] == "error")}]
    missing = _md_table(_md_section(md, "## Missing design points"))
    assert missing == [{"Model": "interleaved_int8", "Variant": "edgetpu_usb", "Sweep": f"{BANDWIDTH}=4 GB/s",
                        "Id": MISSING[0]["id"]}]
    dilated = next(r for r in records if r["model_name"] == "dilated_cnn_int8")
    section = _md_point(md, f"dilated_cnn_int8 | edgetpu_usb | {BANDWIDTH}=320 MB/s")
    rejected = _md_table(section[section.index("#### Nodes not delegated"):])
    assert sum(int(r["Nodes"]) for r in rejected) == len(dilated["rejected"])
    assert {r["Reason"] for r in rejected} == {r["reason"] for r in dilated["rejected"]}
    long_group = next(r for r in rejected if int(r["Nodes"]) > point_detail._LONG_NODE_LIST)
    assert long_group["Which"].startswith("#1–10: ")


def test_sweeps_show_first_and_last_value_in_detail(written):
    _, files, _ = written
    md = files["md"].read_text(encoding="utf-8")
    detail = _md_section(md, "## Design points in detail")
    headings = [ln[4:] for ln in detail.splitlines() if ln.startswith("### ")]
    assert headings == ["interleaved_int8 | cpu_only", "interleaved_int8 | hexagon_dsp",
                        f"interleaved_int8 | edgetpu_usb | {BANDWIDTH}=40 MB/s",
                        f"interleaved_int8 | edgetpu_usb | {BANDWIDTH}=1 GB/s",
                        f"dilated_cnn_int8 | edgetpu_usb | {BANDWIDTH}=320 MB/s"]
    assert "first and last sweep point only (5 of 6 simulated points)" in md


def test_html_is_self_contained(written):
    out, files, _ = written
    page = files["html"].read_text(encoding="utf-8")
    md = files["md"].read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert page.count('<img src="data:image/png;base64,') == md.count("![") == len(list((out / "plots").iterdir()))
    assert 'src="plots/' not in page and "<script src" not in page and page.count("<script>") == 1
    assert "http://" not in page.replace("https://ui.perfetto.dev", "") and "https://" not in page.replace(
        "https://ui.perfetto.dev", "")
    assert "Missing design points" in page and "BATCH_MATMUL" in page


# -- plots -----------------------------------------------------------------------------------------------


def test_plots_are_pngs_one_per_shown_point_plus_breakdown_and_sweep(written):
    out, files, _ = written
    names = sorted(p.name for p in (out / "plots").iterdir())
    expected = sorted(["breakdown.png", f"sweep_{BANDWIDTH}.png", "pareto_interleaved_int8.png",
                       "pareto_dilated_cnn_int8.png",
                       "gantt_dilated_cnn_int8__edgetpu_usb__edgetpu_usb.link.bandwidth-320_MB_s.png",
                       "gantt_interleaved_int8__cpu_only.png", "gantt_interleaved_int8__hexagon_dsp.png",
                       "gantt_interleaved_int8__edgetpu_usb__edgetpu_usb.link.bandwidth-40_MB_s.png",
                       "gantt_interleaved_int8__edgetpu_usb__edgetpu_usb.link.bandwidth-1_GB_s.png",
                       # the partition pictures of the same points, but the CPU-only one
                       "partitions_dilated_cnn_int8__edgetpu_usb__edgetpu_usb.link.bandwidth-320_MB_s.png",
                       "partitions_interleaved_int8__hexagon_dsp.png",
                       "partitions_interleaved_int8__edgetpu_usb__edgetpu_usb.link.bandwidth-40_MB_s.png",
                       "partitions_interleaved_int8__edgetpu_usb__edgetpu_usb.link.bandwidth-1_GB_s.png"])
    assert names == expected
    assert sorted(k for k in files if k.startswith("plots/")) == [f"plots/{n}" for n in expected]
    for name in names:
        data = (out / "plots" / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE), name
        assert len(data) > 5000, name
        assert b"Software" not in data[:4096], name


# -- traces ------------------------------------------------------------------------------------------------


def test_traces_have_one_complete_event_per_timeline_event(written):
    out, files, records = written
    ok = [r for r in records if r["status"] == "ok"]
    traces = sorted((out / "traces").iterdir())
    assert len(traces) == len(ok) == sum(1 for k in files if k.startswith("traces/"))
    by_id = {r["id"]: r for r in ok}
    for path in traces:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["displayTimeUnit"] == "ms"
        rec = by_id[doc["otherData"]["id"]]
        events = doc["traceEvents"]
        threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        assert list(threads.values())[0] == "host"
        assert set(threads.values()) >= {e["resource"] for e in rec["events"]}
        spans = [e for e in events if e["ph"] == "X"]
        assert len(spans) == len(rec["events"])
        assert len({e["pid"] for e in events}) == 1
        got = sorted((threads[s["tid"]], s["ts"], s["dur"], s["name"], s["args"]["kind"]) for s in spans)
        want = sorted((e["resource"], e["start_us"], round(e["end_us"] - e["start_us"], 4), e["label"], e["kind"])
                      for e in rec["events"])
        assert got == want


# -- layers ------------------------------------------------------------------------------------------------


def test_layers_csv_carries_each_nodes_cost_bound_bytes_per_level_and_energy(written):
    out, files, records = written
    usb = next(r for r in records if r["status"] == "ok" and r["variant"] == "edgetpu_usb"
               and r["sweep"] == {BANDWIDTH: "320 MB/s"} and r["model_name"] == "interleaved_int8")
    slug = next(k for k in files if k.startswith("layers/") and "interleaved_int8" in k and "edgetpu_usb" in k
                and "320" in k)
    rows = list(csv.DictReader(io.StringIO((out / slug).read_text(encoding="utf-8"))))
    assert list(rows[0]) == list(LAYER_COLUMNS)
    assert [int(r["node"]) for r in rows] == [r["node"] for r in usb["op_profile"]]
    assert all(r["unit"] == "edgetpu_usb" and r["bytes_per_level"].startswith("sram=") for r in rows)
    sram = sum(int(r["bytes_per_level"].split("=")[1]) for r in rows)
    assert sram == usb["level_bytes"]["edgetpu_usb.sram"]
    assert sum(float(r["time_us"]) for r in rows) == pytest.approx(usb["compute_us"] + usb["memory_us"], abs=1e-2)
    assert all(r["bound"] in ("compute", "sram") and float(r["compute_us"]) <= float(r["time_us"]) + 1e-3
               for r in rows)
    # the partition's energy is its nodes' plus its copies over the link at 250 pJ/B (edgetpu_usb.yaml)
    part = usb["partition_table"][0]
    copies_uj = (part["input_bytes"] + part["output_bytes"]) * 250e-12 * 1e6
    assert sum(float(r["energy_uj"]) for r in rows) == pytest.approx(part["energy_uj"] - copies_uj, abs=1e-5)


# -- writing -----------------------------------------------------------------------------------------------


def test_writes_leave_no_temporary_files(written):
    out, _, _ = written
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]
    assert leftovers == []


def test_failed_write_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    records = golden_records()
    write_report(tmp_path, NAME, records, formats=("json",))
    before = (tmp_path / "results.json").read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_report(tmp_path, "renamed", records, formats=("json",))
    assert (tmp_path / "results.json").read_bytes() == before
    assert [p for p in tmp_path.rglob("*") if p.name.startswith(".")] == []


@pytest.mark.slow
def test_stale_plots_and_traces_are_removed_other_files_kept(tmp_path):
    for rel in ("plots/gantt_old.png", "traces/old.json", "layers/old.csv", "plots/notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    write_report(tmp_path, NAME, golden_records()[:2])
    assert not (tmp_path / "plots/gantt_old.png").exists() and not (tmp_path / "traces/old.json").exists()
    assert not (tmp_path / "layers/old.csv").exists()
    assert (tmp_path / "plots/notes.txt").exists()


def test_formats_choose_the_files(tmp_path):
    files = write_report(tmp_path, NAME, golden_records(), formats=("json", "csv"))
    assert {"json", "csv"} <= set(files) and "md" not in files and "html" not in files
    assert not (tmp_path / "plots").exists() and (tmp_path / "traces").is_dir()
    with pytest.raises(ValueError, match="pdf"):
        write_report(tmp_path, NAME, [], formats=("md", "pdf"))


def test_a_report_without_finished_points_still_lists_the_missing(tmp_path):
    files = write_report(tmp_path, NAME, [], missing=MISSING)
    md = files["md"].read_text(encoding="utf-8")
    assert "No design point finished." in md and MISSING[0]["id"] in md
    assert json.loads(files["json"].read_text(encoding="utf-8"))["points"] == []
    assert files["csv"].read_text(encoding="utf-8").splitlines() == [",".join([*ID_COLUMNS, *CSV_COLUMNS, "error"])]


@pytest.mark.slow
def test_report_of_fresh_simulations(tmp_path):
    records = [_point("mobilenet_v2_035_96_int8.tflite", "cpu_only", [], {}),
               _point("mobilenet_v2_035_96_int8.tflite", "edgetpu_pcie", ["edgetpu_pcie"], {})]
    _fill_speedups(records)
    files = write_report(tmp_path, "fresh", records)
    md = files["md"].read_text(encoding="utf-8")
    rows = _md_table(_md_section(md, "## Summary"))
    assert [r["Variant"] for r in rows] == ["cpu_only", "edgetpu_pcie"]
    assert _num(rows[1]["Latency (µs)"]) == pytest.approx(records[1]["latency_us"], abs=0.005)
    assert "CONV_2D×35" in md  # MobileNetV2's one partition, abbreviated


# -- helpers -------------------------------------------------------------------------------------------------


def test_ranges_and_op_abbreviation():
    assert partition_plot.ranges([5, 0, 1, 2, 7, 8]) == "0–2, 5, 7–8"
    assert partition_plot.ranges([]) == ""
    assert labels.ops_abbrev(["ADD", "CONV_2D", "CONV_2D", "MEAN", "ADD", "CONV_2D"]) == "CONV_2D×3, ADD×2, MEAN"


@pytest.mark.slow
def test_a_large_report_stays_readable(tmp_path):
    """300 points, 60 failed, 60 missing: summaries instead of per-point rows, every long table cut and saying so."""
    from benchmarks.report_scale import KEYS, synthetic

    records, chosen = synthetic(300)
    for r in records[:60]:
        r.update(status="error", error="OpResolutionError: made up for the test")
    missing = [{"id": f"m{i:015x}", "model_name": "interleaved_int8", "variant": "edgetpu_usb",
                "sweep": {KEYS[0]: 8}} for i in range(60)]
    experiment = {"models": ["interleaved_int8"], "variants": ["edgetpu_usb"], "sweep_keys": list(KEYS), "best": 3}
    files = write_report(tmp_path, NAME, records, missing=missing, experiment=experiment, traced=chosen)
    md = files["md"].read_text(encoding="utf-8")
    summary = _md_section(md, "## Summary")
    assert "300 design points, too many to list in report.md" in summary
    assert len(_md_table(summary.split("### ")[0])) == 1  # one model x variant: one row of ranges
    assert len(_md_table(summary.split("### ")[1])) == 3  # the 3 fastest
    assert "The table shows the first 50 of 60 rows; all of them are in results.csv" in md
    assert "The table shows the first 50 of 60 rows; all of them are in results.json under missing" in md
    detail = _md_section(md, "## Design points in detail")
    assert detail.count("\n### ") == min(labels.DETAIL_MAX, len([r for r in records if r["id"] in chosen and
                                                                  r["status"] == "ok"]))
    # a random search: no two points differ in one key alone, so no sweep plot, and the section says why
    assert "No sweep plot for " in _md_section(md, "## Sweeps") and "plots/sweep_" not in md
    assert md.count("\n") < 700
    # report.html adds a collapsed, sortable table of every point, up to HTML_MAX_ROWS of them.
    assert "Every point (300)" in files["html"].read_text(encoding="utf-8") and "Every point (" not in md
    assert len(files["csv"].read_text(encoding="utf-8").splitlines()) == 301


@pytest.mark.slow
def test_the_html_table_of_every_point_is_cut_to_the_fastest(tmp_path, monkeypatch):
    from benchmarks.report_scale import synthetic

    monkeypatch.setattr(report, "HTML_MAX_ROWS", 100)
    records, _ = synthetic(1500, seed=1)
    page = write_report(tmp_path, NAME, records, formats=("html",), traced=set())["html"].read_text(encoding="utf-8")
    assert "The 100 fastest of 1,500 points" in page and "results.csv holds every point" in page
    table = page[page.index("The 100 fastest of 1,500 points"):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 100 + 1  # the heading row
    # The other tables are cut too: at most TABLE_MAX_ROWS per front (3), the ranges and the 5 fastest.
    assert page.count("<tr>") - table.count("<tr>") <= 3 * (report.TABLE_MAX_ROWS + 1) + 2 + 6


def regenerate(resimulate: bool) -> None:
    """Rewrite the golden files (and, with resimulate, their input records)."""
    import tempfile

    GOLDEN.mkdir(exist_ok=True)
    if resimulate:
        text = json.dumps(simulate_records(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        (GOLDEN / "records.json").write_text(text, encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        files = write_report(Path(tmp), NAME, golden_records(), missing=MISSING, experiment=EXPERIMENT)
        for fmt, name in (("md", "report.md"), ("json", "results.json"), ("csv", "results.csv")):
            (GOLDEN / name).write_bytes(files[fmt].read_bytes())


@pytest.mark.slow
def test_a_cost_aware_point_shows_tflites_choice_next_to_its_own(tmp_path):
    """policy cost keeps both of interleaved_int8's DSP partitions on the host: the report says so, with numbers."""
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.run import run_experiment

    path = tmp_path / "exp.yaml"
    path.write_text(f"name: choice\nmodels: [{Path(MODELS).resolve() / 'interleaved_int8.tflite'}]\nhost: host_cpu\n"
                    "variants:\n  - {name: dsp, accelerators: [hexagon_dsp]}\n"
                    "sweeps:\n  hexagon_dsp.partition.policy: [tflite, cost]\ntraces: all\n")
    outcome = run_experiment(load_experiment(path), tmp_path / "out", jobs=1)
    cost = next(r for r in outcome.records if r["sweep"]["hexagon_dsp.partition.policy"] == "cost")
    tflite = next(r for r in outcome.records if r["sweep"]["hexagon_dsp.partition.policy"] == "tflite")
    choice = cost["partition_choice"]
    assert tflite["partition_choice"] is None and choice["saved_us"] > 0
    assert choice["tflite_latency_us"] == pytest.approx(tflite["latency_us"])
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    section = md[md.index("#### Partition choice"):]
    section = section[:section.index("\n#### ", 5)]
    assert "kept on the host: hexagon_dsp partition 0, hexagon_dsp partition 1" in section
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[1].split("|")[2].strip() == str(choice["tflite_partitions"])
    assert labels.fmt_us(tflite["latency_us"]) in rows[1] and labels.fmt_us(cost["latency_us"]) in rows[2]
    assert labels.fmt_us(choice["saved_us"]) in rows[3]
    assert md.count("#### Partition choice") == 1  # only the cost-aware point has a choice to show
    assert (f"Cost-aware partitioning beat TFLite's choice at 1 point, by up to {labels.fmt_us(choice['saved_us'])} µs "
            f"({labels.point_label(cost)};") in md

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=regenerate.__doc__)
    parser.add_argument("--resimulate", action="store_true", help="re-run the simulator for golden/records.json")
    regenerate(parser.parse_args().resimulate)
