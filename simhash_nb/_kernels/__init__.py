"""Numba kernels: arrays in, arrays out. No pandas, no Python objects, no I/O.

Every kernel here has a slow reference twin in ``tests/naive.py``.
"""

from .cache import cache_is_cold

__all__ = ["cache_is_cold"]
