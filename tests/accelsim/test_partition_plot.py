"""The partition picture: nodes in run order, coloured by where they run, refusals numbered and explained."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from matplotlib.image import imread

from accelsim.cli.main import main
from accelsim.hardware.config import load_system
from accelsim.reports.partition_plot import PER_ROW, _reason_numbers, partition_png
from accelsim.reports.results import record
from accelsim.simulation.analysis import simulate_model

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "models"
HW = ROOT / "hw_configs"


def _record(model: str, accel: str) -> dict:
    system = load_system(str(HW / "host_cpu.yaml"), [str(HW / f"{accel}.yaml")])
    return record(simulate_model(str(FIXTURES / f"{model}.tflite"), system), point_id="", model=model, variant="",
                  sweep={})


def test_refusal_reasons_are_numbered_in_node_order_with_their_nodes():
    rejected = [{"node": 5, "reason": "b"}, {"node": 1, "reason": "a"}, {"node": 3, "reason": "b"},
                {"node": 9, "reason": None}]
    assert _reason_numbers(rejected) == {"a": (1, [1]), "b": (2, [3, 5]), "not claimed": (3, [9])}


@pytest.mark.slow
def test_a_long_model_wraps_into_rows():
    rec = _record("mobilenet_v2_035_96_fp16", "hexagon_dsp")  # 171 nodes: 5 rows
    assert len(rec["op_profile"]) == 171
    tall = imread(io.BytesIO(partition_png(rec, "fp16")), format="png")
    short = imread(io.BytesIO(partition_png(_record("interleaved_int8", "hexagon_dsp"), "int8")), format="png")
    # 171 nodes wrap into 5 rows of PER_ROW; 20 nodes make one short row
    assert PER_ROW < 171 and tall.shape[0] > 3 * short.shape[0] and tall.shape[1] > short.shape[1]


def test_benchmark_draws_the_partition_picture(tmp_path, capsys):
    png = tmp_path / "parts.png"
    assert main(["benchmark", str(FIXTURES / "interleaved_int8.tflite"), "--hw", "edgetpu_usb", "--num-runs", "1",
                 "--partition-plot", str(png), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["partition_plot"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["benchmark", str(FIXTURES / "interleaved_int8.tflite"), "--hw", "edgetpu_usb", "--num-runs", "1",
                 "--partition-plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert f"Partition picture: {png}" in out
    assert "Per-layer" not in out  # the record drawn from is not the per-layer table asked for with --per-layer


@pytest.mark.slow
def test_report_draws_each_accelerated_detail_point_from_its_results_json_record(tmp_path):
    from accelsim.reports.report import write_report

    records = [{**_record("transformer_block_int8", "hexagon_dsp"), "variant": "dsp", "id": "a"},
               {**record(simulate_model(str(FIXTURES / "transformer_block_int8.tflite"),
                                        load_system(str(HW / "host_cpu.yaml"), [])),
                         point_id="b", model="transformer_block_int8", variant="cpu", sweep={})}]
    files = write_report(tmp_path, "pics", records)
    assert sorted(k for k in files if k.startswith("plots/partitions_")) == [
        "plots/partitions_transformer_block_int8__dsp.png"]  # the CPU-only point is all host: no picture
    md = files["md"].read_text(encoding="utf-8")
    section = md[md.index("### transformer_block_int8 | dsp"):]
    assert section.index("(plots/partitions_transformer_block_int8__dsp.png)") < section.index("| Partition |")
    # the report has nothing but the records: the same record from results.json draws the same picture
    saved = json.loads(files["json"].read_text(encoding="utf-8"))["points"]
    rec = next(p for p in saved if p["variant"] == "dsp")
    title = "transformer_block_int8 | dsp: where each node runs, in run order"
    assert partition_png(rec, title) == files["plots/partitions_transformer_block_int8__dsp.png"].read_bytes()


def test_a_partition_plot_path_that_cannot_be_written_names_the_option(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    target = blocker / "p.png"  # under a regular file: no folder can be made there
    assert main(["benchmark", str(FIXTURES / "interleaved_int8.tflite"), "--hw", "edgetpu_usb", "--num-runs", "1",
                 "--partition-plot", str(target)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"accelsim benchmark: error: --partition-plot {target}: cannot write the picture there: ")
    assert len(err.splitlines()) == 1
