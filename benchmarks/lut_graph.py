"""Build the mixed LUT / resize / pooling graph that `cost_vs_vela.py` holds out (needs only TensorFlow).

A small Keras functional model on 64-128 px maps of 16 channels with no convolution: TANH and
LOGISTIC (Ethos-U: table lookups), 2x bilinear upsampling (RESIZE_BILINEAR, half-pixel centres as
Keras resizes), max and average pools and elementwise ADD / MUL, converted full-integer int8 the
way `keras_tflite.py` converts the ImageNet models. It exercises the NPU's elementwise units, its
lookup table and its pooling path rather than the MAC array, so it shows how those rates scale
with the configuration.

    python benchmarks/lut_graph.py OUT.tflite

e.g. `python benchmarks/lut_graph.py ~/.cache/accelsim/vela/lut_graph_int8.tflite`. The file is
written under a temporary name and renamed, so a reader never sees half of it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

SHAPE = (64, 64, 16)


def build_model():
    """The Keras model: two branches of lookups, resizes and pools, joined by ADD and MUL."""
    import tensorflow as tf

    layers = tf.keras.layers
    x = tf.keras.Input(SHAPE, batch_size=1)
    t = layers.Activation("tanh")(x)
    s = layers.Activation("sigmoid")(x)
    m = layers.Multiply()([t, s])                                            # 64 x 64
    up = layers.UpSampling2D(2, interpolation="bilinear")(m)                  # 128 x 128
    big = layers.Activation("tanh")(up)
    down = layers.MaxPooling2D(2)(big)                                        # 64 x 64
    smooth = layers.AveragePooling2D(3, strides=1, padding="same")(m)
    joined = layers.Add()([down, smooth])
    gate = layers.Activation("sigmoid")(joined)
    up2 = layers.UpSampling2D(2, interpolation="bilinear")(gate)              # 128 x 128
    pooled = layers.AveragePooling2D(2)(layers.Activation("tanh")(up2))       # 64 x 64
    out = layers.Add()([layers.Multiply()([pooled, gate]), layers.MaxPooling2D(3, strides=1, padding="same")(t)])
    return tf.keras.Model(x, out)


def write(path: Path) -> None:
    """Build the int8 model and write `path` atomically (a temporary name, then os.replace)."""
    from benchmarks.keras_tflite import convert

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(convert(build_model(), SHAPE, "int8"))
    os.replace(tmp, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the .tflite file to write")
    write(parser.parse_args(argv).out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
