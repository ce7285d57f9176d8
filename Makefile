# Two commands on a fresh machine: `make demo` and `make test`. The environment is installed
# with uv (from PyPI, beside pip; 39 s against pip's 61 s on an empty cache here), with pip
# as the fallback should uv fail. uv compiles no bytecode: each module is compiled when a
# process first imports it (20 s for the install against 30 s with --compile-bytecode,
# which compiles all of site-packages); only jieba's is compiled here, warnings off (its
# sources hold invalid escape sequences, which Python warns about when it compiles them).
PYTHON ?= python3
# Python's own bytecode cache (__pycache__, gitignored) even where the environment turns it
# off: otherwise every process of the test run (two workers, the docs build, a Dask
# cluster, 60-odd CLI and signal tests) compiles the package and pytest rewrites every
# test module again (a collection took 13 s instead of 7).
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean docs coverage

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e ".[dev,dask,docs]" \
	  || $(BIN)/python -m pip install --quiet -e ".[dev,dask,docs]"
	$(BIN)/python -W ignore -c "import compileall, importlib.util as u; \
	  compileall.compile_dir(u.find_spec('jieba').submodule_search_locations[0], quiet=1)"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/simhash-nb demo --out demo-output

lint: $(STAMP)
	$(BIN)/ruff check simhash_nb tests benchmarks tools

# Two pytest-xdist workers (the Dask cluster's tests all in one of them: tests/conftest.py);
# on a cold Numba cache (a fresh clone) two processes first compile sh.prepare's paths, half
# each (tests/early.py). Measured on a fresh clone with uv's and pip's caches empty, two
# cores (.ci/run, 2026-12-03): 4:07, 4:20 and 4:49 (CPU 462-540 s: the machine's noise),
# against 4:47-5:22 before the install stopped compiling all bytecode and the OpenMP
# threads stopped spinning (tests/conftest.py), and 5:27 in one process.
# `make test PYTEST_WORKERS=` runs one pytest process (its signal tests' latencies then do
# not include another worker's load).
PYTEST_WORKERS ?= -n 2 --dist loadgroup
# Numba's OpenMP threads sleep between kernels instead of spinning, as the test processes
# and the docs build share two cores (tests/conftest.py)
test: export OMP_WAIT_POLICY ?= PASSIVE

# On a cold Numba cache (a fresh clone) the kernels are compiled first, in two processes
# (tests/early.py; nothing on a warm cache), so that no later process compiles one again.
# The docs build (any Sphinx warning fails it) runs beside the tests: the tests that read
# the site it builds (tests/test_docs.py, tests/test_notebooks.py) run last, wait for it and
# fail with its log (docs/_build/log) if it failed (tests/conftest.py, docs_build)
test: $(STAMP) lint
	$(BIN)/python -m tests.early
	@mkdir -p docs/_build && rm -f docs/_build/status
	($(BIN)/sphinx-build -b html $(SPHINXOPTS) docs docs/_build/html > docs/_build/log 2>&1; \
	 echo $$? > docs/_build/status) & \
	SIMHASH_NB_DOCS_BUILD=$(CURDIR)/docs/_build/status $(BIN)/python -m pytest -q $(PYTEST_WORKERS); \
	rc=$$?; wait; exit $$rc

# Line coverage with the kernels' lines counted: the whole suite with the JIT, then the
# kernel-level test files with NUMBA_DISABLE_JIT=1 (as STUMPY does), each under a time
# limit, combined (tools/coverage.sh; about 20 minutes on two cores). The LLVM intrinsics
# have numpy twins there (tests/test_jitless.py holds them to the compiled results).
coverage: $(STAMP)
	PY=$(BIN)/python tools/coverage.sh

# HTML into docs/_build/html (pages, API reference, executed notebooks, plot gallery);
# any Sphinx warning fails the build
SPHINXOPTS ?= -W --keep-going
docs: $(STAMP)
	$(BIN)/sphinx-build -b html $(SPHINXOPTS) docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.report

clean:
	rm -rf $(VENV) demo-output .pytest_cache build *.egg-info docs/_build docs/_generated docs/api docs/notebooks
