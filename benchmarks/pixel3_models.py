"""Build the Pixel 3 table's architectures as .tflite files (needs TensorFlow; imports nothing of accelsim).

`benchmarks/cost_vs_pixel3.py` runs this file with a TensorFlow interpreter when models are missing:

    PY benchmarks/pixel3_models.py CACHE_DIR KEY ...      # PY: a Python that has TensorFlow

A KEY is `<application>_<alpha>_<size>_<float|int8>` as `cost_vs_pixel3.model_key` writes it.
Each model is `tf.keras.applications.<application>` with random weights and batch 1; "float"
is the plain float32 conversion, "int8" full-integer int8 with int8 input and output from a
few random calibration samples (as `cost_vs_coral.py` builds its models). Files are written
under a temporary name and renamed, so concurrent builders never read a half-written file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from keras_tflite import build_tflite  # this file runs as a script beside keras_tflite.py


def build(application: str, alpha: float, size: int, quantized: bool) -> bytes:
    """One model's .tflite bytes (keras_tflite's conversion, with the MobileNet width multiplier)."""
    return build_tflite(application, size, "int8" if quantized else "float32", alpha=alpha)


def parse_key(key: str) -> tuple[str, float, int, bool]:
    """'MobileNet_0.25_128_int8' -> ('MobileNet', 0.25, 128, True)."""
    application, alpha, size, numerics = key.split("_")
    return application, float(alpha), int(size), numerics == "int8"


def main(argv: list[str]) -> int:
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        print(f"pixel3_models: {sys.executable} has no TensorFlow; run this file with a Python that has it "
              "(cost_vs_pixel3.py --tf-python PY)", file=sys.stderr)
        return 1
    cache = Path(argv[0])
    cache.mkdir(parents=True, exist_ok=True)
    for key in argv[1:]:
        target = cache / f"{key}.tflite"
        if target.exists():
            continue
        print(f"building {key} -> {target} ...", flush=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(build(*parse_key(key)))
        os.replace(tmp, target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
