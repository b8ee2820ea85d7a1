"""The `accelsim` command line. Only this module prints; everything else logs."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import json
import logging
import os
import signal
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from accelsim.cli.help import EPILOGS, HOST_HELP, HW_HELP, STREAM_HELP
from accelsim.core.feasibility import Infeasible, summary_line
from accelsim.core.files import write_atomic
from accelsim.core.schedule import SCHEDULES
from accelsim.core.trace import trace_document
from accelsim.core.units import counted
from accelsim.core.version import __version__
from accelsim.experiments.dask_executor import DaskExecutor, dask_client, distributed_module
from accelsim.experiments.experiment import SHIPPED_CONFIGS, load_experiment, with_ops
from accelsim.experiments.keys import default_experiment, key_lines, section_keys
from accelsim.experiments.keys import schema_markdown as experiment_schema_markdown
from accelsim.experiments.run import run_experiment
from accelsim.hardware.config_docs import schema_markdown, shipped_lines
from accelsim.hardware.config_yaml import ConfigError
from accelsim.hw_configs import DEFAULT_HOST
from accelsim.insight.nnapi import nnapi_choices, nnapi_dict, nnapi_lines
from accelsim.insight.sensitivity import as_dict as sensitivity_dict
from accelsim.insight.sensitivity import lines as sensitivity_lines
from accelsim.insight.sensitivity import sensitivity
from accelsim.insight.whatif import as_dict, whatif
from accelsim.insight.whatif import lines as whatif_lines
from accelsim.ops import load_op_modules, require_kernels, using_ops
from accelsim.reports.labels import point_label, slower_sentence, slower_than_host_points, warning_lines
from accelsim.reports.report import RENDERERS
from accelsim.reports.streams_section import text_lines as stream_lines
from accelsim.runtime.errors import AccelsimError
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
from accelsim.tools.examples import write_examples
from accelsim.tools.llm import ARCHITECTURE_NAMES, QUANT_HELP, QUANT_NAMES, SYSTEM_NAMES, llm_lines, run_llm
from accelsim.tools.model_info import inspect_model, registration_code
from accelsim.tools.systems import default_host, delegates_from_options, system_from_options
from accelsim.tools.validation import validation_lines
from accelsim.workloads.segments import SEGMENTATIONS
from accelsim.workloads.streams import StreamSpec, Workload, simulate_streams

log = logging.getLogger("accelsim")


def _fmt_tensor(row: dict) -> str:
    if row["index"] < 0:
        return "-"
    q = " q" if row["quantized"] else ""
    return f"{row['index']}:{row['dtype'].lower()}{row['shape']}{q}"


def _cmd_inspect(args: argparse.Namespace) -> int:
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


def _cmd_ops(args: argparse.Namespace) -> int:
    print(registration_code(args.model))
    return 0



@contextlib.contextmanager
def _progress_bar(unit: str, stream=None, saved: bool = False) -> Iterator[Callable[[int, int, str], None]]:
    """A progress callback (done, total, label): a tqdm bar on a terminal (`saved`: done is what Ctrl-C says)."""

    bar = None

    def show(done: int, total: int, label: str) -> None:
        nonlocal bar
        if saved:
            _STOP["saved"] = done
        if bar is None:  # disable=None: tqdm stays silent unless the stream is a terminal
            bar = tqdm(total=total, unit=unit, file=stream or sys.stderr, disable=None, dynamic_ncols=True)
        bar.set_postfix_str(label, refresh=False)
        bar.update(done - bar.n)

    try:
        yield show
    finally:
        if bar is not None:
            bar.close()


def _cmd_run(args: argparse.Namespace) -> int:
    experiment = with_ops(load_experiment(args.experiment or default_experiment()), args.ops)  # workers load --ops too
    if args.loop_trips:
        experiment = dataclasses.replace(experiment, loops=_merged_loops(experiment.loops, args.loop_trips))
    if args.scheduler and args.executor != "dask":
        raise ValueError(f"--scheduler {args.scheduler} needs --executor dask")
    with contextlib.ExitStack() as stack:
        executor = None
        if args.executor == "dask":

            # Dask sets its loggers to INFO when imported and logs every cluster event; show them with --debug only.
            distributed_module()
            logging.getLogger("distributed").setLevel(logging.DEBUG if args.debug else logging.WARNING)
            executor = DaskExecutor(stack.enter_context(dask_client(args.scheduler, workers=args.jobs)))
        progress = stack.enter_context(_progress_bar("point", saved=True))
        outcome = run_experiment(experiment, args.out, jobs=args.jobs, executor=executor,
                                 use_cache=not args.no_cache, prune_cache=args.prune_cache, progress=progress,
                                 should_stop=lambda: _STOP["requested"])
    for warning in outcome.warnings:
        print(f"accelsim run: warning: {warning}", file=sys.stderr)
    for line in warning_lines(outcome.records):  # what costs rest on (spilled weights, custom ops), with counts
        print(f"accelsim run: warning: {line}", file=sys.stderr)
    if slower_than_host_points(outcome.records):
        # a terminal line: three named (a point's label holds every swept value), the report names more
        print(f"accelsim run: warning: {slower_sentence(outcome.records, 'design points', limit=3)}", file=sys.stderr)
    print(f"{counted(len(outcome.records), 'design point')} ({outcome.cached} cached, {outcome.computed} run, "
          f"{outcome.failed} failed) -> {outcome.out_dir}")
    infeasible = summary_line(outcome.records)
    if infeasible:  # results, not failures: they do not change the exit status
        print(f"  {infeasible}")
        first = next((r for r in outcome.records if r["status"] == "infeasible"), None)
        if first is not None:
            print(f"  first infeasible: {point_label(first)}: {first['error']}")
    for kind in RENDERERS:
        if kind in outcome.outputs:
            print(f"  {kind}: {outcome.outputs[kind]}")
    plots = sum(1 for k in outcome.outputs if k.startswith("plots/"))
    traces = sum(1 for k in outcome.outputs if k.startswith("traces/"))
    layers = sum(1 for k in outcome.outputs if k.startswith("layers/"))
    print(f"  {plots} plots in {outcome.out_dir / 'plots'}, {traces} Chrome traces in {outcome.out_dir / 'traces'}, "
          f"{layers} per-node tables in {outcome.out_dir / 'layers'}")
    if outcome.pruned:
        stale = counted(outcome.stale, 'stale entry', 'stale entries')
        print(f"  cache: removed {stale} (design points no longer in the experiment)")
    else:
        stale = counted(outcome.stale, 'stale entry', 'stale entries')
        print(f"  cache: {stale} (design points no longer in the experiment)"
              + ("; --prune-cache removes them" if outcome.stale else ""))
    if outcome.missing:
        missing = len(outcome.missing)
        print(f"  {counted(missing, 'design point')} {'is' if missing == 1 else 'are'} missing; run again to complete "
              "them")
    if outcome.failed:
        print(_failure_line(outcome))
    return 1 if outcome.failed else 0


def _failure_line(outcome) -> str:
    """The last line of a run with failed points: how many, the first one's error, and where all are listed."""

    first = next(r for r in outcome.records if r["status"] == "error")
    where = [str(outcome.outputs[k]) for k in ("md", "html") if k in outcome.outputs]
    listed = (f"all are listed under 'Failed design points' in {' and '.join(where)}" if where else
              f"all are in {outcome.outputs['json']}" if "json" in outcome.outputs else
              f"all are in {outcome.outputs['csv']} (status error)")
    return (f"{outcome.failed} of {counted(len(outcome.records), 'design point')} failed; first: {point_label(first)}: "
            f"{first['error']}; {listed}")


def _benchmark_model(args: argparse.Namespace) -> str:
    """The model path, given as MODEL or as benchmark_model's --graph=PATH (exactly one of them)."""
    if (args.model is None) == (args.graph is None):
        raise ValueError("give the model once: accelsim benchmark MODEL (or benchmark_model's --graph=MODEL)")
    return args.model or args.graph


def _cmd_benchmark(args: argparse.Namespace) -> int:
    args.model = _benchmark_model(args)
    chosen = default_host(args.hw)[1] if args.host is None else None  # an Ethos-U's Corstone host, said once
    system = system_from_options(args.host, args.hw, args.max_delegated_partitions, args.min_nodes_per_partition)
    run = run_benchmark(args.model, system, schedule=args.schedule, loops=_merged_loops(LoopTrips(), args.loop_trips),
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


def _cmd_diff(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    require_kernels(args.model)
    inputs = None
    if args.input:
        details = Interpreter(model_path=args.model).get_input_details()
        inputs = load_inputs(args.input, details)
    with _progress_bar("run") as progress:
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


def _cmd_compare(args: argparse.Namespace) -> int:
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
        sides = simulate_sides(args.inputs, systems, args.schedule, _merged_loops(LoopTrips(), args.loop_trips))
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


def _cmd_whatif(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    if system.nnapi is not None:
        return _nnapi_whatif(args, system)
    with _progress_bar("point") as progress:
        progress(0, 1, "simulating every lifted refusal")
        result = whatif(require_kernels(args.model), system, args.model, args.schedule,
                        _merged_loops(LoopTrips(), args.loop_trips))
        progress(1, 1, "done")
    if args.json:
        print(json.dumps(as_dict(result), indent=2))
        return 0
    print("\n".join(whatif_lines(result)))
    return 0


def _nnapi_whatif(args: argparse.Namespace, system) -> int:
    """whatif with NNAPI: its rules decide the claims, so the answer is which rule refused what, and other settings."""
    with _progress_bar("point") as progress:
        progress(0, 1, "simulating NNAPI's alternatives")
        result = nnapi_choices(require_kernels(args.model), system, args.model, args.schedule,
                               _merged_loops(LoopTrips(), args.loop_trips))
        progress(1, 1, "done")
    print(json.dumps(nnapi_dict(result), indent=2) if args.json else "\n".join(nnapi_lines(result)))
    return 0


def _cmd_sensitivity(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    result = sensitivity(require_kernels(args.model), system, args.schedule,
                         _merged_loops(LoopTrips(), args.loop_trips), args.model)
    if args.json:
        print(json.dumps(sensitivity_dict(result), indent=2))
        return 0
    print("\n".join(sensitivity_lines(result)))
    return 0


def _cmd_llm(args: argparse.Namespace) -> int:
    result = run_llm(args.model, args.system, args.backend, args.quant, args.prefill, args.decode, args.context)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print("\n".join(llm_lines(result)))
    return 0 if result.status == "ok" else 1


def _cmd_stream(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    require_kernels(args.model)
    spec = StreamSpec(Path(args.model).stem, args.model, args.frames, args.rate, (), args.max_in_flight,
                      args.max_in_queue)
    w = Workload((spec,), args.mode or "replicas", args.count, args.segmentation, args.schedule, 20, args.shared_link)
    result = simulate_streams(w, system, _merged_loops(LoopTrips(), args.loop_trips))
    if args.trace:
        write_atomic(Path(args.trace), json.dumps(trace_document(result.trace_record(w.mode), pid=1, label=spec.name)))
    print(json.dumps(result.to_json(), indent=2) if args.json else "\n".join(stream_lines(result)))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    bad = 0
    for path in args.files:
        try:
            for line in validation_lines(path):
                print(line)
        except ConfigError as exc:
            bad += 1
            for line in exc.errors:
                print(line)
    return 1 if bad else 0


def _cmd_configs(args: argparse.Namespace) -> int:
    if args.schema:
        print(schema_markdown())
        return 0
    print("\n".join(shipped_lines(SHIPPED_CONFIGS)))
    print(f"(in {SHIPPED_CONFIGS}; give one by name: --hw edgetpu_usb; every key: accelsim configs --schema)")
    return 0


def _cmd_examples(args: argparse.Namespace) -> int:
    written = write_examples(Path(args.folder))
    print("\n".join(str(path) for path in written))
    print(f"(try: accelsim benchmark {written[0].parent / 'mobilenet_v2_035_96_int8.tflite'} --hw edgetpu_usb)")
    return 0


def _cmd_experiment(args: argparse.Namespace) -> int:
    if args.schema:
        print(experiment_schema_markdown())
        return 0
    print("\n".join(key_lines()))
    print(f"(the default experiment: {default_experiment()}; every key with its value, default and an example: "
          "accelsim experiment --schema)")
    return 0


def _experiment_keys_help() -> str:
    return textwrap.fill(f"An experiment file's keys: {', '.join(section_keys())}; each variant's: "
                         f"{', '.join(section_keys('variants[]'))}. Every key with its value, default and an "
                         "example: accelsim experiment --schema.", width=100)



def _add_model_on_system(p: argparse.ArgumentParser) -> None:
    """The arguments of a verb that simulates one model on a system: model, --hw, --host, --schedule, --json,
    loop trips and --ops (whatif and sensitivity)."""
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--hw", action="append", required=True, metavar="CFG", help=HW_HELP)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"host config (default: {DEFAULT_HOST})")
    p.add_argument("--schedule", choices=SCHEDULES, default="sequential",
                   help="how the simulated time adds up (default sequential)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_loop_trips(p)
    _add_ops(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="accelsim",
        description="Hardware-simulation testbed for TensorFlow Lite delegates.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `accelsim COMMAND --help` for a command's options and examples.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logging")
    parser.add_argument("--version", action="version", version=f"accelsim {__version__}")
    # --debug also after the verb; SUPPRESS keeps a value given before the verb.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks and debug logging")
    sub = _Subparsers(parser.add_subparsers(dest="command", metavar="COMMAND"), common)
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser("inspect", help="list operators, versions and min runtime version of a model",
                       description="Show every operator of a .tflite model: op, version in the file, version "
                       "computed from its signature, input/output tensors, and the model's minimum runtime.",
                       epilog=EPILOGS["inspect"], formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--hw", action="append", default=[], metavar="CFG",
                   help=HW_HELP + "; shows which nodes each claims and why not")
    p.add_argument("--delegate", action=_DelegateAction, dest="delegates", default=[], metavar="NAME",
                   help="a delegate provider (e.g. accelerator) or package.module:factory; repeatable, in order")
    p.add_argument("--delegate-option", action=_DelegateOptionAction, dest="delegates", metavar="KEY=VALUE",
                   help="an option for the --delegate given just before it (e.g. config=edgetpu_usb)")
    _add_ops(p)
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("ops", help="print the resolver registrations a model needs, as pasteable Python",
                       description="Selective registration: print Python that builds a resolver holding "
                       "exactly the (op, version) pairs the model uses.",
                       epilog=EPILOGS["ops"], formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    _add_ops(p)
    p.set_defaults(func=_cmd_ops)

    p = sub.add_parser("run", help="run an experiment and write its latency report",
                       description="Run every design point of an experiment YAML (cached points are skipped) "
                       "and write reports/<name>/: report.md, report.html, results.json, results.csv, plots, "
                       "traces.\n\n" + _experiment_keys_help(), epilog=EPILOGS["run"], formatter_class=raw)
    p.add_argument("experiment", nargs="?", help="experiment YAML (default: the default experiment, shipped with "
                   "accelsim: MobileNetV2-1.0-224 int8 on the CPU, Edge TPU over USB and PCIe, and a Hexagon DSP)")
    p.add_argument("--out", help="report folder (default: reports/<experiment name>)")
    p.add_argument("--jobs", type=_positive, default=None, help="worker processes (default: number of cores)")
    p.add_argument("--executor", choices=("pool", "dask"), default="pool",
                   help="pool: a local process pool (default); dask: a Dask cluster (pip install -e "
                   "'.[distributed]'), a LocalCluster of --jobs workers unless --scheduler is given")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --executor dask: the address of a running `dask scheduler`, e.g. tcp://HOST:8786")
    p.add_argument("--no-cache", action="store_true", help="recompute every design point")
    p.add_argument("--prune-cache", action="store_true",
                   help="remove stored design points the experiment no longer has")
    _add_loop_trips(p)
    _add_ops(p)
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("benchmark", help="benchmark_model's job: wall-clock statistics and simulated latency",
                       description="Run a model on random inputs: host wall-clock statistics of the NumPy "
                       "interpreter (count, first, min, max, avg, std in µs) and the simulated latency on the "
                       "given system with its breakdown.", epilog=EPILOGS["benchmark"], formatter_class=raw)
    p.add_argument("model", nargs="?", help="path of a .tflite file")
    p.add_argument("--graph", metavar="MODEL", help="benchmark_model's spelling of MODEL")
    p.add_argument("--host", default=None, help=HOST_HELP)
    p.add_argument("--hw", action="append", default=[], metavar="CFG", help=HW_HELP)
    # benchmark_model writes its flags with underscores; both spellings work.
    p.add_argument("--num-runs", "--num_runs", type=_non_negative, default=10,
                   help="timed runs (default 10); 0: cost only, the simulated latency and breakdown without running "
                   "the NumPy interpreter or preparing its numerics (a loop's trips must follow from the model or "
                   "--loop-trips)")
    p.add_argument("--warmup-runs", "--warmup_runs", type=_non_negative, default=1,
                   help="untimed runs first (default 1; none with --num-runs 0)")
    p.add_argument("--enable-op-profiling", "--enable_op_profiling", action="store_true",
                   help="print the (simulated) op profile")
    p.add_argument("--per-layer", "--per_layer", action="store_true", help="print the simulated per-node table "
                   "(a report's layers/<point>.csv): target, MACs, cycles, utilisation, time, bound, bytes per "
                   "memory level, energy")
    p.add_argument("--max-delegated-partitions", "--max_delegated_partitions", type=_non_negative,
                   help="override every accelerator's limit")
    p.add_argument("--min-nodes-per-partition", "--min_nodes_per_partition", type=_non_negative,
                   help="override every accelerator's minimum")
    p.add_argument("--partition-plot", metavar="PNG",
                   help="draw the nodes in run order, coloured by host or accelerator partition, with the bytes "
                   "crossing each partition boundary and the reason of every refused node")
    p.add_argument("--schedule", choices=SCHEDULES, default="sequential",
                   help="how the simulated time adds up: sequential (one node after another, default) or "
                   "dataflow (host, links and accelerators overlap as data dependencies allow)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_loop_trips(p)
    _add_ops(p)
    p.set_defaults(func=_cmd_benchmark)

    p = sub.add_parser("diff", help="inference_diff's job: accelerator numerics against the reference",
                       description="Run the same inputs (seeded random ones, or --input) through the reference "
                       "interpreter and the delegated one; report how many nodes each accelerator took, and per "
                       "output the mean/std/max absolute error (integer steps and real units for quantized "
                       "outputs) and top-1 agreement for [batch, classes] outputs.",
                       epilog=EPILOGS["diff"], formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--hw", action="append", required=True, metavar="CFG", help=HW_HELP)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"host config (default: {DEFAULT_HOST})")
    p.add_argument("--num-runs", "--num_runs", type=_positive, default=50, help="random inputs to compare (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--input", metavar="FILE.npy|FILE.npz",
                   help="real inputs instead of random ones: a .npy for a one-input model, or a .npz with an array "
                   "per input named as the input (or arr_0, arr_1, ... in order); an extra leading axis holds "
                   "one run per row (--num-runs is then ignored)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_ops(p)
    p.set_defaults(func=_cmd_diff)

    p = sub.add_parser("compare", help="configs or experiment results side by side, with %% differences and a chart",
                       description="Put two or more hardware configs (each --hw is one column; join several "
                       "accelerators of one column with commas) or the design points of results.json files side by "
                       "side: latency, speed-up over the host alone, energy (when recorded), partitions, delegated "
                       "nodes and transfer bytes per model, each with its difference from the first column in "
                       "percent, and a bar chart PNG.", epilog=EPILOGS["compare"], formatter_class=raw)
    p.add_argument("inputs", nargs="+", metavar="MODEL|RESULTS",
                   help=".tflite models (with --hw), or results.json files written by accelsim run")
    p.add_argument("--hw", action="append", default=[], metavar="CFG[,CFG...]",
                   help="one column: an accelerator config, or several joined by commas (attached in that order)")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"host config (default: {DEFAULT_HOST})")
    p.add_argument("--schedule", choices=SCHEDULES, default="sequential",
                   help="how the simulated time adds up (default sequential)")
    p.add_argument("--plot", default="reports/compare.png", help="where the bar chart goes (default %(default)s)")
    p.add_argument("--metrics", metavar="M[,M...]", help="only these quantities, in this order: "
                   f"{', '.join(metric_names())}")
    p.add_argument("--columns", metavar="C[,C...]", help="only these columns, in this order: indices as printed "
                   "([0], [1], ...) or labels")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_loop_trips(p)
    _add_ops(p)
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("whatif", help="which op to support next: every refused node's claim line, simulated",
                       description="For every reason an accelerator refused a node (op not claimed, version, dtype, "
                       "a constraint), simulate the system with that refusal lifted by one claim line and rank the "
                       "lines by latency saved; each shows nodes gained, partitions and transfer bytes before and "
                       "after, and the line to add to the config's claims:. The best pair of lines is shown too. "
                       "Adding a line and re-running gives exactly the predicted latency.",
                       epilog=EPILOGS["whatif"], formatter_class=raw)
    _add_model_on_system(p)
    p.set_defaults(func=_cmd_whatif)

    p = sub.add_parser("sensitivity", help="what should I change: design parameters at x0.5 and x2, bottlenecks",
                       description="Halve and double every design parameter of every device (clock, array and "
                       "lane sizes, memory level sizes and bandwidths, link bandwidth, latency and call overhead, "
                       "threads), re-costing one analysis of the model, and rank them by latency effect; then "
                       "where the time goes by bound and per op, with the array's utilisation, and a three-line "
                       "verdict. Fitted efficiencies and format constants are not design choices and are left out.",
                       epilog=EPILOGS["sensitivity"], formatter_class=raw)
    _add_model_on_system(p)
    p.set_defaults(func=_cmd_sensitivity)

    p = sub.add_parser("llm", help="an LLM generating on a phone or laptop: time to first token, tokens/s, memory",
                       description="Cost prefill then decode of a decoder LLM on a named system, as LiteRT-LM runs "
                       "it: MODEL is an architecture name (its graph is built as litert-torch converts it, weights "
                       "absent) or an LLM .tflite with prefill_N and decode signatures and the KV cache as their "
                       "inputs and outputs. Prints time to first token, prefill and decode tokens per second, "
                       "peak memory (weights, KV cache, activations) against the system's memory, where the nodes "
                       "ran and why the rest fell back, and what bounds each phase. Over the memory is infeasible "
                       "(exit 1). Architectures: " + ", ".join(ARCHITECTURE_NAMES) + "; systems: "
                       + ", ".join(SYSTEM_NAMES) + ".", epilog=EPILOGS["llm"], formatter_class=raw)
    p.add_argument("model", help="an architecture name or an LLM .tflite")
    p.add_argument("--system", required=True, help="one of " + ", ".join(SYSTEM_NAMES))
    p.add_argument("--backend", default="cpu", help="cpu (the host, XNNPACK, 4 threads), gpu or npu (default cpu)")
    p.add_argument("--quant", default=None, help="quantization of a built architecture: " + ", ".join(QUANT_NAMES)
                   + QUANT_HELP)
    p.add_argument("--prefill", type=_positive, default=1024, help="prompt tokens (default 1024)")
    p.add_argument("--decode", type=_positive, default=256, help="generated tokens (default 256)")
    p.add_argument("--context", type=_positive, default=None,
                   help="KV cache positions the graph is built for (default prefill + decode)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_cmd_llm)
    p = sub.add_parser("stream", help=STREAM_HELP["verb"], description=STREAM_HELP["description"],
                       epilog=EPILOGS["stream"], formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--hw", action="append", default=[], metavar="CFG", help=HW_HELP)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"host config (default: {DEFAULT_HOST})")
    for flag, kind, default in (("--count", _positive, 1), ("--frames", _positive, 100), ("--rate", float, None),
                                ("--max-in-flight", _positive, None), ("--max-in-queue", _non_negative, 0)):
        p.add_argument(flag, type=kind, default=default, help=STREAM_HELP[flag])
    p.add_argument("--mode", choices=("replicas", "pipeline"), help=STREAM_HELP["--mode"])
    p.add_argument("--segmentation", choices=SEGMENTATIONS, default="balanced", help=STREAM_HELP["--segmentation"])
    p.add_argument("--schedule", choices=SCHEDULES, default="sequential", help=STREAM_HELP["--schedule"])
    p.add_argument("--trace", metavar="JSON", help=STREAM_HELP["--trace"])
    p.add_argument("--shared-link", action="store_true", help=STREAM_HELP["--shared-link"])
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_loop_trips(p)
    _add_ops(p)
    p.set_defaults(func=_cmd_stream)

    p = sub.add_parser("validate", help="check hardware configs and experiments, listing every error",
                       description="Check each file (a hardware config or an experiment) and print every "
                       "problem as file:line: key: message.", epilog=EPILOGS["validate"], formatter_class=raw)
    p.add_argument("files", nargs="+", help="YAML files")
    _add_ops(p)
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("experiment", help="list the experiment file's keys, or print every key (--schema)",
                       description="List every key of an experiment file, one line each; with --schema, print "
                       "the reference of every key (value, default, example, meaning) as Markdown "
                       "(docs/experiments.md is the same text).", epilog=EPILOGS["experiment"], formatter_class=raw)
    p.add_argument("--schema", action="store_true", help="print the key reference as Markdown")
    p.set_defaults(func=_cmd_experiment)

    p = sub.add_parser("configs", help="list the shipped hardware configs, or print every key (--schema)",
                       description="List the shipped hardware configs, one line each; with --schema, print the "
                       "reference of every key of every kind (unit, default, meaning), the claim syntax and the "
                       "constraint vocabulary (docs/hw_configs.md is the same text).",
                       epilog=EPILOGS["configs"], formatter_class=raw)
    p.add_argument("--schema", action="store_true", help="print the key reference as Markdown")
    p.set_defaults(func=_cmd_configs)

    p = sub.add_parser("examples", help="write the sample models the help examples use into a folder",
                       description="Copy the sample models the help examples and the README use (shipped with the "
                       "package) and the custom op module of atan_custom.tflite into FOLDER.",
                       epilog=EPILOGS["examples"], formatter_class=raw)
    p.add_argument("folder", nargs="?", default="models", help="where to write them (default: models)")
    p.set_defaults(func=_cmd_examples)
    return parser


class _Subparsers:
    """add_parser with the options every verb shares (`--debug`)."""

    def __init__(self, action, common: argparse.ArgumentParser):
        self.action, self.common = action, common

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        verb = self.action.add_parser(name, parents=[self.common], **kwargs)
        verb.set_defaults(verb_parser=verb)  # so an unknown option is answered with this verb's usage
        return verb


class _DelegateAction(argparse.Action):
    def __call__(self, parser, namespace, value, option_string=None):
        namespace.delegates = [*namespace.delegates, (value, [])]


class _DelegateOptionAction(argparse.Action):
    def __call__(self, parser, namespace, value, option_string=None):
        if not namespace.delegates:
            parser.error(f"--delegate-option {value} comes before any --delegate")
        namespace.delegates[-1][1].append(value)


def _add_ops(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ops", action="append", default=[], metavar="MODULE_OR_FILE",
                        help="load custom-op kernels: an installed module (e.g. accelsim.ops.mediapipe) or a .py "
                        "file whose register(resolver) adds them (e.g. examples/custom_op_atan.py); repeatable")


def _add_loop_trips(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--loop-trips", action="append", type=_loop_trip, default=[], metavar="[S:N=]TRIPS",
                        help="trip count of loops the model does not fix: TRIPS for all of them, or S:N=TRIPS "
                        "for node N of subgraph S (overrides any count); repeatable")


def _loop_trip(text: str) -> tuple[str | None, int]:
    """`--loop-trips` values: "TRIPS" (the default) or "S:N=TRIPS" (one node)."""
    key, _, trips = text.rpartition("=")
    parts = key.split(":")
    if key and (len(parts) != 2 or not all(p.isdigit() for p in parts)):
        raise argparse.ArgumentTypeError(f"expected TRIPS or SUBGRAPH:NODE=TRIPS such as 0:1=20, got {text!r}")
    return (key or None), _non_negative(trips)


def _merged_loops(base: LoopTrips, values: Sequence[tuple[str | None, int]]) -> LoopTrips:
    """`base` with the --loop-trips values on top (the last default given wins)."""
    default, nodes = base.default_trips, dict(base.nodes)
    for key, trips in values:
        if key is None:
            default = trips
        else:
            nodes[key] = trips
    return LoopTrips(default, nodes)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text}")
    return value


# requested: a first interrupt came; saved: design points in the store so far (set while `run` runs); pid: the CLI's
# process (forked pool workers inherit the handler and must neither print nor exit for it)
_STOP: dict[str, Any] = {"requested": False, "saved": None, "pid": None}


def _interrupt(signum, frame) -> None:
    # SIGTERM stops a run like Ctrl-C: finished design points are kept and the report lists the rest.
    # The flag is what `run` checks; the exception may be swallowed if it lands in a finalizer.
    main_process = _STOP["pid"] == os.getpid()
    if _STOP["requested"] and main_process:  # a second one stops at once; the store commits batch by batch
        saved = "" if _STOP["saved"] is None else f"; {counted(_STOP['saved'], 'point')} in the store"
        print(f"\nstopped at once{saved}; no report written (run again to complete it)", file=sys.stderr, flush=True)
        os._exit(130)
    _STOP["requested"] = True
    if main_process and _STOP["saved"] is not None:
        print(f"\nstopping: {counted(_STOP['saved'], 'point')} saved, writing the partial report (Ctrl-C again "
              "stops at once)", file=sys.stderr, flush=True)
    raise KeyboardInterrupt


def _unknown_arguments(verb: argparse.ArgumentParser, unknown: Sequence[str]) -> str:
    """argparse's 'unrecognized arguments' message, naming the closest option of the verb for each."""

    # Every spelling of an option points at its first one (--num_runs -> --num-runs).
    options = {o: a.option_strings[0] for a in verb._actions for o in a.option_strings if o.startswith("--")}
    words = []
    for word in unknown:
        close = difflib.get_close_matches(word.split("=", 1)[0], list(options), n=1, cutoff=0.6)
        words.append(f"{word} (did you mean {options[close[0]]}?)" if word.startswith("-") and close else word)
    return "unrecognized arguments: " + " ".join(words)


def _load_ops(specs: Sequence[str]) -> contextlib.AbstractContextManager:
    """The --ops modules, loaded now (so a bad one fails before any work), as the block their kernels live in."""
    if not specs:
        return contextlib.nullcontext()
    return using_ops(load_op_modules(specs))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        verb = getattr(args, "verb_parser", parser)
        verb.error(_unknown_arguments(verb, unknown))
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    _STOP.update(requested=False, saved=None, pid=os.getpid())
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    try:
        ops = _load_ops(getattr(args, "ops", []))
    except AccelsimError as exc:  # a missing module, or one that registers nothing: bad input, as argparse's
        print(f"accelsim {args.command}: error: --ops {exc}", file=sys.stderr)
        return 2
    try:
        with ops:
            return func(args)
    except Infeasible as exc:  # the design cannot run the model: not a bug, not bad input; what to change
        if args.debug:
            raise
        print(f"accelsim {args.command}: infeasible ({exc.reason}): {exc}", file=sys.stderr)
        return 1
    except (AccelsimError, ValueError, FileNotFoundError, PermissionError, IsADirectoryError) as exc:
        if args.debug:
            raise
        print(f"accelsim {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"accelsim {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python's exit flush from failing again
        return 141
    except Exception as exc:  # a bug of ours: still one line, with the way to see more
        if args.debug:
            raise
        print(f"accelsim {args.command}: internal error: {type(exc).__name__}: {exc} (rerun with --debug for "
              "the traceback)", file=sys.stderr)
        return 70
