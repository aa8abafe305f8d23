"""checker.derive.kept_rows: each kept servers file's server rows, kept in the cache folder.

Whether a warm audit says what a cold one says is tests/test_results_cache.py's;
here, the facts themselves (a server row's figure no finding shows would pass
there unseen) and the entries' checks."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest

from checker.derive import kept_rows
from checker.derive.capacity import compute
from checker.derive.facts import SERVER_FIELDS, Context, Fact, build_all
from checker.load import cache
from checker.load.build import load
from checker.load.reading import ReadOptions

ROOT = Path(__file__).resolve().parents[2]
AS_OF = dt.date(2027, 1, 15)
FOLDERS = ["inventories", "examples/nvl72", "tests/fixtures/fleet", "tests/fixtures/every-field"]


def _server_facts(folder: Path, cache_dir: Path | None, ctx: Context | None = None) -> list[tuple[Any, ...]]:
    """The server facts of one load and facts stage, as values: entity, file,
    where it is written, and every field the fact has."""
    inv, problems = load([folder], options=ReadOptions(cache_dir=cache_dir))
    assert not [p for p in problems if p.severity == "error"], problems
    facts: list[Fact] = build_all(inv, compute(inv), ctx or Context(AS_OF))
    return [
        (f.entity, f.file, f.src.line, f.src.column, [(k, type(v), repr(v)) for k, v in f.values.items()])
        for f in facts
        if f.kind == "server"
    ]


@pytest.mark.parametrize("folder", FOLDERS)
def test_rows_read_back_are_the_rows_a_cold_run_makes(folder: str, tmp_path: Path) -> None:
    cold = _server_facts(ROOT / folder, None)
    assert cold
    for _ in range(3):  # the files read afresh, then kept (their rows written), then their rows read
        assert _server_facts(ROOT / folder, tmp_path) == cold


def _rows_entries(folder: Path) -> list[tuple[cache.Cache, str, Any]]:
    store = cache.open_cache(folder)
    assert store is not None
    found = []
    for entry in sorted((folder / cache.ENTRIES).iterdir()):
        body = cache.unpack(store.payload(entry.name) or b"N")
        if type(body) is tuple and body[:1] == ("server rows",):
            found.append((store, entry.name, body))
    return found


def test_a_gpu_models_figure_no_finding_shows_is_read_again(tmp_path: Path) -> None:
    """The rows read the catalog's GPU models (another file): one's figure changed,
    the servers' file unchanged, their rows are made again."""
    from tests.test_results_cache import ACME_GPUS, CABLED

    inv = tmp_path / "inv"
    shutil.copytree(ROOT / "inventories", inv)
    (inv / "gpus-acme.yaml").write_text(ACME_GPUS)
    (inv / "sh1" / "servers-cabled.yaml").write_text(
        CABLED.replace("    rack: A01\n", "    rack: A01\n    gpu: {model: acme-t4, count: 4}\n"))
    for _ in range(2):
        _server_facts(inv, tmp_path / "cache")
    assert _rows_entries(tmp_path / "cache")
    before = _server_facts(inv, tmp_path / "cache")
    gpus = inv / "gpus-acme.yaml"
    gpus.write_text(gpus.read_text().replace("memory_gb: 16", "memory_gb: 24"))
    after = _server_facts(inv, None)
    assert after != before  # the rows show it
    assert _server_facts(inv, tmp_path / "cache") == after


def test_another_setting_is_another_entry(tmp_path: Path) -> None:
    for _ in range(2):
        _server_facts(ROOT / "inventories", tmp_path)
    other = Context(dt.date(2029, 6, 1), support_level="8x5")
    cold = _server_facts(ROOT / "inventories", None, other)
    assert cold != _server_facts(ROOT / "inventories", None)  # the rows show it
    assert _server_facts(ROOT / "inventories", tmp_path, other) == cold


FORGED = {
    "another format": lambda b: (b[0], b[1] + 1, *b[2:]),
    "a field the kind lacks": lambda b: (*b[:2], (*b[2][:-1], "nonsense"), *b[3:]),
    "fields out of order": lambda b: (*b[:2], b[2][::-1], b[3], [row[::-1] for row in b[4]]),
    "not a bool": lambda b: (*b[:3], 0, b[4]),
    "a row short": lambda b: (*b[:4], [row[:-1] for row in b[4]]),
    "a row too few": lambda b: (*b[:4], b[4][:-1]),
    "a cell that is no scalar": lambda b: (*b[:4], [(*row[:-1], [row[-1]]) for row in b[4]]),
    "a row that is a list": lambda b: (*b[:4], [list(row) for row in b[4]]),
    "not a tuple": lambda b: list(b),
}


@pytest.mark.parametrize("forge", FORGED.values(), ids=FORGED.keys())
def test_a_forged_entry_is_a_miss(tmp_path: Path, forge: Any) -> None:
    """Signed as the real ones are, wrong in one way: the rows are made again."""
    cold = _server_facts(ROOT / "inventories", None)
    for _ in range(2):
        _server_facts(ROOT / "inventories", tmp_path)
    entries = _rows_entries(tmp_path)
    assert entries
    for store, key, body in entries:
        store.put(key, cache.pack(forge(body)))
        order = [f.name for f in SERVER_FIELDS]
        with pytest.raises(cache.BadEntry):
            kept_rows._rows_in(forge(body), len(body[4]), frozenset(order), order, {})
    assert _server_facts(ROOT / "inventories", tmp_path) == cold


def test_rows_read_back_know_they_hold_no_nan(tmp_path: Path) -> None:
    """The rules stage asks every row whether a cell is NaN: rows read back were
    asked when they were written, and are not asked again."""
    for _ in range(2):
        _server_facts(ROOT / "inventories", tmp_path)
    inv, _ = load([ROOT / "inventories"], options=ReadOptions(cache_dir=tmp_path))
    facts = build_all(inv, compute(inv), Context(AS_OF))
    kept = {holder.file for holder in inv.kept}
    rows = [f.values for f in facts if f.kind == "server" and f.file in kept]
    assert rows and {row.nan for row in rows} == {False}
