"""TFLite's sparsity format: decoding (traversal order, block map, DENSE/SPARSE_CSR) and DENSIFY against LiteRT."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from support import Spec, check_against_litert, const, single_op_model

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import DimensionMetadata, Sparsity
from accelsim.runtime.kernels.sparse import densify
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model


def encode(dense: np.ndarray, traversal_order, formats, block_map=(), block_sizes=()):
    """The TFLite sparse encoding of `dense` (a test-side encoder, written independently of the decoder).

    Levels are the blocked original dims then one per block dim, visited in `traversal_order`; a SPARSE_CSR
    level keeps the indices whose sub-tree holds a nonzero, a DENSE level keeps all of them.
    """
    rank = dense.ndim
    expanded_shape, split = [], []
    for d, size in enumerate(dense.shape):
        if d in block_map:
            b = block_sizes[list(block_map).index(d)]
            split += [size // b, b]
        else:
            split += [size]
    # reshape to (outer0, [inner0], outer1, [inner1], ...), then move the inner (block) axes to the end
    arr = dense.reshape(split)
    outer_axes, inner_axes, axis = [], {}, 0
    for d in range(rank):
        outer_axes.append(axis)
        axis += 1
        if d in block_map:
            inner_axes[list(block_map).index(d)] = axis
            axis += 1
    arr = arr.transpose(outer_axes + [inner_axes[b] for b in range(len(block_map))])
    expanded_shape = arr.shape
    arr = arr.transpose(traversal_order)
    segments = {level: [0] for level, f in enumerate(formats) if f == "SPARSE_CSR"}
    indices = {level: [] for level in segments}
    values = []

    def visit(level, sub):
        if level == len(formats):
            values.append(sub.item())
            return
        for i in range(sub.shape[0]):
            if formats[level] == "DENSE":
                visit(level + 1, sub[i])
            elif np.any(sub[i] != 0):
                indices[level].append(i)
                visit(level + 1, sub[i])
        if formats[level] == "SPARSE_CSR":
            segments[level].append(len(indices[level]))

    visit(0, arr)
    metadata = tuple(
        DimensionMetadata("DENSE", int(expanded_shape[traversal_order[level]]))
        if f == "DENSE" else DimensionMetadata("SPARSE_CSR", 0, tuple(segments[level]), tuple(indices[level]))
        for level, f in enumerate(formats))
    return Sparsity(tuple(traversal_order), tuple(block_map), metadata), np.array(values, dtype=dense.dtype)


def sparse_dense(shape, density=0.3, block=None, dtype=np.float32, seed=0) -> np.ndarray:
    """A random array with ~density nonzeros (whole blocks of `block` shape when given)."""
    rng = np.random.default_rng(seed)
    if block is None:
        mask = rng.random(shape) < density
    else:
        coarse = rng.random(tuple(s // b for s, b in zip(shape, block))) < density
        mask = np.kron(coarse, np.ones(block, bool))
    values = rng.standard_normal(shape) * 3 if dtype != np.int8 else rng.integers(-127, 128, shape)
    return np.where(mask, values, 0).astype(dtype)


# (shape, traversal order, formats, block map, block sizes, dense block shape for the generator)
FORMATS = [
    ((6, 9), (0, 1), ("DENSE", "SPARSE_CSR"), (), (), None),
    ((6, 9), (0, 1), ("SPARSE_CSR", "SPARSE_CSR"), (), (), None),
    ((6, 9), (1, 0), ("DENSE", "SPARSE_CSR"), (), (), None),
    ((6, 9), (0, 1), ("SPARSE_CSR", "DENSE"), (), (), None),
    ((8, 16), (0, 1, 2), ("DENSE", "SPARSE_CSR", "DENSE"), (1,), (4,), (1, 4)),
    ((8, 12), (0, 1, 2, 3), ("DENSE", "SPARSE_CSR", "DENSE", "DENSE"), (0, 1), (2, 2), (2, 2)),
    ((4, 8), (0, 1, 2, 3), ("SPARSE_CSR", "SPARSE_CSR", "DENSE", "DENSE"), (0, 1), (2, 4), (2, 4)),
    ((3, 4, 5), (0, 1, 2), ("DENSE", "SPARSE_CSR", "SPARSE_CSR"), (), (), None),
    ((3, 4, 5), (2, 0, 1), ("DENSE", "DENSE", "SPARSE_CSR"), (), (), None),
]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f[0]}-{f[1]}-{'/'.join(x[0] for x in f[2])}")
def test_densify_round_trip(fmt):
    shape, order, formats, block_map, block_sizes, block = fmt
    for seed in range(3):
        dense = sparse_dense(shape, block=block, seed=seed)
        sparsity, values = encode(dense, order, formats, block_map, block_sizes)
        assert np.array_equal(densify(values, shape, sparsity), dense)


def test_densify_all_zero_tensor():
    dense = np.zeros((4, 8), np.float32)
    sparsity, values = encode(dense, (0, 1, 2), ("DENSE", "SPARSE_CSR", "DENSE"), (1,), (4,))
    assert values.size == 0
    assert np.array_equal(densify(values, (4, 8), sparsity), dense)


def densify_model(dense: np.ndarray, sparsity: Sparsity, values: np.ndarray, type_name: str | None = None) -> bytes:
    """DENSIFY of one sparse constant (the graph has no inputs)."""
    spec = const(dense) if type_name is None else const(dense, type_name)
    base = load_model(single_op_model("DENSIFY", [spec], [Spec(dense.shape, spec.type)]))
    return _with_sparse_input(base, 0, 0, sparsity, values)


def _with_sparse_input(model, op_index: int, input_slot: int, sparsity: Sparsity, values: np.ndarray) -> bytes:
    """`model` with operator `op_index`'s input `input_slot` stored sparse (its buffer holds `values`)."""
    sg = model.subgraphs[0]
    ti = sg.operators[op_index].inputs[input_slot]
    tensors = list(sg.tensors)
    tensors[ti] = dataclasses.replace(tensors[ti], sparsity=sparsity)
    buffers = list(model.buffers)
    buffers[tensors[ti].buffer] = np.ascontiguousarray(values).tobytes()
    sg = dataclasses.replace(sg, tensors=tuple(tensors))
    return save_model(model.replace(subgraphs=(sg,), buffers=tuple(buffers)))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f[0]}-{f[1]}-{'/'.join(x[0] for x in f[2])}")
def test_densify_op_matches_litert(fmt):
    shape, order, formats, block_map, block_sizes, block = fmt
    dense = sparse_dense(shape, block=block, seed=1)
    sparsity, values = encode(dense, order, formats, block_map, block_sizes)
    out = check_against_litert(densify_model(dense, sparsity, values), inputs=[])[0]
    assert np.array_equal(out, dense)


@pytest.mark.parametrize("dtype", [np.float16, np.int8])
def test_densify_other_types(dtype):
    dense = sparse_dense((8, 16), block=(1, 4), dtype=dtype)
    sparsity, values = encode(dense, (0, 1, 2), ("DENSE", "SPARSE_CSR", "DENSE"), (1,), (4,))
    out = check_against_litert(densify_model(dense, sparsity, values), inputs=[])[0]
    assert out.dtype == dtype and np.array_equal(out, dense)


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


def test_densify_of_a_dense_tensor_raises():
    dense = np.ones((2, 3), np.float32)
    with pytest.raises(KernelError, match="has no sparsity parameters"):
        _prepare(single_op_model("DENSIFY", [const(dense)], [Spec((2, 3))]))


def test_densify_value_count_mismatch_raises():
    dense = sparse_dense((6, 9))
    sparsity, values = encode(dense, (0, 1), ("DENSE", "SPARSE_CSR"))
    with pytest.raises(KernelError, match=f"stores {values.size - 1} values but its sparsity describes {values.size}"):
        _prepare(densify_model(dense, sparsity, values[:-1]))


def test_densify_segments_past_indices_raise():
    dense = sparse_dense((6, 9))
    sparsity, values = encode(dense, (0, 1), ("DENSE", "SPARSE_CSR"))
    level = sparsity.dim_metadata[1]
    bad = dataclasses.replace(level, array_segments=(*level.array_segments[:-1], level.array_segments[-1] + 3))
    sparsity = dataclasses.replace(sparsity, dim_metadata=(sparsity.dim_metadata[0], bad))
    with pytest.raises(KernelError, match="point past"):
        densify(values, (6, 9), sparsity)


def test_densify_index_out_of_range_raises():
    sparsity = Sparsity((0, 1), (), (DimensionMetadata("DENSE", 2),
                                     DimensionMetadata("SPARSE_CSR", 0, (0, 1, 2), (0, 9))))
    with pytest.raises(KernelError, match="index 9 of dimension 1"):
        densify(np.ones(2, np.float32), (2, 3), sparsity)


def test_densify_level_count_mismatch_raises():
    sparsity = Sparsity((0, 1), (1,), (DimensionMetadata("DENSE", 2), DimensionMetadata("DENSE", 3)))
    with pytest.raises(KernelError, match="needs 3 levels"):
        densify(np.ones(6, np.float32), (2, 3), sparsity)


def test_a_corrupted_dense_size_is_refused_before_expanding():
    # Found by benchmarks/fuzz_models.py: a huge dense_size made FULLY_CONNECTED's prepare allocate 16 GiB.
    import dataclasses

    from support import FIXTURES

    from accelsim.runtime.errors import KernelError
    from accelsim.runtime.interpreter import Interpreter
    from accelsim.runtime.read import load_model

    model = load_model(FIXTURES / "sparse_float.tflite")
    sg = model.subgraphs[0]
    index = next(i for i, t in enumerate(sg.tensors) if t.sparsity is not None)
    sparse = sg.tensors[index].sparsity
    level = next(k for k, d in enumerate(sparse.dim_metadata) if d.format == "DENSE")
    dims = list(sparse.dim_metadata)
    dims[level] = dataclasses.replace(dims[level], dense_size=1 << 30)
    tensors = list(sg.tensors)
    tensors[index] = dataclasses.replace(tensors[index], sparsity=dataclasses.replace(sparse, dim_metadata=tuple(dims)))
    broken = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),))
    with pytest.raises(KernelError, match=r"dense_size 1073741824|block size 1073741824"):
        Interpreter(model=broken).allocate_tensors()
