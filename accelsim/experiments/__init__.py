"""Experiments: the experiment file, design points, executors (serial, pool, Dask), the SQLite store, the
pipeline `run_experiment`."""
