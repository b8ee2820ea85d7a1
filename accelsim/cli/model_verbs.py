"""The verbs that simulate or inspect one model: inspect, ops, benchmark, diff, compare, whatif, sensitivity.

Imported by the command line only when one of them runs (accelsim/cli/main.py, VERBS).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from accelsim.cli.common import merged_loops, progress_bar
from accelsim.core.files import write_atomic
from accelsim.insight.nnapi import nnapi_choices, nnapi_dict, nnapi_lines
from accelsim.insight.sensitivity import as_dict as sensitivity_dict
from accelsim.insight.sensitivity import lines as sensitivity_lines
from accelsim.insight.sensitivity import sensitivity
from accelsim.insight.whatif import as_dict, whatif
from accelsim.insight.whatif import lines as whatif_lines
from accelsim.ops import require_kernels
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.work import LoopTrips
from accelsim.simulation.diff import inference_diff, load_inputs
from accelsim.tools.benchmark import benchmark_data, benchmark_lines, run_benchmark, write_partition_plot
from accelsim.tools.compare import (
    chart_png,
    compare,
    load_results,
    metric_names,
    select,
    simulate_sides,
    slower_than_host,
)
from accelsim.tools.model_info import inspect_model, registration_code
from accelsim.tools.systems import default_host, delegates_from_options, system_from_options


def _fmt_tensor(row: dict) -> str:
    if row["index"] < 0:
        return "-"
    q = " q" if row["quantized"] else ""
    return f"{row['index']}:{row['dtype'].lower()}{row['shape']}{q}"


def cmd_inspect(args: argparse.Namespace) -> int:
    info = inspect_model(args.model, delegates_from_options(args.hw, args.delegates))
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"model: {info['model']}")
    print(f"subgraphs: {info['subgraphs']}   operators (subgraph 0): {len(info['operators'])}   "
          f"min runtime version: {info['min_runtime_version'] or 'unknown'}")
    print(f"{'#':>4}  {'op':<26} {'ver':>3} {'sig':>3}  inputs -> outputs")
    for op in info["operators"]:
        flag = "" if op["supported"] else "  [no kernel]"
        ins = ", ".join(_fmt_tensor(t) for t in op["inputs"])
        outs = ", ".join(_fmt_tensor(t) for t in op["outputs"])
        print(f"{op['index']:>4}  {op['op']:<26} {op['version']:>3} {op['computed_version']:>3}  {ins} -> {outs}{flag}")
    print("ver = version in the file, sig = version computed from the op's signature; q = quantized")
    if info["unsupported_ops"]:
        names = ", ".join(f"{m['op']} v{m['version']}" for m in info["unsupported_ops"])
        print(f"ops this model needs that accelsim lacks: {names}")
    if info["delegation"] is not None:
        rows = info["delegation"]
        claimed = sum(r["claimed"] for r in rows)
        print(f"delegation: {claimed} of {len(rows)} nodes claimed")
        for r in rows:
            where = f"{r['delegate']} partition {r['partition']}" if r["claimed"] else f"host: {r['reason']}"
            print(f"{r['index']:>4}  {r['op']:<26} v{r['version']:<3} {where}")
    return 0


def cmd_ops(args: argparse.Namespace) -> int:
    print(registration_code(args.model))
    return 0


def _benchmark_model(args: argparse.Namespace) -> str:
    """The model path, given as MODEL or as benchmark_model's --graph=PATH (exactly one of them)."""
    if (args.model is None) == (args.graph is None):
        raise ValueError("give the model once: accelsim benchmark MODEL (or benchmark_model's --graph=MODEL)")
    return args.model or args.graph


def cmd_benchmark(args: argparse.Namespace) -> int:
    args.model = _benchmark_model(args)
    chosen = default_host(args.hw)[1] if args.host is None else None  # an Ethos-U's Corstone host, said once
    system = system_from_options(args.host, args.hw, args.max_delegated_partitions, args.min_nodes_per_partition)
    run = run_benchmark(args.model, system, schedule=args.schedule, loops=merged_loops(LoopTrips(), args.loop_trips),
                        warmup_runs=args.warmup_runs, num_runs=args.num_runs)
    data = benchmark_data(run, op_profiling=args.enable_op_profiling, per_layer=args.per_layer)
    if args.partition_plot:
        data["partition_plot"] = str(write_partition_plot(run, args.partition_plot))
    if args.json:
        print(json.dumps({**data, "host_chosen": chosen}, indent=2))
        return 0
    if chosen:
        print(f"Using {chosen}")
    print("\n".join(benchmark_lines(run, data)))
    warning = system.accelerators and slower_than_host("this model", data["simulated_us"]["latency"], run.host_only_us)
    if warning:
        print(f"accelsim benchmark: warning: {warning}", file=sys.stderr)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    require_kernels(args.model)
    inputs = None
    if args.input:
        details = Interpreter(model_path=args.model).get_input_details()
        inputs = load_inputs(args.input, details)
    with progress_bar("run") as progress:
        report = inference_diff(args.model, system, args.num_runs, args.seed, progress=progress, inputs=inputs,
                                input_source=args.input)
    if args.json:
        print(json.dumps({"model": report.model, "accelerators": list(report.accelerators),
                          "delegated_nodes": dict(report.delegated), "total_nodes": report.total_nodes,
                          "trivially_exact": report.trivially_exact, "inputs": report.inputs,
                          "num_runs": report.num_runs,
                          "reference_latency_us": {"avg": report.reference_latency_us[0],
                                                   "std": report.reference_latency_us[1]},
                          "test_latency_us": {"avg": report.test_latency_us[0], "std": report.test_latency_us[1]},
                          "outputs": [vars(o) for o in report.outputs]}, indent=2))
        return 0
    print("\n".join(report.lines()))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    results = [i for i in args.inputs if i.endswith(".json")]
    if results and len(results) != len(args.inputs):
        raise ValueError("give either models (with --hw twice or more) or results.json files, not both: got "
                         + ", ".join(args.inputs))
    if results:
        if args.hw:
            raise ValueError("--hw is for comparing models on configs; results.json files carry their own configs")
        sides = [side for path in results for side in load_results(path)]
    else:
        systems = [(h, system_from_options(args.host, h.split(","))) for h in args.hw]
        sides = simulate_sides(args.inputs, systems, args.schedule, merged_loops(LoopTrips(), args.loop_trips))
    comparison = select(compare(sides), _csv(args.metrics), _csv(args.columns))
    plot = write_atomic(Path(args.plot), chart_png(comparison))
    failed = any(side.failed for side in comparison.sides)  # the others are shown; rc 1, as run's failed points
    if args.json:
        print(json.dumps({**comparison.as_dict(), "plot": str(plot)}, indent=2, ensure_ascii=False))
        return 1 if failed else 0
    print("\n".join(comparison.lines()))
    print(f"bar chart: {plot}")
    return 1 if failed else 0


def _csv(text: str | None) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()] if text else []


def cmd_whatif(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    if system.nnapi is not None:
        return _nnapi_whatif(args, system)
    with progress_bar("point") as progress:
        progress(0, 1, "simulating every lifted refusal")
        result = whatif(require_kernels(args.model), system, args.model, args.schedule,
                        merged_loops(LoopTrips(), args.loop_trips))
        progress(1, 1, "done")
    if args.json:
        print(json.dumps(as_dict(result), indent=2))
        return 0
    print("\n".join(whatif_lines(result)))
    return 0


def _nnapi_whatif(args: argparse.Namespace, system) -> int:
    """whatif with NNAPI: its rules decide the claims, so the answer is which rule refused what, and other settings."""
    with progress_bar("point") as progress:
        progress(0, 1, "simulating NNAPI's alternatives")
        result = nnapi_choices(require_kernels(args.model), system, args.model, args.schedule,
                               merged_loops(LoopTrips(), args.loop_trips))
        progress(1, 1, "done")
    print(json.dumps(nnapi_dict(result), indent=2) if args.json else "\n".join(nnapi_lines(result)))
    return 0


def cmd_sensitivity(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    result = sensitivity(require_kernels(args.model), system, args.schedule,
                         merged_loops(LoopTrips(), args.loop_trips), args.model)
    if args.json:
        print(json.dumps(sensitivity_dict(result), indent=2))
        return 0
    print("\n".join(sensitivity_lines(result)))
    return 0


def metrics_help_fill(parser: argparse.ArgumentParser) -> None:
    """`accelsim compare --help`'s --metrics line, completed with the metrics' names (when the help is printed)."""
    for action in parser._actions:
        if "--metrics" in action.option_strings:
            action.help = f"only these quantities, in this order: {', '.join(metric_names())}"
