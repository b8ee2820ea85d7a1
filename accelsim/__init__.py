"""accelsim: virtual accelerators, cost simulation and latency reports for TFLite delegates."""

__version__ = "0.1.0"
