"""One-node conv-family models (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, CONV_3D, FULLY_CONNECTED,
pools) with weights, bias and scales the way a converter makes them."""

from __future__ import annotations

import numpy as np
from support import Spec, const, single_op_model

from accelsim.runtime.kernels.conv.geometry import SAME, out_size_and_padding

ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
POOL_QUANT = {"FLOAT32": {}, "INT8": {"scale": 0.05, "zero_point": -3}, "UINT8": {"scale": 0.05, "zero_point": 120}}



def out_hw(in_hw, k_hw, padding, stride, dilation):
    return tuple(out_size_and_padding(padding, i, k, s, d)[0] for i, k, s, d in zip(in_hw, k_hw, stride, dilation))


def _quantize_weights(w: np.ndarray, kind: str, axis: int):
    """int8 symmetric (per channel along `axis`, or per tensor) or uint8 asymmetric per tensor."""
    if kind == "uint8":
        lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
        scale = np.float32((hi - lo) / 255)
        zp = int(np.clip(np.round(-lo / scale), 0, 255))
        q = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
        return q, np.array([scale], np.float32), zp
    reduce = tuple(i for i in range(w.ndim) if i != axis)
    if kind == "int8_per_channel":
        scales = (np.abs(w).max(axis=reduce) / 127).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.round(w / scales.reshape(shape))
    else:
        scales = np.array([np.abs(w).max() / 127], np.float32)
        q = np.round(w / scales[0])
    return np.clip(q, -127, 127).astype(np.int8), scales, 0


def conv_model(op: str, in_shape, filter_shape, kind: str, *, seed: int = 0, bias: str = "random",
               version: int | None = None, padding: int = SAME, stride=(1, 1), dilation=(1, 1),
               activation: str = "NONE", out_scale_factor: float = 1.0) -> bytes:
    """A one-node CONV_2D / DEPTHWISE_CONV_2D model; bias is 'random', 'zero' or 'none' (omitted)."""
    rng = np.random.default_rng(seed)
    depthwise = op == "DEPTHWISE_CONV_2D"
    out_c = filter_shape[3] if depthwise else filter_shape[0]
    axis = 3 if depthwise else 0
    gains = rng.uniform(0.2, 2.0, out_c)
    w = rng.standard_normal(filter_shape) * (gains if depthwise else gains[:, None, None, None])
    b = rng.standard_normal(out_c)
    oh, ow = out_hw(in_shape[1:3], filter_shape[1:3], padding, stride, dilation)
    out_shape = (in_shape[0], oh, ow, out_c)
    options = dict(padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dilation[0],
                   dilation_w_factor=dilation[1], fused_activation_function=ACTIVATIONS[activation])
    if depthwise:
        options["depth_multiplier"] = out_c // in_shape[3]
    if kind == "float":
        inputs = [Spec(tuple(in_shape)), const(w.astype(np.float32))]
        bias_spec = const((b if bias == "random" else 0 * b).astype(np.float32))
        output = Spec(out_shape)
        default_version = 2 if depthwise and max(dilation) > 1 else 1
    else:
        qtype = "UINT8" if kind == "uint8" else "INT8"
        in_scale = np.float32(rng.uniform(0.01, 0.1))
        in_zp = int(rng.integers(100, 156)) if kind == "uint8" else int(rng.integers(-30, 31))
        wq, w_scales, w_zp = _quantize_weights(w, kind, axis)
        per_channel_scales = np.broadcast_to(w_scales, (out_c,)).astype(np.float64)
        bias_scales = float(in_scale) * per_channel_scales
        taps = int(np.prod(filter_shape[1:3])) * (1 if depthwise else filter_shape[3])
        # Roughly what calibration gives: +-3 standard deviations of the accumulator over 255 steps.
        acc_std = np.sqrt(taps) * 74 * (60 if kind == "uint8" else 42)
        out_scale = np.float32(6 * acc_std * in_scale * per_channel_scales.mean() / 255 * out_scale_factor)
        out_zp = int(rng.integers(100, 156)) if kind == "uint8" else int(rng.integers(-20, 21))
        bq = np.round(b * 2 / bias_scales) if bias == "random" else np.zeros(out_c)
        inputs = [Spec(tuple(in_shape), qtype, scale=float(in_scale), zero_point=in_zp),
                  const(wq, scale=tuple(w_scales.tolist()), zero_point=w_zp, quantized_dimension=axis)]
        bias_scale = tuple(bias_scales.astype(np.float32).tolist())[:w_scales.size]
        bias_spec = const(bq.astype(np.int32), scale=bias_scale, zero_point=0)
        output = Spec(out_shape, qtype, scale=float(out_scale), zero_point=out_zp)
        default_version = 3 if kind.startswith("int8") else (2 if depthwise and max(dilation) > 1 else 1)
    if bias != "none":
        inputs.append(bias_spec)
    return single_op_model(op, inputs, [output], version=version or default_version, **options)


def fc_model(in_shape, units: int, kind: str, *, depth: int | None = None, bias: bool = True,
             keep_num_dims: bool = False, activation: str = "NONE", weight_zero_point: int = 0,
             seed: int = 0) -> bytes:
    """A one-node FULLY_CONNECTED model with converter-like quantization; weights are [units, depth]."""
    rng = np.random.default_rng(seed)
    depth = depth or in_shape[-1]
    rows = int(np.prod(in_shape)) // depth
    out_shape = (*in_shape[:-1], units) if keep_num_dims else (rows, units)
    w = rng.standard_normal((units, depth)) * rng.uniform(0.2, 2.0, (units, 1))
    b = rng.standard_normal(units)
    if kind == "float":
        inputs = [Spec(tuple(in_shape)), const(w.astype(np.float32)), const(b.astype(np.float32))]
        output = Spec(out_shape)
    else:
        qtype, lo, hi = ("UINT8", 0, 255) if kind == "uint8" else ("INT8", -128, 127)
        in_scale = np.float32(rng.uniform(0.01, 0.1))
        in_zp = int(rng.integers(100, 156)) if kind == "uint8" else int(rng.integers(-30, 31))
        if kind == "int8_per_channel":
            w_scales = (np.abs(w).max(axis=1) / 127).astype(np.float32)
            wq = np.round(w / w_scales[:, None])
        else:
            span = np.abs(w).max()
            w_scales = np.array([span / 127 if kind != "uint8" else 2 * span / 255], np.float32)
            weight_zero_point = weight_zero_point or (128 if kind == "uint8" else 0)
            wq = np.round(w / w_scales[0]) + weight_zero_point
        wq = np.clip(wq, lo, hi).astype(np.uint8 if kind == "uint8" else np.int8)
        channel_scales = np.broadcast_to(w_scales, (units,)).astype(np.float64)
        bias_scales = (float(in_scale) * channel_scales).astype(np.float32)
        acc_std = np.sqrt(depth) * 74 * 42
        out_scale = np.float32(6 * acc_std * in_scale * channel_scales.mean() / 255)
        out_zp = int(rng.integers(100, 156)) if kind == "uint8" else int(rng.integers(-20, 21))
        inputs = [Spec(tuple(in_shape), qtype, scale=float(in_scale), zero_point=in_zp),
                  const(wq, scale=tuple(w_scales.tolist()), zero_point=weight_zero_point, quantized_dimension=0),
                  const(np.round(b * 2 / bias_scales).astype(np.int32),
                        scale=tuple(bias_scales.tolist())[:w_scales.size], zero_point=0)]
        output = Spec(out_shape, qtype, scale=float(out_scale), zero_point=out_zp)
    if not bias:
        inputs[2] = None
    version = 6 if not bias else 5 if keep_num_dims else 4 if kind.startswith("int8") else 1
    return single_op_model("FULLY_CONNECTED", inputs, [output], version=version, keep_num_dims=keep_num_dims,
                           fused_activation_function=ACTIVATIONS[activation])


def pool_model(op, typ, in_shape, window, padding=SAME, activation="NONE") -> bytes:
    fh, fw, sh, sw = window
    oh = out_size_and_padding(padding, in_shape[1], fh, sh, 1)[0]
    ow = out_size_and_padding(padding, in_shape[2], fw, sw, 1)[0]
    quant = POOL_QUANT[typ]
    out_shape = (in_shape[0], oh, ow, in_shape[3])
    return single_op_model(
        op, [Spec(tuple(in_shape), typ, **quant)], [Spec(out_shape, typ, **quant)],
        version=2 if typ == "INT8" else 1, padding=padding, filter_height=fh, filter_width=fw, stride_h=sh,
        stride_w=sw, fused_activation_function=ACTIVATIONS[activation])


def tc_model(in_shape, cout, kernel, stride, padding, out_hw, kind="float", bias=True, activation="NONE",
             seed=0, omit_bias_slot=False, shape_input=False) -> bytes:
    """A one-node TRANSPOSE_CONV; weights [cout, kh, kw, cin], converter-like quantization."""
    rng = np.random.default_rng(seed)
    n, _, _, cin = in_shape
    wf = rng.standard_normal((cout, *kernel, cin)) * rng.uniform(0.3, 2.0, (cout, 1, 1, 1))
    bf = rng.standard_normal(cout)
    out_shape = (n, *out_hw, cout)
    shape_spec = Spec((4,), "INT32") if shape_input else const(np.array(out_shape, np.int32))
    if kind == "float":
        inputs = [shape_spec, const(wf.astype(np.float32)), Spec(in_shape), const(bf.astype(np.float32))]
        output = Spec(out_shape)
    else:
        typ = "UINT8" if kind == "uint8" else "INT8"
        s_in = float(rng.uniform(0.01, 0.05))
        z_in = int(rng.integers(100, 156)) if typ == "UINT8" else int(rng.integers(-20, 21))
        if kind == "int8_per_channel":
            ws = np.abs(wf).reshape(cout, -1).max(axis=1) / 127
        else:
            ws = np.array([np.abs(wf).max() / (127 if typ == "INT8" else 127.5)])
        wz = 128 if typ == "UINT8" else 0
        wq = np.round(wf / ws.reshape(-1, 1, 1, 1)) + wz
        wq = np.clip(wq, 0, 255).astype(np.uint8) if typ == "UINT8" else np.clip(wq, -127, 127).astype(np.int8)
        bs = (s_in * ws).astype(np.float32)
        bq = np.round(bf * 2 / np.broadcast_to(bs, (cout,))).astype(np.int32)
        overlap = np.prod(kernel) / np.prod(stride)
        s_out = float(s_in * ws.mean() * np.sqrt(cin * max(overlap, 1)) * 74 * 50 / 60)
        z_out = 128 if typ == "UINT8" else int(rng.integers(-10, 11))
        inputs = [shape_spec, const(wq, scale=tuple(ws.tolist()), zero_point=wz, quantized_dimension=0),
                  Spec(in_shape, typ, scale=s_in, zero_point=z_in),
                  const(bq, scale=tuple(bs.tolist()), zero_point=0)]
        output = Spec(out_shape, typ, scale=s_out, zero_point=z_out)
    if not bias:
        inputs = inputs[:3] + [None] if omit_bias_slot else inputs[:3]
    version = 4 if activation != "NONE" else 3 if bias else 2 if kind.startswith("int8") else 1
    return single_op_model("TRANSPOSE_CONV", inputs, [output], version=version, padding=padding,
                           stride_h=stride[0], stride_w=stride[1],
                           fused_activation_function=ACTIVATIONS[activation])


def out_size(n, k, s, d, padding):
    effective = (k - 1) * d + 1
    return -(-n // s) if padding == SAME else (n - effective + s) // s


def conv3d_model(in_shape, kernel, cout, stride, dilation, padding, bias=True, activation="NONE", seed=0,
                 filter_input=False) -> bytes:
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((*kernel, in_shape[4], cout)).astype(np.float32)
    out_shape = (in_shape[0], *(out_size(n, k, s, d, padding)
                                for n, k, s, d in zip(in_shape[1:4], kernel, stride, dilation)), cout)
    inputs = [Spec(in_shape), Spec(w.shape) if filter_input else const(w)]
    if bias:
        inputs.append(const(rng.standard_normal(cout).astype(np.float32)))
    return single_op_model("CONV_3D", inputs, [Spec(out_shape)], padding=padding,
                           stride_d=stride[0], stride_h=stride[1], stride_w=stride[2],
                           dilation_d_factor=dilation[0], dilation_h_factor=dilation[1],
                           dilation_w_factor=dilation[2], fused_activation_function=ACTIVATIONS[activation])
