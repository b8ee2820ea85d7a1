"""accelsim: virtual accelerators, cost simulation and latency reports for TFLite delegates.

The public API is the names below, imported from the package itself; the modules behind them may
move (docs/architecture.md says where each layer lives), these names do not::

    import accelsim

    configs = accelsim.shipped_configs()              # shipped hardware configs by name -> path
    system = accelsim.load_system(configs["kryo385_cpu"], [configs["edgetpu_usb"]])
    sim = accelsim.simulate_model("model.tflite", system)
    print(sim.latency * 1e6, "µs")
    print(accelsim.sensitivity("model.tflite", system).verdict)

    experiment = accelsim.load_experiment("examples/default/default.yaml")
    accelsim.run_experiment(experiment, "reports/default")

    interpreter = accelsim.Interpreter(model_path="model.tflite")   # LiteRT's Interpreter API, in NumPy

A name is imported when it is first used (PEP 562's module `__getattr__`), so `import accelsim` and
the command line's start-up load only what they use.
"""

from __future__ import annotations

import importlib

from accelsim.core.version import __version__

# Every public name and the module that defines it. tests/test_api.py pins this list.
API = {
    "Interpreter": "accelsim.runtime.interpreter",
    "load_model": "accelsim.runtime.read",
    "load_hardware": "accelsim.hardware.config",
    "load_system": "accelsim.hardware.config",
    "shipped_configs": "accelsim.experiments.experiment",
    "ConfigError": "accelsim.hardware.config_yaml",
    "Infeasible": "accelsim.core.feasibility",
    "analyze": "accelsim.simulation.analysis",
    "simulate_model": "accelsim.simulation.analysis",
    "simulate_analysis": "accelsim.simulation.analysis",
    "sensitivity": "accelsim.insight.sensitivity",
    "whatif": "accelsim.insight.whatif",
    "run_benchmark": "accelsim.tools.benchmark",
    "load_experiment": "accelsim.experiments.experiment",
    "run_experiment": "accelsim.experiments.run",
}
__all__ = ["__version__", *API]


def __getattr__(name: str):
    """The public name `name`, imported from its module on first use."""
    module = API.get(name)
    if module is None:
        raise AttributeError(f"module 'accelsim' has no attribute {name!r}; its public names: {', '.join(__all__)}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
