"""The version of accelsim: design-point ids hash it, reports and `--version` print it."""

__version__ = "0.1.0"
