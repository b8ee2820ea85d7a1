"""Cost of a node on an Arm Ethos-U-style NPU (U55/U65): block-based MAC engine, output stage, memory levels.

The engine as Arm describes it (Ethos-U55/U65 product descriptions: MACs per cycle per
configuration; the per-configuration micro-blocks, the NHCWB16 feature-map format and the 10-byte
bias/scale records as Vela encodes them, read for the facts; Vela's PERFORMANCE.md for how an
estimate is totalled and vela.ini for the systems' clocks and bandwidths):

* The MAC unit works on OFM micro-blocks (`ublock_height` x `ublock_width` x `ublock_depth`:
  2x1x8 on an Ethos-U55-128, 2x2x8 on a 256-MAC engine) and consumes `ifm_depth` (8) input
  channels of one kernel tap per step, so one step is uh * uw * uc * ifm_depth MACs. Every dimension is
  rounded up to its granularity: a 3-channel input pays for 8 channels or more (below), a 3x3
  map pays for 4x3 on a 2x1 ublock. This depth and block granularity is why small or odd layers reach a fraction of
  the nominal MACs/cycle.

      blocks          = N * ceil(OH/uh) * ceil(OW/uw) * ceil(Cout/uc)
      conv steps      = blocks * min(T * ceil(Cin/B) * B/ifm_depth, ceil(T/P)*P * ceil(Cin/ifm_depth))
      depthwise steps = blocks * ceil(T/P)*P                      (one input channel each)
      fc / matmul     = a 1x1 conv over M rows: batch * ceil(M/(uh*uw)) * ceil(N/uc) * ceil(K/ifm_depth)

  with T = KH*KW taps, B = `ifm_block_depth` (32: the deepest 8-bit IFM block, Vela's
  architecture_features.py calc_ifm_block_depth) and P = `part_kernel_taps` (4: regor's
  ethos_u55_performance.cpp EstimateConvCycles takes 4 taps per part-kernel and depthwise step).
  A convolution runs depth first (every tap over whole IFM blocks: a shallow input wastes most
  of a block) or part kernel (4 taps at a time over 8 channels: a 3x3 kernel pays for 12 taps),
  whichever is cheaper, as the compiler picks; a deep 3x3 convolution reaches the nominal rate.
  These steps run at `pointwise_efficiency` per cycle, a depthwise window's at `window_efficiency`.
* Sizes. An Ethos-U55 comes with 32, 64, 128 or 256 MACs; the configurations differ in the
  micro-blocks above, the number of elementwise units of the output stage (1, 2, 4, 8: Vela's
  `ArchitectureConfig.elem_units` in `architecture_features.py`) and the shared buffer's banks
  (`shram_banks`: 16, 16, 24, 48), nothing else. Every
  output-stage rate below is a number of cycles that ONE elementwise unit spends per element,
  divided by `elementwise_units`: Vela 5.2 costs an int8 ADD at 6, 3, 1.5 and 0.75 cycles per
  element and a MUL at 3, 1.5, 0.75 and 0.375 on the four sizes (its per-layer table on the
  held-out models of `benchmarks/cost_vs_vela.py`), exactly 6 and 3 cycles per unit.
* The output unit (scaling, activation) writes an element of a MAC op in
  `output_cycles_per_element` cycles per unit; it works in parallel with the MAC unit, so a
  convolution takes the longer of the two. Layers with few input channels and many outputs
  (MobileNet's expansions) are output-bound.
* The weight decoder feeds the MAC unit `weight_decode_bytes_per_cycle` weight bytes, each
  byte at least once per node (Vela 5.2 npu_performance.py `_estimate_conv_cycles`: a kernel
  step of one micro-block depth over a 32-deep IFM block, 8 x 32 weights, takes at least
  `cycles_wb` = 32 cycles; its table gives a 4608x2048 FULLY_CONNECTED 1,198,247 NPU cycles on
  the U55-128 and 1,198,780 on the U65-256, 8 bytes per cycle on both), so a layer with many
  weights per output (a one-row FULLY_CONNECTED, a conv on a small map) cannot run faster than
  its weights decode, whatever memory they come from. A MAC op takes the longest of its MAC
  steps, its output and its weight decoding.
* The elementwise and other non-MAC operations run in the output unit's elementwise path at a
  per-class number of cycles per element and unit (`<class>_cycles_per_element`, classes add,
  mul, copy, reduce: see `elementwise_class`). A product of two feature maps (BATCH_MATMUL) has
  no weight path to use and runs there too (an elementwise multiply, then a sum), at
  `matmul_cycles_per_mac`; a SQUARED_DIFFERENCE is `squared_difference_passes` elementwise passes.
* A SOFTMAX over R rows of D values (its last axis) has no unit of its own: the compiler lowers it to
  a chain of elementwise passes (Vela's legacy `softmax.py`, `SoftMax.get_graph_8bit`: max, exp by
  LUT, sum, then a reciprocal by Newton-Raphson in 32-bit arithmetic on the sums). Vela 5.2's
  `--verbose-performance` lists 28 NPU ops for an int8 SOFTMAX, whatever its shape: 7 over the
  whole tensor (MaxPool, Sub+LUT, Asr, ReduceSum, Mul, an Add that broadcasts a 32-bit constant,
  Asr) and 21 over the R row sums alone (CLZ, shifts and the three Newton-Raphson iterations), so
  a row pass costs about an op's overhead. We cost `softmax_full_passes` passes of R * D elements
  and `softmax_row_passes` passes of R values, each at the MUL rate plus the elementwise overhead.
  The broadcasting Add reads its constant from where constants live (off-chip flash on the U55
  system): D 32-bit values per row, each row's run rounded up to a burst (`weight_burst_bytes`),
  R * max(burst, 4 * D) bytes (`softmax_constant_bytes`; Vela 5.2 gives that Add 4096 flash access
  cycles, one per byte, for R x D = 32 x 8 (the transformer fixture) and 32 x 32, 2048 for 16 x 16,
  1024 for 4 x 64, 1600 for 2 x 200 and 4000 for 1 x 1000, at every U55 size; the one miss seen is
  64 x 4, 2048 rather than 8192). That read overlaps only that pass: the
  node takes the other passes plus the longer of that pass and its traffic. Not modelled: on some
  shapes Vela keeps the one-deep tensor of row sums in 16-channel bricks, so each row pass costs
  16 R values (R x D = 16 x 16: every row pass as dear as a whole-tensor one, Vela's SOFTMAX 2x
  ours; the fixture's 32 x 8 and 32 x 32 cost R), nor the depth rounded up to a brick in some
  whole-tensor passes (its Sub+LUT on D = 8). LOG_SOFTMAX is not
  run on the NPU by Vela 5.2 (regor's `tflite_operator_constraints("EthosU55")` lists SOFTMAX
  only) and no shipped config claims it; one that does gets SOFTMAX's chain, assumed alike.
* Pooling and table lookups go through the pooling path, which reads the IFM one IFM
  micro-block (`ublock_height` x `ublock_width` x `ifm_depth` elements) at a time and spends
  `pooling_cycles_per_tap` cycles per window tap on it, at least `pooling_min_taps` taps (how
  Vela's Ethos-U55 estimate costs a pooling block: regor's `ethos_u55_performance.cpp`,
  `EstimateConvCycles`, read for the facts). A lookup activation (TANH, LOGISTIC, EXP, ...) is a
  1x1 window there: 4 taps x 4 cycles per 16-element micro-block is the 1.0 cycle per element
  Vela 5.2 gives a LUT on the U55-128, 2.0 on the 64 (8-element micro-block), 0.5 on the 256;
  a 3x3 max pool on the 128 is 9 x 4 / 16 = 2.25 (Vela: 2.27). A LUT fused into its producer's
  output stage is the activation unit's single table instead, `activation_lut_cycles_per_element`
  whatever the size (Vela's architecture_features.py gives a LUT activation 1.0 cycle per
  element on every U55 size and the U65-256; Vela 5.2 costs a conv+TANH alike on the U55-128 and
  -256), in parallel with the op's own output work: the element takes the longer of the two.
  Vela's estimate treats the U55-32 by name (its pools and LUTs 2x faster than its 8-element
  micro-block gives); that exception is not modelled (our U55-32 is slow there).
* A 2x bilinear RESIZE is lowered by Vela 5.2 to one 2x2 depthwise convolution per output
  phase (4 for 2x: `--verbose-performance` lists 4 DepthwiseConv2D, each writing an OFM about
  the size of the output) after copying the input into a padded buffer (MemoryCopy): we cost
  scale^2 such passes, each MAC- or output-bound like any depthwise convolution, plus a copy
  of the input.
* Every NPU operation pays a fixed cost (command stream, block setup, pipeline fill and
  drain): `mac_op_overhead_cycles` on the MAC engine, `elementwise_op_overhead_cycles` else.
* Memory, through the config's levels (`accelsim.hardware.memory`): in Vela's Shared_Sram mode the
  activations level is the SRAM on AXI0 and the weights level the constant area on AXI1
  (off-chip flash on the U55 system, DRAM on the U65 one), read at every inference. The NPU
  reaches `sram_efficiency` / `weight_efficiency` of those levels' peak bandwidths. Feature
  maps move in bricks of `brick_depth` channels (the NHCWB16 format: an 8-channel map moves as
  16), counted where the node's geometry gives its channels (conv-like ops), as is elsewhere.
  Weights are counted uncompressed plus `bias_bytes_per_channel` per output channel (Vela
  packs a 40-bit bias, 32-bit scale and 6-bit shift into 10 bytes; TFLite's int32 bias is 4
  of them, already in `NodeWork.weight_bytes`); Vela's lossless weight compression is not
  modelled: on our fixtures its encoded weights are 0.99-1.10x the original size.
* A constant operand an elementwise op broadcasts (batch normalisation's per-channel scale) is
  not a weight stream but a second input feature map left in the constant area: re-read for
  every output pixel of every OFM block, in runs of the block's depth rounded up to the
  memory's burst (`NpuCompute.elementwise_block_elements`, from `shram_banks`, and
  `weight_burst_bytes`; see `broadcast_operand_bytes`). On DenseNet-121 this is 61 of Vela's 72 MB of flash reads and
  most of its time on the U55; a 256-byte scale over 56x56 pixels reads 6.4 MB.
* A node takes the longest of compute and each level's traffic (`accelsim.hardware.roofline.timed`), which is how Vela
  totals an estimate: "the sum of the single action that consumes the most cycles per pass"
  (PERFORMANCE.md, "Cycles").

What Vela does to the graph and we reflect in `costs` (model order): reshape-like ops are
removed, CONCATENATION is free (producers write into the concatenated tensor), a PAD feeding a
convolution or pool becomes that op's padding, and an activation (RELU*, TANH, LOGISTIC) right
after the op producing its input runs in that op's output stage (a LUT activation at the
activation unit's rate, in parallel with the op's own output work; not after a resize, which is
several ops). Vela's other rewrites (MEAN as a depthwise convolution, SQUARED_DIFFERENCE as
several 32-bit passes, transposes around a depth-multiplier depthwise) are folded into the
per-class costs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsim.core.feasibility import memory_refusal
from accelsim.hardware import energy
from accelsim.hardware import memory as mem
from accelsim.hardware.memory import Level, Traffic
from accelsim.hardware.roofline import levels_of, timed
from accelsim.hardware.types import Cost, Hardware, Kind, spec
from accelsim.runtime.work import NodeWork

ELEMENTWISE_CLASSES = ("add", "mul", "lut", "copy", "reduce")
SHRAM_BANK_BYTES = 1024  # Vela architecture_features.py: shram_bank_size
# Lowered to depthwise convolutions, one per output phase (see the module docstring).
_RESIZE = "RESIZE_BILINEAR"

_MAC_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "FULLY_CONNECTED", "BATCH_MATMUL"}
_POOLS = {"AVERAGE_POOL_2D", "MAX_POOL_2D"}
# Removed by the compiler: only the tensor's shape changes.
_REMOVED = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
# Applied by the output stage of the op producing their input (the activation function / LUT).
_LUT_ACTIVATIONS = {"TANH", "LOGISTIC"}
_FUSABLE_ACTIVATIONS = {"RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", *_LUT_ACTIVATIONS}
# Both operands (or the one) rescaled to a common scale before the operation.
_ADD_OPS = {"ADD", "SUB", "QUANTIZE"}
# Ops the elementwise unit has no single instruction for, run as a chain of passes (Vela 5.2's
# per-layer table shows the chains: Sub/Mul/Add/LUT/CLZ/shifts): the compute field counting them.
_PASSES = {"SQUARED_DIFFERENCE": "squared_difference_passes"}
# Lowered to whole-tensor and per-row passes (see the module docstring).
_SOFTMAX = {"SOFTMAX", "LOG_SOFTMAX"}
# Vela's softmax.py builds the chain's intermediates and constants as DataType.int32.
_SOFTMAX_CONSTANT_ITEMSIZE = 4
# Elementwise ops of two feature maps: a constant operand is a second input feature map.
_BINARY = {"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"}
_MUL_OPS = {"MUL", "MAXIMUM", "MINIMUM", "ABS", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "NEG"}


@dataclass(frozen=True)
class NpuCompute:
    """The MAC engine, output unit and elementwise path of one Ethos-U configuration (NPU core cycles)."""

    ublock_height: int = spec("count", "OFM micro-block height", example=2)
    ublock_width: int = spec("count", "OFM micro-block width", example=2)
    ublock_depth: int = spec("count", "OFM micro-block depth (output channels)", example=8)
    ifm_depth: int = spec("count", "input channels consumed per MAC step", example=8)
    pointwise_efficiency: float = spec("fraction", "MAC steps per cycle of a 1x1 kernel")
    window_efficiency: float = spec("fraction", "MAC steps per cycle of a spatial window (KxK, depthwise)")
    shram_banks: int = spec("count", "1 KB banks of the shared buffer (SHRAM; Vela: shram_banks)", example=24)
    elementwise_units: int = spec("count", "elementwise units of the output stage (Vela: elem_units)", example=4)
    output_cycles_per_element: float = spec("number", "cycles one elementwise unit takes to write an output "
                                            "element of a MAC op")
    add_cycles_per_element: float = spec("number", "cycles per element and elementwise unit of ADD, SUB, QUANTIZE "
                                         "(rescaled operands)")
    mul_cycles_per_element: float = spec("number", "cycles per element and elementwise unit of MUL, MIN, MAX, "
                                         "clamps")
    copy_cycles_per_element: float = spec("number", "cycles per byte and elementwise unit of a data-movement op "
                                          "(slice, transpose)")
    reduce_cycles_per_element: float = spec("number", "cycles per input element and elementwise unit of a "
                                            "reduction (MEAN, SUM)")
    matmul_cycles_per_mac: float = spec("number", "cycles per MAC and elementwise unit of a product of two "
                                        "feature maps")
    pooling_cycles_per_tap: int = spec("count", "cycles the pooling path spends per window tap on one IFM "
                                       "micro-block", example=4)
    pooling_min_taps: int = spec("count", "taps a pooling-path block costs at least (a LUT is 1 tap)", example=4)
    ifm_block_depth: int = spec("count", "input channels of one 8-bit IFM block a depth-first convolution steps "
                                "through per tap", example=32)
    part_kernel_taps: int = spec("count", "kernel taps a part-kernel (or depthwise) step takes at once", example=4)
    activation_lut_cycles_per_element: float = spec("number", "cycles per element of a lookup activation fused into "
                                                    "an op's output stage (one table, whatever the size)")
    mac_op_overhead_cycles: int = spec("count", "fixed cycles of every MAC-engine or pooling op", minimum=0,
                                       example=500)
    elementwise_op_overhead_cycles: int = spec("count", "fixed cycles of every other NPU op", minimum=0, example=30)
    softmax_full_passes: int = spec("count", "NPU ops of one SOFTMAX that go over its whole tensor", example=7)
    softmax_row_passes: int = spec("count", "NPU ops of one SOFTMAX that go over its row sums only (one value "
                                   "per row)", minimum=0, example=21)
    squared_difference_passes: int = spec("count", "NPU ops one SQUARED_DIFFERENCE becomes", default=1, example=8)
    bias_bytes_per_channel: int = spec("count", "bytes of packed bias and scale per output channel",
                                       default=10, example=10)
    brick_depth: int = spec("count", "channels of one feature-map brick in SRAM (NHCWB16: 16)", default=1,
                            example=16)
    weight_decode_bytes_per_cycle: float = spec("number", "weight bytes the weight decoder feeds the MAC unit "
                                                "per cycle", default=8.0, example=8)
    weight_burst_bytes: int = spec("count", "bytes of one burst on the weights' level (a broadcast constant "
                                   "operand's partial runs are rounded up to it)", default=1, example=128)
    sram_efficiency: float = spec("fraction", "fraction of the activations level's bandwidth reached",
                                  default=1.0)
    weight_efficiency: float = spec("fraction", "fraction of the weights level's bandwidth reached", default=1.0)

    @property
    def ofm_ublock(self) -> tuple[int, int, int]:
        return self.ublock_height, self.ublock_width, self.ublock_depth

    @property
    def elementwise_block_elements(self) -> int:
        """OFM block volume of an 8-bit elementwise op: the largest power of two whose two input blocks and one
        output block, each double-buffered, fit the shared buffer (1 KB banks: Vela's architecture_features.py,
        shram_bank_size; double buffering: its SHRAM block sizing). Vela 5.2 --verbose-schedule on DenseNet-121
        (a fit row): 4096 on the U55-128 (24 banks), 8192 on the U65-256 (48 banks)."""
        return 2 ** int(math.log2(self.shram_banks * SHRAM_BANK_BYTES // 6))

    @property
    def ifm_ublock_elements(self) -> int:
        """Elements of one IFM micro-block (ublock_height x ublock_width x ifm_depth), what the pooling path reads."""
        return self.ublock_height * self.ublock_width * self.ifm_depth

    def cycles_per_element(self, op_class: str) -> float:
        """Cycles per element of an elementwise class (one of ELEMENTWISE_CLASSES) on the whole output stage."""
        if op_class == "lut":
            return self.pooling_cycles(1)
        return getattr(self, f"{op_class}_cycles_per_element") / self.elementwise_units

    def pooling_cycles(self, taps: int) -> float:
        """Cycles per output element of the pooling path for a window of `taps` taps (a lookup table: 1 tap)."""
        return max(self.pooling_min_taps, taps) * self.pooling_cycles_per_tap / self.ifm_ublock_elements

    @property
    def output_elements_per_cycle(self) -> float:
        """Output elements of a MAC op the output stage writes per cycle, all its elementwise units together."""
        return self.elementwise_units / self.output_cycles_per_element


def mac_steps(work: NodeWork, compute: NpuCompute) -> tuple[int, bool]:
    """(MAC steps, whether they run at the depthwise window rate) of a MAC-engine node; (0, False) otherwise.

    A RESIZE_BILINEAR counts one of its passes: a 2x2 depthwise convolution over its output.
    """
    uh, uw, uc = compute.ofm_ublock
    ifm_depth, part = compute.ifm_depth, compute.part_kernel_taps
    conv = work.conv
    if conv is not None and not conv.transposed:
        blocks = conv.batch * math.ceil(conv.out_h / uh) * math.ceil(conv.out_w / uw) * math.ceil(conv.out_c / uc)
        taps = conv.kernel_h * conv.kernel_w
        if conv.depthwise:
            # One input channel per output channel, the kernel taken `part` taps at a time.
            return blocks * math.ceil(taps / part) * part, True
        # The cheaper traversal: depth first (each tap over whole IFM blocks of ifm_block_depth channels) or
        # part kernel (`part` taps at a time over ifm_depth channels), as the compiler picks per layer.
        depth_first = taps * math.ceil(conv.in_c / compute.ifm_block_depth) * (compute.ifm_block_depth // ifm_depth)
        part_kernel = math.ceil(taps / part) * part * math.ceil(conv.in_c / ifm_depth)
        return blocks * min(depth_first, part_kernel), False
    if work.gemm is not None:
        g = work.gemm
        return g.batch * math.ceil(g.m / (uh * uw)) * math.ceil(g.n / uc) * math.ceil(g.k / ifm_depth), False
    if work.op == _RESIZE and work.elements:
        # One MAC per tap per output (runtime.work: 4 taps), channels independent: a depthwise pass.
        return math.ceil(work.elements / (uh * uw * uc)) * math.ceil(work.macs // work.elements / part) * part, True
    return 0, False


def resize_passes(work: NodeWork) -> int:
    """Depthwise passes a RESIZE_BILINEAR is lowered to: one per output phase, the scale squared (4 for 2x)."""
    return max(1, round(work.output_bytes / work.input_bytes)) if work.input_bytes else 1


def elementwise_class(work: NodeWork) -> str:
    """The elementwise-path class of a non-MAC node (one of ELEMENTWISE_CLASSES)."""
    if work.op in _ADD_OPS:
        return "add"
    if work.op in _MUL_OPS:
        return "mul"
    if work.kind == "reduce":
        return "reduce"
    if work.kind == "move":
        return "copy"
    # Any other function of one element (TANH, EXP, GELU, RSQRT, ...) is a lookup table.
    return "lut"


def compute_cycles(work: NodeWork, compute: NpuCompute, fused: str | None = None) -> int:
    """NPU core cycles of one node's computation, ignoring memory.

    Args:
        work: the node.
        compute: the engine.
        fused: the elementwise class of an activation run in this node's output stage, if any.
    """
    # A fused activation runs in the output stage beside the op's own output work: the slower rate sets the pace.
    fused_rate = compute.activation_lut_cycles_per_element if fused == "lut" else 0.0
    output_rate = max(1 / compute.output_elements_per_cycle, fused_rate)
    if work.op == "BATCH_MATMUL" and not work.weight_bytes:
        # Both operands are feature maps: the weight path cannot hold one, so the compiler runs
        # the product through the elementwise units (multiply, then reduce), MAC by MAC.
        return math.ceil(work.macs * compute.matmul_cycles_per_mac / compute.elementwise_units
                         + compute.mac_op_overhead_cycles)
    if work.op in _POOLS or (work.kind == "window" and work.elements):
        # The pooling path: max(min taps, taps) x cycles per tap per IFM micro-block (module docstring).
        per_element = max(compute.pooling_cycles(work.macs // max(1, work.elements)), output_rate)
        return math.ceil(work.elements * per_element + compute.mac_op_overhead_cycles)
    steps, windowed = mac_steps(work, compute)
    if steps or work.op in _MAC_OPS:
        per_step = 1 / (compute.window_efficiency if windowed else compute.pointwise_efficiency)
        decode = work.weight_bytes / compute.weight_decode_bytes_per_cycle
        one = max(steps * per_step, work.elements * output_rate, decode) + compute.mac_op_overhead_cycles
        if work.op != _RESIZE:
            return math.ceil(one)
        # Vela's lowering: the input copied into a padded buffer, then one depthwise pass per output phase.
        copy = work.input_bytes * compute.cycles_per_element("copy") + compute.elementwise_op_overhead_cycles
        return math.ceil(resize_passes(work) * one + copy)
    if work.op in _SOFTMAX:
        return softmax_pass_cycles(work, compute) * compute.softmax_full_passes + math.ceil(
            compute.softmax_row_passes * _pass_cycles(softmax_rows(work), compute))
    passes = _PASSES.get(work.op)
    if passes is not None:
        # No such unit: the compiler runs the op as a chain of elementwise (and LUT) passes.
        per_pass = work.elements * compute.cycles_per_element("mul") + compute.elementwise_op_overhead_cycles
        return math.ceil(getattr(compute, passes) * per_pass)
    op_class = elementwise_class(work)
    # Reductions read every input element once: work.macs counts them.
    elements = work.macs if op_class == "reduce" else work.elements
    busy = max(elements * compute.cycles_per_element(op_class), work.elements * fused_rate)
    return math.ceil(busy + compute.elementwise_op_overhead_cycles)


def _pass_cycles(elements: int, compute: NpuCompute) -> float:
    """Cycles of one elementwise pass of a lowered chain over `elements` values: MUL rate plus op overhead."""
    return elements * compute.cycles_per_element("mul") + compute.elementwise_op_overhead_cycles


def softmax_rows(work: NodeWork) -> int:
    """Rows of a SOFTMAX: what its work records, else (a work hook that does not say) one per element, the
    most the lowering could take."""
    return work.rows or work.elements


def softmax_pass_cycles(work: NodeWork, compute: NpuCompute) -> int:
    """Cycles of one whole-tensor pass of a SOFTMAX's chain (module docstring); 0 for any other node."""
    return math.ceil(_pass_cycles(work.elements, compute)) if work.op in _SOFTMAX else 0


def softmax_constant_bytes(work: NodeWork, compute: NpuCompute) -> int:
    """Bytes of the 32-bit constant a SOFTMAX's broadcasting pass reads from the constants' level: D values per
    row, each row's run rounded up to a burst (module docstring); 0 for any other node."""
    if work.op not in _SOFTMAX or not work.elements:
        return 0
    rows = softmax_rows(work)
    run = work.elements // rows * _SOFTMAX_CONSTANT_ITEMSIZE
    return rows * max(compute.weight_burst_bytes, run)


def feature_map_bytes(work: NodeWork, brick_depth: int) -> int:
    """Bytes a node reads and writes in SRAM, its conv-like feature maps padded to whole channel bricks."""
    conv = work.conv
    if conv is None or brick_depth == 1 or not work.elements:
        return work.input_bytes + work.output_bytes
    itemsize = work.output_bytes // work.elements
    pixels_in = conv.batch * conv.in_h * conv.in_w
    pixels_out = conv.batch * conv.out_h * conv.out_w
    bricks = brick_depth * itemsize
    return (pixels_in * math.ceil(conv.in_c / brick_depth) + pixels_out * math.ceil(conv.out_c / brick_depth)) * bricks


def broadcast_operand_bytes(work: NodeWork, compute: NpuCompute) -> int:
    """Bytes an elementwise node reads of a constant operand it broadcasts; 0 for any other node.

    The compiler does not expand such an operand (a per-channel scale of C values over H x W
    pixels, as batch normalisation leaves it): it stays where the constants live and is read as
    a second input feature map, for every output pixel of every OFM block again. A block as deep
    as C reads the C values of each pixel as one contiguous run; a shallower block reads runs of
    its depth out of each pixel's C, each rounded up to a burst of that memory. Vela 5.2 on
    DenseNet-121's 62 batch-normalisation MULs (--verbose-schedule, per-layer CSV): blocks of
    `NpuCompute.elementwise_block_elements`, as wide and high as the largest power of two that fits the map,
    as deep as the rest allows but at least one brick (56x56: 8x32x16 on the U55-128); off-chip
    flash reads of 128 / depth bytes per output element (8 at depth 16, 2 at 64, 1 from 128),
    half of that with the flash's burst set to 64 in vela.ini; on the transformer fixture's
    layer-norm scale (8 x 32, one block holding all 32 channels) 1 byte per element. Maps are
    taken square (the work carries no height and width for elementwise ops). A scalar operand
    is an immediate of the command, a full-size one is read as is.
    """
    if work.op not in _BINARY or not work.weight_bytes or not work.elements:
        return 0
    itemsize = max(1, work.output_bytes // work.elements)
    values = work.weight_bytes // itemsize
    if values <= 1 or values >= work.elements or work.elements % values:
        return 0
    pixels = work.elements // values
    side = 2 ** int(math.log2(math.isqrt(pixels)))
    depth = max(compute.brick_depth, compute.elementwise_block_elements // (side * side))
    if depth >= values:
        # The block holds every channel: the operand is read whole, one contiguous run per pixel.
        return pixels * values * itemsize
    return pixels * math.ceil(values / depth) * max(compute.weight_burst_bytes, depth * itemsize)


def encoded_weight_bytes(work: NodeWork, compute: NpuCompute) -> int:
    """Bytes of a node's constants as the NPU reads them: weights plus packed bias and scale per channel, or
    a broadcast operand as `broadcast_operand_bytes` counts it."""
    if not work.weight_bytes:
        return 0
    broadcast = broadcast_operand_bytes(work, compute)
    if broadcast:
        return broadcast
    channels = work.conv.out_c if work.conv is not None else work.gemm.n if work.gemm is not None else 0
    # TFLite's int32 bias (4 bytes per channel) is already part of weight_bytes.
    return work.weight_bytes + max(0, compute.bias_bytes_per_channel - 4) * channels


def absorbed(works: Sequence[NodeWork]) -> list[bool]:
    """Which nodes the compiler folds into a neighbour or removes (see the module docstring), in model order."""
    return [_absorbed(works, i) for i in range(len(works))]


def _absorbed(works: Sequence[NodeWork], i: int) -> bool:
    work = works[i]
    if work.op in _REMOVED or work.op == "CONCATENATION":
        return True
    if work.op in ("PAD", "PADV2") and i + 1 < len(works):
        nxt = works[i + 1]
        return (nxt.op in _MAC_OPS or nxt.op in _POOLS) and nxt.input_bytes >= work.output_bytes
    if work.op in _FUSABLE_ACTIVATIONS and i > 0:
        prev = works[i - 1]
        # Not after a RESIZE_BILINEAR: lowered to several passes, it has no single output stage to hold it.
        return (prev.kind != "move" and prev.op not in _FUSABLE_ACTIVATIONS and prev.op != _RESIZE
                and prev.output_bytes == work.input_bytes)
    return False


def model_compute_cycles(works: Sequence[NodeWork], compute: NpuCompute) -> list[int]:
    """Compute cycles of a device's nodes in model order; an absorbed node's are 0.

    An absorbed activation's cost moves to its producer's output stage: nothing for a clamp
    (RELU*), the activation LUT's rate per element for TANH and LOGISTIC.
    """
    gone = absorbed(works)
    out = []
    for i, work in enumerate(works):
        nxt = works[i + 1] if i + 1 < len(works) else None
        fused = "lut" if nxt is not None and gone[i + 1] and nxt.op in _LUT_ACTIVATIONS else None
        out.append(0 if gone[i] else compute_cycles(work, compute, fused))
    return out


def traffic(works: Sequence[NodeWork], hw: Hardware) -> list[Traffic]:
    """Bytes per level of a device's nodes: `accelsim.hardware.memory`'s placement with the NPU's byte counts.

    Activations go where the generic rules put them (spilling below a full level), counted in
    whole bricks; weights are the encoded stream, cached or streamed from where they live as
    the generic rules split them. An absorbed node moves nothing.
    """
    memory, compute = hw.memory, hw.compute
    refuse = memory_refusal(hw.error)
    memory = mem.placed(works, memory, refuse, hw.name, hw.link is not None)
    homes = mem.activation_levels(works, memory, refuse)
    streams = mem.streamed_parameters(works, mem.weight_cache(works, memory))
    out = []
    for work, home, stream, gone in zip(works, homes, streams, absorbed(works)):
        if gone:
            out.append(Traffic(()))
            continue
        weights = encoded_weight_bytes(work, compute)
        streamed = weights if stream else 0
        source = home.name if memory.weights == memory.activations else memory.weights
        moved: dict[str, int] = {}
        # A constant the compiler made (not the model's) is read from where constants live, every inference.
        for name, nbytes in ((home.name, feature_map_bytes(work, compute.brick_depth)),
                             (memory.cache, weights - streamed), (source, streamed),
                             (memory.weights, softmax_constant_bytes(work, compute))):
            if nbytes:
                moved[name] = moved.get(name, 0) + nbytes
        out.append(Traffic(tuple(moved.items()), streamed))
    return out


def effective_levels(hw: Hardware) -> dict[str, Level]:
    """The device's levels with the bandwidth the NPU reaches on them (the compute block's efficiencies)."""
    compute, memory = hw.compute, hw.memory
    reached = {memory.weights: compute.weight_efficiency, memory.activations: compute.sram_efficiency}
    return {name: dataclasses.replace(level, bandwidth=level.bandwidth * reached.get(name, 1.0))
            for name, level in levels_of(hw).items()}


def costs(works: Sequence[NodeWork], hw: Hardware) -> list[Cost]:
    """Costs of a device's nodes in model order: compute overlapped with its SRAM and weight traffic.

    Raises:
        Infeasible: the weights or a node's activations fit no memory level (see `accelsim.hardware.memory`).
    """
    levels = effective_levels(hw)
    watts = energy.static_power(hw)
    out = []
    for work, cycles, moved in zip(works, model_compute_cycles(works, hw.compute), traffic(works, hw)):
        # A SOFTMAX's traffic overlaps only the pass reading its constant; its other passes come on top.
        overlapped = softmax_pass_cycles(work, hw.compute) if cycles else 0
        out.append(timed(work, overlapped or cycles, hw, moved, levels, watts,
                         fixed_cycles=cycles - overlapped if overlapped else 0))
    return out


def peak_macs_per_cycle(work: NodeWork, hw: Hardware) -> float:
    """The MAC unit's MACs per cycle: one micro-block step (uh * uw * uc * ifm_depth)."""
    c = hw.compute
    return c.ublock_height * c.ublock_width * c.ublock_depth * c.ifm_depth


KIND = Kind("npu", "accelerator", "Arm Ethos-U-style NPU: block-based MAC engine, output unit, SRAM + flash/DRAM",
            NpuCompute, costs=costs,
            macs_per_cycle="ublock_height x ublock_width x ublock_depth x ifm_depth MACs per step (2 x 1 x 8 x 8 "
                           "= 128 on an Ethos-U55-128), pointwise_efficiency steps per cycle on 1x1 kernels",
            peak_macs_per_cycle=peak_macs_per_cycle,
            # Vela 5.2, tflite_supported_operators.py: supported_op_dtypes (constraint_tens_dtype, "Tensors must be
            # of type: int16, int32, int8, uint8"): the NPU runs no float op
            dtypes=frozenset({"int8", "uint8", "int16", "int32"}))
