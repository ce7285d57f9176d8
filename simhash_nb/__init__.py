"""simhash_nb: near-duplicate text detection with Charikar's SimHash, compiled with Numba.

Examples
--------
>>> import simhash_nb as sh
>>> fps = sh.fingerprint(["the cat sat on the mat", "the cat sat on a mat", "something else"])
>>> bool(sh.hamming(fps[0], fps[1]) < sh.hamming(fps[0], fps[2]))
True
"""

from .accessors import install as _install_accessors
from .clusters import clusters, dedupe
from .config import config, reset_config
from .evaluate import Recommendation, jaccard, jaccard_pairs, recommend_k, threshold_table
from .features import FeatureBatch, features
from .fingerprint import fingerprint, fingerprint_features, make_spec
from .hamming import hamming, hamming_matrix, pairs_within
from .index import Matches, SimhashIndex
from .jieba_features import IdfTable, fit_idf
from .pairs import Pairs
from .search import TableDesign, TooManyPairsError, near_duplicates, table_design
from .spec import FingerprintSpec, SpecMismatchError, check_compatible

__version__ = "0.1.0"

_LAZY_MODULES = ("datasets", "distributed", "plotting")
# public functions of modules with heavy imports: name -> module
_LAZY_ATTRS = {"read_parquet": "io", "write_parquet": "io",
               "fingerprint_sparse": "sklearn", "SimhashVectorizer": "sklearn",
               "window_fingerprints": "windows", "containment": "windows"}

# Series.simhash / DataFrame.simhash, registered when pandas is imported (not before)
_install_accessors()


def __getattr__(name):
    # submodules with heavy imports (pandas, matplotlib, dask) load on first use
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_ATTRS:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY_ATTRS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
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
    "write_parquet",
]
