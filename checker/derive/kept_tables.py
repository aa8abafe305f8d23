"""The racks' and feeds' fact rows of each kept file, kept between runs in the cache folder.

After one servers file changed, only the racks its servers stand in, and
their feeds, have other capacity figures; yet a warm audit in a process of
its own made the facts of every rack and feed again (a 100,000-server
fleet's 25,000 racks and 50,000 feeds: about an eighth of the command). The
resident process gives the others its last command's facts
(checker.derive.carried_rows.table_facts); a process of its own with a cache
folder reads their rows from entries instead, CHUNK entities of one kept
file to an entry, and makes again only the rows of entities whose figures
changed.

An entry's key is what a row reads besides the entity's capacity figures:

- the entities' models and places: those of kept_rows (the file's name, its
  content key, the catalog digest and the digest of its entry: a rack's or
  feed's model is its file's alone, checker.load.validated.KeptFacility);
- the entities' keys, in the table's order (their names and facility);
- the kind, what every row reads besides (`constant`: the headroom setting),
  as marshal bytes, and the code that makes the rows (cache.code_salt).

It holds, beside the rows, the capacity figures each was made from: every
column of the table, compared bit for bit as the resident process compares
them (checker.derive.carried_columns.unchanged). A row whose figures are the
same is read back; the others are made, and the entry is written again with
them. The entry is read as every cache entry is (signed, then checked type
by type: the columns are the table's, in its order, of its types, one value
per entity; the rows as kept_rows checks them); anything wrong with it and
its rows are made as in a cold run. tests/derive/test_kept_tables.py
compares the facts with a cold run's; tests/test_results_cache.py the whole
output, byte for byte.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from checker.derive import kept_rows
from checker.derive.capacity import Table
from checker.derive.carried_columns import unchanged
from checker.derive.carried_rows import Headers, file_runs, one_header
from checker.derive.rows import Row
from checker.load import cache
from checker.load.build import Inventory, Placed

FORMAT = 1
CHUNK = 2_000  # entities to an entry: a changed rack rewrites the entry of 2,000, not of all
BuildRows = Callable[[Sequence[int], Headers], list[Row]]  # the rows of these entities (table indices)

# The column types an entry holds as bytes: the capacity tables' numbers and flags.
_NUMBERS = frozenset({"<f8", "<i8", "|b1"})
_TEXT = frozenset({str, type(None)})


def table_rows(
    inv: Inventory, kind: str, places: Sequence[Placed[Any]], table: Table[Any], constant: object,
    build: BuildRows, order: Sequence[str],
) -> list[Row]:
    """The rows of the entities of `table` (written at `places`, in its order),
    under one header of the kind's fields in `order`; those of kept files read
    from their entries where their figures are what they were (`build`: the
    rows of some entities, made)."""
    headers: Headers = {}
    holders = {holder.file: holder for holder in inv.kept}
    files = [place.file for place in places]
    try:
        fixed = marshal.dumps(cast(Any, (FORMAT, kind, constant)), 2)  # 2: no references
    except ValueError:  # a value marshal does not write: made as in a cold run
        return one_header(build(range(len(places)), headers), headers, order)
    rows: list[Row] = []
    for lo, hi in file_runs(files):
        holder = holders.get(files[lo])
        if holder is None:
            rows += build(range(lo, hi), headers)
            continue
        spelled = marshal.dumps(kept_rows.places_of(holder), 2)
        shared = cache.code_salt() + b"kept table rows\x00" + fixed + spelled
        chunk = functools.partial(_chunk, holder.kept.cache, shared, table, build, order, headers)
        for start in range(lo, hi, CHUNK):
            rows += chunk(range(start, min(hi, start + CHUNK)))
    return one_header(rows, headers, order)


def _chunk(
    store: cache.Cache, shared: bytes, table: Table[Any], build: BuildRows, order: Sequence[str],
    headers: Headers, at: range,
) -> list[Row]:
    """The rows of the entities at `at`, read from their entry where their
    figures are unchanged, and the entry written again if any was made."""
    keys = list(table.keys[at.start : at.stop])
    figures = {name: column[at.start : at.stop] for name, column in table.columns.items()}
    try:
        key = hashlib.sha256(shared + marshal.dumps(keys, 2)).hexdigest()
    except ValueError:  # a key marshal does not write
        return build(at, headers)
    known = frozenset(order)
    got = store.versioned(key, functools.partial(_chunk_in, count=len(at), figures=figures, known=known,
                                                 order=order, headers=headers))
    if got is None:
        rows = build(at, headers)
    else:
        was, rows = got
        same = np.ones(len(at), dtype=bool)
        for name, column in figures.items():
            same &= unchanged(was[name], column)
        changed = np.flatnonzero(~same).tolist()
        if not changed:
            return rows
        for i, row in zip(changed, build([at.start + i for i in changed], headers), strict=True):
            rows[i] = row
    written = _chunk_out(figures, rows, order)
    if written is None:
        return rows
    payload, body = written
    store.put(key, payload)
    # The rows as the entry now holds them, in one block of its version.
    return kept_rows.rows_in(body, len(at), known, order, headers, cache.entry_version(key, payload))


def _chunk_out(
    figures: dict[str, npt.NDArray[Any]], rows: Sequence[Row], order: Sequence[str]
) -> tuple[bytes, Any] | None:
    """The figures and rows of a chunk as an entry's payload, with the rows as it
    holds them (kept_rows.rows_body); None if they cannot be written so."""
    # A column of one figure (bit for bit, or one text) is written as that figure once:
    # most racks of a rollout are alike but for their names.
    columns: list[tuple[str, str, bool, bytes | tuple[Any, ...]]] = []
    for name, column in figures.items():
        if column.dtype.str in _NUMBERS:
            raw = column.tobytes()
            one = raw[: column.dtype.itemsize]
            same = raw == one * len(column)
            columns.append((name, column.dtype.str, same, one if same else raw))
        elif column.dtype == object and _TEXT.issuperset(map(type, texts := tuple(column.tolist()))):
            same = texts == texts[:1] * len(texts)
            columns.append((name, "text", same, texts[:1] if same else texts))
        else:  # a column an entry does not hold: the rows are made each run
            return None
    body = kept_rows.rows_body(rows, order)
    try:
        return cache.pack(("table rows", FORMAT, columns, body)), body
    except (cache.Unencodable, ValueError):  # a cell marshal does not write
        return None


def _chunk_in(
    body: Any, version: bytes | None, count: int, figures: dict[str, npt.NDArray[Any]], known: frozenset[str],
    order: Sequence[str], headers: Headers,
) -> tuple[dict[str, npt.NDArray[Any]], list[Row]]:
    """The figures and rows of an entry, checked: a column of each of the
    table's (`figures`, this run's), in its order and of its type, and a row of
    each entity (in one block of `version`)."""
    if body.__class__ is not tuple or len(body) != 4 or body[:2] != ("table rows", FORMAT):
        raise cache.BadEntry("not table rows")
    _, _, columns, rows = body
    if columns.__class__ is not list or len(columns) != len(figures):
        raise cache.BadEntry("not a column of each figure")
    was: dict[str, npt.NDArray[Any]] = {}
    for written, (name, now) in zip(columns, figures.items(), strict=True):
        if written.__class__ is not tuple or len(written) != 4 or written[0] != name:
            raise cache.BadEntry("not the table's column")
        if written[2].__class__ is not bool:
            raise cache.BadEntry("not whether a column is one figure")
        was[name] = _figures_in(written[1], written[2], written[3], now, count)
    return was, kept_rows.rows_in(rows, count, known, order, headers, version)


def _figures_in(kind: Any, same: bool, cells: Any, now: npt.NDArray[Any], count: int) -> npt.NDArray[Any]:
    """One column of figures as written, checked: this run's column's type, a
    value of each entity (`same`: one value, that of every entity)."""
    if kind != now.dtype.str and not (kind == "text" and now.dtype == object):
        raise cache.BadEntry("a column of another type")
    written = 1 if same else count
    if kind == "text":
        if cells.__class__ is not tuple or len(cells) != written or not _TEXT.issuperset(map(type, cells)):
            raise cache.BadEntry("not a text of each entity")
        column = np.empty(count, dtype=object)
        column[:] = cells * (count if same else 1)
        return column
    if cells.__class__ is not bytes or len(cells) != written * now.dtype.itemsize:
        raise cache.BadEntry("not a figure of each entity")
    return np.frombuffer(cells * (count if same else 1), dtype=now.dtype)
