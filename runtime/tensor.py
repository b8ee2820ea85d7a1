"""Tensors at run time and how their memory is handled; kernels import this, never the interpreter."""

from __future__ import annotations

import numpy as np

from accelsim.runtime.errors import KernelError
from accelsim.runtime.ir import Quantization, numpy_dtype

# How a tensor's memory is handled (TfLiteAllocationType, simplified).
CONSTANT = "constant"  # a read-only view of the model's buffer
ARENA = "arena"  # an intermediate: freed after its last consumer ran
PERSISTENT = "persistent"  # graph inputs/outputs and variables: kept across invokes
TEMPORARY = "temporary"  # a kernel's scratch tensor
PERSISTENT_RO = "persistent_ro"  # computed once by a prepare from constants (kTfLitePersistentRo)


class RuntimeTensor:
    """A tensor at run time: IR facts plus its current shape and data.

    `data` checks what a kernel writes (dtype, shape). `unchecked_data` is the same array written
    without the checks: the hand-over for a producer that built the tensor's exact dtype and shape by
    construction (an invoke plan checked at prepare, a constant's buffer, the arena freeing with None).
    It is a plain slot, not a method: a call per hand-over cost 12% of a small LSTM's invoke (measured).
    """

    __slots__ = (
        "index", "name", "type", "dtype", "shape", "shape_signature", "quantization",
        "allocation", "is_variable", "dynamic", "sparsity", "unchecked_data",
    )

    def __init__(self, index: int, name: str, type_name: str, shape: tuple[int, ...],
                 quantization: Quantization | None = None, shape_signature=None,
                 allocation: str = ARENA, is_variable: bool = False, sparsity=None):
        self.index = index
        self.name = name
        self.type = type_name
        self.dtype = numpy_dtype(type_name)
        self.shape = tuple(shape)
        self.shape_signature = tuple(shape_signature) if shape_signature is not None else tuple(shape)
        self.quantization = quantization
        self.allocation = allocation
        self.is_variable = is_variable
        self.dynamic = False
        self.sparsity = sparsity
        self.unchecked_data: np.ndarray | None = None

    @property
    def is_constant(self) -> bool:
        return self.allocation == CONSTANT

    @property
    def scale(self) -> float:
        """The per-tensor scale (0.0 when not quantized)."""
        q = self.quantization
        return float(q.scales[0]) if q is not None and q.scales else 0.0

    @property
    def zero_point(self) -> int:
        q = self.quantization
        return int(q.zero_points[0]) if q is not None and q.zero_points else 0

    @property
    def scales(self) -> np.ndarray:
        q = self.quantization
        return np.asarray(q.scales if q is not None else (), dtype=np.float64)

    @property
    def zero_points(self) -> np.ndarray:
        q = self.quantization
        return np.asarray(q.zero_points if q is not None else (), dtype=np.int64)

    @property
    def data(self) -> np.ndarray | None:
        return self.unchecked_data

    @data.setter
    def data(self, value: np.ndarray | None) -> None:
        if value is None:
            self.unchecked_data = None
            return
        if type(value) is not np.ndarray:
            value = np.asarray(value)
        if value.dtype != self.dtype:
            raise KernelError(
                f"tensor {self.index} ({self.name!r}) is {self.type} but a kernel wrote {value.dtype}"
            )
        if value.shape != self.shape:
            if not self.dynamic:
                raise KernelError(
                    f"tensor {self.index} ({self.name!r}) has shape {list(self.shape)} but a kernel "
                    f"wrote shape {list(value.shape)}"
                )
            self.shape = value.shape
        self.unchecked_data = value

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"RuntimeTensor({self.index}, {self.name!r}, {self.type}, {list(self.shape)})"
