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

from accelsim.runtime.interpreter import Interpreter

MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
WHOLE_MODEL_RTOL = 1e-4
RUNNABLE = sorted(name for name, entry in MANIFEST["models"].items() if not entry["custom_ops"])


def _two_invokes_match_litert(ours: Interpreter, model: bytes) -> None:
    """Invoke `ours` on two input seeds in turn; each time every output matches LiteRT's."""
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


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNNABLE)
def test_fixture_model_matches_litert_on_two_invokes(name):
    model = (FIXTURES / f"{name}.tflite").read_bytes()
    _two_invokes_match_litert(Interpreter(model_content=model), model)


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNNABLE)
def test_no_kernel_writes_into_arrays_it_did_not_just_produce(name):
    """Kernels hand arrays on without copies (WHILE passes body outputs back as inputs, GATHER and
    SPLIT return views), which is safe only if no kernel writes into an input or reuses an array it
    gave out. Every array a node produces is frozen (read-only) right after; a later in-place write
    into it, by any node or by the producer on the next invoke, raises.
    """
    import dataclasses

    model = (FIXTURES / f"{name}.tflite").read_bytes()
    ours = Interpreter(model_content=model)

    def freezing(invoke):
        def run(ctx, node):
            result = invoke(ctx, node)
            for t in node.outputs:
                data = ctx.tensor(t).data if t >= 0 else None
                if data is not None:
                    data.flags.writeable = False
            return result
        return run

    for i in range(ours.num_subgraphs()):
        for node in ours.subgraph(i).nodes:
            if node.registration is not None and node.registration.invoke is not None:
                node.registration = dataclasses.replace(node.registration,
                                                        invoke=freezing(node.registration.invoke))
    _two_invokes_match_litert(ours, model)
