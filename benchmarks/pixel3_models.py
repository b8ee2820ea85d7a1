"""Build the Pixel 3 table's architectures as .tflite files (needs TensorFlow; imports nothing of accelsim).

`benchmarks/cost_vs_pixel3.py` runs this file with a TensorFlow interpreter when models are missing:

    /work/tfvenv/bin/python benchmarks/pixel3_models.py CACHE_DIR KEY ...

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

CALIBRATION_SAMPLES = 4


def build(application: str, alpha: float, size: int, quantized: bool) -> bytes:
    """One model's .tflite bytes."""
    import numpy as np
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    shape = (size, size, 3)
    kwargs = {"alpha": alpha} if application.startswith("MobileNet") else {}
    model = getattr(tf.keras.applications, application)(
        input_tensor=tf.keras.Input(shape, batch_size=1), weights=None, **kwargs)

    @tf.function(input_signature=[tf.TensorSpec((1, *shape), tf.float32, name="input")])
    def serve(x):
        return model(x, training=False)

    # Keras 3 variables are not tf.Module-tracked: hand the converter their tf.Variables to freeze.
    holder = tf.Module()
    holder.variables_to_freeze = [v.value for v in model.weights]
    converter = tf.lite.TFLiteConverter.from_concrete_functions([serve.get_concrete_function()], holder)
    if quantized:
        def calibration():
            rng = np.random.default_rng(0)
            for _ in range(CALIBRATION_SAMPLES):
                yield [rng.uniform(-1.0, 1.0, (1, *shape)).astype(np.float32)]

        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = calibration
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    return converter.convert()


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
