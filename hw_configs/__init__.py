"""The shipped hardware configs, installed as `accelsim.hw_configs` package data (`--hw edgetpu_usb` reads them)."""
