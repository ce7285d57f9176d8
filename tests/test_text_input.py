"""Lists of texts reach the kernels as Arrow arrays: a short list of ``str`` is encoded
by ``str_list_array`` while pandas is not imported (Arrow's own conversion imports it),
and must give exactly what Arrow gives."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.text import str_list_array, text_buffers


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",))), max_size=40))
def test_str_list_array_is_arrows_conversion(texts):
    assert str_list_array(texts).equals(pa.array(texts, pa.large_string()))


def test_str_list_array_leaves_anything_but_str_to_arrow():
    for texts in (["a", None], ["a", b"b"], ["a", 1], ["\ud800"]):
        assert str_list_array(texts) is None


def test_a_first_fingerprint_of_a_list_does_not_import_pandas():
    texts = ["the cat sat on the mat", "Crème brûlée, 中文!", ""]
    code = ("import json, sys; import simhash_nb as sh; "
            f"fps = sh.fingerprint({texts!r}); "
            "print(json.dumps(['pandas' in sys.modules, fps.tolist()]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    pandas_loaded, fps = json.loads(done.stdout)
    assert not pandas_loaded
    assert fps == sh.fingerprint(texts).tolist()  # here pandas is loaded: Arrow converts


def test_texts_reach_the_kernels_read_only_whatever_their_origin():
    """One kernel signature, not two: the bytes of Python strings, of pyarrow's own
    (writable) buffers and of the normalised copy all reach the kernels read-only."""
    texts = ["Ab, c!", "dé  f", None]
    own = pa.array(texts, pa.large_string()).cast(pa.large_string())
    own = pa.concat_arrays([own, pa.array(["x"], pa.large_string())])  # arrow-allocated
    for source in (texts, own):
        for normalize in ((), ("lower",), ("punct", "whitespace")):
            buf = text_buffers(source, normalize)
            assert not buf.data.flags.writeable, (source, normalize)
    assert text_buffers(["a b"], ("whitespace",)).data.tobytes() == b"a b"
