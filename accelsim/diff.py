"""inference_diff: the same seeded inputs through the reference interpreter and the delegated one.

As TFLite's inference_diff tool: N runs of random inputs (Gaussian for float inputs, uniform
over the type's range for integer ones), per output the mean, standard deviation and maximum
of the absolute error, plus host wall-clock latency of both runs. Errors are in the output's
own units (quantized outputs compare their integers). A `reference`-numerics accelerator
shows exactly 0.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accelsim.config import System
from accelsim.system import build_interpreter
from runtime.interpreter import Interpreter
from runtime.ir import Model
from runtime.read import load_model


@dataclass(frozen=True)
class OutputDiff:
    index: int
    name: str
    mean_abs_error: float  # mean over runs of each run's mean |test - reference|
    std_abs_error: float  # standard deviation of those per-run means
    max_abs_error: float  # largest single-element |test - reference| over all runs


@dataclass(frozen=True)
class DiffReport:
    model: str
    accelerators: tuple[str, ...]
    num_runs: int
    reference_latency_us: tuple[float, float]  # (avg, std) host wall-clock per invoke
    test_latency_us: tuple[float, float]
    outputs: tuple[OutputDiff, ...]

    def lines(self) -> list[str]:
        """The report in inference_diff's output layout."""
        out = [f"Num evaluation runs: {self.num_runs}",
               f"Reference run latency: avg={self.reference_latency_us[0]:.1f}(us), "
               f"std_dev={self.reference_latency_us[1]:.1f}(us)",
               f"Test run latency: avg={self.test_latency_us[0]:.1f}(us), std_dev={self.test_latency_us[1]:.1f}(us)"]
        for o in self.outputs:
            out.append(f"OutputDiff[{o.index}] ({o.name}): avg_error={o.mean_abs_error:.6g}, "
                       f"std_dev={o.std_abs_error:.6g}, max_error={o.max_abs_error:.6g}")
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


def inference_diff(model: Model | str | bytes, system: System, num_runs: int = 50, seed: int = 0,
                   progress: Callable[[int, int, str], None] | None = None) -> DiffReport:
    """Compare the system's delegated run of `model` with the reference interpreter over `num_runs` inputs."""
    if num_runs < 1:
        raise ValueError(f"num_runs must be >= 1, got {num_runs}")
    name = model if isinstance(model, str) else "<model>"
    ir = model if isinstance(model, Model) else load_model(model)
    reference = Interpreter(model=ir)
    reference.allocate_tensors()
    test, _ = build_interpreter(ir, system)
    rng = np.random.default_rng(seed)
    outputs = reference.get_output_details()
    per_run: list[list[float]] = [[] for _ in outputs]
    worst = [0.0 for _ in outputs]
    ref_times: list[float] = []
    test_times: list[float] = []
    for run in range(num_runs):
        inputs = [random_input(d, rng) for d in reference.get_input_details()]
        results = []
        for it, times in ((reference, ref_times), (test, test_times)):
            for d, x in zip(it.get_input_details(), inputs):
                it.set_tensor(d["index"], x)
            t0 = time.perf_counter()
            it.invoke()
            times.append((time.perf_counter() - t0) * 1e6)
            results.append([it.get_tensor(d["index"]).astype(np.float64) for d in outputs])
        for k, (r, t) in enumerate(zip(*results)):
            err = np.abs(t - r)
            per_run[k].append(float(err.mean()) if err.size else 0.0)
            worst[k] = max(worst[k], float(err.max()) if err.size else 0.0)
        if progress is not None:
            progress(run + 1, num_runs, "inference_diff runs")
    diffs = tuple(
        OutputDiff(k, d["name"], statistics.fmean(per_run[k]),
                   statistics.pstdev(per_run[k]) if len(per_run[k]) > 1 else 0.0, worst[k])
        for k, d in enumerate(outputs))
    return DiffReport(name, tuple(a.name for a in system.accelerators), num_runs, _avg_std(ref_times),
                      _avg_std(test_times), diffs)


def _avg_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.pstdev(values) if len(values) > 1 else 0.0)
