"""How fast could any NumPy interpreter run the LSTM+GRU fixture? A hand-fused lower bound.

Usage:
    python benchmarks/recurrent_floor.py [--min-time S]

tests/fixtures/models/lstm_gru_float.tflite is a Keras LSTM(16) then GRU(12) over 10 steps, as
TensorFlow's converter emits them: two WHILE loops whose bodies hold 26 and 21 small ops (541 kernel
calls per invoke). This script reads the model's own weights and runs the same network with the fewest
NumPy calls we know: the input projections of all 10 steps hoisted into one GEMM per layer, every gate
of a step computed from one recurrent product, the sigmoids taken as tanh over whole gate blocks with
their scaling folded into the weights, nothing but arrays preallocated once: 12-13 NumPy calls per step.
No interpreter, no per-op dispatch, no shape checks: this is what graph-level fusion of both loops
(rewriting the WHILE loops into one fused recurrent kernel) would reach at best. It checks its
outputs against LiteRT's (builtin kernels) and prints its time next to ours, LiteRT builtin and
LiteRT's reference kernels (BUILTIN_REF), all single-threaded and measured in this run.

Prints one table; the last column is each time over BUILTIN_REF's.
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
sys.path.insert(0, str(ROOT))

from benchmarks.interpreter import _inputs, _ref_in_subprocess, litert, time_side_by_side  # noqa: E402
from runtime import Interpreter  # noqa: E402
from runtime.model import load_model  # noqa: E402

MODEL = ROOT / "tests" / "fixtures" / "models" / "lstm_gru_float.tflite"


class _Constants:
    """The model's constant tensors by (subgraph, tensor index), as float32 arrays."""

    def __init__(self, path: Path):
        self.model = load_model(path.read_bytes())

    def __call__(self, subgraph: int, tensor: int) -> np.ndarray:
        t = self.model.subgraphs[subgraph].tensors[tensor]
        return np.frombuffer(self.model.buffers[t.buffer], dtype=np.float32).reshape(t.shape)


def fused_network(path: Path):
    """A function x [1, 10, 8] -> logits [1, 4] computing the fixture with fused NumPy steps.

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds of timed runs per measurement")
    args = parser.parse_args(argv)

    ours = Interpreter(model_path=str(MODEL))
    builtin = litert(MODEL, "BUILTIN_WITHOUT_DEFAULT_DELEGATES")
    (x,) = _inputs(ours.get_input_details())
    fused = fused_network(MODEL)
    builtin.allocate_tensors()
    builtin.set_tensor(builtin.get_input_details()[0]["index"], x)
    builtin.invoke()
    expected = builtin.get_tensor(builtin.get_output_details()[0]["index"])
    got = fused(x)
    error = float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))
    if error > 1e-5:
        print(f"fused network disagrees with LiteRT: max error {error:.2e} of the output's magnitude")
        return 1

    names = ("accelsim interpreter", "hand-fused NumPy (floor)", "LiteRT builtin")
    # Alternating rounds, as benchmarks/interpreter.py: the machine's drift hits every side alike.
    measured = time_side_by_side([ours, _FusedRunner(fused, x), builtin], [x], runs=200, warmup=20,
                                 min_time=args.min_time)
    times = dict(zip(names, measured))
    ref = _ref_in_subprocess(MODEL, runs=200, warmup=20, min_time=args.min_time)
    if ref is not None:
        times["LiteRT BUILTIN_REF"] = ref
    print(f"model: {MODEL.name} (fused network agrees with LiteRT within {error:.1e} of the output's max)")
    print(f"{'implementation':<26} {'ms':>8} {'/ ref':>7}")
    for name, seconds in times.items():
        ratio = f"{seconds / ref:7.2f}" if ref else "      -"
        print(f"{name:<26} {seconds * 1e3:8.3f} {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
