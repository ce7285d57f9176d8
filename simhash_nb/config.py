"""Tunables in one place (as in STUMPY's ``config``): defaults, and a reset."""

from __future__ import annotations

from typing import Any

_DEFAULTS: dict[str, Any] = {
    # hamming_matrix refuses outputs larger than this many bytes.
    "max_matrix_bytes": 1 << 30,
    # Slots per parallel task for pair output before the kernel is re-run at the exact size.
    "pairs_initial_capacity": 1 << 14,
    # near_duplicates refuses to return more pairs than this (use clusters instead).
    "max_pairs": 100_000_000,
    # Documents per parallel chunk are chosen so each thread gets this many chunks.
    "chunks_per_thread": 8,
}

config: dict[str, Any] = dict(_DEFAULTS)
"""Current settings; change entries in place, restore them with :func:`reset_config`."""


def reset_config() -> None:
    """Restore every tunable to its default.

    Examples
    --------
    >>> from simhash_nb.config import config, reset_config
    >>> config["max_pairs"] = 10
    >>> reset_config(); config["max_pairs"]
    100000000
    """
    config.clear()
    config.update(_DEFAULTS)
