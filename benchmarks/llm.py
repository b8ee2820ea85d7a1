"""On-device LLM generation, cost only: gemma3-1b int4, 1024 prefill + 256 decode tokens, against LiteRT-LM's rows.

    python benchmarks/llm.py          # tokens/s on the fit rows' systems and the held-out ones, and the time taken
    python benchmarks/llm.py --fit    # fit the three fit rows' configs and write them (and the configs derived
                                      # from them) to hw_configs/

Fit rows (LiteRT-LM README, Gemma3-1B "4-bit per-channel", 1024 prefill / 256 decode tokens; context 4096 on
CPU and GPU, 1280 on NPU; /work/research/llm_specs.md section 2.2), the only numbers fitted:
  S24 Ultra CPU 243.24 / 43.56, S24 Ultra GPU 1876.5 / 44.57, S25 Ultra NPU 5836.6 / 84.8 tokens/s.
Each fits two numbers of its unit's config: compute.efficiency (prefill) and memory.levels.dram.bandwidth
(decode). Every other row is held out and only compared (HELD_OUT).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

from accelsim.hardware.config import System, apply_overrides
from accelsim.workloads.architectures import ARCHITECTURES
from accelsim.workloads.builder import build_model
from accelsim.workloads.generation import analyze_generation, generate
from accelsim.workloads.llm_file import read_llm
from accelsim.workloads.systems import SYSTEMS, llm_system

CONFIGS = Path(__file__).resolve().parents[1] / "hw_configs"
PREFILL, DECODE = 1024, 256
# (system, backend, context, prefill tok/s, decode tok/s, config fitted, source)
FIT_ROWS = (
    ("galaxy_s24_ultra", "cpu", 4096, 243.24, 43.56, "s24u_cpu", "LiteRT-LM README @ d8114b78 l.49-59"),
    ("galaxy_s24_ultra", "gpu", 4096, 1876.5, 44.57, "s24u_adreno750_gpu", "LiteRT-LM README @ d8114b78 l.49-59"),
    ("galaxy_s25_ultra", "npu", 1280, 5836.6, 84.8, "s25u_hexagon_npu", "LiteRT-LM README, Oct 2025 version"),
)
# Held out: never fitted, never used to choose a number or a mechanism; compared only.
HELD_OUT = (
    ("macbook_pro_m3", "cpu", 4096, 422.98, 66.89, "LiteRT-LM README @ d8114b78 l.49-59"),
    ("galaxy_s24_ultra", "cpu", 4096, 379.7, 55.9, "LiteRT-LM v0.6.1 README (first release; runtime differs)"),
)
# Configs whose efficiency and DRAM share of peak are taken from a fitted one: (config, from, its peak, source peak).
DERIVED = (
    ("s25u_cpu", "s24u_cpu", 85.3, 76.8),
    ("m3_cpu", "s24u_cpu", 102.4, 76.8),
    ("s25u_adreno830_gpu", "s24u_adreno750_gpu", 85.3, 76.8),
    ("s24u_hexagon_npu", "s25u_hexagon_npu", 76.8, 85.3),
)


def _unit(system: System):
    return system.accelerators[0] if system.accelerators else system.host


def _with(system: System, efficiency: float, bandwidth: float) -> System:
    changes = {"compute.efficiency": efficiency, "memory.levels.dram.bandwidth": f"{bandwidth:.6g} GB/s"}
    if system.accelerators:
        return System(system.host, (apply_overrides(system.accelerators[0], changes),), system.assign)
    return System(apply_overrides(system.host, changes), (), system.assign)


def _rates(ga, system, name, backend):
    r = generate(ga, system, system_name=name, backend=backend, prefill=PREFILL, decode=DECODE,
                 kv_buffers=SYSTEMS[name].kv_buffers[backend])
    return r.prefill_tokens_per_s, r.decode_tokens_per_s, r


def _sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def fit_row(graph, name, backend, prefill_target, decode_target):
    """compute.efficiency and DRAM bandwidth (GB/s) giving the row's prefill and decode rates (4 significant digits)."""
    system, _ = llm_system(name, backend)
    ga = analyze_generation(graph, system)
    unit = _unit(system).hardware
    eff = unit.compute.efficiency
    bw = unit.memory.level("dram").bandwidth / 1e9
    for _ in range(12):  # alternate multiplicative secant steps on the log of each parameter
        p, d, _r = _rates(ga, _with(system, eff, bw), name, backend)
        if abs(math.log(p / prefill_target)) < 1e-4 and abs(math.log(d / decode_target)) < 1e-4:
            break
        eff = min(1.0, eff * (prefill_target / p) ** 1.2)
        bw = bw * (decode_target / d) ** 1.2
    return _sig(eff), _sig(bw)


def _write(config: str, efficiency: float, bandwidth: float) -> None:
    path = CONFIGS / f"{config}.yaml"
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"(\n  efficiency: )[0-9.]+", rf"\g<1>{efficiency:g}", text, count=1)
    text = re.sub(r"(dram: \{[^}]*bandwidth: )[0-9.]+( GB/s)", rf"\g<1>{bandwidth:g}\g<2>", text, count=1)
    path.write_text(text, encoding="utf-8")


def fit() -> None:
    models = {}
    fitted = {}
    for name, backend, ctx, pre, dec, config, _src in FIT_ROWS:
        if ctx not in models:
            models[ctx] = read_llm(build_model(ARCHITECTURES["gemma3-1b"], "int4", PREFILL, ctx), "gemma3-1b")
        eff, bw = fit_row(models[ctx], name, backend, pre, dec)
        fitted[config] = (eff, bw)
        _write(config, eff, bw)
        print(f"{config}: compute.efficiency {eff:g}, memory.levels.dram.bandwidth {bw:g} GB/s")
    for config, source, peak, source_peak in DERIVED:
        eff, bw = fitted[source]
        _write(config, eff, _sig(bw / source_peak * peak))
        print(f"{config}: compute.efficiency {eff:g}, memory.levels.dram.bandwidth {_sig(bw / source_peak * peak):g} "
              f"GB/s (from {source})")


def run() -> None:
    start, cpu_start = time.perf_counter(), time.process_time()
    models = {}
    rows = []
    for fit_flag, table in ((True, FIT_ROWS), (False, HELD_OUT)):
        for row in table:
            name, backend, ctx, pre, dec = row[:5]
            t0 = time.process_time()
            if ctx not in models:
                models[ctx] = read_llm(build_model(ARCHITECTURES["gemma3-1b"], "int4", PREFILL, ctx), "gemma3-1b")
            system, _ = llm_system(name, backend)
            p, d, r = _rates(analyze_generation(models[ctx], system), system, name, backend)
            rows.append((fit_flag, name, backend, ctx, pre, dec, p, d, r, time.process_time() - t0, row[-1]))
    total, cpu_total = time.perf_counter() - start, time.process_time() - cpu_start
    fit_time = sum(x[9] for x in rows if x[0])
    print(f"gemma3-1b int4, {PREFILL} prefill + {DECODE} decode tokens, cost only")
    print(f"{'':9} {'system':18} {'backend':7} {'ctx':>5} {'prefill tok/s':>14} {'published':>9} {'ratio':>6} "
          f"{'decode tok/s':>13} {'published':>9} {'ratio':>6}  bound (prefill / decode)  peak memory")
    for fit_flag, name, backend, ctx, pre, dec, p, d, r, _t, _src in rows:
        bounds = " / ".join(ph.bound for ph in r.phases)
        kind = "fit" if fit_flag else "held out"
        print(f"{kind:9} {name:18} {backend:7} {ctx:5} {p:14.1f} {pre:9.1f} {p / pre:6.2f} {d:13.2f} {dec:9.2f} "
              f"{d / dec:6.2f}  {bounds:24} {r.memory.peak_bytes / 2**20:7.0f} MiB")
    print(f"time (CPU seconds of this process; the machine is shared): {fit_time:.2f} s for the three fit-row "
          f"systems (build, analyse, cost), {cpu_total:.2f} s for all rows ({total:.2f} s wall)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", action="store_true", help="fit the fit rows' configs and write them to hw_configs/")
    args = ap.parse_args(argv)
    fit() if args.fit else run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
