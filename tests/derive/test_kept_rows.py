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
from tests.helpers import cache_entries

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
    return cache_entries(folder, "server rows")


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


def _plain(b: Any, change: Any) -> Any:
    """`b` with its first column of cells that are not all alike changed by `change`."""
    columns = list(b[5])
    at = next(i for i, (same, _) in enumerate(columns) if not same)
    columns[at] = change(columns[at])
    return (*b[:5], columns)


def _same(b: Any, change: Any) -> Any:
    """`b` with its first column of one cell changed by `change`."""
    columns = list(b[5])
    at = next(i for i, (same, _) in enumerate(columns) if same)
    columns[at] = change(columns[at])
    return (*b[:5], columns)


FORGED = {
    "another format": lambda b: (b[0], b[1] + 1, *b[2:]),
    "a field the kind lacks": lambda b: (*b[:2], (*b[2][:-1], "nonsense"), *b[3:]),
    "fields out of order": lambda b: (*b[:2], b[2][::-1], b[3], b[4], b[5][::-1]),
    "not a bool": lambda b: (*b[:3], 0, *b[4:]),
    "a column short": lambda b: (*b[:5], b[5][:-1]),
    "a row too few": lambda b: (*b[:4], b[4] - 1, b[5]),
    "a count that is no number": lambda b: (*b[:4], float(b[4]), b[5]),
    "a column a cell short": lambda b: _plain(b, lambda c: (c[0], c[1][:-1])),
    "a cell that is no scalar": lambda b: _plain(b, lambda c: (c[0], (*c[1][:-1], [c[1][-1]]))),
    "one cell that is no scalar": lambda b: _same(b, lambda c: (c[0], [c[1]])),
    "a column's cells in a list": lambda b: _plain(b, lambda c: (c[0], list(c[1]))),
    "a column's flag no bool": lambda b: _same(b, lambda c: (1, c[1])),
    "a column that is a list": lambda b: _same(b, list),
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
        kept_rows._rows_in(body, None, body[4], frozenset(order), order, {})  # the real one is good
        with pytest.raises(cache.BadEntry):
            kept_rows._rows_in(forge(body), None, body[4], frozenset(order), order, {})
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


NAN = float("nan")


def test_the_rows_of_a_file_are_written_a_column_at_a_time(tmp_path: Path) -> None:
    """A file's servers share most of their cells: those columns are one cell in the entry."""
    for _ in range(2):
        _server_facts(ROOT / "tests/fixtures/fleet", tmp_path)
    entries = _rows_entries(tmp_path)
    assert entries
    flags = [same for _, _, body in entries for same, _ in body[5]]
    assert True in flags and False in flags


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_block_says_alike_only_of_columns_alike_in_all_its_rows(folder: str, tmp_path: Path) -> None:
    """What the rules stage takes on trust (checker.derive.rows.Block): the rows of a
    block, made together (cold) or read back (warm), have each column it names
    alike, in marshal's bytes, in every one of them."""
    import marshal

    for cache_dir in (None, tmp_path, tmp_path):
        inv, _ = load([ROOT / folder], options=ReadOptions(cache_dir=cache_dir))
        facts = build_all(inv, compute(inv), Context(AS_OF))
        blocks: dict[int, list[Any]] = {}
        for fact in facts:
            block = getattr(fact.values, "block", None)
            if block is not None:
                blocks.setdefault(id(block), []).append(fact.values)
        assert blocks
        for rows in blocks.values():
            for name in rows[0].block.same:
                at = rows[0].header.index[name]
                assert len({marshal.dumps(row.cells[at], 2) for row in rows}) == 1, name


def test_a_text_figure_changed_in_another_file_is_read_again(tmp_path: Path) -> None:
    """A rack's cooling changed in the facility file: its servers' file is the same,
    their `rack_cooling` figure (a text column of the capacity table, keyed by its
    values, not its bytes) is not, and their rows are made again."""
    inv = tmp_path / "inv"
    shutil.copytree(ROOT / "inventories", inv)
    for _ in range(2):
        _server_facts(inv, tmp_path / "cache")
    before = _server_facts(inv, tmp_path / "cache")
    facility = inv / "sh1" / "facility.yaml"
    rack = "  - name: A01\n    <<: *train-rack\n"
    assert rack in facility.read_text()
    facility.write_text(facility.read_text().replace(rack, rack + "    cooling: air\n"))
    after = _server_facts(inv, None)
    changed = {fact[0] for fact, was in zip(after, before, strict=True) if fact != was}
    assert changed == {"server/sh1-a01-gpu1", "server/sh1-a01-gpu2"}
    assert _server_facts(inv, tmp_path / "cache") == after
