"""Faults and bad input through the command line and the io module (issue 13)."""

import gzip
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import simhash_nb as sh
from simhash_nb import cli
from simhash_nb.io import TableReader, read_specs

SCRIPT = Path(sys.executable).parent / "simhash-nb"


def _run(*args, cwd=None):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, check=False)


def _error(capsys, argv) -> str:
    assert cli.main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def _no_files_but(folder: Path, *names: str) -> None:
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


# --- 12: the help states today's defaults ---------------------------------------------------


def test_fingerprint_help_states_the_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["fingerprint", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    spec = sh.make_spec()
    assert (spec.tokenizer, spec.ngram, spec.weights) == ("char", 5, "binary")
    assert "character n-grams (default)" in text and "char: 5" in text
    assert f"default {spec.weights}" in text
    assert f"default {','.join(spec.normalize)};" in text
    assert f"seed (default {spec.seed})" in text and f"default {spec.bits}" in text

