"""Build a `tf.keras.applications` architecture as a .tflite file (needs only TensorFlow and NumPy).

The calibration benchmarks (`cost_vs_coral.py`, `cost_vs_aihub.py`) compare simulated latency
with published tables measured on real models; they simulate the same architectures built here:
random weights (the time of a dense network does not depend on their values), batch fixed at 1
(so Flatten is one static RESHAPE), and either a float32 file or full-integer int8 with int8
input and output, calibrated on a few uniform random samples.

This module imports nothing of accelsim, so it runs in a TensorFlow-only environment:

    python benchmarks/keras_tflite.py OUT.tflite APPLICATION SIZE {int8,float32}

e.g. `python benchmarks/keras_tflite.py /tmp/mnv2.tflite MobileNetV2 224 int8`. The file is
written under a temporary name and renamed, so a reader never sees half of it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

CALIBRATION_SAMPLES = 4
DTYPES = ("int8", "float32")


def build_tflite(application: str, size: int, dtype: str, alpha: float | None = None) -> bytes:
    """`tf.keras.applications.<application>` at size x size x 3, random weights, batch 1, as .tflite bytes
    (`alpha`: a MobileNet's width multiplier)."""
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    shape = (size, size, 3)
    kwargs = {} if alpha is None else {"alpha": alpha}
    model = getattr(tf.keras.applications, application)(
        input_tensor=tf.keras.Input(shape, batch_size=1), weights=None, **kwargs)
    return convert(model, shape, dtype)


def convert(model, shape: tuple[int, ...], dtype: str) -> bytes:
    """A Keras model of one (1, *shape) float input as .tflite bytes: float32, or full-integer int8 with int8
    input and output calibrated on CALIBRATION_SAMPLES uniform random samples in [-1, 1]."""
    import numpy as np
    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec((1, *shape), tf.float32, name="input")])
    def serve(x):
        return model(x, training=False)

    # Keras 3 variables are not tf.Module-tracked: hand the converter their tf.Variables to freeze.
    holder = tf.Module()
    holder.variables_to_freeze = [v.value for v in model.weights]
    converter = tf.lite.TFLiteConverter.from_concrete_functions([serve.get_concrete_function()], holder)
    if dtype == "int8":
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


def write(path: Path, application: str, size: int, dtype: str) -> None:
    """Build and write `path` atomically (a temporary name, then os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(build_tflite(application, size, dtype))
    os.replace(tmp, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the .tflite file to write")
    parser.add_argument("application", help="a tf.keras.applications builder, e.g. MobileNetV2")
    parser.add_argument("size", type=int, help="input height and width in pixels")
    parser.add_argument("dtype", choices=DTYPES, help="int8: full-integer with int8 input/output; float32: as trained")
    args = parser.parse_args(argv)
    write(args.out, args.application, args.size, args.dtype)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
