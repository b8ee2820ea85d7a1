"""Every shipped config's simulated costs on every fixture model, pinned in one golden file.

A host config is simulated alone; an accelerator config on the default host
(`accelsim.hw_configs.DEFAULT_HOST`, what an experiment without `host:` gets; cost-only, TFLite's
partitioning), so a change of the default host shows in the pins too. Pinned per pair: latency,
energy, the time by kind (compute, memory, transfer, overhead) and, per delegate partition, its
unit and the same four times; a model the pair cannot simulate pins its error. A custom-op fixture
loads with its op module (tests/helpers/support.py's CUSTOM_OP_FIXTURES), as users pass `--ops`. Any change beyond
floating-point noise (relative 1e-9) fails, so a commit that changes a cost model or a config shows
in its diff every number it moved. Some of a kind's code constants bind on no shipped config and fixture
(the npu kind's SHRAM bank size and its burst rounding of a broadcast operand's runs, the gpu kind's
float16 rate when a config lists only float32), so `PROBES` pins node-level costs of nodes built to
exercise each one (issue 31 B9), keyed `probe/<name>`. Regenerate the pins only on purpose, with the
commit that moves them:

    python tests/test_pinned_costs.py --update
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

if __name__ == "__main__":  # run as a script: the tests' helpers folder, as pytest's pythonpath has it
    sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))

from support import CUSTOM_OP_FIXTURES

from accelsim.experiments.experiment import SHIPPED_CONFIGS
from accelsim.hardware.config import load_hardware, load_system
from accelsim.hardware.types import Hardware
from accelsim.hw_configs import DEFAULT_HOST
from accelsim.ops import using_ops
from accelsim.runtime.errors import AccelsimError
from accelsim.runtime.work import Gemm, NodeWork
from accelsim.simulation.analysis import analyze, simulate_analysis

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "tests" / "golden" / "pinned_costs.json"
MODELS = sorted((ROOT / "tests" / "fixtures" / "models").glob("*.tflite"))
RELATIVE = 1e-9
_KINDS = ("compute", "memory", "transfer", "overhead")


def configs() -> list[str]:
    """Every shipped config, by name (whatever ships: a new one needs its pins)."""
    return sorted(p.stem for p in SHIPPED_CONFIGS.glob("*.yaml"))


def system_of(name: str):
    """A host config alone, or an accelerator config on the default host."""
    if load_hardware(SHIPPED_CONFIGS / f"{name}.yaml").is_accelerator:
        return load_system(SHIPPED_CONFIGS / f"{DEFAULT_HOST}.yaml", [SHIPPED_CONFIGS / f"{name}.yaml"])
    return load_system(SHIPPED_CONFIGS / f"{name}.yaml", [])


def pin(analysis, system) -> dict:
    """What is pinned of one simulation."""
    sim = simulate_analysis(analysis, system)
    by_kind = sim.result.by_kind
    return {"latency_s": sim.latency, "energy_j": sim.energy,
            "by_kind_s": {k: by_kind[k] for k in _KINDS},
            "partitions": [{"unit": p.unit, "nodes": len(p.nodes), "compute_s": p.compute, "memory_s": p.memory,
                            "transfer_s": p.transfer, "overhead_s": p.overhead} for p in sim.partitions]}


def _shipped(name: str) -> Hardware:
    return load_hardware(SHIPPED_CONFIGS / f"{name}.yaml").hardware


def _float32_only(hw: Hardware) -> Hardware:
    """`hw` listing only its float32 rate: float16 then runs at the gpu kind's unlisted-float16 factor."""
    rates = tuple((k, v) for k, v in hw.compute.macs_per_cycle if k == "float32")
    return dataclasses.replace(hw, compute=dataclasses.replace(hw.compute, macs_per_cycle=rates))


# A per-channel constant (256 values) that a MUL broadcasts over an 8 x 8 map: the npu's elementwise block
# (from SHRAM_BANK_BYTES and shram_banks) is 64 channels deep, so each pixel reads 4 burst-rounded runs.
_BROADCAST_MUL = NodeWork(op="MUL", dtype="int8", macs=64 * 256, input_bytes=64 * 256, weight_bytes=256,
                          output_bytes=64 * 256, elements=64 * 256, kind="elementwise")
# A SOFTMAX over 8 rows of 8: its 32-bit constant is read in runs of 32 bytes, each rounded up to a burst.
_SOFTMAX = NodeWork(op="SOFTMAX", dtype="int8", macs=3 * 64, input_bytes=64, output_bytes=64, elements=64,
                    kind="elementwise", rows=8)
# A compute-bound float 3x3 convolution, 64 x 64 x 256 -> 256.
_CONV = NodeWork(op="CONV_2D", dtype="float32", macs=64 * 64 * 256 * 256 * 9, input_bytes=4 * 64 * 64 * 256,
                 weight_bytes=4 * 9 * 256 * 256, output_bytes=4 * 64 * 64 * 256, elements=64 * 64 * 256, kind="gemm",
                 gemm=Gemm(64 * 64, 9 * 256, 256))
# name -> (hardware, nodes): each pins what a code constant moves where no shipped pair sees it.
PROBES: dict[str, tuple[Callable[[], Hardware], tuple[NodeWork, ...]]] = {
    "ethos_u55_128/broadcast_mul_8x8x256": (lambda: _shipped("ethos_u55_128"), (_BROADCAST_MUL,)),
    "ethos_u65_256/broadcast_mul_8x8x256": (lambda: _shipped("ethos_u65_256"), (_BROADCAST_MUL,)),
    "ethos_u55_32/softmax_8x8": (lambda: _shipped("ethos_u55_32"), (_SOFTMAX,)),
    "adreno630_gpu_float32_only/conv3x3_64x64x256": (lambda: _float32_only(_shipped("adreno630_gpu")), (_CONV,)),
}


def probe_pins() -> dict[str, dict]:
    """Each probe's per-node costs: cycles, seconds, energy and bytes per memory level."""
    out = {}
    for name, (hardware, nodes) in PROBES.items():
        out[f"probe/{name}"] = {"nodes": [{"cycles": c.cycles, "seconds": c.seconds, "energy_j": c.energy,
                                           "level_bytes": dict(c.level_bytes)}
                                          for c in hardware().costs(list(nodes))]}
    return out


def current_pins() -> dict[str, dict]:
    """Every (config, model) pair's pins, keyed 'config/model'; one analysis per model and claims."""
    out: dict[str, dict] = {}
    systems = {name: system_of(name) for name in configs()}
    for model in MODELS:
        analyses: dict[tuple, object] = {}
        module = CUSTOM_OP_FIXTURES.get(model.stem)
        with using_ops([module] if module else []):
            for name, system in systems.items():
                key = f"{name}/{model.stem}"
                claims = tuple(a.name for a in system.accelerators)
                try:
                    if claims not in analyses:
                        analyses[claims] = analyze(str(model), system)
                    out[key] = pin(analyses[claims], system)
                except AccelsimError as exc:  # the shipped configs' folder as a name: pins hold no machine's path
                    out[key] = {"error": f"{type(exc).__name__}: {exc}".replace(str(SHIPPED_CONFIGS), "<hw_configs>")}
    out.update(probe_pins())
    return out


def _differences(pinned, now, where: str = "") -> list[str]:
    """Every leaf where `now` differs from `pinned` beyond RELATIVE (or in kind, text or length)."""
    if isinstance(pinned, dict) and isinstance(now, dict):
        keys = sorted(pinned.keys() | now.keys())
        return [d for k in keys for d in _differences(pinned.get(k), now.get(k), f"{where}.{k}" if where else k)]
    if isinstance(pinned, list) and isinstance(now, list) and len(pinned) == len(now):
        return [d for i, (a, b) in enumerate(zip(pinned, now)) for d in _differences(a, b, f"{where}[{i}]")]
    if isinstance(pinned, float) and isinstance(now, float):
        same = math.isclose(pinned, now, rel_tol=RELATIVE, abs_tol=0.0)
    else:
        same = pinned == now
    return [] if same else [f"{where}: pinned {pinned!r}, now {now!r}"]


@pytest.fixture(scope="module")
def pins() -> dict:
    return current_pins()


def test_every_shipped_config_has_pins_on_every_fixture(pins):
    pinned = json.loads(PINS.read_text(encoding="utf-8"))
    assert sorted(pinned) == sorted(pins), \
        "a config or model was added or removed: python tests/test_pinned_costs.py --update"


def test_costs_equal_their_pins(pins):
    moved = _differences(json.loads(PINS.read_text(encoding="utf-8")), pins)
    assert not moved, (f"{len(moved)} pinned numbers moved (if on purpose, regenerate with `python "
                       f"tests/test_pinned_costs.py --update` in the same commit):\n" + "\n".join(moved[:40]))


def test_the_probes_exercise_the_constants_they_pin():
    """Each probe's node is where its constant binds (else its pin could not move): the broadcast MUL is bound by
    the burst-rounded flash reads, the float16 conv by the ALUs at twice the float32 rate."""
    (mul,) = _shipped("ethos_u55_128").costs([_BROADCAST_MUL])
    assert dict(mul.level_bytes)["flash"] == 8 * 8 * 4 * 128 and dict(mul.bound_seconds).keys() == {"flash"}
    fp32_only = _float32_only(_shipped("adreno630_gpu"))
    assert dict(fp32_only.compute.macs_per_cycle) == {"float32": 512} and fp32_only.numerics_precision == "float16"
    (conv,) = fp32_only.costs([_CONV])
    assert dict(conv.bound_seconds).keys() == {"compute"}


def test_the_comparison_sees_a_relative_change_above_1e_9_and_not_below():
    assert _differences({"a": {"x": 1.0}}, {"a": {"x": 1.0 + 5e-10}}) == []
    assert _differences({"a": {"x": 1.0}}, {"a": {"x": 1.0 + 2e-9}}) == [f"a.x: pinned 1.0, now {1.0 + 2e-9!r}"]
    assert _differences({"p": [{"unit": "tpu"}]}, {"p": []}) == ["p: pinned [{'unit': 'tpu'}], now []"]


def main(argv: list[str]) -> int:
    if argv != ["--update"]:
        print(f"usage: python {Path(__file__).relative_to(ROOT)} --update   (rewrites {PINS.relative_to(ROOT)})")
        return 2
    PINS.parent.mkdir(parents=True, exist_ok=True)
    PINS.write_text(json.dumps(current_pins(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {PINS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
