"""No regression against an earlier commit: the same workloads, both versions, one run.

Run: ``python -m benchmarks.bench_compare [--base REV] [--rounds 3]``. Writes
``benchmarks/results/compare.json``. ``REV`` (default: the commit this benchmark was
written against, the last before the layered layout) is checked out into a temporary
``git worktree``; each workload then runs in a fresh child process per version, the
versions taking turns for ``--rounds`` rounds, and the median wall time of each is
compared. Compile time and cache loading are excluded: each child runs its workload once
before timing it (a warm-up on a smaller input can take other code paths, whose kernels
the timed call would then load or compile), each version with its own cache. Only public
API calls whose meaning both versions share are timed: fingerprints of texts (default
features and word unigrams), fingerprints of a CSR batch, the pair search and clusters
at ``k = 3`` on a million random fingerprints, an index's adds and queries, and the
exact Jaccard threshold join.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ._common import ROOT, load_texts, save, table

BASE = "86d1e736fbd036d21d098522c59230486332282a"
WORKLOADS = ("fingerprint_char", "fingerprint_word", "fingerprint_csr", "pairs_k3_1M",
             "clusters_k3_1M", "index_1M_100k", "jaccard_join")

CHILD = r'''
import json, sys, time
import numpy as np
import simhash_nb as sh
name, data = sys.argv[1], sys.argv[2]
texts = json.load(open(data))
rng = np.random.default_rng(0)
fps = rng.integers(0, 2**64, 1_000_000, dtype=np.uint64)
fps[1::100] = fps[::100][: fps[1::100].shape[0]] ^ np.uint64(5)
if name == "fingerprint_char":
    run = lambda t: sh.fingerprint(t)
elif name == "fingerprint_word":
    run = lambda t: sh.fingerprint(t, tokenizer="word", ngram=1)
elif name == "fingerprint_csr":
    fbs = {len(texts): sh.features(texts), 200: sh.features(texts[:200])}
    run = lambda t: sh.fingerprint_features(fbs[len(t)])
elif name == "pairs_k3_1M":
    run = lambda t: sh.near_duplicates(fps if len(t) == len(texts) else fps[:20_000], k=3)
elif name == "clusters_k3_1M":
    run = lambda t: sh.clusters(fps if len(t) == len(texts) else fps[:20_000], k=3)
elif name == "index_1M_100k":
    def run(t):
        f = fps if len(t) == len(texts) else fps[:20_000]
        index = sh.SimhashIndex(k=3)
        index.add(f)
        index.query(f[: max(1, len(f) // 10)])
elif name == "jaccard_join":
    run = lambda t: sh.jaccard_pairs(t, 0.7, candidates="all")
full = texts if name != "jaccard_join" else texts[:3000]
run(full)  # every kernel the timed call uses is now compiled and loaded, in both versions
t0 = time.perf_counter()
run(full)
print(json.dumps({"seconds": time.perf_counter() - t0}))
'''


def _texts() -> list[str]:
    texts = load_texts("fortunes_en.jsonl.gz")
    out = []
    while len(out) < 100_000:  # about 20 MB of text, edited copies of real quotations
        out += [t + f" ({len(out) + i})" for i, t in enumerate(texts)]
    return out[:100_000]


def _run(tree: Path, name: str, data: str, cache: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CHILD, name, data], capture_output=True,
                         text=True, env=env, cwd=tree, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"{name} in {tree}: {out.stderr[-1500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one round")
    args = ap.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    tmp = Path(tempfile.mkdtemp(prefix="simhash_compare_"))
    base_tree = tmp / "base"
    subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), args.base], cwd=ROOT,
                   check=True, capture_output=True)
    try:
        data = tmp / "texts.json"
        data.write_text(json.dumps(_texts()))
        caches = {"base": str(tmp / "cache-base"), "head": str(tmp / "cache-head")}
        trees = {"base": base_tree, "head": ROOT}
        times = {w: {"base": [], "head": []} for w in WORKLOADS}
        for _ in range(rounds):
            for w in WORKLOADS:
                for version in ("base", "head"):
                    times[w][version].append(_run(trees[version], w, str(data), caches[version]))
                    print(f"{w} {version}: {times[w][version][-1]:.3f} s", file=sys.stderr)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT,
                       check=False, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    head_rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True).stdout.strip()
    result = {"base": args.base[:7], "head": head_rev, "rounds": rounds, "workloads": {
        w: {v: statistics.median(ts) for v, ts in t.items()} for w, t in times.items()}}
    save("compare", result)
    print(report(result))
    return result


def report(res: dict) -> str:
    rows = []
    for w, t in res["workloads"].items():
        rows.append([w, f"{t['base']:.3f}", f"{t['head']:.3f}", f"{t['base'] / t['head']:.2f}x"])
    head = (f"The same workloads at {res['base']} (before the layered layout) and at "
            f"{res['head']}, medians of {res['rounds']} rounds, versions taking turns:\n\n")
    return head + table(rows, ["workload", f"{res['base']} s", f"{res['head']} s",
                               "speed-up (>1: faster now)"])


if __name__ == "__main__":
    main()
