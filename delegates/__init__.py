"""The delegate mechanism: TFLite's SimpleDelegate API, graph partitioning and delegate loading.

A name is imported from its module when first used (PEP 562), so that importing one module of this
package (the delegate spec, say) does not load the API, the partitioner and the runtime's kernels.
"""

from __future__ import annotations

import importlib

# Every public name and the module that defines it.
_NAMES = {
    "DelegateError": "accelsim.runtime.errors",
    "DelegateKernelError": "accelsim.delegates.api",
    "DelegateNodeView": "accelsim.delegates.api",
    "DelegateOptions": "accelsim.delegates.api",
    "DelegateParams": "accelsim.delegates.api",
    "DelegateProvider": "accelsim.delegates.registry",
    "DelegateRegistry": "accelsim.delegates.registry",
    "GraphNode": "accelsim.delegates.partition",
    "NodeSubset": "accelsim.delegates.partition",
    "OptionSpec": "accelsim.delegates.registry",
    "Selection": "accelsim.delegates.partition",
    "SimpleDelegate": "accelsim.delegates.api",
    "SimpleDelegateKernel": "accelsim.delegates.api",
    "TensorView": "accelsim.delegates.api",
    "create_delegate": "accelsim.delegates.registry",
    "delegation_report": "accelsim.delegates.api",
    "get_node_and_registration": "accelsim.delegates.api",
    "load_delegate": "accelsim.delegates.registry",
    "node_view": "accelsim.delegates.api",
    "parse_option_strings": "accelsim.delegates.registry",
    "partition_graph": "accelsim.delegates.partition",
    "provider_names": "accelsim.delegates.registry",
    "register_provider": "accelsim.delegates.registry",
    "select_partitions": "accelsim.delegates.partition",
}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    """The public name `name`, imported from its module on first use."""
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'accelsim.delegates' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
