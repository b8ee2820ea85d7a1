"""Differential tests of the elementwise math and parametric activation kernels against LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from support import (
    FIXTURES,
    Spec,
    allocated_with_peak,
    assert_close_to_reference,
    const,
    random_inputs,
    run_litert,
    run_ours,
    single_op_model,
)

from accelsim.runtime.errors import KernelError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.read import load_model
from accelsim.runtime.resolver import BuiltinOpResolver

RNG = np.random.default_rng(1234)
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -3.0, 1e-30, 9.0, -90.0, np.inf, -np.inf, np.nan],
                   dtype=np.float32)


def check_against_litert(model: bytes, inputs) -> list[np.ndarray]:
    """support.check_against_litert, with NaN and infinities required at the same places (support's
    comparison takes its scale from max|ref|, which NaN or infinity would make meaningless)."""
    ref = run_litert(model, inputs)
    ours = run_ours(model, inputs)
    finite_ours, finite_ref = [], []
    for a, b in zip(ours, ref):
        if a.dtype.kind == "f" and a.shape == b.shape:
            assert np.array_equal(np.isposinf(a), np.isposinf(b)), "+inf positions differ from LiteRT's"
            assert np.array_equal(np.isneginf(a), np.isneginf(b)), "-inf positions differ from LiteRT's"
            assert np.array_equal(np.isnan(a), np.isnan(b)), "NaN positions differ from LiteRT's"
            a, b = np.where(np.isfinite(a), a, 0), np.where(np.isfinite(b), b, 0)
        finite_ours.append(a)
        finite_ref.append(b)
    assert_close_to_reference(finite_ours, finite_ref)
    return ours


def _floats(shape, scale=3.0) -> np.ndarray:
    """Random floats with the special values (zeros, infinities, NaN) at the front."""
    x = (RNG.standard_normal(shape) * scale).astype(np.float32)
    flat = x.reshape(-1)
    n = min(flat.size, SPECIAL.size)
    flat[:n] = SPECIAL[:n]
    return x


def _ints(shape, dtype, lo=None, hi=None) -> np.ndarray:
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return RNG.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def _all_int8(shape=(256,)) -> np.ndarray:
    """Every int8 value (then wrapped), so a table-driven kernel is checked entry by entry."""
    return (np.arange(np.prod(shape)) % 256 - 128).astype(np.int8).reshape(shape)


def _q(shape, type="INT8", scale=0.05, zero_point=0) -> Spec:
    return Spec(tuple(shape), type, scale=scale, zero_point=zero_point)


def _unary(op, x: np.ndarray, in_spec: Spec, out_spec: Spec, version=1, **options):
    model = single_op_model(op, [in_spec], [out_spec], version=version, **options)
    return check_against_litert(model, [x])


# -- float unary ops, including NaN / Inf / negative edge values ------------------------------

FLOAT_UNARY = [("EXP", {}), ("LOG", {}), ("SQRT", {}), ("RSQRT", {}), ("SQUARE", {}), ("ABS", {}), ("NEG", {}),
               ("ELU", {}), ("HARD_SWISH", {}), ("GELU", {"approximate": False}), ("GELU", {"approximate": True}),
               ("LEAKY_RELU", {"alpha": 0.2}), ("LEAKY_RELU", {"alpha": -1.5})]


@pytest.mark.parametrize("op,options", FLOAT_UNARY, ids=lambda v: str(v))
@pytest.mark.parametrize("shape", [(37,), (2, 3, 5, 7)])
def test_float_unary(op, options, shape):
    x = _floats(shape)
    ours = _unary(op, x, Spec(shape), Spec(shape), **options)
    if op in ("LOG", "SQRT"):
        assert np.isnan(ours[0].reshape(-1)[3])  # LiteRT gives NaN for a negative input too


def test_float_unary_scalar_and_empty():
    _unary("EXP", np.array(1.5, np.float32), Spec(()), Spec(()))
    assert _unary("NEG", np.zeros((2, 0), np.float32), Spec((2, 0)), Spec((2, 0)))[0].shape == (2, 0)


@pytest.mark.parametrize("op,options", [("GELU", {"approximate": False}), ("GELU", {"approximate": True}),
                                        ("RSQRT", {}), ("NEG", {}), ("SQUARE", {})], ids=str)
@pytest.mark.parametrize("value", [0.7, -2.5, np.inf, np.nan])
def test_float_unary_rank0(op, options, value):
    """0-d tensors: NumPy computes them as scalars, which in-place steps cannot write to."""
    ours = _unary(op, np.array(value, np.float32), Spec(()), Spec(()), **options)[0]
    assert ours.shape == () and ours.dtype == np.float32


def test_gelu_float_far_tails():
    """Large negative inputs (erfc underflows: -0 or NaN for -inf) and large positive ones (x itself)."""
    x = np.array([-90, -30, -13, -9, -5, -1e-3, -1e-30, 1e-30, 1e-3, 5, 9, 13, 30, 90, 3e38, -3e38],
                 np.float32)
    for approximate in (False, True):
        ours = _unary("GELU", x, Spec(x.shape), Spec(x.shape), approximate=approximate)[0]
        assert ours[-3] == x[-3]


def test_gelu_float_in_blocks():
    """Inputs larger than GELU's scratch block run block by block, the last one partial; prepare's
    scratch stays one block (11 rows of 16384 values) whatever the input's size."""
    shape = (3, 16384 + 77)
    x = _floats(shape)
    _unary("GELU", x, Spec(shape), Spec(shape), approximate=False)
    big = (64, 1024, 128)  # 8.4M values: eleven rows of them would be 369 MB
    _, peak = allocated_with_peak(single_op_model("GELU", [Spec(big)], [Spec(big)], approximate=False))
    assert peak < 2 * 4 * np.prod(big)  # the input and output arrays, not a multiple of them


# -- int8 / uint8 / int16 unary ops ----------------------------------------------------------

def _int8_case(op, options, version, in_q, out_q):
    """A parametrized int8 case: (scale, zero_point) of the input and of the output."""
    label = "".join(f"-{k}={v}" for k, v in options.items())
    return pytest.param(op, options, version, _q((256,), "INT8", *in_q), _q((256,), "INT8", *out_q),
                        id=f"{op}{label}-in{in_q}-out{out_q}")


INT8_UNARY = [
    _int8_case("EXP", {}, 2, (0.03, -20), (0.2, -128)),
    _int8_case("LOG", {}, 2, (0.1, -100), (0.04, 30)),
    _int8_case("SQRT", {}, 2, (0.5, -128), (0.07, -128)),
    _int8_case("RSQRT", {}, 2, (0.02, -128), (0.06, -128)),
    _int8_case("RSQRT", {}, 2, (3.0, -128), (0.004, -100)),
    _int8_case("ABS", {}, 2, (0.05, 10), (0.05, -128)),  # same scale: no rescaling
    _int8_case("ABS", {}, 2, (0.05, 10), (0.03, -128)),
    _int8_case("NEG", {}, 1, (0.05, 0), (0.05, 0)),
    _int8_case("ELU", {}, 1, (0.04, 5), (0.03, -90)),
    _int8_case("GELU", {"approximate": False}, 2, (0.04, 3), (0.02, -100)),
    _int8_case("GELU", {"approximate": True}, 2, (0.04, 3), (0.02, -100)),
    _int8_case("HARD_SWISH", {}, 1, (0.05, 7), (0.03, -80)),
    _int8_case("HARD_SWISH", {}, 1, (0.3, -5), (0.2, -100)),  # reluish multiplier shifts left
    _int8_case("HARD_SWISH", {}, 1, (0.002, 0), (0.001, -20)),  # reluish multiplier shifts right
    _int8_case("LEAKY_RELU", {"alpha": 0.1}, 1, (0.05, -3), (0.04, -50)),
    _int8_case("LEAKY_RELU", {"alpha": -0.7}, 1, (0.05, -3), (0.04, 0)),
]


@pytest.mark.parametrize("op,options,version,in_spec,out_spec", INT8_UNARY)
def test_int8_unary_every_value(op, options, version, in_spec, out_spec):
    _unary(op, _all_int8(), in_spec, out_spec, version=version, **options)


UINT8_UNARY = [
    ("GELU", {"approximate": False}, 2),
    ("HARD_SWISH", {}, 1),
    ("LEAKY_RELU", {"alpha": 0.3}, 1),
]


@pytest.mark.parametrize("op,options,version", UINT8_UNARY, ids=str)
def test_uint8_unary_every_value(op, options, version):
    x = np.arange(256, dtype=np.uint8).reshape(4, 64)
    _unary(op, x, _q(x.shape, "UINT8", 0.05, 120), _q(x.shape, "UINT8", 0.04, 60), version=version, **options)


INT16_UNARY = [
    ("EXP", {}, 2, 0.0002, 0.002),
    ("LOG", {}, 2, 0.001, 0.0004),
    ("RSQRT", {}, 3, 0.002, 0.0008),
    ("SQRT", {}, 2, 0.004, 0.0001),
    ("ABS", {}, 3, 0.001, 0.0005),
    ("GELU", {"approximate": False}, 1, 0.0003, 0.0002),
    ("GELU", {"approximate": True}, 1, 0.0003, 0.0002),
    ("LEAKY_RELU", {"alpha": 0.25}, 2, 0.001, 0.0007),
]


@pytest.mark.parametrize("op,options,version,in_scale,out_scale", INT16_UNARY, ids=str)
def test_int16_unary(op, options, version, in_scale, out_scale):
    if op in ("LOG", "RSQRT", "SQRT"):  # only defined for non-negative inputs
        x = _ints((5, 211), np.int16, lo=0)
    else:
        x = _ints((5, 211), np.int16)
    x.reshape(-1)[:4] = [-32768, 32767, 0, 1]
    if op in ("LOG", "RSQRT", "SQRT"):
        x.reshape(-1)[0] = 2
    _unary(op, x, _q(x.shape, "INT16", in_scale), _q(x.shape, "INT16", out_scale), version=version, **options)


def test_int16_gelu_with_zero_points():
    x = _ints((3, 100), np.int16)
    _unary("GELU", x, _q(x.shape, "INT16", 0.0003, 25), _q(x.shape, "INT16", 0.0002, -7))


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
def test_plain_integer_neg_and_abs(dtype):
    x = _ints((4, 33), dtype)
    x.reshape(-1)[0] = np.iinfo(dtype).min  # wraps, as in C++
    type_name = np.dtype(dtype).name.upper()
    _unary("NEG", x, Spec(x.shape, type_name), Spec(x.shape, type_name))
    if dtype != np.int64:
        _unary("ABS", x, Spec(x.shape, type_name), Spec(x.shape, type_name), version=5 if dtype == np.int32 else 4)


# -- PRELU -----------------------------------------------------------------------------------

PRELU_SHAPES = [((2, 5, 4, 3), (3,)), ((2, 5, 4, 3), (1, 1, 3)), ((2, 5, 4, 3), (2, 5, 4, 3)), ((7, 5), (1,))]


@pytest.mark.parametrize("in_shape,alpha_shape", PRELU_SHAPES, ids=str)
def test_prelu_float(in_shape, alpha_shape):
    alpha = const(RNG.uniform(-1, 1, alpha_shape).astype(np.float32))
    model = single_op_model("PRELU", [Spec(in_shape), alpha], [Spec(in_shape)])
    check_against_litert(model, [_floats(in_shape)])


@pytest.mark.parametrize("in_shape,alpha_shape", PRELU_SHAPES, ids=str)
@pytest.mark.parametrize("type_name", ["INT8", "UINT8"])
def test_prelu_8bit(in_shape, alpha_shape, type_name):
    dtype = np.int8 if type_name == "INT8" else np.uint8
    zp = 0 if type_name == "INT8" else 128
    alpha = const(_ints(alpha_shape, dtype), type_name, scale=0.004, zero_point=zp - 20)
    model = single_op_model("PRELU", [_q(in_shape, type_name, 0.06, zp + 3), alpha],
                            [_q(in_shape, type_name, 0.05, zp - 10)])
    check_against_litert(model, [_ints(in_shape, dtype)])


def test_prelu_int16_with_int8_alpha():
    alpha = const(_ints((3,), np.int8), "INT8", scale=0.01, zero_point=-4)
    model = single_op_model("PRELU", [_q((2, 40, 3), "INT16", 0.001), alpha], [_q((2, 40, 3), "INT16", 0.0008)])
    check_against_litert(model, [_ints((2, 40, 3), np.int16)])


# -- binary ops: MINIMUM, MAXIMUM, SQUARED_DIFFERENCE, POW -----------------------------------

BROADCASTS = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (1, 3, 1)), ((5,), ()),
              ((2, 1, 3, 1, 4), (3, 2, 1))]


def _binary(op, a, b, spec_a, spec_b, out_spec, version=1, **options):
    model = single_op_model(op, [spec_a, spec_b], [out_spec], version=version, **options)
    return check_against_litert(model, [a, b])


def _out_shape(sa, sb):
    return tuple(np.broadcast_shapes(sa, sb))


@pytest.mark.parametrize("op", ["MINIMUM", "MAXIMUM"])
@pytest.mark.parametrize("sa,sb", BROADCASTS, ids=str)
def test_min_max_float(op, sa, sb):
    version = 3 if max(len(sa), len(sb)) > 4 and sa != sb else 1
    _binary(op, _floats(sa), _floats(sb), Spec(sa), Spec(sb), Spec(_out_shape(sa, sb)), version=version)


@pytest.mark.parametrize("op", ["MINIMUM", "MAXIMUM"])
@pytest.mark.parametrize("type_name,version", [("INT8", 2), ("UINT8", 1), ("INT16", 4), ("INT32", 1), ("INT64", 1)])
@pytest.mark.parametrize("sa,sb", BROADCASTS[:4], ids=str)
def test_min_max_integer(op, type_name, version, sa, sb):
    dtype = np.dtype(type_name.lower())
    quant = {"scale": 0.1, "zero_point": 0} if type_name in ("INT8", "UINT8") else {}
    _binary(op, _ints(sa, dtype), _ints(sb, dtype), Spec(sa, type_name, **quant), Spec(sb, type_name, **quant),
            Spec(_out_shape(sa, sb), type_name, **quant), version=version)


@pytest.mark.parametrize("sa,sb", BROADCASTS, ids=str)
def test_squared_difference_float_and_int32(sa, sb):
    out = _out_shape(sa, sb)
    _binary("SQUARED_DIFFERENCE", _floats(sa), _floats(sb), Spec(sa), Spec(sb), Spec(out))
    _binary("SQUARED_DIFFERENCE", _ints(sa, np.int32, -40000, 40000), _ints(sb, np.int32, -40000, 40000),
            Spec(sa, "INT32"), Spec(sb, "INT32"), Spec(out, "INT32"))


def test_squared_difference_rank0():
    ours = _binary("SQUARED_DIFFERENCE", np.array(1.5, np.float32), np.array(-2.0, np.float32), Spec(()), Spec(()),
                   Spec(()))[0]
    assert ours.shape == () and ours == np.float32(12.25)
    _binary("SQUARED_DIFFERENCE", np.array(70000, np.int32), np.array(-3, np.int32), Spec((), "INT32"),
            Spec((), "INT32"), Spec((), "INT32"))  # wraps in int32


@pytest.mark.parametrize("sa,sb,constant", [((1, 8, 32), (1, 8, 1), 1), ((1, 8, 1), (1, 8, 32), 0),
                                            ((5, 3), (), 1), ((), (4,), 0)], ids=str)
def test_squared_difference_int8_constant_input(sa, sb, constant):
    """A constant input is folded into the pair table (a one-value constant into a table over the other)."""
    shapes, zps = (sa, sb), (-7, 12)
    specs = [_q(shape, scale=0.05, zero_point=zp) for shape, zp in zip(shapes, zps)]
    specs[constant] = const(_ints(shapes[constant], np.int8), "INT8", scale=0.05, zero_point=zps[constant])
    model = single_op_model("SQUARED_DIFFERENCE", specs, [_q(_out_shape(sa, sb), scale=0.1, zero_point=-128)],
                            version=2)
    check_against_litert(model, [_ints(shapes[1 - constant], np.int8)])


@pytest.mark.parametrize("scales", [(0.05, 0.05, 0.1), (0.02, 0.07, 0.4), (0.1, 0.03, 0.05)], ids=str)
@pytest.mark.parametrize("sa,sb", BROADCASTS[:4], ids=str)
def test_squared_difference_int8(scales, sa, sb):
    s1, s2, so = scales
    _binary("SQUARED_DIFFERENCE", _ints(sa, np.int8), _ints(sb, np.int8), _q(sa, scale=s1, zero_point=-7),
            _q(sb, scale=s2, zero_point=12), _q(_out_shape(sa, sb), scale=so, zero_point=-128), version=2)


POW_CASES = [
    ((3, 4), (3, 4)),  # elementwise std::pow
    ((3, 4), (1,)),  # one-element exponent: integer exponents go through repeated Mul
    ((3, 4), ()),
    ((), (3, 4)),
    ((2, 1, 4), (3, 1)),
]


@pytest.mark.parametrize("sa,sb", POW_CASES, ids=str)
@pytest.mark.parametrize("exponents", [[2.0], [3.0], [0.5], [2.000001], [-1.0], [7.0]], ids=str)
def test_pow_float(sa, sb, exponents):
    a = (RNG.standard_normal(sa) * 3).astype(np.float32)
    b = np.full(sb, exponents[0], np.float32)
    if a.size > 3:
        a.reshape(-1)[:4] = [0.0, -2.0, np.inf, 1e20]
    _binary("POW", a, b, Spec(sa), Spec(sb), Spec(_out_shape(sa, sb)))


def test_pow_float_random_exponents():
    a = np.abs(_floats((5, 6))) + np.float32(0.1)
    b = (RNG.standard_normal((5, 6)) * 2).astype(np.float32)
    _binary("POW", a, b, Spec(a.shape), Spec(b.shape), Spec(a.shape))


@pytest.mark.parametrize("sa,sb", POW_CASES, ids=str)
@pytest.mark.parametrize("exponent", [0, 1, 3, 31], ids=str)
def test_pow_int32(sa, sb, exponent):
    a = _ints(sa, np.int32, -12, 12)
    b = np.full(sb, exponent, np.int32)
    _binary("POW", a, b, Spec(sa, "INT32"), Spec(sb, "INT32"), Spec(_out_shape(sa, sb), "INT32"))


# -- DIV, FLOOR_DIV, FLOOR_MOD ---------------------------------------------------------------

ACTIVATIONS = [0, 1, 2, 3]  # NONE, RELU, RELU_N1_TO_1, RELU6


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("sa,sb", BROADCASTS, ids=str)
def test_div_float(act, sa, sb):
    a, b = _floats(sa), _floats(sb)
    b.reshape(-1)[-1:] = 0.0  # division by zero is allowed for float and clamps to the float range
    version = 2 if max(len(sa), len(sb)) > 4 and sa != sb else 1
    _binary("DIV", a, b, Spec(sa), Spec(sb), Spec(_out_shape(sa, sb)), version=version,
            fused_activation_function=act)


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("sa,sb", BROADCASTS[:4], ids=str)
def test_div_int32(act, sa, sb):
    a = _ints(sa, np.int32, -100000, 100000)
    b = _ints(sb, np.int32, 1, 300) * np.where(RNG.random(sb) < 0.5, -1, 1).astype(np.int32)
    _binary("DIV", a, b, Spec(sa, "INT32"), Spec(sb, "INT32"), Spec(_out_shape(sa, sb), "INT32"),
            fused_activation_function=act)


DIV_QUANT = [
    ("INT8", (0.1, 0, 0.05, 0, 0.2, 1)),
    ("INT8", (0.05, -10, 0.02, 7, 0.5, -3)),
    ("INT8", (0.02, 3, 0.1, -5, 0.01, 0)),
    ("UINT8", (0.1, 128, 0.05, 120, 0.2, 130)),
    ("INT16", (0.001, 0, 0.002, 0, 0.004, 0)),
]


@pytest.mark.slow
@pytest.mark.parametrize("type_name,q", DIV_QUANT, ids=str)
@pytest.mark.parametrize("sa,sb", BROADCASTS[:4], ids=str)
@pytest.mark.parametrize("act", [0, 1])
def test_div_quantized(type_name, q, sa, sb, act):
    s1, z1, s2, z2, so, zo = q
    dtype = np.dtype(type_name.lower())
    a = _ints(sa, dtype)
    b = _ints(sb, dtype)
    b[b == z2] = z2 + 1  # the divisor must not be zero
    _binary("DIV", a, b, _q(sa, type_name, s1, z1), _q(sb, type_name, s2, z2),
            _q(_out_shape(sa, sb), type_name, so, zo), fused_activation_function=act)


def test_div_int8_zero_numerator_x86_shift():
    """0 / x with a small output multiplier: gemmlowp's RoundingDivideByPOT gets an exponent above 31,
    which x86 runs with a 32-bit mask of all ones and a shift count taken mod 32, giving zero point + 1."""
    a, b = np.array([-3, -3, -3, 5], np.int8), np.array([5, 100, -60, 5], np.int8)
    ours = _binary("DIV", a, b, _q((4,), "INT8", 0.01, -3), _q((4,), "INT8", 0.2, 4), _q((4,), "INT8", 1.5, 9))
    np.testing.assert_array_equal(ours[0][:3], [10, 10, 10])


def test_div_int8_every_pair():
    a = np.repeat(np.arange(-128, 128), 255).astype(np.int8)
    b = np.tile(np.delete(np.arange(-128, 128), 128 + 4), 256).astype(np.int8)
    # (0.05, 0.02, 0.5): the multiplier is 0.05f / (0.02f * 0.5f), exactly 5 in float but not in double.
    for q in [(0.1, 0, 0.05, 4, 0.2, 1), (0.01, -3, 0.2, 4, 1.5, 9), (0.05, -10, 0.02, 4, 0.5, -3)]:
        s1, z1, s2, z2, so, zo = q
        _binary("DIV", a, b, _q(a.shape, "INT8", s1, z1), _q(b.shape, "INT8", s2, z2), _q(a.shape, "INT8", so, zo))


def _floor_operands(type_name: str, sa, sb):
    """Dividends of both signs and non-zero divisors of both signs, for FLOOR_DIV and FLOOR_MOD."""
    if type_name == "FLOAT32":
        a = (RNG.standard_normal(sa) * 20).astype(np.float32)
        b = RNG.uniform(0.5, 4, sb).astype(np.float32) * np.where(RNG.random(sb) < 0.5, -1, 1).astype(np.float32)
    else:
        dtype = np.dtype(type_name.lower())
        a = _ints(sa, dtype, -100, 100)
        b = _ints(sb, dtype, 1, 9) * np.where(RNG.random(sb) < 0.5, -1, 1).astype(dtype)
    return a, b


@pytest.mark.parametrize("type_name,version", [("FLOAT32", 2), ("INT32", 1), ("INT16", 3), ("INT8", 3)])
@pytest.mark.parametrize("sa,sb", BROADCASTS[:4], ids=str)
def test_floor_div(type_name, version, sa, sb):
    a, b = _floor_operands(type_name, sa, sb)
    _binary("FLOOR_DIV", a, b, Spec(sa, type_name), Spec(sb, type_name), Spec(_out_shape(sa, sb), type_name),
            version=version)


@pytest.mark.parametrize("type_name,version", [("FLOAT32", 1), ("INT32", 1), ("INT64", 1), ("INT16", 2), ("INT8", 2)])
@pytest.mark.parametrize("sa,sb", BROADCASTS[:4], ids=str)
def test_floor_mod(type_name, version, sa, sb):
    a, b = _floor_operands(type_name, sa, sb)
    _binary("FLOOR_MOD", a, b, Spec(sa, type_name), Spec(sb, type_name), Spec(_out_shape(sa, sb), type_name),
            version=version)


def test_floor_mod_float_by_zero_is_nan():
    a = np.array([1.5, -2.0, 0.0], np.float32)
    b = np.zeros(3, np.float32)
    ours = _binary("FLOOR_MOD", a, b, Spec((3,)), Spec((3,)), Spec((3,)))
    assert np.isnan(ours[0]).all()


# -- error paths -----------------------------------------------------------------------------


def _raises(model: bytes, inputs, match: str):
    with pytest.raises(KernelError, match=match):
        run_ours(model, inputs)


def test_error_shapes_do_not_broadcast():
    model = single_op_model("MAXIMUM", [Spec((2, 3)), Spec((4,))], [Spec((2, 3))])
    _raises(model, [np.zeros((2, 3), np.float32), np.zeros(4, np.float32)], r"\[2, 3\] and \[4\].*not broadcastable")


def test_error_input_types_differ():
    model = single_op_model("DIV", [Spec((3,)), Spec((3,), "INT32")], [Spec((3,))])
    _raises(model, [np.ones(3, np.float32), np.ones(3, np.int32)], "DIV: input types differ")


@pytest.mark.parametrize("op,type_name", [("SQUARE", "INT32"), ("POW", "INT8"), ("EXP", "INT32"),
                                          ("ELU", "INT16"), ("HARD_SWISH", "INT16"), ("SQUARED_DIFFERENCE", "INT16")])
def test_error_unsupported_type(op, type_name):
    dtype = np.dtype(type_name.lower())
    binary = op in ("POW", "SQUARED_DIFFERENCE")
    inputs = [Spec((4,), type_name, scale=0.1, zero_point=0)] * (2 if binary else 1)
    model = single_op_model(op, inputs, [Spec((4,), type_name, scale=0.1, zero_point=0)])
    _raises(model, [np.ones(4, dtype)] * len(inputs), f"{op}: type {type_name} is not supported")


def test_error_quantized_input_without_scale():
    model = single_op_model("EXP", [Spec((4,), "INT8")], [Spec((4,), "INT8")], version=2)
    _raises(model, [np.ones(4, np.int8)], "EXP: INT8 tensor .* needs per-tensor quantization")


def test_error_int16_nonzero_zero_point():
    model = single_op_model("EXP", [_q((4,), "INT16", 0.001, 3)], [_q((4,), "INT16", 0.001, 0)], version=2)
    _raises(model, [np.ones(4, np.int16)], "EXP: INT16 tensor .* needs zero point 0")


def test_error_sqrt_of_negative_quantized_input():
    model = single_op_model("SQRT", [_q((4,), scale=0.1, zero_point=0)], [_q((4,), scale=0.1)], version=2)
    _raises(model, [np.array([1, 2, -3, 4], np.int8)], "SQRT: .*negative")


def test_error_rsqrt_below_zero_point():
    model = single_op_model("RSQRT", [_q((4,), scale=0.1, zero_point=5)], [_q((4,), scale=0.1)], version=2)
    _raises(model, [np.array([6, 7, 4, 9], np.int8)], "RSQRT: .*below its zero point")


def test_rsqrt_int8_zero_point_at_the_lowest_value_accepts_every_input():
    model = single_op_model("RSQRT", [_q((256,), scale=0.1, zero_point=-128)], [_q((256,), scale=0.1)], version=2)
    check_against_litert(model, [_all_int8()])


@pytest.mark.parametrize("op,type_name", [("DIV", "INT32"), ("FLOOR_DIV", "INT32"), ("FLOOR_DIV", "FLOAT32"),
                                          ("FLOOR_MOD", "INT32")])
def test_error_division_by_zero(op, type_name):
    dtype = np.dtype(type_name.lower())
    model = single_op_model(op, [Spec((3,), type_name), Spec((3,), type_name)], [Spec((3,), type_name)])
    _raises(model, [np.ones(3, dtype), np.array([1, 0, 2], dtype)], f"{op}: division by zero")


def test_error_quantized_div_by_zero_point():
    model = single_op_model("DIV", [_q((2,)), _q((2,), zero_point=3)], [_q((2,))])
    _raises(model, [np.array([1, 2], np.int8), np.array([3, 5], np.int8)], "DIV: division by zero")


def test_error_pow_negative_int_exponent():
    model = single_op_model("POW", [Spec((2,), "INT32"), Spec((2,), "INT32")], [Spec((2,), "INT32")])
    _raises(model, [np.array([2, 3], np.int32), np.array([1, -1], np.int32)], "POW: negative exponents")


def test_error_prelu_alpha_larger_than_input():
    alpha = const(np.ones((2, 3), np.float32))
    model = single_op_model("PRELU", [Spec((3,)), alpha], [Spec((3,))])
    _raises(model, [np.ones(3, np.float32)], r"PRELU: alpha shape \[2, 3\]")


def test_error_prelu_alpha_type():
    alpha = const(np.ones((3,), np.float32))
    model = single_op_model("PRELU", [_q((3,)), alpha], [_q((3,))])
    _raises(model, [np.ones(3, np.int8)], "PRELU: a INT8 input needs a INT8 alpha, got FLOAT32")


def test_error_output_type_mismatch():
    model = single_op_model("LEAKY_RELU", [Spec((3,))], [Spec((3,), "INT32")], alpha=0.1)
    _raises(model, [np.ones(3, np.float32)], "LEAKY_RELU: output type INT32 differs from input type FLOAT32")


def test_error_squared_difference_output_multiplier_out_of_range():
    model = single_op_model("SQUARED_DIFFERENCE", [_q((2,), scale=1.0), _q((2,), scale=1.0)],
                            [_q((2,), scale=1e-6)], version=2)
    _raises(model, [np.ones(2, np.int8)] * 2, "SQUARED_DIFFERENCE: the quantized rescaling multiplier")


# -- nodes and whole models from the converter's fixtures ------------------------------------

ISSUE_OPS = {"PRELU", "LEAKY_RELU", "HARD_SWISH", "GELU", "ELU", "EXP", "LOG", "SQRT", "RSQRT", "POW", "SQUARE",
             "SQUARED_DIFFERENCE", "ABS", "NEG", "MINIMUM", "MAXIMUM", "DIV", "FLOOR_DIV", "FLOOR_MOD", "EQUAL",
             "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT",
             "SELECT", "SELECT_V2", "CAST"}
FIXTURE_MODELS = ["transformer_block_float", "transformer_block_int8", "lstm_gru_float"]


def _fixture_nodes():
    for name in FIXTURE_MODELS:
        path = FIXTURES / f"{name}.tflite"
        if not path.exists():
            continue
        model = load_model(path.read_bytes())
        for g, sg in enumerate(model.subgraphs):
            for n, op in enumerate(sg.operators):
                if op.op in ISSUE_OPS:
                    yield pytest.param(name, g, n, id=f"{name}-{g}-{n}-{op.op}-v{op.version}")


def _fixture_spec(model, g: int, index: int, with_data: bool) -> Spec:
    t = model.subgraphs[g].tensors[index]
    q = t.quantization if t.quantization is not None and t.quantization.scales else None
    return Spec(t.shape, t.type, model.constant(g, index) if with_data else None,
                q.scales if q else None, q.zero_points if q else None, q.quantized_dimension if q else 0)


@pytest.mark.slow
@pytest.mark.parametrize("name,g,n", list(_fixture_nodes()))
def test_fixture_node_alone(name, g, n):
    """Each node of these ops in the converter's models, with its real shapes, types, scales and version."""
    model = load_model((FIXTURES / f"{name}.tflite").read_bytes())
    op = model.subgraphs[g].operators[n]
    single = single_op_model(op.op, [_fixture_spec(model, g, i, True) for i in op.inputs],
                             [_fixture_spec(model, g, o, False) for o in op.outputs], version=op.version,
                             **dict(op.options or {}))
    inputs = random_inputs(Interpreter(model_content=single).get_input_details(), seed=n)
    if op.op == "RSQRT" and inputs[0].dtype == np.int8:  # its input is a mean of squares: >= zero point
        zp = _fixture_spec(model, g, op.inputs[0], False).zero_point[0]
        inputs[0] = np.maximum(inputs[0], zp).astype(np.int8)
    check_against_litert(single, inputs)


@pytest.mark.parametrize("name", FIXTURE_MODELS)
def test_fixture_model_end_to_end(name):
    """Whole converter models using these ops, once every op they use has a kernel."""
    data = (FIXTURES / f"{name}.tflite").read_bytes()
    model = load_model(data)
    resolver = BuiltinOpResolver()
    missing = sorted({f"{o.op} v{o.version}" for sg in model.subgraphs for o in sg.operators
                      if o.op != "CUSTOM" and resolver.find_op(o.op, o.version) is None})
    assert not missing, f"no kernel for {', '.join(missing)}"
    inputs = random_inputs(Interpreter(model_content=data).get_input_details(), seed=0)
    check_against_litert(data, inputs)


def test_error_hard_swish_output_scale_too_fine():
    # HardSwishPrepare ensures the output multiplier (input_scale / 128 / output_scale) is below 1.
    model = single_op_model("HARD_SWISH", [_q((4,), scale=1.0)], [_q((4,), scale=0.001)])
    _raises(model, [np.ones(4, np.int8)], "HARD_SWISH: input scale 1.0 is too large for output scale 0.001")
