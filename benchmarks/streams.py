"""Streams over several Edge TPUs and on a phone SoC: throughput and latency, replicas against pipeline segmentations.

Usage:
    python benchmarks/streams.py [--cache DIR] [--frames N] [--models KEY ...]

Part 1, for Coral's models (benchmarks/cost_vs_coral.py's rows): the .tflite files from its cache when
they are there (building them needs TensorFlow), else the committed fit-row summaries
(benchmarks/coral_fit_rows/: each model's graph with its weights zeroed, which simulates exactly as the
full model). On 1 to 4 edgetpu_usb (host host_cpu) and edgetpu_pcie (host cortex_a53_cpu), back-to-back
frames with one frame in flight per device: replicas (each frame to the next free device) and the three
pipeline segmentations (compiler: the Edge TPU compiler's --num_segments rule; profiled: libcoral's
partition_with_profiling with the simulated segment times as the profile; balanced: ours). Each cell is
frames per second / median latency in ms; "abort" where libcoral's parameter-count partitioner leaves a
segment empty (it CHECK-fails there). The speed-up of the best 4-device pipeline over one device follows.

Part 2, examples/phone.yaml's units (kryo385_cpu host, adreno630_gpu, hexagon_dsp): a detector
(MobileNet v2 1.0 224 int8, examples/default's model: the DSP runs it) and a landmark model that runs on
each detector frame (selfie_like_float, MediaPipe-like: the GPU runs it) with a flow limit of one frame in
flight (MediaPipe's FlowLimiterCalculator; the landmark keeps one waiting frame), at 30 fps and at rates over
what the SoC sustains.

Part 3, the simulator's speed: 1,000 frames of a 4-segment pipeline (MobileNet v2 on 4 edgetpu_usb),
preparation (analysis, segmentation) and the SimPy run timed apart.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

from accelsim.experiments.experiment import SHIPPED_CONFIGS  # noqa: E402
from accelsim.hardware.config import System, load_hardware  # noqa: E402
from accelsim.ops import load_op_modules, using_ops  # noqa: E402
from accelsim.runtime.read import load_model  # noqa: E402
from accelsim.workloads.segments import SEGMENTATIONS, SegmentError  # noqa: E402
from accelsim.workloads.streams import StreamError, StreamSpec, Workload, prepare, run  # noqa: E402
from benchmarks import calibration  # noqa: E402
from benchmarks.cost_vs_coral import CACHE, HOSTS, ROWS, SUMMARIES  # noqa: E402

EDGETPU = ("edgetpu_usb", "edgetpu_pcie")
COUNTS = (1, 2, 3, 4)
PHONE = ("kryo385_cpu", ("adreno630_gpu", "hexagon_dsp"))
DETECTOR = ROOT / "examples" / "default" / "mobilenet_v2_100_224_int8.tflite"
LANDMARK = ROOT / "tests" / "fixtures" / "models" / "selfie_like_float.tflite"


def config(name: str):
    return load_hardware(SHIPPED_CONFIGS / f"{name}.yaml")


def coral_models(cache: Path, keys) -> dict[str, tuple[str, object]]:
    """key -> (where it came from, the Model): the cache's full model, else the committed summary, else none."""
    out = {}
    for row in ROWS:
        if keys and row.key not in keys:
            continue
        full = cache / f"{row.key}_int8.tflite"
        summary = SUMMARIES / f"{row.key}_int8.tflite.xz"
        if full.is_file():
            out[row.key] = ("cache", load_model(str(full)))
        elif summary.is_file():
            out[row.key] = ("summary", calibration.read_summary(summary, "streams"))
    return out


def cell(model, system: System, mode: str, count: int, segmentation: str, frames: int) -> tuple[float, float] | str:
    """(frames/s, median ms) of back-to-back frames, one in flight per device; or why it cannot run."""
    spec = StreamSpec("m", model, frames=frames, max_in_flight=count)
    workload = Workload((spec,), mode=mode, count=count, segmentation=segmentation)
    try:
        result = run(workload, prepare(workload, system), system)
    except StreamError as exc:
        return "abort" if "would be empty" in str(exc) else "error"
    s = result.streams[0]
    return s.throughput_per_s, s.latency_p50_s * 1e3


def coral_table(models, frames: int) -> list[str]:
    columns = ["replicas", *SEGMENTATIONS]
    out = ["| model | config | devices | " + " | ".join(columns) + " |",
           "|---|---|---:|" + "---:|" * len(columns)]
    gains = []
    for key, (source, model) in models.items():
        for accel in EDGETPU:
            system = System(config(HOSTS[accel]), (config(accel),))
            one = None
            best4 = 0.0
            for n in COUNTS:
                cells = []
                for col in columns:
                    if n == 1 and col != "replicas":
                        cells.append("=")
                        continue
                    mode = "replicas" if col == "replicas" else "pipeline"
                    got = cell(model, system, mode, n, col if mode == "pipeline" else "compiler", frames)
                    if isinstance(got, tuple):
                        if n == 1:
                            one = got[0]
                        if n == 4 and mode == "pipeline":
                            best4 = max(best4, got[0])
                        cells.append(f"{got[0]:.1f}/s, {got[1]:.2f} ms")
                    else:
                        cells.append(got)
                label = key + ("" if source == "cache" else " (summary)")
                out.append(f"| {label} | {accel} | {n} | " + " | ".join(cells) + " |")
            if one:
                gains.append(f"{key} on {accel}: best 4-device pipeline {best4 / one:.2f}x one device's throughput")
    return out + [""] + gains


def phone_table(frames: int) -> list[str]:
    system = System(config(PHONE[0]), tuple(config(n) for n in PHONE[1]))
    out = ["| rate | stream | completed/offered | dropped | frames/s | p50 ms | p90 ms | p99 ms | bottleneck |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for rate in (30.0, 240.0, 480.0):
        detector = StreamSpec("detector", str(DETECTOR), frames=frames, rate=rate, max_in_flight=1)
        landmark = StreamSpec("landmark", str(LANDMARK), frames=frames, depends_on=("detector",), max_in_flight=1,
                              max_in_queue=1)
        workload = Workload((detector, landmark))
        result = run(workload, prepare(workload, system), system)
        for s in result.streams:
            out.append(f"| {rate:.0f} fps | {s.name} | {s.completed}/{s.offered} | {s.dropped} | "
                       f"{s.throughput_per_s:.1f} | {s.latency_p50_s * 1e3:.2f} | {s.latency_p90_s * 1e3:.2f} | "
                       f"{s.latency_p99_s * 1e3:.2f} | {result.bottleneck} |")
        busy = ", ".join(f"{u.name} {u.utilization:.0%}" for u in result.units)
        out.append(f"| {rate:.0f} fps | utilisation | {busy} | | | | | | |")
    return out


def speed(frames: int = 1000) -> list[str]:
    model = str(DETECTOR)
    system = System(config("host_cpu"), (config("edgetpu_usb"),))
    workload = Workload((StreamSpec("m", model, frames=frames, max_in_flight=4),), mode="pipeline", count=4,
                        segmentation="balanced")
    t0 = time.perf_counter()
    prepared = prepare(workload, system)
    t1 = time.perf_counter()
    result = run(workload, prepared, system)
    t2 = time.perf_counter()
    s = result.streams[0]
    return [f"{s.completed} frames of a 4-segment pipeline (MobileNet v2, 4 edgetpu_usb, balanced): prepared in "
            f"{t1 - t0:.2f} s, simulated in {t2 - t1:.2f} s ({s.throughput_per_s:.1f} frames/s simulated)"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"cost_vs_coral's model cache (default {CACHE})")
    parser.add_argument("--frames", type=int, default=200, help="frames per cell (default 200)")
    parser.add_argument("--models", nargs="*", help="Coral row keys (default: every one available)")
    args = parser.parse_args(argv)
    try:
        models = coral_models(args.cache, args.models)
        print("Coral models, back-to-back, one frame in flight per device: frames/s, median latency")
        print("\n".join(coral_table(models, args.frames)))
        print()
        print("Phone (examples/phone.yaml's units): detector then landmark, flow limit 1 in flight")
        with using_ops(load_op_modules(["accelsim.ops.mediapipe"])):
            print("\n".join(phone_table(args.frames)))
        print()
        print("\n".join(speed()))
    except (StreamError, SegmentError) as exc:
        print(f"streams: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
