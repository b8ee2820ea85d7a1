"""Running an experiment's design points on a Dask cluster (`accelsim run --executor dask`).

Needs the `distributed` extra (`pip install -e '.[distributed]'`); nothing on the default path
imports this module. Work is shipped per analysis: a batch of points that share a model and a
variant, with each point's resolved System (so workers need neither the experiment's files nor
the same checkout layout), and the model's bytes scattered to every worker once. Dask reschedules
the tasks of a worker that dies (up to its `distributed.scheduler.allowed-failures`); the records
come back to the client, which alone writes the results store.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from accelsim.experiments.executors import WORKER_ANALYSES, WorkersLost, point_error, point_records
from accelsim.experiments.points import DesignPoint, resolved_system
from accelsim.hardware.config import System
from accelsim.runtime.errors import AccelsimError

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install -e '.[distributed]'"
CONNECT_TIMEOUT_S = 5  # Dask takes a few seconds past it to give up: the error comes within 10 s
# Batches are small enough that a lost worker costs little and progress moves, big enough that
# the per-task overhead of Dask (~1 ms) is small next to a point's simulation.
MAX_BATCH = 32


class DaskUnavailable(AccelsimError):
    """`--executor dask` without Dask installed."""


def distributed_module():
    """The `distributed` package, or an error naming the pip command that brings it."""
    try:
        import distributed  # an optional dependency (the `distributed` extra): imported only when asked for
    except ImportError as exc:
        raise DaskUnavailable(f"--executor dask needs Dask's distributed scheduler, which is not installed "
                              f"({exc}); install it with: {INSTALL_HINT}") from exc
    return distributed


@contextmanager
def dask_client(scheduler: str | None = None, *, workers: int | None = None) -> Iterator:
    """A `distributed.Client` of the cluster at `scheduler`, or of a LocalCluster of `workers` processes.

    Raises:
        DaskUnavailable: Dask is not installed.
        AccelsimError: the scheduler does not answer within CONNECT_TIMEOUT_S.
    """
    distributed = distributed_module()
    if scheduler is None:
        # A dashboard on a free port: a fixed one (8787) would collide with another user's cluster.
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            yield client
        return
    try:
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise AccelsimError(f"no Dask scheduler answered at {scheduler} within {CONNECT_TIMEOUT_S} s "
                            f"({type(exc).__name__}); start one with `dask scheduler` and check the address") from exc
    with client:
        yield client


def run_batch(model: bytes, items: Sequence[tuple[DesignPoint, System | dict]]) -> list[dict]:
    """On a worker: the records of a batch of points sharing `model` (its bytes, parsed once here).

    An item carries its point's System, or the error record of a point whose System could not be
    built (it is passed back as it is). Points that share an analysis are costed against one
    (`accelsim.experiments.executors.point_records`).
    """
    return list(point_records(model, items, WORKER_ANALYSES))


class DaskExecutor:
    """Runs design points on the cluster behind a `distributed.Client`."""

    def __init__(self, client):
        self.client = client

    def run(self, points: Sequence[DesignPoint], options: Mapping[str, Mapping[str, int]]) -> Iterator[list[dict]]:
        distributed = distributed_module()
        workers = max(1, len(self.client.scheduler_info()["workers"]))
        size = max(1, min(MAX_BATCH, -(-len(points) // (4 * workers))))
        models: dict[str, object] = {}  # model path -> the future of its bytes on the cluster

        def submit(model: str, batch: Sequence[DesignPoint]):
            if model not in models:
                data = Path(model).read_bytes()
                # Scattered once and replicated to every worker; a restarted worker fetches it from a peer.
                models[model] = self.client.scatter(data, broadcast=True, hash=False)
                log.debug("scattered %s (%d bytes)", model, len(data))
            items = [(p, _system(p, options[p.variant])) for p in batch]
            return self.client.submit(run_batch, models[model], items, pure=False)

        batches = _batches(points, size)
        # A window of batches in flight: Systems are resolved as the run goes, not all before it starts.
        futures = [submit(*b) for b in itertools.islice(batches, 4 * workers)]
        finished = distributed.as_completed(futures)
        try:
            for future in finished:
                try:
                    records = future.result()
                except distributed.KilledWorker as exc:
                    raise WorkersLost(f"Dask workers died running the same batch too often ({exc})") from exc
                yield records
                following = next(batches, None)
                if following is not None:
                    futures.append(submit(*following))
                    finished.add(futures[-1])
        finally:
            self.client.cancel([f for f in futures if not f.done()])


def _batches(points: Sequence[DesignPoint], size: int) -> Iterator[tuple[str, list[DesignPoint]]]:
    """(model, up to `size` consecutive points of one model and variant): one analysis' share of work."""
    for (model, _variant), group in itertools.groupby(points, key=lambda p: (p.model, p.variant)):
        group = list(group)
        for start in range(0, len(group), size):
            yield model, group[start:start + size]


def _system(point: DesignPoint, options: Mapping[str, int]) -> System | dict:
    """The point's System, resolved here (the client has the config files), or its error record."""
    try:
        return point.system if point.system is not None else resolved_system(point, options)
    except (AccelsimError, ValueError, OSError) as exc:
        return point_error(point, exc)
