"""What the calibration benchmarks share: row marks, error measures and a fit of named config values.

A published or measured table's row is `fit` when it informed a number in a shipped YAML (the
YAML's comment for that number names it), `shaped` when it informed no fitted number but shaped a
mechanism or a rule of the cost model (it was looked at while the mechanism was chosen, or it is
the same graph as a fit row), `held-out` when it never informed anything, or `retired` when it is
outside the config's goal (printed with its reason, counted in no error). Only held-out rows say
how well a config predicts a model it was not tuned to, so each table's headline error is computed
over them alone, with the shaped and fit rows' errors printed beside it; a table without a held-out
row says so instead of a headline. Rows may name their graph (an architecture: MobileNet v1 at
every width and resolution is one graph): the geometric-mean error then counts each graph once
(its rows' mean |ln r|), so twelve variants of one network do not outvote the rest. "Worst" is
max(r, 1/r) over the rows: an under-prediction of 0.5 is as far off as an over-prediction of 2.
`fit` chooses values by a descent on the YAML's own rounding grid, from the YAML's values, over the
fit rows alone; it is a fixed point, so a test that reruns it from the shipped values sees whether
the YAML holds it. The fit rows' models are committed as
summaries (`summary_model`: the graph with its weights zeroed, xz-compressed), so a refit needs no
TensorFlow and no model cache.
"""

from __future__ import annotations

import dataclasses
import lzma
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from accelsim.runtime.ir import Model
from accelsim.runtime.read import load_model
from accelsim.runtime.write import save_model

FIT, SHAPED, HELD_OUT, RETIRED = "fit", "shaped", "held-out", "retired"

# Multiplicative steps tried on each value in turn, coarse to fine; then one unit of its grid.
STEPS = (2.0, 1.4, 1.15, 1.05, 1.02)
# The rounding the YAMLs state for a fitted number that is not a whole count: 4 significant digits.
DIGITS = 4
# A move is taken only when it lowers the misfit by more than this share of it: smaller gains are far below
# what the published tables resolve (times given to 2-3 digits), and chasing them along a flat valley of
# nearly equivalent values costs thousands of simulations.
TOLERANCE = 1e-3


def geomean_error(ratios: Sequence[float]) -> float:
    """exp(mean |ln r|) - 1: the typical factor by which ours and the reference differ."""
    return math.exp(sum(abs(math.log(r)) for r in ratios) / len(ratios)) - 1


def worst_factor(ratios: Sequence[float]) -> float:
    """max(r, 1/r) over the rows: the factor by which the worst row is off, either way (0.5 and 2 both give 2)."""
    return max(max(r, 1 / r) for r in ratios)


def worst_error(ratios: Sequence[float]) -> float:
    """worst_factor - 1: how far the worst row is from the reference (0.8 is 25% off, like 1.25)."""
    return worst_factor(ratios) - 1


def worst_ratio(ratios: Sequence[float]) -> float:
    """The ratio furthest from 1 either way (0.6 is further than 1.5), as printed."""
    return max(ratios, key=lambda r: abs(math.log(r)))


def graph_geomean_error(ratios: Sequence[float], graphs: Sequence[str]) -> float:
    """geomean_error with each graph counted once: exp(mean over graphs of the mean |ln r| of its rows) - 1."""
    logs: dict[str, list[float]] = {}
    for r, g in zip(ratios, graphs, strict=True):
        logs.setdefault(g, []).append(abs(math.log(r)))
    return math.exp(sum(sum(v) / len(v) for v in logs.values()) / len(logs)) - 1


def misfit(ratios: Sequence[float]) -> float:
    """Mean squared log ratio: what `fit` minimises."""
    return sum(math.log(r) ** 2 for r in ratios) / len(ratios)


def error_lines(name: str, rows: Sequence[tuple]) -> list[str]:
    """The headline (held-out rows), then the shaped and the fit rows' error, of one table column.

    Args:
        name: what the ratios compare, e.g. "edgetpu_usb / Coral".
        rows: (FIT, SHAPED, HELD_OUT or RETIRED, ours / reference[, graph]) per row; retired rows count in none.
            With a graph name, the geometric mean counts each graph once and the line says how many graphs.
    """
    out = []
    for label in (HELD_OUT, SHAPED, FIT):
        chosen = [row for row in rows if row[0] == label]
        ratios = [row[1] for row in chosen]
        if ratios:
            graphs = [row[2] if len(row) > 2 else f"row {i}" for i, row in enumerate(chosen)]
            n = len(set(graphs))
            count = len(ratios) if n == len(ratios) else f"{len(ratios)}, {n} graph{'s' if n > 1 else ''}"
            each = "" if n == len(ratios) else " (each graph once)"
            out.append(f"{name}: {label} rows ({count}): geometric-mean error "
                       f"{graph_geomean_error(ratios, graphs) * 100:.0f}%{each}, "
                       f"worst {worst_error(ratios) * 100:.0f}% (ratio {worst_ratio(ratios):.2f})")
        elif label == HELD_OUT:
            out.append(f"{name}: no held-out row: every row informed a number or shaped a mechanism, so none is an "
                       "independent check")
    return out


def on_grid(value: float, whole: bool = False) -> float:
    """`value` as the YAML states it: a whole number (at least 1) for a count, else DIGITS significant digits."""
    return max(1, round(value)) if whole else float(f"{value:.{DIGITS}g}")


def grid_unit(value: float, whole: bool = False) -> float:
    """One step of the grid at `value`: 1 for a count, else one unit in the last stated digit."""
    return 1 if whole else 10.0 ** (math.floor(math.log10(abs(value))) - DIGITS + 1)


def fit(ratios_of: Callable[[Mapping[str, float]], Sequence[float]], start: Mapping[str, float],
        integers: frozenset[str] = frozenset(), upper: Mapping[str, float] | None = None,
        lower: Mapping[str, float] | None = None) -> dict[str, float]:
    """The values (key path -> number) on the YAML's grid, from `start`, where no step lowers `misfit(ratios_of(..))`.

    A descent on the grid (`on_grid`): `start` rounded to it, then each value in turn is multiplied or
    divided by each of `STEPS`, coarse to fine, and last moved by one grid unit, repeating a move while it
    lowers the misfit by more than TOLERANCE of it (of the two directions, the lower; up on a tie);
    passes over all values repeat until one changes nothing. So the result is a fixed point: a fit
    started from it returns it unchanged, and a YAML that holds the fit is one whose values come back.
    Keys in `integers` stay whole numbers (config counts); a key in `lower` / `upper` stays within its
    bound (a fraction stays <= 1).
    """
    upper, lower = upper or {}, lower or {}

    def placed(key: str, value: float) -> float:
        value = min(max(value, lower.get(key, value)), upper.get(key, value))
        return on_grid(value, key in integers)

    best = {k: placed(k, v) for k, v in start.items()}
    error = misfit(ratios_of(best))
    changed = True
    while changed:
        changed = False
        for key in best:
            whole = key in integers
            moves: list[Callable[[float, int], float]] = [
                lambda v, sign, step=step: v * step ** sign for step in STEPS]
            moves.append(lambda v, sign, whole=whole: v + sign * grid_unit(v, whole))
            for move in moves:
                while True:
                    trials = []
                    for sign in (1, -1):
                        value = placed(key, move(best[key], sign))
                        if value != best[key] and value > 0:
                            trial = {**best, key: value}
                            trials.append((misfit(ratios_of(trial)), -sign, trial))
                    if not trials:
                        break
                    trial_error, _, trial = min(trials, key=lambda t: t[:2])
                    if trial_error >= error * (1 - TOLERANCE):
                        break
                    best, error, changed = trial, trial_error, True
    return best


def summary_model(model: Model) -> Model:
    """`model` with what a cost-only simulation does not read made constant: buffers over 64 bytes (weights,
    biases) zeroed, per-channel scales and zero points set to their first value. Shapes, types, the graph and
    small constants (shapes, paddings, permutations) stay, so it simulates as `model` and compresses to little."""
    def constant_quantization(tensor):
        q = tensor.quantization
        if q is None or not q.scales:
            return tensor
        q = dataclasses.replace(q, scales=(q.scales[0],) * len(q.scales), min=(), max=(),
                                zero_points=(q.zero_points[0],) * len(q.zero_points) if q.zero_points else ())
        return dataclasses.replace(tensor, quantization=q)

    subgraphs = tuple(dataclasses.replace(sg, tensors=tuple(map(constant_quantization, sg.tensors)))
                      for sg in model.subgraphs)
    buffers = tuple(b if len(b) <= 64 else bytes(len(b)) for b in model.buffers)
    return dataclasses.replace(model, subgraphs=subgraphs, buffers=buffers)


def write_summary(model_path: Path, out: Path, latencies: Callable[[Model], Iterable[float]], script: str) -> str:
    """Write `model_path`'s summary, xz-compressed, to `out`, after checking it simulates exactly as the model.

    Args:
        latencies: the simulated latencies a fit reads for one model (one per system it runs on).
        script: the benchmark's name, for the message.

    Raises:
        SystemExit: the summary simulates differently from its model.
    """
    full = load_model(str(model_path))
    data = save_model(summary_model(full))
    ours, theirs = list(latencies(load_model(data))), list(latencies(full))
    if ours != theirs:
        raise SystemExit(f"{script} --summarize: {model_path.name}'s summary simulates "
                         f"{', '.join(f'{x * 1e3:.3f}' for x in ours)} ms, its model "
                         f"{', '.join(f'{x * 1e3:.3f}' for x in theirs)} ms")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(lzma.compress(data, preset=9))
    return f"wrote {out.name} ({out.stat().st_size} bytes)"


def read_summary(path: Path, script: str) -> Model:
    """A committed fit-row summary.

    Raises:
        SystemExit: the summary is missing (the message says how to write it).
    """
    if not path.is_file():
        raise SystemExit(f"{script} --fit: the fit row summary {path} is missing; write it with "
                         f"python benchmarks/{script}.py --summarize (needs the model cache)")
    return load_model(lzma.decompress(path.read_bytes()))
