"""Shared helpers for the benchmarks: timing medians, data, peers, results."""

from __future__ import annotations

import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SHARED = ROOT.parent / "shared" / "data"
PEERS_PY = ROOT / "benchmarks" / ".peers" / "venv" / "bin" / "python"
PEERS_RUN = ROOT / "benchmarks" / "peers" / "run_peers.py"


def median_time(fn, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def interleaved_medians(cases: dict, repeats: int = 5) -> dict:
    """Median wall time of each ``cases[name]()``, the cases taking turns.

    On a noisy machine a slow spell then hits every case alike instead of the one that
    happened to run during it, so ratios between cases stay fair.
    """
    for fn in cases.values():
        fn()
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def load_texts(name: str, limit: int | None = None) -> list[str]:
    """Texts of a corpus in ../shared/data, or of the bundled sample when that is absent."""
    path = SHARED / name
    if path.exists():
        with gzip.open(path, "rt", encoding="utf-8") as f:
            texts = [json.loads(line)["text"] for line in f]
    else:
        import simhash_nb as sh

        fallback = {"kjv_verses.jsonl.gz": "gospels", "fortunes_en.jsonl.gz": "fortunes",
                    "spdx_2_5_1_texts.jsonl.gz": "licences",
                    "debian_desc_zh_CN.jsonl.gz": "debian_zh"}[name]
        texts = sh.datasets.load_sample(fallback)["text"].tolist()
        print(f"note: {path} not found, using the bundled sample '{fallback}'", file=sys.stderr)
    return texts[:limit] if limit else texts


def write_jsonl(texts: list[str]) -> str:
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    return path


def peers_available() -> bool:
    return PEERS_PY.exists()


def ensure_peers() -> bool:
    """Build the peers' environment (benchmarks/peers/setup.sh) if it is missing."""
    if not peers_available():
        print("setting up peer libraries (benchmarks/peers/setup.sh) ...", file=sys.stderr)
        subprocess.run(["bash", str(ROOT / "benchmarks" / "peers" / "setup.sh")], check=False)
    return peers_available()


def run_peers(task: str, *args: str, timeout: float = 1800) -> dict:
    """Run one peer task in the peers' environment; its JSON result, or an error entry."""
    if not peers_available():
        return {"error": "peers environment missing (bash benchmarks/peers/setup.sh)"}
    cmd = [str(PEERS_PY), str(PEERS_RUN), task, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        return {"error": out.stderr[-2000:]}
    return json.loads(out.stdout)


def machine() -> dict:
    return {"cpus": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "processor": platform.processor()}


def save(name: str, result: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    result = {"machine": machine(), "when": time.strftime("%Y-%m-%d %H:%M"), **result}
    path.write_text(json.dumps(result, indent=2, default=float) + "\n")
    return path


def table(rows: list[list], header: list[str]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
