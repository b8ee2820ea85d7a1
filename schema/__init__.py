"""TFLite model schema (tflite.fbs, wire-compatible with TFLite v3) and flatc's Python for it."""
