"""What the verbs of the command line share: the progress bar, the --loop-trips merge and the --ops loader."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence

from tqdm import tqdm

from accelsim.ops import load_op_modules, using_ops
from accelsim.runtime.work import LoopTrips


@contextlib.contextmanager
def progress_bar(unit: str, stream=None) -> Iterator[Callable[[int, int, str], None]]:
    """A progress callback (done, total, label) drawing a tqdm bar on a terminal, and nothing on a pipe or file."""

    bar = None

    def show(done: int, total: int, label: str) -> None:
        nonlocal bar
        if bar is None:  # disable=None: tqdm stays silent unless the stream is a terminal
            bar = tqdm(total=total, unit=unit, file=stream or sys.stderr, disable=None, dynamic_ncols=True)
        bar.set_postfix_str(label, refresh=False)
        bar.update(done - bar.n)

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
