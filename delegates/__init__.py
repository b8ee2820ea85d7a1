"""The delegate mechanism: TFLite's SimpleDelegate API, graph partitioning and delegate loading."""

from accelsim.delegates.api import (
    DelegateKernelError,
    DelegateNodeView,
    DelegateOptions,
    DelegateParams,
    SimpleDelegate,
    SimpleDelegateKernel,
    TensorView,
    delegation_report,
    get_node_and_registration,
    node_view,
)
from accelsim.delegates.partition import GraphNode, NodeSubset, Selection, partition_graph, select_partitions
from accelsim.delegates.registry import (
    DelegateProvider,
    DelegateRegistry,
    OptionSpec,
    create_delegate,
    load_delegate,
    parse_option_strings,
    provider_names,
    register_provider,
)
from accelsim.runtime.errors import DelegateError

__all__ = [
    "DelegateError",
    "DelegateKernelError",
    "DelegateNodeView",
    "DelegateOptions",
    "DelegateParams",
    "DelegateProvider",
    "DelegateRegistry",
    "GraphNode",
    "NodeSubset",
    "OptionSpec",
    "Selection",
    "SimpleDelegate",
    "SimpleDelegateKernel",
    "TensorView",
    "create_delegate",
    "delegation_report",
    "get_node_and_registration",
    "load_delegate",
    "node_view",
    "parse_option_strings",
    "partition_graph",
    "provider_names",
    "register_provider",
    "select_partitions",
]
