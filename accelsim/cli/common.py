"""What the verbs of the command line share: the progress bar, the --loop-trips merge and the --ops loader."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Sequence

from tqdm import tqdm

from accelsim.ops import load_op_modules, using_ops
from accelsim.runtime.work import LoopTrips


@contextlib.contextmanager
def progress_bar(unit: str, stream=None, every: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> Iterator[Callable[[int, int, str], None]]:
    """A progress callback (done, total, label): a tqdm bar on a terminal (done/total, rate, time left).

    On a pipe or file it is silent, unless `every` is given: then a plain line at most every `every`
    seconds, "1,200/5,000 points, 850/s, about 4 s left", and one at the end once any was written (a
    long `run` in a log says how far it is; a short one stays silent).
    """

    bar = None
    out = stream or sys.stderr
    start = last = None
    shown = False  # a run shorter than `every` says nothing on a pipe, not even at its end

    def show(done: int, total: int, label: str) -> None:
        nonlocal bar, start, last, shown
        if bar is None:  # disable=None: tqdm stays silent unless the stream is a terminal
            bar = tqdm(total=total, unit=unit, file=out, disable=None, dynamic_ncols=True)
            start = last = clock()
        if not bar.disable:
            bar.set_postfix_str(label, refresh=False)
            bar.update(done - bar.n)
            return
        now = clock()
        if every is None or (now - last < every and (done < total or not shown)):
            return
        last, shown = now, True
        rate = done / (now - start) if now > start else 0.0
        left = f", about {(total - done) / rate:,.0f} s left" if rate and done < total else ""
        print(f"{done:,}/{total:,} {unit}s, {rate:,.0f}/s{left}", file=out, flush=True)

    try:
        yield show
    finally:
        if bar is not None:
            bar.close()


def merged_loops(base: LoopTrips, values: Sequence[tuple[str | None, int]]) -> LoopTrips:
    """`base` with the --loop-trips values on top (the last default given wins)."""
    default, nodes = base.default_trips, dict(base.nodes)
    for key, trips in values:
        if key is None:
            default = trips
        else:
            nodes[key] = trips
    return LoopTrips(default, nodes)


def load_ops(specs: Sequence[str]) -> contextlib.AbstractContextManager:
    """The --ops modules, loaded now (so a bad one fails before any work), as the block their kernels live in."""
    return using_ops(load_op_modules(specs))
