"""`accelsim validate`: what checking one file (a hardware config or an experiment) finds, line by line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from accelsim.core.units import counted
from accelsim.experiments.experiment import load_experiment
from accelsim.experiments.points import point_count
from accelsim.hardware.assumptions import assumptions
from accelsim.hardware.config import load_devices
from accelsim.hardware.config_yaml import read_document
from accelsim.insight.advice import infeasible_variants


def is_experiment(path: str | Path) -> bool:
    """Whether the YAML at `path` is an experiment (it has variants or models), not a hardware config."""
    doc, _ = read_document(path)
    return doc is not None and isinstance(doc.data, dict) and ("variants" in doc.data or "models" in doc.data)


def point_line(experiment) -> str:
    """'design points: N' (counted, not made), and whether `run` accepts that many."""
    count, limit = point_count(experiment), experiment.max_points
    if count <= limit:
        return f"design points: {count:,} (run accepts up to {limit:,})"
    return (f"design points: {count:,}, above the limit of {limit:,}: run refuses them unless told more "
            f"(`accelsim run --max-points {count}` or `limits: {{points: {count}}}`)")


def validation_lines(path: str | Path) -> Iterator[str]:
    """The lines `validate` prints for a good file: 'ok' with what it is, then each config's notes, the defaults
    it leaves to the schema ('assumed:') and, for an experiment, variants that cannot hold its models
    ('infeasible:'). Lines come as they are found, so what precedes an error is still shown.

    Raises:
        ConfigError: every problem of the file (an experiment's also checks that every custom op has a kernel).
    """
    if is_experiment(path):
        e = load_experiment(path, check_kernels=True)
        yield f"{path}: ok (experiment {e.name!r}, {counted(len(e.variants), 'variant')})"
        yield f"  {point_line(e)}"
        configs = dict.fromkeys([e.host, *(a for v in e.variants for a in v.accelerators)])
        for config in (d for c in configs for d in load_devices(c)):  # an NNAPI config brings its drivers
            yield from (f"  note: {config.source}: {note}" for note in config.hardware.notes())
        yield from (f"  infeasible: {line}" for line in infeasible_variants(e))
    else:
        devices = load_devices(path)
        nnapi = len(devices) != 1 or devices[0].source != str(path)
        if nnapi:
            yield f"{path}: ok (nnapi config, drivers {', '.join(d.name for d in devices) or 'none'})"
        for c in devices:
            who = f"{c.name}: " if nnapi else ""
            if not nnapi:
                yield f"{path}: ok ({c.hardware.kind} config {c.name!r})"
            yield from (f"  note: {who}{note}" for note in c.hardware.notes())
            # the notes are printed above
            yield from (f"  assumed: {who}{a.key} = {a.value} ({a.source})" for a in assumptions(c, with_notes=False))
