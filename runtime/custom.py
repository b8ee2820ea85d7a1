"""Custom-operator options: the FlexBuffer maps converters write into `custom_options`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flatbuffers import flexbuffers

from accelsim.runtime.errors import ModelError


def decode_options(buffer: bytes | None) -> dict[str, Any]:
    """The FlexBuffer map in a custom op's options as a dict ({} when there are none).

    Raises:
        ModelError: the bytes are not a FlexBuffer, or hold something other than a map.
    """
    if not buffer:
        return {}
    try:
        value = flexbuffers.Loads(bytes(buffer))
    except Exception as exc:  # flexbuffers raises ValueError/IndexError/struct.error on garbage
        raise ModelError(f"custom options ({len(buffer)} bytes) are not a valid FlexBuffer: {exc}") from None
    if not isinstance(value, dict):
        raise ModelError(f"custom options hold a FlexBuffer {type(value).__name__}, expected a map")
    return value


def encode_options(options: Mapping[str, Any]) -> bytes:
    """A FlexBuffer map of `options`, as TensorFlow's converter writes custom options."""
    try:
        return bytes(flexbuffers.Dumps(dict(options)))
    except Exception as exc:
        raise ModelError(f"cannot encode custom options {dict(options)!r} as a FlexBuffer: {exc}") from None
