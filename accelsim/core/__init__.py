"""Foundation: quantities with units, atomic files, the result record, traces, schedules, Pareto fronts, the
infeasible verdict and the glossary. Imports nothing else of accelsim (docs/architecture.md)."""
