# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean docs coverage

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,dask,docs]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/simhash-nb demo --out demo-output

lint: $(STAMP)
	$(BIN)/ruff check simhash_nb tests benchmarks tools

# docs first: tests/test_docs.py checks the links of the site it builds
test: $(STAMP) lint docs
	$(BIN)/python -m pytest -q

# Line coverage with the kernels run as plain Python (NUMBA_DISABLE_JIT=1, as STUMPY does),
# so their lines count too; the LLVM intrinsics have numpy twins there (tests/test_jitless.py
# holds them to the compiled results). Not part of `make test`: without the JIT the suite is
# slow (well over an hour on two cores), so it leaves out the slow tests (notebooks, clusters)
# and hypothesis draws 20 examples a test.
coverage: $(STAMP)
	NUMBA_DISABLE_JIT=1 HYPOTHESIS_MAX_EXAMPLES=20 $(BIN)/python -m pytest -q -p no:cacheprovider \
		-m "not slow" --cov=simhash_nb --cov-report=term

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
