"""Each kept servers file's server fact rows, kept between runs in the cache folder.

The server facts are most of the facts stage (about a third of a warm
100,000-server audit in a process of its own), and after one file changed
every other file's servers get the same rows again. A file whose validated
documents an earlier run kept (checker.load.validated: its models are then
those of its entry) gets, in a process of its own with a cache folder, the
rows an earlier run made of its servers while everything they are made from
is the same. The resident process carries them in memory instead
(checker.derive.carried_rows, whose key this one follows, with the two
things it compares by identity given by content here):

- the servers' models and places: the file's name, its content key, the
  catalog digest its servers were merged with and the digest of its entry
  (the models, their source maps and positions are made from those alone);
- the servers' names, facilities and rollout dates, as values, and their
  capacity figures (their rack's and facility's included: the table the
  cells are made of), numbers bit for bit;
- every field of the context (checker.derive.facts.Context: the audit date
  and the settings), the catalog's models and the workload fit figures, as
  values; the knowledge tables only when they are the built-in ones (the
  cache's salt holds their files): with a user's documents merged in, the
  rows are made as in a cold run.

The code that makes the rows is in the key (checker.load.cache.code_salt:
every module of checker). An entry is read as every cache entry is (signed,
then checked type by type: the header's names are the kind's, in its order,
each row as long and of scalar cells; whether a cell is NaN, worked out when
it was written, as every value of an entry is trusted to be what its writer
wrote); anything wrong with it, or anything
marshal does not write, and the rows are made as in a cold run. The facts
are the same: tests/test_results_cache.py compares warm runs with cold ones
byte for byte, and tests/derive/test_kept_rows.py the rows themselves.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import itertools
import marshal
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from checker.derive import carried_rows
from checker.derive.capacity import Table
from checker.derive.carried_rows import Cells, Headers, Servers, one_header
from checker.derive.rows import Block, Header, Row, made_rows
from checker.load import cache
from checker.load.build import Inventory, KeptFile

FORMAT = 4  # 4: keyed by the capacity figures (3: by their cells; 2: a row at a time)
BuildRows = Callable[[Servers, Cells, Headers], list[Row]]  # the rows of these servers, with these cells


def server_rows(
    inv: Inventory, ctx: carried_rows.Settings, workloads: Mapping[str, Mapping[str, Any]], builtin: object,
    capacity: Table[str], build: BuildRows, order: Sequence[str],
) -> list[Row]:
    """The server rows of every server of `inv` in its order (`build`: those of
    some servers with their cells of the `capacity` table, the servers'), each
    kept file's read from its entry while its key is the same, the others made
    and written for the next run; then under one header, the columns any of
    them has in the kind's `order`, as a cold run builds them. `builtin`: the
    built-in knowledge tables (the only ones keyed)."""
    servers = list(inv.servers.items())
    headers: Headers = {}
    shared = _shared(inv, ctx, workloads, builtin)
    holders = {holder.file: holder for holder in inv.kept}
    known = frozenset(order)
    rows: list[Row] = []
    for lo, hi in carried_rows.file_runs([entry.place.file for _, entry in servers]):
        part = servers[lo:hi]
        holder = holders.get(part[0][1].place.file)
        key = None if shared is None or holder is None else _key(shared, holder, part, capacity, lo, hi)
        if key is None or holder is None:  # (holder: for mypy, which cannot see through key)
            rows += build(part, capacity.cells_at(range(lo, hi)), headers)
            continue
        store = holder.kept.cache
        got = store.versioned(key, functools.partial(_rows_in, count=len(part), known=known, order=order,
                                                     headers=headers))
        if got is None:
            got = build(part, capacity.cells_at(range(lo, hi)), headers)
            written = _rows_out(got, order)
            if written is not None:
                payload, body = written
                store.put(key, payload)
                # As the entry now holds them, in one block of its version.
                got = rows_in(body, len(part), known, order, headers, cache.entry_version(key, payload))
        rows += got
    return one_header(rows, headers, order)


def _shared(
    inv: Inventory, ctx: carried_rows.Settings, workloads: Mapping[str, Mapping[str, Any]], builtin: object
) -> bytes | None:
    """What every server's rows read besides its own server and cells, as bytes;
    None when the knowledge tables are not the built-in ones or a value has no
    spelling."""
    if ctx.knowledge is not builtin:
        return None
    spelled = carried_rows.shared_values(inv, ctx, workloads, "builtin")
    if spelled is None:
        return None
    return hashlib.sha256(cache.code_salt() + b"kept rows\x00" + spelled).digest()


def places_of(holder: KeptFile) -> tuple[str, str, bytes, bytes]:
    """What the models and places of a kept file's entities are made from, as
    values: the file's name, its content key, the catalog digest its servers
    were merged with and the digest of its entry."""
    return holder.file, holder.kept.key, holder.digest, hashlib.sha256(holder.kept.payload).digest()


def _key(
    shared: bytes, holder: KeptFile, part: Servers, capacity: Table[str], lo: int, hi: int
) -> str | None:
    entries = [entry for _, entry in part]
    rollouts = [entry.rollout_date for entry in entries]
    # Each distinct date spelled once: a file's servers mostly share theirs.
    spelled: dict[dt.date | None, str | None] = {day: day.isoformat() for day in set(rollouts) if day}
    spelled[None] = None
    dates = list(map(spelled.__getitem__, rollouts))
    # The cells are made of the servers' capacity figures alone (Table.cells): the
    # figures key them, numbers bit for bit at C speed (not the cells, made each
    # run), others (texts) as their values (the bytes of an object column are pointers).
    parts = [(name, column[lo:hi]) for name, column in capacity.columns.items()]
    figures = [(name, part.dtype.str, part.tolist() if part.dtype == object else part.tobytes())
               for name, part in parts]
    body = (
        FORMAT, *places_of(holder), [name for name, _ in part], [entry.facility for entry in entries], dates,
        figures,
    )
    try:
        return hashlib.sha256(shared + marshal.dumps(body, 2)).hexdigest()  # 2: no references
    except ValueError:  # a value marshal does not write
        return None


def _rows_out(rows: Sequence[Row], order: Sequence[str]) -> tuple[bytes, Any] | None:
    """The rows as an entry: their header's names once, and each column's cells,
    a column whose cells are all the same (in type and bits) as that one cell.

    A file's servers mostly share their model, defaults and rack figures: most
    columns hold one value, written once, not once a server (a 400-server
    file's rows took 180 kB as one tuple a row), and read back checked a
    column at a time (each row's cells checked was a third of reading them)."""
    body = rows_body(rows, order)
    try:
        return cache.pack(("server rows", FORMAT, *body)), body
    except (cache.Unencodable, ValueError):  # a cell marshal does not write (a float as the YAML wrote it)
        return None


def rows_body(rows: Sequence[Row], order: Sequence[str]) -> tuple[tuple[str, ...], bool, int, list[Any]]:
    """Rows as an entry holds them (_rows_out; rows_in reads them back): their
    header's names, whether a cell is NaN, their count and each column."""
    if len({id(row.header) for row in rows}) > 1:
        rows = one_header(list(rows), {}, order)
    names = rows[0].header.names if rows else ()
    # Whether a cell is NaN (the rules stage asks every row: Row.has_nan), asked
    # once here, so that rows read back need not be asked again.
    nan = any(row.has_nan for row in rows)
    columns = list(zip(*(row.cells for row in rows), strict=True)) if names else []
    return names, nan, len(rows), [cache.column_out(c) for c in columns]


def _rows_in(
    body: Any, version: bytes | None, count: int, known: frozenset[str], order: Sequence[str],
    headers: Headers,
) -> list[Row]:
    if body.__class__ is not tuple or len(body) != 6 or body[:2] != ("server rows", FORMAT):
        raise cache.BadEntry("not server rows")
    return rows_in(body[2:], count, known, order, headers, version)


def rows_in(
    body: Any, count: int, known: frozenset[str], order: Sequence[str], headers: Headers,
    version: bytes | None = None,
) -> list[Row]:
    """The rows of rows_body's `body`, checked: `count` rows of the kind's fields
    (`known`, in its `order`), of scalar cells, under headers of `headers`, in
    one Block of that `version`."""
    if body.__class__ is not tuple or len(body) != 4:
        raise cache.BadEntry("not rows")
    names, nan, written, columns = body
    if nan.__class__ is not bool:
        raise cache.BadEntry("not whether a cell is NaN")
    if names.__class__ is not tuple or not {str}.issuperset(map(type, names)) or not known.issuperset(names):
        raise cache.BadEntry("not the kind's fields")
    if list(names) != [name for name in order if name in names]:
        raise cache.BadEntry("fields out of order")
    if written.__class__ is not int or written != count:
        raise cache.BadEntry("not a row of each server")
    if columns.__class__ is not list or len(columns) != len(names):
        raise cache.BadEntry("not a column of each field")
    cells = [cache.column_cells(column, count) for column in columns]
    rows: Iterable[tuple[Any, ...]] = zip(*cells, strict=True) if cells else itertools.repeat((), count)
    header = headers.get(names) or headers.setdefault(names, Header(names))
    # A column written as one cell is that one object in every row.
    block = Block(frozenset(name for name, (same, _) in zip(names, columns, strict=True) if same), version)
    # None: each row asked by the rules stage (Row.has_nan).
    return made_rows(header, rows, count, None if nan else False, block)
