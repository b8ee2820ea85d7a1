"""ScaledGemm: a small pointwise quantized CONV_2D as one float64 GEMM with the output stage folded in.

Implements `reference.conv2d` (through `stage.Requantizer`); tests/runtime/test_references.py checks it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime.kernels.common import fast_clip
from accelsim.runtime.kernels.conv.stage import ExactStage, Requantizer


@dataclass(frozen=True)
class ScaledGemm:
    """A small pointwise quantized conv's GEMM with ExactStage's float form folded in: GEMM, cast, clamp, cast.

    ExactStage computes floor(acc * m + offset) with m = q / 2**(31+r) per channel. Here m scales
    the weights' columns instead, and the GEMM runs in float64: every product x * w * q / 2**(31+r)
    and every partial sum is an integer multiple of 2**-(31+r), fewer than 2**53 of them under the
    bounds Requantizer.exact_stage checks (max|x| * sum|w| per channel), so the sums are exact in any
    order. That saves the float32 -> float64 cast and the multiply after the GEMM, at the price of
    a float64 GEMM (about twice a float32 one). The lift is a multiple of 256 (or 0 for uint8),
    so that the clamped integers, cast to the output type, wrap to the output itself; their
    truncating cast from float64 floors on the clamp's range (lo >= 0), as in ExactStage.

    The input (its own im2col matrix) is copied into a plan-owned [pixels, depth + 1] buffer whose
    last column holds ones, and the offset rides in the GEMM as one more weight row (exact under
    the same bounds, which include |offset|): that saves the addition's pass and a few calls for
    the cost of a strided copy.
    """

    stage: ExactStage  # the output stage this replaces
    weights: np.ndarray  # [cin + 1, out] float64: each column times its channel's m, then the offset row
    buffer: np.ndarray  # the GEMM's [pixels, cin + 1] input (plan-owned), last column ones
    lo: int
    hi: int
    cast: np.dtype  # int16 where the lifted values provably fit it (a cheaper clamp), else int32
    dtype: np.dtype

    @classmethod
    def of(cls, requant: Requantizer, stage: ExactStage, weights: np.ndarray, bias: np.ndarray | None,
           bounds: np.ndarray, pixels: int) -> ScaledGemm | None:
        """The scaled GEMM for `stage` (built from the same bias and bounds); None where not exact."""
        lift = 256 if requant.dtype == np.int8 else 0
        lifted = requant.exact_stage(bias, bounds, pixels, lift=lift)
        if lifted is None or lifted.shift is not None:
            return None
        depth, channels = weights.shape
        # The offset rides in the GEMM as the last weight row, against the buffer's column of ones.
        scaled = np.concatenate([weights * lifted.multiplier[:channels], lifted.offset[None, :channels]])
        # |acc * m + offset| is below y_bound < 2**22 (numerators < 2**53, shifts >= 31): int32 always holds it.
        cast = np.dtype(np.int16 if lifted.narrow else np.int32)
        return cls(stage, scaled, np.ones((pixels, depth + 1)), lifted.lo, lifted.hi, cast, np.dtype(requant.dtype))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Output integers [pixels, out] of a pointwise conv's raw input [batch, h, w, cin]."""
        np.copyto(self.buffer[:, :-1], x.reshape(self.buffer.shape[0], -1))
        k = np.dot(self.buffer, self.weights).astype(self.cast)
        fast_clip(k, self.lo, self.hi, out=k)
        return k.astype(self.dtype)
