"""checker.derive.kept_tables: the racks' and feeds' rows of each kept file, kept in the cache folder.

Whether a warm audit says what a cold one says is tests/test_results_cache.py's
(and which facts it makes again); here, the facts themselves (a rack's
figure no finding shows would pass there unseen) and the entries' checks."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from checker.derive import kept_tables
from checker.derive.capacity import compute
from checker.derive.facts import FEED_FIELDS, RACK_FIELDS, Context, Fact, build_all
from checker.load import cache
from checker.load.build import load
from checker.load.reading import ReadOptions
from tests.helpers import cache_entries

ROOT = Path(__file__).resolve().parents[2]
AS_OF = dt.date(2027, 1, 15)
FOLDERS = ["inventories", "examples/nvl72", "tests/fixtures/fleet", "tests/fixtures/every-field"]
KINDS = ("rack", "feed")


def _table_facts(folder: Path, cache_dir: Path | None, ctx: Context | None = None) -> list[tuple[Any, ...]]:
    """The rack and feed facts of one load and facts stage, as values: entity,
    file, where it is written, and every field the fact has."""
    inv, problems = load([folder], options=ReadOptions(cache_dir=cache_dir))
    assert not [p for p in problems if p.severity == "error"], problems
    facts: list[Fact] = build_all(inv, compute(inv), ctx or Context(AS_OF))
    return [
        (f.entity, f.file, f.src.line, f.src.column, [(k, type(v), repr(v)) for k, v in f.values.items()])
        for f in facts
        if f.kind in KINDS
    ]


def _entries(folder: Path) -> list[tuple[cache.Cache, str, Any]]:
    return cache_entries(folder, "table rows")


@pytest.mark.parametrize("folder", FOLDERS)
def test_rows_read_back_are_the_rows_a_cold_run_makes(folder: str, tmp_path: Path) -> None:
    cold = _table_facts(ROOT / folder, None)
    assert cold
    for _ in range(3):  # the files read afresh, then kept (their rows written), then their rows read
        assert _table_facts(ROOT / folder, tmp_path) == cold
    assert _entries(tmp_path)


def test_a_rack_whose_figures_changed_has_its_row_made_again(tmp_path: Path) -> None:
    """A server's draw capped in its own file: the facility file is the same,
    its rack's figures (and its feeds') are not, and their rows say so."""
    inv = tmp_path / "inv"
    shutil.copytree(ROOT / "inventories", inv)
    for _ in range(2):
        _table_facts(inv, tmp_path / "cache")
    before = _table_facts(inv, tmp_path / "cache")
    servers = inv / "sh1" / "servers-training.yaml"
    server = "{name: sh1-a01-gpu2, model: dgx-h100, rack: A01, position: 15"
    assert server in servers.read_text()
    servers.write_text(servers.read_text().replace(server, server + ", power_cap_w: 8000"))
    after = _table_facts(inv, None)
    changed = {fact[0] for fact, was in zip(after, before, strict=True) if fact != was}
    assert changed == {"rack/sh1/A01", "feed/sh1/A01/A01-A", "feed/sh1/A01/A01-B"}
    assert _table_facts(inv, tmp_path / "cache") == after
    assert _table_facts(inv, tmp_path / "cache") == after  # and read back so


def test_another_setting_is_another_entry(tmp_path: Path) -> None:
    for _ in range(2):
        _table_facts(ROOT / "inventories", tmp_path)
    other = Context(AS_OF, headroom_pct=25.0)
    cold = _table_facts(ROOT / "inventories", None, other)
    assert cold != _table_facts(ROOT / "inventories", None)  # the rows show it
    assert _table_facts(ROOT / "inventories", tmp_path, other) == cold


def _column(b: Any, text: bool, same: bool, change: Any) -> Any:
    """`b` with its first figure column of texts (or numbers), written as one
    value (or a value of each entity), changed by `change`; None if it has none."""
    columns = list(b[2])
    wanted = (i for i, (_, kind, one, _) in enumerate(columns) if (kind == "text") == text and one == same)
    at = next(wanted, None)
    if at is None:  # an entry without such a column (a chunk of one rack: each figure is one)
        return None
    columns[at] = change(columns[at])
    return (*b[:2], columns, b[3])


def _figure(b: Any, change: Any, same: bool = False) -> Any:
    return _column(b, False, same, change)


def _text(b: Any, change: Any, same: bool = False) -> Any:
    return _column(b, True, same, change)


FORGED = {
    "another format": lambda b: (b[0], b[1] + 1, *b[2:]),
    "a figure column short": lambda b: (*b[:2], b[2][:-1], b[3]),
    "figure columns out of order": lambda b: (*b[:2], b[2][::-1], b[3]),
    "a column of another name": lambda b: _figure(b, lambda c: ("nonsense", *c[1:])),
    "a column of another type": lambda b: _figure(b, lambda c: (c[0], "<i4", *c[2:])),
    "a figure a byte short": lambda b: _figure(b, lambda c: (*c[:3], c[3][:-1])),
    "one figure a byte short": lambda b: _figure(b, lambda c: (*c[:3], c[3][:-1]), same=True),
    "one figure said to be each": lambda b: None if b[3][2] < 2 else _figure(  # (of one entity, it is)
        b, lambda c: (c[0], c[1], False, c[3]), same=True),
    "figures said to be one": lambda b: _figure(b, lambda c: (c[0], c[1], True, c[3])),
    "a flag that is no bool": lambda b: _figure(b, lambda c: (c[0], c[1], 0, c[3]), same=True),
    "figures that are no bytes": lambda b: _figure(b, lambda c: (*c[:3], list(c[3]))),
    "a text that is no text": lambda b: _text(b, lambda c: (*c[:3], (1, *c[3][1:])), same=True),
    "a text column a text short": lambda b: _text(b, lambda c: (*c[:3], c[3][:-1]), same=True),
    "rows a row short": lambda b: (*b[:3], (*b[3][:2], b[3][2] - 1, b[3][3])),
    "rows that are no rows": lambda b: (*b[:3], list(b[3])),
    "not a tuple": lambda b: list(b),
}


@pytest.mark.parametrize("forge", FORGED.values(), ids=FORGED.keys())
def test_a_forged_entry_is_a_miss(tmp_path: Path, forge: Any) -> None:
    """Signed as the real ones are, wrong in one way: the rows are made again."""
    cold = _table_facts(ROOT / "inventories", None)
    for _ in range(2):
        _table_facts(ROOT / "inventories", tmp_path)
    entries = [(store, key, body, forge(body)) for store, key, body in _entries(tmp_path)]
    entries = [entry for entry in entries if entry[3] is not None]
    assert entries
    for store, key, body, forged in entries:
        store.put(key, cache.pack(forged))
        kind = "rack" if len(body[2]) > 20 else "feed"  # a rack has more figures than a feed
        order = [f.name for f in (RACK_FIELDS if kind == "rack" else FEED_FIELDS)]
        count = body[3][2]
        figures = {name: np.zeros(count, dtype=object if spelled == "text" else np.dtype(spelled))
                   for name, spelled, _, _ in body[2]}
        kept_tables._chunk_in(body, None, count, figures, frozenset(order), order, {})  # the real one is good
        with pytest.raises(cache.BadEntry):
            kept_tables._chunk_in(forged, None, count, figures, frozenset(order), order, {})
    assert _table_facts(ROOT / "inventories", tmp_path) == cold


def test_an_entry_holds_at_most_a_chunk_of_entities(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entities of one file go CHUNK to an entry: a changed rack rewrites its chunk's only."""
    monkeypatch.setattr(kept_tables, "CHUNK", 2)
    cold = _table_facts(ROOT / "inventories", None)
    for _ in range(3):
        assert _table_facts(ROOT / "inventories", tmp_path) == cold
    counts = [body[3][2] for _, _, body in _entries(tmp_path)]
    assert max(counts) == 2
    assert sum(counts) == len(cold)
