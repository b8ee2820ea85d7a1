"""The `accelsim` command line: its parser and dispatch; each verb lives in a module of this folder (VERBS).

Only the command line (accelsim/cli/) prints; everything else logs.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from accelsim.cli.help import EPILOGS, HOST_HELP, HW_HELP, STREAM_HELP, STREAM_SEGMENTATIONS
from accelsim.core.feasibility import Infeasible
from accelsim.core.schedule import SCHEDULES
from accelsim.core.units import counted
from accelsim.core.version import __version__
from accelsim.hw_configs import DEFAULT_HOST
from accelsim.runtime.errors import AccelsimError

# Each verb's function as "module:function". The command line imports a verb's module only when that
# verb runs (or its --help needs it), so `accelsim --help`, `--version` and a light verb do not load what
# the heavy ones need (matplotlib, the interpreter's kernels, the flatc schema modules, Dask): the
# start-up of issue 36. A new verb: write `cmd_<verb>(args) -> int` in a module of accelsim/cli/ (its
# imports at the module's top, as anywhere), add its row here and its parser in build_parser with
# `p.set_defaults(func="<verb>")`. tests/accelsim/test_cli.py checks that every row resolves and every
# verb of the parser has a row.
VERBS = {
    "inspect": "accelsim.cli.model_verbs:cmd_inspect",
    "ops": "accelsim.cli.model_verbs:cmd_ops",
    "benchmark": "accelsim.cli.model_verbs:cmd_benchmark",
    "diff": "accelsim.cli.model_verbs:cmd_diff",
    "compare": "accelsim.cli.model_verbs:cmd_compare",
    "whatif": "accelsim.cli.model_verbs:cmd_whatif",
    "sensitivity": "accelsim.cli.model_verbs:cmd_sensitivity",
    "run": "accelsim.cli.experiment_verbs:cmd_run",
    "validate": "accelsim.cli.config_verbs:cmd_validate",
    "configs": "accelsim.cli.config_verbs:cmd_configs",
    "experiment": "accelsim.cli.config_verbs:cmd_experiment",
    "examples": "accelsim.cli.config_verbs:cmd_examples",
    "llm": "accelsim.cli.workload_verbs:cmd_llm",
    "stream": "accelsim.cli.workload_verbs:cmd_stream",
}
OPS_LOADER = "accelsim.cli.common"  # load_ops, the --ops kernels: imported only when --ops is given


def verb_module(verb: str):
    """The module that holds `verb`'s function (VERBS), imported now."""
    return importlib.import_module(VERBS[verb].partition(":")[0])


def verb_function(verb: str) -> Callable[[argparse.Namespace], int]:
    """`verb`'s function (VERBS), its module imported now."""
    return getattr(verb_module(verb), VERBS[verb].partition(":")[2])


log = logging.getLogger("accelsim")


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
    sub = _Subparsers(parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_VerbParser), common)
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
    p.set_defaults(func="inspect")

    p = sub.add_parser("ops", help="print the resolver registrations a model needs, as pasteable Python",
                       description="Selective registration: print Python that builds a resolver holding "
                       "exactly the (op, version) pairs the model uses.",
                       epilog=EPILOGS["ops"], formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    _add_ops(p)
    p.set_defaults(func="ops")

    p = sub.add_parser("run", help="run an experiment and write its latency report",
                       description="Run every design point of an experiment YAML (cached points are skipped) "
                       "and write reports/<name>/: report.md, report.html, results.json, results.csv, plots, "
                       "traces.", epilog=EPILOGS["run"], formatter_class=raw)
    p.help_texts = lambda verb: verb_module("experiment").experiment_keys_help_fill(verb)
    p.add_argument("experiment", nargs="?", help="experiment YAML (default: the default experiment, shipped with "
                   "accelsim: MobileNetV2-1.0-224 int8 on the CPU, Edge TPU over USB and PCIe, and a Hexagon DSP)")
    p.add_argument("--out", help="report folder (default: reports/<experiment name>)")
    p.add_argument("--jobs", type=_positive, default=None, help="worker processes (default: number of cores)")
    p.add_argument("--executor", choices=("pool", "dask"), default="pool",
                   help="pool: a local process pool (default); dask: a Dask cluster (pip install -e "
                   "'.[distributed]'), a LocalCluster of --jobs workers unless --scheduler is given")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --executor dask: the address of a running `dask scheduler`, e.g. tcp://HOST:8786")
    p.add_argument("--max-points", type=_positive, metavar="N",
                   help="run up to N design points (default: the experiment's limits: {points: N}, else 100,000); "
                   "above the limit run refuses at once with the count")
    p.add_argument("--no-cache", action="store_true", help="recompute every design point")
    p.add_argument("--prune-cache", action="store_true",
                   help="remove stored design points the experiment no longer has")
    _add_loop_trips(p)
    _add_ops(p)
    p.set_defaults(func="run")

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
    p.set_defaults(func="benchmark")

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
    p.set_defaults(func="diff")

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
                   "(the metrics' names)")
    p.help_texts = lambda verb: verb_module("compare").metrics_help_fill(verb)
    p.add_argument("--columns", metavar="C[,C...]", help="only these columns, in this order: indices as printed "
                   "([0], [1], ...) or labels")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_loop_trips(p)
    _add_ops(p)
    p.set_defaults(func="compare")

    p = sub.add_parser("whatif", help="which op to support next: every refused node's claim line, simulated",
                       description="For every reason an accelerator refused a node (op not claimed, version, dtype, "
                       "a constraint), simulate the system with that refusal lifted by one claim line and rank the "
                       "lines by latency saved; each shows nodes gained, partitions and transfer bytes before and "
                       "after, and the line to add to the config's claims:. The best pair of lines is shown too. "
                       "Adding a line and re-running gives exactly the predicted latency.",
                       epilog=EPILOGS["whatif"], formatter_class=raw)
    _add_model_on_system(p)
    p.set_defaults(func="whatif")

    p = sub.add_parser("sensitivity", help="what should I change: design parameters at x0.5 and x2, bottlenecks",
                       description="Halve and double every design parameter of every device (clock, array and "
                       "lane sizes, memory level sizes and bandwidths, link bandwidth, latency and call overhead, "
                       "threads), re-costing one analysis of the model, and rank them by latency effect; then "
                       "where the time goes by bound and per op, with the array's utilisation, and a three-line "
                       "verdict. Fitted efficiencies and format constants are not design choices and are left out.",
                       epilog=EPILOGS["sensitivity"], formatter_class=raw)
    _add_model_on_system(p)
    p.set_defaults(func="sensitivity")

    p = sub.add_parser("llm", help="an LLM generating on a phone or laptop: time to first token, tokens/s, memory",
                       description="Cost prefill then decode of a decoder LLM on a named system, as LiteRT-LM runs "
                       "it: MODEL is an architecture name (its graph is built as litert-torch converts it, weights "
                       "absent) or an LLM .tflite with prefill_N and decode signatures and the KV cache as their "
                       "inputs and outputs. Prints time to first token, prefill and decode tokens per second, "
                       "peak memory (weights, KV cache, activations) against the system's memory, where the nodes "
                       "ran and why the rest fell back, and what bounds each phase. Over the memory is infeasible "
                       "(exit 1).", epilog=EPILOGS["llm"], formatter_class=raw)
    p.help_texts = lambda verb: verb_module("llm").llm_help_fill(verb)
    p.add_argument("model", help="an architecture name or an LLM .tflite")
    p.add_argument("--system", required=True, help="a named system (the names: the description above)")
    p.add_argument("--backend", default="cpu", help="cpu (the host, XNNPACK, 4 threads), gpu or npu (default cpu)")
    p.add_argument("--quant", default=None, help="quantization of a built architecture (the choices: the description "
                   "above; default int4; not for a .tflite)")
    p.add_argument("--prefill", type=_positive, default=1024, help="prompt tokens (default 1024)")
    p.add_argument("--decode", type=_positive, default=256, help="generated tokens (default 256)")
    p.add_argument("--context", type=_positive, default=None,
                   help="KV cache positions the graph is built for (default prefill + decode)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func="llm")

    p = sub.add_parser("stream", help=STREAM_HELP["verb"], description=STREAM_HELP["description"],
                       epilog=EPILOGS["stream"], formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--hw", action="append", default=[], metavar="CFG", help=HW_HELP)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"host config (default: {DEFAULT_HOST})")
    for flag, kind, default in (("--count", _positive, 1), ("--frames", _positive, 100), ("--rate", float, None),
                                ("--max-in-flight", _positive, None), ("--max-in-queue", _non_negative, 0)):
        p.add_argument(flag, type=kind, default=default, help=STREAM_HELP[flag])
    p.add_argument("--mode", choices=("replicas", "pipeline"), help=STREAM_HELP["--mode"])
    p.add_argument("--segmentation", choices=STREAM_SEGMENTATIONS, default="balanced",
                   help=STREAM_HELP["--segmentation"])
    p.add_argument("--schedule", choices=SCHEDULES, default="sequential", help=STREAM_HELP["--schedule"])
    p.add_argument("--trace", metavar="JSON", help=STREAM_HELP["--trace"])
    p.add_argument("--shared-link", action="store_true", help=STREAM_HELP["--shared-link"])
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_loop_trips(p)
    _add_ops(p)
    p.set_defaults(func="stream")

    p = sub.add_parser("validate", help="check hardware configs and experiments, listing every error",
                       description="Check each file (a hardware config or an experiment) and print every "
                       "problem as file:line: key: message.", epilog=EPILOGS["validate"], formatter_class=raw)
    p.add_argument("files", nargs="+", help="YAML files")
    _add_ops(p)
    p.set_defaults(func="validate")

    p = sub.add_parser("experiment", help="list the experiment file's keys, or print every key (--schema)",
                       description="List every key of an experiment file, one line each; with --schema, print "
                       "the reference of every key (value, default, example, meaning) as Markdown "
                       "(docs/experiments.md is the same text).", epilog=EPILOGS["experiment"], formatter_class=raw)
    p.add_argument("--schema", action="store_true", help="print the key reference as Markdown")
    p.set_defaults(func="experiment")

    p = sub.add_parser("configs", help="list the shipped hardware configs, or print every key (--schema)",
                       description="List the shipped hardware configs, one line each; with --schema, print the "
                       "reference of every key of every kind (unit, default, meaning), the claim syntax and the "
                       "constraint vocabulary (docs/hw_configs.md is the same text).",
                       epilog=EPILOGS["configs"], formatter_class=raw)
    p.add_argument("--schema", action="store_true", help="print the key reference as Markdown")
    p.set_defaults(func="configs")

    p = sub.add_parser("examples", help="write the sample models the help examples use into a folder",
                       description="Copy the sample models the help examples and the README use (shipped with the "
                       "package) and the custom op module of atan_custom.tflite into FOLDER.",
                       epilog=EPILOGS["examples"], formatter_class=raw)
    p.add_argument("folder", nargs="?", default="models", help="where to write them (default: models)")
    p.set_defaults(func="examples")
    return parser


class _VerbParser(argparse.ArgumentParser):
    """A verb's parser whose help may name things only a verb's module knows (the experiment keys, the
    metrics): `help_texts(parser)` completes them when the help is printed, so that parsing does not
    import that module."""

    help_texts: Callable[[argparse.ArgumentParser], None] | None = None

    def format_help(self) -> str:
        if self.help_texts is not None:
            fill, self.help_texts = self.help_texts, None
            fill(self)
        return super().format_help()


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
    return importlib.import_module(OPS_LOADER).load_ops(specs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        verb = getattr(args, "verb_parser", parser)
        verb.error(_unknown_arguments(verb, unknown))
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    func: str | Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    _STOP.update(requested=False, saved=None, pid=os.getpid())
    args.should_stop = lambda: _STOP["requested"]  # what a long verb (run) checks after Ctrl-C or SIGTERM
    args.saved = lambda done: _STOP.update(saved=done)  # `run`: points in the store, for what Ctrl-C says
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    try:
        ops = _load_ops(getattr(args, "ops", []))
    except AccelsimError as exc:  # a missing module, or one that registers nothing: bad input, as argparse's
        print(f"accelsim {args.command}: error: --ops {exc}", file=sys.stderr)
        return 2
    try:
        with ops:
            return (verb_function(func) if isinstance(func, str) else func)(args)
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
