"""TFLite op versioning of whole models: the converter's fixtures, the runtime-version table and stamping.

Signatures and the version rules, one operator at a time, are tested in test_op_versions.py.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from support import FIXTURES, Spec, const, run_litert, single_op_model

from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator
from accelsim.runtime.op_signature import op_signature
from accelsim.runtime.op_versions import get_builtin_operator_version
from accelsim.runtime.read import load_model
from accelsim.runtime.versioning import (
    MIN_RUNTIME_VERSION_KEY,
    find_minimum_runtime_version,
    min_runtime_version,
    read_min_runtime_version,
    runtime_version_key,
    stamp_versions,
    unknown_runtime_versions,
)
from accelsim.runtime.write import save_model

# ---------------------------------------------------------------------------
# Fixture models from TensorFlow's converter: our rules must reproduce the versions it wrote.


def _fixture_paths() -> list[Path]:
    return sorted(FIXTURES.glob("*.tflite"))


@cache
def _fixture(name: str) -> Model:
    return load_model(FIXTURES / f"{name}.tflite")


@cache
def _computed_versions(name: str) -> dict[tuple[int, int], int]:
    model = _fixture(name)
    return {
        (si, oi): get_builtin_operator_version(op_signature(model, si, oi))
        for si, sg in enumerate(model.subgraphs)
        for oi, op in enumerate(sg.operators)
        if op.op != "CUSTOM"
    }


def _fixture_operators() -> list:
    params = []
    for path in _fixture_paths():
        model = load_model(path)
        for si, sg in enumerate(model.subgraphs):
            for oi, op in enumerate(sg.operators):
                if op.op != "CUSTOM":
                    params.append(pytest.param(path.stem, si, oi, id=f"{path.stem}-{si}-{oi}-{op.op}"))
    return params


def test_fixture_models_are_present():
    manifest = json.loads((FIXTURES / "MANIFEST.json").read_text())
    assert _fixture_paths(), f"no .tflite fixtures in {FIXTURES}"
    assert {p.name for p in _fixture_paths()} == {m["file"] for m in manifest["models"].values()}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "si", "oi"), _fixture_operators())
def test_fixture_operator_version(name, si, oi):
    """The converter writes one operator code per op, at the highest version its operators need
    (op_version.cc's UpdateOpVersion), so each operator's file version is the maximum of the
    computed versions of the model's operators of the same op."""
    model = _fixture(name)
    op = model.subgraphs[si].operators[oi]
    computed = _computed_versions(name)
    same_op = [v for (s, o), v in computed.items() if model.subgraphs[s].operators[o].op == op.op]
    assert computed[(si, oi)] <= op.version, f"{op.op}: computed v{computed[(si, oi)]} above the file's v{op.version}"
    assert max(same_op) == op.version, f"{op.op}: file has v{op.version}, rules give v{max(same_op)}"


@pytest.mark.parametrize(
    ("name", "si", "oi", "own", "shared"),
    [
        # A depthwise conv without dilation shares the op code of a dilated one.
        ("dilated_cnn_float", 0, 5, 1, 2),
        # A transpose conv without bias shares the op code of one with a bias.
        ("segmentation_float", 0, 6, 1, 3),
    ],
)
def test_fixture_operators_below_their_shared_op_code(name, si, oi, own, shared):
    model = _fixture(name)
    assert model.subgraphs[si].operators[oi].version == shared
    assert get_builtin_operator_version(op_signature(model, si, oi)) == own


@pytest.mark.parametrize("path", _fixture_paths(), ids=lambda p: p.stem)
def test_fixture_min_runtime_version_matches_metadata(path):
    model = load_model(path)
    assert unknown_runtime_versions(model) == []
    assert min_runtime_version(model) == read_min_runtime_version(model)


# ---------------------------------------------------------------------------
# Runtime versions.


@pytest.mark.parametrize(
    ("op", "version", "release"),
    [
        ("CONV_2D", 1, "1.5.0"),
        ("CONV_2D", 3, "1.14.0"),
        ("CONV_2D", 6, "2.9.0"),
        ("DEPTHWISE_CONV_2D", 2, "1.12.0"),
        ("DEPTHWISE_CONV_2D", 3, "1.14.0"),
        ("FULLY_CONNECTED", 5, "2.0.0"),
        ("FULLY_CONNECTED", 8, "2.3.0"),
        ("RESIZE_BILINEAR", 3, "2.2.0"),
        ("TRANSPOSE", 7, "2.14.4"),
        ("TILE", 1, "1.10.1"),
        ("WHILE", 1, "1.15.0"),
        ("GELU", 2, "2.9.0"),
        ("BROADCAST_TO", 2, "2.5.0"),
    ],
)
def test_find_minimum_runtime_version_known_rows(op, version, release):
    assert find_minimum_runtime_version(op, version) == release


@pytest.mark.parametrize(("op", "version"), [("BROADCAST_TO", 1), ("HARD_SWISH", 2), ("CONV_2D", 99), ("CUSTOM", 1)])
def test_find_minimum_runtime_version_unknown_is_empty(op, version):
    assert find_minimum_runtime_version(op, version) == ""


def test_runtime_versions_compare_numerically():
    ordered = ["1.5.0", "1.9.0", "1.10.1", "1.14", "1.14.0", "2.3.0", "2.14.4", "2.23.0"]
    assert sorted(reversed(ordered), key=runtime_version_key) == ordered


def _model_with_ops(*ops: tuple[str, int]) -> Model:
    tensors = (Tensor("x", "FLOAT32", (1, 4)),)
    operators = tuple(
        make_operator(op, [0], [0], version=v, custom_code="MyOp" if op == "CUSTOM" else None) for op, v in ops
    )
    return Model((Subgraph(tensors, (0,), (0,), operators),), (b"",))


def test_min_runtime_version_is_the_latest_release_needed():
    model = _model_with_ops(("CONV_2D", 1), ("DEPTHWISE_CONV_2D", 2), ("TILE", 1), ("RELU", 1))
    assert min_runtime_version(model) == "1.12.0"
    assert min_runtime_version(_model_with_ops(("TILE", 1), ("LOGISTIC", 1))) == "1.14.0"


def test_min_runtime_version_of_custom_only_model_is_empty():
    model = _model_with_ops(("CUSTOM", 3))
    assert min_runtime_version(model) == "" and unknown_runtime_versions(model) == []


def test_unknown_pairs_are_listed_and_logged(caplog):
    model = _model_with_ops(("HARD_SWISH", 2), ("RELU", 1), ("HARD_SWISH", 2), ("CONV_2D", 99))
    assert unknown_runtime_versions(model) == [("HARD_SWISH", 2), ("CONV_2D", 99)]
    with caplog.at_level(logging.WARNING, logger="accelsim.runtime.versioning"):
        assert min_runtime_version(model) == "1.5.0"
    assert "HARD_SWISH v2" in caplog.text and "CONV_2D v99" in caplog.text


# ---------------------------------------------------------------------------
# Stamping versions into models.


_IMG = (1, 8, 8, 3)  # the depthwise input; its 3x3 filter is [1, 3, 3, 3]


def _depthwise_model(type: str = "FLOAT32", version: int = 1, dilation: int = 1) -> Model:
    """A 3x3 VALID depthwise conv on an 8x8x3 input (all-ones float filter, zero bias)."""
    side = _IMG[1] - 2 * dilation
    out_shape = (1, side, side, 3)
    if type == "INT8":
        inputs = [Spec(_IMG, "INT8", scale=0.5, zero_point=0),
                  const(np.zeros((1, 3, 3, 3), np.int8), scale=(0.1, 0.2, 0.3), quantized_dimension=3),
                  const(np.zeros(3, np.int32), scale=(0.05,) * 3)]
        outputs = [Spec(out_shape, "INT8", scale=0.5, zero_point=0)]
    else:
        inputs = [Spec(_IMG), const(np.ones((1, 3, 3, 3), np.float32)), const(np.zeros(3, np.float32))]
        outputs = [Spec(out_shape)]
    return load_model(single_op_model("DEPTHWISE_CONV_2D", inputs, outputs, version=version, padding=1,
                                      stride_w=1, stride_h=1, depth_multiplier=1, dilation_w_factor=dilation,
                                      dilation_h_factor=dilation))


@pytest.mark.parametrize(
    ("type", "dilation", "version", "release"),
    [("FLOAT32", 2, 2, "1.12.0"), ("FLOAT32", 1, 1, "1.5.0"), ("INT8", 1, 3, "1.14.0"), ("INT8", 2, 3, "1.14.0")],
)
def test_stamp_versions_depthwise(type, dilation, version, release):
    stamped = stamp_versions(_depthwise_model(type, version=7, dilation=dilation))
    assert stamped.subgraphs[0].operators[0].version == version
    reread = load_model(save_model(stamped))
    assert reread.subgraphs[0].operators[0].version == version
    assert reread.metadata_value(MIN_RUNTIME_VERSION_KEY) == release.encode().ljust(16, b"\0")
    assert read_min_runtime_version(reread) == release


def test_save_model_can_stamp_versions():
    model = _depthwise_model(version=7, dilation=2)
    assert save_model(model, stamp_versions=True) == save_model(stamp_versions(model))
    assert load_model(save_model(model)).subgraphs[0].operators[0].version == 7


def test_stamp_versions_replaces_existing_metadata_and_keeps_custom_versions():
    model = _fixture("atan_custom")
    sg = model.subgraphs[0]
    ops = tuple(dataclasses.replace(op, version=3) for op in sg.operators)
    model = model.replace(subgraphs=(dataclasses.replace(sg, operators=ops),))
    stamped = stamp_versions(model)
    assert [(op.display_name, op.version) for op in stamped.subgraphs[0].operators] == [("ADD", 1), ("Atan", 3)]
    assert [k for k, _ in stamped.metadata] == [k for k, _ in model.metadata]
    assert len(stamped.buffers) == len(model.buffers)
    assert read_min_runtime_version(load_model(save_model(stamped))) == "1.5.0"


def test_stamped_model_runs_in_litert_where_a_wrong_version_does_not():
    model = _depthwise_model(version=9, dilation=2)
    x = np.random.default_rng(0).standard_normal(_IMG).astype(np.float32)
    with pytest.raises(ValueError, match="version '9'"):
        run_litert(save_model(model), [x])
    (out,) = run_litert(save_model(model, stamp_versions=True), [x])
    # All-ones filter, zero bias: each output sums its dilated 3x3 window.
    expected = sum(x[:, i : i + 4, j : j + 4, :] for i in (0, 2, 4) for j in (0, 2, 4))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["dilated_cnn_int8", "segmentation_float", "transformer_block_int8"])
def test_stamped_fixture_runs_in_litert_like_the_original(name):
    original = (FIXTURES / f"{name}.tflite").read_bytes()
    stamped = save_model(stamp_versions(load_model(original)))
    assert read_min_runtime_version(load_model(stamped)) == read_min_runtime_version(load_model(original))
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    details = LiteRT(model_content=original).get_input_details()
    rng = np.random.default_rng(0)
    inputs = [
        rng.integers(-128, 128, d["shape"]).astype(d["dtype"]) if np.dtype(d["dtype"]).kind == "i"
        else rng.standard_normal(d["shape"]).astype(d["dtype"])
        for d in details
    ]
    for a, b in zip(run_litert(stamped, inputs), run_litert(original, inputs)):
        np.testing.assert_array_equal(a, b)
