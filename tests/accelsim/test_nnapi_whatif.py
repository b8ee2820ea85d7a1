"""`accelsim whatif` on an NNAPI system: which rule refused which nodes, and other NNAPI settings simulated."""

from __future__ import annotations

import json

from support import FIXTURES

from accelsim.cli.main import main
from accelsim.experiments.experiment import SHIPPED_CONFIGS, resolve_config
from accelsim.hardware.config import load_system
from accelsim.insight.nnapi import nnapi_choices
from accelsim.runtime.read import load_model
from accelsim.simulation.analysis import simulate_model

MODEL = FIXTURES / "transformer_block_float.tflite"


def test_whatif_names_each_rule_and_simulates_other_nnapi_settings(capsys):
    assert main(["whatif", str(MODEL), "--host", "kryo385_cpu", "--hw", "nnapi_pixel3"]) == 0
    out = capsys.readouterr().out
    assert "target feature level FL3 (API 29), target drivers qti-dsp, qti-gpu" in out
    for line in ("feature level: 2 node(s) [BATCH_MATMUL]", "op not supported: 1 node(s) [GELU]",
                 "driver support: 4 node(s) [TRANSPOSE]", "partition limit: 3 node(s)",
                 "op rule: 6 node(s) [FULLY_CONNECTED]", "keep_num_dims needs API 30"):
        assert line in out
    assert "slower than the CPU alone" in out and "max_number_delegated_partitions 1: " in out


def test_an_alternative_is_what_the_config_with_that_setting_simulates(tmp_path):
    """Writing the suggested option into the NNAPI config and re-running gives the alternative's latency."""
    host = resolve_config("kryo385_cpu", FIXTURES)
    system = load_system(host, [resolve_config("nnapi_pixel3", FIXTURES)])
    choices = nnapi_choices(load_model(MODEL), system, str(MODEL))
    one = next(a for a in choices.alternatives if a.change == "max_number_delegated_partitions 1")
    text = (SHIPPED_CONFIGS / "nnapi" / "nnapi_pixel3.yaml").read_text()
    text = text.replace("../", f"{SHIPPED_CONFIGS}/").replace("max_number_delegated_partitions: 3",
                                                              "max_number_delegated_partitions: 1")
    (tmp_path / "one.yaml").write_text(text)
    written = simulate_model(str(MODEL), load_system(host, [str(tmp_path / "one.yaml")]))
    assert one.latency_us == written.latency * 1e6 and one.partitions == 1 == len(written.partitions)
    assert one.latency_us < choices.base.latency_us  # fewer executions, fewer overheads


def test_whatif_json_gives_the_rules_and_the_partitions(capsys):
    assert main(["whatif", str(MODEL), "--host", "kryo385_cpu", "--hw", "nnapi_pixel3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {g["rule"] for g in data["refused"]} == {"feature level", "op not supported", "driver support",
                                                    "partition limit", "op rule"}
    # at API 30 keep_num_dims is accepted: a higher feature level delegates more
    at30 = next(a for a in data["alternatives"] if a["change"] == "feature level FL4 (API 30)")
    assert at30["delegated"] > data["as_configured"]["delegated"]
    assert data["as_configured"]["partitions"] == 3


def test_the_partition_flag_sets_nnapis_limit_and_a_minimum_is_refused(capsys):
    from accelsim.tools.systems import system_from_options

    system = system_from_options("kryo385_cpu", ["nnapi_pixel3"], max_parts=1)
    assert system.nnapi.spec.options.max_number_delegated_partitions == 1
    assert len(simulate_model(str(MODEL), system).partitions) == 1
    assert main(["benchmark", str(MODEL), "--host", "kryo385_cpu", "--hw", "nnapi_pixel3", "--num-runs", "0",
                 "--min-nodes-per-partition", "2"]) != 0
    assert "has no minimum partition size" in capsys.readouterr().err


def test_an_experiment_variants_partition_limit_is_nnapis_and_part_of_the_point_identity():
    from accelsim.experiments.points import DesignPoint, resolved_system
    from accelsim.hardware.config import identity

    host = resolve_config("kryo385_cpu", FIXTURES)
    base = load_system(host, [resolve_config("nnapi_pixel3", FIXTURES)])
    point = DesignPoint(id="", model=str(MODEL), variant="nnapi", host=host, accelerators=(), sweep={},
                        schedule="sequential", numerics_runs=0)
    one = resolved_system(point, {"max_delegated_partitions": 1}, base)
    assert one.nnapi.spec.options.max_number_delegated_partitions == 1
    assert [a.policy.partition for a in one.accelerators] == [a.policy.partition for a in base.accelerators]
    assert identity(one) != identity(base) and len(simulate_model(str(MODEL), one).partitions) == 1


def test_validate_reads_an_nnapi_config_and_an_experiment_using_one(capsys):
    root = SHIPPED_CONFIGS.parent
    files = [str(SHIPPED_CONFIGS / "nnapi" / "nnapi_pixel3.yaml"), str(root / "examples" / "nnapi.yaml")]
    assert main(["validate", *files]) == 0
    out = capsys.readouterr().out
    assert "ok (nnapi config, drivers qti-dsp, qti-gpu)" in out and "  assumed: qti-dsp: " in out
    assert "ok (experiment 'nnapi', 4 variants)" in out
