"""Every runnable fixture model, end to end, against LiteRT: the regression net for kernel speed work.

Two input seeds and two invokes on one interpreter (a kernel that keeps state between invokes, or
reuses a buffer it should not, shows up as a difference on the second invoke).
Integer outputs must be identical. Float outputs get 1e-4 of the output's largest magnitude rather
than the single-op 1e-5: across a whole network, float32 sums taken in a different order than
LiteRT's (BLAS vs ruy) differ by a few ulps per layer, and a final SOFTMAX turns the logits' absolute
error into probability error (dilated_cnn_float, seed 0: FULLY_CONNECTED logits 9.7e-6 of their max,
SOFTMAX 3.2e-5).
"""

import json

import numpy as np
import pytest
from support import FIXTURES, assert_close_to_reference, random_inputs, run_litert

from runtime.interpreter import Interpreter

MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
WHOLE_MODEL_RTOL = 1e-4
RUNNABLE = sorted(name for name, entry in MANIFEST["models"].items() if not entry["custom_ops"])


@pytest.mark.parametrize("name", RUNNABLE)
def test_fixture_model_matches_litert_on_two_invokes(name):
    model = (FIXTURES / f"{name}.tflite").read_bytes()
    ours = Interpreter(model_content=model)
    ours.allocate_tensors()
    details = ours.get_input_details()
    for seed in (0, 1):
        inputs = random_inputs(details, seed)
        for d, x in zip(details, inputs):
            ours.set_tensor(d["index"], x)
        ours.invoke()
        got = [ours.get_tensor(d["index"]) for d in ours.get_output_details()]
        assert_close_to_reference(got, run_litert(model, inputs), rtol=WHOLE_MODEL_RTOL)
        assert all(np.asarray(g).size for g in got)
