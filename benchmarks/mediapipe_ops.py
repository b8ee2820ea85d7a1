"""Convolution2DTransposeBias (accelsim.ops.mediapipe) against LiteRT's TRANSPOSE_CONV + bias ADD, same run.

LiteRT's Python wheel has no kernel for MediaPipe's op, so its peer is the builtin pair that computes the
same outputs (tests/accelsim/test_mediapipe_ops.py checks that). Layers are upsampling stages of a
selfie-segmentation-sized decoder (2x2 kernel, stride 2, SAME). Each row: median wall time per invoke of
our fast path, our reference function (Interpreter(reference=True)) and LiteRT, and their ratios.

    python benchmarks/mediapipe_ops.py [--runs 20]
"""

from __future__ import annotations

import os

# Single-threaded like LiteRT's num_threads=1 (and the other benchmarks): a threaded BLAS on a loaded
# machine measures the scheduler, not the kernel.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from ai_edge_litert.interpreter import Interpreter as LiteRT  # noqa: E402
from ai_edge_litert.interpreter import OpResolverType  # noqa: E402

from accelsim.ops import using_ops  # noqa: E402
from accelsim.runtime import Interpreter  # noqa: E402
from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator  # noqa: E402
from accelsim.runtime.write import save_model  # noqa: E402

# (input height, width, channels, output channels): the decoder stages of a 256x144 selfie model
LAYERS = ((9, 16, 64, 32), (18, 32, 32, 24), (36, 64, 24, 16), (72, 128, 16, 8))


def _models(h: int, w: int, cin: int, cout: int, seed: int = 0) -> tuple[bytes, bytes]:
    """(the custom op, TRANSPOSE_CONV followed by ADD) with the same random weights and bias."""
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((cout, 2, 2, cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    x, out = (1, h, w, cin), (1, 2 * h, 2 * w, cout)
    custom = Model((Subgraph(
        (Tensor("x", "FLOAT32", x), Tensor("w", "FLOAT32", weights.shape, buffer=1),
         Tensor("b", "FLOAT32", bias.shape, buffer=2), Tensor("y", "FLOAT32", out)), (0,), (3,),
        (make_operator("CUSTOM", [0, 1, 2], [3], custom_code="Convolution2DTransposeBias",
                       custom_options=struct.pack("<3i", 1, 2, 2)),), "main"),),
        (b"", weights.tobytes(), bias.tobytes()))
    builtin = Model((Subgraph(
        (Tensor("x", "FLOAT32", x), Tensor("shape", "INT32", (4,), buffer=1),
         Tensor("w", "FLOAT32", weights.shape, buffer=2), Tensor("t", "FLOAT32", out),
         Tensor("b", "FLOAT32", bias.shape, buffer=3), Tensor("y", "FLOAT32", out)), (0,), (5,),
        (make_operator("TRANSPOSE_CONV", [1, 2, 0], [3], padding=0, stride_h=2, stride_w=2),
         make_operator("ADD", [3, 4], [5])), "main"),),
        (b"", np.array(out, np.int32).tobytes(), weights.tobytes(), bias.tobytes()))
    return save_model(custom), save_model(builtin)


def _median_us(invoke, runs: int) -> float:
    invoke()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        invoke()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _ours(model: bytes, x: np.ndarray, reference: bool):
    it = Interpreter(model_content=model, reference=reference)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    return it.invoke


def _litert(model: bytes, x: np.ndarray):
    it = LiteRT(model_content=model, num_threads=1,
                experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    return it.invoke


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(f"{'layer (in -> out)':<28}{'fast us':>10}{'ref us':>10}{'LiteRT us':>11}{'ref/fast':>10}{'fast/LiteRT':>13}")
    with using_ops(["accelsim.ops.mediapipe"]):
        for h, w, cin, cout in LAYERS:
            custom, builtin = _models(h, w, cin, cout)
            x = np.random.default_rng(1).standard_normal((1, h, w, cin)).astype(np.float32)
            fast = _median_us(_ours(custom, x, False), args.runs)
            ref = _median_us(_ours(custom, x, True), args.runs)
            peer = _median_us(_litert(builtin, x), args.runs)
            label = f"{h}x{w}x{cin} -> {2 * h}x{2 * w}x{cout}"
            print(f"{label:<28}{fast:>10.0f}{ref:>10.0f}{peer:>11.0f}{ref / fast:>10.2f}{fast / peer:>13.2f}")


if __name__ == "__main__":
    main()
