"""Insight: what to change. Sensitivity to every design parameter, advice built on it, and what-if claims."""
