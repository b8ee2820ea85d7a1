"""How fast could any NumPy interpreter run the small fixtures? Hand-fused lower bounds.

Usage:
    python benchmarks/fusion_floor.py [--min-time S] [--only NAME ...]

Issue 7 asks our interpreter to beat LiteRT's C++ reference kernels (BUILTIN_REF) on every fixture.
On the smallest ones NumPy's per-call cost (~0.5 us) decides, so this script measures what the best
NumPy program for each model reaches, written by hand from the model's own weights and checked against
LiteRT's outputs: no interpreter, no per-op dispatch, no shape checks, every buffer preallocated, ops
fused across the graph. That is what graph-level fusion could reach at best.

- lstm_gru_float: a Keras LSTM(16) then GRU(12) over 10 steps, which TensorFlow's converter emits as
  two WHILE loops of 26 and 21 small ops (541 kernel calls per invoke). Fused: the input projections
  of all steps hoisted into one GEMM per layer, every gate of a step from one recurrent product, the
  sigmoids taken as tanh over whole gate blocks with their scaling folded into the weights: 12-13
  NumPy calls per step.
- transformer_block_float: one encoder block (4-head attention over 8 tokens of 32, layer norms built
  from MEAN/SQUARED_DIFFERENCE/RSQRT, a GELU MLP), 43 ops. Fused: Q, K and V from one GEMM with the
  attention scale folded into Q's weights, each layer norm in ten NumPy calls, GELU as our kernel
  computes it: about 55 NumPy calls.

Prints, per model, the time of our interpreter, the hand-fused program, LiteRT builtin and
BUILTIN_REF (all single-threaded, measured in this run; the first three in alternating rounds) and
each one's ratio to BUILTIN_REF.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.runtime import Interpreter  # noqa: E402
from accelsim.runtime.kernels.gelu import gelu_float_for  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from benchmarks.interpreter import FIXTURES, _inputs, _ref_in_subprocess, litert, time_side_by_side  # noqa: E402


class _Constants:
    """The model's constant tensors by (subgraph, tensor index), as float32 arrays."""

    def __init__(self, path: Path):
        self.model = load_model(path.read_bytes())

    def __call__(self, subgraph: int, tensor: int) -> np.ndarray:
        t = self.model.subgraphs[subgraph].tensors[tensor]
        return np.frombuffer(self.model.buffers[t.buffer], dtype=np.float32).reshape(t.shape)


def lstm_gru_network(path: Path):
    """A function x [1, 10, 8] -> logits [1, 4] computing lstm_gru_float with fused NumPy steps.

    The tensor indices are this fixture's (see `accelsim inspect --json` of its subgraphs 2 and 4):
    LSTM body FULLY_CONNECTED weights 9 (input, [64, 8]) and 10 (recurrent, [64, 16]), bias 16, gates
    split as input, forget, cell, output; GRU body input weights 8 [36, 16] with bias 6, recurrent
    weights 9 [36, 12] with bias 7, gates split as update, reset, candidate; the head is
    FULLY_CONNECTED 5 [4, 12] with bias 1 of subgraph 0.
    """
    c = _Constants(path)
    lstm_w, lstm_u, lstm_b = c(2, 9).T.copy(), c(2, 10).T.copy(), c(2, 16)
    gru_w, gru_b, gru_u, gru_ub = c(4, 8).T.copy(), c(4, 6), c(4, 9).T.copy(), c(4, 7)
    head_w, head_b = c(0, 5).T.copy(), c(0, 1)
    steps, units, gru_units = 10, 16, 12
    # logistic(z) = 0.5 + 0.5 * tanh(z / 2): one tanh over all four LSTM gates, scaled before (folded
    # into the weights below) and after by `scale`, shifted by `shift` (the cell gate keeps tanh(z)).
    scale = np.full(4 * units, 0.5, np.float32)
    scale[2 * units:3 * units] = 1
    shift = np.where(scale == 1, 0, 0.5).astype(np.float32)
    # The first scaling is folded into the weights and biases (exact: a power of two).
    lstm_w, lstm_u, lstm_b = lstm_w * scale, lstm_u * scale, lstm_b * scale
    half_gates = np.ones(3 * gru_units, np.float32)
    half_gates[:2 * gru_units] = 0.5
    gru_w, gru_b = gru_w * half_gates, gru_b * half_gates
    gru_u_gates, gru_ub_gates = gru_u * half_gates, gru_ub * half_gates
    gate_scale = np.full(2 * gru_units, 0.5, np.float32)
    lstm_seq = np.empty((steps, units), np.float32)
    # Scratch arrays and every view the steps use, made once: inside the loops each NumPy call is a
    # ufunc or a dot on ready operands.
    z, g, r = np.empty(4 * units, np.float32), np.empty(2 * gru_units, np.float32), np.empty(gru_units, np.float32)
    ig, tanh_cell = np.empty(units, np.float32), np.empty(units, np.float32)
    z_in, z_forget, z_cell, z_out = (z[k * units:(k + 1) * units] for k in range(4))
    update, reset = g[:gru_units], g[gru_units:]
    hu = np.empty(3 * gru_units, np.float32)
    hu_gates, hu_cand = hu[:2 * gru_units], hu[2 * gru_units:]
    xw = np.empty((steps, 4 * units), np.float32)
    xg = np.empty((steps, 3 * gru_units), np.float32)
    xg_gates, xg_cand = xg[:, :2 * gru_units], xg[:, 2 * gru_units:]
    h, cell, hg, n = (np.empty(units, np.float32), np.empty(units, np.float32), np.empty(gru_units, np.float32),
                      np.empty(gru_units, np.float32))

    buffers = (z, g, r, xw, xg, hu, h, cell, hg, n)

    def run(x: np.ndarray) -> np.ndarray:
        z, g, r, xw, xg, hu, h, cell, hg, n = buffers  # locals, updated in place (`+=` would rebind)
        np.dot(x[0], lstm_w, out=xw)
        xw += lstm_b
        h.fill(0)
        cell.fill(0)
        for t in range(steps):
            np.dot(h, lstm_u, out=z)
            z += xw[t]
            np.tanh(z, out=z)
            z *= scale
            z += shift  # sigmoid on the input, forget and output gates; tanh on the cell gate
            cell *= z_forget
            np.multiply(z_in, z_cell, out=ig)
            cell += ig
            np.tanh(cell, out=tanh_cell)
            np.multiply(z_out, tanh_cell, out=h)
            lstm_seq[t] = h
        np.dot(lstm_seq, gru_w, out=xg)
        xg += gru_b
        hg.fill(0)
        for t in range(steps):
            np.dot(hg, gru_u_gates, out=hu)
            hu += gru_ub_gates
            np.add(xg_gates[t], hu_gates, out=g)
            np.tanh(g, out=g)
            g *= gate_scale
            g += gate_scale  # update gate, reset gate
            np.multiply(reset, hu_cand, out=r)  # hu_cand is unscaled (half_gates is 1 there)
            r += xg_cand[t]
            np.tanh(r, out=n)
            hg -= n
            hg *= update
            hg += n  # update * h + (1 - update) * candidate
        out = np.dot(hg, head_w)
        out += head_b
        return out.reshape(1, -1)

    return run


def transformer_network(path: Path):
    """A function x [1, 8, 32] -> y [1, 8, 32] computing transformer_block_float with fused NumPy steps.

    The tensor indices are this fixture's subgraph 0 (`accelsim inspect`): Q, K, V projections 8/2,
    22/23 and 7/1 (weights/bias), attention scale 15, output projection 6/5, layer norms gamma/beta
    19/18 and 21/20 with epsilon 13, MLP 12/4 and 11/3.
    """
    c = _Constants(path)
    heads, tokens, width = 4, 8, 32
    depth = width // heads
    scale = c(0, 15)
    # The attention scale multiplies Q's weights and bias instead of every score.
    w_qkv = np.concatenate([c(0, 8).T * scale, c(0, 22).T, c(0, 7).T], axis=1)
    b_qkv = np.concatenate([c(0, 2) * scale, c(0, 23), c(0, 1)])
    w_out, b_out = c(0, 6).T.copy(), c(0, 5)
    w_up, b_up, w_down, b_down = c(0, 12).T.copy(), c(0, 4), c(0, 11).T.copy(), c(0, 3)
    norms = ((c(0, 19).reshape(width), c(0, 18).reshape(width)), (c(0, 21).reshape(width), c(0, 20).reshape(width)))
    eps, one = c(0, 13), np.float32(1)
    average = np.full(width, 1 / width, np.float32)  # a row mean as one matrix-vector product
    gelu = gelu_float_for(tokens * 4 * width)  # the GELU our kernel computes, in its ~16 NumPy calls

    def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
        d = x - np.dot(x, average)[:, None]
        var = np.dot(np.multiply(d, d), average)
        var += eps
        np.sqrt(var, out=var)
        np.divide(one, var, out=var)
        d *= var[:, None]
        d *= gamma
        d += beta
        return d

    def run(x: np.ndarray) -> np.ndarray:
        x = x.reshape(tokens, width)
        qkv = np.dot(x, w_qkv)
        qkv += b_qkv
        heads_view = qkv.reshape(tokens, 3, heads, depth)
        q, k, v = (heads_view[:, i].transpose(1, 0, 2) for i in range(3))
        scores = np.matmul(q, k.transpose(0, 2, 1))
        scores -= np.maximum.reduce(scores, axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= np.add.reduce(scores, axis=-1, keepdims=True)
        context = np.matmul(scores, v).transpose(1, 0, 2).reshape(tokens, width)
        attended = np.dot(context, w_out)
        attended += b_out
        attended += x
        h = layer_norm(attended, *norms[0])
        up = np.dot(h, w_up)
        up += b_up
        down = np.dot(gelu(up), w_down)
        down += b_down
        down += h
        return layer_norm(down, *norms[1]).reshape(1, tokens, width)

    return run


class _FusedRunner:
    """The fused network behind the interpreter methods the timing helpers call."""

    def __init__(self, fn, x: np.ndarray):
        self.fn, self.x = fn, x

    def allocate_tensors(self) -> None:
        pass

    def get_input_details(self) -> list:
        return []  # the input is bound at construction

    def invoke(self) -> None:
        self.fn(self.x)


NETWORKS = {"lstm_gru_float": lstm_gru_network, "transformer_block_float": transformer_network}


def _agreement(fused, builtin, x: np.ndarray) -> float:
    """Max |fused - LiteRT| over the max |LiteRT output|."""
    builtin.allocate_tensors()
    builtin.set_tensor(builtin.get_input_details()[0]["index"], x)
    builtin.invoke()
    expected = builtin.get_tensor(builtin.get_output_details()[0]["index"])
    return float(np.max(np.abs(fused(x) - expected)) / np.max(np.abs(expected)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds of timed runs per measurement")
    parser.add_argument("--only", nargs="*", choices=sorted(NETWORKS), help="models to measure (default: all)")
    args = parser.parse_args(argv)
    names = ("accelsim interpreter", "hand-fused NumPy (floor)", "LiteRT builtin")
    print(f"{'model':<24} {'implementation':<26} {'ms':>8} {'/ ref':>7}")
    for model_name in args.only or NETWORKS:
        path = FIXTURES / f"{model_name}.tflite"
        ours = Interpreter(model_path=str(path))
        builtin = litert(path, "BUILTIN_WITHOUT_DEFAULT_DELEGATES")
        (x,) = _inputs(ours.get_input_details())
        fused = NETWORKS[model_name](path)
        error = _agreement(fused, builtin, x)
        if error > 1e-5:
            print(f"{model_name}: the fused network disagrees with LiteRT by {error:.2e} of the output's max")
            return 1
        # Alternating rounds, as benchmarks/interpreter.py: the machine's drift hits every side alike.
        measured = time_side_by_side([ours, _FusedRunner(fused, x), builtin], [x], runs=200, warmup=20,
                                     min_time=args.min_time)
        times = dict(zip(names, measured))
        ref = _ref_in_subprocess(path, runs=200, warmup=20, min_time=args.min_time)
        if ref is not None:
            times["LiteRT BUILTIN_REF"] = ref
        for name, seconds in times.items():
            ratio = f"{seconds / ref:7.2f}" if ref else "      -"
            print(f"{model_name:<24} {name:<26} {seconds * 1e3:8.3f} {ratio}")
        print(f"{model_name:<24} (the fused network agrees with LiteRT within {error:.1e} of the output's max)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
