"""numpydoc entries shared by the Series and DataFrame accessors' methods."""

__all__ = ["ACCESSOR_PARAMETERS"]

ACCESSOR_PARAMETERS = {
    "column": """\
column : str, optional
    A text or fingerprint column (default: ``"simhash"`` if the frame has that
    fingerprint column, else ``"text"``).""",
    "no_column": "KeyError\n    If ``column`` is not in the frame.",
    "k": """\
k : int, optional
    Largest Hamming distance (inclusive) that links two rows; default from
    ``similarity`` (0.7: k = 12 at 64 bits, 25 at 128).""",
    "threshold": """\
threshold : float, optional
    Instead, link texts whose shingle sets have Jaccard similarity at least this
    (verified exactly; a text column only), as in
    :func:`simhash_nb.near_duplicate_texts`.""",
    "keep": """\
keep : {"first", "last", False}
    Which row of each cluster stays; ``False`` keeps only rows without any near
    duplicate (as in ``drop_duplicates``). Rows with a missing value always stay.""",
}
"""numpydoc entries shared by the Series and DataFrame accessors' methods (``{{name}}``
lines, filled by :func:`~simhash_nb._core.docstrings.shared_docs`)."""
