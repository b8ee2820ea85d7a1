"""MediaPipe's custom ops, as its released models use them: `--ops accelsim.ops.mediapipe`.

Each op follows MediaPipe's CPU kernel (google/mediapipe, mediapipe/util/tflite/operations/<file>.cc,
cited per op) and the option parsers of TFLite's GPU delegate that those kernels call
(tensorflow/lite/delegates/gpu/common/mediapipe/*.cc). Every op has a plain reference function of
NumPy arrays and parsed options (the specification), a node-level invoke, and a work hook, so cost
models count it like a builtin. Versions are registered exactly as MediaPipe's resolver and
registrations do; another version is refused by the interpreter with the versions that exist.

Options come in two forms, as in MediaPipe: Convolution2DTransposeBias, MaxPoolingWithArgmax2D and
MaxUnpooling2D reinterpret their custom options as TFLite's C structs (TfLiteTransposeConvParams,
TfLitePoolParams: little-endian int32 fields, in order); the other three read a FlexBuffer map.

Only float32 exists for all six, as in MediaPipe.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from accelsim.runtime.custom import decode_options
from accelsim.runtime.errors import KernelError
from accelsim.runtime.registration import Registration
from accelsim.runtime.work import ConvGeometry, Gemm, measured

__all__ = ["OPS", "conv2d_transpose_bias", "landmarks_to_matrix_v1", "landmarks_to_matrix_v2", "max_pool_with_argmax",
           "max_unpooling", "register", "transform_landmarks", "transform_tensor_bilinear"]

# TfLitePadding (tensorflow/lite/core/c/builtin_op_data.h): kTfLitePaddingSame = 1, kTfLitePaddingValid = 2.
SAME, VALID = 1, 2
_PADDINGS = {SAME: "SAME", VALID: "VALID"}
# TfLiteFusedActivation -> the float clamp CalculateActivationRange gives (kernels/internal/common.h);
# codes 4-6 (tanh, sign bit, sigmoid) clamp nothing there.
_ACTIVATION_RANGES = {1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}
_LOWEST = np.finfo(np.float32).min  # std::numeric_limits<float>::lowest(), MaxPoolArgmax's start value


def _check(condition: bool, op: str, message: str) -> None:
    if not condition:
        raise KernelError(f"{op}: {message}")


def _f32(context, node, op: str, inputs: int, outputs: int) -> None:
    """MediaPipe's Prepare checks: the counts of inputs and outputs, and float32 data throughout."""
    _check(len(node.inputs) == inputs and len(node.outputs) == outputs, op,
           f"takes {inputs} inputs and {outputs} outputs, got {len(node.inputs)} and {len(node.outputs)}")
    for t in [context.input(node, i) for i in range(inputs)] + [context.output(node, i) for i in range(outputs)]:
        _check(t is not None and t.type == "FLOAT32", op, f"supports float32 tensors only, got "
               f"{'a missing tensor' if t is None else t.type}")


def _rank(t, rank: int, op: str, what: str) -> None:
    _check(len(t.shape) == rank, op, f"{what} must have rank {rank}, got shape {list(t.shape)}")


def _ints(buffer: bytes | None, count: int, op: str, struct_name: str, fields: str) -> tuple[int, ...]:
    """The first `count` int32 fields of a C struct MediaPipe reads from the custom options."""
    data = bytes(buffer or b"")
    _check(len(data) >= 4 * count, op, f"custom options are {len(data)} bytes; the kernel reads a {struct_name} "
           f"({fields}: {4 * count} bytes of little-endian int32)")
    return struct.unpack_from(f"<{count}i", data)


def _padding_name(code: int, op: str) -> str:
    _check(code in _PADDINGS, op, f"padding {code} is neither SAME (1) nor VALID (2)")
    return _PADDINGS[code]


# -- Convolution2DTransposeBias (transpose_conv_bias.cc) ------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TransposeConvParams:
    """TfLiteTransposeConvParams as transpose_conv_bias.cc reads it: padding, stride_width, stride_height."""

    padding: str
    stride_h: int
    stride_w: int


def transpose_conv_params(buffer: bytes | None) -> TransposeConvParams:
    op = "Convolution2DTransposeBias"
    padding, stride_w, stride_h = _ints(buffer, 3, op, "TfLiteTransposeConvParams", "padding, stride_width, "
                                        "stride_height")
    _check(stride_w > 0 and stride_h > 0, op, f"strides must be positive, got stride_h={stride_h} stride_w={stride_w}")
    return TransposeConvParams(padding=_padding_name(padding, op), stride_h=stride_h, stride_w=stride_w)


def transpose_conv_padding(params: TransposeConvParams, in_hw, kernel_hw) -> tuple[tuple[int, int], tuple[int, int]]:
    """(output height and width, padding cut off the top and left), as Prepare and Eval compute them.

    SAME: total padding max(0, k - (in - 1) % stride - 1) per axis, half of it (rounded down) before;
    VALID: none. Output = stride * (in - 1) + k - total.
    """
    out, before = [], []
    for size, k, s in zip(in_hw, kernel_hw, (params.stride_h, params.stride_w)):
        total = max(0, k - (size - 1) % s - 1) if params.padding == "SAME" else 0
        out.append(s * (size - 1) + k - total)
        before.append(total // 2)
    return (out[0], out[1]), (before[0], before[1])


def conv2d_transpose_bias(x: np.ndarray, w: np.ndarray, bias: np.ndarray, params: TransposeConvParams) -> np.ndarray:
    """Convolution2DTransposeBias's specification (TransposeConvBias in transpose_conv_bias.cc).

    Every output starts at its channel's bias; input pixel (y, x) then adds x[y, x] . w[o, ky, kx] to
    output (y * stride_h - pad_top + ky, x * stride_w - pad_left + kx) for every kernel tap that lands
    inside the output (taps that fall off are dropped, not wrapped). Weights are OHWI.
    """
    n, h, wd, _ = x.shape
    out_c, kh, kw, _ = w.shape
    (oh, ow), (top, left) = transpose_conv_padding(params, (h, wd), (kh, kw))
    sy, sx = params.stride_h, params.stride_w
    # A buffer big enough for every tap, cropped to the output: what falls outside it is dropped.
    full = np.zeros((n, max((h - 1) * sy + kh, top + oh), max((wd - 1) * sx + kw, left + ow), out_c), np.float32)
    full[:, top:top + oh, left:left + ow] = bias
    for ky, kx in np.ndindex(kh, kw):  # one kernel tap at a time scatters every input pixel
        tap = np.einsum("nyxc,oc->nyxo", x, w[:, ky, kx, :])
        full[:, ky:ky + (h - 1) * sy + 1:sy, kx:kx + (wd - 1) * sx + 1:sx] += tap
    return np.ascontiguousarray(full[:, top:top + oh, left:left + ow])


def conv2d_transpose_bias_fast(x: np.ndarray, w: np.ndarray, bias: np.ndarray,
                               params: TransposeConvParams) -> np.ndarray:
    """`conv2d_transpose_bias` with one GEMM: every pixel times every tap at once, then the scatter."""
    n, h, wd, c = x.shape
    out_c, kh, kw, _ = w.shape
    (oh, ow), (top, left) = transpose_conv_padding(params, (h, wd), (kh, kw))
    sy, sx = params.stride_h, params.stride_w
    taps = (x.reshape(-1, c) @ w.transpose(3, 1, 2, 0).reshape(c, -1)).reshape(n, h, wd, kh, kw, out_c)
    full = np.zeros((n, max((h - 1) * sy + kh, top + oh), max((wd - 1) * sx + kw, left + ow), out_c), np.float32)
    for ky, kx in np.ndindex(kh, kw):
        full[:, ky:ky + (h - 1) * sy + 1:sy, kx:kx + (wd - 1) * sx + 1:sx] += taps[:, :, :, ky, kx]
    return np.ascontiguousarray(full[:, top:top + oh, left:left + ow] + bias)


def _tcb_prepare(context, node) -> None:
    op = "Convolution2DTransposeBias"
    _f32(context, node, op, 3, 1)
    x, w, b = (context.input(node, i) for i in range(3))
    for t, rank, what in ((x, 4, "input"), (w, 4, "weights (OHWI)"), (b, 1, "bias")):
        _rank(t, rank, op, what)
    _check(x.shape[3] == w.shape[3], op, f"input has {x.shape[3]} channels but the weights expect {w.shape[3]}")
    _check(b.shape[0] == w.shape[0], op, f"bias has {b.shape[0]} values for {w.shape[0]} output channels")
    (oh, ow), _ = transpose_conv_padding(node.user_data, x.shape[1:3], w.shape[1:3])
    context.resize_tensor(context.output(node, 0), (x.shape[0], oh, ow, w.shape[0]))


def _tcb(fn):
    def run(context, node) -> None:
        x, w, b = (context.input(node, i).data for i in range(3))
        context.output(node, 0).data = fn(x, w, b, node.user_data)

    return run


def _tcb_work(context, node):
    """As TRANSPOSE_CONV: every input pixel through the whole kernel, N*H*W*Cin*KH*KW*Cout MACs."""
    x, w, out = context.input(node, 0), context.input(node, 1), context.output(node, 0)
    n, h, wd, c = map(int, x.shape)
    oc, kh, kw = map(int, w.shape[:3])
    p = node.user_data
    g = ConvGeometry(n, h, wd, c, kh, kw, p.stride_h, p.stride_w, 1, 1, int(out.shape[1]), int(out.shape[2]), oc,
                     transposed=True)
    gemm = Gemm(n * h * wd, c, kh * kw * oc)
    return measured(context, node, "gemm", gemm.macs, conv=g, gemm=gemm)


# -- MaxPoolingWithArgmax2D (max_pool_argmax.cc) and MaxUnpooling2D (max_unpooling.cc) ------------


@dataclass(frozen=True, kw_only=True)
class PoolParams:
    """TfLitePoolParams as both kernels read it: padding, stride_width, stride_height, filter_width,
    filter_height, activation."""

    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    activation: int


def pool_params(buffer: bytes | None, op: str) -> PoolParams:
    padding, sw, sh, fw, fh, act = _ints(buffer, 6, op, "TfLitePoolParams", "padding, stride_width, stride_height, "
                                         "filter_width, filter_height, activation")
    _check(min(sw, sh, fw, fh) > 0, op, f"strides and filter sizes must be positive, got stride {sh}x{sw}, "
           f"filter {fh}x{fw}")
    return PoolParams(padding=_padding_name(padding, op), stride_h=sh, stride_w=sw, filter_h=fh, filter_w=fw,
                      activation=act)


def _pad(stride: int, in_size: int, filter_size: int, out_size: int) -> int:
    """ComputePadding (kernels/padding.h), dilation 1: half the padding that makes out_size fit, at least 0."""
    return max(0, ((out_size - 1) * stride + filter_size - in_size) // 2)


def _pool_out(size: int, filter_size: int, stride: int, padding: str) -> int:
    """max_pool_argmax.cc compute_out_size: SAME ceil(size / stride), VALID (size - filter + stride) / stride."""
    return (size + stride - 1) // stride if padding == "SAME" else (size - filter_size + stride) // stride


def max_pool_with_argmax(x: np.ndarray, p: PoolParams) -> tuple[np.ndarray, np.ndarray]:
    """MaxPoolingWithArgmax2D's specification (MaxPoolArgmax in max_pool_argmax.cc).

    Each output is the largest in-bounds input of its window, scanned row by row from float's lowest
    value with a strict '>' (the first maximum wins; NaN never does), then clamped by the activation.
    Its index is filter_y * filter_width + filter_x within the window, stored as a float plus 0.1 so
    that a truncating cast gives the integer back.
    """
    n, h, wd, c = x.shape
    oh, ow = _pool_out(h, p.filter_h, p.stride_h, p.padding), _pool_out(wd, p.filter_w, p.stride_w, p.padding)
    top, left = _pad(p.stride_h, h, p.filter_h, oh), _pad(p.stride_w, wd, p.filter_w, ow)
    best = np.full((n, oh, ow, c), _LOWEST, np.float32)
    index = np.zeros((n, oh, ow, c), np.int64)
    rows = np.arange(oh) * p.stride_h - top
    cols = np.arange(ow) * p.stride_w - left
    for fy, fx in np.ndindex(p.filter_h, p.filter_w):  # the window's taps in the kernel's scan order
        y, xx = rows + fy, cols + fx
        inside = ((y >= 0) & (y < h))[:, None] & ((xx >= 0) & (xx < wd))[None, :]
        candidate = x[:, np.clip(y, 0, h - 1)][:, :, np.clip(xx, 0, wd - 1)]
        take = inside[None, :, :, None] & (candidate > best)
        best = np.where(take, candidate, best)
        index = np.where(take, fy * p.filter_w + fx, index)
    lo, hi = _ACTIVATION_RANGES.get(p.activation, (-np.inf, np.inf))
    return np.clip(best, lo, hi).astype(np.float32), (index.astype(np.float32) + np.float32(0.1))


def _argmax_prepare(context, node) -> None:
    op = "MaxPoolingWithArgmax2D"
    _f32(context, node, op, 1, 2)
    x, p = context.input(node, 0), node.user_data
    _rank(x, 4, op, "input")
    n, h, wd, c = x.shape
    shape = (n, _pool_out(h, p.filter_h, p.stride_h, p.padding), _pool_out(wd, p.filter_w, p.stride_w, p.padding), c)
    _check(min(shape) > 0, op, f"a {p.filter_h}x{p.filter_w} {p.padding} window leaves no output of input "
           f"{list(x.shape)}")
    context.resize_tensor(context.output(node, 0), shape)
    context.resize_tensor(context.output(node, 1), shape)


def _argmax_invoke(context, node) -> None:
    pooled, indices = max_pool_with_argmax(context.input(node, 0).data, node.user_data)
    context.output(node, 0).data, context.output(node, 1).data = pooled, indices


def _window_work(context, node):
    """One compare per window tap of every output element (as MAX_POOL_2D)."""
    p = node.user_data
    out = context.output(node, 0)
    return measured(context, node, "window", int(np.prod(out.shape)) * p.filter_h * p.filter_w)


def max_unpooling(x: np.ndarray, indices: np.ndarray, p: PoolParams) -> np.ndarray:
    """MaxUnpooling2D's specification (MaxUnpooling in max_unpooling.cc).

    The output, filter_h x filter_w times the input's height and width, starts at zero; input (y, x)
    is written to (y * stride_h - pad_top + idx // filter_w, x * stride_w - pad_left + idx % filter_w)
    where idx is its index truncated to an integer. Inputs are visited in memory order, so of two
    that land on one output the later one stays.

    Raises:
        KernelError: an index sends a value outside the output (out of bounds in the C++ kernel).
    """
    n, h, wd, c = x.shape
    oh, ow = h * p.filter_h, wd * p.filter_w
    top, left = _pad(p.stride_h, oh, p.filter_h, h), _pad(p.stride_w, ow, p.filter_w, wd)
    idx = np.trunc(indices).astype(np.int64)  # C++'s float -> int conversion truncates
    # C++ % and / truncate toward zero; for the non-negative indices argmax writes they are divmod's
    dy, dx = np.fix(idx / p.filter_w).astype(np.int64), np.fmod(idx, p.filter_w)
    b, y, xx, ch = np.indices(x.shape)
    oy, ox = y * p.stride_h - top + dy, xx * p.stride_w - left + dx
    bad = (oy < 0) | (oy >= oh) | (ox < 0) | (ox >= ow)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise KernelError(f"MaxUnpooling2D: index {float(indices[where]):g} at input {list(where)} lands outside the "
                          f"{oh}x{ow} output")
    flat = ((b * oh + oy) * ow + ox) * c + ch
    out = np.zeros(n * oh * ow * c, np.float32)
    # the last writer wins: keep each target's last occurrence in memory order
    order = flat.reshape(-1)[::-1]
    _, last = np.unique(order, return_index=True)
    out[order[last]] = x.reshape(-1)[::-1][last]
    return out.reshape(n, oh, ow, c)


def _unpool_prepare(context, node) -> None:
    op = "MaxUnpooling2D"
    _f32(context, node, op, 2, 1)
    x, idx, p = context.input(node, 0), context.input(node, 1), node.user_data
    _rank(x, 4, op, "input")
    _rank(idx, 4, op, "indices")
    _check(tuple(idx.shape) == tuple(x.shape), op, f"indices {list(idx.shape)} must match input {list(x.shape)}")
    n, h, wd, c = x.shape
    context.resize_tensor(context.output(node, 0), (n, h * p.filter_h, wd * p.filter_w, c))


def _unpool_invoke(context, node) -> None:
    context.output(node, 0).data = max_unpooling(context.input(node, 0).data, context.input(node, 1).data,
                                                 node.user_data)


def _scatter_work(context, node):
    """Nothing computed but an address per input element: every byte moves once (a scatter)."""
    return measured(context, node, "move", 0)


# -- TransformTensorBilinear v2 (transform_tensor_bilinear.cc) ------------------------------------


@dataclass(frozen=True, kw_only=True)
class BilinearParams:
    """ParseTransformTensorBilinearV2Attributes: output_height and output_width (align_corners is always true)."""

    output_h: int
    output_w: int


def bilinear_params(buffer: bytes | None) -> BilinearParams:
    op = "TransformTensorBilinear"
    m = _flex(buffer, op)
    h, w = m.get("output_height"), m.get("output_width")
    _check(all(isinstance(v, int) and v > 0 for v in (h, w)), op, "custom options need positive integers "
           f"output_height and output_width, got output_height={h!r} output_width={w!r}")
    return BilinearParams(output_h=h, output_w=w)


def _flex(buffer: bytes | None, op: str) -> dict:
    try:
        return decode_options(buffer)
    except ValueError as exc:
        raise KernelError(f"{op}: {exc}") from None


def _affine_rows(matrix: np.ndarray, op: str) -> tuple[np.ndarray, np.ndarray]:
    """The first two rows of the 4x4 transform (x and y): the kernels read the first 8 floats only."""
    flat = np.asarray(matrix, np.float32).reshape(-1)
    _check(flat.size >= 8, op, f"the transform matrix has {flat.size} values; the first two rows of a 4x4 need 8")
    return flat[:4].copy(), flat[4:8].copy()


def transform_tensor_bilinear(x: np.ndarray, matrix: np.ndarray, p: BilinearParams) -> np.ndarray:
    """TransformTensorBilinear v2's specification (TransformTensorBilinearV2 in transform_tensor_bilinear.cc).

    Output pixel (oy, ox) samples the first batch of `x` at (tx, ty) = rows 0 and 1 of the matrix times
    (ox, oy, 0, 1), after shifting each row's offset by half a pixel (m0 + m1) / 2 - 0.5 (pixel centres).
    Outside [0, W-1] x [0, H-1] it is 0; inside, the four neighbours (0 beyond the edge) are blended:
    rows by the fraction of tx, then columns by the fraction of ty.
    """
    _, h, w, _ = x.shape
    xt, yt = _affine_rows(matrix, "TransformTensorBilinear")
    # C++ adds a double expression to the float entry: computed in double, stored as float
    xt[3] = np.float32(np.float64(xt[3]) + np.float64(xt[0]) * 0.5 + np.float64(xt[1]) * 0.5 - 0.5)
    yt[3] = np.float32(np.float64(yt[3]) + np.float64(yt[0]) * 0.5 + np.float64(yt[1]) * 0.5 - 0.5)
    oy, ox = np.meshgrid(np.arange(p.output_h, dtype=np.float32), np.arange(p.output_w, dtype=np.float32),
                         indexing="ij")
    zero = np.float32(0)
    tx = xt[0] * ox + xt[1] * oy + xt[2] * zero + xt[3]  # DotProduct's order, in float
    ty = yt[0] * ox + yt[1] * oy + yt[2] * zero + yt[3]
    outside = (tx < 0) | (tx > w - 1) | (ty < 0) | (ty > h - 1)
    fx, fy = np.floor(tx), np.floor(ty)
    x0, y0 = fx.astype(np.int64), fy.astype(np.int64)
    image = x[0]

    def read(yy, xx):  # ReadValue: 0 outside the input
        inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        values = image[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
        return np.where(inside[..., None], values, 0).astype(np.float64)

    right = (tx - fx).astype(np.float64)[..., None]
    low = (ty - fy).astype(np.float64)[..., None]
    # `1.0 - contrib` is double in C++: each blend is computed in double and stored as float
    upper = ((1.0 - right) * read(y0, x0) + right * read(y0, x0 + 1)).astype(np.float32)
    lower = ((1.0 - right) * read(y0 + 1, x0) + right * read(y0 + 1, x0 + 1)).astype(np.float32)
    result = (low * lower + (1.0 - low) * upper).astype(np.float32)
    return np.where(outside[..., None], np.float32(0), result)[None]


def _bilinear_prepare(context, node) -> None:
    op = "TransformTensorBilinear"
    _f32(context, node, op, 2, 1)
    x, p = context.input(node, 0), node.user_data
    _rank(x, 4, op, "input")
    context.resize_tensor(context.output(node, 0), (1, p.output_h, p.output_w, x.shape[3]))


def _bilinear_invoke(context, node) -> None:
    context.output(node, 0).data = transform_tensor_bilinear(context.input(node, 0).data,
                                                             context.input(node, 1).data, node.user_data)


def _bilinear_work(context, node):
    """Four weighted taps per output element, as RESIZE_BILINEAR."""
    return measured(context, node, "elementwise", 4 * int(np.prod(context.output(node, 0).shape)))


# -- TransformLandmarks v1, v2 (transform_landmarks.cc) -------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LandmarksParams:
    """ParseTransformLandmarksV1Attributes: dimensions (default 3) and scale (default 1); v2 takes the
    dimensions from the last axis and scale 1."""

    dimensions: int = 3
    scale: float = 1.0


def landmarks_params(buffer: bytes | None) -> LandmarksParams:
    m = _flex(buffer, "TransformLandmarks")
    return LandmarksParams(dimensions=int(m.get("dimensions", 3)), scale=float(m.get("scale", 1.0)))


def transform_landmarks(landmarks: np.ndarray, matrix: np.ndarray, dimensions: int, scale: float = 1.0) -> np.ndarray:
    """TransformLandmarks' specification (TransformLandmarks v1, TransformLandmarksV2 in transform_landmarks.cc).

    Every landmark (`dimensions` consecutive values of the last axis) gets x' = m0 x + m1 y + m3 * scale and
    y' = m4 x + m5 y + m7 * scale (its z is taken as 0 in the product, and kept as it is for 3-D landmarks).
    """
    xt, yt = _affine_rows(matrix, "TransformLandmarks")
    xt[3] *= np.float32(scale)
    yt[3] *= np.float32(scale)
    points = np.asarray(landmarks, np.float32).reshape(*landmarks.shape[:-1], -1, dimensions)
    px, py, zero = points[..., 0], points[..., 1], np.float32(0)
    out = points.copy()
    out[..., 0] = xt[0] * px + xt[1] * py + xt[2] * zero + xt[3]  # DotProduct's order, in float
    out[..., 1] = yt[0] * px + yt[1] * py + yt[2] * zero + yt[3]
    return out.reshape(landmarks.shape)


def _landmarks_prepare(context, node) -> None:
    op = "TransformLandmarks"
    _f32(context, node, op, 2, 1)
    x, version = context.input(node, 0), node.registration.version
    _rank(x, 4 if version == 1 else 3, op, f"v{version} landmarks")
    # the kernels transform the first batch only; later ones would be left unwritten
    _check(x.shape[0] == 1, op, f"transforms one batch, got shape {list(x.shape)}")
    dims = node.user_data.dimensions if version == 1 else x.shape[-1]
    _check(dims in (2, 3), op, f"Incorrect dimensions size: {dims} (2 or 3)")
    _check(x.shape[-1] % dims == 0, op, f"last axis {x.shape[-1]} is not a whole number of {dims}-D landmarks")
    _check(node.user_data.scale != 0, op, "Incorrect scale value: 0")
    context.resize_tensor(context.output(node, 0), x.shape)


def _landmarks_invoke(context, node) -> None:
    x, p = context.input(node, 0), node.user_data
    dims = p.dimensions if node.registration.version == 1 else x.shape[-1]
    scale = p.scale if node.registration.version == 1 else 1.0
    context.output(node, 0).data = transform_landmarks(x.data, context.input(node, 1).data, dims, scale)


def _landmarks_work(context, node):
    """Two multiply-adds and an add per transformed coordinate: 4 ops per output element (an estimate)."""
    return measured(context, node, "elementwise", 4 * int(np.prod(context.output(node, 0).shape)))


# -- Landmarks2TransformMatrix v1, v2 (landmarks_to_transform_matrix.cc) --------------------------


def _pairs(values, op: str, key: str) -> tuple[tuple[int, int], ...]:
    """A flat list of indices as pairs; an odd last one is paired with itself (the parsers' rule)."""
    _check(isinstance(values, list | tuple) and all(isinstance(v, int) for v in values), op,
           f"custom option {key} must be a list of landmark indices, got {values!r}")
    pairs = [(values[i], values[i + 1]) for i in range(0, len(values) - 1, 2)]
    if len(values) % 2:
        pairs.append((values[-1], values[-1]))
    return tuple(pairs)


@dataclass(frozen=True, kw_only=True)
class MatrixParams:
    """Landmarks2TransformMatrix's options: v1 (Parse...V1Attributes) or v2 (Parse...V2Attributes) fields;
    a key that is absent reads as 0, as flexbuffers' AsInt32/AsFloat of a missing key do."""

    subset: tuple[tuple[int, int], ...]
    left: int
    right: int
    input_hw: tuple[int, int] = (0, 0)  # v1
    output_hw: tuple[int, int] = (0, 0)  # v1
    dimensions: int = 0  # v1
    landmarks_range: int = 0  # v1
    bbox_size_multiplier: float = 0.0  # v1
    target_rotation: float = 0.0  # v2, radians
    output_h: int = 0  # v2
    output_w: int = 0  # v2
    scale_x: float = 0.0  # v2
    scale_y: float = 0.0  # v2


def matrix_params(buffer: bytes | None, version: int) -> MatrixParams:
    op = "Landmarks2TransformMatrix"
    m = _flex(buffer, op)

    def hw(key):
        value = m.get(key, [0, 0])
        _check(isinstance(value, list | tuple) and len(value) >= 2, op, f"custom option {key} must be [h, w], "
               f"got {value!r}")
        return int(value[0]), int(value[1])

    if version == 1:
        return MatrixParams(subset=_pairs(m.get("subset", []), op, "subset"), left=int(m.get("left_rotation_idx", 0)),
                            right=int(m.get("right_rotation_idx", 0)), input_hw=hw("input_hw"),
                            output_hw=hw("output_hw"), dimensions=int(m.get("dimensions", 0)),
                            landmarks_range=int(m.get("landmarks_range", 0)),
                            bbox_size_multiplier=float(m.get("bbox_size_multiplier", 0.0)))
    return MatrixParams(subset=_pairs(m.get("subset_idxs", []), op, "subset_idxs"),
                        left=int(m.get("left_rotation_idx", 0)), right=int(m.get("right_rotation_idx", 0)),
                        target_rotation=float(m.get("target_rotation_radians", 0.0)),
                        output_h=int(m.get("output_height", 0)), output_w=int(m.get("output_width", 0)),
                        scale_x=float(m.get("scale_x", 0.0)), scale_y=float(m.get("scale_y", 0.0)))


def _check_matrix_params(p: MatrixParams, version: int, landmarks: int) -> None:
    """Eval's checks, and that every index names a landmark (the C++ reads out of bounds otherwise)."""
    op = "Landmarks2TransformMatrix"
    if version == 1:
        _check(p.bbox_size_multiplier != 0, op, "Incorrect bbox_size_multiplier: 0")
        _check(p.dimensions == 3, op, f"Incorrect dimensions: {p.dimensions}")
        _check(min(p.input_hw) > 0, op, f"Incorrect input_hw: h = {p.input_hw[0]} w = {p.input_hw[1]}")
        _check(min(p.output_hw) > 0, op, f"Incorrect output_hw: h = {p.output_hw[0]} w = {p.output_hw[1]}")
        _check(p.landmarks_range > 0, op, f"Incorrect landmarks_range: {p.landmarks_range}")
    else:
        _check(p.output_h > 0, op, f"Incorrect output_height: {p.output_h}")
        _check(p.output_w > 0, op, f"Incorrect output_width: {p.output_w}")
        _check(p.scale_x > 0, op, f"Incorrect scale_x: {p.scale_x}")
        _check(p.scale_y > 0, op, f"Incorrect scale_y: {p.scale_y}")
    _check(p.subset != (), op, "Subset parameter is empty")
    for name, value in (("left_rotation_idx", p.left), ("right_rotation_idx", p.right)):
        _check(0 <= value < landmarks, op, f"Incorrect {name}: {value} (the input has {landmarks} landmarks)")
    flat = [v for pair in p.subset for v in pair]
    bad = [i for i, v in enumerate(flat) if not 0 <= v < landmarks]
    _check(not bad, op, f"Incorrect subset value: index = {bad[0] if bad else 0}, value = "
           f"{flat[bad[0]] if bad else 0} (the input has {landmarks} landmarks)")


def _rot(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def landmarks_to_matrix_v1(landmarks: np.ndarray, p: MatrixParams) -> np.ndarray:
    """Landmarks2TransformMatrix v1's specification (LandmarksToTransformMatrixV1), a [1, 4, 4] matrix.

    alpha = -atan(dy / dx) between the two rotation landmarks; the subset's x, y rotated by alpha give a
    box (min and max from +-100000), its size times bbox_size_multiplier and its middle rotated back by
    -alpha; the 3x3 to_absolute * rotation * scale * to_relative is spread into a 4x4 (z row identity).
    """
    xy = np.asarray(landmarks, np.float64).reshape(-1, 3)[:, :2]
    left, right = xy[p.left], xy[p.right]
    alpha = -np.arctan((right[1] - left[1]) / (right[0] - left[0]))
    pts = xy[[i for pair in p.subset for i in pair]] @ _rot(alpha).T
    hi = np.maximum(pts.max(axis=0), -100000.0)
    lo = np.minimum(pts.min(axis=0), 100000.0)
    box = (hi - lo) * p.bbox_size_multiplier
    r = float(p.landmarks_range)
    middle = _rot(-alpha) @ ((hi + lo) / 2.0)
    scale = np.diag([box[0] / r, box[1] / r, 1.0])
    rotation = np.eye(3)
    rotation[:2, :2] = _rot(-alpha)
    rotation[:2, 2] = middle / r * 2.0 - 1.0
    (ih, iw), (oh, ow) = p.input_hw, p.output_hw
    to_relative = np.array([[2.0 / (ow - 1.0), 0.0, -1.0], [0.0, 2.0 / (oh - 1.0), -1.0], [0.0, 0.0, 1.0]])
    to_absolute = np.array([[(iw - 1.0) / 2.0, 0.0, (iw - 1.0) / 2.0], [0.0, (ih - 1.0) / 2.0, (ih - 1.0) / 2.0],
                            [0.0, 0.0, 1.0]])
    itm = to_absolute @ rotation @ scale @ to_relative
    out = np.zeros((4, 4))
    out[:2, [0, 1, 3]] = itm[:2]
    out[2, :3] = itm[2]
    out[3, 3] = 1.0
    return out.astype(np.float32)[None]


def landmarks_to_matrix_v2(landmarks: np.ndarray, p: MatrixParams) -> np.ndarray:
    """Landmarks2TransformMatrix v2's specification (LandmarksToTransformMatrixV2), a [1, 4, 4] matrix.

    rotation = target - atan2(dy, dx) between the two rotation landmarks; the subset rotated by it gives
    the crop's width, height and centre (rotated back); the matrix is shift(centre) * rotate(-rotation) *
    scale(scale_x * width / output_width, scale_y * height / output_height) * shift(-output size / 2).
    """
    xy = np.asarray(landmarks, np.float64).reshape(-1, 3)[:, :2]
    d = xy[p.right] - xy[p.left]
    rotation = p.target_rotation - np.arctan2(d[1], d[0])
    pts = xy[[i for pair in p.subset for i in pair]] @ _rot(rotation).T
    hi, lo = pts.max(axis=0), pts.min(axis=0)
    width, height = hi - lo
    cx, cy = _rot(-rotation) @ ((lo + hi) / 2.0)

    def affine(linear: np.ndarray, shift) -> np.ndarray:
        m = np.eye(4)
        m[:2, :2], m[:2, 3] = linear, shift
        return m

    t = (affine(np.eye(2), (cx, cy)) @ affine(_rot(-rotation), (0.0, 0.0))
         @ affine(np.diag([p.scale_x * width / p.output_w, p.scale_y * height / p.output_h]), (0.0, 0.0))
         @ affine(np.eye(2), (-p.output_w / 2.0, -p.output_h / 2.0)))
    return t.astype(np.float32)[None]


def _matrix_prepare(context, node) -> None:
    op = "Landmarks2TransformMatrix"
    _f32(context, node, op, 1, 1)
    x, version = context.input(node, 0), node.registration.version
    if version == 1:
        _rank(x, 4, op, "v1 landmarks")
        _check(tuple(x.shape[:3]) == (1, 1, 1), op, f"v1 landmarks must be [1, 1, 1, 3N], got {list(x.shape)}")
    else:
        _rank(x, 3, op, "v2 landmarks")
    _check(x.shape[-1] % 3 == 0 if version == 1 else x.shape[-1] == 3, op,
           f"landmarks are read as x, y, z triples; got shape {list(x.shape)}")
    _check_matrix_params(node.user_data, version, int(np.prod(x.shape)) // 3)
    context.resize_tensor(context.output(node, 0), (1, 4, 4))


def _matrix_invoke(context, node) -> None:
    fn = landmarks_to_matrix_v1 if node.registration.version == 1 else landmarks_to_matrix_v2
    context.output(node, 0).data = fn(context.input(node, 0).data, node.user_data)


def _matrix_work(context, node):
    """About 10 ops per subset landmark (a 2x2 rotation, a min and a max per axis) plus three 4x4 matrix
    products (64 MACs each): an estimate, the op being tiny next to the network around it."""
    p = node.user_data
    return measured(context, node, "elementwise", 10 * 2 * len(p.subset) + 3 * 64)


OPS = ("Convolution2DTransposeBias", "MaxPoolingWithArgmax2D", "MaxUnpooling2D", "TransformTensorBilinear",
       "TransformLandmarks", "Landmarks2TransformMatrix")


def _init_with(parse):
    def init(context, buffer):
        return parse(buffer)

    return init


def register(resolver) -> None:
    """Add MediaPipe's six custom ops at the versions MediaPipe registers them (mediapipe/util/tflite/
    op_resolver.cc and each kernel file's Register* functions): Convolution2DTransposeBias,
    MaxPoolingWithArgmax2D and MaxUnpooling2D v1; TransformTensorBilinear v2 (its v1 is the op named
    TransformTensor); TransformLandmarks and Landmarks2TransformMatrix v1 and v2."""
    resolver.add_custom("Convolution2DTransposeBias", Registration(
        init=_init_with(transpose_conv_params), prepare=_tcb_prepare, invoke=_tcb(conv2d_transpose_bias_fast),
        reference=_tcb(conv2d_transpose_bias), work=_tcb_work), 1, 1)
    for name, prepare, invoke, work in (("MaxPoolingWithArgmax2D", _argmax_prepare, _argmax_invoke, _window_work),
                                        ("MaxUnpooling2D", _unpool_prepare, _unpool_invoke, _scatter_work)):
        resolver.add_custom(name, Registration(init=_init_with(lambda b, op=name: pool_params(b, op)),
                                               prepare=prepare, invoke=invoke, reference=invoke, work=work), 1, 1)
    resolver.add_custom("TransformTensorBilinear", Registration(
        init=_init_with(bilinear_params), prepare=_bilinear_prepare, invoke=_bilinear_invoke,
        reference=_bilinear_invoke, work=_bilinear_work), 2, 2)
    # v2 ignores its options (ParseTransformLandmarksV2Attributes): dimensions from the shape, scale 1
    for version, parse in ((1, landmarks_params), (2, lambda _: LandmarksParams())):
        resolver.add_custom("TransformLandmarks", Registration(
            init=_init_with(parse), prepare=_landmarks_prepare, invoke=_landmarks_invoke,
            reference=_landmarks_invoke, work=_landmarks_work), version, version)
    for version in (1, 2):
        resolver.add_custom("Landmarks2TransformMatrix", Registration(
            init=_init_with(lambda b, v=version: matrix_params(b, v)), prepare=_matrix_prepare,
            invoke=_matrix_invoke, reference=_matrix_invoke, work=_matrix_work), version, version)
