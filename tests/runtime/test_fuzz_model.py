"""Hostile model files: a damaged fixture loads or raises ModelError, and whatever loads runs or raises
an AccelsimError.

Mutations aim at the FlatBuffer's real structure (`accelsim.runtime.verify.layout` lists every table, vtable,
vector, string, offset and scalar field of a fixture): bit flips, truncation at object boundaries,
vtable entries, vector lengths, offsets, index and shape fields, spliced objects; and at the IR
(subgraph cycles, out-of-range indices, shapes, short buffers), written back with our writer.
Hypothesis runs derandomized, so CI sees the same cases every run; benchmarks/fuzz_models.py runs
the same kinds of mutation by the hundred thousand.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import resource
import struct
from unittest import mock

import flatbuffers
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support import FIXTURES

from accelsim.runtime import Interpreter
from accelsim.runtime.errors import AccelsimError, KernelError, ModelError
from accelsim.runtime.ir import Model, Quantization, Subgraph, Tensor, make_operator
from accelsim.runtime.kernels import control_flow
from accelsim.runtime.read import load_model
from accelsim.runtime.verify import layout, parse_schema, tflite_schema, verify_model
from accelsim.runtime.write import save_model

FIXTURE_FILES = sorted(FIXTURES.glob("*.tflite"))
# Fixtures cheap enough to run through the interpreter on every example.
SMALL = [p for p in FIXTURE_FILES if p.stat().st_size < 100_000]
# Tensors of a model that is invoked must fit in this (a damaged shape can ask for gigabytes).
MAX_INVOKE_BYTES = 16 << 20
# A WHILE whose condition never turns false loops forever, in TFLite too: such an invoke is stopped
# after this many condition checks (counted, not timed; the fixtures' loops run 10 and 20 trips).
WHILE_CHECKS = 1000
# While a damaged model runs, allocations beyond this much more address space raise MemoryError (no OOM kill).
MEMORY_HEADROOM = 4 << 30

FUZZ = settings(max_examples=600, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@functools.cache
def fixture(path) -> tuple[bytes, dict[str, list]]:
    """A fixture's bytes and its FlatBuffer regions grouped by kind ('table', 'vtable', ...)."""
    data = path.read_bytes()
    by_kind: dict[str, list] = {}
    for r in layout(data):
        by_kind.setdefault(r.kind, []).append(r)
        if r.kind != "vector" or r.size <= 64:  # the body of a weights vector is data, not structure
            by_kind.setdefault("structure", []).append(r)
    return data, by_kind


def load_or_refuse(data: bytes) -> Model | None:
    """The model, or None when load_model refused it with a ModelError that says something."""
    try:
        return load_model(data)
    except ModelError as exc:
        assert str(exc).startswith("<bytes>: ") and len(str(exc)) > 20, str(exc)
        return None


class _Stop(BaseException):
    """Raised by the loop limit; a BaseException, so that no kernel's `except Exception` can swallow it."""


@contextlib.contextmanager
def _loop_limit(checks: int):
    """Within the block, the WHILE kernel's condition check raises _Stop once it has run `checks` times."""
    holds = control_flow._cond_holds
    count = 0

    def counted(plan):
        nonlocal count
        count += 1
        if count > checks:
            raise _Stop
        return holds(plan)

    with mock.patch.object(control_flow, "_cond_holds", counted):
        yield


@contextlib.contextmanager
def address_space_limit(extra: int = MEMORY_HEADROOM):
    """Within the block, an allocation beyond the process's current size plus `extra` raises MemoryError."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _no_memory_blow_up(exc: AccelsimError) -> None:
    cause = exc.__cause__
    assert not isinstance(cause, MemoryError), f"a kernel tried to allocate more than the headroom: {exc}"


def run_or_raise_accelsim_error(model: Model) -> str:
    """Construct, allocate and invoke; only AccelsimError subclasses may stop it. Returns how far it got."""
    with address_space_limit():
        try:
            it = Interpreter(model=model)
            it.allocate_tensors()
        except AccelsimError as exc:
            _no_memory_blow_up(exc)
            return "refused"
        total = sum(t.nbytes for i in range(it.num_subgraphs()) for t in it.subgraph(i).tensors)
        if total > MAX_INVOKE_BYTES:
            return "too large to invoke"
        loops = any(op.op == "WHILE" for sg in model.subgraphs for op in sg.operators)
        try:
            with _loop_limit(WHILE_CHECKS) if loops else contextlib.nullcontext():
                it.invoke()
        except AccelsimError as exc:
            _no_memory_blow_up(exc)
            return "invoke failed"
        except _Stop:
            return "WHILE still looping"
    return "invoked"


# --- mutations (each draws where and what, so hypothesis can shrink them) --------------------------


def _region(draw, by_kind, *kinds):
    regions = [r for k in kinds for r in by_kind.get(k, ())] or by_kind["structure"]
    return draw(st.sampled_from(regions))


def _put(buf: bytearray, pos: int, fmt: str, value: int) -> None:
    size = struct.calcsize(fmt)
    if 0 <= pos <= len(buf) - size:
        struct.pack_into(fmt, buf, pos, value % (1 << (8 * size)) if fmt[-1].isupper() else value)


_U32 = st.one_of(st.sampled_from([0, 1, 2, 4, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]), st.integers(0, 2**32 - 1))
_I32_INDEX = st.one_of(st.sampled_from([-2, -1, 0, 1, 127, 128, 2**16, 2**31 - 1, -(2**31)]), st.integers(-3, 300))


def bit_flips(draw, data, by_kind):
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        r = _region(draw, by_kind, "structure")
        pos = min(r.pos + draw(st.integers(0, max(r.size - 1, 0))), len(buf) - 1)
        buf[pos] ^= 1 << draw(st.integers(0, 7))
    return buf


def truncation(draw, data, by_kind):
    r = _region(draw, by_kind, "table", "vtable", "vector", "string", "offset")
    return data[: r.pos + draw(st.sampled_from([0, 1, 2, 3, r.size - 1]))]


def vtable_entry(draw, data, by_kind):
    buf = bytearray(data)
    r = _region(draw, by_kind, "vtable")
    entry = r.pos + 2 * draw(st.integers(0, max(r.size // 2 - 1, 0)))
    _put(buf, entry, "<H", draw(st.one_of(st.sampled_from([0, 1, 3, r.size, 0xFFFF]), st.integers(0, 0xFFFF))))
    return buf


def vector_length(draw, data, by_kind):
    buf = bytearray(data)
    r = _region(draw, by_kind, "vector", "string")
    _put(buf, r.pos, "<I", draw(st.one_of(_U32, st.sampled_from([len(data), len(data) // 4 + 1]))))
    return buf


def offset(draw, data, by_kind):
    buf = bytearray(data)
    r = _region(draw, by_kind, "offset")
    _put(buf, r.pos, "<I", draw(st.one_of(_U32, st.sampled_from([len(data) - r.pos, len(data) - r.pos - 1]))))
    return buf


def soffset(draw, data, by_kind):
    buf = bytearray(data)
    r = _region(draw, by_kind, "table")
    _put(buf, r.pos, "<i", draw(st.one_of(st.sampled_from([0, 1, -1, r.pos, -len(data)]),
                                          st.integers(-(2**31), 2**31 - 1))))
    return buf


_INDEX_FIELDS = ("Operator.inputs", "Operator.outputs", "Operator.intermediates", "SubGraph.inputs",
                 "SubGraph.outputs", "Tensor.buffer", "Operator.opcode_index", "subgraph_index",
                 "TensorMap.tensor_index", "Tensor.type", "OperatorCode.builtin_code",
                 "QuantizationParameters.quantized_dimension", "Tensor.shape", "Tensor.shape_signature")


def index_or_shape_field(draw, data, by_kind):
    buf = bytearray(data)
    fields = [r for k in ("scalar", "vector") for r in by_kind.get(k, ()) if r.name.endswith(_INDEX_FIELDS)]
    r = draw(st.sampled_from(fields))
    value = draw(_I32_INDEX)
    if r.kind == "vector":
        if r.size > 4:
            _put(buf, r.pos + 4 + 4 * draw(st.integers(0, (r.size - 4) // 4 - 1)), "<i", value)
    elif r.size == 1:
        _put(buf, r.pos, "<b", max(-128, min(value, 127)))
    else:
        _put(buf, r.pos, "<i" if r.size == 4 else "<q", value)
    return buf


def splice(draw, data, by_kind):
    buf = bytearray(data)
    src, dst = _region(draw, by_kind, "structure"), _region(draw, by_kind, "structure")
    n = min(max(src.size, 4), 64, len(buf) - dst.pos, len(buf) - src.pos)
    buf[dst.pos : dst.pos + n] = buf[src.pos : src.pos + n]
    return buf


MUTATIONS = [bit_flips, truncation, vtable_entry, vector_length, offset, soffset, index_or_shape_field, splice]


@st.composite
def mutated(draw, paths):
    path = draw(st.sampled_from(paths))
    data, by_kind = fixture(path)
    mutation = draw(st.sampled_from(MUTATIONS))
    event(mutation.__name__)
    return bytes(mutation(draw, data, by_kind))


# --- properties ------------------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ
@given(data=mutated(FIXTURE_FILES))
def test_damaged_fixtures_load_or_raise_model_error(data):
    event("loaded" if load_or_refuse(data) is not None else "refused")


@pytest.mark.slow
@settings(FUZZ, max_examples=400)
@given(data=mutated(SMALL))
def test_what_loads_runs_or_raises_accelsim_errors(data):
    model = load_or_refuse(data)
    event("refused at load" if model is None else run_or_raise_accelsim_error(model))


@functools.cache
def _ir(path) -> Model:
    return load_model(path)


_DIM = st.one_of(st.sampled_from([-1, 0, 1, 2**31 - 1]), st.integers(-3, 70))


@st.composite
def damaged_ir(draw):
    """A small fixture with one IR field set to a hostile value, written back with our writer."""
    model = _ir(draw(st.sampled_from(SMALL)))
    si = draw(st.integers(0, len(model.subgraphs) - 1))
    sg = model.subgraphs[si]
    what = draw(st.sampled_from(["op index", "graph index", "shape", "buffer", "short buffer", "subgraph ref"]))
    event(what)
    n = len(sg.tensors)
    index = st.one_of(st.sampled_from([-2, -1, n, n + 1, 2**31 - 1]), st.integers(0, n - 1))
    if what in ("op index", "subgraph ref") and sg.operators:
        oi = draw(st.integers(0, len(sg.operators) - 1))
        op = sg.operators[oi]
        if what == "op index" and (op.inputs or op.outputs):
            field = "inputs" if op.inputs and draw(st.booleans()) else "outputs"
            values = list(getattr(op, field) or (0,))
            values[draw(st.integers(0, len(values) - 1))] = draw(index)
            op = dataclasses.replace(op, **{field: tuple(values)})
        refs = [k for k in (op.options or {}) if k.endswith("subgraph_index")]
        if what == "subgraph ref" and refs:
            op = dataclasses.replace(op, options=op.options.replace(**{draw(st.sampled_from(refs)): draw(_DIM)}))
        sg = dataclasses.replace(sg, operators=(*sg.operators[:oi], op, *sg.operators[oi + 1:]))
    elif what == "graph index" and sg.inputs:
        sg = dataclasses.replace(sg, inputs=(draw(index), *sg.inputs[1:]))
    elif what in ("shape", "buffer", "short buffer"):
        ti = draw(st.integers(0, n - 1))
        t = sg.tensors[ti]
        if what == "shape" and t.shape:
            shape = list(t.shape)
            shape[draw(st.integers(0, len(shape) - 1))] = draw(_DIM)
            t = dataclasses.replace(t, shape=tuple(shape))
        elif what == "buffer":
            t = dataclasses.replace(t, buffer=draw(st.integers(0, len(model.buffers) + 1)))
        elif t.buffer and len(model.buffers[t.buffer]) > 1:
            data = bytes(model.buffers[t.buffer])
            cut = draw(st.integers(0, len(data) - 1))
            model = model.replace(buffers=(*model.buffers[:t.buffer], data[:cut], *model.buffers[t.buffer + 1:]))
        sg = dataclasses.replace(sg, tensors=(*sg.tensors[:ti], t, *sg.tensors[ti + 1:]))
    return save_model(model.replace(subgraphs=(*model.subgraphs[:si], sg, *model.subgraphs[si + 1:])))


@pytest.mark.slow
@settings(FUZZ, max_examples=100)
@given(data=damaged_ir())
def test_ir_damage_is_refused_at_load_or_runs(data):
    model = load_or_refuse(data)
    event("refused at load" if model is None else run_or_raise_accelsim_error(model))


@pytest.mark.parametrize("name", ["atan_custom", "sparse_float", "lstm_gru_float"])
def test_truncation_at_every_object_boundary_is_refused(name):
    data, by_kind = fixture(FIXTURES / f"{name}.tflite")
    boundaries = {p for rs in by_kind.values() for r in rs for p in (r.pos, r.pos + r.size)}
    end = max(r.pos + r.size for rs in by_kind.values() for r in rs)
    for cut in sorted(b for b in boundaries if b < end):
        with pytest.raises(ModelError, match="too short|corrupt model FlatBuffer"):
            load_model(data[:cut])


# --- targeted damage, with the message each one must give --------------------------------------------


def _replace_op(model: Model, si: int, oi: int, **changes) -> bytes:
    sg = model.subgraphs[si]
    ops = list(sg.operators)
    ops[oi] = dataclasses.replace(ops[oi], **changes)
    subgraphs = list(model.subgraphs)
    subgraphs[si] = dataclasses.replace(sg, operators=tuple(ops))
    return save_model(model.replace(subgraphs=tuple(subgraphs)))


@pytest.fixture(scope="module")
def lstm():
    return load_model(FIXTURES / "lstm_gru_float.tflite")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("body_subgraph_index", 0, r"body_subgraph_index 0 makes the subgraphs call themselves \(cycle 0 -> 0\)"),
    ("cond_subgraph_index", 5, r"cond_subgraph_index 5 is out of range \[0, 5\)"),
    ("cond_subgraph_index", -1, r"cond_subgraph_index -1 is out of range \[0, 5\)"),
    ("body_subgraph_index", 2**31 - 1, r"body_subgraph_index 2147483647 is out of range"),
])
def test_while_options_pointing_at_itself_or_out_of_range_are_refused_at_load(lstm, field, value, message):
    op = lstm.subgraphs[0].operators[1]
    raw = _replace_op(lstm, 0, 1, options=op.options.replace(**{field: value}))
    with pytest.raises(ModelError, match=r"^<bytes>: subgraph 0 operator 1 \(WHILE\): " + message):
        load_model(raw)


def test_a_cycle_through_several_subgraphs_is_named_with_its_path():
    x = (Tensor("x", "FLOAT32", (1,)),)
    graphs = (
        Subgraph(x, (0,), (0,), (make_operator("CALL_ONCE", [], [], init_subgraph_index=1),)),
        Subgraph(x, (0,), (0,), (make_operator("IF", [0], [0], then_subgraph_index=2, else_subgraph_index=2),)),
        Subgraph(x, (0,), (0,), (make_operator("WHILE", [0], [0], cond_subgraph_index=2, body_subgraph_index=1),)),
    )
    with pytest.raises(ModelError, match=r"subgraph 2 operator 0 \(WHILE\): cond_subgraph_index 2 makes the "
                                         r"subgraphs call themselves \(cycle 2 -> 2\)"):
        load_model(save_model(Model(graphs, (b"",))))
    graphs = graphs[:2] + (Subgraph(x, (0,), (0,), (make_operator(
        "WHILE", [0], [0], cond_subgraph_index=1, body_subgraph_index=1),)),)
    with pytest.raises(ModelError, match=r"cycle 1 -> 2 -> 1"):
        load_model(save_model(Model(graphs, (b"",))))


@pytest.mark.slow
def test_a_subgraph_index_damaged_in_the_file_is_refused_naming_the_operator():
    data, by_kind = fixture(FIXTURES / "lstm_gru_float.tflite")
    fields = [r for r in by_kind["scalar"] if r.name.endswith("subgraph_index")]
    assert len(fields) == 4
    for r in fields:
        for value in (-5, 0, 5, 1 << 30):
            buf = bytearray(data)
            struct.pack_into("<i", buf, r.pos, value)
            with pytest.raises(ModelError, match=r"subgraph 0 operator [12] \(WHILE\): (cond|body)_subgraph_index"):
                load_model(bytes(buf))


@pytest.mark.parametrize(("op_index", "field", "value"), [(1, "dilation_w_factor", 2139127808),
                                                          (3, "dilation_h_factor", 2134671615)],
                         ids=["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_a_dilation_over_int16_is_refused_at_prepare_like_litert(op_index, field, value):
    # Found by benchmarks/fuzz_models.py (seed 2, cases 880 and 2729): runs were OOM-killed at 24 GB.
    model = _ir(FIXTURES / "dilated_cnn_float.tflite")
    op = model.subgraphs[0].operators[op_index]
    raw = _replace_op(model, 0, op_index, options=op.options.replace(**{field: value}))
    it = Interpreter(model_content=raw)
    with address_space_limit():
        try:
            it.allocate_tensors()
            it.invoke()
        except KernelError as exc:
            _no_memory_blow_up(exc)
            assert "dilation" in str(exc), str(exc)
            return
    raise AssertionError(f"{field}={value} was accepted")


@pytest.fixture(scope="module")
def small():
    x = Tensor("x", "FLOAT32", (2, 3))
    shape = Tensor("shape", "INT32", (2,), buffer=1)
    y = Tensor("y", "FLOAT32", (3, 2))
    op = make_operator("RESHAPE", [0, 1], [2])
    return Model((Subgraph((x, shape, y), (0,), (2,), (op,)),), (b"", np.array([3, 2], np.int32).tobytes()))


def _with_tensor(model: Model, index: int, **changes) -> bytes:
    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    tensors[index] = dataclasses.replace(tensors[index], **changes)
    return save_model(model.replace(subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),)))


@pytest.mark.parametrize(("changes", "message"), [
    ({"shape": (2, -3)}, r"negative dimension in shape \[2, -3\]"),
    ({"shape": (2**31 - 1, 2**31 - 1, 4)}, r"shape .* needs \d+ bytes, over the limit"),
    ({"shape": (1,) * 65}, r"rank 65 is over the 64 dimensions"),
    ({"type": "STRING", "shape": (2**31 - 1, 2**31 - 1)}, r"shape .* needs \d+ bytes, over the limit"),
    ({"shape_signature": (-1, -7)}, r"shape_signature \[-1, -7\] has a dimension below -1"),
    ({"buffer": 1, "shape": (4,)}, r"buffer 1 holds 8 bytes but shape \[4\] of FLOAT32 needs 16"),
    ({"buffer": 1, "is_variable": True}, r"a variable tensor cannot have constant data"),
    ({"buffer": 7}, r"buffer index 7 out of range \[0, 2\)"),
    ({"quantization": Quantization((0.5, 0.25), (0,))}, r"quantization has 1 zero points and 2 scales"),
    ({"quantization": Quantization((0.5,) * 2, (0,) * 2, 1)}, r"2 scales: must be 1 .* or 3 \(dimension 1"),
    ({"quantization": Quantization((0.5,), (0,), 2)}, r"quantized_dimension must be in range \[0, 2\), got 2"),
])
def test_bad_tensors_are_refused_with_the_tensor_named(small, changes, message):
    with pytest.raises(ModelError, match=r"^<bytes>: subgraph 0 tensor 0 \('x'\): " + message):
        load_model(_with_tensor(small, 0, **changes))


@pytest.mark.parametrize(("where", "indices", "message"), [
    ("op_inputs", (0, 9), r"operator 0 \(RESHAPE\) inputs: tensor index 9 out of range \[0, 3\)"),
    ("op_outputs", (-2,), r"operator 0 \(RESHAPE\) outputs: tensor index -2 out of range"),
    ("inputs", (-1,), r"subgraph 0 inputs: tensor index -1 out of range"),
    ("outputs", (3,), r"subgraph 0 outputs: tensor index 3 out of range"),
])
def test_tensor_indices_out_of_range_are_refused(small, where, indices, message):
    sg = small.subgraphs[0]
    if where.startswith("op_"):
        sg = dataclasses.replace(sg, operators=(dataclasses.replace(sg.operators[0], **{where[3:]: indices}),))
    else:
        sg = dataclasses.replace(sg, **{where: indices})
    with pytest.raises(ModelError, match=message):
        load_model(save_model(small.replace(subgraphs=(sg,))))


def test_string_constants_load_as_bytes_and_a_bad_layout_is_refused(small):
    words = [b"ab", b"", b"xyz"]
    header = 4 * (len(words) + 2)
    offsets = np.cumsum([header] + [len(w) for w in words])
    raw = np.array([len(words), *offsets], "<i4").tobytes() + b"".join(words)
    sg = small.subgraphs[0]
    tensors = (*sg.tensors, Tensor("s", "STRING", (3,), buffer=2))
    model = small.replace(subgraphs=(dataclasses.replace(sg, tensors=tensors),), buffers=(*small.buffers, raw))
    loaded = load_model(save_model(model))
    assert loaded.constant(0, 3).tolist() == words
    bad = raw[:4] + struct.pack("<i", header + 9) + raw[8:]
    with pytest.raises(ModelError, match=r"tensor 3 \('s'\): STRING data in buffer 2: string offsets must rise"):
        load_model(save_model(model.replace(buffers=(*small.buffers, bad))))


def _amplified_model(copies: int, dims: int) -> bytes:
    """A valid FlatBuffer whose subgraph lists the same Tensor table `copies` times (a shared offset)."""
    from accelsim.schema.tflite import Buffer, SubGraph
    from accelsim.schema.tflite import Model as M
    from accelsim.schema.tflite import Tensor as T

    b = flatbuffers.Builder(0)
    T.TensorStartShapeVector(b, dims)
    for _ in range(dims):
        b.PrependInt32(1)
    shape = b.EndVector()
    T.TensorStart(b)
    T.TensorAddShape(b, shape)
    tensor = b.EndObject()
    SubGraph.SubGraphStartTensorsVector(b, copies)
    for _ in range(copies):
        b.PrependUOffsetTRelative(tensor)
    tensors = b.EndVector()
    SubGraph.SubGraphStart(b)
    SubGraph.SubGraphAddTensors(b, tensors)
    sg = b.EndObject()
    Buffer.BufferStart(b)
    buf = b.EndObject()
    M.ModelStartSubgraphsVector(b, 1)
    b.PrependUOffsetTRelative(sg)
    subgraphs = b.EndVector()
    M.ModelStartBuffersVector(b, 1)
    b.PrependUOffsetTRelative(buf)
    buffers = b.EndVector()
    M.ModelStart(b)
    M.ModelAddVersion(b, 3)
    M.ModelAddSubgraphs(b, subgraphs)
    M.ModelAddBuffers(b, buffers)
    b.Finish(M.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_a_table_shared_by_thousands_of_offsets_is_refused_before_it_is_unpacked():
    assert len(load_model(_amplified_model(10, 10)).subgraphs[0].tensors) == 10
    raw = _amplified_model(20_000, 5_000)  # 100 million shape entries from an 100 KB file
    with pytest.raises(ModelError, match=r"Model.subgraphs\[0\].tensors\[\d+\].shape: .*amplification"):
        load_model(raw)


def test_huge_vector_length_is_refused_before_any_list_is_built():
    data, by_kind = fixture(FIXTURES / "interleaved_int8.tflite")
    r = next(r for r in by_kind["vector"] if r.name == "SubGraph.tensors")
    buf = bytearray(data)
    struct.pack_into("<I", buf, r.pos, 0xFFFFFFFF)
    with pytest.raises(ModelError, match=r"at Model.subgraphs\[0\].tensors: vector of 4294967295 4-byte elements "
                                         r"at byte \d+ \(\d+ bytes\) runs past the end of the buffer"):
        load_model(bytes(buf))


def test_an_options_type_without_its_table_is_refused(small):
    from accelsim.schema.tflite.Model import ModelT

    raw = ModelT.InitFromPackedBuf(save_model(small), 0)
    raw.subgraphs[0].operators[0].builtinOptions = None  # the type code stays: ReshapeOptions
    b = flatbuffers.Builder(0)
    b.Finish(raw.Pack(b), file_identifier=b"TFL3")
    with pytest.raises(ModelError, match=r"at Model.subgraphs\[0\].operators\[0\].builtin_options: union "
                                         r"BuiltinOptions has type ReshapeOptions but no table"):
        load_model(bytes(b.Output()))


def test_verifier_accepts_every_fixture_and_names_the_bad_object():
    for path in FIXTURE_FILES:
        verify_model(path.read_bytes())
    data, by_kind = fixture(FIXTURES / "atan_custom.tflite")
    name = next(r for r in by_kind["string"] if r.name == "Tensor.name")
    buf = bytearray(data)
    buf[name.pos + name.size - 1] = ord("!")  # the NUL terminator
    with pytest.raises(ModelError, match=r"^where: corrupt model FlatBuffer at Model.subgraphs\[0\].tensors\[\d\]"
                                         r".name: string of \d+ bytes at byte \d+ is not NUL-terminated"):
        verify_model(bytes(buf), "where")


def test_schema_reader_follows_field_ids_unions_and_deprecation():
    schema = parse_schema("""
        namespace t; file_identifier "ABCD";
        enum E : short { A = 1, B }
        table Leaf { x:int; }
        union U { Leaf, Other: Leaf }
        table Root { a:E (deprecated); u:U; v:[Leaf]; s:[string]; n:[ubyte]; w:[long]; }
        root_type Root;
    """)
    fields = {f.name: f for f in schema.tables["Root"]}
    assert "a" not in fields and schema.identifier == b"ABCD" and schema.unions["U"] == {1: "Leaf", 2: "Leaf"}
    assert (fields["u_type"].voffset, fields["u"].voffset, fields["u"].type_voffset) == (6, 8, 6)
    assert (fields["v"].kind, fields["s"].kind, fields["v"].voffset) == ("vector of tables", "vector of strings", 10)
    assert not fields["n"].counted and fields["w"].counted and fields["w"].size == 8
    with pytest.raises(ValueError, match="'struct' declarations are not supported"):
        parse_schema("struct S { x:int; }")
    assert tflite_schema().root == "Model"
