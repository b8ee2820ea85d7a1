"""The shape of one design point's result: what results.json, results.csv and the SQLite store hold.

`results.record` and `results.error_record` build these; reports, `compare`, the store and the
executors read them. Every number a report shows comes from a record, so md, html, json and csv agree.
Units are in the key's name (`_us` microseconds, `_ms` milliseconds, `_uj` microjoules, `_bytes`
bytes, `_pct` percent) or in the field's comment.

TypedDicts rather than dataclasses: a record must stay a plain JSON-ready dict, since the store
keeps it as JSON text, Dask ships it between processes, results.json is its dump and golden files
compare it byte for byte; a TypedDict types it for readers and checkers without changing one byte.

A failed point's record has the `PointHeader` keys only; an ok point's has every `PointResult` key.
The TypedDicts do not use `from __future__ import annotations`: TypedDict reads its annotations
at class creation to tell required keys from optional ones.
"""

import typing
from typing import Any, TypedDict


class PartitionRow(TypedDict):
    """One delegate partition of the point (`partition_table`)."""

    partition: int  # the partition's index in the delegation
    unit: str  # accelerator name that runs it
    delegate_node: int  # index of the delegate node that replaced its nodes
    nodes: list[int]  # original node indices it took
    ops: list[str]  # op names of those nodes
    input_bytes: int  # bytes copied host -> device per call
    output_bytes: int  # bytes copied device -> host per call
    compute_us: float  # its nodes' compute time
    memory_us: float  # its nodes' time waiting on memory levels beyond compute
    transfer_us: float  # input and output copies over the link
    overhead_us: float  # delegate call overhead
    pct_of_latency: float  # (compute + memory + transfer + overhead) / point latency
    level_bytes: dict[str, int]  # memory level name -> bytes its nodes moved there
    bound_us: dict[str, float]  # bound ("compute" or a level name) -> node time under that bound
    energy_uj: float  # its nodes (dynamic + static while busy) and its transfers


class OpProfileRow(TypedDict):
    """One node in run order, in benchmark_model's op-profile columns (`op_profile`)."""

    node: int  # original node index
    op: str  # op name
    unit: str  # "host" or the accelerator name
    partition: int | None  # its partition's index; None on the host
    first_ms: float  # time of its first run
    avg_ms: float  # average time per run (equal to first_ms: the simulation is deterministic)
    pct: float  # share of all node time
    cdf_pct: float  # running sum of pct in run order
    times_called: int  # runs per inference


class OpSummaryRow(TypedDict):
    """One op type, in benchmark_model's "Summary by node type" columns (`op_summary`)."""

    op: str  # op name
    count: int  # nodes of this op
    avg_ms: float  # the type's total time per inference
    pct: float  # share of all node time
    cdf_pct: float  # running sum of pct, slowest type first
    times_called: int  # runs of nodes of this op per inference


class NodeCostRow(TypedDict):
    """What the cost model says of one node, in run order (`node_costs`)."""

    node: int  # original node index
    macs: int  # multiply-accumulates
    cycles: int  # clock cycles of the node's unit
    utilization_pct: float | None  # MACs / (cycles x the unit's peak MACs per cycle); None when the kind has no peak
    compute_us: float  # time of the compute units alone
    bound: str  # what set the node's time: "compute" or a memory level name
    level_bytes: dict[str, int]  # memory level name ("link": host memory over the link) -> bytes moved
    streamed_weight_bytes: int  # weights fetched from below the weights level on this run
    energy_uj: float  # dynamic + static while busy
    note: str | None  # what the unit's kind says of the kernel that ran it (a fallback kernel); None for nothing


class RejectedRow(TypedDict):
    """A node an accelerator did not take (`rejected`)."""

    node: int  # original node index
    op: str  # op name
    version: int  # op version
    reason: str | None  # the claim rule that refused it; None when no rule said why


class LoopRow(TypedDict):
    """A control-flow node as costed (`loops`)."""

    node: str  # "<subgraph>:<node>"
    op: str  # op name (WHILE, IF, ...)
    trips: int  # trip count used
    source: str  # where the count came from: run, constant, shape, branch, override, default


class EventRow(TypedDict):
    """One step of the simulated timeline (`events`)."""

    resource: str  # the resource that was busy (a unit, a link, ...)
    kind: str  # sim.STEP_KINDS: compute, transfer, overhead or param_load
    label: str  # what ran, for traces and Gantt charts
    node: int | None  # original node index; None for steps of no single node
    partition: int | None  # partition index; None on the host
    start_us: float  # start time from the inference's start
    end_us: float  # end time from the inference's start
    bytes: int  # bytes moved by the step (0 for compute)


class PartitionChoiceRecord(TypedDict):
    """Partition policy 'cost''s (or a system's `assign: cost`) decision next to TFLite's (`partition_choice`)."""

    objective: str  # what the policy minimised: latency or energy (delegates.spec.OBJECTIVES)
    search: str  # "exact" (every subset) or "greedy"; with assign cost, "assign exact" or "assign greedy"
    tflite_partitions: int  # partitions TFLite's choice delegates
    host_partitions: list[list[Any]]  # [accelerator name, partition ordinal] pairs kept on the host (assign cost:
    # TFLite's partitions none of whose nodes the chosen assignment delegates)
    tflite_latency_us: float  # latency of TFLite's choice
    tflite_energy_uj: float  # energy of TFLite's choice
    saved_us: float  # TFLite's latency minus this point's
    saved_energy_uj: float  # TFLite's energy minus this point's


class NumericsOutput(TypedDict):
    """One model output's error against the reference interpreter."""

    index: int  # output tensor index
    name: str  # output tensor name
    mean_abs_error: float  # over every run and element, in the output's real units
    std_abs_error: float
    max_abs_error: float


class NumericsRecord(TypedDict):
    """inference_diff's result for the point (`numerics`)."""

    runs: int  # inferences compared
    outputs: list[NumericsOutput]


class LayerRow(TypedDict):
    """One node of an ok point as layers/<point>.csv and the HTML per-layer tables show it (`results.layer_rows`)."""

    node: int  # original node index
    op: str  # op name
    unit: str  # "host" or the accelerator name
    partition: int | None  # None on the host
    time_us: float  # simulated node time: compute_us plus waiting on the level named by bound
    pct: float  # share of all node time
    cdf_pct: float  # running sum of pct in run order
    macs: int
    cycles: int
    utilization_pct: float | None
    compute_us: float
    bound: str
    bytes_per_level: dict[str, int]  # the unit's memory level names ("link": host memory over the link)
    streamed_weight_bytes: int
    energy_uj: float
    not_delegated_because: str | None  # why no accelerator took it; None when one did or none was asked
    note: str | None  # e.g. a Cortex-M node on a TFLM reference kernel (CMSIS-NN has none); None for nothing


class PointHeader(TypedDict):
    """The keys every record has, failed or not: the point's identity and outcome."""

    id: str  # stable hash of the point's inputs (model bytes, resolved configs, options, version)
    model: str  # model path as given
    model_name: str  # the model file's stem
    variant: str  # the experiment's variant name
    host: str  # host config name
    accelerators: list[str]  # accelerator config names, in delegation order
    sweep: dict[str, Any]  # swept key path -> value as written ({} when not swept)
    schedule: str  # sequential or dataflow
    status: str  # "ok", "infeasible" (the hardware cannot run the model; accelsim.core.feasibility) or "error"
    error: str | None  # the error's one-line message ("<Type>: <message>"), or why it is infeasible; None when ok
    speedup: float | None  # CPU-only latency / latency for the same model and sweep point; None without a baseline


class PointResult(PointHeader, total=False):
    # set exactly when status is "infeasible": its reason, one of accelsim.core.feasibility.REASONS
    infeasible: str

    """A design point's record: the header, plus (present exactly when status is "ok") its numbers.

    Two groups are all-or-none: DETAIL_KEYS, which an experiment with `traces: pareto | none` does
    not store for points it does not trace, and AREA_KEYS, which the experiment adds (on every
    status) as it stores a point, from the point's system.
    """

    latency_us: float  # simulated end-to-end latency of one inference
    init_us: float  # simulated initialization (parameter loading), not part of latency
    compute_us: float  # busy time computing, summed over every resource
    memory_us: float  # node time waiting on memory levels beyond compute (streamed weights, spills, bandwidth)
    transfer_us: float  # busy time of host <-> device copies
    overhead_us: float  # delegate call overhead
    partition_overhead_pct: float  # (transfer + call overhead) / latency
    # energy_uj, static_energy_uj, edp_uj_ms and a device's energy_by_unit_uj are None ("not modelled") when a
    # device has no energy model; energy_not_modelled then names those devices (accelsim.hardware.energy)
    energy_uj: float | None  # one inference: every node, transfers, and every device's static power while idle
    static_energy_uj: float | None  # the static part of energy_uj
    energy_by_unit_uj: dict[str, float | None]  # host or accelerator name -> its share of energy_uj
    edp_uj_ms: float | None  # energy-delay product: energy_uj x latency in ms
    energy_not_modelled: list[str]  # present only when some device has no energy model: their names
    warnings: list[str]  # present only when the costs rest on something a reader must see: spilled weights, custom ops
    init_energy_uj: float  # parameter loads at initialization, not part of energy_uj
    partitions: int  # delegate partitions
    delegated_nodes: int  # nodes run by accelerators
    total_nodes: int  # all original nodes
    transfer_bytes: int  # bytes over host <-> device links per inference
    init_param_bytes: int  # cached weights loaded at initialization
    streamed_param_bytes: int  # weights streamed on every inference (they did not fit the cache)
    level_bytes: dict[str, int]  # "unit.level" -> bytes moved by nodes ("link": host memory over the link)
    utilization_pct: dict[str, float]  # resource -> busy / latency
    partition_table: list[PartitionRow]
    op_profile: list[OpProfileRow]
    op_summary: list[OpSummaryRow]
    node_costs: list[NodeCostRow]
    rejected: list[RejectedRow]
    loops: list[LoopRow]
    events: list[EventRow]
    partition_choice: PartitionChoiceRecord | None  # None unless a partition policy 'cost' accelerator ran
    numerics: NumericsRecord | None  # None unless the experiment asked for numerics
    # an LLM generation point (experiment `generate:`): accelsim.workloads.generation.Generation.as_dict (ttft_s,
    # prefill/decode tokens per second, memory, phases); its latency_us is then the time to first token
    llm: dict[str, Any]
    area_macs: int | float  # area proxy: peak MACs per cycle of host and accelerators (whole for shipped kinds)
    area_onchip_bytes: int  # area proxy: bytes of the sized memory levels of the host and every accelerator


# The per-node and per-partition lists: what traces, layer tables and a report's detail sections need.
DETAIL_KEYS = ("events", "op_profile", "op_summary", "node_costs", "partition_table", "rejected", "loops")
# The area proxies (accelsim.reports.results.area), set by the experiment as it stores a point.
AREA_KEYS = ("area_macs", "area_onchip_bytes")
# Present only where they say something: an infeasible point's reason; an ok point's devices without an energy
# model (its energy keys are then None).
INFEASIBLE_KEY = "infeasible"
UNMODELLED_KEY = "energy_not_modelled"
# Present only when the simulation has warnings (accelsim.simulation.inference.Simulation.notes).
WARNINGS_KEY = "warnings"
# Present only on an LLM generation point (an experiment's `generate:`).
LLM_KEY = "llm"
# The results columns that are one number per point (what a search may minimise, `search.objectives`), in the
# record's order: read off PointResult's annotations, so a new numeric column is one without more ado.
NUMERIC_COLUMNS = tuple(k for k, t in typing.get_type_hints(PointResult).items()
                        if t in (int, float) or (typing.get_args(t) and float in typing.get_args(t)
                                                 and set(typing.get_args(t)) <= {int, float, type(None)}))

