"""simhash_nb: near-duplicate text detection with Charikar's SimHash, compiled with Numba.

Examples
--------
>>> import simhash_nb as sh
>>> fps = sh.fingerprint(["the cat sat on the mat", "the cat sat on a mat", "something else"])
>>> sh.hamming(fps[0], fps[1]) < sh.hamming(fps[0], fps[2])
True
"""

from .config import config, reset_config
from .features import FeatureBatch, features
from .fingerprint import fingerprint, fingerprint_features, make_spec
from .hamming import hamming, hamming_matrix, pairs_within
from .pairs import Pairs
from .spec import FingerprintSpec, SpecMismatchError, check_compatible

__version__ = "0.1.0"

__all__ = [
    "FeatureBatch",
    "features",
    "fingerprint",
    "fingerprint_features",
    "make_spec",
    "FingerprintSpec",
    "Pairs",
    "SpecMismatchError",
    "check_compatible",
    "config",
    "hamming",
    "hamming_matrix",
    "pairs_within",
    "reset_config",
]
