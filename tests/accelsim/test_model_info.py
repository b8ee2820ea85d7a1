"""`accelsim inspect` and `accelsim ops` as library functions (accelsim.tools.model_info)."""

from __future__ import annotations

from pathlib import Path

from accelsim.runtime.read import load_model
from accelsim.tools.model_info import inspect_model, registration_code

MODEL = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models" / "interleaved_int8.tflite"


def test_the_registration_code_runs_and_resolves_exactly_the_models_ops():
    namespace: dict = {}
    exec(registration_code(str(MODEL)), namespace)  # the generated selective-registration script
    resolver = namespace["resolver"]
    model = load_model(MODEL)
    used = {(op.op, op.version) for sg in model.subgraphs for op in sg.operators}
    assert all(resolver.find_op(name, version) is not None for name, version in used)
    assert {name for name, *_ in resolver.registrations()} == {name for name, _ in used}


def test_inspect_lists_every_operator_with_its_versions():
    info = inspect_model(str(MODEL))
    model = load_model(MODEL)
    assert [o["op"] for o in info["operators"]] == [op.display_name for op in model.subgraphs[0].operators]
    assert info["unsupported_ops"] == [] and info["delegation"] is None
