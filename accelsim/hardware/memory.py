"""Memory levels: where a device keeps weights and activations, and the bytes each node moves on each level.

A config lists its device's memories fastest first (`memory.levels`) and says where things
live: `memory.weights` is where weights are stored, `memory.cache` an optional faster level
that caches them, `memory.activations` where activations are read and written. Host memory,
reached over the link, is the place named "link" (for a shared-memory device the link is its
path to host DRAM); weights may live there, and it appears under that name in bytes per level.

Rules, node by node in model order:

- Activations: a node reads its non-constant inputs and writes its outputs (its working
  set) on the activations level. A bounded level that cannot hold the working set spills
  it to the next level below; a working set that fits no level makes the design infeasible
  (`accelsim.core.feasibility`), since nothing would hold it. When weights live on the
  activations level too, the level acts as a cache of the one below for each node: a node
  whose working set and weights fit runs from it, any other moves all its bytes on the
  first level below that holds them (a CPU's L2 in front of DRAM).
- Weights: with a cache, they are cached in model order, a whole layer at a time, until the
  next layer's weights do not fit; that layer and every later one are streamed: read from
  where the weights live on every inference. This is the Edge TPU compiler's split between
  "on-chip memory used for caching model parameters" and "off-chip memory used for streaming
  uncached model parameters". Without a cache every weight is streamed. When the cache is
  also the activations level, activations reserve their largest working set that fits it.
- Weights that live on a bounded level must fit it: all of a device's weights, plus the
  largest working set when activations share the level (`placed`). When they do not and a
  level below holds them all, they spill: the level becomes a cache of that level below,
  exactly as if the config said `weights: <below>, cache: <level>` (a config that already
  names another cache keeps it, and the level is then not used for weights at all). The
  layers that fit are kept in model order, a whole layer at a time, and loaded once; the
  rest are read from the level below on every inference, at its rate and energy. So weights
  on a level too small for them never cost less than the same weights placed honestly on the
  level below with this level as their cache (tests/accelsim/test_memory.py checks it as a
  property). This is also what a CPU's L2 does (a level holding weights and activations above
  DRAM): a model whose weights fit it runs from it node by node, a larger one reads what does
  not fit from DRAM on every inference. When no level below holds them, the design is
  infeasible (`memory`), with the two ways out named: stream them over the link
  (`weights: link` with this level as `cache`; streaming from the host is never chosen
  silently, it is the designer's call) or a larger level.
- Streamed weights are traffic on the level they come from, like any other byte: a node
  takes the longest of its compute time and, for each level, latency + bytes / bandwidth.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from accelsim.runtime.work import NodeWork

LINK = "link"


@dataclass(frozen=True)
class Level:
    """One memory level, in bytes/s, bytes, s, J per byte moved and W.

    `size` None is unbounded; `latency` is paid once by every node that moves bytes on it.
    """

    name: str
    bandwidth: float
    size: int | None = None
    latency: float = 0.0
    energy: float = 0.0  # joules per byte moved
    static_power: float = 0.0


@dataclass(frozen=True)
class Memory:
    """A device's levels (fastest first) and where weights live, are cached and where activations live.

    `weights` is a level name or LINK; `cache` a level name above it, or None.
    """

    levels: tuple[Level, ...]
    weights: str
    activations: str
    cache: str | None = None

    def level(self, name: str) -> Level:
        return next(lvl for lvl in self.levels if lvl.name == name)

    def below(self, name: str) -> Level | None:
        """The next level below `name`, or None for the last one."""
        names = [lvl.name for lvl in self.levels]
        i = names.index(name) + 1
        return self.levels[i] if i < len(self.levels) else None


@dataclass(frozen=True)
class Traffic:
    """Where one node's bytes go: (level, bytes) in the order levels are first used; weight bytes streamed."""

    level_bytes: tuple[tuple[str, int], ...]
    streamed: int = 0


def working_set(work: NodeWork) -> int:
    """Activation bytes a node reads and writes: its non-constant inputs and its outputs."""
    return work.input_bytes + work.output_bytes


def footprint(work: NodeWork, memory: Memory) -> int:
    """What must fit where the node's activations live: its working set, plus its weights when they live there too."""
    return working_set(work) + (work.weight_bytes if memory.weights == memory.activations else 0)


def _fits(level: Level, nbytes: int) -> bool:
    return level.size is None or nbytes <= level.size


def activation_levels(works: Sequence[NodeWork], memory: Memory,
                      refuse: Callable[[tuple, str], Exception]) -> list[Level]:
    """The level each node's working set lives on (the activations level, or below it when it spills).

    Args:
        refuse: builds the error for a key path and message (a ConfigError naming file:line).

    Raises:
        whatever `refuse` builds (accelsim.core.feasibility.memory_refusal: Infeasible): some working set fits no
        level from the activations level down.
    """
    out = []
    for i, work in enumerate(works):
        need = footprint(work, memory)
        level: Level | None = memory.level(memory.activations)
        while level is not None and not _fits(level, need):
            level = memory.below(level.name)
        if level is None:
            home = memory.level(memory.activations)
            below = "there is no level below it" if memory.below(home.name) is None else "no level below holds it"
            what = "activations and weights" if memory.weights == memory.activations else "activations"
            raise refuse(("memory", "activations"),
                         f"{work.op} (node {i} of this device, in model order) reads and writes {need} bytes of "
                         f"{what}, more than {home.name!r} holds ({home.size} bytes), and {below}; "
                         f"make {home.name!r} larger or add a larger level below it")
        out.append(level)
    return out


def _size(nbytes: int) -> str:
    """Bytes as a person reads them: '512 B', '62.50 KiB', '3.38 MiB'."""
    if nbytes < 2**10:
        return f"{nbytes} B"
    return f"{nbytes / 2**10:.2f} KiB" if nbytes < 2**20 else f"{nbytes / 2**20:.2f} MiB"


def placed(works: Sequence[NodeWork], memory: Memory, refuse: Callable[[tuple, str], Exception],
           device: str = "the device", has_link: bool = True) -> Memory:
    """Where a device's weights are read from: `memory` itself, or its spill (module docstring: the rule and why).

    A bounded weights level that cannot hold all the weights (plus the largest working set
    that fits it, when activations share it) hands them to the first level below that holds
    them all, and becomes their cache (unless the config names another cache).

    Raises:
        whatever `refuse` builds for key path memory.levels.<level>.size: no level below holds them.
    """
    if memory.weights == LINK:
        return memory
    level = memory.level(memory.weights)
    if level.size is None:
        return memory
    weights = sum(w.weight_bytes for w in works)
    shares = memory.weights == memory.activations
    below = memory.below(level.name)
    # Working sets that spill below need no room here (there is a level below to spill to).
    sets = [n for n in map(working_set, works) if below is None or n <= level.size]
    reserved = max(sets, default=0) if shares else 0
    if weights + reserved <= level.size:
        return memory
    while below is not None and not _fits(below, weights):
        below = memory.below(below.name)
    if below is not None:
        return Memory(memory.levels, below.name, memory.activations, memory.cache or level.name)
    also = f" plus {reserved} bytes of its largest activation working set" if reserved else ""
    lower = ("there is no level below it" if memory.below(level.name) is None
             else "no level below it holds them either")
    stream = (f"memory: {{weights: link, cache: {level.name}}} streams what does not fit over the link"
              if has_link else f"add a level below {level.name!r} to hold the weights")
    raise refuse(("memory", "levels", level.name, "size"),
                 f"{device}'s weights need {weights} bytes ({_size(weights)}){also} on {level.name!r}, which holds "
                 f"{level.size} bytes ({_size(level.size)}), and {lower}: the design cannot hold the model; "
                 f"{stream}, or make {level.name!r} at least {weights + reserved} bytes ({_size(weights + reserved)})")


def streamed_parameters(works: Sequence[NodeWork], cache_bytes: int | None) -> tuple[int, ...]:
    """Bytes of each node's weights that must be streamed every inference, given a cache (None: unbounded).

    The cache is filled in model order, a whole layer at a time, until the next layer's
    weights do not fit; that layer and every later one stream all their weights.
    """
    if cache_bytes is None:
        return (0,) * len(works)
    streamed = []
    free = cache_bytes
    full = False
    for work in works:
        if not full and work.weight_bytes <= free:
            free -= work.weight_bytes
            streamed.append(0)
        else:
            full = True
            streamed.append(work.weight_bytes)
    return tuple(streamed)


def weight_cache(works: Sequence[NodeWork], memory: Memory) -> int | None:
    """Bytes of the cache left for weights (None: unbounded; 0 without a cache), after activations' reservation."""
    if memory.cache is None:
        return 0
    level = memory.level(memory.cache)
    if level.size is None:
        return None
    if memory.cache != memory.activations:
        return level.size
    # Working sets that spill below do not need room here.
    return level.size - max((n for n in map(working_set, works) if n <= level.size), default=0)


def traffic(works: Sequence[NodeWork], memory: Memory, refuse: Callable[[tuple, str], Exception],
            device: str = "the device", has_link: bool = True) -> list[Traffic]:
    """Bytes per level of each of a device's nodes (in model order), by the rules in this module's docstring.

    Raises:
        whatever `refuse` builds: the weights or a working set do not fit (`placed`, `activation_levels`).
    """
    memory = placed(works, memory, refuse, device, has_link)
    homes = activation_levels(works, memory, refuse)
    streamed = streamed_parameters(works, weight_cache(works, memory))
    out = []
    for work, home, stream in zip(works, homes, streamed):
        moved: dict[str, int] = {}
        # weights living with the activations move where the node's activations went (spilled or not)
        source = home.name if memory.weights == memory.activations else memory.weights
        for name, nbytes in ((home.name, working_set(work)), (memory.cache, work.weight_bytes - stream),
                             (source, stream)):
            if nbytes:
                moved[name] = moved.get(name, 0) + nbytes
        out.append(Traffic(tuple(moved.items()), stream))
    return out


def spill_note(works: Sequence[NodeWork], memory: Memory, device: str) -> str | None:
    """A sentence saying that a device's weights spill below their level (`placed`), or None when they do not.

    Call it only on works `placed` accepts (a costed device).
    """
    def refuse(_path: tuple, message: str) -> Exception:
        return ValueError(message)

    spilled = placed(works, memory, refuse, device)
    if spilled.weights == memory.weights:
        return None
    level = memory.level(memory.weights)
    weights = sum(w.weight_bytes for w in works)
    beside = " beside the activations it also holds" if memory.weights == memory.activations else ""
    keeps = (f"the layers that fit {level.name!r} stay cached there" if spilled.cache == level.name
             else f"memory.cache {spilled.cache!r} caches what it can")
    return (f"{device}: its weights ({weights} bytes, {_size(weights)}) do not fit memory.levels.{level.name} "
            f"({level.size} bytes, {_size(level.size or 0)}){beside}: they spill to {spilled.weights!r}; {keeps} and "
            f"the rest are read from {spilled.weights!r} on every inference, at its rate and energy")
