# Each target creates its own virtualenv, so a fresh machine needs only
# Python 3.10-3.12, pip and a C compiler (durable-rules builds from source).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: audit test lint rules-test wheel clean

$(BIN)/checker: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

audit: $(BIN)/checker  ## audit the example rollout in inventories/
	$(BIN)/checker audit inventories/

test: $(BIN)/checker  ## linters, the rulebook's own examples, then the whole test suite
	$(BIN)/ruff check checker tests benchmarks
	$(BIN)/mypy checker
	$(BIN)/checker rules test
	$(BIN)/python -m pytest

wheel: $(BIN)/checker
	$(BIN)/python -m build --wheel --outdir dist .

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
