# Each target creates its own virtualenv, so a fresh machine needs only
# Python 3.10-3.13, pip and a C compiler (the install compiles durable-rules'
# engine, checker/_vendor/durable, with hatch_build.py).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: audit test test-slow lint rules-test wheel clean

# The C engine is compiled by the install: its sources and the build hook count too.
$(BIN)/checker: pyproject.toml hatch_build.py $(wildcard checker/_vendor/durable/src/*/*)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/checker --version >/dev/null  # exits 3, with the repair, if the engine does not load
	touch $@

audit: $(BIN)/checker  ## audit the example rollouts in inventories/ and examples/nvl72/
	$(BIN)/checker audit inventories/
	$(BIN)/checker audit examples/nvl72/

test: $(BIN)/checker  ## linters, the rulebook's own examples, then the whole test suite
	$(BIN)/ruff check checker tests benchmarks hatch_build.py
	$(BIN)/mypy checker
	$(BIN)/checker rules test
	$(BIN)/python -m pytest -n auto

test-slow: $(BIN)/checker  ## the long tests (package installs, the pre-commit hook, forged cache entries); CI runs them
	$(BIN)/python -m pytest -n auto -m slow

wheel: $(BIN)/checker
	$(BIN)/python -m build --wheel --outdir dist .

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache checker/_vendor/*.so
