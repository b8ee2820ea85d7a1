"""Simulation: a system's delegates applied to a model, every node costed on its device, one inference
scheduled; placement searches and the shared analysis over them (docs/architecture.md)."""
