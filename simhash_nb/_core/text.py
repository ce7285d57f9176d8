"""Text input: any sequence of strings to Arrow-style UTF-8 buffers, normalised in pyarrow."""

from __future__ import annotations

import html
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._kernels.normalize import PUNCT, SPACE, ascii_lower, nonascii_segments, squeeze_chunks
from .._kernels.signatures import read_only
from ..config import config
from .parallel import balanced_chunks, deferred_interrupt
from .unicode import word_classes

_HTML_TAG = r"<[^>]*>"
_HTML_ENTITY = r"&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);"


@dataclass(frozen=True)
class TextBuffers:
    """UTF-8 bytes of all documents and where each starts.

    Document ``i`` is ``data[offsets[i]:offsets[i + 1]]``; ``valid[i]`` is False for a
    missing document (None, NaN, pd.NA), whose slice is empty.
    """

    data: np.ndarray
    offsets: np.ndarray
    valid: np.ndarray

    def __post_init__(self) -> None:
        # the kernels read the texts, never write them: read-only whatever their origin
        # (pyarrow's buffers, or the normalised copy), so each kernel that takes them has
        # one signature to compile, not two (Numba types the flag)
        object.__setattr__(self, "data", read_only(self.data))

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)


def _first_bad_position(values) -> tuple[int, object]:
    for pos, v in enumerate(values):
        if v is None:
            continue
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate
                return pos, v
            continue
        if isinstance(v, float) and v != v:  # NaN
            continue
        if isinstance(v, bytes):
            try:
                v.decode("utf-8")
            except UnicodeDecodeError:
                return pos, v
            continue
        if type(v).__name__ in ("NAType", "NaTType"):
            continue
        return pos, v
    return -1, None


def _bad_input_error(values, start: int = 0) -> Exception:
    pos, v = _first_bad_position(values)
    pos = pos + start if pos >= 0 else pos
    if pos < 0:
        return TypeError("texts must be strings (or None/NaN for missing values)")
    if isinstance(v, bytes):
        return ValueError(f"texts[{pos}] is not valid UTF-8: {v[:40]!r}")
    if isinstance(v, str):
        err = _surrogate(v)
        return ValueError(
            f"texts[{pos}] cannot be encoded as UTF-8: it holds a lone surrogate "
            f"({v[err]!r} at character {err}), as left by decoding bytes with "
            "errors='surrogateescape' or a broken UTF-16 source; clean it first (for "
            "example .encode('utf-8', 'replace').decode())"
        )
    return TypeError(
        f"texts[{pos}] is a {type(v).__name__} ({v!r:.40}), not a string; convert the "
        "column to str first, or mark it missing"
    )


def _surrogate(v: str) -> int:
    return next(i for i, ch in enumerate(v) if 0xD800 <= ord(ch) <= 0xDFFF)


def _check_utf8(arr: pa.Array, start: int) -> None:
    """Refuse a string array whose bytes are not valid UTF-8 (pyarrow does not check
    buffers it was given, and parquet files can hold such strings), naming the first
    bad position (found by bisection: ``log n`` more validations)."""
    try:
        arr.validate(full=True)
        return
    except pa.ArrowInvalid:
        pass
    lo, hi = 0, len(arr)  # the prefix [0, hi) is invalid, [0, lo) is valid
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            arr.slice(0, mid).validate(full=True)
            lo = mid
        except pa.ArrowInvalid:
            hi = mid
    raw = arr.cast(pa.large_binary() if arr.type == pa.large_string() else pa.binary())[lo]
    raise ValueError(f"texts[{start + lo}] is not valid UTF-8: {raw.as_py()[:40]!r}")


def to_arrow(texts, start: int = 0) -> pa.Array:
    """Any sequence of strings (list, numpy, pandas, pyarrow) to one ``large_string`` array.

    Arrow-backed input is used without copying the text (its bytes are checked to be
    UTF-8). Byte strings must be UTF-8. Errors name positions counted from ``start``
    (where a slice of a batch begins). Single strings or byte strings, dicts and sets
    are refused: they are not ordered sequences of texts.
    """
    if isinstance(texts, (str, bytes, bytearray, memoryview)):
        kind = "string" if isinstance(texts, str) else "byte string"
        raise TypeError(f"texts must be a sequence of strings, not a single {kind}; wrap it "
                        "in [ ]")
    if isinstance(texts, (dict, set, frozenset)):
        fix = "list(d.values())" if isinstance(texts, dict) else "sorted(s)"
        raise TypeError(
            f"texts must be an ordered sequence of strings, not a {type(texts).__name__}; "
            f"pass {fix} to say which texts, in which order"
        )
    from_objects = False  # built from Python objects by pa.array: valid UTF-8 already
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        arr = texts
    else:
        values = texts
        if not hasattr(values, "__len__") and not hasattr(values, "__arrow_array__"):
            values = list(values)
        dtype = getattr(values, "dtype", None)
        from_objects = isinstance(values, (list, tuple)) or (
            isinstance(dtype, np.dtype) and dtype.kind == "O")
        arr = None
        if from_objects and len(values) <= SMALL_LIST and "pandas" not in sys.modules:
            arr = str_list_array(values)  # spares a first call Arrow's import of pandas
        try:
            arr = pa.array(values, from_pandas=True) if arr is None else arr
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            raise _bad_input_error(list(values), start) from None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.large_string())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        try:
            return arr.cast(pa.large_string())
        except pa.ArrowInvalid:
            raise _bad_input_error(arr.to_pylist(), start) from None
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        if not from_objects:
            _check_utf8(arr, start)
        return arr if pa.types.is_large_string(t) else arr.cast(pa.large_string())
    raise _bad_input_error(arr.to_pylist(), start)


SMALL_LIST = 4096  # texts: a list below it is encoded here while pandas is not loaded


def str_list_array(values) -> pa.Array | None:
    """A list or tuple of ``str`` as a ``large_string`` array built from its UTF-8 bytes
    (about 1 µs a text, 5x Arrow's own conversion); None if any item is not a ``str``
    or cannot be encoded (a lone surrogate), for Arrow to convert or refuse.

    :func:`to_arrow` takes this road for short lists while pandas is not imported:
    ``pa.array`` imports pandas on its first call (to ask whether the input is a pandas
    object), 0.2-0.3 s of a first ``sh.fingerprint(["..."])`` in a process that never
    uses pandas.

    >>> str_list_array(["a", "ü"]).to_pylist()
    ['a', 'ü']
    >>> str_list_array(["a", None]) is None
    True
    """
    if not all(type(v) is str for v in values):
        return None
    try:
        encoded = [v.encode("utf-8") for v in values]
    except UnicodeEncodeError:
        return None
    n = len(encoded)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, n), out=offsets[1:])
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets),
                                            pa.py_buffer(b"".join(encoded)))


def _utf8_size(v) -> int:
    if isinstance(v, str):
        return len(v.encode("utf-8", "surrogatepass"))
    return len(v) if isinstance(v, bytes) else 0


def _arrow_backed(texts) -> bool:
    """A pandas Series or Index whose strings live in Arrow buffers."""
    dtype = getattr(texts, "dtype", None)
    if not hasattr(texts, "iloc") and not hasattr(texts, "is_monotonic_increasing"):
        return False
    return type(dtype).__name__ == "ArrowDtype" or getattr(dtype, "storage", None) == "pyarrow"


def text_slices(texts, target_bytes: int) -> Iterator[tuple[int, object]]:
    """``(start, piece)``: consecutive pieces of ``texts`` of about ``target_bytes`` each.

    Big batches go through conversion, normalisation and the kernels piece by piece, so
    the working set stays in a few hundred MB. Lists, tuples, numpy arrays and pandas
    Series are cut before they are converted to Arrow (converting millions of Python
    strings at once is itself slower); the piece size in texts comes from the UTF-8
    size of the first 1,024. Arrow arrays are cut at their byte offsets. Anything else
    (an iterator, say) is one piece.
    """
    target_bytes = max(int(target_bytes), 1)
    if _arrow_backed(texts):  # pandas over Arrow: cut the Arrow array (no Python objects)
        texts = to_arrow(texts)
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        arr = to_arrow(texts)
        n = len(arr)
        if n and arr.nbytes > target_bytes:
            offsets = np.frombuffer(arr.buffers()[1], np.int64)[arr.offset:arr.offset + n + 1]
            sizes = offsets - offsets[0] + np.arange(n + 1)  # a text costs at least 1
            cuts = np.searchsorted(sizes, np.arange(target_bytes, sizes[-1], target_bytes))
            bounds = np.unique(np.concatenate(([0], cuts, [n])))
            for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                yield a, arr.slice(a, b - a)
            return
        yield 0, arr
        return
    if hasattr(texts, "iloc"):  # pandas: positional slices
        head = texts.iloc
    elif isinstance(texts, (list, tuple)) or isinstance(texts, np.ndarray) and texts.ndim == 1:
        head = texts
    else:
        yield 0, texts
        return
    n = len(texts)
    sample = head[:1024]
    per_text = max(1.0, sum(_utf8_size(v) for v in sample) / max(len(sample), 1))
    step = max(1024, int(target_bytes / per_text))
    for a in range(0, max(n, 1), step):
        yield a, head[a:a + step]


def _is_ascii(arr: pa.Array) -> bool:
    """True when every byte of the array's data buffer is ASCII (cheap: one numpy pass)."""
    if isinstance(arr, pa.ChunkedArray):
        return all(_is_ascii(c) for c in arr.chunks)
    data = arr.buffers()[2]
    if data is None or data.size == 0:
        return True
    return int(np.frombuffer(data, dtype=np.uint8).max()) < 0x80


def _ascii_lower(arr: pa.Array) -> pa.Array:
    """Lowercase an all-ASCII ``large_string`` array (15x faster than ``utf8_lower``).

    Keeps offsets and validity, because
    ``pyarrow.compute.ascii_lower`` returns an invalid array for sliced input. Done in
    Numba over the data buffer (not numpy), so lowercasing costs one pass.
    """
    validity, offsets, data = arr.buffers()
    if data is None or data.size == 0:
        return arr

    with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
        lowered = ascii_lower(np.frombuffer(data, dtype=np.uint8), 16)
    return pa.LargeStringArray.from_buffers(
        len(arr), offsets, pa.py_buffer(lowered), validity, arr.null_count, arr.offset
    )


def normalize_arrow(arr: pa.Array, steps: tuple[str, ...]) -> pa.Array:
    """The pyarrow steps of normalisation: ``html``, ``nfkc``, ``lower``, ``digits``.

    - ``html``: drop tags (each becomes a space), then decode character references
      (``&amp;``, ``&eacute;``, ``&#20013;``, ``&#x4e2d;``) as HTML5 does
      (:func:`html.unescape`, run only on the texts that have one)
    - ``nfkc``: Unicode NFKC (full-width to half-width, compatibility forms)
    - ``lower``: Unicode lowercase
    - ``digits``: every decimal digit to ``0``

    ``punct`` and ``whitespace`` run afterwards in a Numba kernel
    (:mod:`simhash_nb._kernels.normalize`, see :func:`text_buffers`); both map code
    points of other classes only, so the order of the steps is kept.
    """
    if "html" in steps:
        arr = pc.replace_substring_regex(arr, _HTML_TAG, " ")
        arr = _unescape_html(arr)
    ascii_only = _is_ascii(arr)  # then NFKC is the identity and ASCII lowercase is exact
    if "nfkc" in steps and not ascii_only:
        arr = pc.utf8_normalize(arr, "NFKC")
    if "lower" in steps:
        arr = _ascii_lower(arr) if ascii_only else pc.utf8_lower(arr)
    if "digits" in steps:
        arr = pc.replace_substring_regex(arr, r"\p{Nd}", "0")
    return arr


def _unescape_html(arr: pa.Array) -> pa.Array:
    """Decode HTML character references in the texts that have any."""

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    has = pc.fill_null(pc.match_substring_regex(arr, _HTML_ENTITY), False)
    if not pc.any(has).as_py():
        return arr
    decoded = pa.array([html.unescape(t) for t in arr.filter(has).to_pylist()],
                       type=arr.type)
    return pc.replace_with_mask(arr, has, decoded)


def string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(data, offsets)`` of a ``large_string`` Arrow array, without a copy."""
    n = len(arr)
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[arr.offset : arr.offset + n + 1]
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.empty(0, np.uint8)
    return read_only(data), offsets


_ARROW_STEPS = ("html", "nfkc", "lower", "digits")


def normalize_parallel(arr: pa.Array, steps: tuple[str, ...], n_threads: int) -> pa.Array:
    """:func:`normalize_arrow` on ``n_threads`` slices at once (pyarrow releases the GIL)."""
    if not any(step in _ARROW_STEPS for step in steps):
        return arr
    n = len(arr)
    if n_threads <= 1 or n < 4096 or _is_ascii(arr):  # ASCII: one Numba pass, no slicing
        return normalize_arrow(arr, steps)
    bounds = np.linspace(0, n, n_threads + 1).astype(int)
    slices = [arr.slice(lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    with ThreadPoolExecutor(n_threads) as pool:
        parts = list(pool.map(lambda a: normalize_arrow(a, steps), slices))
    return pa.concat_arrays(parts)


_PIECE_STEPS = ("nfkc", "lower", "digits")


def _ascii_map(steps: tuple[str, ...]) -> np.ndarray:
    """uint8[128]: what ``lower`` and ``digits`` make of each ASCII byte (NFKC keeps it)."""
    m = np.arange(128, dtype=np.uint8)
    if "lower" in steps:
        m[ord("A"):ord("Z") + 1] += 32
    if "digits" in steps:
        m[ord("0"):ord("9") + 1] = ord("0")
    return m


def _pieces(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, steps: tuple[str, ...],
            n_threads: int) -> tuple[np.ndarray, np.ndarray]:
    """The pieces ``data[starts[s]:ends[s]]``, through the pyarrow ``steps`` if any.

    Returns ``(pieces, piece_offsets)``: piece ``s`` is
    ``pieces[piece_offsets[s]:piece_offsets[s + 1]]``.
    """
    lengths = ends - starts
    offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    if not steps:
        return data[index], offsets
    arr = pa.LargeStringArray.from_buffers(
        len(lengths), pa.py_buffer(offsets), pa.py_buffer(data[index]))
    arr = normalize_parallel(arr, steps, n_threads)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    pieces, piece_offsets = string_buffers(arr)
    return np.array(pieces), np.array(piece_offsets, dtype=np.int64)


def segments_numpy(data: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~simhash_nb._kernels.normalize.nonascii_segments` in numpy: the same pieces
    (each run of bytes ``>= 0x80`` with the ASCII byte before it in the same document),
    without a kernel to compile, for small batches."""
    lo, hi = int(offsets[0]), int(offsets[-1])
    pos = np.flatnonzero(data[lo:hi] >= 0x80) + lo  # the non-ASCII bytes: few, mostly
    if pos.shape[0] == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    doc = np.searchsorted(offsets, pos, side="right") - 1
    cut = np.flatnonzero((np.diff(pos) != 1) | (np.diff(doc) != 0)) + 1  # a run ends
    first = np.concatenate(([0], cut))
    last = np.concatenate((cut - 1, [pos.shape[0] - 1]))
    starts, ends = pos[first], pos[last] + 1
    starts = np.where(starts > offsets[doc[first]], starts - 1, starts)  # the byte before
    return starts.astype(np.int64), ends.astype(np.int64)


def segments(data: np.ndarray, offsets: np.ndarray, chunks: np.ndarray):
    """The non-ASCII pieces of the documents: numpy below ``config["numpy_segment_bytes"]``
    (no kernel to compile on a first call), else the parallel kernel."""
    if offsets[-1] - offsets[0] < config["numpy_segment_bytes"]:
        return segments_numpy(data, offsets)
    return nonascii_segments(data, offsets, chunks)


def text_buffers(texts, normalize: tuple[str, ...] = (), n_threads: int = 1,
                 start: int = 0) -> TextBuffers:
    """Normalised UTF-8 buffers of ``texts`` (no per-document Python loop).

    pyarrow runs the ``html`` step over all texts, and the ``nfkc``, ``lower`` and
    ``digits`` steps over only the pieces of the texts that hold non-ASCII code points
    (see :mod:`simhash_nb._kernels.normalize`); one Numba pass maps the ASCII bytes,
    puts the normalised pieces in place and runs the ``punct`` and ``whitespace``
    steps. ``start`` as in :func:`to_arrow`.
    """
    arr = to_arrow(texts, start)
    if "html" in normalize:
        arr = normalize_parallel(arr, ("html",), n_threads)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    if n == 0:
        return TextBuffers(np.empty(0, np.uint8), np.zeros(1, np.int64), np.empty(0, bool))
    data, offsets = string_buffers(arr)
    valid = np.ones(n, dtype=bool)
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        if np.any(np.diff(offsets)[~valid]):  # null slots that still hold bytes
            data, offsets = string_buffers(arr.fill_null(""))
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    punct, collapse = "punct" in normalize, "whitespace" in normalize
    piece_steps = tuple(step for step in normalize if step in _PIECE_STEPS)
    if not (piece_steps or punct or collapse):
        return TextBuffers(data, offsets, valid)
    chunks = balanced_chunks(offsets)
    ascii_map = _ascii_map(normalize)
    starts, ends = segments(data, offsets, chunks)
    if not (punct or collapse or starts.shape[0] or np.any(ascii_map != np.arange(128))):
        return TextBuffers(data, offsets, valid)  # nfkc alone, on ASCII texts
    pieces, piece_offsets = _pieces(data, starts, ends, piece_steps, n_threads)
    data, offsets = _squeeze(data, offsets, chunks, ascii_map, punct, collapse,
                             (starts, ends, pieces, piece_offsets), n_threads)
    return TextBuffers(data, offsets, valid)


def _squeeze(data, offsets, chunks, ascii_map, punct, collapse, pieces, n_threads: int):
    """The Numba pass of :func:`text_buffers`, its chunks on ``n_threads`` threads.

    Serial kernels on a thread pool rather than one ``prange`` kernel: the same work,
    without a parallel kernel to compile on a first call (about a second). The plan and
    the compaction around it are numpy: linear in the chunks and pieces, not the bytes
    (and no kernels to compile).
    """
    classes = word_classes()
    plan = _squeeze_plan(offsets, chunks, classes, ascii_map, punct, collapse, pieces[0],
                         pieces[1], pieces[3])
    if pieces[0].shape[0] == 0:  # all ASCII: the kernel compiled without UTF-8 decoding
        classes = None

    def run(c0: int, c1: int) -> None:
        squeeze_chunks(data, offsets, chunks, c0, c1, classes, punct, collapse, *pieces, plan)

    over_chunks(run, chunks.shape[0] - 1, n_threads)
    return _compact(chunks, plan)


def _squeeze_plan(offsets, chunks, classes, ascii_map, punct: bool, collapse: bool,
                  seg_starts, seg_ends, piece_offsets) -> tuple[np.ndarray, ...]:
    """What :func:`~simhash_nb._kernels.normalize.squeeze_chunks` needs: ``(table,
    seg_first, tmp_start, tmp, lengths)``.

    ``table[b]``: the output byte of byte ``b`` (``ascii_map[b]`` below 128: the pyarrow
    steps on ASCII), plus 256 for a separator; ``seg_first[c]``: chunk ``c``'s first
    piece; ``tmp_start[c]``: where chunk ``c`` writes in ``tmp`` (its bytes, pieces
    resized); ``lengths``: zeros, one per document.
    """
    b = np.arange(256, dtype=np.int64)
    m = np.where(b < 128, ascii_map[np.minimum(b, 127)].astype(np.int64), b)
    c = classes[m]
    is_punct = punct & (c == PUNCT)
    sep = collapse & ((c == SPACE) | is_punct)
    table = np.where(sep, 32 + 256, np.where(is_punct, 32, m)).astype(np.uint64)
    starts = offsets[chunks]  # each chunk's first byte, then the end
    seg_first = np.searchsorted(seg_starts, starts, side="left").astype(np.int64)
    resized = np.zeros(seg_starts.shape[0] + 1, dtype=np.int64)  # bytes a piece adds
    np.cumsum(np.diff(piece_offsets) - (seg_ends - seg_starts), out=resized[1:])
    tmp_start = np.zeros(chunks.shape[0], dtype=np.int64)
    np.cumsum(np.diff(starts) + np.diff(resized[seg_first]), out=tmp_start[1:])
    tmp = np.empty(max(int(tmp_start[-1]), 1), dtype=np.uint8)
    return table, seg_first, tmp_start, tmp, np.zeros(offsets.shape[0] - 1, dtype=np.int64)


def _compact(chunks, plan) -> tuple[np.ndarray, np.ndarray]:
    """``(data, offsets)`` of the normalised documents: the chunks' stretches of ``tmp``
    moved left to be contiguous, in place."""
    _, _, tmp_start, tmp, lengths = plan
    new_offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    for c in range(1, chunks.shape[0] - 1):  # left to right: never onto unread bytes
        dst, end = int(new_offsets[chunks[c]]), int(new_offsets[chunks[c + 1]])
        src = int(tmp_start[c])
        if src != dst:  # numpy copies an overlapping move through a buffer
            tmp[dst:end] = tmp[src:src + end - dst]
    return tmp[: new_offsets[-1]], new_offsets


def over_chunks(run, n_chunks: int, n_threads: int, done=None) -> None:
    """``run(c, c + 1)`` for each chunk ``c`` of ``n_chunks``, on ``n_threads`` threads.

    ``run`` calls a serial ``nogil`` kernel on its chunk range: the threads share the
    chunks as a ``prange`` loop would, with no parallel kernel to compile. ``done(c0,
    c1)``, when given (a progress bar's step), is called on the calling thread after
    chunks ``[c0, c1)`` finish, in chunk order; the chunks and their results are the
    same with it or without.
    """
    if n_threads <= 1 or n_chunks <= 1:
        if done is None:
            run(0, n_chunks)
            return
        for c in range(n_chunks):  # one chunk a call, so that the bar moves
            run(c, c + 1)
            done(c, c + 1)
        return
    with ThreadPoolExecutor(min(n_threads, n_chunks)) as pool:
        finished = pool.map(run, range(n_chunks), range(1, n_chunks + 1))
        for c, _ in enumerate(finished):
            if done is not None:
                done(c, c + 1)


def normalize(texts, steps: tuple[str, ...]) -> pa.Array:
    """Normalised texts as a pyarrow ``large_string`` array (missing texts stay null).

    Examples
    --------
    >>> normalize(["  Hello,   World! "], ("lower", "punct", "whitespace")).to_pylist()
    ['hello world']
    """
    buf = text_buffers(texts, tuple(steps), numba.get_num_threads())
    validity = pa.array(buf.valid).buffers()[1] if not buf.valid.all() else None
    return pa.LargeStringArray.from_buffers(
        len(buf), pa.py_buffer(buf.offsets), pa.py_buffer(buf.data), validity,
        int((~buf.valid).sum()),
    )
