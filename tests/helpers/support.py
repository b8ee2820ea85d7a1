"""Shared test helpers: single-op models built with our writer, and LiteRT as the oracle."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model, Quantization, Subgraph, Tensor, make_operator, numpy_dtype, tensor_type_for_dtype
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
# Fixtures with custom ops LiteRT's wheel lacks, each with the op module that holds their kernels.
CUSTOM_OP_FIXTURES = {
    "atan_custom": str(Path(__file__).resolve().parents[2] / "examples" / "custom_op_atan.py"),
    "selfie_like_float": "accelsim.ops.mediapipe",
}


@dataclass
class Spec:
    """A tensor of a test model: a graph input (data None) or a constant (data given)."""

    shape: tuple[int, ...]
    type: str = "FLOAT32"
    data: np.ndarray | None = None
    scale: float | tuple[float, ...] | None = None
    zero_point: int | tuple[int, ...] | None = None
    quantized_dimension: int = 0
    name: str | None = None
    shape_signature: tuple[int, ...] | None = None


def const(data, type: str | None = None, **kw) -> Spec:
    arr = np.asarray(data)
    type = type or tensor_type_for_dtype(arr.dtype)
    return Spec(tuple(arr.shape), type, arr, **kw)


def _quant(spec: Spec) -> Quantization | None:
    if spec.scale is None:
        return None
    scales = tuple(np.atleast_1d(spec.scale).astype(float).tolist())
    zps = spec.zero_point if spec.zero_point is not None else 0
    zps = tuple(int(z) for z in np.broadcast_to(np.atleast_1d(zps), (len(scales),)))
    return Quantization(scales, zps, spec.quantized_dimension)


def single_op_model(op: str, inputs: list[Spec | None], outputs: list[Spec], *, version: int = 1,
                    custom_code: str | None = None, custom_options: bytes | None = None,
                    **options) -> bytes:
    """A one-operator .tflite model; `None` inputs are omitted optional inputs (-1)."""
    return save_model(single_op_ir(op, inputs, outputs, version=version, custom_code=custom_code,
                                   custom_options=custom_options, **options))


def single_op_ir(op: str, inputs: list[Spec | None], outputs: list[Spec], *, version: int = 1,
                 custom_code: str | None = None, custom_options: bytes | None = None, **options) -> Model:
    """The same one-operator model as IR, for tests that must bypass the file loader's checks."""
    tensors: list[Tensor] = []
    buffers: list[bytes] = [b""]
    op_inputs: list[int] = []
    graph_inputs: list[int] = []
    for i, spec in enumerate(inputs):
        if spec is None:
            op_inputs.append(-1)
            continue
        buf = 0
        if spec.data is not None:
            from accelsim.runtime.ir import numpy_dtype

            buffers.append(np.ascontiguousarray(spec.data, dtype=numpy_dtype(spec.type)).tobytes())
            buf = len(buffers) - 1
        else:
            graph_inputs.append(len(tensors))
        op_inputs.append(len(tensors))
        tensors.append(Tensor(spec.name or f"input_{i}", spec.type, tuple(spec.shape), buf, _quant(spec),
                              spec.shape_signature))
    op_outputs = []
    for i, spec in enumerate(outputs):
        op_outputs.append(len(tensors))
        tensors.append(Tensor(spec.name or f"output_{i}", spec.type, tuple(spec.shape), 0, _quant(spec)))
    operator = make_operator(op, op_inputs, op_outputs, version=version, custom_code=custom_code,
                             custom_options=custom_options, **options)
    sg = Subgraph(tuple(tensors), tuple(graph_inputs), tuple(op_outputs), (operator,), "main")
    return Model((sg,), tuple(buffers))


def random_inputs(details: list[dict], seed: int = 0) -> list[np.ndarray]:
    """Seeded inputs matching each input's dtype and shape (full range for integer types)."""
    rng = np.random.default_rng(seed)
    out = []
    for d in details:
        dtype = np.dtype(d["dtype"])
        shape = tuple(int(x) for x in d["shape"])
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        elif dtype == np.bool_:
            out.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -1000), min(info.max, 1000)
            out.append(rng.integers(lo, hi, shape, endpoint=True).astype(dtype))
    return out


def _feed_and_invoke(it, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Resize the inputs that differ, set them, invoke, and read the outputs (LiteRT's API, ours or LiteRT's)."""
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        if tuple(d["shape"]) != x.shape:
            it.resize_tensor_input(d["index"], x.shape)
            it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def run_litert(model: bytes, inputs: list[np.ndarray], preserve_all_tensors: bool = False) -> list[np.ndarray]:
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from ai_edge_litert.interpreter import OpResolverType

    it = LiteRT(model_content=model, num_threads=1,
                experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                experimental_preserve_all_tensors=preserve_all_tensors)
    return _feed_and_invoke(it, inputs)


def run_ours(model: bytes, inputs: list[np.ndarray], **kwargs) -> list[np.ndarray]:
    it = Interpreter(model_content=model, **kwargs)
    return _feed_and_invoke(it, inputs)


def assert_close_to_reference(ours: list[np.ndarray], ref: list[np.ndarray], rtol: float = 1e-5,
                              atol: float = 0.0) -> None:
    """Integer outputs identical; float outputs within rtol of the output's max magnitude, or within atol
    (for a result that cancels: a bound derived from the inputs' magnitude, which rtol of a tiny output is not)."""
    assert len(ours) == len(ref), f"{len(ours)} outputs vs LiteRT's {len(ref)}"
    for i, (a, b) in enumerate(zip(ours, ref)):
        assert a.shape == b.shape, f"output {i}: shape {a.shape} vs LiteRT {b.shape}"
        assert a.dtype == b.dtype, f"output {i}: dtype {a.dtype} vs LiteRT {b.dtype}"
        if a.dtype.kind in "iub":
            diff = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
            assert diff.size == 0, (
                f"output {i}: {diff.size}/{a.size} elements differ; first at flat index {diff[0]}: "
                f"ours {a.reshape(-1)[diff[0]]} vs LiteRT {b.reshape(-1)[diff[0]]}"
            )
        else:
            assert np.array_equal(np.isnan(a), np.isnan(b)), f"output {i}: NaN positions differ"
            assert np.array_equal(np.where(np.isinf(a), a, 0), np.where(np.isinf(b), b, 0)), (
                f"output {i}: infinities differ"
            )
            finite = np.isfinite(b)
            wide = np.complex128 if a.dtype.kind == "c" else np.float64
            a64, b64 = a[finite].astype(wide), b[finite].astype(wide)
            scale = float(np.max(np.abs(b64))) if b64.size else 0.0
            err = float(np.max(np.abs(a64 - b64))) if b64.size else 0.0
            assert err <= max(rtol * max(scale, 1e-30), atol), (
                f"output {i}: max abs error {err:.3g} exceeds {rtol} x max|ref| ({scale:.3g}) and {atol:.3g}"
            )


def check_against_litert(model: bytes, inputs: list[np.ndarray] | None = None, seed: int = 0,
                         rtol: float = 1e-5) -> list[np.ndarray]:
    """Run `model` on both interpreters with the same inputs and compare; returns our outputs."""
    if inputs is None:
        inputs = random_inputs(Interpreter(model_content=model).get_input_details(), seed)
    ref = run_litert(model, inputs)
    ours = run_ours(model, inputs)
    assert_close_to_reference(ours, ref, rtol)
    return ours


def _fixture_spec(model: Model, tensor_index: int) -> Spec:
    t = model.subgraphs[0].tensors[tensor_index]
    q = t.quantization
    quant = {}
    if q is not None and q.scales:
        quant = {"scale": q.scales, "zero_point": q.zero_points, "quantized_dimension": q.quantized_dimension}
    return Spec(t.shape, t.type, model.constant(0, tensor_index), **quant)


def node_as_model(model: Model, op) -> bytes:
    """One node of a converter model, alone, with its real tensors, quantization, options and version."""
    inputs = [_fixture_spec(model, i) if i >= 0 else None for i in op.inputs]
    outputs = [_fixture_spec(model, i) for i in op.outputs]
    options = dict(op.options) if op.options is not None else {}
    return single_op_model(op.op, inputs, outputs, version=op.version, **options)


def fixture_nodes(ops: set[str]) -> list:
    """pytest params (model, operator) for every main-subgraph node of `ops` in the fixture models."""
    import pytest

    params = []
    for path in sorted(FIXTURES.glob("*.tflite")):
        model = load_model(path.read_bytes())
        for index, op in enumerate(model.subgraphs[0].operators):
            if op.op in ops:
                params.append(pytest.param(model, op, id=f"{path.stem}-{index}-{op.op}-v{op.version}"))
    return params


# -- multi-subgraph models (control flow, variables) ---------------------------------------------


class Graph:
    """One subgraph under construction; constants go into the shared `buffers` list."""

    def __init__(self, buffers: list[bytes]):
        self.buffers = buffers
        self.tensors: list[Tensor] = []
        self.ops = []

    def tensor(self, shape=(), type: str = "FLOAT32") -> int:
        self.tensors.append(Tensor(f"t{len(self.tensors)}", type, tuple(shape)))
        return len(self.tensors) - 1

    def const(self, data) -> int:
        arr = np.asarray(data)
        self.buffers.append(arr.tobytes())
        self.tensors.append(Tensor(f"c{len(self.tensors)}", tensor_type_for_dtype(arr.dtype), arr.shape,
                                   len(self.buffers) - 1))
        return len(self.tensors) - 1

    def handle(self, shared_name: str, container: str | None = None) -> int:
        """A VAR_HANDLE op's resource tensor for the variable `shared_name`."""
        h = self.tensor((), "RESOURCE")
        self.op("VAR_HANDLE", [], [h], shared_name=shared_name, container=container)
        return h

    def op(self, name: str, inputs, outputs, **options) -> None:
        self.ops.append(make_operator(name, inputs, outputs, **options))

    def subgraph(self, inputs, outputs) -> Subgraph:
        return Subgraph(tuple(self.tensors), tuple(inputs), tuple(outputs), tuple(self.ops))


def build(*graphs: tuple[Graph, list[int], list[int]], ir: bool = False) -> bytes | Model:
    """A model of the given (graph, inputs, outputs) as .tflite bytes, or as the IR with `ir`.

    The IR skips the loader's checks (e.g. of subgraph indices), so kernels' own checks show.
    The graphs must share one buffers list.
    """
    buffers = graphs[0][0].buffers
    model = Model(tuple(g.subgraph(i, o) for g, i, o in graphs), tuple(buffers))
    return model if ir else save_model(model)


def counter_loop_model(start: int | None, limit, step: int = 1, compare: str = "LESS", x_shape=(2, 3)) -> bytes:
    """WHILE over (i, bound, x): cond `i compare bound`, body i += step, x = x * 1.5.

    `start` None makes i a model input (unknown before a run); `limit` "shape" makes the bound
    x's first dimension, read through SHAPE and STRIDED_SLICE; else the bound is a constant.
    """
    buffers: list[bytes] = [b""]
    main = Graph(buffers)
    x = main.tensor(x_shape)
    i = main.tensor((), "INT32") if start is None else main.const(np.int32(start))
    if limit == "shape":
        shape, bound = main.tensor((len(x_shape),), "INT32"), main.tensor((), "INT32")
        main.op("SHAPE", [x], [shape], out_type=2)
        one = np.array([1], np.int32)
        main.op("STRIDED_SLICE", [shape, main.const(np.array([0], np.int32)), main.const(one), main.const(one)],
                [bound], shrink_axis_mask=1)
    else:
        bound = main.const(np.int32(limit))
    outs = [main.tensor((), "INT32"), main.tensor((), "INT32"), main.tensor(x_shape)]
    main.op("WHILE", [i, bound, x], outs, cond_subgraph_index=1, body_subgraph_index=2)
    cond = Graph(buffers)
    c_in = [cond.tensor((), "INT32"), cond.tensor((), "INT32"), cond.tensor(x_shape)]
    flag = cond.tensor((), "BOOL")
    cond.op(compare, [c_in[0], c_in[1]], [flag])
    body = Graph(buffers)
    b_in = [body.tensor((), "INT32"), body.tensor((), "INT32"), body.tensor(x_shape)]
    i1, x1 = body.tensor((), "INT32"), body.tensor(x_shape)
    body.op("ADD", [b_in[0], body.const(np.int32(step))], [i1])
    body.op("MUL", [b_in[2], body.const(np.float32(1.5))], [x1])
    inputs = ([i] if start is None else []) + [x]
    return build((main, inputs, [outs[2]]), (cond, c_in, [flag]), (body, b_in, [i1, b_in[1], x1]))


def prepare_error(model: bytes | Model) -> str:
    """The KernelError message allocate_tensors() raises for `model` (fails the test if it raises none)."""
    import pytest

    from accelsim.runtime.errors import KernelError

    it = Interpreter(model=model) if isinstance(model, Model) else Interpreter(model_content=model)
    with pytest.raises(KernelError) as info:
        it.allocate_tensors()
    return str(info.value)


def with_dynamic_outputs(model: bytes) -> bytes:
    """The model with every output's shape signature unknown (-1), as a converter writes for shapes that
    depend on values."""
    m = load_model(model)
    sg = m.subgraphs[0]
    tensors = list(sg.tensors)
    for i in sg.outputs:
        tensors[i] = dataclasses.replace(tensors[i], shape_signature=(-1,) * len(tensors[i].shape))
    return save_model(dataclasses.replace(m, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),)))


def allocated_with_peak(model: bytes) -> tuple[Interpreter, int]:
    """An interpreter of `model` after allocate_tensors(), and the peak bytes allocated meanwhile (tracemalloc)."""
    import tracemalloc

    it = Interpreter(model_content=model)
    tracemalloc.start()
    try:
        it.allocate_tensors()
        return it, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def one_node_model(model: Model, sg: Subgraph, op) -> bytes:
    """One node of a model, alone, with its tensors exactly as stored (sparsity and all): the node's
    constant inputs keep their buffers, its other inputs become the graph's inputs."""
    tensors, buffers, remap = [], [b""], {}
    for ti in (*op.inputs, *op.outputs):
        if ti < 0 or ti in remap:
            continue
        t = sg.tensors[ti]
        data = model.buffer_bytes(t.buffer)
        buf = 0
        if len(data) and ti in op.inputs:
            buffers.append(bytes(data))
            buf = len(buffers) - 1
        remap[ti] = len(tensors)
        tensors.append(dataclasses.replace(t, buffer=buf))
    outs = tuple(remap[i] for i in op.outputs)
    graph_inputs = tuple(remap[i] for i in op.inputs if i >= 0 and tensors[remap[i]].buffer == 0)
    node = dataclasses.replace(op, inputs=tuple(remap.get(i, -1) for i in op.inputs), outputs=outs)
    return save_model(Model((Subgraph(tuple(tensors), graph_inputs, outs, (node,), "node"),), tuple(buffers)))


def fixture_node_models(path: Path, ops: set[str]) -> Iterator[bytes]:
    """Each `ops` node of every subgraph of the model at `path`, as a one-node model (one_node_model)."""
    model = load_model(path.read_bytes())
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.op in ops:
                yield one_node_model(model, sg, op)


def distinct_values(shape, typ: str, rng: np.random.Generator) -> np.ndarray:
    """Distinct-looking values of a tensor type: strings become b'<n>', integers stay within +-100."""
    n = int(np.prod(shape, dtype=np.int64))
    if typ == "STRING":
        return np.array([str(i).encode() for i in range(n)], dtype=object).reshape(shape)
    if typ == "BOOL":
        return (np.arange(n) % 3 == 0).reshape(shape)
    dtype = numpy_dtype(typ)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)
