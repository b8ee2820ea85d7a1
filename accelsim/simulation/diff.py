"""inference_diff: the same inputs through the reference interpreter and the delegated one.

As TFLite's inference_diff tool: N runs of random inputs (Gaussian for float inputs, uniform
over the type's range for integer ones) or the user's own, per output the mean, standard
deviation and maximum of the absolute error, plus host wall-clock latency of both runs.
Quantized outputs compare their integers (errors in integer steps) and also give the error in
real units (steps x the output's scale); a classifier-shaped output ([batch, classes]) also
gives top-1 agreement. The report says how many nodes each accelerator took: with none, both
runs are the host's kernels and the comparison is trivially exact, and it says so.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from accelsim.hardware.config import System
from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.simulation.placement import cost_aware_interpreter


@dataclass(frozen=True, kw_only=True)
class OutputDiff:
    """One output's errors, in its own units: integer steps for a quantized output, real values for a float one."""

    index: int
    name: str
    mean_abs_error: float  # mean over runs of each run's mean |test - reference|
    std_abs_error: float  # standard deviation of those per-run means
    max_abs_error: float  # largest single-element |test - reference| over all runs
    scale: float | None = None  # a quantized output's scale: real error = steps x scale (None for float outputs)
    top1_agreement: float | None = None  # share of rows whose argmax agrees, for [batch, classes] outputs

    def text(self) -> str:
        """inference_diff's line, with real units next to integer steps and top-1 agreement where they apply."""
        def err(x: float) -> str:
            return f"{x:.6g}" if self.scale is None else f"{x:.6g} steps ({x * self.scale:.6g} real)"
        line = (f"OutputDiff[{self.index}] ({self.name}): avg_error={err(self.mean_abs_error)}, "
                f"std_dev={err(self.std_abs_error)}, max_error={err(self.max_abs_error)}")
        if self.top1_agreement is not None:
            line += f", top-1 agreement={100 * self.top1_agreement:.1f}%"
        return line


@dataclass(frozen=True, kw_only=True)
class DiffReport:
    model: str
    accelerators: tuple[str, ...]
    num_runs: int
    reference_latency_us: tuple[float, float]  # (avg, std) host wall-clock per invoke
    test_latency_us: tuple[float, float]
    outputs: tuple[OutputDiff, ...]
    delegated: tuple[tuple[str, int], ...] = ()  # (accelerator, nodes it took), in the system's order
    total_nodes: int = 0
    inputs: str = "random"  # where the inputs came from: "random (seed N)" or a file

    @property
    def trivially_exact(self) -> bool:
        """No node was delegated: both runs are the host's kernels, so equal outputs prove nothing."""
        return not any(n for _, n in self.delegated)

    def lines(self) -> list[str]:
        """The report in inference_diff's output layout, after what was delegated and where the inputs came from."""
        took = ", ".join(f"{a} took {n} of {self.total_nodes} nodes" for a, n in self.delegated)
        out = [f"Delegation: {took}" if not self.trivially_exact else
               f"Delegation: no node was delegated ({took}): both runs use the host's kernels, so the comparison "
               "is trivially exact and says nothing about the accelerator's numerics",
               f"Inputs: {self.inputs}",
               f"Num evaluation runs: {self.num_runs}",
               f"Reference run latency: avg={self.reference_latency_us[0]:.1f}(µs), "
               f"std_dev={self.reference_latency_us[1]:.1f}(µs)",
               f"Test run latency: avg={self.test_latency_us[0]:.1f}(µs), std_dev={self.test_latency_us[1]:.1f}(µs)"]
        out.extend(o.text() for o in self.outputs)
        return out


def random_input(detail: dict, rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(detail["dtype"])
    shape = tuple(int(d) for d in detail["shape"])
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def load_inputs(path: str | Path, details: Sequence[dict]) -> list[list[np.ndarray]]:
    """Inputs from a .npy (a one-input model) or .npz (arrays named as the inputs, or arr_0, arr_1, ... in order).

    An array shaped as its input is one run; one with an extra leading axis holds a run per row.

    Returns:
        Per run, one array per input, in the model's input order.

    Raises:
        ValueError: the file's kind, an array missing, or an array whose shape or dtype is not its input's.
    """
    path = Path(path)
    if path.suffix not in (".npy", ".npz"):
        raise ValueError(f"{path}: --input takes a .npy file (one-input models) or a .npz file, got {path.suffix!r}")
    if path.suffix == ".npy":
        if len(details) != 1:
            raise ValueError(f"{path}: the model has {len(details)} inputs ({_names(details)}); give a .npz with "
                             "one array per input, named as the inputs")
        arrays = [np.load(path, allow_pickle=False)]
    else:
        with np.load(path, allow_pickle=False) as npz:
            stored = dict(npz)
        arrays = []
        for k, d in enumerate(details):
            key = d["name"] if d["name"] in stored else f"arr_{k}"
            if key not in stored:
                raise ValueError(f"{path}: no array for input {k} {d['name']!r} (arrays: {', '.join(stored)}); "
                                 f"name each array as its input ({_names(details)}) or arr_0, arr_1, ... in order")
            arrays.append(stored[key])
    runs = {_runs_in(path, k, d, a) for k, (d, a) in enumerate(zip(details, arrays))}
    if len(runs) > 1:
        raise ValueError(f"{path}: the inputs hold different numbers of runs ({sorted(runs)})")
    n = runs.pop()
    return [[a if n == 0 else a[r] for a in arrays] for r in range(max(n, 1))]


def _names(details: Sequence[dict]) -> str:
    return ", ".join(repr(d["name"]) for d in details)


def _runs_in(path: Path, k: int, detail: dict, array: np.ndarray) -> int:
    """0 when `array` is one run of input `k`, R when it stacks R runs; else a ValueError naming both."""
    shape = tuple(int(x) for x in detail["shape"])
    dtype = np.dtype(detail["dtype"])
    if array.dtype == dtype and array.shape == shape:
        return 0
    if array.dtype == dtype and array.ndim == len(shape) + 1 and array.shape[1:] == shape and array.shape[0]:
        return array.shape[0]
    raise ValueError(f"{path}: input {k} {detail['name']!r} expects shape {list(shape)} {dtype} (or [runs, "
                     f"{', '.join(map(str, shape))}] for several runs), got shape {list(array.shape)} {array.dtype}")


def inference_diff(model: Model | str | bytes, system: System, num_runs: int = 50, seed: int = 0,
                   progress: Callable[[int, int, str], None] | None = None,
                   inputs: Sequence[Sequence[np.ndarray]] | None = None, input_source: str | None = None
                   ) -> DiffReport:
    """Compare the system's delegated run of `model` with the reference interpreter.

    Args:
        num_runs: seeded random inputs to compare (ignored when `inputs` are given).
        inputs: per run, one array per model input (from `load_inputs`); None for seeded random ones.
        input_source: how the report names `inputs` (e.g. the file).
    """
    if inputs is None and num_runs < 1:
        raise ValueError(f"num_runs must be >= 1, got {num_runs}")
    name = model if isinstance(model, str) else "<model>"
    ir = model if isinstance(model, Model) else load_model(model)
    reference = Interpreter(model=ir)
    reference.allocate_tensors()
    test, delegates, _ = cost_aware_interpreter(ir, system)  # the delegation the system would run
    rng = np.random.default_rng(seed)
    runs = len(inputs) if inputs is not None else num_runs
    outputs = reference.get_output_details()
    per_run: list[list[float]] = [[] for _ in outputs]
    worst = [0.0 for _ in outputs]
    agree = [[0, 0] for _ in outputs]  # rows whose argmax agrees, rows compared
    ref_times: list[float] = []
    test_times: list[float] = []
    for run in range(runs):
        given = inputs[run] if inputs is not None else [random_input(d, rng) for d in reference.get_input_details()]
        results = []
        for it, times in ((reference, ref_times), (test, test_times)):
            for d, x in zip(it.get_input_details(), given):
                it.set_tensor(d["index"], x)
            t0 = time.perf_counter()
            it.invoke()
            times.append((time.perf_counter() - t0) * 1e6)
            results.append([it.get_tensor(d["index"]).astype(np.float64) for d in outputs])
        for k, (r, t) in enumerate(zip(*results)):
            err = np.abs(t - r)
            per_run[k].append(float(err.mean()) if err.size else 0.0)
            worst[k] = max(worst[k], float(err.max()) if err.size else 0.0)
            if _classifier_shaped(r):
                agree[k][0] += int(np.count_nonzero(r.argmax(-1) == t.argmax(-1)))
                agree[k][1] += r.shape[0]
        if progress is not None:
            progress(run + 1, runs, "inference_diff runs")
    diffs = tuple(
        OutputDiff(index=k, name=d["name"], mean_abs_error=statistics.fmean(per_run[k]),
                   std_abs_error=statistics.pstdev(per_run[k]) if len(per_run[k]) > 1 else 0.0, max_abs_error=worst[k],
                   scale=_scale(d), top1_agreement=agree[k][0] / agree[k][1] if agree[k][1] else None)
        for k, d in enumerate(outputs))
    report = test.get_delegation_report()
    delegated = tuple((d.name(), sum(1 for r in report if r["claimed"] and r["delegate"] == d.name()))
                      for d in delegates)
    return DiffReport(model=name, accelerators=tuple(a.name for a in system.accelerators), num_runs=runs,
                      reference_latency_us=_avg_std(ref_times),
                      test_latency_us=_avg_std(test_times), outputs=diffs, delegated=delegated, total_nodes=len(report),
                      inputs=input_source or f"random (seed {seed})")


def _classifier_shaped(output: np.ndarray) -> bool:
    """[batch, classes] with two or more classes: where top-1 agreement means something."""
    return output.ndim == 2 and output.shape[1] > 1


def _scale(detail: dict) -> float | None:
    """A quantized integer output's scale (LiteRT's (scale, zero_point) pair has scale 0 for unquantized ones)."""
    scale = float(detail["quantization"][0])
    return scale if scale and np.dtype(detail["dtype"]).kind in "iu" else None


def _avg_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.pstdev(values) if len(values) > 1 else 0.0)
