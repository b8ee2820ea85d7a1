"""Model I/O: round trips of converter-made models, and clear errors on bad files."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from support import CUSTOM_OP_FIXTURES, FIXTURES, Spec, const, random_inputs, run_litert, single_op_model

from accelsim.runtime.errors import ModelError
from accelsim.runtime.ir import Operator, Options, Quantization, make_operator
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

FIXTURE_FILES = sorted(FIXTURES.glob("*.tflite"))
RUNNABLE = [f for f in FIXTURE_FILES if f.stem not in CUSTOM_OP_FIXTURES]  # LiteRT lacks their kernels


def test_fixture_corpus_is_present():
    assert len(FIXTURE_FILES) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_round_trip_gives_the_same_ir(path):
    model = load_model(path)
    again = load_model(save_model(model))
    assert again == model


@pytest.mark.slow
@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.stem)
def test_litert_runs_a_saved_model_identically(path):
    original = path.read_bytes()
    saved = save_model(load_model(original))
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    inputs = random_inputs(LiteRT(model_content=original).get_input_details(), seed=3)
    for ours, ref in zip(run_litert(saved, inputs), run_litert(original, inputs)):
        np.testing.assert_array_equal(ours, ref)


def test_ir_exposes_resolved_ops_versions_options_and_quantization():
    model = load_model(FIXTURES / "mobilenet_v2_035_96_int8.tflite")
    sg = model.subgraphs[0]
    conv = next(op for op in sg.operators if op.op == "CONV_2D")
    assert conv.version == 3
    assert conv.options_type == "Conv2DOptions"
    assert conv.options.padding in (0, 1) and conv.options.stride_w in (1, 2)
    weights = sg.tensors[conv.inputs[1]]
    assert weights.type == "INT8"
    assert weights.quantization.per_channel
    assert len(weights.quantization.scales) == weights.shape[0]
    data = model.constant(0, conv.inputs[1])
    assert data.shape == weights.shape and not data.flags.writeable


def test_constants_are_views_of_the_file_not_copies():
    raw = (FIXTURES / "mobilenet_v2_035_96_float.tflite").read_bytes()
    model = load_model(raw)
    sg = model.subgraphs[0]
    conv = next(op for op in sg.operators if op.op == "CONV_2D")
    data = model.constant(0, conv.inputs[1])
    assert np.shares_memory(data, np.frombuffer(raw, dtype=np.uint8))


def test_resolved_op_code_is_max_of_builtin_and_deprecated_code():
    # GELU (150) does not fit the one-byte deprecated field: the writer stores 127 there.
    model_bytes = single_op_model("GELU", [Spec((1, 4))], [Spec((1, 4))])
    from accelsim.schema.tflite.Model import ModelT

    raw = ModelT.InitFromPackedBuf(model_bytes, 0)
    assert raw.operatorCodes[0].deprecatedBuiltinCode == 127
    assert raw.operatorCodes[0].builtinCode == 150
    assert load_model(model_bytes).subgraphs[0].operators[0].op == "GELU"


def test_missing_options_table_gets_the_tables_defaults():
    op = make_operator("DEPTHWISE_CONV_2D", [0], [1])
    bare = dataclasses.replace(op, options=None, options_type=None)
    model = load_model(single_op_model("RELU", [Spec((1,))], [Spec((1,))]))
    sg = dataclasses.replace(model.subgraphs[0], operators=(bare,))
    loaded = load_model(save_model(dataclasses.replace(model, subgraphs=(sg,))))
    opts = loaded.subgraphs[0].operators[0].options
    assert opts.dilation_w_factor == 1 and opts.dilation_h_factor == 1 and opts.depth_multiplier == 0


def test_options_are_immutable_and_name_their_fields():
    opts = make_operator("CONV_2D", [0, 1], [2], stride_w=2).options
    assert isinstance(opts, Options) and opts.stride_w == 2
    with pytest.raises(AttributeError):
        opts.stride_w = 3
    with pytest.raises(AttributeError, match="stride_w"):
        _ = opts.strides
    with pytest.raises(KeyError, match="fields"):
        opts.replace(bogus=1)


def test_per_channel_quantization_round_trips():
    q = Quantization((0.5, 0.25, 0.125), (0, 0, 0), 3)
    model = load_model(single_op_model(
        "RESHAPE", [const(np.zeros((1, 1, 1, 3), np.int8), scale=q.scales, zero_point=0, quantized_dimension=3),
                    const(np.array([3], np.int32))], [Spec((3,), "INT8", scale=0.5, zero_point=0)]))
    t = model.subgraphs[0].tensors[0]
    assert t.quantization == q


# --- bad input ------------------------------------------------------------------------------


def _mutate(model, **tensor_or_op_changes):
    sg = model.subgraphs[0]
    if "tensor" in tensor_or_op_changes:
        idx, changes = tensor_or_op_changes["tensor"]
        tensors = list(sg.tensors)
        tensors[idx] = dataclasses.replace(tensors[idx], **changes)
        sg = dataclasses.replace(sg, tensors=tuple(tensors))
    if "op" in tensor_or_op_changes:
        idx, changes = tensor_or_op_changes["op"]
        ops = list(sg.operators)
        ops[idx] = dataclasses.replace(ops[idx], **changes)
        sg = dataclasses.replace(sg, operators=tuple(ops))
    return save_model(dataclasses.replace(model, subgraphs=(sg,)))


@pytest.fixture
def small_model():
    return load_model(single_op_model("RESHAPE", [Spec((2, 3)), const(np.array([3, 2], np.int32))], [Spec((3, 2))]))


def test_truncated_file_is_a_model_error():
    raw = (FIXTURES / "interleaved_int8.tflite").read_bytes()
    for cut in (4, 16, len(raw) // 3, len(raw) // 2):
        with pytest.raises(ModelError, match="corrupt|truncated|too short|identifier|malformed"):
            load_model(raw[:cut])


def test_not_a_tflite_file_says_so(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello, this is not a model at all")
    with pytest.raises(ModelError, match=r"notes.txt: not a TFLite model: file identifier"):
        load_model(bad)
    with pytest.raises(ModelError, match="too short"):
        load_model(b"TFL3")


def test_missing_file_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="cannot read model file"):
        load_model(tmp_path / "absent.tflite")


def test_buffer_index_out_of_range_names_the_tensor(small_model):
    raw = _mutate(small_model, tensor=(1, {"buffer": 99}))
    with pytest.raises(ModelError, match=r"subgraph 0 tensor 1 .*buffer index 99 out of range"):
        load_model(raw)


def test_tensor_index_out_of_range_names_the_operator(small_model):
    raw = _mutate(small_model, op=(0, {"inputs": (0, 7)}))
    with pytest.raises(ModelError, match=r"subgraph 0 operator 0 \(RESHAPE\) inputs: tensor index 7 out of range"):
        load_model(raw)


def test_shape_that_does_not_match_its_buffer_is_refused(small_model):
    raw = _mutate(small_model, tensor=(1, {"shape": (5,)}))
    with pytest.raises(ModelError, match=r"tensor 1 .*holds 8 bytes but shape \[5\] of INT32 needs 20"):
        load_model(raw)


def test_negative_shape_is_refused(small_model):
    raw = _mutate(small_model, tensor=(0, {"shape": (2, -3)}))
    with pytest.raises(ModelError, match="negative dimension"):
        load_model(raw)


def test_enormous_tensor_is_refused_before_allocation(small_model):
    raw = _mutate(small_model, tensor=(0, {"shape": (1 << 20, 1 << 20)}))
    with pytest.raises(ModelError, match="over the limit"):
        load_model(raw)
    with pytest.raises(ModelError, match="over the limit of 16 bytes"):
        load_model(save_model(small_model), max_tensor_bytes=16)


def test_opcode_index_out_of_range_is_refused(small_model):
    from accelsim.schema.tflite.Model import ModelT

    raw = ModelT.InitFromPackedBuf(save_model(small_model), 0)
    raw.subgraphs[0].operators[0].opcodeIndex = 5
    import flatbuffers

    b = flatbuffers.Builder(0)
    b.Finish(raw.Pack(b), file_identifier=b"TFL3")
    with pytest.raises(ModelError, match="opcode index 5 out of range"):
        load_model(bytes(b.Output()))


def test_unknown_builtin_name_is_refused():
    with pytest.raises(ModelError, match="unknown builtin op 'CONV_9D'"):
        make_operator("CONV_9D", [0], [1])
    with pytest.raises(ModelError, match="takes no builtin options"):
        make_operator("RELU", [0], [1], alpha=1.0)
    assert isinstance(make_operator("CUSTOM", [0], [1], custom_code="Atan"), Operator)


@pytest.mark.slow
def test_random_bit_flips_only_ever_raise_model_error():
    rng = np.random.default_rng(1234)
    raw = (FIXTURES / "interleaved_int8.tflite").read_bytes()
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        b = bytearray(raw)
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(0, len(b)))
            b[i] ^= 1 << int(rng.integers(0, 8))
        try:
            load_model(bytes(b))
            outcomes["loaded"] += 1
        except ModelError:
            outcomes["refused"] += 1
    assert outcomes["loaded"] + outcomes["refused"] == 300
