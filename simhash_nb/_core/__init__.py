"""LAYER 2, the core API: numpy in, numpy out (a private path, as numpy 2's ``_core``).

Validates input, picks kernels (``simhash_nb._kernels``), holds the spec, the index and
the evaluation. Nothing here imports a face (pandas accessors, scikit-learn, CLI, plotting,
Dask) or their heavy libraries at module level.
"""
