"""Tools: one model benchmarked or costed, systems compared, what a model holds, what `validate` finds."""
