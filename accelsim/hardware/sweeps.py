"""Design-space search: numeric sweep ranges, random sampling of the sweeps, and structured limits.

A sweep's values are a list, or a range:

```yaml
sweeps:
  edgetpu_usb.compute.rows: {from: 8, to: 256, step: 8}          # 8, 16, ..., 256
  edgetpu_usb.link.bandwidth: {from: 40 MB/s, to: 2 GB/s, log: true}  # random search: log-uniform
  edgetpu_usb.clock: {from: 250 MHz, to: 1 GHz, log: true, steps: 4}  # a grid: 4 values, geometric
search: {strategy: random, samples: 1000, seed: 7}                 # default: {strategy: grid}
limits: {peak_macs_per_cycle: {max: 8192}, onchip_bytes: {max: 16 MiB}}
```

A range's ends are plain numbers or quantities of one kind (sizes, rates, frequencies, times,
energies, powers, energies per byte) in any of that kind's units; its values are written in the
unit of `from`. A grid needs `step`, or `steps` (a count, spaced evenly or, with `log`,
geometrically); a random search draws from a range without them continuously (uniformly, or
log-uniformly with `log`), whole numbers when both ends are whole numbers.

`random` draws `samples` combinations of the sweep values with the seed (default 0); every
variant runs each combination of the keys that apply to it once.

Limits drop design points before they run, by accelerator (the host is not limited): a point
runs only if every accelerator of it is within every limit. The vocabulary is fixed (LIMITS); no
expression from a file is ever evaluated.
"""

from __future__ import annotations

import difflib
import importlib.util
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelsim.core import units
from accelsim.core.record import NUMERIC_COLUMNS
from accelsim.hardware.config import System
from accelsim.hardware.types import Hardware
from accelsim.runtime.work import Gemm, NodeWork

STRATEGIES = ("grid", "random")
# Optuna's samplers by name (accelsim.experiments.search makes them); grid is the plain sweep.
SAMPLERS = ("grid", "random", "tpe", "nsga2", "gp")
_SEARCH_KEYS = ("strategy", "samples", "seed", "sampler", "budget", "objectives")
# What a search may minimise: every numeric results column but the speed-up (higher is better, and known only once
# the CPU-only baseline has run).
SEARCH_OBJECTIVES = tuple(c for c in NUMERIC_COLUMNS if c != "speedup")
_RANGE_KEYS = ("from", "to", "step", "steps", "log")
_BOUND_KEYS = ("min", "max")
# Quantity kinds a range end may be, with their parsers (each returns SI base units).
_KINDS: tuple[tuple[str, Callable[[Any], float]], ...] = (
    ("size", units.parse_size), ("rate", units.parse_rate), ("frequency", units.parse_frequency),
    ("time", units.parse_time), ("energy", units.parse_energy), ("power", units.parse_power),
    ("energy per byte", units.parse_energy_per_byte))


def did_you_mean(key: Any, choices: Sequence[str]) -> str:
    """'unknown key; did you mean X?' or the list of valid keys."""
    close = difflib.get_close_matches(str(key), choices, n=1)
    return "unknown key; " + (f"did you mean {close[0]!r}?" if close else f"expected one of {', '.join(choices)}")


@dataclass(frozen=True)
class Search:
    strategy: str = "grid"
    samples: int = 0
    seed: int = 0
    # An Optuna search (accelsim.experiments.search): its sampler, trials per model and variant, and the results
    # columns it minimises. "grid" is the plain sweep.
    sampler: str = "grid"
    budget: int = 0
    objectives: tuple[str, ...] = ()

    @property
    def optimises(self) -> bool:
        """Whether an Optuna sampler chooses the points (else every combination, or the seeded random draws)."""
        return self.sampler != "grid"


@dataclass(frozen=True, kw_only=True)
class Range:
    """A numeric sweep range; values are written in the unit of `from` (or are plain numbers)."""

    start: float  # SI base units
    stop: float
    step: float | None = None
    steps: int | None = None
    log: bool = False
    unit: str = ""  # the unit of `from` as written ("" for plain numbers)
    factor: float = 1.0  # base units per `unit`
    kind: str = "number"
    whole: bool = False  # both ends are whole numbers without unit: values are ints

    def count(self) -> int:
        """How many values grid() gives, without making them."""
        if self.step is not None:
            return math.floor((self.stop - self.start) / self.step * (1 + 1e-12)) + 1
        return int(self.steps or 0)

    def grid(self) -> tuple[Any, ...]:
        """Every value of the range, in order."""
        if self.step is not None:
            count = self.count()
            base = self.start + self.step * np.arange(count)
        elif self.log:
            base = np.geomspace(self.start, self.stop, self.steps)
        else:
            base = np.linspace(self.start, self.stop, self.steps)
        return tuple(self._written(v) for v in base)

    def probes(self) -> tuple[Any, ...]:
        """The values a config must accept: the grid, or the two ends of a continuous range."""
        if self.step is not None or self.steps is not None:
            return self.grid()
        return (self._written(self.start), self._written(self.stop))

    def sample(self, rng: np.random.Generator, n: int) -> list[Any]:
        """`n` values drawn from the range (from its grid when it has one)."""
        if self.step is not None or self.steps is not None:
            grid = self.grid()
            return [grid[i] for i in rng.integers(0, len(grid), n)]
        if self.log:
            base = np.exp(rng.uniform(math.log(self.start), math.log(self.stop), n))
        else:
            base = rng.uniform(self.start, self.stop, n)
        return [self._written(v) for v in base]

    def written(self, value: float) -> Any:
        """A value of the range (SI base units) as the file writes them: in the unit of `from`, sizes in whole bytes."""
        return self._written(value)

    def _written(self, value: float) -> Any:
        if self.whole:
            return int(round(value))
        if self.kind == "number":
            return float(f"{value:.6g}")
        if self.kind == "size":  # sizes are whole bytes
            exact = round(value)
            in_unit = exact / self.factor
            return f"{in_unit:g} {self.unit}" if in_unit == float(f"{in_unit:.6g}") else f"{exact} B"
        return f"{value / self.factor:.6g} {self.unit}"


# The SI base unit of each quantity kind, as tidy result columns name it.
BASE_UNITS = {"size": "B", "rate": "B/s", "frequency": "Hz", "time": "s", "energy": "J", "power": "W",
              "energy per byte": "J/B"}


def si_value(value: Any) -> tuple[float, str] | None:
    """A sweep value in SI base units with its base unit ('' for a plain number): '40 MB/s' -> (4e7, 'B/s').

    Returns:
        None when the value is not a number or a quantity (e.g. a schedule name).
    """
    parsed = _quantity(value)
    if parsed is None:
        return None
    base, kind, _, _ = parsed
    return base, BASE_UNITS.get(kind, "")


def parse_range(value: Mapping, path: tuple, error: Callable[[tuple, str], None], random: bool) -> Range | None:
    """A sweep range from its mapping; problems go to `error(path, message)`."""
    ok = True
    for key in value:
        if key not in _RANGE_KEYS:
            error((*path, key), did_you_mean(key, _RANGE_KEYS))
            ok = False
    if "from" not in value or "to" not in value:
        error(path, "a range needs from and to, e.g. {from: 8, to: 256, step: 8}")
        return None
    ends = [_quantity(value[k]) for k in ("from", "to")]
    for k, parsed in zip(("from", "to"), ends):
        if parsed is None:
            error((*path, k), f"expected a number or a quantity like 40 MB/s, got {value[k]!r}")
            ok = False
    if not ok:
        return None
    (start, kind, unit, factor), (stop, stop_kind, _, _) = ends
    if kind != stop_kind:
        error(path, f"from is a {kind} and to is a {stop_kind}; both ends must be of one kind")
        return None
    if not start < stop:
        error(path, f"from must be below to, got {value['from']!r} and {value['to']!r}")
        return None
    log = value.get("log", False)
    if not isinstance(log, bool):
        error((*path, "log"), f"expected true or false, got {log!r}")
        return None
    if log and start <= 0:
        error((*path, "from"), "a log range must start above zero")
        return None
    step = steps = None
    if "step" in value:
        parsed = _quantity(value["step"])
        if parsed is None or parsed[1] != kind or parsed[0] <= 0 or log:
            why = "step and log: true do not go together; use steps" if log else \
                f"expected a {kind} above zero, like from and to"
            error((*path, "step"), f"{why}, got {value['step']!r}")
            return None
        step = parsed[0]
    if "steps" in value:
        steps = value["steps"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 2 or step is not None:
            error((*path, "steps"), f"expected a count >= 2 (and no step), got {steps!r}")
            return None
    if step is None and steps is None and not random:
        error(path, "a grid needs step (or steps: N, with log: true for geometric spacing); without them a "
                    "range can only be sampled: search: {strategy: random, samples: N}")
        return None
    whole = kind == "number" and all(isinstance(value[k], int) for k in ("from", "to")) and \
        (step is None or float(step).is_integer())
    return Range(start=start, stop=stop, step=step, steps=steps, log=log, unit=unit, factor=factor, kind=kind,
                 whole=whole)


def _quantity(value: Any) -> tuple[float, str, str, float] | None:
    """(base-unit value, kind, unit as written, base units per unit) of a range end, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return (float(value), "number", "", 1.0) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    for kind, parse in _KINDS:
        try:
            base = parse(value)
        except ValueError:
            continue
        unit = value.strip().lstrip("+-0123456789.eE").strip()
        return base, kind, unit, parse(f"1 {unit}")
    return None


def parse_search(value: Any, path: tuple, error: Callable[[tuple, str], None]) -> Search:
    """The `search` section: {strategy: grid | random, samples: N, seed: S}."""
    if not isinstance(value, dict):
        error(path, f"expected {{strategy: random, samples: N, seed: S}} or {{strategy: grid}}, got {value!r}")
        return Search()
    for key in value:
        if key not in _SEARCH_KEYS:
            error((*path, key), did_you_mean(key, _SEARCH_KEYS))
    if "sampler" in value or "budget" in value or "objectives" in value:
        return _parse_sampler(value, path, error)
    strategy = value.get("strategy", "grid")
    if strategy not in STRATEGIES:
        close = difflib.get_close_matches(str(strategy), STRATEGIES, n=1)
        error((*path, "strategy"), f"expected one of {', '.join(STRATEGIES)}, got {strategy!r}"
              + (f"; did you mean {close[0]!r}?" if close else ""))
        return Search()
    samples, seed = value.get("samples"), value.get("seed", 0)
    if strategy == "grid":
        if "samples" in value:
            error((*path, "samples"), "a grid runs every combination; samples goes with strategy: random")
        return Search()
    if "samples" not in value:
        error(path, "a random search needs samples: N, the number of points to draw")
        samples = 1
    elif isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        error((*path, "samples"), f"expected a whole number >= 1 of points to draw, got {samples!r}")
        samples = 1
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        error((*path, "seed"), f"expected a whole number >= 0, got {seed!r}")
        seed = 0
    return Search("random", samples, seed)


def _parse_sampler(value: dict, path: tuple, error: Callable[[tuple, str], None]) -> Search:
    """An Optuna search: {sampler: random | tpe | nsga2 | gp, budget: N, seed: S, objectives: [column, ...]}."""
    for key in ("strategy", "samples"):
        if key in value:
            error((*path, key), f"{key} belongs to the seeded random draw; with sampler: give budget: N instead")
    sampler = value.get("sampler", "tpe")
    if sampler not in SAMPLERS:
        close = difflib.get_close_matches(str(sampler), SAMPLERS, n=1)
        error((*path, "sampler"), f"expected one of {', '.join(SAMPLERS)}, got {sampler!r}"
              + (f"; did you mean {close[0]!r}?" if close else ""))
        return Search()
    if sampler == "gp" and importlib.util.find_spec("torch") is None:  # Optuna's GPSampler models with PyTorch
        error((*path, "sampler"), "gp needs PyTorch, which is not installed (pip install torch); tpe, nsga2 and "
              "random need nothing more")
    budget, seed = value.get("budget"), value.get("seed", 0)
    if sampler == "grid":
        for key in ("budget", "objectives"):
            if key in value:
                error((*path, key), "a grid runs every combination; budget and objectives go with an Optuna sampler "
                      f"({', '.join(SAMPLERS[1:])})")
        return Search()
    if budget is None:
        error(path, "a search needs budget: N, the trials to run (per model and variant)")
        budget = 1
    elif isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        error((*path, "budget"), f"expected a whole number >= 1 of trials, got {budget!r}")
        budget = 1
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        error((*path, "seed"), f"expected a whole number >= 0, got {seed!r}")
        seed = 0
    objectives = value.get("objectives", ["latency_us"])
    objectives = [objectives] if isinstance(objectives, str) else objectives
    if not isinstance(objectives, list) or not objectives:
        error((*path, "objectives"), f"expected a list of results columns to minimise such as [latency_us, "
              f"energy_uj], got {objectives!r}")
        objectives = ["latency_us"]
    for k, name in enumerate(objectives):
        if name not in SEARCH_OBJECTIVES:
            close = difflib.get_close_matches(str(name), SEARCH_OBJECTIVES, n=1)
            error((*path, "objectives", k), f"{name!r} is not a numeric results column to minimise; expected one of "
                  f"{', '.join(SEARCH_OBJECTIVES)}" + (f"; did you mean {close[0]!r}?" if close else ""))
    if len(set(map(str, objectives))) != len(objectives):
        error((*path, "objectives"), f"an objective is listed twice: {objectives!r}")
    return Search(seed=seed, sampler=sampler, budget=budget, objectives=tuple(str(o) for o in objectives))


def sampled_combinations(sweeps: Sequence[tuple[str, Any]], search: Search) -> list[dict[str, Any]]:
    """`search.samples` seeded draws of one value per sweep key (lists uniformly, ranges as Range.sample)."""
    rng = np.random.default_rng(search.seed)
    columns = {}
    for key, values in sweeps:  # one draw per key for all samples: no loop over points
        if isinstance(values, Range):
            columns[key] = values.sample(rng, search.samples)
        else:
            columns[key] = [values[i] for i in rng.integers(0, len(values), search.samples)]
    return [{k: columns[k][i] for k, _ in sweeps} for i in range(search.samples)]


# -- limits -----------------------------------------------------------------------------------


def peak_macs_per_cycle(hw: Hardware) -> float:
    """The device's peak MACs per cycle on an int8 GEMM (its kind's own rule; 0 when the kind has none)."""
    rule = hw.kind_record.peak_macs_per_cycle
    if rule is None:
        return 0.0
    gemm = NodeWork("FULLY_CONNECTED", "int8", macs=1, kind="gemm", gemm=Gemm(1, 1, 1))
    return float(rule(gemm, hw))


def onchip_bytes(hw: Hardware) -> float:
    """The bytes of the device's memory levels that have a size (unsized levels, such as DRAM, are off chip)."""
    return float(sum(level.size for level in hw.memory.levels if level.size is not None))


# The limit vocabulary: name -> (what it measures of an accelerator, how a bound is written).
LIMITS: dict[str, tuple[Callable[[Hardware], float], Callable[[Any], float]]] = {
    "peak_macs_per_cycle": (peak_macs_per_cycle, units.parse_number),
    "onchip_bytes": (onchip_bytes, units.parse_size),
}


_LIMIT_UNITS = {"peak_macs_per_cycle": "MACs per cycle", "onchip_bytes": "bytes"}


@dataclass(frozen=True)
class Limit:
    name: str
    low: float | None = None
    high: float | None = None

    def allows(self, system: System) -> bool:
        return self.refusal(system) is None

    def refusal(self, system: System) -> str | None:
        """Which accelerator of `system` breaks this limit and by how much (one line), or None when all keep it."""
        measure = LIMITS[self.name][0]
        for accel in system.accelerators:
            value = measure(accel.hardware)
            if self.low is not None and value < self.low:
                return self._line(accel.name, value, "below the min", self.low)
            if self.high is not None and value > self.high:
                return self._line(accel.name, value, "above the max", self.high)
        return None

    def _line(self, accelerator: str, value: float, side: str, bound: float) -> str:
        def shown(number: float) -> str:
            text = f"{number:,.0f}" if float(number).is_integer() else f"{number:,.6g}"
            return f"{text} {_LIMIT_UNITS[self.name]}"

        return f"limits.{self.name}: {accelerator} has {shown(value)}, {side} {shown(bound)}"


def parse_limits(value: Any, path: tuple, error: Callable[[tuple, str], None]) -> tuple[Limit, ...]:
    """The `limits` section: {name: {min: X, max: Y}} with names from LIMITS."""
    if not isinstance(value, dict):
        error(path, f"expected a mapping like {{peak_macs_per_cycle: {{max: 8192}}}}, got {value!r}")
        return ()
    out = []
    for name, bounds in value.items():
        if name not in LIMITS:
            error((*path, name), did_you_mean(name, tuple(LIMITS)))
            continue
        if not isinstance(bounds, dict) or not bounds:
            error((*path, name), f"expected {{min: X}}, {{max: Y}} or both, got {bounds!r}")
            continue
        parsed: dict[str, float] = {}
        for key, bound in bounds.items():
            if key not in _BOUND_KEYS:
                error((*path, name, key), did_you_mean(key, _BOUND_KEYS))
                continue
            try:
                parsed[key] = LIMITS[name][1](bound)
            except ValueError as exc:
                error((*path, name, key), str(exc))
        if "min" in parsed and "max" in parsed and parsed["min"] > parsed["max"]:
            error((*path, name), f"min {bounds['min']!r} is above max {bounds['max']!r}")
            continue
        if parsed:
            out.append(Limit(str(name), parsed.get("min"), parsed.get("max")))
    return tuple(out)
