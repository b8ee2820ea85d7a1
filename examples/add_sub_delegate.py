"""TFLite's custom-delegate example: a delegate that runs float32 ADD and SUB with its own code.

This is "Implementing a Custom Delegate" (tflite/g3doc/performance/implementing_delegate.md)
on accelsim's SimpleDelegate API: `MyDelegate` claims ADD and SUB nodes whose inputs are
float32, and `MyDelegateKernel` computes each claimed partition with NumPy. Where the
documented kernel merely assumes no fused activation and no broadcasting, this one says so
in `is_node_supported`, so a delegated model gives exactly the results of the CPU kernels.

Usage:
    python examples/add_sub_delegate.py [MODEL]

Without MODEL it builds a five-node model (ADD, SUB, MUL, ADD, SUB on [2, 3] tensors),
runs it with and without the delegate, prints the partitions and checks the outputs are
identical. Expected output without MODEL:

    INFO: MyDelegate delegate: 4 nodes delegated out of 5 nodes with 2 partitions.
    INFO: Replacing 4 out of 5 node(s) with delegate (MyDelegate) node, yielding 3 partitions for subgraph 0 (main).
    model: 5 nodes (ADD, SUB, MUL, ADD, SUB)
    execution plan: DELEGATE, MUL, DELEGATE
    partition 0: delegate node 5 runs nodes [0, 1]; inputs [0, 1], outputs [3]
    partition 1: delegate node 6 runs nodes [3, 4]; inputs [0, 4, 5], outputs [7]
    node 2 (MUL) stays on the CPU: op MUL unsupported (MyDelegate runs only ADD and SUB)
    outputs identical with and without the delegate: True
"""

from __future__ import annotations

import logging
import sys

import numpy as np

from accelsim.delegates import SimpleDelegate, SimpleDelegateKernel, delegation_report, get_node_and_registration
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator
from accelsim.runtime.quant import activation_name
from accelsim.runtime.read import load_model

SUPPORTED_OPS = ("ADD", "SUB")


class MyDelegateKernel(SimpleDelegateKernel):
    """Runs one partition of ADD/SUB nodes in the order the partition lists them."""

    def init(self, context, params) -> None:
        # Remember each node's op and tensors, as the documented kernel's Init does.
        self.steps = []
        for index in params.nodes_to_replace:
            node, _ = get_node_and_registration(context, index)
            self.steps.append((node.operator.op, node.inputs[0], node.inputs[1], node.outputs[0]))

    def eval(self, context, node) -> None:
        for op, a, b, out in self.steps:
            x, y = context.tensor(a).data, context.tensor(b).data
            context.tensor(out).data = np.add(x, y) if op == "ADD" else np.subtract(x, y)


class MyDelegate(SimpleDelegate):
    """Claims float32 ADD and SUB nodes without broadcasting or fused activation."""

    def name(self) -> str:
        return "MyDelegate"

    def is_node_supported(self, context, node, registration):
        if node.op not in SUPPORTED_OPS:
            return False, f"op {node.op_name} unsupported (MyDelegate runs only ADD and SUB)"
        for t in (*node.inputs, *node.outputs):
            if t.type != "FLOAT32":
                return False, f"dtype {t.type} of tensor {t.index} unsupported (float32 only)"
        if node.inputs[0].shape != node.inputs[1].shape:
            return False, (f"shape constraint: inputs {list(node.inputs[0].shape)} and "
                           f"{list(node.inputs[1].shape)} would broadcast")
        activation = activation_name(node.options.fused_activation_function)
        if activation != "NONE":
            return False, f"fused activation {activation} unsupported"
        return True

    def create_kernel(self) -> MyDelegateKernel:
        return MyDelegateKernel()


def demo_model() -> Model:
    """y = (((x + w) - w) * x + c) - x on [2, 3] float32 tensors; the MUL splits the ADD/SUB runs."""
    f32 = "FLOAT32"
    shape = (2, 3)
    c = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(shape)
    tensors = (
        Tensor("x", f32, shape), Tensor("w", f32, shape), Tensor("sum", f32, shape),
        Tensor("diff", f32, shape), Tensor("prod", f32, shape), Tensor("c", f32, shape, buffer=1),
        Tensor("shifted", f32, shape), Tensor("y", f32, shape),
    )
    ops = (
        make_operator("ADD", (0, 1), (2,)),
        make_operator("SUB", (2, 1), (3,)),
        make_operator("MUL", (3, 0), (4,)),
        make_operator("ADD", (4, 5), (6,)),
        make_operator("SUB", (6, 0), (7,)),
    )
    return Model((Subgraph(tensors, (0, 1), (7,), ops, "main"),), (b"", c.tobytes()))


def seeded_inputs(interpreter: Interpreter, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for d in interpreter.get_input_details():
        dtype, shape = np.dtype(d["dtype"]), tuple(int(s) for s in d["shape"])
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        else:
            out.append(rng.integers(-100, 100, shape).astype(dtype))
    return out


def run(interpreter: Interpreter, inputs: list[np.ndarray]) -> list[np.ndarray]:
    interpreter.allocate_tensors()
    for d, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def compare(model: Model, op_resolver=None) -> tuple[Interpreter, bool]:
    """Run `model` with and without MyDelegate; the delegated interpreter and whether outputs are equal."""
    plain = Interpreter(model=model, op_resolver=op_resolver)
    delegated = Interpreter(model=model, op_resolver=op_resolver, experimental_delegates=[MyDelegate()])
    inputs = seeded_inputs(plain)
    ref, got = run(plain, inputs), run(delegated, inputs)
    same = all(a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f") for a, b in zip(ref, got))
    return delegated, same


def describe(interpreter: Interpreter) -> list[str]:
    """What the delegate took: the plan, each partition, and why other nodes stayed on the CPU."""
    graph = interpreter.primary
    lines = [f"model: {len(graph.ir.operators)} nodes ({', '.join(op.display_name for op in graph.ir.operators)})",
             f"execution plan: {', '.join(graph.nodes[i].op_name for i in graph.execution_plan)}"]
    for i in graph.execution_plan:
        node = graph.nodes[i]
        if node.delegate is not None:
            p = node.params
            lines.append(f"partition {p.partition}: delegate node {node.index} runs nodes {list(p.nodes_to_replace)}; "
                         f"inputs {list(p.input_tensors)}, outputs {list(p.output_tensors)}")
    for row in delegation_report(interpreter):
        if not row["claimed"]:
            lines.append(f"node {row['index']} ({row['op']}) stays on the CPU: {row['reasons'].get('MyDelegate')}")
    return lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, format="INFO: %(message)s", stream=sys.stdout)
    model = load_model(args[0]) if args else demo_model()
    delegated, same = compare(model)
    for line in describe(delegated):
        print(line)
    print(f"outputs identical with and without the delegate: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
