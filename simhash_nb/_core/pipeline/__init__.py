"""The verified path as named stages, shared by its runners (in memory, streaming from
shards, Dask):

``read`` (batches of texts) → ``shingle + fingerprint`` (:func:`fingerprint_batches`:
binary-weight 128-bit SimHash of the shingles, which go to a :class:`ShingleStore`) →
``candidates`` (:func:`~simhash_nb._core.search.api.candidate_waves` at the ``k`` of
:func:`choose_k`, waves from a generator) → ``verify`` (exact Jaccard,
:func:`verify_wave`) → ``pairs`` / ``clusters`` / ``dedupe`` (:mod:`.run`).

Memory is a :class:`MemoryBudget`: it sizes the batches, decides when the shingles go to
a temporary file, and how many candidates are verified at once.
"""

from .budget import MemoryBudget, MemoryLimitError, available_memory, format_size, parse_size
from .stages import Shingler, choose_k, fingerprint_batches, k_for, sampled_rows, verify_wave
from .store import ShingleStore

__all__ = ["MemoryBudget", "MemoryLimitError", "ShingleStore", "Shingler",
           "available_memory", "choose_k", "fingerprint_batches", "format_size", "k_for",
           "parse_size", "sampled_rows", "verify_wave"]
