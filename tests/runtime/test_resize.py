"""RESIZE_BILINEAR against LiteRT: float32, int8 (integer kernel) and uint8 (float kernel)."""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, single_op_model

from accelsim.runtime.errors import KernelError, OpResolutionError
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.resolver import BuiltinOpResolver

QUANT = {"FLOAT32": {}, "INT8": {"scale": 0.1, "zero_point": -3}, "UINT8": {"scale": 0.1, "zero_point": 120}}
MODES = {"default": (False, False), "align_corners": (True, False), "half_pixel": (False, True)}
SIZES = [(4, 5, 8, 10), (4, 5, 7, 3), (3, 3, 9, 9), (5, 7, 2, 3), (1, 1, 3, 4), (6, 6, 6, 6), (7, 5, 11, 13),
         (2, 3, 16, 24)]


def resize_model(typ, in_hw, out_hw, mode, channels=3, batch=2, size_spec=None) -> bytes:
    align_corners, half_pixel = MODES[mode]
    version = 3 if half_pixel else (2 if typ == "INT8" else 1)
    quant = QUANT[typ]
    size = size_spec or const(np.array(out_hw, np.int32))
    return single_op_model("RESIZE_BILINEAR", [Spec((batch, *in_hw, channels), typ, **quant), size],
                           [Spec((batch, *out_hw, channels), typ, **quant)], version=version,
                           align_corners=align_corners, half_pixel_centers=half_pixel)


@pytest.mark.slow
@pytest.mark.parametrize("typ", ["FLOAT32", "INT8", "UINT8"])
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: "{}x{}to{}x{}".format(*s))
def test_resize_bilinear(typ, mode, sizes):
    # uint8 with 8 channels and an exact 8x upscale also covers the optimized 8x8 uint8 kernel.
    model = resize_model(typ, sizes[:2], sizes[2:], mode, channels=8 if typ == "UINT8" else 3)
    for seed in range(2):
        check_against_litert(model, seed=seed)


@pytest.mark.slow
def test_resize_random_sizes_sweep():
    rng = np.random.default_rng(1)
    for trial in range(60):
        typ = ("INT8", "UINT8", "FLOAT32")[trial % 3]
        in_h, in_w, out_h, out_w = (int(v) for v in rng.integers(1, 40, 4))
        mode = list(MODES)[int(rng.integers(0, 3))]
        check_against_litert(resize_model(typ, (in_h, in_w), (out_h, out_w), mode, channels=4, batch=1), seed=trial)


def test_int8_resize_uses_integer_weights():
    # [-128, 5] to width 5: weights in 1024ths (scale 410/1024) give -21 where float32 gives -21.6 -> -22.
    model = resize_model("INT8", (1, 2), (1, 5), "default", channels=1, batch=1)
    x = np.array([-128, 5], np.int8).reshape(1, 1, 2, 1)
    ours = check_against_litert(model, [x])[0]
    assert ours.reshape(-1).tolist() == [-128, -75, -21, 5, 5]


def test_resize_size_from_graph_input():
    model = resize_model("FLOAT32", (3, 4), (1, 1), "half_pixel", size_spec=Spec((2,), "INT32"))
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 3)).astype(np.float32)
    ours = check_against_litert(model, [x, np.array([5, 7], np.int32)])
    assert ours[0].shape == (2, 5, 7, 3)


def test_registered_versions():
    # op_version.cc: v2 int8, v3 half_pixel_centers; v4 (int16) is not implemented.
    assert BuiltinOpResolver().builtin_versions("RESIZE_BILINEAR") == [1, 2, 3]
    model = single_op_model("RESIZE_BILINEAR", [Spec((1, 2, 2, 1), "INT16", scale=1.0),
                                                const(np.array([4, 4], np.int32))],
                            [Spec((1, 4, 4, 1), "INT16", scale=1.0)], version=4)
    with pytest.raises(OpResolutionError, match="'RESIZE_BILINEAR' version '4'"):
        Interpreter(model_content=model)


def _prepare(model: bytes) -> None:
    Interpreter(model_content=model).allocate_tensors()


def test_align_corners_with_half_pixel_raises():
    model = single_op_model("RESIZE_BILINEAR", [Spec((1, 2, 2, 1)), const(np.array([4, 4], np.int32))],
                            [Spec((1, 4, 4, 1))], version=3, align_corners=True, half_pixel_centers=True)
    with pytest.raises(KernelError, match="if half_pixel_centers is True, align_corners must be False"):
        _prepare(model)


@pytest.mark.parametrize(("size", "message"), [
    (np.array([4, 4, 1], np.int32), "size must be an INT32 vector of 2"),
    (np.array([4, 4], np.int64), "size must be an INT32 vector of 2"),
    (np.array([0, 4], np.int32), "output size must be positive"),
])
def test_bad_size_raises(size, message):
    model = single_op_model("RESIZE_BILINEAR", [Spec((1, 2, 2, 1)), const(size)], [Spec((1, 4, 4, 1))])
    with pytest.raises(KernelError, match=message):
        _prepare(model)


def test_non_4d_input_raises():
    model = single_op_model("RESIZE_BILINEAR", [Spec((2, 2, 1)), const(np.array([4, 4], np.int32))],
                            [Spec((4, 4, 1))])
    with pytest.raises(KernelError, match="input must be 4-D"):
        _prepare(model)


def test_int8_resize_rounds_ties_away_from_zero():
    # Width 2 -> 4 puts output 1 halfway: -0.5 -> -1 and -1.5 -> -2 (the double-rounding build, not half-up).
    model = resize_model("INT8", (1, 2), (1, 4), "default", channels=2, batch=1)
    x = np.array([[-1, -3], [0, 0]], np.int8).reshape(1, 1, 2, 2)
    ours = check_against_litert(model, [x])[0]
    assert ours[0, 0, 1].tolist() == [-1, -2]


# ---------------------------------------------------------------------------------------------
# RESIZE_NEAREST_NEIGHBOR

NEAREST_MODES = {**MODES, "both": (True, True)}
NEAREST_QUANT = {**QUANT, "INT16": {"scale": 0.1, "zero_point": 0}, "INT32": {}}


def nearest_model(typ, in_hw, out_hw, mode, channels=3, batch=2, size_spec=None) -> bytes:
    align_corners, half_pixel = NEAREST_MODES[mode]
    version = 4 if typ == "INT16" else 3 if (align_corners or half_pixel) else 2 if typ == "INT8" else 1
    quant = NEAREST_QUANT[typ]
    size = size_spec or const(np.array(out_hw, np.int32))
    return single_op_model("RESIZE_NEAREST_NEIGHBOR", [Spec((batch, *in_hw, channels), typ, **quant), size],
                           [Spec((batch, *out_hw, channels), typ, **quant)], version=version,
                           align_corners=align_corners, half_pixel_centers=half_pixel)


@pytest.mark.slow
@pytest.mark.parametrize("typ", ["FLOAT32", "INT8", "UINT8", "INT16", "INT32"])
@pytest.mark.parametrize("mode", list(NEAREST_MODES))
@pytest.mark.parametrize("sizes", [*SIZES, (16, 16, 64, 64), (5, 13, 21, 8)], ids=lambda s: "{}x{}to{}x{}".format(*s))
def test_resize_nearest(typ, mode, sizes):
    out = check_against_litert(nearest_model(typ, sizes[:2], sizes[2:], mode))[0]
    assert out.shape == (2, *sizes[2:], 3)


@pytest.mark.parametrize("typ", ["FLOAT32", "INT8"])
def test_resize_nearest_fixed_point_scale_for_8_bit(typ):
    # 2 -> 82 columns: column 41 floors 41 * (2/82) = 0.99999994 to 0 in float, but the 8-bit kernel's
    # 16.16 fixed-point scale (2 << 16) / 82 + 1 lands on 1.
    model = nearest_model(typ, (1, 2), (1, 82), "default", channels=1, batch=1)
    x = np.array([0, 1], dtype=np.float32 if typ == "FLOAT32" else np.int8).reshape(1, 1, 2, 1)
    out = check_against_litert(model, [x])[0]
    assert out[0, 0, 41, 0] == (0 if typ == "FLOAT32" else 1)


def test_resize_nearest_size_from_graph_input():
    model = nearest_model("FLOAT32", (3, 4), (6, 8), "half_pixel", size_spec=Spec((2,), "INT32"))
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 3)).astype(np.float32)
    ours = check_against_litert(model, [x, np.array([7, 5], np.int32)])
    assert ours[0].shape == (2, 7, 5, 3)


def test_resize_nearest_registered_versions():
    assert BuiltinOpResolver().builtin_versions("RESIZE_NEAREST_NEIGHBOR") == [1, 2, 3, 4]


def test_resize_nearest_bool_raises():
    model = nearest_model("FLOAT32", (2, 2), (4, 4), "default")
    bad = single_op_model("RESIZE_NEAREST_NEIGHBOR", [Spec((1, 2, 2, 1), "BOOL"), const(np.array([4, 4], np.int32))],
                          [Spec((1, 4, 4, 1), "BOOL")])
    _prepare(model)
    with pytest.raises(KernelError, match="type BOOL is not supported"):
        _prepare(bad)
