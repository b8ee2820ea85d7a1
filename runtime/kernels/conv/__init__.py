"""Convolutions: CONV_2D and DEPTHWISE_CONV_2D in float32, int8 (per-tensor or per-channel weights) and uint8.

Where things are:

    reference.py   the specification: conv2d, depthwise_conv2d and the output stage, plain NumPy
    geometry.py    output size, padding and window views (kernels/padding.h)
    stage.py       the output stage (Requantizer; ExactStage, FloatStage) and LiteRT's roundings
    checks.py      type and shape checks shared with FULLY_CONNECTED, TRANSPOSE_CONV and CONV_3D
    conv2d.py      CONV_2D's fast kernel: im2col GEMM (im2col.py: plain and phased; planar.py:
                   PlanarPatches; scaled.py: ScaledGemm), zero point folded into the bias
    depthwise.py   DEPTHWISE_CONV_2D's fast kernel: tapsum.py's TapSum einsum

The bias input is optional (2 inputs, or index -1) and reads as zeros, as in TFLite's reference
kernels; LiteRT's builtin conv kernels reject a missing bias (and its DEPTHWISE_CONV_2D crashes on a
2-input node), so the tests compare against LiteRT with an explicit zero bias.
"""

from __future__ import annotations

from accelsim.runtime import work
from accelsim.runtime.kernels.conv.conv2d import conv_invoke, conv_prepare
from accelsim.runtime.kernels.conv.depthwise import depthwise_invoke, depthwise_prepare
from accelsim.runtime.kernels.conv.reference import conv2d_node, depthwise_conv2d_node
from accelsim.runtime.registration import Registration


def register(resolver) -> None:
    """CONV_2D v1 (float32, uint8), v3 (int8), v6 (grouped); DEPTHWISE_CONV_2D v1-v3 (float32/uint8, dilation, int8).

    Not registered (op_version.cc): CONV_2D v2/v5 and DEPTHWISE v4/v6 (hybrid float x int8), CONV_2D v4/v8
    and DEPTHWISE v5 (int16 activations), CONV_2D and DEPTHWISE v7 (int4 weights).
    """
    conv = Registration(prepare=conv_prepare, invoke=conv_invoke, reference=conv2d_node, work=work.conv)
    resolver.add_builtin("CONV_2D", conv, 1, 1)
    resolver.add_builtin("CONV_2D", conv, 3, 3)
    resolver.add_builtin("CONV_2D", conv, 6, 6)
    depthwise = Registration(prepare=depthwise_prepare, invoke=depthwise_invoke, reference=depthwise_conv2d_node,
                             work=work.depthwise_conv)
    resolver.add_builtin("DEPTHWISE_CONV_2D", depthwise, 1, 3)
