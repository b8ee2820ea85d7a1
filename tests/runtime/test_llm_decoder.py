"""litert-torch's tiny Gemma3 decoders (tests/fixtures/models/llm/) run through signature runners, prefill then
decode, as ai-edge-litert runs them (its reference kernels, the project's oracle): logits and KV cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import pack_int4, unpack_int4
from accelsim.runtime.kernels.generative import dynamic_update_slice
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

LLM = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "llm"
FILES = sorted(p.name for p in LLM.glob("*.tflite"))
CONTEXT, PREFILL = 64, 8


def _generate(interpreter, steps: int = 4):
    """Prefill 8 tokens, then `steps` greedy decode steps; the KV caches and every step's logits."""
    prefill = interpreter.get_signature_runner(f"prefill_{PREFILL}")
    decode = interpreter.get_signature_runner("decode")
    kv = {k: np.zeros(v["shape"], np.float32) for k, v in prefill.get_input_details().items()
          if k.startswith("kv_cache")}
    mask = np.full((1, 1, PREFILL, CONTEXT), -np.inf, np.float32)
    for i in range(PREFILL):
        mask[0, 0, i, :i + 1] = 0
    out = prefill(tokens=np.array([[1, 5, 9, 3, 7, 2, 8, 4]], np.int32), input_pos=np.arange(PREFILL, dtype=np.int32),
                  mask=mask, **kv)
    kv = {k: out[k] for k in kv}
    logits, token = [], 11
    for pos in range(PREFILL, PREFILL + steps):
        m = np.full((1, 1, 1, CONTEXT), -np.inf, np.float32)
        m[0, 0, 0, :pos + 1] = 0
        out = decode(tokens=np.array([[token]], np.int32), input_pos=np.array([pos], np.int32), mask=m, **kv)
        kv = {k: out[k] for k in kv}
        logits.append(out["logits"])
        token = int(np.argmax(out["logits"])) % 128
    return kv, np.concatenate(logits)


def _litert(path: Path):
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from ai_edge_litert.interpreter import OpResolverType

    return LiteRT(model_path=str(path), num_threads=1,
                  experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


@pytest.mark.parametrize("name", FILES)
def test_tiny_gemma3_prefill_then_decode_matches_litert(name):
    ours_kv, ours_logits = _generate(Interpreter(model_path=LLM / name))
    ref_kv, ref_logits = _generate(_litert(LLM / name))
    for key in ref_kv:  # float rounding: the tolerance of the other float ops (1e-5 of the largest value)
        np.testing.assert_allclose(ours_kv[key], ref_kv[key], rtol=0, atol=1e-5 * np.abs(ref_kv[key]).max())
    np.testing.assert_allclose(ours_logits, ref_logits, rtol=0, atol=1e-5 * np.abs(ref_logits).max())


def test_the_files_round_trip_composites_and_blockwise_int4():
    model = load_model(LLM / "tiny_gemma3_dq4b32.tflite")
    again = load_model(save_model(model))
    assert again == model
    op = next(o for o in model.subgraphs[0].operators if o.op == "STABLEHLO_COMPOSITE")
    assert op.options_2.name == "odml.rms_norm" and op.options_2.decomposition_subgraph_index == 2
    weight = model.subgraphs[0].tensors[7]
    assert weight.type == "INT4" and weight.quantization.block_size == 32
    assert model.subgraphs[0].tensors[weight.quantization.block_scales].type == "FLOAT16"


@given(st.lists(st.integers(-8, 7), min_size=1, max_size=33))
def test_int4_packs_two_a_byte_low_nibble_first(values):
    arr = np.array(values, np.int8)
    packed = pack_int4(arr)
    assert len(packed) == (len(arr) + 1) // 2
    assert (unpack_int4(packed, arr.shape) == arr).all()
    if len(arr) >= 2:
        assert packed[0] == (int(arr[0]) & 0xF) | ((int(arr[1]) & 0xF) << 4)


def test_dynamic_update_slice_clamps_its_start_into_the_operand():
    operand = np.zeros((1, 4, 3), np.float32)
    update = np.ones((1, 2, 3), np.float32)
    out = dynamic_update_slice(operand, update, np.array([0, 3, 0]))  # 3 is clamped to 4 - 2 = 2
    assert out[0, 2:].sum() == 6 and out[0, :2].sum() == 0 and operand.sum() == 0
