"""Workloads beyond one inference: streams of frames, models cut into pipeline segments."""
