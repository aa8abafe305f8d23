"""checker.evaluate.memo.Found: what the rules found on a kept chunk of racks or
feeds, kept in the cache folder.

Whether a warm audit says what a cold one says, and that it matches no rack
or feed again, is tests/test_results_cache.py's; here, the entries' checks
and their key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from checker.cli import main
from checker.evaluate import memo
from checker.load import cache
from tests.helpers import cache_entries

ROOT = Path(__file__).resolve().parents[2]
AS_OF = "2027-01-15"


def _audit(folder: Path, cache_dir: Path | None, tmp: Path, *extra: str) -> bytes:
    out = tmp / "out.json"
    where = ["--cache-dir", str(cache_dir)] if cache_dir else ["--no-cache"]
    code = main(["audit", str(folder), "--as-of", AS_OF, "--format", f"json:{out}", *where, *extra])
    assert code in (0, 1)
    return out.read_bytes()


def _found(folder: Path) -> list[tuple[cache.Cache, str, Any]]:
    return cache_entries(folder, "found")


@pytest.fixture
def inv(tmp_path: Path) -> Path:
    folder = tmp_path / "inv"
    shutil.copytree(ROOT / "inventories", folder)
    return folder


def _column(b: Any, k: int, change: Any) -> Any:
    """`b` with its column `k` (memo.KeptColumns: rows, rules, lines, columns, shapes) changed."""
    columns = list(b[3])
    columns[k] = change(columns[k])
    return (*b[:3], columns)


def _first(b: Any, k: int, value: Any) -> Any:
    """`b` with the first finding's part `k` that value."""
    return _column(b, k, lambda c: [value, *c[1:]])


def _ahead(b: Any) -> Any:
    """`b` with its last finding put first, ahead of those on rows above its own
    (for an entry whose findings are on more than one row)."""
    return (*b[:3], [[c[-1], *c[:-1]] for c in b[3]])


# Each with what it is refused for: its own fault, not another's.
FORGED = {
    "another format": (lambda b: (b[0], b[1] + 1, *b[2:]), "not findings"),
    "not a tuple": (lambda b: list(b), "not findings"),
    "a row too few": (lambda b: (*b[:2], b[2] - 1, b[3]), "not the findings of each row"),
    "a count that is no number": (lambda b: (*b[:2], str(b[2]), b[3]), "not the findings of each row"),
    "columns in a tuple": (lambda b: (*b[:3], tuple(b[3])), "not the columns of findings"),
    "a column too few": (lambda b: (*b[:3], b[3][:-1]), "not the columns of findings"),
    "a column that is a tuple": (lambda b: _column(b, 2, tuple), "not the columns of findings"),
    "a column short": (lambda b: _column(b, 2, lambda c: c[:-1]), "not a column of each"),
    "a row past the rows": (lambda b: _column(b, 0, lambda c: [*c[:-1], b[2]]), "not the findings of each"),
    "a row below the rows": (lambda b: _first(b, 0, -1), "not the findings of each row"),
    "a row out of order": (_ahead, "not the findings of each row"),
    "a rule past the rules": (lambda b: _first(b, 1, 10_000), "not a finding of these rules"),  # (fewer)
    "a rule below the rules": (lambda b: _first(b, 1, -1), "not a finding of these rules"),
    "a line that is no number": (lambda b: _column(b, 2, lambda c: [str(c[0]), *c[1:]]), "not a finding of"),
    "a column that is a bool": (lambda b: _first(b, 3, True), "not a finding of these rules"),
    "a shape of a list": (lambda b: _first(b, 4, ([1],)), "not what a message reads"),
    "a shape that is a list": (lambda b: _column(b, 4, lambda c: [list(c[0]), *c[1:]]), "not what a message"),
}


@pytest.mark.parametrize("label", FORGED)
def test_a_forged_entry_is_a_miss(inv: Path, tmp_path: Path, label: str) -> None:
    """Signed as the real ones are, wrong in one way: the chunk is matched again."""
    forge, refused = FORGED[label]
    cold = _audit(inv, None, tmp_path)
    for _ in range(3):  # read afresh, then kept (the chunks' rows written), then found on them kept
        assert _audit(inv, tmp_path / "cache", tmp_path) == cold
    entries = _found(tmp_path / "cache")
    assert any(body[3][0] for _, _, body in entries)  # some rack or feed has a finding
    # As many rules as the entries name: the real entries are then read back as they are.
    rules = 1 + max(rule for _, _, body in entries for rule in body[3][1])
    forged = 0
    for store, key, body in entries:
        if not body[3][0] or (forge is _ahead and len(set(body[3][0])) == 1):
            continue
        assert memo._found_in(body, body[2], rules) == memo.KeptColumns(*body[3])  # the real entry is good
        store.put(key, cache.pack(forge(body)))
        with pytest.raises(cache.BadEntry, match=refused):
            memo._found_in(forge(body), body[2], rules)
        forged += 1
    assert forged
    assert _audit(inv, tmp_path / "cache", tmp_path) == cold


def test_other_rules_find_afresh(inv: Path, tmp_path: Path) -> None:
    """What the rules found is kept for those rules: with one ignored, or only
    some selected, the chunks are matched again and say what a cold run says."""
    for _ in range(3):
        _audit(inv, tmp_path / "cache", tmp_path)
    for extra in (["--ignore", "power.rack-headroom"], ["--select", "power.*"]):
        cold = _audit(inv, None, tmp_path, *extra)
        assert cold != _audit(inv, None, tmp_path)
        assert _audit(inv, tmp_path / "cache", tmp_path, *extra) == cold


def test_a_chunk_is_found_on_under_its_rows_version(inv: Path, tmp_path: Path) -> None:
    """A rack's figures changed: its chunk's rows are another version, found on
    afresh; changed back, the first version's findings are found again. Both
    servers of rack A01 capped, its finding (power.psu-side-degraded) goes."""
    servers = inv / "sh1" / "servers-training.yaml"
    text = servers.read_text()
    capped = text
    for server in ("{name: sh1-a01-gpu1, model: dgx-h100, rack: A01, position: 5",
                   "{name: sh1-a01-gpu2, model: dgx-h100, rack: A01, position: 15"):
        assert server in text
        capped = capped.replace(server, server + ", power_cap_w: 4000")
    found = []
    for version in (text, capped, text, capped):
        servers.write_text(version)
        cold = _audit(inv, None, tmp_path)
        found.append(("power.psu-side-degraded", "rack/sh1/A01") in
                     {(f["rule"], f["entity"]) for f in json.loads(cold)["findings"]})
        for _ in range(2):
            assert _audit(inv, tmp_path / "cache", tmp_path) == cold
    assert found == [True, False, True, False]
