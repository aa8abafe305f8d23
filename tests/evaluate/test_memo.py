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


def _first(b: Any, change: Any) -> Any:
    """`b` with the first finding of its first row that has one changed by `change`."""
    rows = list(b[2])
    at = next(i for i, row in enumerate(rows) if row)
    rows[at] = (change(rows[at][0]), *rows[at][1:])
    return (*b[:2], rows)


FORGED = {
    "another format": lambda b: (b[0], b[1] + 1, b[2]),
    "a row too few": lambda b: (*b[:2], b[2][:-1]),
    "rows in a tuple": lambda b: (*b[:2], tuple(b[2])),
    "a row that is a list": lambda b: (*b[:2], [list(row) for row in b[2]]),
    "a rule past the rules": lambda b: _first(b, lambda f: (10_000, *f[1:])),  # (fewer than that)
    "a rule below the rules": lambda b: _first(b, lambda f: (-1, *f[1:])),
    "a line that is no number": lambda b: _first(b, lambda f: (f[0], str(f[1]), *f[2:])),
    "a column that is a bool": lambda b: _first(b, lambda f: (*f[:2], True, f[3])),
    "a shape of a list": lambda b: _first(b, lambda f: (*f[:3], ([1],))),
    "a shape that is a list": lambda b: _first(b, lambda f: (*f[:3], list(f[3]))),
    "a finding short": lambda b: _first(b, lambda f: f[:3]),
    "not a tuple": lambda b: list(b),
}


@pytest.mark.parametrize("forge", FORGED.values(), ids=FORGED.keys())
def test_a_forged_entry_is_a_miss(inv: Path, tmp_path: Path, forge: Any) -> None:
    """Signed as the real ones are, wrong in one way: the chunk is matched again."""
    cold = _audit(inv, None, tmp_path)
    for _ in range(3):  # read afresh, then kept (the chunks' rows written), then found on them kept
        assert _audit(inv, tmp_path / "cache", tmp_path) == cold
    entries = _found(tmp_path / "cache")
    assert any(row for _, _, body in entries for row in body[2])  # some rack or feed has a finding
    # As many rules as the entries name: the real entries are then read back as they are.
    rules = 1 + max(item[0] for _, _, body in entries for row in body[2] for item in row)
    for store, key, body in entries:
        if not any(body[2]):
            continue
        assert memo._found_in(body, len(body[2]), rules) == body[2]  # the real entry is good
        store.put(key, cache.pack(forge(body)))
        with pytest.raises(cache.BadEntry):
            memo._found_in(forge(body), len(body[2]), rules)
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
