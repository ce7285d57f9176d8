"""Permutation-table (pigeonhole) search kernels: the family's overview and its names.

A *table* is a sorted array of 64-bit *words* ``key << (extra_bits + row_bits) |
extra << row_bits | row``: the key is made of some blocks of the fingerprint (the
table's *selection*), ``extra`` holds a few bits from outside the key, and ``row`` is
the row's position. Rows with equal keys form a *run*; only pairs inside a run are
candidates, and the extra bits reject most of them without touching the fingerprints
(their differing bits are at most the distance). Sorting is an MSD radix sort by the
key bits only (a parallel partition on the top bits, then cache-sized partitions sorted
by LSD radix) and keeps the row order, so rows ascend in a run.

A pair within ``k`` bits agrees on at least ``b - k`` of the ``b`` blocks, so it shares
the key of at least one table. It is reported only by its *owner*: the table whose
selection is the first ``b - k`` agreeing blocks (tables are enumerated in
lexicographic order, so this is the first table whose key the pair matches). No
global hash set is needed to report each pair once.

Key and extra bits are gathered by *pieces* ``(word, shift, mask, pos)``: bits
``(fps[i, word] >> shift) & mask`` go to bit ``pos`` of a 128-bit value (pieces never
straddle a word; padding pieces have ``mask == 0``). Keys wider than ``key_bits`` are
hashed (splitmix64) to their top ``key_bits`` bits; equal blocks still give equal keys.

Fingerprints arrive as ``uint64[n, words]`` (a 64-bit set has one word). The hot
loops are written out in each kernel: a call that passes arrays costs reference
counting per call.

The kernels live by family: ``table_keys`` (words, keys, ownership), ``radix`` (the
sort), ``table_scan`` (runs and candidate pairs), ``groups`` (identical rows) and
``index_query`` (probing a stored table); this module re-exports them.
"""

from .groups import expand_groups, expand_pairs, group_identical, group_members
from .index_query import lookup_ids, query_run
from .radix import sort_table, sort_table_serial
from .table_keys import is_owner, make_words, mix64, row_key
from .table_scan import scan_range, scan_runs, search_tables

__all__ = ["expand_groups", "expand_pairs", "group_identical", "group_members", "is_owner",
           "lookup_ids", "make_words", "mix64", "query_run", "row_key", "scan_range",
           "scan_runs", "search_tables", "sort_table", "sort_table_serial"]
