"""Systems and delegates from the tools' choices: a host and accelerators named by path or shipped name.

`accelsim benchmark`, `diff`, `compare`, `whatif` and `inspect` name hardware as `--host`,
`--hw` and `--delegate`; these functions turn those names into the configs, the `System` and
the delegates (the command line only parses them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from accelsim.delegates.accelerator import AcceleratorDelegate
from accelsim.delegates.registry import DelegateRegistry, OptionSpec, parse_option_strings
from accelsim.experiments.experiment import resolve_config
from accelsim.hardware.config import System, accelerator_policy, apply_overrides, load_hardware, load_system
from accelsim.hardware.config_yaml import ConfigError
from accelsim.hw_configs import DEFAULT_HOST

# The microcontroller an Ethos-U sits beside in Arm's reference systems, by the shipped NPU configs'
# name prefix: Corstone-300 pairs a Cortex-M55 with an Ethos-U55, Corstone-310 a Cortex-M85 with an
# Ethos-U55 or U65 (the U65 is only in Corstone-310 here, as Arm's Corstone-310 names it).
CORSTONE_HOSTS = (("ethos_u55_", "cortex_m55", "Corstone-300"), ("ethos_u65_", "cortex_m85", "Corstone-310"))


def corstone_host(hw: Sequence[str]) -> str | None:
    """The Corstone host of accelerators all named like shipped Ethos-U configs (None otherwise, or with none)."""
    names = [Path(h).stem for h in hw]
    for prefix, host, _ in CORSTONE_HOSTS:
        if names and all(n.startswith(prefix) for n in names):
            return host
    if names and all(n.startswith(("ethos_u55_", "ethos_u65_")) for n in names):
        return "cortex_m85"  # Corstone-310 takes both NPUs
    return None


def default_host(hw: Sequence[str]) -> tuple[str, str | None]:
    """The host a verb uses when --host is not given, and why when it is not DEFAULT_HOST.

    Ethos-U configs get the microcontroller of their Corstone system (an Ethos-U always sits beside a
    Cortex-M), everything else the shipped default host.
    """
    host = corstone_host(hw)
    if host is None:
        return DEFAULT_HOST, None
    system = next(name for prefix, h, name in CORSTONE_HOSTS if h == host)
    return host, (f"host {host} (the {system} system's Cortex-M, the default beside "
                  f"{', '.join(Path(h).stem for h in hw)}; --host names another)")


def config_path(value: str) -> str:
    """A hardware config named as a path (relative to the working folder) or a shipped config's name."""
    return resolve_config(value, Path.cwd())


def system_from_options(host: str | None, hw: Sequence[str], max_parts: int | None = None,
                        min_nodes: int | None = None) -> System:
    """The host (None: `default_host` of `hw`) and accelerators named, with the partition options given applied
    to every accelerator.

    Raises:
        ConfigError: a config cannot be found, read or combined with the others.
    """
    host = host if host is not None else default_host(hw)[0]
    system = load_system(config_path(host), [config_path(h) for h in hw])
    if system.nnapi is not None:
        return _nnapi_options(system, max_parts, min_nodes)
    changes = {}
    if max_parts is not None:
        changes["partition.max_delegated_partitions"] = max_parts
    if min_nodes is not None:
        changes["partition.min_nodes_per_partition"] = min_nodes
    if changes:
        system = replace(system, accelerators=tuple(apply_overrides(a, changes) for a in system.accelerators))
    return system


def _nnapi_options(system: System, max_parts: int | None, min_nodes: int | None) -> System:
    """An NNAPI system with --max-delegated-partitions as NNAPI's max_number_delegated_partitions (0: no limit);
    NNAPI has no minimum partition size (nnapi_delegate.h), so --min-nodes-per-partition is refused."""
    if min_nodes is not None:
        raise ConfigError([f"{system.nnapi.source}: --min-nodes-per-partition: TFLite's NNAPI delegate has no "
                           "minimum partition size; its option is max_number_delegated_partitions "
                           "(--max-delegated-partitions)"])
    if max_parts is None:
        return system
    spec = system.nnapi.spec
    spec = replace(spec, options=replace(spec.options, max_number_delegated_partitions=max_parts))
    return replace(system, nnapi=replace(system.nnapi, spec=spec))


def delegate_registry() -> DelegateRegistry:
    """The providers `--delegate` knows: `accelerator` (a hardware config) plus installed plugins."""
    registry = DelegateRegistry()
    registry.register_provider(
        "accelerator",
        lambda config: AcceleratorDelegate(accelerator_policy(load_hardware(config_path(config)))),
        {"config": OptionSpec(str, "edgetpu_usb", "hardware config: a YAML path or a shipped name")},
        help="a virtual accelerator described by a hardware config")
    return registry


def delegates_from_options(hw: Sequence[str], named: Sequence[tuple[str, list[str]]]) -> list:
    """Delegates for the accelerator configs `hw`, then for each (provider name, option strings) of `named`."""
    out = [AcceleratorDelegate(accelerator_policy(load_hardware(config_path(h)))) for h in hw]
    registry = delegate_registry()
    for name, options in named:
        out.append(registry.create_delegate(name, **parse_option_strings(options)))
    return out
