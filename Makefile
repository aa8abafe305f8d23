# Each target creates its own virtualenv, so a fresh machine needs only
# Python 3.10-3.13, pip and a C compiler (durable-rules builds from source).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

# durable-rules 2.0.28 (its last release) calls PyEval_CallObject, which
# Python 3.13 removed (fixed upstream, never released). Its setup.py overwrites
# CFLAGS but not CPPFLAGS, so on 3.13+ the call is mapped to its replacement.
DURABLE_CPPFLAGS := $(shell $(PYTHON) -c 'import sys; print("-DPyEval_CallObject=PyObject_CallObject" if sys.version_info >= (3, 13) else "")' 2>/dev/null)

.PHONY: audit test test-slow lint rules-test wheel clean

$(BIN)/checker: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CPPFLAGS="$(DURABLE_CPPFLAGS) $$CPPFLAGS" $(BIN)/python -m pip install --quiet -e '.[dev]'
	@$(BIN)/python -c 'import durable.engine' || { echo "durable-rules does not import; a wheel cached from an earlier build may lack the 3.13 fix: pip cache remove durable_rules, then make clean" >&2; exit 1; }
	touch $@

audit: $(BIN)/checker  ## audit the example rollouts in inventories/ and examples/nvl72/
	$(BIN)/checker audit inventories/
	$(BIN)/checker audit examples/nvl72/

test: $(BIN)/checker  ## linters, the rulebook's own examples, then the whole test suite
	$(BIN)/ruff check checker tests benchmarks
	$(BIN)/mypy checker
	$(BIN)/checker rules test
	$(BIN)/python -m pytest -n auto

test-slow: $(BIN)/checker  ## tests that install packages (the pre-commit hook); CI runs them
	$(BIN)/python -m pytest -n auto -m slow

wheel: $(BIN)/checker
	$(BIN)/python -m build --wheel --outdir dist .

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
