"""Near-duplicate search: permutation tables, their cost model, and :func:`near_duplicates`.

The pigeonhole method (Manku, Jain and Das Sarma, "Detecting near-duplicates for web
crawling", WWW 2007): split the ``bits`` of a fingerprint into ``b > k`` blocks. Two
fingerprints within ``k`` bits differ in at most ``k`` blocks, so they agree exactly on
at least ``b - k``. Each choice of ``b - k`` blocks is one *table*; rows that share a
table's key (the chosen blocks) are its candidates, verified with popcount.

Modules, bottom up: ``layout`` (blocks, keys, sort), ``design`` (cost model),
``groups`` (identical fingerprints), ``families`` (pigeonhole and sampled key
masks, and their recall), ``pace`` (work slices sized by time, so Ctrl-C is answered
between kernel calls), ``dense`` (tables whose entries carry the fingerprint), ``cross``
(new rows against stored ones), ``collector``, ``engine`` (the internal API that
``index``, ``clusters`` and ``distributed`` use), ``options`` (validated options, the
cost warning), ``api`` (the public functions).
"""

from .api import near_duplicates
from .design import TableDesign, table_design
from .engine import TooManyPairsError
from .options import SearchCostWarning

__all__ = ["SearchCostWarning", "TableDesign", "TooManyPairsError", "near_duplicates",
           "table_design"]
