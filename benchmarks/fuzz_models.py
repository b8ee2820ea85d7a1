"""Fuzz `load_model` (and optionally the interpreter) with mutated fixture models; print the counts.

Every case takes one fixture model (tests/fixtures/models/*.tflite) and damages it where its
structure is: bit flips inside tables and vtables, truncation at object boundaries, random vtable
entries, huge vector lengths, wild offsets, out-of-range indices and shapes, spliced copies of one
object over another (shared offsets). The only outcomes allowed are a loaded model or ModelError;
with --invoke, a loaded model must also construct, allocate and invoke or raise an AccelsimError.
Anything else is a crash: it is printed with the case number, which `--case N` replays.

Usage:
    python benchmarks/fuzz_models.py [--cases N] [--seed S] [--invoke] [--only NAME ...] [--case N]
    python benchmarks/fuzz_models.py --atheris [--cases N]   # coverage-guided, needs `pip install atheris`

Prints: cases run, loaded, refused, crashes, distinct error messages (exact, and with numbers
masked), the commonest messages, the slowest case and the peak memory (max RSS) of the process.
The address space is capped at start-up size + 4 GiB, so a kernel that would blow up memory raises
MemoryError instead; such cases are listed as MEMORY BLOW-UP with the node that asked.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "models"
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.runtime.errors import AccelsimError, ModelError  # noqa: E402
from accelsim.runtime.interpreter import Interpreter  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.runtime.verify import layout  # noqa: E402

# Models whose tensors need more than this are loaded but not invoked (invoke time stays bounded).
MAX_INVOKE_BYTES = 64 << 20
# A WHILE whose condition never turns false runs forever in TFLite too; such a run is stopped here.
INVOKE_SECONDS = 2.0
# Address space allowed beyond what the process uses at start: a kernel that asks for more gets MemoryError.
MEMORY_HEADROOM = 4 << 30

# Fields that hold indices: into tensors, buffers, opcodes or subgraphs.
_INDEX_FIELDS = ("Operator.inputs", "Operator.outputs", "Operator.intermediates", "SubGraph.inputs",
                 "SubGraph.outputs", "Tensor.buffer", "Operator.opcode_index", "subgraph_index",
                 "Metadata.buffer", "TensorMap.tensor_index", "Tensor.type", "OperatorCode.builtin_code",
                 "OperatorCode.deprecated_builtin_code", "OperatorCode.version", "builtin_options_type",
                 "QuantizationParameters.quantized_dimension")


class Corpus:
    """The fixture models, each with the regions of its FlatBuffer grouped by kind."""

    def __init__(self, paths):
        self.models = []
        for path in paths:
            data = path.read_bytes()
            regions = layout(data)
            by_kind = collections.defaultdict(list)
            for r in regions:
                by_kind[r.kind].append(r)
            by_kind["index"] = [r for r in regions if r.kind in ("scalar", "vector")
                                and any(r.name.endswith(f) for f in _INDEX_FIELDS)]
            by_kind["shape"] = [r for r in regions if r.kind == "vector" and r.name.endswith(("Tensor.shape",
                                                                                            "shape_signature"))]
            # Vector bodies of weights are data, not structure: flipping them only changes numbers.
            by_kind["structure"] = [r for r in regions if r.kind != "vector" or r.size <= 64]
            self.models.append((path.stem, data, by_kind))


def _put(buf: bytearray, pos: int, fmt: str, value: int) -> None:
    size = struct.calcsize(fmt)
    if 0 <= pos and pos + size <= len(buf):
        struct.pack_into(fmt, buf, pos, value & ((1 << (8 * size)) - 1) if fmt[-1].isupper() else value)


def _pick(rng: random.Random, by_kind, kind: str):
    regions = by_kind.get(kind) or by_kind["structure"]
    return rng.choice(regions)


def _u32_special(rng: random.Random, size: int, old: int) -> int:
    return rng.choice([0, 1, 2, 4, old + 1, old + 4, old - 4, old * 2, size, size // 4 + 1, 0x7FFFFFFF,
                       0x80000000, 0xFFFFFFFF, rng.getrandbits(32), rng.getrandbits(16)])


def flip(rng, buf, by_kind):
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.75:
            r = _pick(rng, by_kind, "structure")
            pos = r.pos + rng.randrange(max(r.size, 1))
        else:
            pos = rng.randrange(len(buf))
        if pos < len(buf):
            buf[pos] ^= 1 << rng.randrange(8)
    return buf


def truncate(rng, buf, by_kind):
    r = _pick(rng, by_kind, rng.choice(["table", "vtable", "vector", "string", "offset"]))
    cut = r.pos + rng.choice([0, 1, 2, 3, 4, r.size - 1, r.size, rng.randrange(max(r.size, 1))])
    return buf[: max(0, min(cut, len(buf) - 1))]


def vtable_entry(rng, buf, by_kind):
    r = _pick(rng, by_kind, "vtable")
    entry = r.pos + 2 * rng.randrange(max(r.size // 2, 1))
    _put(buf, entry, "<H", rng.choice([0, 1, 2, 3, 4, r.size, r.size + 2, 0xFFFF, 0x8000, rng.getrandbits(16),
                                       rng.getrandbits(6)]))
    return buf


def vector_length(rng, buf, by_kind):
    r = _pick(rng, by_kind, rng.choice(["vector", "string"]))
    old = struct.unpack_from("<I", buf, r.pos)[0]
    _put(buf, r.pos, "<I", _u32_special(rng, len(buf), old))
    return buf


def offset(rng, buf, by_kind):
    r = _pick(rng, by_kind, "offset")
    old = struct.unpack_from("<I", buf, r.pos)[0]
    _put(buf, r.pos, "<I", _u32_special(rng, len(buf) - r.pos, old))
    return buf


def soffset(rng, buf, by_kind):
    r = _pick(rng, by_kind, "table")
    old = struct.unpack_from("<i", buf, r.pos)[0]
    _put(buf, r.pos, "<i", rng.choice([0, 1, -1, 2, old + 2, old - 2, -old, r.pos, -len(buf), 2**31 - 1, -(2**31),
                                       rng.randrange(-(2**31), 2**31)]))
    return buf


def scalar(rng, buf, by_kind):
    r = _pick(rng, by_kind, "scalar")
    for i in range(r.size):
        buf[r.pos + i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.getrandbits(8)])
    return buf


def _element(rng, r):
    """A 4-byte element of an int vector region (past its length), or the scalar itself."""
    if r.kind == "vector" and r.size > 4:
        return r.pos + 4 + 4 * rng.randrange((r.size - 4) // 4)
    return r.pos


def index(rng, buf, by_kind):
    r = _pick(rng, by_kind, "index")
    value = rng.choice([-2, -1, 0, 1, 5, 127, 128, 255, 1000, 2**16, 2**31 - 1, -(2**31), rng.getrandbits(8)])
    if r.kind == "scalar" and r.size < 4:
        limit = 2 ** (8 * r.size - 1)
        _put(buf, r.pos, {1: "<b", 2: "<h"}[r.size], max(-limit, min(value, limit - 1)))
    else:
        _put(buf, _element(rng, r), "<i", value)
    return buf


def shape(rng, buf, by_kind):
    r = _pick(rng, by_kind, "shape")
    _put(buf, _element(rng, r), "<i", rng.choice([-1, -2, 0, 1, 3, 2**16, 2**20, 2**31 - 1, -(2**31),
                                                  rng.getrandbits(12)]))
    return buf


def splice(rng, buf, by_kind):
    """Copy one object over another, so that offsets end up pointing at the same data."""
    src, dst = _pick(rng, by_kind, "structure"), _pick(rng, by_kind, "structure")
    n = min(max(src.size, 4), 64, len(buf) - dst.pos, len(buf) - src.pos)
    buf[dst.pos : dst.pos + n] = buf[src.pos : src.pos + n]
    return buf


MUTATORS = {f.__name__: f for f in (flip, truncate, vtable_entry, vector_length, offset, soffset, scalar, index,
                                    shape, splice)}


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that kernels' `except Exception` cannot swallow it."""


def _on_alarm(signum, frame):
    raise _Timeout


def _memory_cause(exc: BaseException) -> bool:
    while exc is not None:
        if isinstance(exc, MemoryError):
            return True
        exc = exc.__cause__
    return False


def run_interpreter(model) -> str:
    """Construct, allocate and invoke; return the outcome's name. Non-Accelsim exceptions propagate.

    An AccelsimError caused by MemoryError (a kernel asking for more than the address-space limit
    set in `main`) is returned as a "memory" outcome, not passed as an ordinary refusal.
    """
    phase = "construct"
    signal.setitimer(signal.ITIMER_REAL, INVOKE_SECONDS)
    try:
        it = Interpreter(model=model)
        phase = "allocate"
        it.allocate_tensors()
        total = sum(t.nbytes for i in range(it.num_subgraphs()) for t in it.subgraph(i).tensors)
        if total > MAX_INVOKE_BYTES:
            return "not invoked: tensors over 64 MiB"
        phase = "invoke"
        it.invoke()
    except AccelsimError as exc:
        if _memory_cause(exc):
            return f"MEMORY BLOW-UP at {phase}: {str(exc)[:300]}"
        return f"{phase} refused: {type(exc).__name__}"
    except _Timeout:
        if not any(op.op == "WHILE" for sg in model.subgraphs for op in sg.operators):
            raise AssertionError(f"{phase} ran over {INVOKE_SECONDS} s without a WHILE loop") from None
        return f"{phase} stopped: WHILE still looping"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return "invoked"


def _limit_address_space(extra: int) -> None:
    """Make allocations beyond the current size plus `extra` bytes raise MemoryError instead of swapping or OOM."""
    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, resource.getrlimit(resource.RLIMIT_AS)[1]))


class Stats:
    def __init__(self):
        self.cases = 0
        self.outcomes = collections.Counter()
        self.messages = collections.Counter()
        self.templates = collections.Counter()
        self.interp = collections.Counter()
        self.crashes = []
        self.memory = []
        self.slowest_load = (0.0, "")
        self.slowest_run = (0.0, "")
        self.by_mutator = collections.Counter()

    def check(self, data: bytes, label: str, invoke: bool) -> None:
        """Load (and run) one case and record what happened."""
        self.cases += 1
        try:
            start = time.perf_counter()
            model = None
            try:
                model = load_model(data)
            except ModelError as exc:
                msg = str(exc)
                if not msg:
                    raise AssertionError("ModelError without a message") from None
                self.messages[msg] += 1
                self.templates[re.sub(r"-?\d+", "N", msg)] += 1
            loaded = time.perf_counter()
            self.slowest_load = max(self.slowest_load, (loaded - start, label))
            self.outcomes["refused" if model is None else "loaded"] += 1
            if model is not None and invoke:
                outcome = run_interpreter(model)
                if outcome.startswith("MEMORY"):
                    self.memory.append((label, outcome))
                    outcome = outcome.split(":")[0]
                self.interp[outcome] += 1
                self.slowest_run = max(self.slowest_run, (time.perf_counter() - loaded, label))
        except Exception as exc:  # a crash: anything but ModelError from the loader, AccelsimError after it
            self.outcomes["crash"] += 1
            self.crashes.append((label, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=-3)))

    def report(self, seconds: float) -> None:
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"cases run                 {self.cases}")
        print(f"loaded                    {self.outcomes['loaded']}")
        print(f"refused (ModelError)      {self.outcomes['refused']}")
        print(f"crashes                   {self.outcomes['crash']}")
        print(f"distinct error messages   {len(self.messages)} exact, {len(self.templates)} with numbers masked")
        print(f"slowest case              {self.slowest_load[0] * 1e3:.1f} ms ({self.slowest_load[1]})")
        if self.interp:
            print(f"slowest interpreter run   {self.slowest_run[0] * 1e3:.1f} ms ({self.slowest_run[1]})")
        print(f"peak memory (max RSS)     {peak_mib:.0f} MiB")
        print(f"wall time                 {seconds:.0f} s ({self.cases / max(seconds, 1e-9):.0f} cases/s)")
        if self.by_mutator:
            print("cases by mutator          " + ", ".join(f"{k} {v}" for k, v in sorted(self.by_mutator.items())))
        if self.interp:
            print("interpreter outcomes:")
            for k, v in self.interp.most_common():
                print(f"  {v:8d}  {k}")
        print("commonest error messages (numbers masked):")
        for msg, n in self.templates.most_common(15):
            print(f"  {n:8d}  {msg[:150]}")
        for label, outcome in self.memory[:20]:
            print(f"{label}: {outcome}")
        for label, msg, tb in self.crashes[:10]:
            print(f"CRASH {label}: {msg}\n{tb}")


def random_cases(corpus: Corpus, seed: int, cases: range):
    """(label, bytes) for each case number; a case depends only on (seed, number), so it can be replayed."""
    for i in cases:
        rng = random.Random(seed * 1_000_003 + i)
        name, data, by_kind = rng.choice(corpus.models)
        mutator = rng.choice(list(MUTATORS))
        yield f"case {i}: {mutator} on {name}", mutator, bytes(MUTATORS[mutator](rng, bytearray(data), by_kind))


def run_atheris(paths, stats: Stats, cases: int, invoke: bool) -> None:
    import atheris  # an optional tool: `pip install atheris` (wheels for CPython 3.11-3.13 on Linux x86-64)

    corpus_dir = Path(tempfile.mkdtemp(prefix="fuzz_models_"))
    for p in paths:
        (corpus_dir / p.name).write_bytes(p.read_bytes())
    start = time.perf_counter()

    def one_input(data: bytes) -> None:
        stats.check(data, f"atheris input {stats.cases}", invoke)
        if stats.crashes:
            label, msg, tb = stats.crashes[-1]
            raise RuntimeError(f"{msg}\n{tb}")
        if stats.cases == cases:
            stats.report(time.perf_counter() - start)

    max_len = max(p.stat().st_size for p in paths)
    atheris.instrument_all()  # coverage feedback from every loaded Python function (runtime.*, schema.*)
    atheris.Setup([sys.argv[0], f"-runs={cases}", f"-max_len={max_len}", "-rss_limit_mb=4096", str(corpus_dir)],
                  one_input)
    atheris.Fuzz()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--case", type=int, help="replay one case number and print its outcome")
    ap.add_argument("--invoke", action="store_true", help="also construct, allocate and invoke loaded models")
    ap.add_argument("--only", nargs="*", help="fixture names (stems) to use")
    ap.add_argument("--atheris", action="store_true", help="coverage-guided byte fuzzing with atheris")
    args = ap.parse_args()
    paths = sorted(FIXTURES.glob("*.tflite"))
    if args.only:
        paths = [p for p in paths if p.stem in args.only]
    signal.signal(signal.SIGALRM, _on_alarm)
    _limit_address_space(MEMORY_HEADROOM)
    stats = Stats()
    if args.atheris:
        run_atheris([p for p in paths if p.stat().st_size < 100_000], stats, args.cases, args.invoke)
        return
    corpus = Corpus(paths)
    numbers = range(args.case, args.case + 1) if args.case is not None else range(args.cases)
    start = time.perf_counter()
    for label, mutator, data in random_cases(corpus, args.seed, numbers):
        stats.by_mutator[mutator] += 1
        stats.check(data, label, args.invoke)
        if args.case is not None:
            print(label, "->", stats.outcomes.most_common(), stats.interp.most_common(), list(stats.messages))
    stats.report(time.perf_counter() - start)


if __name__ == "__main__":
    main()
