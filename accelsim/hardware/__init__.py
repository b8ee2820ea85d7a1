"""Hardware: configs read from YAML into checked devices, the kinds and their cost models, memory levels, energy,
sweep ranges and limits. Imports only accelsim.core and accelsim.ops (docs/architecture.md)."""
