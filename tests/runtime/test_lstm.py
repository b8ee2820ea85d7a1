"""UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM (float, full kernel) against LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_close_to_reference, check_against_litert, prepare_error

from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT = range(6)


def lstm_model(op: str = "UNIDIRECTIONAL_SEQUENCE_LSTM", *, batch: int = 2, time: int = 3, n_input: int = 4,
               n_cell: int = 5, n_output: int | None = None, cifg: bool = False, peephole: bool = False,
               projection: bool = False, projection_bias: bool = False, layer_norm: bool = False,
               num_inputs: int = 24, weights_as_inputs: bool = False, state_variable: bool = True,
               input_type: str = "FLOAT32", seed: int = 0, **options) -> bytes:
    """A one-node LSTM model; omitted optional inputs are -1, the states are variable tensors."""
    rng = np.random.default_rng(seed)
    n_output = n_output or n_cell
    time_major = options.get("time_major", False)
    if op == "LSTM":
        in_shape = (batch, n_input)
    else:
        in_shape = (time, batch, n_input) if time_major else (batch, time, n_input)
    tensors = [Tensor("input", input_type, in_shape)]
    buffers: list[bytes] = [b""]
    graph_inputs = [0]

    def add(name, shape, present=True):
        if not present:
            return -1
        if weights_as_inputs:
            graph_inputs.append(len(tensors))
            tensors.append(Tensor(name, "FLOAT32", shape))
        else:
            buffers.append((rng.standard_normal(shape) * 0.5).astype(np.float32).tobytes())
            tensors.append(Tensor(name, "FLOAT32", shape, len(buffers) - 1))
        return len(tensors) - 1

    ins = [0]
    ins += [add(f"i2{g}", (n_cell, n_input), g != "i" or not cifg) for g in "ifco"]
    ins += [add(f"r2{g}", (n_cell, n_output), g != "i" or not cifg) for g in "ifco"]
    ins += [add(f"c2{g}", (n_cell,), peephole and (g != "i" or not cifg)) for g in "ifo"]
    ins += [add(f"b{g}", (n_cell,), g != "i" or not cifg) for g in "ifco"]
    ins += [add("proj", (n_output, n_cell), projection), add("proj_bias", (n_output,), projection_bias)]
    for name, size in (("output_state", n_output), ("cell_state", n_cell)):
        ins.append(len(tensors))
        tensors.append(Tensor(name, "FLOAT32", (batch, size), is_variable=state_variable))
    if num_inputs == 24:
        ins += [add(f"ln{g}", (n_cell,), layer_norm and (g != "i" or not cifg)) for g in "ifco"]
    tensors.append(Tensor("output", "FLOAT32", in_shape[:-1] + (n_output,)))
    node = make_operator(op, ins, [len(tensors) - 1], **options)
    sg = Subgraph(tuple(tensors), tuple(graph_inputs), (len(tensors) - 1,), (node,), "main")
    return save_model(Model((sg,), tuple(buffers)))


def _inputs(model: bytes, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    details = Interpreter(model_content=model).get_input_details()
    return [(rng.standard_normal(tuple(d["shape"])) * 0.8).astype(np.float32) for d in details]


def _litert(model: bytes):
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from ai_edge_litert.interpreter import OpResolverType

    return LiteRT(model_content=model, num_threads=1,
                  experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


def _invoke_sequence(it, inputs_per_run: list[list[np.ndarray]], reset_before: int | None = None):
    """Invoke once per input list on one interpreter; the LSTM states carry over between invokes."""
    it.allocate_tensors()
    outs = []
    for k, inputs in enumerate(inputs_per_run):
        if k == reset_before:
            it.reset_all_variables()
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]))
    return outs


# -- UNIDIRECTIONAL_SEQUENCE_LSTM -------------------------------------------------------------------

@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize(("batch", "time"), [(1, 1), (2, 3), (3, 7)])
def test_sequence_lstm_basic(time_major, batch, time):
    model = lstm_model(batch=batch, time=time, time_major=time_major, fused_activation_function=TANH)
    out = check_against_litert(model, _inputs(model))[0]
    assert out.shape == ((time, batch, 5) if time_major else (batch, time, 5))


@pytest.mark.parametrize(("name", "kw"), [
    ("cifg", {"cifg": True}),
    ("peephole", {"peephole": True}),
    ("cifg_peephole", {"cifg": True, "peephole": True}),
    ("projection", {"projection": True, "n_output": 3}),
    ("projection_bias", {"projection": True, "projection_bias": True, "n_output": 6}),
    ("layer_norm", {"layer_norm": True}),
    ("layer_norm_cifg_peephole", {"layer_norm": True, "cifg": True, "peephole": True}),
    ("everything", {"layer_norm": True, "peephole": True, "projection": True, "projection_bias": True,
                    "n_output": 4}),
    ("twenty_inputs", {"num_inputs": 20}),
])
@pytest.mark.parametrize("time_major", [False, True])
def test_sequence_lstm_variants(name, kw, time_major):
    model = lstm_model(time_major=time_major, fused_activation_function=TANH, **kw)
    check_against_litert(model, _inputs(model))


@pytest.mark.parametrize(("cell_clip", "proj_clip", "projection"), [(0.3, 0.0, False), (0.0, 0.2, True),
                                                                    (0.5, 0.1, True), (0.0, 0.2, False)])
def test_sequence_lstm_clipping(cell_clip, proj_clip, projection):
    model = lstm_model(time=5, fused_activation_function=TANH, cell_clip=cell_clip, proj_clip=proj_clip,
                       projection=projection, n_output=3 if projection else None)
    inputs = [x * 4 for x in _inputs(model)]
    out = check_against_litert(model, inputs)[0]
    if projection and proj_clip:
        assert np.abs(out).max() <= proj_clip


@pytest.mark.parametrize("activation", [RELU, RELU_N1_TO_1, RELU6, SIGN_BIT, NONE])
def test_sequence_lstm_other_activations(activation):
    model = lstm_model(fused_activation_function=activation)
    check_against_litert(model, _inputs(model))


@pytest.mark.parametrize("layer_norm", [False, True])
@pytest.mark.parametrize("time_major", [False, True])
def test_sequence_lstm_activation_none_with_all_zero_input_steps(time_major, layer_norm):
    """LiteRT skips the input matmul on an all-zero step, which shows through only for activation NONE."""
    model = lstm_model(time=4, fused_activation_function=NONE, time_major=time_major, layer_norm=layer_norm)
    inputs = _inputs(model)
    x = inputs[0]
    if time_major:
        x[1] = 0  # a whole step
        x[3, 1] = 0  # one row of a step: not skipped
    else:
        x[0, 1] = 0
        x[1, 2] = 0
    check_against_litert(model, inputs)


def test_sequence_lstm_weights_from_graph_inputs():
    model = lstm_model(weights_as_inputs=True, peephole=True, fused_activation_function=TANH)
    check_against_litert(model, _inputs(model))


def test_sequence_lstm_bigger_sizes():
    model = lstm_model(batch=4, time=12, n_input=16, n_cell=32, fused_activation_function=TANH, time_major=True)
    check_against_litert(model, _inputs(model), rtol=2e-5)


@pytest.mark.parametrize("time_major", [False, True])
def test_sequence_lstm_state_carries_over_invokes(time_major):
    model = lstm_model(time_major=time_major, peephole=True, fused_activation_function=TANH)
    runs = [_inputs(model, seed) for seed in (1, 2, 3)]
    ours = _invoke_sequence(Interpreter(model_content=model), runs)
    ref = _invoke_sequence(_litert(model), runs)
    assert_close_to_reference(ours, ref)
    assert not np.allclose(ours[1], _invoke_sequence(Interpreter(model_content=model), runs[1:2])[0])


def test_sequence_lstm_reset_all_variables_restarts_the_state():
    model = lstm_model(fused_activation_function=TANH)
    runs = [_inputs(model, 1)] * 3
    ours = _invoke_sequence(Interpreter(model_content=model), runs, reset_before=2)
    ref = _invoke_sequence(_litert(model), runs, reset_before=2)
    assert_close_to_reference(ours, ref)
    np.testing.assert_array_equal(ours[2], ours[0])


def _state_after_reallocation(it, x: np.ndarray, longer: np.ndarray) -> list[np.ndarray]:
    """Outputs of: invoke; allocate again and invoke; resize, allocate and invoke."""
    idx = it.get_input_details()[0]["index"]
    outs = []
    it.allocate_tensors()
    for value, resize in ((x, False), (x, False), (longer, True)):
        if resize:
            it.resize_tensor_input(idx, value.shape)
        it.allocate_tensors()
        it.set_tensor(idx, value)
        it.invoke()
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]))
    return outs


def test_sequence_lstm_state_resets_when_tensors_are_reallocated():
    """AllocateTensors resets variable tensors only when it reallocates (after a resize), as in LiteRT."""
    model = lstm_model(fused_activation_function=TANH)
    x = _inputs(model)[0]
    longer = np.random.default_rng(5).standard_normal((2, 6, 4)).astype(np.float32)
    ours = _state_after_reallocation(Interpreter(model_content=model), x, longer)
    assert_close_to_reference(ours, _state_after_reallocation(_litert(model), x, longer))
    fresh = Interpreter(model_content=model)
    fresh.resize_tensor_input(0, longer.shape)
    fresh.allocate_tensors()
    fresh.set_tensor(0, longer)
    fresh.invoke()
    np.testing.assert_array_equal(ours[2], fresh.get_tensor(fresh.get_output_details()[0]["index"]))
    assert not np.allclose(ours[0], ours[1])


# -- LSTM (one step, full kernel) -------------------------------------------------------------------

@pytest.mark.parametrize(("name", "kw"), [
    ("plain", {}),
    ("cifg_peephole", {"cifg": True, "peephole": True}),
    ("projection_clip", {"projection": True, "projection_bias": True, "n_output": 3, "proj_clip": 0.2,
                         "cell_clip": 0.4}),
    ("layer_norm", {"layer_norm": True}),
])
def test_lstm_one_step(name, kw):
    model = lstm_model("LSTM", batch=3, fused_activation_function=TANH, **kw)
    runs = [_inputs(model, seed) for seed in (1, 2)]
    ours = _invoke_sequence(Interpreter(model_content=model), runs)
    assert_close_to_reference(ours, _invoke_sequence(_litert(model), runs))


# -- errors -----------------------------------------------------------------------------------------

def test_error_state_not_variable():
    msg = prepare_error(lstm_model(state_variable=False, fused_activation_function=TANH))
    assert "output_state (input 18) must be a variable tensor" in msg
    assert "Node number 0 (UNIDIRECTIONAL_SEQUENCE_LSTM) failed to prepare" in msg


def test_error_integer_input_not_implemented():
    assert "only float32 is implemented, input is INT8" in prepare_error(lstm_model(input_type="INT8"))


def _with_node_inputs(model: bytes, edit) -> bytes:
    """The model with its LSTM node's input list passed through `edit`."""
    m = load_model(model)
    sg = m.subgraphs[0]
    op = sg.operators[0]
    node = make_operator(op.op, edit(list(op.inputs)), op.outputs, **dict(op.options))
    return save_model(m.replace(subgraphs=(Subgraph(sg.tensors, sg.inputs, sg.outputs, (node,)),)))


def test_error_wrong_input_count():
    msg = prepare_error(_with_node_inputs(lstm_model(num_inputs=20), lambda ins: ins[:19]))
    assert "the full kernel expects 20 or 24 inputs, got 19" in msg


def test_error_half_cifg():
    # recurrent_to_input_weights gone, input_to_input_weights kept
    msg = prepare_error(_with_node_inputs(lstm_model(), lambda ins: ins[:5] + [-1] + ins[6:]))
    assert "both present or both absent (CIFG)" in msg


def test_error_peephole_partly_present():
    msg = prepare_error(_with_node_inputs(lstm_model(peephole=True), lambda ins: ins[:10] + [-1] + ins[11:]))
    assert "the peephole weights (inputs 9-11) must be all present or all absent" in msg


def test_error_weight_shape_mismatch():
    # recurrent_to_cell_weights [5, 5] in the place of input_to_cell_weights [5, 4]
    msg = prepare_error(_with_node_inputs(lstm_model(), lambda ins: ins[:3] + [ins[7]] + ins[4:]))
    assert "input_to_cell_weights (input 3) has shape [5, 5], expected [5, 4]" in msg


def test_error_negative_clip():
    msg = prepare_error(lstm_model(cell_clip=-1.0))
    assert "cell_clip -1.0 and proj_clip 0.0 must be >= 0" in msg


def test_error_lstm_basic_kernel_rejected():
    msg = prepare_error(lstm_model("LSTM", kernel_type=1))
    assert "only the full kernel" in msg


@pytest.mark.parametrize("projection", [False, True])
def test_sequence_lstm_reports_its_gate_gemm_and_cell_updates(projection):
    from accelsim.runtime.work import Gemm, subgraph_work

    # batch 2 x 3 steps = 6 rows; K = 4 inputs + 3 outputs; N = 4 gates x 5 cells; projection 5 -> 3.
    it = Interpreter(model_content=lstm_model(n_cell=5, n_output=3 if projection else None, projection=projection))
    it.allocate_tensors()
    (work,) = subgraph_work(it, 0)
    n_output = 3 if projection else 5
    assert (work.kind, work.gemm) == ("gemm", Gemm(6, 4 + n_output, 20))
    assert work.macs == 6 * (4 + n_output) * 20 + (6 * 5 * 3 if projection else 0)
    assert work.activation_ops == 10 * 6 * 5
