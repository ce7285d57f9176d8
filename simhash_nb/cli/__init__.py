"""The ``simhash-nb`` command (also ``python -m simhash_nb``); ``main`` is the entry point.

Commands
--------
``fingerprint IN OUT``  add a fingerprint column to every row
``pairs IN... OUT``     every pair of rows within ``k`` bits: ``left``, ``right``, ``distance``;
                        with ``--threshold J``, every pair with shingle Jaccard >= J,
                        verified, streamed over shards within ``--memory-limit``
                        (``--save`` / ``--against`` a corpus store)
``dedupe IN... OUT``    the rows left after dropping near duplicates
``clusters IN... OUT``  every row with the label of its near-duplicate cluster
``fit-idf IN OUT``      an IDF table for ``--weights tfidf --idf OUT``
``demo``                the whole job on bundled sample corpora
``tune IN``             precision/recall per threshold against labels
``prepare``             compile the Numba kernels ahead of time (for images and clusters)

Inputs are CSV, JSON Lines (both optionally ``.gz``) or parquet; outputs are chosen by
extension. Inputs stream in batches with a progress bar on stderr. Outputs are written
to a temporary file and renamed when complete, so a failed run leaves no partial file.
User mistakes (a missing column, an unreadable file, an unknown extension) end with a
one-line message and exit status 2.
"""

from .main import console_main, main
from .parser import DEMO_NORMALIZE, build_parser
from .usage import EXIT_USAGE, PROG, UsageError

__all__ = ["DEMO_NORMALIZE", "EXIT_USAGE", "PROG", "UsageError", "build_parser", "console_main",
           "main"]
