"""The verb that runs an experiment: run.

Imported by the command line only when one of them runs (accelsim/cli/main.py, VERBS).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import sys

from accelsim.cli.common import merged_loops, progress_bar
from accelsim.core.feasibility import summary_line
from accelsim.core.units import counted
from accelsim.experiments.dask_executor import DaskExecutor, dask_client, distributed_module
from accelsim.experiments.experiment import load_experiment, with_ops
from accelsim.experiments.keys import default_experiment
from accelsim.experiments.points import check_point_count
from accelsim.experiments.run import run_experiment
from accelsim.reports.labels import point_label, slower_sentence, slower_than_host_points, warning_lines
from accelsim.reports.report import RENDERERS


def cmd_run(args: argparse.Namespace) -> int:
    experiment = with_ops(load_experiment(args.experiment or default_experiment()), args.ops)  # workers load --ops too
    if args.loop_trips:
        experiment = dataclasses.replace(experiment, loops=merged_loops(experiment.loops, args.loop_trips))
    if args.scheduler and args.executor != "dask":
        raise ValueError(f"--scheduler {args.scheduler} needs --executor dask")
    count = check_point_count(experiment, args.max_points)  # refused at once, with the count, above the limit
    with contextlib.ExitStack() as stack:
        executor = None
        if args.executor == "dask":

            # Dask sets its loggers to INFO when imported and logs every cluster event; show them with --debug only.
            distributed_module()
            logging.getLogger("distributed").setLevel(logging.DEBUG if args.debug else logging.WARNING)
            executor = DaskExecutor(stack.enter_context(dask_client(args.scheduler, workers=args.jobs)))
        # Once the executor is up, the first line of the run's output; stderr stays for warnings and errors. A
        # terminal gets the bar, a pipe or log a line every 30 s (a big sweep runs for minutes).
        print(f"{experiment.name}: {count:,} design points", flush=True)
        bar = stack.enter_context(progress_bar("point", every=30.0))

        def progress(done: int, total: int, label: str) -> None:
            args.saved(done)  # what a Ctrl-C says it keeps
            bar(done, total, label)

        outcome = run_experiment(experiment, args.out, jobs=args.jobs, executor=executor,
                                 use_cache=not args.no_cache, prune_cache=args.prune_cache, progress=progress,
                                 should_stop=args.should_stop, max_points=args.max_points)
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
    stale = counted(outcome.stale, 'stale entry', 'stale entries')
    if outcome.pruned:
        print(f"  cache: removed {stale} (design points no longer in the experiment)")
    else:
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
