"""Nothing of one audit outlives it: no module-wide cache or list holds a run's
data, options travel as parameters, and the fast path needs no ctypes.

A library caller may run many audits in one process: state kept by a module
would leak memory from run to run, and state keyed by id() would mix runs up
(ids are reused once an object is freed)."""

from __future__ import annotations

import ast
import datetime as dt
import importlib
import pkgutil
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

import checker
from checker.audit import run_audit
from checker.core.perf import gc_paused
from checker.decide.config import Config, settings
from checker.derive.capacity import compute
from checker.derive.facts import Context, build_all
from checker.load.build import load
from checker.load.reading import ReadOptions
from checker.source import fastpath

PACKAGE = Path(checker.__file__).parent
INVENTORIES = PACKAGE.parent / "inventories"
FIXTURES = PACKAGE.parent / "tests" / "fixtures"
AS_OF = dt.date(2027, 1, 15)

# The module-level memos that stay, and why: each holds what installed files
# give (the same for every run), never an inventory's data.
KEPT_CACHES = {
    ("checker.load.cache", "salt"),  # the cache key's salt: versions and code of the installed checker
    ("checker.load.cache", "code_salt"),  # salt, pydantic and every module's stamp: validated results
    ("checker.derive.knowledge", "builtin"),  # the built-in knowledge tables, read once per process
    ("checker.evaluate.rulebook", "code_salt"),  # the cached rulebook's salt: library versions, code
    ("checker.load.validated", "_classes"),  # checker.load.models' classes by name: its code's
    ("checker.load.validated", "_fields"),  # each model class's field names: its code's
    ("checker.load.validated", "_fast_ok"),  # whether this pydantic's model layout can be set directly
    ("checker.evaluate.memo", "_salt"),  # the evaluate memo's salt: code_salt and durable's engine
    ("checker.load.build", "_servers"),  # the servers' validator, built at the first servers file
    ("checker.evaluate.sandbox", "environment"),  # the messages' Jinja environment: filters, no template
    ("checker.render.templating", "environment"),  # the Markdown templates' environment: templates/ compiled
    ("checker.render.templating", "html_environment"),  # the HTML report's: templates/ compiled
    ("checker.derive.knowledge", "_row_fields"),  # which fields of a table model hold rows: its code's
}
# Context variables that stay, each set and reset around one call and saying why
# where it is defined; options are never among them.
KEPT_CONTEXT_VARS = {"checker/core/progress.py", "checker/evaluate/message.py"}


def _modules() -> Iterator[ModuleType]:
    yield checker
    for info in pkgutil.walk_packages(checker.__path__, "checker."):
        yield importlib.import_module(info.name)


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE.parent).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_module_of_the_checker_imports_ctypes() -> None:
    """Positions come from numpy's documented array interface, not CPython's C API.
    (numpy may import ctypes for itself; the checker's own source does not.)"""
    offenders = [path for path, tree in _sources() if {n.split(".")[0] for n in _imported(tree)} & {"ctypes"}]
    assert offenders == []


def test_context_variables_are_only_the_scoped_ones() -> None:
    using = {path for path, tree in _sources() if "contextvars" in _imported(tree)}
    assert using == KEPT_CONTEXT_VARS


def _snapshot() -> dict[tuple[str, str], Any]:
    """The size of every module-level container and memo of the checker."""
    sizes: dict[tuple[str, str], Any] = {}
    for module in _modules():
        for name, value in vars(module).items():
            if isinstance(value, (dict, list, set, bytearray)):
                sizes[module.__name__, name] = len(value)
            if _is_memo(value, module) and (module.__name__, name) not in KEPT_CACHES:
                sizes[module.__name__, name] = value.cache_info().currsize
    return sizes


def _audit(folder: Path, options: ReadOptions | None = None) -> Any:
    cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    return run_audit([folder], cfg, AS_OF, options=options)


def _located(result: Any) -> list[tuple[str, int, int]]:
    """Every finding's place, and the place of every fact (which works positions out)."""
    return [(f.file, f.line, f.column) for f in result.findings] + [
        (fact.file, fact.src.line, fact.src.column) for fact in result.facts
    ]


def _is_memo(value: object, module: ModuleType) -> bool:
    """A functools.cache or lru_cache defined in `module` (not one it imported)."""
    owned = getattr(value, "__module__", None) == module.__name__
    return owned and callable(getattr(value, "cache_info", None))


def test_module_memos_are_only_those_of_installed_files() -> None:
    memos = {(module.__name__, name) for module in _modules() for name, value in vars(module).items()
             if _is_memo(value, module)}
    assert memos == KEPT_CACHES


def test_two_audits_in_one_process_leave_no_module_state(tmp_path: Path) -> None:
    before = _snapshot()
    first = _located(_audit(INVENTORIES))
    _located(_audit(FIXTURES / "fleet"))
    second = _located(_audit(INVENTORIES, ReadOptions(cache_dir=tmp_path)))
    third = _located(_audit(INVENTORIES, ReadOptions(cache_dir=tmp_path)))  # from the cache
    assert first == second == third
    assert _snapshot() == before


def test_a_context_keeps_nothing_of_the_inventories_it_built_facts_for() -> None:
    ctx = Context(AS_OF)
    before = {name: repr(value) for name, value in vars(ctx).items()}
    for folder in (INVENTORIES, FIXTURES / "fleet"):
        inv, problems = load([folder])
        assert problems == []
        assert build_all(inv, compute(inv), ctx)
        alive = weakref.ref(inv)
        del inv
        assert alive() is None
    assert {name: repr(value) for name, value in vars(ctx).items()} == before


class _Recorded(fastpath.Trees):
    made: ClassVar[list[weakref.ref[fastpath.Trees]]] = []

    def __init__(self) -> None:
        super().__init__()
        self.made.append(weakref.ref(self))


def test_a_runs_trees_are_its_own_and_freed_with_its_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpath, "Trees", _Recorded)
    _Recorded.made = []
    with gc_paused():  # as the command line runs: a reference cycle would never be freed
        result = _audit(INVENTORIES)
        _located(result)
        runs = [ref() for ref in _Recorded.made]
        assert any(trees is not None and len(trees) for trees in runs), "no position came from a tree"
        other = _audit(INVENTORIES)
        _located(other)
        assert len(_Recorded.made) > len(runs)  # the second run made a holder of its own
        del runs, result, other
        assert [ref() for ref in _Recorded.made] == [None] * len(_Recorded.made)


def test_read_options_are_only_what_is_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No option is set for a process or a context: an audit given none reads and
    writes no cache, whatever the audit before it was given or the environment says."""
    monkeypatch.setenv("CHECKER_CACHE_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _audit(INVENTORIES, ReadOptions(cache_dir=tmp_path / "one"))
    assert any((tmp_path / "one").rglob("*"))
    _audit(INVENTORIES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one"]
