"""Float LSTM: UNIDIRECTIONAL_SEQUENCE_LSTM and the one-step LSTM (full kernel).

Both follow lstm_eval.cc's float path (LstmStepFloat): per step, every gate is
bias + W_x x + W_h h (+ peephole w .* c), optionally layer-normalized; the states
live in the node's two variable inputs and carry over from one invoke to the next.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check
from accelsim.runtime.quant import activation_name, apply_float_activation
from accelsim.runtime.registration import Registration

# lstm_shared.h: the full kernel's input tensors.
_INPUT = 0
_INPUT_WEIGHTS = (1, 2, 3, 4)  # input_to_{input, forget, cell, output}_weights
_RECURRENT_WEIGHTS = (5, 6, 7, 8)
_PEEPHOLE_WEIGHTS = (9, 10, 11)  # cell_to_{input, forget, output}_weights
_BIASES = (12, 13, 14, 15)
_PROJECTION_WEIGHTS, _PROJECTION_BIAS = 16, 17
_OUTPUT_STATE, _CELL_STATE = 18, 19
_LAYER_NORM = (20, 21, 22, 23)
_F32 = np.float32


@dataclass(frozen=True)
class LstmWeights:
    """One LSTM cell's weights, gates stacked as (input?, forget, cell, output) along the last axis
    (`from_gates` builds it from the op's per-gate inputs)."""

    w_input: np.ndarray  # [n_input, gates * n_cell]
    w_recurrent: np.ndarray  # [n_output, gates * n_cell]
    bias: np.ndarray  # [gates * n_cell]
    gate_bias: tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]  # (input, forget, cell, output)
    peephole: tuple[np.ndarray | None, np.ndarray, np.ndarray] | None  # (input, forget, output)
    layer_norm: tuple[np.ndarray | None, ...] | None  # (input, forget, cell, output) coefficients
    projection: np.ndarray | None  # [n_cell, n_output]
    projection_bias: np.ndarray | None
    cifg: bool
    n_cell: int
    n_output: int

    @classmethod
    def from_gates(cls, input_weights, recurrent_weights, gate_bias, peephole=None, layer_norm=None,
                   projection=None, projection_bias=None) -> LstmWeights:
        """The weights as the op's inputs hold them (lstm_shared.h), stacked so one matmul computes every gate.

        Args:
            input_weights, recurrent_weights: [n_cell, n_input] and [n_cell, n_output] arrays for the
                (input, forget, cell, output) gates; the input gate's are None under CIFG.
            gate_bias: the four gates' [n_cell] biases (the input gate's None under CIFG).
            peephole: (input, forget, output) [n_cell] cell-to-gate weights, or None.
            layer_norm: the four gates' [n_cell] layer-norm coefficients, or None.
            projection, projection_bias: [n_output, n_cell] and [n_output], or None.
        """
        cifg = input_weights[0] is None
        gates = slice(1, 4) if cifg else slice(0, 4)
        return cls(w_input=np.concatenate(input_weights[gates], axis=0).T.astype(_F32),
                   w_recurrent=np.concatenate(recurrent_weights[gates], axis=0).T.astype(_F32),
                   bias=np.concatenate(gate_bias[gates]).astype(_F32), gate_bias=tuple(gate_bias),
                   peephole=peephole, layer_norm=layer_norm,
                   projection=None if projection is None else np.ascontiguousarray(projection.T),
                   projection_bias=projection_bias, cifg=cifg, n_cell=input_weights[3].shape[0],
                   n_output=recurrent_weights[3].shape[1])


# The tensor names of the inputs above, for messages.
_NAMES = {1: "input_to_input_weights", 2: "input_to_forget_weights", 3: "input_to_cell_weights",
          4: "input_to_output_weights", 5: "recurrent_to_input_weights", 6: "recurrent_to_forget_weights",
          7: "recurrent_to_cell_weights", 8: "recurrent_to_output_weights", 9: "cell_to_input_weights",
          10: "cell_to_forget_weights", 11: "cell_to_output_weights", 12: "input_gate_bias",
          13: "forget_gate_bias", 14: "cell_gate_bias", 15: "output_gate_bias", 16: "projection_weights",
          17: "projection_bias", 20: "input_layer_norm_coefficients", 21: "forget_layer_norm_coefficients",
          22: "cell_layer_norm_coefficients", 23: "output_layer_norm_coefficients"}


def _check_dims(ctx, node, n_input: int, n_cell: int, n_output: int, layer_norm: bool) -> None:
    """unidirectional_sequence_lstm.cc CheckInputTensorDimensions, with the tensor named."""
    def expect(i: int, shape: tuple[int, ...], optional: bool = False) -> None:
        t = ctx.input(node, i)
        if t is None:
            check(optional, f"{_NAMES[i]} (input {i}) is required")
            return
        check(t.type == "FLOAT32", f"{_NAMES[i]} (input {i}) must be FLOAT32, got {t.type}")
        check(tuple(t.shape) == shape, f"{_NAMES[i]} (input {i}) has shape {list(t.shape)}, expected {list(shape)}")

    cifg = ctx.input(node, 1) is None
    check(cifg == (ctx.input(node, 5) is None),
          "input_to_input_weights and recurrent_to_input_weights must be both present or both absent (CIFG)")
    for i in _INPUT_WEIGHTS:
        expect(i, (n_cell, n_input), optional=i == 1)
    for i in _RECURRENT_WEIGHTS:
        expect(i, (n_cell, n_output), optional=i == 5)
    for i in _PEEPHOLE_WEIGHTS:
        expect(i, (n_cell,), optional=True)
    present = [ctx.input(node, i) is not None for i in _PEEPHOLE_WEIGHTS]
    check(present == [False] * 3 or ((present[0] or cifg) and present[1] and present[2]),
          "the peephole weights (inputs 9-11) must be all present or all absent")
    check(cifg == (ctx.input(node, 12) is None), "input_gate_bias must be present exactly when the LSTM is not CIFG")
    for i in _BIASES:
        expect(i, (n_cell,), optional=i == 12)
    expect(_PROJECTION_WEIGHTS, (n_output, n_cell), optional=True)
    expect(_PROJECTION_BIAS, (n_output,), optional=True)
    check(ctx.input(node, _PROJECTION_WEIGHTS) is not None or ctx.input(node, _PROJECTION_BIAS) is None,
          "projection_bias needs projection_weights")
    if layer_norm:
        check(cifg == (ctx.input(node, 20) is None),
              "input_layer_norm_coefficients must be present exactly when the LSTM is not CIFG")
        for i in _LAYER_NORM:
            expect(i, (n_cell,), optional=i == 20)


def _data(ctx, node, i: int) -> np.ndarray | None:
    t = ctx.input(node, i)
    return None if t is None else t.data


def _gather_cell(ctx, node, layer_norm: bool) -> LstmWeights:
    """The node's weight inputs as LstmWeights."""
    peephole = None
    if ctx.input(node, 10) is not None:
        peephole = tuple(_data(ctx, node, i) for i in _PEEPHOLE_WEIGHTS)
    return LstmWeights.from_gates([_data(ctx, node, i) for i in _INPUT_WEIGHTS],
                                  [_data(ctx, node, i) for i in _RECURRENT_WEIGHTS],
                                  tuple(_data(ctx, node, i) for i in _BIASES), peephole,
                                  tuple(_data(ctx, node, i) for i in _LAYER_NORM) if layer_norm else None,
                                  _data(ctx, node, _PROJECTION_WEIGHTS), _data(ctx, node, _PROJECTION_BIAS))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in float32; below -88 exp(-x) would overflow, and the result is 0 anyway."""
    return _F32(1) / (_F32(1) + np.exp(-np.maximum(x, _F32(-88))))


def _normalize(x: np.ndarray) -> np.ndarray:
    """tensor_utils MeanStddevNormalization: (x - mean) / sqrt(variance + 1e-8) per batch row."""
    mean = x.mean(axis=-1, keepdims=True, dtype=np.float64)
    variance = np.square(x - mean).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(variance + 1e-8)).astype(_F32)


def _activate(x: np.ndarray, activation: str) -> np.ndarray:
    return apply_float_activation(x, activation).astype(_F32, copy=False)


@dataclass(frozen=True)
class LstmOptions:
    """LSTMOptions / UnidirectionalSequenceLSTMOptions: the fused activation's name and the clips (0: none)."""

    activation: str = "TANH"
    cell_clip: float = 0.0
    proj_clip: float = 0.0


def _step(cell: LstmWeights, p: LstmOptions, xw: np.ndarray, h: np.ndarray, c: np.ndarray,
          zero_input: np.ndarray | None):
    """One LstmStepFloat over a batch: xw is the input's contribution (with bias unless layer norm).

    zero_input marks the batch rows whose input is all zeros (only needed for activation NONE).
    """
    n = cell.n_cell
    z = xw + h @ cell.w_recurrent
    parts = [z[:, k * n:(k + 1) * n] for k in range(z.shape[-1] // n)]
    if cell.cifg:
        parts.insert(0, None)
    ln = cell.layer_norm
    peep = cell.peephole or (None, None, None)
    bias = cell.gate_bias

    def gate(k: int, pre: np.ndarray, peephole: np.ndarray | None, state: np.ndarray) -> np.ndarray:
        """CalculateLstmGateFloat before its activation: peephole, then layer norm and bias."""
        if peephole is not None:
            pre = pre + peephole * state
        if ln is not None:
            pre = _normalize(pre) * ln[k] + bias[k]
        return pre

    forget = _sigmoid(gate(1, parts[1], peep[1], c))
    # lstm_eval.cc UpdateLstmCellFloat: c = f * c + i * g, with i = 1 - f under CIFG.
    cell_pre = gate(2, parts[2], None, c)
    if p.activation == "NONE":
        # ApplyActivationToVector writes nothing for NONE: the cell gate is whatever buffer
        # CalculateLstmGateFloat accumulated into. That is the gate itself unless the input is all
        # zeros (the input matmul is skipped), when it still holds its start value: the bias, or 0
        # under layer norm.
        start = np.zeros(n, _F32) if ln is not None else bias[2]
        g = np.where(zero_input[:, None], start, cell_pre)
    else:
        g = _activate(cell_pre, p.activation)
    i_gate = _F32(1) - forget if cell.cifg else _sigmoid(gate(0, parts[0], peep[0], c))
    c = forget * c + i_gate * g
    if p.cell_clip > 0:
        c = np.clip(c, -p.cell_clip, p.cell_clip)
    o = _sigmoid(gate(3, parts[3], peep[2], c))
    # For NONE the hidden state likewise multiplies the output gate by the cell gate's buffer
    # (CalculateLstmOutputFloat reuses it as scratch), not by the cell state.
    h = o * (g if p.activation == "NONE" else _activate(c, p.activation))
    if cell.projection is not None:
        h = h @ cell.projection
        if cell.projection_bias is not None:
            h = h + cell.projection_bias
        if p.proj_clip > 0:
            h = np.clip(h, -p.proj_clip, p.proj_clip)
    return h.astype(_F32), c.astype(_F32)


def lstm(x: np.ndarray, h: np.ndarray, c: np.ndarray, cell: LstmWeights, p: LstmOptions, time_major: bool = True):
    """LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM, float (lstm_eval.cc EvalFloat: LstmStepFloat per step).

    x is [time, batch, n_input], h [batch, n_output] and c [batch, n_cell] the starting states;
    returns the outputs [time, batch, n_output] and the final output and cell states. `time_major`
    only decides how activation NONE tests for an all-zero input (the whole batch or each row).
    """
    xw = x @ cell.w_input
    if cell.layer_norm is None:
        xw = xw + cell.bias
    zero_input = None
    if p.activation == "NONE":
        # lstm_eval.cc tests for an all-zero input per step: the whole batch when time-major,
        # each batch row on its own otherwise (batch-major steps run one row at a time).
        zero_input = ~x.any(axis=-1)
        if time_major:
            zero_input = np.repeat(zero_input.all(axis=1, keepdims=True), x.shape[1], axis=1)
    out = np.empty(x.shape[:2] + (cell.n_output,), dtype=_F32)
    for t in range(x.shape[0]):
        h, c = _step(cell, p, xw[t], h, c, None if zero_input is None else zero_input[t])
        out[t] = h
    return out, h, c


def _lstm_prepare(op: str, sequence: bool):
    def prepare(ctx, node) -> None:
        n_in = len(node.inputs)
        check(n_in in (20, 24), f"{op}: the full kernel expects 20 or 24 inputs, got {n_in}")
        check(len(node.outputs) == 1, f"{op} has one output, got {len(node.outputs)}")
        opts = node.options
        if not sequence:
            check(opts.kernel_type == 0, f"{op}: only the full kernel (kernel_type FULL) is implemented")
        x = ctx.input(node, _INPUT)
        check(x.type == "FLOAT32", f"{op}: only float32 is implemented, input is {x.type}")
        check(opts.cell_clip >= 0 and opts.proj_clip >= 0,
              f"{op}: cell_clip {opts.cell_clip} and proj_clip {opts.proj_clip} must be >= 0")
        rank = 3 if sequence else 2
        check(len(x.shape) == rank, f"{op}: input must be {rank}-D, got shape {list(x.shape)}")
        time_major = bool(opts.time_major) if sequence else True
        n_batch = x.shape[-2] if time_major or not sequence else x.shape[0]
        n_input = x.shape[-1]
        to_output = ctx.input(node, 4)
        rec_output = ctx.input(node, 8)
        check(to_output is not None and len(to_output.shape) == 2 and rec_output is not None
              and len(rec_output.shape) == 2, f"{op}: input_to_output_weights and recurrent_to_output_weights "
              "must be 2-D")
        n_cell, n_output = to_output.shape[0], rec_output.shape[1]
        layer_norm = n_in == 24 and ctx.input(node, 21) is not None
        _check_dims(ctx, node, n_input, n_cell, n_output, layer_norm)
        for i, size, what in ((_OUTPUT_STATE, n_batch * n_output, "output_state"),
                              (_CELL_STATE, n_batch * n_cell, "cell_state")):
            state = ctx.input(node, i)
            check(state is not None and state.is_variable, f"{op}: {what} (input {i}) must be a variable tensor")
            check(state.type == "FLOAT32", f"{op}: {what} (input {i}) must be FLOAT32, got {state.type}")
            count = int(np.prod(state.shape, dtype=np.int64))
            check(count == size, f"{op}: {what} (input {i}) has {count} elements, expected {size}")
            # AllocateTensors resets variable tensors; a state without data starts at zero.
            if state.data is None or state.data.shape != state.shape:
                state.data = np.zeros(state.shape, dtype=_F32)
        ctx.resize_tensor(ctx.output(node, 0), x.shape[:-1] + (n_output,))
        weights = [ctx.input(node, i) for i in range(n_in) if i not in (_INPUT, _OUTPUT_STATE, _CELL_STATE)]
        constant = all(t is None or t.is_constant for t in weights)
        cell = _gather_cell(ctx, node, layer_norm) if constant else None
        params = LstmOptions(activation_name(opts.fused_activation_function), float(opts.cell_clip),
                             float(opts.proj_clip))
        node.user_data = (cell, params, time_major, (n_cell, n_output, layer_norm))

    return prepare


def _lstm_node(ctx, node) -> None:
    """`lstm` on a node: its weights (gathered at prepare when constant), options, and the variable
    state inputs, which take the final states."""
    cell, params, time_major, (n_cell, n_output, layer_norm) = node.user_data
    if cell is None:
        cell = _gather_cell(ctx, node, layer_norm)
    x = ctx.input(node, _INPUT).data
    h_t, c_t = ctx.input(node, _OUTPUT_STATE), ctx.input(node, _CELL_STATE)
    n_batch = x.shape[-2] if time_major else x.shape[0]
    seq = x.reshape((1,) + x.shape) if x.ndim == 2 else (x if time_major else x.transpose(1, 0, 2))
    out, h, c = lstm(seq, h_t.data.reshape(n_batch, n_output), c_t.data.reshape(n_batch, n_cell), cell, params,
                     time_major)
    if x.ndim == 2:
        out = out[0]
    elif not time_major:
        out = np.ascontiguousarray(out.transpose(1, 0, 2))
    ctx.output(node, 0).data = out
    h_t.data = h.reshape(h_t.shape)
    c_t.data = c.reshape(c_t.shape)


# Elementwise ops per cell and step: three sigmoid gates, two tanh, three products and two sums.
_CELL_OPS = 10


def _lstm_work(ctx, node) -> work.NodeWork:
    """Every step multiplies [input, output state] by the four gates' weights, then updates each cell.

    As one GEMM: M = steps x batch rows, K = input + output size, N = 4 x cells (plus the
    projection's cells x output MACs per row when present); the cell update is _CELL_OPS
    elementwise ops per cell and row.
    """
    n_cell = ctx.input(node, _INPUT_WEIGHTS[3]).shape[0]
    n_output = ctx.input(node, _RECURRENT_WEIGHTS[3]).shape[1]
    x = ctx.input(node, _INPUT)
    rows = int(np.prod(x.shape[:-1], dtype=np.int64))
    gemm = work.Gemm(rows, x.shape[-1] + n_output, 4 * n_cell)
    projection = rows * n_cell * n_output if ctx.input(node, _PROJECTION_WEIGHTS) is not None else 0
    estimate = work.measured(ctx, node, "gemm", gemm.macs + projection, gemm=gemm)
    return dataclasses.replace(estimate, activation_ops=_CELL_OPS * rows * n_cell)


def register(resolver) -> None:
    # The LSTMs have no fast path: the node form of `lstm` is both the invoke and the reference.
    # v1 is float (and, in TFLite, the integer kernels too: they fail prepare here); v2/v3 are
    # hybrid (int8 weights), v4 diagonal recurrent weights, v5 int16 activations: not implemented.
    resolver.add_builtin("UNIDIRECTIONAL_SEQUENCE_LSTM",
                         Registration(_lstm_node, _lstm_prepare("UNIDIRECTIONAL_SEQUENCE_LSTM", True),
                                      reference=_lstm_node, work=_lstm_work), 1, 1)
    # LSTM v1 is the float full kernel; v2 adds the basic kernel, v3/v4 hybrid: not implemented.
    resolver.add_builtin("LSTM", Registration(_lstm_node, _lstm_prepare("LSTM", False), reference=_lstm_node,
                                              work=_lstm_work),
                         1, 1)
