"""Custom operator example: y = atan(x + offset) with a user-registered `Atan` kernel.

TFLite's custom-operator guide, in accelsim: the model holds a builtin ADD and a
CUSTOM op named "Atan". The builtin resolver does not know "Atan", so the
interpreter fails with TFLite's message; registering a kernel with init / free /
prepare / invoke hooks makes it run, and its `work` hook tells the cost models
what one node does (without it, simulating the model is an error naming the node).

Usage:
    python examples/custom_op_atan.py                    # builds the model with accelsim's writer
    python examples/custom_op_atan.py tests/fixtures/models/atan_custom.tflite   # TensorFlow-converted

The file is also an op module: its `register(resolver)` adds the kernel, so the command line can load it:
    accelsim benchmark tests/fixtures/models/atan_custom.tflite --ops examples/custom_op_atan.py

Expected output (for the built model):
    without the kernel: Encountered unresolved custom op: Atan.
    x      = [-2.  -1.   0.   1.5]
    y      = [-0.7853982  0.         0.7853982  1.19029  ]
    numpy  = [-0.7853982  0.         0.7853982  1.19029  ]
    max |y - numpy| = 0.0
    work: elementwise, 4 elements x 12 ops = 48, 32 bytes moved
"""

from __future__ import annotations

import sys

import numpy as np

from accelsim.runtime import BuiltinOpResolver, Interpreter, OpResolutionError, Registration, load_model
from accelsim.runtime.custom import decode_options, encode_options
from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator
from accelsim.runtime.kernels.common import check
from accelsim.runtime.work import NodeWork, measured, node_work
from accelsim.runtime.write import save_model

# Vector ops per element of a float32 arctangent: range reduction (a compare, a divide, a select)
# and a degree-9 odd polynomial by Horner's rule (x*x, then 4 multiply-adds counted as 2 ops each):
# an estimate of how vectorized math libraries evaluate it, not a measurement.
ATAN_OPS_PER_ELEMENT = 12


def _atan_init(context, buffer: bytes | None) -> dict:
    # Called once per node with the op's custom options (a FlexBuffer map); the result is user_data.
    return decode_options(buffer)


def _atan_prepare(context, node) -> None:
    x = context.input(node, 0)
    check(x is not None and x.type == "FLOAT32", "Atan takes one float32 input")
    context.resize_tensor(context.output(node, 0), x.shape)


def _atan_invoke(context, node) -> None:
    context.output(node, 0).data = np.arctan(context.input(node, 0).data).astype(np.float32)


def _atan_work(context, node) -> NodeWork:
    # From shapes only: one output element costs ATAN_OPS_PER_ELEMENT vector-lane ops.
    elements = int(np.prod(context.output(node, 0).shape))
    return measured(context, node, "elementwise", elements * ATAN_OPS_PER_ELEMENT)


ATAN = Registration(init=_atan_init, prepare=_atan_prepare, invoke=_atan_invoke, work=_atan_work)


def register(resolver) -> None:
    """Add the Atan kernel (version 1): what `--ops examples/custom_op_atan.py` calls."""
    resolver.add_custom("Atan", ATAN, min_version=1, max_version=1)


def atan_resolver() -> BuiltinOpResolver:
    """The builtin resolver plus the Atan kernel (version 1)."""
    resolver = BuiltinOpResolver()
    register(resolver)
    return resolver


def build_model(offset: float = 1.0, size: int = 4) -> bytes:
    """A two-op model: ADD(x, offset) -> CUSTOM 'Atan', written with accelsim's own writer."""
    tensors = (
        Tensor("x", "FLOAT32", (1, size)),
        Tensor("offset", "FLOAT32", (), buffer=1),
        Tensor("x_plus_offset", "FLOAT32", (1, size)),
        Tensor("y", "FLOAT32", (1, size)),
    )
    ops = (
        make_operator("ADD", [0, 1], [2]),
        make_operator("CUSTOM", [2], [3], custom_code="Atan", custom_options=encode_options({"T": 0})),
    )
    buffers = (b"", np.float32(offset).tobytes())
    return save_model(Model((Subgraph(tensors, (0,), (3,), ops, "main"),), buffers))


def main(argv: list[str]) -> int:
    model = load_model(argv[0]) if argv else load_model(build_model())
    try:
        Interpreter(model=model).allocate_tensors()
    except OpResolutionError as exc:
        print("without the kernel:", str(exc).splitlines()[0])
    interpreter = Interpreter(model=model, op_resolver=atan_resolver())
    interpreter.allocate_tensors()
    inp = interpreter.get_input_details()[0]
    x = np.resize(np.array([-2.0, -1.0, 0.0, 1.5], dtype=np.float32), inp["shape"])
    interpreter.set_tensor(inp["index"], x)
    interpreter.invoke()
    y = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    offset = 1.0
    expected = np.arctan(x + offset).astype(np.float32)
    np.set_printoptions(precision=7)
    print("x      =", x.reshape(-1))
    print("y      =", y.reshape(-1))
    print("numpy  =", expected.reshape(-1))
    print("max |y - numpy| =", float(np.max(np.abs(y - expected))))
    atan_node = interpreter.primary.nodes[1]
    work = node_work(interpreter.primary.context, atan_node)
    print(f"work: {work.kind}, {work.elements} elements x {ATAN_OPS_PER_ELEMENT} ops = {work.macs}, "
          f"{work.bytes_moved} bytes moved")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
