"""Write the benchmark tables from ``benchmarks/results/*.json`` into docs/performance.md.

Each benchmark module has ``report(result) -> markdown``; its table goes between
``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->`` in docs/performance.md (and in
README.md, for any section it still has markers for).
Run: ``python -m benchmarks.report``.
"""

from __future__ import annotations

import importlib
import json
import re

from ._common import RESULTS, ROOT

SECTIONS = {"fingerprint": "bench_fingerprint", "bitsums": "bench_bitsums",
            "search": "bench_search", "large_k": "bench_large_k",
            "widths": "bench_widths",
            "accessors": "bench_accessors", "evaluate": "bench_evaluate",
            "features": "bench_features", "distributed": "bench_distributed",
            "distributed_verified": "bench_distributed_verified",
            "e2e": "bench_e2e", "compare": "bench_compare", "cold": "bench_cold",
            "out_of_core": "bench_out_of_core", "out_of_core-2m": "bench_out_of_core",
            "out_of_core-10m": "bench_out_of_core",
            "memory": "bench_memory"}


# target file -> prefix that makes the body's repository-relative links work from it
TARGETS = {"docs/performance.md": "../", "README.md": ""}


def main() -> None:
    for target, prefix in TARGETS.items():
        write(ROOT / target, prefix)


def write(readme, prefix: str = "") -> None:
    if not readme.exists():
        return
    text = readme.read_text()
    for name, module in SECTIONS.items():
        path = RESULTS / f"{name}.json"
        marker = re.compile(rf"(<!-- bench:{name} -->\n).*?(<!-- /bench:{name} -->)", re.S)
        if not path.exists() or not marker.search(text):
            continue
        res = json.loads(path.read_text())
        body = importlib.import_module(f"benchmarks.{module}").report(res)
        body = body.replace("](benchmarks/", f"]({prefix}benchmarks/")
        when = res.get("when", "")
        cpus = res["machine"]["cpus"]
        body = (f"{body}\n\n<sub>Measured {when} on {cpus} cores by "
                f"`python -m benchmarks.{module}` (part of `make bench`).</sub>\n")
        text = marker.sub(lambda m, b=body: m.group(1) + b + m.group(2), text)
        print(f"updated {name} in {readme.relative_to(ROOT)}")
    readme.write_text(text)


if __name__ == "__main__":
    main()
