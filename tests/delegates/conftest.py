"""Shared fixtures for delegate tests: a resolver for float ADD/SUB/MUL and a graph-to-model builder.

ADD/SUB/MUL come from the builtin kernels when they are registered there; otherwise
(while those kernels are being written) from tiny float32 stand-ins, so partitioning
tests do not depend on them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator
from accelsim.runtime.resolver import BuiltinOpResolver, MutableOpResolver, Registration

SHAPE = (2, 3)
BINARY = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}


def _standin(fn):
    def prepare(ctx, node):
        ctx.resize_tensor(ctx.output(node, 0), np.broadcast_shapes(ctx.input(node, 0).shape, ctx.input(node, 1).shape))

    def invoke(ctx, node):
        ctx.output(node, 0).data = fn(ctx.input(node, 0).data, ctx.input(node, 1).data).astype(np.float32)

    return Registration(invoke=invoke, prepare=prepare)


def float_resolver() -> MutableOpResolver:
    """Every builtin kernel, plus stand-ins for whichever of ADD/SUB/MUL v1 is not there yet."""
    resolver = BuiltinOpResolver()
    for op, fn in BINARY.items():
        if resolver.find_op(op, 1) is None:
            resolver.add_builtin(op, _standin(fn), 1, 1)
    return resolver


def build_model(ops: Sequence[tuple[str, Sequence[int], int]], num_inputs: int, outputs: Sequence[int],
                constants: dict[int, np.ndarray] | None = None, name: str = "main") -> Model:
    """A float32 model from (op, input tensors, output tensor) triples; every tensor is SHAPE.

    Tensors 0..num_inputs-1 are graph inputs, `constants` maps further indices to data, and
    each op's output index is its own tensor.
    """
    constants = constants or {}
    count = 1 + max([num_inputs - 1, *constants, *(o for _, _, o in ops), *(i for _, ins, _ in ops for i in ins)])
    buffers: list[bytes] = [b""]
    tensors = []
    for t in range(count):
        buf = 0
        if t in constants:
            buffers.append(np.asarray(constants[t], dtype=np.float32).reshape(SHAPE).tobytes())
            buf = len(buffers) - 1
        tensors.append(Tensor(f"t{t}", "FLOAT32", SHAPE, buf))
    operators = tuple(make_operator(op, tuple(ins), (out,)) for op, ins, out in ops)
    sg = Subgraph(tuple(tensors), tuple(range(num_inputs)), tuple(outputs), operators, name)
    return Model((sg,), tuple(buffers))


def run_interpreter(interpreter, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    interpreter.allocate_tensors()
    for d, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


@pytest.fixture(scope="session")
def resolver_factory():
    return float_resolver


@pytest.fixture(scope="session")
def model_builder():
    return build_model


@pytest.fixture(scope="session")
def runner():
    return run_interpreter
