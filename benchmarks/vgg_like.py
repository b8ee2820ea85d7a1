"""Build a small VGG-like int8 model: a weight-heavy graph that Vela compiles in seconds (needs only TensorFlow).

VGG16 at 224x224 takes Vela many minutes; this keeps VGG's shape (five stacks of 3x3 convolutions,
64 to 512 channels, each stack closed by a 2x2 max pool, then a fully connected head) at 96x96,
with a 2048-wide head: 15 M convolution and 16 M fully connected weights over 2.8 G MACs, so on
an Ethos-U65 the weights' DRAM traffic is as long as the compute. `benchmarks/cost_vs_vela.py`
uses it as a held-out row (`--vela-cache`). Random weights, batch 1, full-integer int8 with int8
input and output, converted as `keras_tflite.py` converts:

    python benchmarks/vgg_like.py ~/.cache/accelsim/vela/vgg_like_96_int8.tflite

The file is written under a temporary name and renamed, so a reader never sees half of it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: `benchmarks.*` imports need the repository root
    sys.path.insert(0, str(ROOT))

SIZE = 96
STACKS = ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3))  # (channels, 3x3 convolutions) per stack
HEAD = (2048, 2048, 1000)  # fully connected widths; the last is the classifier


def build_tflite() -> bytes:
    """The VGG-like graph at SIZE x SIZE x 3 as int8 .tflite bytes."""
    import tensorflow as tf

    from benchmarks.keras_tflite import convert

    tf.keras.utils.set_random_seed(0)
    shape = (SIZE, SIZE, 3)
    x = inputs = tf.keras.Input(shape, batch_size=1)
    for channels, convs in STACKS:
        for _ in range(convs):
            x = tf.keras.layers.Conv2D(channels, 3, padding="same", activation="relu")(x)
        x = tf.keras.layers.MaxPooling2D(2)(x)
    x = tf.keras.layers.Flatten()(x)
    for width in HEAD[:-1]:
        x = tf.keras.layers.Dense(width, activation="relu")(x)
    x = tf.keras.layers.Dense(HEAD[-1], activation="softmax")(x)
    return convert(tf.keras.Model(inputs, x), shape, "int8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the .tflite file to write")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(f"{args.out.name}.{os.getpid()}.tmp")
    tmp.write_bytes(build_tflite())
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
