"""The verbs of workloads beyond one inference: llm (prefill then decode), stream (frames over time).

Imported by the command line only when one of them runs (accelsim/cli/main.py, VERBS).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from accelsim.cli.common import merged_loops
from accelsim.core.files import write_atomic
from accelsim.core.trace import trace_document
from accelsim.ops import require_kernels
from accelsim.reports.streams_section import text_lines as stream_lines
from accelsim.runtime.work import LoopTrips
from accelsim.tools.llm import ARCHITECTURE_NAMES, QUANT_HELP, QUANT_NAMES, SYSTEM_NAMES, llm_lines, run_llm
from accelsim.tools.systems import system_from_options
from accelsim.workloads.streams import StreamSpec, Workload, simulate_streams


def cmd_llm(args: argparse.Namespace) -> int:
    result = run_llm(args.model, args.system, args.backend, args.quant, args.prefill, args.decode, args.context)
    print(json.dumps(result.as_dict(), indent=2) if args.json else "\n".join(llm_lines(result)))
    return 0 if result.status == "ok" else 1


def llm_help_fill(parser: argparse.ArgumentParser) -> None:
    """`accelsim llm --help`, completed with the architectures, systems and quantizations (when it is printed)."""
    parser.description += (f" Architectures: {', '.join(ARCHITECTURE_NAMES)}; systems: {', '.join(SYSTEM_NAMES)}.")
    for action in parser._actions:
        if "--system" in action.option_strings:
            action.help = "one of " + ", ".join(SYSTEM_NAMES)
        elif "--quant" in action.option_strings:
            action.help = "quantization of a built architecture: " + ", ".join(QUANT_NAMES) + QUANT_HELP


def cmd_stream(args: argparse.Namespace) -> int:
    system = system_from_options(args.host, args.hw)
    require_kernels(args.model)
    spec = StreamSpec(Path(args.model).stem, args.model, args.frames, args.rate, (), args.max_in_flight,
                      args.max_in_queue)
    w = Workload((spec,), args.mode or "replicas", args.count, args.segmentation, args.schedule, 20, args.shared_link)
    result = simulate_streams(w, system, merged_loops(LoopTrips(), args.loop_trips))
    if args.trace:
        write_atomic(Path(args.trace), json.dumps(trace_document(result.trace_record(w.mode), pid=1, label=spec.name)))
    print(json.dumps(result.to_json(), indent=2) if args.json else "\n".join(stream_lines(result)))
    return 0
