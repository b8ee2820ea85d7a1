"""BATCH_MATMUL against LiteRT: adj_x/adj_y, broadcast batch dims of rank 2..5, float32, int8, int16."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, single_op_model

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter

# (lhs shape, rhs shape) before adjoints, i.e. [..., M, K] x [..., K, N].
SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 7), (1, 3, 7, 2)),
    ((1, 4, 8, 8), (1, 4, 8, 8)),
    ((2, 1, 2, 3, 6), (1, 3, 1, 6, 4)),
    ((4, 1, 5, 3), (1, 3, 2)),
    ((1, 1), (1, 1)),
]


def _adjusted(shape, adjoint: bool) -> tuple[int, ...]:
    return (*shape[:-2], shape[-1], shape[-2]) if adjoint else tuple(shape)


def _out_shape(lhs, rhs) -> tuple[int, ...]:
    batch = np.broadcast_shapes(lhs[:-2], rhs[:-2])
    return (*batch, lhs[-2], rhs[-1])


def bmm_model(lhs, rhs, typ="FLOAT32", adj_x=False, adj_y=False, const_rhs=None, quant=None, out_type=None,
              rhs_type=None, version=None) -> bytes:
    """`quant` is ((lhs scale, zp), (rhs scale, zp), (out scale, zp)); `lhs`/`rhs` are un-adjusted shapes."""
    out_shape = _out_shape(lhs, rhs)
    rhs_type = rhs_type or typ
    q = quant or ((None, None),) * 3
    lhs_spec = Spec(_adjusted(lhs, adj_x), typ, scale=q[0][0], zero_point=q[0][1])
    if const_rhs is not None:
        rhs_spec = const(const_rhs, rhs_type, scale=q[1][0], zero_point=q[1][1])
    else:
        rhs_spec = Spec(_adjusted(rhs, adj_y), rhs_type, scale=q[1][0], zero_point=q[1][1])
    out = Spec(out_shape, out_type or typ, scale=q[2][0], zero_point=q[2][1])
    version = version or {"FLOAT32": 1, "INT8": 2, "INT16": 3}[typ]
    return single_op_model("BATCH_MATMUL", [lhs_spec, rhs_spec], [out], version=version, adj_x=adj_x, adj_y=adj_y)


@pytest.mark.parametrize(("lhs", "rhs"), SHAPES, ids=str)
@pytest.mark.parametrize(("adj_x", "adj_y"), [(False, False), (True, False), (False, True), (True, True)])
def test_float(lhs, rhs, adj_x, adj_y):
    out = check_against_litert(bmm_model(lhs, rhs, adj_x=adj_x, adj_y=adj_y))[0]
    assert out.shape == _out_shape(lhs, rhs)


def _int8_quant(depth: int, seed: int):
    rng = np.random.default_rng(seed)
    s_l, s_r = float(rng.uniform(0.005, 0.1)), float(rng.uniform(0.005, 0.1))
    s_o = s_l * s_r * np.sqrt(depth) * float(rng.uniform(150, 250))
    return ((s_l, int(rng.integers(-30, 31))), (s_r, int(rng.integers(-30, 31))), (s_o, int(rng.integers(-20, 21))))


@pytest.mark.parametrize(("lhs", "rhs"), SHAPES, ids=str)
@pytest.mark.parametrize(("adj_x", "adj_y"), [(False, False), (True, True), (True, False)])
def test_int8(lhs, rhs, adj_x, adj_y):
    quant = _int8_quant(lhs[-1], seed=len(lhs) * 7 + rhs[-1])
    out = check_against_litert(bmm_model(lhs, rhs, "INT8", adj_x, adj_y, quant=quant))[0]
    assert len(np.unique(out)) > min(out.size, 10) // 2  # the outputs are not saturated


def test_int8_random_scales_and_depths():
    # Many (scale, zero point, depth) draws: the reference double-rounding output stage, bit for bit.
    rng = np.random.default_rng(3)
    for seed in range(25):
        depth = int(rng.integers(1, 70))
        lhs, rhs = (2, int(rng.integers(1, 6)), depth), (depth, int(rng.integers(1, 6)))
        check_against_litert(bmm_model(lhs, rhs, "INT8", quant=_int8_quant(depth, seed)), seed=seed)


@pytest.mark.parametrize("adj_y", [False, True])
def test_int8_constant_rhs(adj_y):
    rng = np.random.default_rng(1)
    w = rng.integers(-128, 128, (3, 6) if adj_y else (6, 3)).astype(np.int8)
    quant = _int8_quant(6, seed=4)
    model = bmm_model((2, 5, 6), (6, 3), "INT8", adj_y=adj_y, const_rhs=w, quant=quant)
    check_against_litert(model)


def test_float_constant_rhs():
    w = np.random.default_rng(2).standard_normal((1, 7, 4)).astype(np.float32)
    check_against_litert(bmm_model((3, 2, 7), (1, 7, 4), const_rhs=w))


def test_int8_int32_output_ignores_zero_points():
    # EvalInt8Int32: raw int8 products summed into int32; the quantization parameters play no part.
    quant = ((0.02, 5), (0.03, -7), (None, None))
    out = check_against_litert(bmm_model((2, 3, 9), (9, 4), "INT8", quant=quant, out_type="INT32"))[0]
    assert out.dtype == np.int32


@pytest.mark.parametrize(("lhs", "rhs"), [((2, 3, 16), (16, 5)), ((1, 4, 8, 8), (1, 4, 8, 8))], ids=str)
@pytest.mark.parametrize("rhs_type", ["INT16", "INT8"])
def test_int16(lhs, rhs, rhs_type):
    # int16 sums are int64 and go through the int64 MultiplyByQuantizedMultiplier (16-bit multiplier).
    depth = lhs[-1]
    s_o = 0.01 * 0.02 * np.sqrt(depth) * 1000 * (127 if rhs_type == "INT8" else 1000) / 3000
    quant = ((0.01, 0), (0.02, 0), (s_o, 0))
    out = check_against_litert(bmm_model(lhs, rhs, "INT16", True, False, quant=quant, rhs_type=rhs_type))[0]
    assert np.abs(out).max() > 100


def _prepare(model: bytes):
    it = Interpreter(model_content=model)
    it.allocate_tensors()


def test_mismatched_depth_fails():
    model = single_op_model("BATCH_MATMUL", [Spec((2, 3, 4)), Spec((5, 6))], [Spec((2, 3, 6))], adj_x=False,
                            adj_y=False)
    with pytest.raises(KernelError, match="accumulation depths 4 and 5"):
        _prepare(model)


def test_unbroadcastable_batch_fails():
    model = single_op_model("BATCH_MATMUL", [Spec((2, 3, 4)), Spec((3, 4, 6))], [Spec((2, 3, 6))], adj_x=False,
                            adj_y=False)
    with pytest.raises(KernelError, match="do not broadcast"):
        _prepare(model)


def test_rank_six_fails():
    model = single_op_model("BATCH_MATMUL", [Spec((1, 1, 1, 1, 3, 4)), Spec((4, 6))], [Spec((1, 1, 1, 1, 3, 6))],
                            adj_x=False, adj_y=False)
    with pytest.raises(KernelError, match="rank 2 to 5"):
        _prepare(model)


def test_hybrid_fails():
    model = single_op_model("BATCH_MATMUL", [Spec((3, 4)), const(np.ones((4, 2), np.int8), scale=0.1)],
                            [Spec((3, 2))], adj_x=False, adj_y=False)
    with pytest.raises(KernelError, match="hybrid"):
        _prepare(model)


@pytest.mark.parametrize("multiplier", [0.75, 0.5, 1.5, 2.0**-9], ids=str)
def test_int8_output_stage_shifts_and_ties(multiplier):
    # Right shifts of 0 and 9 (ties of both signs round half away from zero) and a left shift (> 1).
    rng = np.random.default_rng(5)
    lhs = rng.integers(-6, 7, (2, 3, 5)).astype(np.int8)
    rhs = rng.integers(-128, 128, (2, 5, 4)).astype(np.int8)
    quant = ((0.5, 2), (0.25, -3), (0.125 / multiplier, -5))
    out = check_against_litert(bmm_model(lhs.shape, rhs.shape, "INT8", quant=quant), [lhs, rhs])[0]
    assert len(np.unique(out)) > 4
