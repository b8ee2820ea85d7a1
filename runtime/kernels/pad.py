"""Padding ops: PAD, PADV2 (PAD with a constant value input), MIRROR_PAD."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import (
    INDEX_TYPES,
    check,
    check_same_quantization,
    check_types,
    size_outputs,
    tensor_values,
)
from accelsim.runtime.registration import Registration

_PAD_MAX_DIMS = 5  # reference_ops::PadKernelMaxDimensionCount
_PAD_TYPES = ("FLOAT32", "UINT8", "INT8", "INT16", "INT32", "INT64", "BOOL")
_PADDING_TYPES = ("INT32", "INT64", "INT8", "INT16", "BOOL")


def _is_quantized(t) -> bool:
    return t.quantization is not None and len(t.quantization.scales) > 0


def _pad_amounts(paddings, rank: int) -> np.ndarray:
    """The (rank, 2) [before, after] amounts, checked as pad.cc GetPadParams checks them."""
    check(paddings.type in _PADDING_TYPES, f"PAD: paddings type {paddings.type} is not supported")
    check(len(paddings.shape) == 2 and paddings.shape[1] == 2 and paddings.shape[0] == rank,
          f"PAD: paddings must have shape [{rank}, 2], got {list(paddings.shape)}")
    amounts = np.asarray(tensor_values(paddings), dtype=np.int64).reshape(rank, 2)
    check(bool(np.all(amounts >= 0)), f"PAD: paddings must be >= 0, got {amounts.tolist()}")
    return amounts


def _pad_prepare(ctx, node) -> None:
    check(len(node.inputs) in (2, 3) and len(node.outputs) == 1, "PAD takes 2 or 3 inputs and one output")
    x = ctx.input(node, 0)
    paddings = ctx.input(node, 1)
    value = ctx.input(node, 2)
    out = ctx.output(node, 0)
    rank = len(x.shape)
    check(rank <= _PAD_MAX_DIMS, f"PAD supports up to {_PAD_MAX_DIMS} dimensions, got {rank}")
    check(x.type in _PAD_TYPES, f"PAD: type {x.type} is not supported ({', '.join(_PAD_TYPES)})")
    check(out.type == x.type, f"PAD: output type {out.type} differs from input type {x.type}")
    if value is not None:
        check(value.type == x.type, f"PAD: constant_values type {value.type} differs from input type {x.type}")
        check(int(np.prod(value.shape, dtype=np.int64)) == 1, "PAD: constant_values must hold one value")
        if _is_quantized(x) or x.type == "UINT8":
            check(value.scale == out.scale and value.zero_point == out.zero_point,
                  "PAD: constant_values must share the output's scale and zero point")
    node.user_data = None
    if rank == 0 or not paddings.is_constant:
        ctx.set_dynamic(out)
        return
    amounts = _pad_amounts(paddings, rank)
    ctx.resize_tensor(out, tuple(int(d) for d in np.asarray(x.shape) + amounts.sum(axis=1)))
    if value is None or value.is_constant:
        fill = _pad_value(x, value, out)
        zeros = fill == 0 and not np.signbit(fill)
        node.user_data = _PadPlan(_interior(x.shape, amounts), fill, bool(zeros))


@dataclass(frozen=True)
class _PadPlan:
    """A static PAD's constants: where the input goes in the output, and the fill value."""

    interior: tuple[slice, ...]
    fill: object
    zeros: bool  # the fill is +0 (np.zeros gets pre-zeroed memory, faster than np.full)


def _interior(shape, amounts: np.ndarray) -> tuple[slice, ...]:
    return tuple(slice(int(before), int(before) + d) for d, before in zip(shape, amounts[:, 0]))


def _pad_value(x, value, out):
    """pad.cc: an explicit constant_values, else the output zero point for quantized 8/16-bit, else 0."""
    if value is not None:
        return value.data.reshape(-1)[0]
    if x.type == "UINT8" or (x.type in ("INT8", "INT16") and _is_quantized(x)):
        info = np.iinfo(out.dtype)
        check(info.min <= out.zero_point <= info.max, f"PAD: zero point {out.zero_point} is out of range")
        return out.zero_point
    return 0


def _pad_invoke(ctx, node) -> None:
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    plan: _PadPlan | None = node.user_data
    if plan is not None:
        padded = np.zeros(out.shape, out.dtype) if plan.zeros else np.full(out.shape, plan.fill, dtype=out.dtype)
        padded[plan.interior] = x.data
        out.data = padded
        return
    amounts = _pad_amounts(ctx.input(node, 1), len(x.shape))
    fill = _pad_value(x, ctx.input(node, 2), out)
    out.data = np.pad(x.data, amounts, constant_values=np.asarray(fill, dtype=out.dtype))


_MIRROR_REFLECT = 0  # schema MirrorPadMode: REFLECT = 0, SYMMETRIC = 1


def _mirror_amounts(x, paddings, mode: int) -> np.ndarray:
    """mirror_pad.cc: [rank, 2] pads, each at most the dimension (minus one for REFLECT)."""
    rank = len(x.shape)
    check(paddings.type in INDEX_TYPES, f"MIRROR_PAD: paddings type {paddings.type} is not supported")
    check(paddings.shape == (rank, 2), f"MIRROR_PAD: paddings must have shape [{rank}, 2], got {list(paddings.shape)}")
    amounts = np.asarray(tensor_values(paddings), dtype=np.int64).reshape(rank, 2)
    offset = 1 if mode == _MIRROR_REFLECT else 0
    for axis, (dim, (before, after)) in enumerate(zip(x.shape, amounts.tolist())):
        check(min(before, after) >= 0, f"MIRROR_PAD: paddings must be >= 0, got {amounts.tolist()}")
        check(max(before, after) <= dim - offset,
              f"MIRROR_PAD: padding ({before}, {after}) of axis {axis} exceeds its size {dim}"
              f"{' minus 1 (REFLECT)' if offset else ''}")
    return amounts


def _mirror_pad_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and len(node.outputs) == 1, "MIRROR_PAD takes 2 inputs and one output")
    x, paddings = ctx.input(node, 0), ctx.input(node, 1)
    out = ctx.output(node, 0)
    check_types("MIRROR_PAD", x, [out])
    check(x.type != "STRING", "MIRROR_PAD: type STRING is not supported")
    if x.type in ("UINT8", "INT8", "INT16"):
        check_same_quantization("MIRROR_PAD", x, [out])
    if x.type == "INT16":
        check(x.zero_point == 0, "MIRROR_PAD: int16 zero points must be 0")
    mode = node.options.mode
    size_outputs(ctx, node, [paddings],
                  lambda: [tuple(np.asarray(x.shape) + _mirror_amounts(x, paddings, mode).sum(axis=1))])


def mirror_pad(x: np.ndarray, paddings: np.ndarray, mode: int) -> np.ndarray:
    """MIRROR_PAD (mirror_pad.cc): `x` extended by `paddings` ([rank, 2] before/after) mirrored values.

    REFLECT (mode 0) excludes the edge value (offset 1), SYMMETRIC (1) repeats it: NumPy's
    reflect and symmetric modes.
    """
    return np.pad(x, paddings, mode="reflect" if mode == _MIRROR_REFLECT else "symmetric")


def _mirror_pad_node(ctx, node) -> None:
    """`mirror_pad` on a node: its paddings tensor (checked) and mode option."""
    x = ctx.input(node, 0)
    mode = node.options.mode
    ctx.output(node, 0).data = mirror_pad(x.data, _mirror_amounts(x, ctx.input(node, 1), mode), mode)


def pad(x: np.ndarray, paddings: np.ndarray, fill) -> np.ndarray:
    """PAD and PADV2 (pad.cc, reference_ops::PadImpl): `x` with `paddings` ([rank, 2] before/after)
    copies of `fill` along each axis. The fill is PADV2's constant_values, else the output zero point
    for quantized types, else 0 (_pad_value); the fast invoke (_PadPlan) writes into a filled array."""
    return np.pad(x, paddings, constant_values=np.asarray(fill, dtype=x.dtype))


def _pad_reference(ctx, node) -> None:
    """`pad` on a node: its paddings tensor (checked) and the fill its inputs and quantization give."""
    x, out = ctx.input(node, 0), ctx.output(node, 0)
    out.data = pad(x.data, _pad_amounts(ctx.input(node, 1), len(x.shape)), _pad_value(x, ctx.input(node, 2), out))


def register(resolver) -> None:
    pad = Registration(prepare=_pad_prepare, invoke=_pad_invoke, reference=_pad_reference, work=work.move)
    # PAD: v2 int8, v3 int16, v4 rank 5, v5 bool; v6 (float8) is not implemented.
    resolver.add_builtin("PAD", pad, 1, 5)
    # PADV2 is PAD's kernel with a constant_values input (pad.cc): v2 int8, v3 int16, v4 rank 5, v5 bool;
    # v6 (float8) is not implemented.
    resolver.add_builtin("PADV2", pad, 1, 5)
    # MIRROR_PAD has no fast path: the node form of `mirror_pad` is both the invoke and the reference.
    # v2 int8, v3 int16.
    resolver.add_builtin("MIRROR_PAD", Registration(prepare=_mirror_pad_prepare, invoke=_mirror_pad_node,
                                                    reference=_mirror_pad_node, work=work.move), 1, 3)
