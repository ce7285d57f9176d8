"""Benchmarks: run all with ``make bench`` (``python -m benchmarks.run``)."""
