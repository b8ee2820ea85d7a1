"""Results and reports: records and derived numbers, the report document and its renderers, plots."""
