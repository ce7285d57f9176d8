"""LAYER 3 support: the pandas/Arrow form of fingerprints, shared by every face
(accessors, io, CLI, Dask, scikit-learn). One module a concern:

- :mod:`.columns` — fingerprint dtypes, pandas arrays and Arrow columns (64 and 128 bits);
- :mod:`.hex` — hexadecimal fingerprints in text columns (CSV, JSON Lines);
- :mod:`.attrs` — the spec in ``attrs``, refusing ``pd.concat`` of different specs;
- :mod:`.fingerprints` — a Series' fingerprints (:class:`Prints`) and the pairs between rows;
- :mod:`.labels` — cluster labels and dedupe masks from fingerprints;
- :mod:`.verified` — pairs and labels from the verified (exact Jaccard) road.

The names are re-exported here: the faces import ``from simhash_nb._frames import X``.
pandas is imported at the top of these modules (``import simhash_nb`` imports none of
them: the accessors load when pandas does).
"""

# pandas first, before any module of this package: the first import of pandas registers
# the accessors (an import hook), and they import these modules, which must not be half
# imported then
import pandas  # noqa: F401

from .attrs import SPEC_ATTR, ColumnSpecs, SpecJSON, column_specs, spec_of, spec_record
from .columns import (
    FINGERPRINT_COLUMN,
    InputError,
    arrow_of,
    binary16_to_words,
    fingerprint_array,
    fingerprint_kind,
    fingerprint_values,
    fingerprints_from_arrow,
    fingerprints_to_arrow,
    words_to_binary16,
)
from .fingerprints import (
    SEARCH_OPTIONS,
    Prints,
    fingerprint_series,
    pairs_frame,
    prints,
    search_pairs,
    split_search,
    unique_index,
)
from .hex import as_fingerprints, hex_width, parse_hex
from .labels import cluster_positions, cluster_series, keep_mask
from .verified import (
    verified_cluster_positions,
    verified_frame,
    verified_keep_mask,
    verified_labels,
    verified_pairs,
)

__all__ = [
    "FINGERPRINT_COLUMN", "SEARCH_OPTIONS", "SPEC_ATTR", "ColumnSpecs", "InputError", "Prints",
    "SpecJSON", "arrow_of", "as_fingerprints", "binary16_to_words", "cluster_positions",
    "cluster_series", "column_specs", "fingerprint_array", "fingerprint_kind",
    "fingerprint_series", "fingerprint_values", "fingerprints_from_arrow",
    "fingerprints_to_arrow", "hex_width", "keep_mask", "pairs_frame", "parse_hex", "prints",
    "search_pairs", "spec_of", "spec_record", "split_search", "unique_index", "verified_frame",
    "verified_cluster_positions", "verified_keep_mask", "verified_labels", "verified_pairs",
    "words_to_binary16",
]
