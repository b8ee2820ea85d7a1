"""Named devices for LLM generation: per backend, the host config and the accelerator that is the delegate.

`--backend cpu` runs everything on the host (LiteRT-LM's CPU backend: XNNPACK, 4 threads); `gpu` and `npu`
add that unit as the delegate, the host running what it leaves. Each config cites its numbers
(hw_configs/<name>.yaml); the memory budget is the host's DRAM level `size`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import accelsim.hw_configs
from accelsim.hardware.config import System, load_system

BACKENDS = ("cpu", "gpu", "npu")


@dataclass(frozen=True)
class LlmSystem:
    name: str
    description: str
    host: str
    units: dict  # backend -> accelerator config name (None: the host itself)
    kv_buffers: dict  # backend -> KV cache buffers the runtime keeps (LiteRT-LM executor l.716-761)


SYSTEMS: dict[str, LlmSystem] = {
    "galaxy_s24_ultra": LlmSystem("galaxy_s24_ultra", "Samsung Galaxy S24 Ultra, Snapdragon 8 Gen 3 for Galaxy",
                                  "s24u_cpu", {"cpu": None, "gpu": "s24u_adreno750_gpu", "npu": "s24u_hexagon_npu"},
                                  {"cpu": 1, "gpu": 2, "npu": 1}),
    "galaxy_s25_ultra": LlmSystem("galaxy_s25_ultra", "Samsung Galaxy S25 Ultra, Snapdragon 8 Elite for Galaxy",
                                  "s25u_cpu", {"cpu": None, "gpu": "s25u_adreno830_gpu", "npu": "s25u_hexagon_npu"},
                                  {"cpu": 1, "gpu": 2, "npu": 1}),
    "macbook_pro_m3": LlmSystem("macbook_pro_m3", "Apple MacBook Pro (2023), M3, unified memory", "m3_cpu",
                                {"cpu": None}, {"cpu": 1}),
}


def llm_system(name: str, backend: str) -> tuple[System, LlmSystem]:
    """The named system with `backend` as its delegate, or ValueError naming the choices."""
    if name not in SYSTEMS:
        raise ValueError(f"unknown system {name!r}; choose one of {', '.join(SYSTEMS)}")
    spec = SYSTEMS[name]
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend not in spec.units:
        raise ValueError(f"{name} has no {backend} backend here; choose one of {', '.join(spec.units)}")
    unit = spec.units[backend]
    shipped = Path(str(resources.files(accelsim.hw_configs)))
    return load_system(shipped / f"{spec.host}.yaml", [shipped / f"{unit}.yaml"] if unit else []), spec
