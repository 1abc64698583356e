"""Reproducible web-server benchmarks: the harness and its Sphinx extension."""

__version__ = "0.2.0"  # as pyproject.toml says
