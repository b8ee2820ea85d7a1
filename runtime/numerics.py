"""Numerics profiles: the arithmetic a node runs with, as a value its kernel reads at prepare.

The default, `LITERT_X86`, is the oracle's: each kernel requantizes the way LiteRT's builtin kernels
do on x86 (ruy's double half-up rounding in the GEMMs, NEON_2_SSE vector blocks with a scalar
MultiplyByQuantizedMultiplier tail in depthwise, the reference rounding where LiteRT falls back to
reference kernels; see kernels/conv_stage.py). A simulated accelerator asks for another profile for
the nodes it runs (`Context.set_numerics`) before their prepare; it never edits a kernel's state.

- ``rounding``: how CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED requantize their int32
  accumulators (x * q * 2**(shift - 31), rounded once): ``litert`` (the kernel's own, as above) or
  one of `ROUNDINGS`. Other ops keep TFLite's arithmetic.
- ``compute``: ``native``, or ``float16``: the node's float32 non-constant inputs and outputs are
  rounded to float16 around its kernel (a device that stores activations in half precision and
  accumulates in float32), and `Context.set_numerics` holds the float32 constants only these nodes
  read in float16.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def _split(x, multiplier, shift):
    product = np.asarray(x, dtype=np.int64) * np.asarray(multiplier, dtype=np.int64)
    total = 31 - np.asarray(shift, dtype=np.int64)
    return product, total


def round_half_away(x, multiplier, shift):
    """x * q * 2**(shift - 31), halves away from zero (std::round)."""
    product, total = _split(x, multiplier, shift)
    magnitude = (np.abs(product) + (np.int64(1) << (total - 1))) >> total
    return np.where(product < 0, -magnitude, magnitude)


def round_half_up(x, multiplier, shift):
    """x * q * 2**(shift - 31), halves toward +inf."""
    product, total = _split(x, multiplier, shift)
    return (product + (np.int64(1) << (total - 1))) >> total


def round_half_even(x, multiplier, shift):
    """x * q * 2**(shift - 31), halves to the even neighbour (IEEE's default)."""
    product, total = _split(x, multiplier, shift)
    floor = product >> total
    remainder = product - (floor << total)
    half = np.int64(1) << (total - 1)
    return floor + ((remainder > half) | ((remainder == half) & (floor % 2 == 1)))


def round_truncate(x, multiplier, shift):
    """x * q * 2**(shift - 31), toward zero."""
    product, total = _split(x, multiplier, shift)
    magnitude = np.abs(product) >> total
    return np.where(product < 0, -magnitude, magnitude)


# Declared requantization roundings an accelerator may ask for, by the name its YAML uses.
ROUNDINGS: dict[str, Callable] = {
    "half_away_from_zero": round_half_away,
    "half_up": round_half_up,
    "half_even": round_half_even,
    "truncate": round_truncate,
}
COMPUTES = ("native", "float16")


@dataclass(frozen=True)
class NumericsProfile:
    """The arithmetic a node runs with (see the module docstring); the default is LiteRT's on x86.

    Raises:
        ValueError: an unknown rounding or compute, naming the valid choices.
    """

    rounding: str = "litert"
    compute: str = "native"

    def __post_init__(self) -> None:
        if self.rounding != "litert" and self.rounding not in ROUNDINGS:
            raise ValueError(f"numerics rounding must be 'litert' or one of {list(ROUNDINGS)}, got {self.rounding!r}")
        if self.compute not in COMPUTES:
            raise ValueError(f"numerics compute must be one of {list(COMPUTES)}, got {self.compute!r}")

    def requant_rounding(self, litert: Callable) -> Callable:
        """The requantization rounding a GEMM-family kernel uses: `litert` (its own) unless declared."""
        return litert if self.rounding == "litert" else ROUNDINGS[self.rounding]

    @property
    def half(self) -> bool:
        """Whether float tensors are held in float16."""
        return self.compute == "float16"


LITERT_X86 = NumericsProfile()


def to_half(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to float16 precision (kept float32)."""
    return values.astype(np.float16).astype(np.float32)


def invoker(invoke: Callable, profile: NumericsProfile) -> Callable:
    """`invoke(context, node)` as it runs under `profile`: itself, or wrapped in float16 rounding."""
    if not profile.half:
        return invoke

    def invoke_half(context, node) -> None:
        # The device reads float16 copies; the host's tensors keep their float32 values.
        originals = _round_to_half(context, node.inputs)
        invoke(context, node)
        for tensor, data in originals:
            tensor.data = data
        _round_to_half(context, node.outputs)

    return invoke_half


def _round_to_half(context, indices) -> list[tuple]:
    """Round the float32, non-constant tensors among `indices` to float16 precision; return their old data."""
    originals = []
    for t in indices:
        tensor = context.tensor(t) if t >= 0 else None
        if tensor is None or tensor.type != "FLOAT32" or tensor.data is None or tensor.is_constant:
            continue
        originals.append((tensor, tensor.data))
        tensor.data = to_half(tensor.data)
    return originals
