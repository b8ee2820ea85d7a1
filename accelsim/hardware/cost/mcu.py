"""Cost of a node on a Cortex-M microcontroller running TensorFlow Lite Micro with CMSIS-NN kernels.

A microcontroller is not a small phone CPU: it has no data cache worth the name (or a small one),
weights execute in place from flash with wait states, activations live in an on-chip SRAM arena,
and every op is one CMSIS-NN kernel call (or a TFLM reference kernel where CMSIS-NN has none).
Each node costs the cycles of that kernel's loop structure, all on one in-order core:

- CONV_2D (CMSIS-NN `arm_convolve_wrapper_s8`): an im2col copy of each output pixel's window
  (`im2col_cycles_per_element` per element; none on the 1x1 stride-1 fast path,
  `arm_convolve_1x1_s8_fast`), then a GEMM whose inner loop computes a tile of `tile_pixels` output
  pixels x `tile_channels` output channels over a reduction rounded up to `k_lanes` (a DSP core's
  SMLAD kernel `arm_nn_mat_mult_kernel_s8_s16`: 2 x 2 tiles; Helium's `arm_nn_mat_mult_nt_t_s8`:
  4 pixels x 1 channel over 16-byte vectors) at `conv_macs_per_cycle` (the inner loop's instruction
  count on the core's pipeline) times `efficiency` (the share of it the whole kernel reaches), then
  requantization of each output (`requant_cycles_per_output`).
- FULLY_CONNECTED (`arm_fully_connected_s8`, a vector-matrix kernel): MACs over the channels padded to
  the tile at `fc_macs_per_cycle`, plus requantization.
- DEPTHWISE_CONV_2D (`arm_depthwise_conv_s8_opt` / `_3x3_s8`): MACs at `depthwise_macs_per_cycle`,
  plus requantization.
- pooling (`pool_cycles_per_tap` per window tap), ADD / MUL (`add_cycles_per_element`, the CMSIS-NN
  elementwise kernels), SOFTMAX (`softmax_cycles_per_element`), data movement (RESHAPE, PAD,
  CONCATENATION: bytes at `copy_bytes_per_cycle`).
- Ops CMSIS-NN has no kernel for (TFLM's kernels/cmsis_nn/ directory lists them: `CMSIS_NN_OPS`),
  and every float32 node (CMSIS-NN has no float kernels), run TFLM's portable reference kernels:
  `reference_cycles_per_mac` per MAC, `reference_cycles_per_element` per output element of other
  ops. The per-layer table says so for each such node (`node_notes`).
- Flash: weights execute in place from flash. A kernel re-reads a layer's weights once per tile of
  output pixels (conv) or per batch row (FC); unless they fit `flash_cache_bytes` (an ART
  accelerator's or a core's data cache), every pass reads them from flash again, and each access
  of `flash_read_bytes` stalls the in-order core `flash_wait_states` cycles (the STM32L4R5 needs
  5 wait states above 100 MHz). A cache holding the weights pays the wait states on the first pass only.
- `node_cycles`: TFLM's interpreter per op (0 for ahead-of-time code such as microTVM's AOT
  executor, which calls the kernels directly).

Memory is checked as TFLM allocates it: the tensor arena lives on the activations level (SRAM) and
must hold the largest working set of any node (its inputs and outputs at once, the least any
planner can do: TFLM's greedy planner reaches it on a chain, and adds tensors that stay live across
nodes, such as a residual branch, on top), plus that node's CMSIS-NN scratch buffer (the im2col
columns). An arena larger than the level, or weights larger than the weights level (flash), make
the design infeasible with reason `memory` and both sizes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.core.feasibility import memory_refusal
from accelsim.hardware.memory import LINK, working_set
from accelsim.hardware.roofline import roofline
from accelsim.hardware.types import Cost, Hardware, Kind, spec
from accelsim.runtime.work import NodeWork

# TFLM's CMSIS-NN kernels (tensorflow/lite/micro/kernels/cmsis_nn/: add, batch_matmul, conv,
# depthwise_conv, fully_connected, maximum_minimum, mul, pad, pooling, softmax, svdf, transpose,
# transpose_conv, unidirectional_sequence_lstm). Every other op runs TFLM's reference kernel.
CMSIS_NN_OPS = frozenset({
    "ADD", "BATCH_MATMUL", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAXIMUM", "MINIMUM", "MUL", "PAD",
    "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "SVDF", "TRANSPOSE", "TRANSPOSE_CONV",
    "UNIDIRECTIONAL_SEQUENCE_LSTM"})
# The int8 types CMSIS-NN's kernels take (s8 kernels; s16 variants exist for a few ops).
_CMSIS_DTYPES = ("int8", "int16")
# Ops that only move or reinterpret bytes: TFLM's reference kernel is a copy (or nothing).
_MOVES = ("move",)
# The Armv7-M / Armv8-M system address map (Armv7-M Architecture Reference Manual, B3.1 "The system
# address map"): SRAM region 0x2000_0000-0x3FFF_FFFF (512 MiB); the largest region, External RAM
# 0x6000_0000-0x9FFF_FFFF, is 1 GiB.
SRAM_REGION_BYTES = 512 * 2**20
LARGEST_REGION_BYTES = 2**30


@dataclass(frozen=True)
class McuCompute:
    """The `compute:` block of a `kind: mcu` config (a Cortex-M core running TFLM with CMSIS-NN)."""

    simd: str = spec("choice", "CMSIS-NN path the core compiles: none (pure C), dsp (SMLAD, 2 x 16-bit MACs "
                     "per instruction) or mve (Helium 128-bit vectors)", choices=("none", "dsp", "mve"))
    conv_macs_per_cycle: float = spec("number", "int8 MACs per cycle of the im2col GEMM's inner loop")
    fc_macs_per_cycle: float = spec("number", "int8 MACs per cycle of the fully connected (vector x matrix) loop")
    depthwise_macs_per_cycle: float = spec("number", "int8 MACs per cycle of the depthwise kernel's loop")
    efficiency: float = spec("fraction", "share of those inner-loop rates the kernels reach (loop and pointer "
                             "overhead, load-use stalls, instruction fetch)")
    tile_pixels: int = spec("count", "output pixels one GEMM tile computes (DSP 2, Helium 4)", example=2)
    tile_channels: int = spec("count", "output channels one GEMM tile computes (DSP 2, Helium 1)", example=2)
    im2col_cycles_per_element: float = spec("number", "cycles per element the im2col copy writes")
    requant_cycles_per_output: float = spec("number", "cycles to requantize and store one int8 output")
    pool_cycles_per_tap: float = spec("number", "cycles per window tap of a pooling kernel")
    add_cycles_per_element: float = spec("number", "cycles per output element of ADD / MUL")
    softmax_cycles_per_element: float = spec("number", "cycles per element of SOFTMAX")
    copy_bytes_per_cycle: float = spec("number", "bytes a copy loop moves per cycle (RESHAPE, PAD, CONCATENATION)")
    reference_cycles_per_mac: float = spec("number", "cycles per MAC of TFLM's reference kernels (float32, "
                                           "and ops CMSIS-NN lacks)")
    reference_cycles_per_element: float = spec("number", "cycles per output element of a reference kernel "
                                               "without MACs")
    k_lanes: int = spec("count", "the GEMM's reduction is rounded up to this (Helium: 16 int8 lanes)",
                        default=1, example=16)
    node_cycles: int = spec("count", "TFLM interpreter cycles per op (0: ahead-of-time code)", default=0,
                            minimum=0, example=7000)
    flash_wait_states: int = spec("count", "wait states of one flash access at this clock", default=0, minimum=0,
                                  example=5)
    flash_read_bytes: int = spec("count", "bytes one flash access returns", default=8, example=8)
    flash_cache_bytes: int = spec("count", "data cache in front of flash (ART, D-cache): a layer's weights that "
                                  "fit are read from flash once", default=0, minimum=0, example=256)
    max_clock_mhz: int = spec("count", "the highest clock this core is sold at, in MHz (a larger clock is refused)",
                              default=1000, example=480)


def _on_cmsis(work: NodeWork) -> bool:
    return work.op in CMSIS_NN_OPS and work.dtype in _CMSIS_DTYPES


def note(work: NodeWork) -> str:
    """What the per-layer table says about a node's kernel: '' for a CMSIS-NN kernel."""
    if work.kind == "control":
        return ""
    if work.dtype == "float32" and work.kind not in _MOVES:
        return "float32: TFLM reference kernel (CMSIS-NN has no float kernels)"
    if work.op not in CMSIS_NN_OPS:
        return f"TFLM reference kernel (CMSIS-NN has no {work.op})"
    if work.dtype not in _CMSIS_DTYPES and work.kind not in _MOVES:
        return f"{work.dtype}: TFLM reference kernel (CMSIS-NN's {work.op} is int8)"
    return ""


def _pad(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def weight_passes(work: NodeWork, c: McuCompute) -> int:
    """How many times the kernel reads the node's weights (once per pixel tile, per FC batch row)."""
    if work.gemm is None or work.weight_bytes == 0:
        return 1
    if work.conv is not None and not work.conv.depthwise:
        pixels = work.conv.batch * work.conv.out_h * work.conv.out_w
        return math.ceil(pixels / c.tile_pixels)
    return max(1, work.gemm.m * work.gemm.batch)


def flash_stall_cycles(work: NodeWork, c: McuCompute) -> float:
    """Wait-state cycles of the node's weight reads from flash (module docstring)."""
    if c.flash_wait_states == 0 or work.weight_bytes == 0:
        return 0.0
    passes = 1 if work.weight_bytes <= c.flash_cache_bytes else weight_passes(work, c)
    return math.ceil(work.weight_bytes * passes / c.flash_read_bytes) * c.flash_wait_states


def _gemm_cycles(work: NodeWork, c: McuCompute) -> float:
    g = work.gemm
    if work.conv is not None and not work.conv.depthwise and not work.conv.transposed:
        geo = work.conv
        pixels, k = geo.batch * geo.out_h * geo.out_w, g.k
        padded = _pad(pixels, c.tile_pixels) * _pad(geo.out_c, c.tile_channels) * _pad(k, c.k_lanes)
        fast = geo.kernel_h == geo.kernel_w == 1 and geo.stride_h == geo.stride_w == 1 and geo.in_c % 4 == 0
        im2col = 0 if fast else pixels * k * c.im2col_cycles_per_element
        requant = pixels * geo.out_c * c.requant_cycles_per_output
        return padded / (c.conv_macs_per_cycle * c.efficiency) + im2col + requant
    rows = g.m * g.batch
    padded = rows * _pad(g.n, c.tile_channels) * _pad(g.k, c.k_lanes)
    return padded / (c.fc_macs_per_cycle * c.efficiency) + rows * g.n * c.requant_cycles_per_output


def compute_cycles(work: NodeWork, hw: Hardware) -> float:
    """Cycles of the node's kernel on this core, flash stalls included (module docstring)."""
    c = hw.compute
    if work.kind in _MOVES:
        return work.output_bytes / c.copy_bytes_per_cycle
    if not _on_cmsis(work):
        macs = work.macs if work.kind in ("gemm", "depthwise", "window") else 0
        return (macs * c.reference_cycles_per_mac + (work.elements + work.activation_ops)
                * c.reference_cycles_per_element * (macs == 0))
    if work.kind == "gemm" and work.gemm is not None:
        cycles = _gemm_cycles(work, c)
    elif work.kind == "depthwise":
        cycles = work.macs / (c.depthwise_macs_per_cycle * c.efficiency) + work.elements * c.requant_cycles_per_output
    elif work.kind == "window":
        cycles = work.macs * c.pool_cycles_per_tap
    elif work.op == "SOFTMAX":
        cycles = max(work.elements, work.macs) * c.softmax_cycles_per_element
    elif work.kind == "elementwise" and work.op in ("ADD", "MUL", "MAXIMUM", "MINIMUM"):
        cycles = work.elements * c.add_cycles_per_element
    else:  # PAD, TRANSPOSE: copies
        cycles = work.output_bytes / c.copy_bytes_per_cycle
    return cycles + flash_stall_cycles(work, c)


def scratch_bytes(work: NodeWork, hw: Hardware) -> int:
    """The CMSIS-NN scratch buffer a node's kernel asks TFLM for (its `*_get_buffer_size`)."""
    c = hw.compute
    if not _on_cmsis(work) or work.conv is None:
        return 0
    geo = work.conv
    taps = geo.kernel_h * geo.kernel_w * (1 if geo.depthwise else geo.in_c)
    if geo.depthwise:  # arm_depthwise_conv_s8_opt_get_buffer_size: the window's taps of every channel, as int16
        return 0 if c.simd == "mve" else 2 * taps * geo.in_c
    if c.simd == "mve":  # arm_convolve_s8_get_buffer_size (MVE): 4 int8 columns, 16-byte aligned
        return 4 * _pad(taps, 16)
    return 2 * taps * 2  # DSP / pure C: 2 columns of int16


def arena_bytes(works: Sequence[NodeWork], hw: Hardware) -> int:
    """The least tensor arena the nodes need: the largest working set plus its kernel's scratch."""
    return max((working_set(w) + scratch_bytes(w, hw) for w in works if w.kind != "control"), default=0)


def _check_arena(works: Sequence[NodeWork], hw: Hardware) -> None:
    level = hw.memory.level(hw.memory.activations)
    need = arena_bytes(works, hw)
    if level.size is not None and need > level.size:
        refuse = memory_refusal(hw.error)
        raise refuse(("memory", "levels", level.name, "size"),
                     f"{hw.name}'s tensor arena needs at least {need} bytes ({need / 1024:.1f} KiB: the largest "
                     f"node's inputs, outputs and CMSIS-NN scratch) on {level.name!r}, which holds {level.size} "
                     f"bytes ({level.size / 1024:.1f} KiB): the microcontroller cannot hold the model's "
                     f"activations; a part with more SRAM, or a smaller model")


def costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """Costs of the core's nodes in model order: each kernel's cycles plus TFLM's per-op overhead."""
    _check_arena(works, hw)
    return roofline(works, hw, lambda w: math.ceil(compute_cycles(w, hw)), fixed_cycles=hw.compute.node_cycles)


def node_notes(works: Sequence[NodeWork], hw: Hardware) -> list[str]:
    """Per node: '' on a CMSIS-NN kernel, else why it runs a TFLM reference kernel."""
    return [note(w) for w in works]


def peak_macs_per_cycle(work: NodeWork, hw: Hardware) -> float:
    c = hw.compute
    if not _on_cmsis(work):
        return 1 / c.reference_cycles_per_mac
    return c.depthwise_macs_per_cycle if work.kind == "depthwise" else max(c.conv_macs_per_cycle, c.fc_macs_per_cycle)


def notes(hw: Hardware) -> list[str]:
    """What the config leaves unchecked: an activations level without a size checks no arena."""
    level = hw.memory.level(hw.memory.activations)
    out = []
    if level.size is None:
        out.append(f"memory.levels.{level.name}.size is not given: the tensor arena's capacity is not checked")
    if hw.memory.weights != LINK and hw.memory.level(hw.memory.weights).size is None:
        out.append(f"memory.levels.{hw.memory.weights}.size is not given: the weights' capacity is not checked")
    return out


def check(hw: Hardware) -> list[tuple[tuple, str]]:
    """A clock the core is not sold at, or memories no Cortex-M address map holds."""
    c, problems = hw.compute, []
    if hw.clock > c.max_clock_mhz * 1e6:
        problems.append((("clock",), f"{hw.clock / 1e6:g} MHz is above the {c.max_clock_mhz} MHz this core is sold "
                                     f"at (compute.max_clock_mhz); use a clock <= {c.max_clock_mhz} MHz"))
    for level in hw.memory.levels:
        limit = SRAM_REGION_BYTES if level.name == hw.memory.activations else LARGEST_REGION_BYTES
        region = "SRAM region" if limit == SRAM_REGION_BYTES else "largest region (External RAM)"
        if level.size is not None and level.size > limit:
            problems.append((("memory", "levels", level.name, "size"),
                             f"{level.size} bytes is more than a Cortex-M's {region} addresses ({limit} bytes, "
                             f"Armv7-M/Armv8-M system address map); use a size <= {limit // 2**20} MiB"))
    return problems


KIND = Kind("mcu", "host", "Cortex-M microcontroller running TFLite Micro with CMSIS-NN: per-kernel loop cycles "
            "(DSP SIMD, Helium, or pure C), flash wait states, SRAM arena and flash capacity checked",
            McuCompute, costs=costs,
            macs_per_cycle="compute.conv_macs_per_cycle (im2col GEMM), fc_macs_per_cycle, depthwise_macs_per_cycle "
                           "for int8 CMSIS-NN kernels; 1 / reference_cycles_per_mac for TFLM reference kernels",
            notes=notes, peak_macs_per_cycle=peak_macs_per_cycle, check=check, node_notes=node_notes)
