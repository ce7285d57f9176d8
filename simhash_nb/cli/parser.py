"""The command line's parser: options shared by the commands, one function a command,
and :data:`COMMANDS`, where each command's code lives.

Building the parser imports no command module: ``simhash-nb --help`` and argument errors
never load pandas, the table readers or matplotlib. :func:`simhash_nb.cli.main` imports
the module of the one command that runs.
"""


from __future__ import annotations

import argparse
from typing import NamedTuple

from .. import __version__
from . import prepare
from .recipe import tokenizer_arg
from .usage import PROG, Parser


class Command(NamedTuple):
    """A command: where its code lives and what ``--help`` says of it."""

    run: str  # "module:function", imported when the command runs
    help: str  # its line in ``simhash-nb --help``
    description: str  # the first paragraph of ``simhash-nb COMMAND --help``


COMMANDS = {
    "fingerprint": Command(
        "simhash_nb.cli.commands:cmd_fingerprint", "add a fingerprint column",
        "Fingerprint the text column of IN; write every row of IN plus the fingerprint "
        "column to OUT (parquet: uint64 or 16-byte binary with the spec in the metadata; "
        "csv/jsonl: hexadecimal text)."),
    "pairs": Command(
        "simhash_nb.cli.commands:cmd_pairs", "near-duplicate pairs",
        "Write every pair of rows of IN within k bits: columns left, right (ids, or 0-based "
        "row numbers) and distance; with --threshold J, every pair with shingle Jaccard >= "
        "J, verified, over one or more input shards: columns left, right, jaccard, "
        "distance."),
    "dedupe": Command(
        "simhash_nb.cli.commands:cmd_dedupe", "drop near duplicates",
        "Write the rows of IN that remain after dropping near duplicates: one row per "
        "cluster (rows with missing text stay); with --threshold and several inputs, OUT "
        "is a new folder that gets one shard per input, with its name, format and schema."),
    "clusters": Command(
        "simhash_nb.cli.commands:cmd_clusters", "label near-duplicate clusters",
        "Write every row of IN with a cluster column: the 0-based row number of the first "
        "row of its cluster (empty for missing text); with --threshold and several inputs, "
        "a table of id (or row) and cluster."),
    "demo": Command(
        "simhash_nb.cli.demo:cmd_demo", "run the whole job on bundled sample corpora",
        "Fingerprint the bundled SPDX licence texts and fortunes, choose k for each against "
        "an exact Jaccard ground truth, find near-duplicate pairs and clusters, print a "
        "summary and write pairs, clusters, fingerprints and a plot into --out."),
    "tune": Command(
        "simhash_nb.cli.tune:cmd_tune", "precision and recall per threshold k",
        "Fingerprint the texts of IN and score every Hamming threshold k against the ground "
        "truth in --labels (rows with equal labels are duplicates, an empty label is a row "
        "without duplicates): print precision, recall and F1 per k and a recommended k."),
    "fit-idf": Command(
        "simhash_nb.cli.fit_idf:cmd_fit_idf", "fit an IDF table for --weights tfidf",
        "Count in how many texts of IN each feature occurs and write their inverse document "
        "frequencies to OUT (.npz, as simhash_nb.IdfTable.save writes; rows with missing "
        "text are not counted). Give the same tokenizer options here as with --weights "
        "tfidf --idf OUT later."),
    "prepare": Command("simhash_nb.cli.prepare:cmd_prepare", prepare.HELP, prepare.DESCRIPTION),
}
"""The commands by name (:func:`build_parser` adds their options)."""

DEMO_NORMALIZE = ("nfkc", "lower", "punct", "whitespace")
"""The normalisation of ``demo``'s fingerprints: runs of white space and punctuation
would otherwise dominate the tf weights of indented or decorated texts (ASCII art, code)
and pull unrelated ones together."""

# --- options ------------------------------------------------------------------------------

_IN_HELP = "input table: .csv, .jsonl, .parquet (csv/jsonl may be .gz)"


def _add_io(p, out: bool = True, many: bool = False) -> None:
    if many:
        p.add_argument("inputs", nargs="+", metavar="IN",
                       help="input table(s): .csv, .jsonl, .parquet (csv/jsonl may be .gz); "
                       "with --threshold, several files, folders or globs (shards)")
    else:
        p.add_argument("input", metavar="IN", help=_IN_HELP)
    if out:
        p.add_argument("output", metavar="OUT", help="output table; format from the extension "
                       "(.parquet, .csv, .jsonl, optionally .gz for csv/jsonl)")


def _add_text(p, fingerprints: bool = True, fit: bool = False) -> None:
    g = p.add_argument_group("input columns")
    g.add_argument("--column", default=None, help="column holding the text (default: text)")
    if fingerprints:
        g.add_argument("--fingerprints", metavar="COL", default=None,
                       help="use fingerprints already in COL (as written by 'fingerprint') "
                       "instead of fingerprinting --column")
    s = p.add_argument_group("fingerprint options (see simhash_nb.fingerprint)")
    s.add_argument("--params", default=None, metavar="FILE",
                   help="the fingerprint spec saved in FILE (JSON of FingerprintSpec.to_json"
                   "()), used as it is; a flag below that differs from it is refused")
    if not fit:
        s.add_argument("--bits", type=int, choices=(64, 128), default=None, help="default 64")
    s.add_argument("--tokenizer", type=tokenizer_arg, default=None, metavar="NAME",
                   help="char: character n-grams (default), word: word n-grams, jieba: "
                   "jieba words, or MODULE:FUNCTION: a function of yours that splits a "
                   "text into tokens (imported; the spec records it as 'callable')")
    s.add_argument("--ngram", type=int, default=None, help="n-gram length (char: 5, word: 1)")
    if not fit:
        s.add_argument("--weights", choices=("tf", "binary", "tfidf"), default=None,
                       help="default binary (each distinct n-gram counts once); tfidf needs "
                       "--idf (jieba: jieba's table by default)")
        s.add_argument("--idf", default=None, metavar="FILE",
                       help="with --weights tfidf: the IDF table made by "
                       f"'{PROG} fit-idf' with the same tokenizer options")
    s.add_argument("--normalize", default=None, metavar="STEPS",
                   help="comma-separated steps among html,nfkc,lower,punct,digits,whitespace "
                   "(default nfkc,lower,punct,whitespace; 'none' for none)")
    s.add_argument("--seed", type=int, default=None, help="feature hash seed (default 0)")


def _add_run(p) -> None:
    g = p.add_argument_group("run")
    g.add_argument("--batch-rows", type=int, default=None, metavar="N",
                   help="rows per batch for parquet input (default 65536)")
    g.add_argument("--n-jobs", type=int, default=None, metavar="N", help="threads (default all)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    g.add_argument("--progress", action="store_true",
                   help="show the progress bar even when stderr is not a terminal")
    g.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)


def _add_k(p) -> None:
    g = p.add_argument_group("threshold")
    g.add_argument("-k", "--k", type=int, default=None, dest="k",
                   help="largest Hamming distance counted as a near duplicate (default: from "
                        "--similarity, 0.7: 12 of 64 bits, 25 of 128)")
    g.add_argument("--similarity", type=float, default=None, metavar="S",
                   help="Jaccard similarity to find instead of -k (angle relation)")
    g.add_argument("--recall", type=float, default=None, metavar="R",
                   help="accept a search that finds pairs at distance k with probability "
                        ">= R (sampled tables; much faster at large k)")
    g.add_argument("--threshold", type=float, default=None, metavar="J",
                   help="instead, pairs of texts whose shingle sets have Jaccard similarity "
                        ">= J, each verified exactly (128-bit SimHash candidates; --recall "
                        "defaults to 0.99 there); streams the inputs within --memory-limit")
    v = p.add_argument_group("verified road (--threshold)")
    v.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="most memory the run holds, e.g. 2GB or 512MB (default: half the "
                        "available memory); shingles beyond it go to a temporary file")
    v.add_argument("--tmp-dir", default=None, metavar="DIR",
                   help="folder for temporary files (default: the system's); they are "
                        "removed at the end, on error and on Ctrl-C")
    if p.prog.endswith("pairs"):
        v.add_argument("--save", default=None, metavar="STORE",
                       help="also write a corpus store of the inputs (fingerprints, ids, "
                            "MinHash signatures, shingles) to check later data against; "
                            "with --against STORE, append the inputs to it")
        v.add_argument("--against", default=None, metavar="STORE",
                       help="pairs among the inputs and between them and the documents of "
                            "this corpus store (made by --save)")


def _command(sub, name: str):
    """The parser of the command ``name`` (see :data:`COMMANDS`)."""
    return sub.add_parser(name, help=COMMANDS[name].help,
                          description=COMMANDS[name].description)


def _search_command(sub, name: str):
    """A command that searches one or more tables for near duplicates: ``IN... OUT``,
    the threshold, the input columns and fingerprint options; its own flags follow."""
    p = _command(sub, name)
    _add_io(p, many=True)
    _add_k(p)
    _add_text(p)
    return p


def _add_id(p, help: str) -> None:
    p.add_argument("--id", default=None, metavar="COL", help=help)


# --- commands -----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``simhash-nb``; ``parser.commands`` lists its commands,
    ``parser.subcommands`` maps each to its parser.

    Examples
    --------
    >>> build_parser().commands[:4]
    ['fingerprint', 'pairs', 'dedupe', 'clusters']
    """
    parser = Parser(
        prog=PROG,
        description="Near-duplicate text detection with SimHash (simhash_nb).",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (_add_fingerprint, _add_pairs, _add_dedupe, _add_clusters, _add_demo,
                _add_tune, _add_fit_idf, prepare.add_prepare_parser):
        add(sub)
    parser.commands = list(sub.choices)
    parser.subcommands = dict(sub.choices)
    return parser


def _add_fingerprint(sub) -> None:
    p = _command(sub, "fingerprint")
    _add_io(p)
    _add_text(p, fingerprints=False)
    p.add_argument("--out-column", default=None, help="name of the new column "
                   "(default simhash)")
    _add_run(p)


def _add_pairs(sub) -> None:
    p = _search_command(sub, "pairs")
    _add_id(p, "identify rows by COL instead of their row number")
    p.add_argument("--max-pairs", type=int, default=None, metavar="N",
                   help="refuse to write more than N pairs")
    _add_run(p)


def _add_dedupe(sub) -> None:
    p = _search_command(sub, "dedupe")
    p.add_argument("--keep", choices=("first", "last"), default="first",
                   help="which row of each cluster stays (default first)")
    _add_id(p, "with --threshold: the rows' ids (checked present and distinct)")
    _add_run(p)


def _add_clusters(sub) -> None:
    p = _search_command(sub, "clusters")
    p.add_argument("--cluster-column", default=None, metavar="NAME",
                   help="name of the new column (default cluster)")
    _add_id(p, "with --threshold: identify rows by COL (checked present and distinct)")
    _add_run(p)


def _add_demo(sub) -> None:
    p = _command(sub, "demo")
    p.add_argument("--out", default="demo-output", help="output folder (default demo-output)")
    p.add_argument("-k", "--k", type=int, default=None, dest="k",
                   help="largest Hamming distance counted as a near duplicate (default: "
                   "tuned per corpus, the best F1 against the Jaccard ground truth)")
    p.add_argument("--jaccard", type=float, default=0.7, metavar="J",
                   help="ground truth for tuning k: texts whose shingle sets have Jaccard "
                   "similarity >= J are near duplicates (default 0.7)")
    p.add_argument("--examples", type=int, default=4, help="example pairs shown per corpus")
    p.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)


def _add_tune(sub) -> None:
    p = _command(sub, "tune")
    _add_io(p, out=False)
    _add_text(p, fingerprints=False)
    g = p.add_argument_group("tuning")
    g.add_argument("--labels", required=True, metavar="COL", help="ground-truth cluster column")
    g.add_argument("--max-k", type=int, default=None, metavar="K",
                   help="only thresholds up to K (needed for large inputs: pairs within K "
                   "are found without comparing all pairs)")
    g.add_argument("--target", default="f1", metavar="T",
                   help="how to choose k: f1 (default), precision=0.95 or recall=0.95")
    g.add_argument("--table", default=None, metavar="OUT", help="write the full table")
    g.add_argument("--plot", default=None, metavar="PNG", help="plot precision, recall and "
                   "F1 against k")
    _add_run(p)


def _add_fit_idf(sub) -> None:
    p = _command(sub, "fit-idf")
    p.add_argument("input", metavar="IN", help=_IN_HELP)
    p.add_argument("output", metavar="OUT", help="the IDF table to write (.npz)")
    _add_text(p, fingerprints=False, fit=True)
    _add_run(p)
