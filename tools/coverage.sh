#!/usr/bin/env bash
# Line coverage with the kernels' lines counted (`make coverage`), in two parts, combined:
#   1. the whole suite with the JIT, under pytest-cov (the Python lines; compiled kernels
#      are invisible to coverage);
#   2. the kernel-level test files again with NUMBA_DISABLE_JIT=1, as STUMPY does (the
#      kernels run as Python, their lines count), each file under a time limit: without
#      the JIT some files take far longer than the limit and then add nothing.
# The JIT-less twins of the LLVM intrinsics are checked by tests/test_jitless.py.
set -u
PY=${PY:-.venv/bin/python}
LIMIT=${LIMIT:-240}
FILES=${FILES:-"test_xxh64 test_lanes test_jitless test_sort_kernel test_groups test_hamming
  test_jaccard test_normalize test_candidates test_windows test_index test_clusters
  test_fused_features test_search test_search_large_k test_fingerprint test_verified"}
rm -f .coverage .coverage.*
COVERAGE_FILE=.coverage.jit "$PY" -m pytest -q -p no:cacheprovider --cov=simhash_nb \
  --cov-report= || exit 1
for f in $FILES; do
  NUMBA_DISABLE_JIT=1 HYPOTHESIS_MAX_EXAMPLES=10 COVERAGE_FILE=".coverage.nojit.$f" \
    timeout "$LIMIT" "$PY" -m pytest -q -p no:cacheprovider -m "not slow" \
    --cov=simhash_nb --cov-report= "tests/$f.py" > /dev/null 2>&1
  case $? in
    0) echo "without the JIT: $f done" ;;
    124) echo "without the JIT: $f over ${LIMIT}s, left out" ; rm -f ".coverage.nojit.$f" ;;
    *) echo "without the JIT: $f failed" ;;
  esac
done
"$PY" -m coverage combine .coverage.jit .coverage.nojit.* > /dev/null
"$PY" -m coverage report --skip-covered | tail -n 25
"$PY" -m coverage report --include="simhash_nb/_kernels/*" | tail -n 1 | sed 's/^TOTAL/kernels/'
