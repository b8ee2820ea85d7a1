"""The shipped hardware configs, installed as `accelsim.hw_configs` package data (`--hw edgetpu_usb` reads them)."""

# The host of the shipped experiments and of every verb's --host: the Pixel 3's big cores as TFLite runs
# them with 4 threads, checked against TFLite's published Pixel 3 table (benchmarks/cost_vs_pixel3.py).
DEFAULT_HOST = "kryo385_cpu"
