"""simhash_nb: near-duplicate text detection with SimHash and Numba."""
