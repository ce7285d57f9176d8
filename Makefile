# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,dask]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/simhash-nb demo --out demo-output

lint: $(STAMP)
	$(BIN)/ruff check simhash_nb tests benchmarks tools

test: $(STAMP) lint
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.report

clean:
	rm -rf $(VENV) demo-output .pytest_cache build *.egg-info
