"""Executors: where design points run — in this process, in a process pool, or on Dask
(accelsim.experiments.dask_executor).

Points of one model whose claims, partition options and loops agree share one analysis
(`accelsim.simulation.analysis`): a worker analyses the model once per batch and only costs each point.
An executor yields records; it never writes the results store (the caller does).
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import io
import itertools
import os
import pickle
import signal
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from accelsim.core.feasibility import Infeasible
from accelsim.core.record import LLM_KEY, PointResult
from accelsim.experiments.points import DesignPoint, resolved_system
from accelsim.hardware.config import System
from accelsim.ops import require_kernels, using_ops
from accelsim.reports.results import error_record, infeasible_record, record
from accelsim.runtime.errors import AccelsimError
from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.simulation.analysis import (
    Analysis,
    analysis_facts,
    analysis_key,
    analyze,
    model_digest,
    simulate_analysis,
)
from accelsim.simulation.diff import inference_diff
from accelsim.workloads.architectures import ARCHITECTURES
from accelsim.workloads.builder import build_model, check_quant
from accelsim.workloads.generation import GenerationAnalysis, analyze_generation, generate
from accelsim.workloads.llm_file import read_llm


def run_point(point: DesignPoint, options: Mapping[str, int]) -> PointResult:
    """Simulate one design point (and check its numerics when asked); never raises for a bad point."""
    try:
        system = point.system if point.system is not None else resolved_system(point, options)
    except (AccelsimError, ValueError, OSError) as exc:
        return point_error(point, exc)
    return simulate_point(point, system, point.model)


def run_packed(model: str, packed: bytes) -> list[PointResult]:
    """In a pool worker: the records of a batch of points sharing `model` (a path), packed by `pack_items`."""
    return list(point_records(model, pickle.loads(packed), WORKER_ANALYSES))


class AnalysisCache:
    """A worker process's analyses, kept across the batches it runs (least recently used dropped past `size`).

    A sweep's batches mostly share one analysis; a worker that runs several of them parses and
    delegates the model once instead of once a batch. An analysis is found by the model's bytes
    (its sha256) and `analysis_facts`, exactly what makes two analyses equal.
    """

    def __init__(self, size: int = 8):
        self.size = size
        self.items: dict[Hashable, Analysis | Exception] = {}
        self.digests: dict[tuple, str] = {}

    def digest(self, model: Any) -> str | None:
        """The sha256 of a model given as a path or bytes (a path's memoised by its size and mtime); None otherwise."""
        if isinstance(model, bytes):
            return model_digest(model)
        if isinstance(model, (str, Path)):
            try:
                stat = os.stat(model)
            except OSError:
                return None
            key = (str(model), stat.st_size, stat.st_mtime_ns)
            if key not in self.digests:
                self.digests[key] = model_digest(model)
            return self.digests[key]
        return None

    def get(self, key: Hashable) -> Analysis | Exception | None:
        found = self.items.pop(key, None)
        if found is not None:
            self.items[key] = found  # most recently used last
        return found

    def put(self, key: Hashable, analysis: Analysis | Exception) -> None:
        self.items[key] = analysis
        while len(self.items) > self.size:
            del self.items[next(iter(self.items))]


# The analyses of this process when it is a pool or Dask worker (each worker process has its own).
WORKER_ANALYSES = AnalysisCache()


def _read_only(items: dict) -> MappingProxyType:
    return MappingProxyType(items)


class _ItemPickler(pickle.Pickler):
    """Pickles Systems too: a config's read-only mappings (mappingproxy, which pickle refuses) go as dicts."""

    def reducer_override(self, obj):
        if type(obj) is MappingProxyType:
            return _read_only, (dict(obj),)
        return NotImplemented


def pack_items(items: Sequence[tuple[DesignPoint, System | PointResult]]) -> bytes:
    """Points with their Systems (or error records) as bytes for a worker: it need not re-read the configs.

    Resolving a point's System re-checks its configs (milliseconds a point, more than costing
    it); unpickling a resolved one takes a tenth of that.
    """
    buffer = io.BytesIO()
    _ItemPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(list(items))
    return buffer.getvalue()


def point_records(model: Any, items: Iterable[tuple[DesignPoint, System | PointResult]],
                  cache: AnalysisCache | None = None) -> Iterator[PointResult]:
    """The records of points sharing `model` (its path, bytes or parsed Model), in order; never raises for a bad point.

    An item is a point and its System, or the error record of a point whose System could not be
    built (passed on as it is). The model is parsed once, and points whose claims, partition
    options and loops agree (`accelsim.simulation.analysis.analysis_facts`) share one analysis: each only
    re-runs the costs and the schedule.
    """

    analyses = cache if cache is not None else AnalysisCache(size=1 << 30)
    digest = analyses.digest(model) if cache is not None else None
    parsed: list = []  # the parsed model, once a point needed it

    def analysis_for(point: DesignPoint, system: System) -> Analysis:
        facts = analysis_facts(system, point.schedule, point.loops)
        # A shared cache knows the model by its bytes (and the custom-op modules loaded with it); without it, the
        # batch's model is the only one.
        key = (digest, point.ops, facts) if digest is not None else facts
        found = analyses.get(key)
        if found is None:
            try:
                if not parsed:  # an unresolved custom op fails every point alike, naming the model file
                    parsed.append(require_kernels(model, point.model))
                found = analyze(parsed[0], system, point.schedule, point.loops)
            except (AccelsimError, ValueError, OSError) as exc:
                found = exc  # every point of this analysis fails alike: analysed once
            analyses.put(key, found)
        if isinstance(found, Exception):
            raise found
        return found

    for point, system in items:
        yield system if isinstance(system, dict) else simulate_point(point, system, model, analysis_for)


def simulate_point(point: DesignPoint, system: System, model: Any,
                   analysis_for: Callable[[DesignPoint, System], Analysis] | None = None) -> PointResult:
    """The record of `point` run on `system`; `model` is its path, bytes or parsed Model (never raises for a bad point).

    The record names `point.model` whatever `model` is, so a worker that got the model's bytes
    writes the same record as one that read the file.

    Args:
        analysis_for: the shared analysis of a point (`point_records` keeps them); default: analyse afresh.
    """
    if point.generate is not None:
        try:
            return generation_record(point, system, model)
        except (AccelsimError, ValueError, OSError) as exc:
            return point_error(point, exc)
    try:
        with using_ops(point.ops):  # in this process or a worker: the experiment's custom kernels resolve
            analysis = (analysis_for(point, system) if analysis_for is not None
                        else analyze(require_kernels(model, point.model), system, point.schedule, point.loops))
            if analysis.refusals:  # an accelerator that can run none of the model: a result, not a failure
                raise Infeasible("constraints", "; ".join(analysis.refusals))
            # point_records' analysis_for found the analysis by this system's facts: no need to check them again
            sim = simulate_analysis(analysis, system, point.schedule, facts_checked=analysis_for is not None)
            diff = inference_diff(model, system, point.numerics_runs) if point.numerics_runs else None
        return record(sim, point_id=point.id, model=point.model, variant=point.variant, sweep=dict(point.sweep),
                      diff=diff, details=point.details)
    except (AccelsimError, ValueError, OSError) as exc:
        return point_error(point, exc)


# A worker's LLM analyses, by (model, quant, prefill, context, analysis facts): points that differ only in costs
# (a swept bandwidth, a decode length) share one.
_GENERATIONS: dict[Hashable, GenerationAnalysis] = {}


def generation_record(point: DesignPoint, system: System, model: Any) -> PointResult:
    """The record of an LLM generation point (`generate:`): the usual record of one prefill call, its latency the
    time to first token, and `llm` (accelsim.workloads.generation.Generation.as_dict). Over the memory: Infeasible."""
    g = point.generate
    prefill, decode = int(g["prefill"]), int(g["decode"])
    context = int(g["context"]) or prefill + decode
    key = (point.model, g["quant"], prefill, context, analysis_facts(system, point.schedule, point.loops))
    if key not in _GENERATIONS:
        if point.model in ARCHITECTURES:
            check_quant(g["quant"])
            built = build_model(ARCHITECTURES[point.model], g["quant"], prefill, context)
        else:
            built = model if isinstance(model, Model) else load_model(model)
        if len(_GENERATIONS) >= 8:
            _GENERATIONS.clear()
        _GENERATIONS[key] = analyze_generation(read_llm(built, point.model), system)
    ga = _GENERATIONS[key]
    backend = system.accelerators[0].name if system.accelerators else "cpu"
    result = generate(ga, system, system_name=point.variant, backend=backend, prefill=prefill, decode=decode,
                      kv_buffers=int(g["kv_buffers"]))
    if result.status != "ok":
        raise Infeasible(result.reason, result.detail)
    first = ga.graph.prefill[max(n for n in ga.graph.prefill if n <= prefill)] if min(ga.graph.prefill) <= prefill \
        else ga.graph.prefill[min(ga.graph.prefill)]
    out = record(simulate_analysis(ga.analyses[first], system, point.schedule), point_id=point.id, model=point.model,
                 variant=point.variant, sweep=dict(point.sweep))
    out["latency_us"] = result.ttft_s * 1e6
    out[LLM_KEY] = result.as_dict()
    return out


def point_error(point: DesignPoint, exc: BaseException) -> PointResult:
    """The record of a point that failed with `exc` (an `Infeasible` one is infeasible, not failed)."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, Infeasible):
        return infeasible_record(point_id=point.id, model=point.model, variant=point.variant,
                                 sweep=dict(point.sweep), host=Path(point.host).stem,
                                 accelerators=[Path(a).stem for a in point.accelerators], schedule=point.schedule,
                                 reason=exc.reason, message=message)
    return error_record(point_id=point.id, model=point.model, variant=point.variant, sweep=dict(point.sweep),
                        host=Path(point.host).stem, accelerators=[Path(a).stem for a in point.accelerators],
                        schedule=point.schedule, error=f"{type(exc).__name__}: {message}")


class WorkersLost(AccelsimError):
    """The executor lost its workers for good (a pool process died, or Dask gave up on a task)."""


class Executor(Protocol):
    """Runs design points: the process pool by default, a Dask cluster with accelsim.experiments.dask_executor.

    `run` yields the records of finished points in batches, in the order they finish; closing
    the generator early cancels what has not started. The caller (the only writer of the results
    store) commits each batch before asking for the next.
    """

    def run(self, points: Sequence[DesignPoint], options: Mapping[str, Mapping[str, int]]) -> Iterator[list[dict]]:
        """Records of `points` (options by variant name), a batch at a time.

        Raises:
            WorkersLost: the workers died and the executor will not retry.
        """
        ...


def default_executor(jobs: int | None, n_points: int) -> Executor:
    """The executor `accelsim run` uses: in this process for one job or point, else a pool of up to `jobs` workers.

    Args:
        jobs: worker processes; None: one per CPU.
    """
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    return SerialExecutor() if jobs <= 1 or n_points <= 1 else PoolExecutor(min(jobs, n_points))


class SerialExecutor:
    """Runs each point in this process, one at a time (jobs = 1); points of one model share its analyses."""

    def run(self, points, options):
        for model, group in itertools.groupby(points, key=lambda p: p.model):
            items = []
            for p in group:
                try:
                    items.append((p, p.system if p.system is not None else resolved_system(p, options[p.variant])))
                except (AccelsimError, ValueError, OSError) as exc:
                    items.append((p, point_error(p, exc)))
            for rec in point_records(model, items):
                yield [rec]


# A pool batch is at most this many points of one analysis: big enough that building the analysis
# (parse, delegate, size every node) is small next to costing the points, small enough that a
# batch's records reach the store while the run goes on.
POOL_BATCH = 256


class PoolExecutor:
    """A process pool of `jobs` workers, with about twice that many batches submitted at a time.

    A batch holds points of one model that share an analysis (`accelsim.simulation.analysis.analysis_key`),
    with their resolved Systems (`pack_items`), so a worker analyses the model once per batch and
    only costs each point.
    """

    def __init__(self, jobs: int, keep_workers: bool = False):
        """`keep_workers`: keep the pool (and its workers' analyses) from one `run` to the next until `close`
        (a search runs a round of trials at a time)."""
        self.jobs = jobs
        self.keep_workers = keep_workers
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    def close(self) -> None:
        """Stop the workers a `keep_workers` pool kept."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def run(self, points, options):
        pool = self._pool or concurrent.futures.ProcessPoolExecutor(max_workers=self.jobs,
                                                                    initializer=_default_sigterm)
        self._pool = None
        queue = iter(pool_batches(points, options, self.jobs))
        pending: dict[concurrent.futures.Future, str] = {}
        cancel = True
        try:
            while True:
                # A bounded window: a finished batch is saved before many more are started.
                for model, items in itertools.islice(queue, max(0, 2 * self.jobs - len(pending))):
                    pending[pool.submit(run_packed, model, pack_items(items))] = items[0][0].id
                if not pending:
                    break
                ready, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in sorted(ready, key=lambda f: pending[f]):
                    del pending[future]
                    try:
                        records = future.result()
                    except concurrent.futures.process.BrokenProcessPool as exc:
                        raise WorkersLost(f"a worker process died ({exc})") from exc
                    yield records
            cancel = False
        finally:
            if self.keep_workers and not cancel:
                self._pool = pool
            else:
                pool.shutdown(wait=not cancel, cancel_futures=cancel)


def _default_sigterm() -> None:
    """In a pool worker: die on SIGTERM again.

    A forked worker inherits the CLI's SIGTERM handler (which only sets a stop flag); the pool
    terminates its workers with SIGTERM when one of them dies, and a worker that ignored it
    would block the run's exit while writing a batch's records into a pipe nobody reads.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def pool_batches(points: Sequence[DesignPoint], options: Mapping[str, Mapping[str, int]], jobs: int,
                 ) -> list[tuple[str, list[tuple[DesignPoint, System | PointResult]]]]:
    """(model, items) batches: points of one model and one analysis, at most POOL_BATCH, about 2 per worker.

    An item is a point and its System, or the error record of a point whose System could not be
    built (such a point goes alone). Groups keep the order in which their first point comes.
    """

    digests = {m: model_digest(m) for m in dict.fromkeys(p.model for p in points) if Path(m).is_file()}
    groups: dict[Hashable, list[tuple[DesignPoint, System | PointResult]]] = {}
    for p in points:
        try:
            system = p.system if p.system is not None else resolved_system(p, options[p.variant])
            key: Hashable = (p.model, analysis_key(digests.get(p.model, ""), system, p.schedule, p.loops))
            item = (p, system)
        except (AccelsimError, ValueError, OSError) as exc:
            key, item = ("point", p.id), (p, point_error(p, exc))
        groups.setdefault(key, []).append(item)
    batches = []
    for group in groups.values():
        size = max(1, min(POOL_BATCH, -(-len(group) // (2 * jobs))))
        batches.extend((group[0][0].model, group[i:i + size]) for i in range(0, len(group), size))
    return batches
