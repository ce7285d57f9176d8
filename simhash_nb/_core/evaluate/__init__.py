"""Threshold tuning: Jaccard ground truth, precision and recall per Hamming threshold.

"Why k = 3?" depends on the texts. This module gives the pieces to answer it on yours:

- :func:`jaccard` — exact Jaccard similarity of the documents' feature sets (the same
  shingles :func:`simhash_nb.features` makes), for given pairs or all pairs;
- :func:`jaccard_pairs` — every pair above a Jaccard threshold, with candidates from
  MinHash bands or a loose SimHash threshold when all pairs would be too many;
- :func:`threshold_table` — true/false positives, precision, recall and F1 for every
  Hamming threshold ``k``, against Jaccard pairs, cluster labels or labelled pairs;
- :func:`recommend_k` — the threshold that meets a target, and why.
"""

from .recommend import Recommendation, recommend_k
from .shingle_jaccard import jaccard, jaccard_pairs, minhash_bands
from .thresholds import threshold_table

__all__ = ["Recommendation", "jaccard", "jaccard_pairs", "minhash_bands", "recommend_k",
           "threshold_table"]
