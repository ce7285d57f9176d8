"""simhash_nb: near-duplicate text detection with Charikar's SimHash, compiled with Numba.

Examples
--------
>>> import simhash_nb as sh
>>> fps = sh.fingerprint(["the cat sat on the mat", "the cat sat on a mat", "something else"])
>>> bool(sh.hamming(fps[0], fps[1]) < sh.hamming(fps[0], fps[2]))
True
"""

import importlib as _importlib
import sys as _sys

from ._core.batch import FeatureBatch
from ._core.clusters import ChainingWarning, clusters, dedupe
from ._core.evaluate import Recommendation, jaccard, jaccard_pairs, recommend_k, threshold_table
from ._core.features import features, fit_idf
from ._core.fingerprint import fingerprint, fingerprint_features
from ._core.hamming import hamming, hamming_matrix, pairs_within
from ._core.idf import IdfTable
from ._core.index import Matches, SimhashIndex
from ._core.pairs import Pairs
from ._core.search import (
    SearchCostWarning,
    TableDesign,
    TooManyPairsError,
    near_duplicates,
    table_design,
)
from ._core.similarity import k_for_similarity, similarity_for_k
from ._core.spec import FingerprintSpec, SpecMismatchError, check_compatible, make_spec
from ._core.verified import SimilarPairs, cluster_texts, dedupe_texts, near_duplicate_texts
from ._retired import RetiredModule as _RetiredModule
from .accessors import install as _install_accessors
from .config import config, reset_config

# The module paths of the flat layout before ``_core/`` are retired: four of them
# (features, fingerprint, hamming, clusters) name public functions of the package, so
# ``import simhash_nb.features as f`` could never give a module. Each old path imports a
# stand-in that warns (DeprecationWarning) on use and says where the names went.
_RETIRED = ("spec", "features", "fingerprint", "evaluate", "hamming", "pairs", "index",
            "clusters", "search")
for _old in _RETIRED:
    _sys.modules.setdefault(f"{__name__}.{_old}", _RetiredModule(_old))
    globals().setdefault(_old, _sys.modules[f"{__name__}.{_old}"])  # sh.spec, sh.index, ...
del _old

__version__ = "0.1.0"

_LAZY_MODULES = ("datasets", "distributed", "plotting", "jieba_features", "streaming")
# public functions of modules with heavy imports: name -> module
_LAZY_ATTRS = {"read_parquet": "io", "write_parquet": "io",
               "fingerprint_sparse": "sklearn", "SimhashVectorizer": "sklearn",
               "window_fingerprints": "_core.windows", "containment": "_core.windows",
               "Windows": "_core.windows",
               "near_duplicate_shards": "streaming", "cluster_shards": "streaming",
               "dedupe_shards": "streaming", "CorpusStore": "streaming",
               "MemoryLimitError": "_core.pipeline",
               "prepare": "_core.prepare", "PrepareReport": "_core.prepare"}

# Series.simhash / DataFrame.simhash, registered when pandas is imported (not before)
_install_accessors()


def __getattr__(name):
    # submodules with heavy imports (pandas, matplotlib, dask) load on first use
    if name in _LAZY_MODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_ATTRS:
        return getattr(_importlib.import_module(f"{__name__}.{_LAZY_ATTRS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "prepare",
    "PrepareReport",
    "ChainingWarning",
    "SearchCostWarning",
    "SimilarPairs",
    "MemoryLimitError",
    "CorpusStore",
    "near_duplicate_shards",
    "cluster_shards",
    "dedupe_shards",
    "near_duplicate_texts",
    "cluster_texts",
    "dedupe_texts",
    "k_for_similarity",
    "similarity_for_k",
    "Matches",
    "SimhashIndex",
    "TableDesign",
    "TooManyPairsError",
    "clusters",
    "dedupe",
    "near_duplicates",
    "table_design",
    "FeatureBatch",
    "IdfTable",
    "Recommendation",
    "SimhashVectorizer",
    "containment",
    "features",
    "fingerprint",
    "fingerprint_features",
    "fingerprint_sparse",
    "fit_idf",
    "make_spec",
    "FingerprintSpec",
    "Pairs",
    "SpecMismatchError",
    "check_compatible",
    "config",
    "hamming",
    "hamming_matrix",
    "jaccard",
    "jaccard_pairs",
    "pairs_within",
    "read_parquet",
    "recommend_k",
    "reset_config",
    "threshold_table",
    "window_fingerprints",
    "Windows",
    "write_parquet",
]
