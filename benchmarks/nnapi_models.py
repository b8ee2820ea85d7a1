"""Build the held-out architectures of TensorFlow's "Performance benchmarks" table as float .tflite files.

Needs TensorFlow; imports nothing of accelsim. `benchmarks/cost_vs_nnapi.py` runs it when models are missing:

    PY benchmarks/nnapi_models.py CACHE_DIR KEY ...      # PY: a Python that has TensorFlow

KEYS: NASNetMobile_224, InceptionResNetV2_299 (`tf.keras.applications`, random weights, batch 1) and
SqueezeNet_224, SqueezeNet 1.0 (Iandola et al. 2016, arXiv 1602.07360, Table 1: conv1 96 7x7/2, eight fire
modules, conv10, global average pool) written out in Keras. Inception-V4 is not in Keras and is not built.
The table's models are TF1 slim graphs (their .tgz files); these Keras graphs have the same layers but
not the same converter output (e.g. NASNet's padding and cropping ops), which is part of the held-out error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from keras_tflite import build_tflite, convert  # this file runs as a script beside keras_tflite.py


def squeezenet(size: int) -> bytes:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    layers = tf.keras.layers
    x = inp = tf.keras.Input((size, size, 3), batch_size=1)
    x = layers.Conv2D(96, 7, strides=2, activation="relu")(x)
    x = layers.MaxPool2D(3, 2)(x)

    def fire(x, squeeze, expand):
        s = layers.Conv2D(squeeze, 1, activation="relu")(x)
        return layers.Concatenate()([layers.Conv2D(expand, 1, activation="relu")(s),
                                     layers.Conv2D(expand, 3, padding="same", activation="relu")(s)])

    for i, (sq, ex) in enumerate(((16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192), (64, 256),
                                  (64, 256))):
        x = fire(x, sq, ex)
        if i in (2, 6):
            x = layers.MaxPool2D(3, 2)(x)
    x = layers.Conv2D(1000, 1, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Softmax()(x)
    return convert(tf.keras.Model(inp, x), (size, size, 3), "float32")


def build(key: str) -> bytes:
    application, size = key.split("_")
    if application == "SqueezeNet":
        return squeezenet(int(size))
    return build_tflite(application, int(size), "float32")


def main(argv: list[str]) -> int:
    cache = Path(argv[0])
    cache.mkdir(parents=True, exist_ok=True)
    for key in argv[1:]:
        target = cache / f"{key}.tflite"
        if target.exists():
            continue
        print(f"building {key} -> {target} ...", flush=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(build(key))
        os.replace(tmp, target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
