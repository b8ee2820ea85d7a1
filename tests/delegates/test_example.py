"""examples/add_sub_delegate.py: runs as documented and matches the CPU kernels exactly."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from accelsim.delegates import DelegateNodeView, TensorView, delegation_report
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Quantization, default_options
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "add_sub_delegate.py"
FIXTURES = ROOT / "tests" / "fixtures" / "models"


def load_example():
    spec = importlib.util.spec_from_file_location("add_sub_delegate_example", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = load_example()
EXPECTED = textwrap.dedent(example.__doc__.split("Expected output without MODEL:\n\n", 1)[1]).strip().splitlines()


def test_demo_matches_documented_output(resolver_factory, caplog):
    with caplog.at_level(logging.INFO, logger="accelsim.delegates.api"):
        delegated, same = example.compare(example.demo_model(), resolver_factory())
    assert same
    logged = [f"INFO: {r.getMessage()}" for r in caplog.records if r.name == "accelsim.delegates.api"]
    printed = [*example.describe(delegated), f"outputs identical with and without the delegate: {same}"]
    assert logged + printed == EXPECTED


def test_demo_delegated_values_are_bit_identical(resolver_factory):
    model = example.demo_model()
    plain = Interpreter(model=model, op_resolver=resolver_factory())
    it = Interpreter(model=model, op_resolver=resolver_factory(), experimental_delegates=[example.MyDelegate()])
    rng = np.random.default_rng(7)
    for _ in range(3):
        x = [rng.standard_normal((2, 3)).astype(np.float32) * 1e3 for _ in range(2)]
        a, b = example.run(plain, x)[0], example.run(it, x)[0]
        assert a.tobytes() == b.tobytes()
    assert [r["claimed"] for r in delegation_report(it)] == [True, True, False, True, True]


def view(op="ADD", types=("FLOAT32", "FLOAT32"), shapes=((2, 3), (2, 3)), activation=0):
    def tensor(i, t, s):
        return TensorView(i, f"t{i}", t, s, s, Quantization((0.1,), (0,)) if t == "INT8" else None, False, False, None)

    ins = tuple(tensor(i, t, s) for i, (t, s) in enumerate(zip(types, shapes)))
    out = tensor(9, types[0], np.broadcast_shapes(*shapes))
    table = {"ADD": "AddOptions", "SUB": "SubOptions"}.get(op)
    options = default_options(table).replace(fused_activation_function=activation) if table else None
    return DelegateNodeView(0, op, None, 1, options, None, (0, 1), (9,), ins, (out,))


@pytest.mark.parametrize("node, answer", [
    (view(), True),
    (view(op="SUB"), True),
    (view(op="MUL"), (False, "op MUL unsupported (MyDelegate runs only ADD and SUB)")),
    (view(types=("INT8", "INT8")), (False, "dtype INT8 of tensor 0 unsupported (float32 only)")),
    (view(shapes=((2, 3), (1, 3))), (False, "shape constraint: inputs [2, 3] and [1, 3] would broadcast")),
    (view(activation=1), (False, "fused activation RELU unsupported")),
    (view(op="SUB", activation=3), (False, "fused activation RELU6 unsupported")),
])
def test_support_rules_give_reasons(node, answer):
    assert example.MyDelegate().is_node_supported(None, node, None) == answer


def run_script(*args):
    # The checkout first on the path, as pytest's `pythonpath` has it (an editable install made
    # before delegates/ had an __init__.py would otherwise find an empty namespace package).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)


@pytest.mark.slow
def test_script_prints_its_expected_output():
    done = run_script()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == EXPECTED


@pytest.mark.slow
def test_script_runs_a_model_file(tmp_path):
    path = tmp_path / "demo.tflite"
    path.write_bytes(save_model(example.demo_model()))
    done = run_script(path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[2:] == EXPECTED[2:]


def float_fixtures():
    manifest = FIXTURES / "MANIFEST.json"
    if not manifest.exists():
        return []
    models = json.loads(manifest.read_text())["models"]
    # custom-op fixtures need kernels (examples/custom_op_atan.py, accelsim.ops.mediapipe) the example does not register
    return sorted(v["file"] for v in models.values()
                  if {"ADD", "SUB"} & set(v.get("ops", ())) and all(i["dtype"] == "float32" for i in v["inputs"])
                  and not v["custom_ops"])


@pytest.mark.slow
@pytest.mark.parametrize("name", float_fixtures())
def test_fixture_models_give_identical_results(name):
    model = load_model(FIXTURES / name)
    delegated, same = example.compare(model)
    assert same
    assert any(r["claimed"] for r in delegation_report(delegated)) or not any(
        op.op in ("ADD", "SUB") for op in model.subgraphs[0].operators)
