"""Each servers file's facts, carried by the resident process to the next command.

Building the server facts is most of the facts stage, and in a warm audit
after one file changed every other file's servers get the same rows again.
In the resident process (checker.core.carried) each run of servers of one
file read back from the cache folder (whose models and places are then the
very objects of the last command: checker.load.build, KeptFile) gets, while
its key is the same, the server rows (server_rows) and the facts of each
kind made of the servers' software (server_facts: framework, container,
engine, jax) that the last commands made of it. The key (server_runs, one
digest per run and command) holds everything they are made from:

- the servers' places by identity (each holds the server's validated model,
  its file and its source map), with their names, facilities and rollout dates;
- for the rows, their capacity cells (their rack's and facility's figures
  included: checker.derive.capacity.servers), as the values themselves;
- every field of the context (checker.derive.facts.Context: the audit date
  and the settings; a field added there is in the key with no change here),
  the knowledge tables by identity (the built-in ones, or this run's with a
  user's documents merged in), the GPU and server catalog's models and the
  workload fit figures (which count servers in every file), as values.

Values are compared as marshal bytes (format 2: no references, so equal values
give equal bytes), which tell 1, 1.0 and true apart and find NaN equal to
itself (capacity cells are plain Python values, checker.derive.capacity.table;
marshal would write a numpy scalar as its raw bytes). An object compared by
identity is held by what is carried, so its id cannot be another object's
while it is carried. Where something cannot be written as marshal bytes,
the facts are built as in a process of its own. What is built is what
checker.derive.facts builds (`build`), so a carried run gives the same
facts, checked byte for byte by tests/test_results_cache.py.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import itertools
import marshal
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from checker.core.carried import Carried
from checker.derive.capacity.table import Table
from checker.derive.carried_columns import Columns, per_item
from checker.derive.rows import Header, Row
from checker.load.build import Inventory, ServerEntry
from checker.source.parse import WrittenFloat

FORMAT = b"server rows 2\x00"
_MARSHAL = 2  # no references: equal values, equal bytes
MAX_HEADERS = 256  # sets of columns kept for the server rows' headers

Servers = Sequence[tuple[str, ServerEntry]]
F = TypeVar("F")  # a fact (checker.derive.facts.Fact)
Cells = Mapping[str, Sequence[Any]]
Headers = dict[tuple[str, ...], Header]


class Settings(Protocol):
    """checker.derive.facts.Context, a dataclass: every field of it is in the key
    (_shared), so a setting added to it is never left out; the knowledge tables
    by identity."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def knowledge(self) -> object: ...


@dataclass(frozen=True)
class Runs:
    """The servers of an inventory in its order, cut into runs of one file each:
    (start, end, digest), the digest of what every kind's facts of that run read
    but the kind's own inputs (None: not carried, a file read afresh)."""

    servers: Servers
    runs: tuple[tuple[int, int, bytes | None], ...]


def server_runs(inv: Inventory, ctx: Settings, workloads: Mapping[str, Mapping[str, Any]]) -> Runs:
    """The runs of `inv`'s servers, each digested once for every kind built of them."""
    servers = list(inv.servers.items())
    shared = _shared(inv, ctx, workloads)
    # Only a kept file's models and places are the next command's too (checker.load.build,
    # KeptFile, via Carried): another's are new objects each time, never found again.
    kept = {holder.file for holder in inv.kept}
    runs = []
    for lo, hi in file_runs([entry.place.file for _, entry in servers]):
        part = servers[lo:hi]
        key = _key(shared, part) if shared is not None and part[0][1].place.file in kept else None
        runs.append((lo, hi, key))
    return Runs(servers, tuple(runs))


BuildRows = Callable[[Servers, Cells, Headers], list[F]]  # the facts of these servers, with these cells


class Rows(Protocol[F]):
    """How server_rows reads a fact's row and makes the same fact of another row."""

    def row_of(self, fact: F) -> Row: ...

    def remade(self, fact: F, row: Row) -> F: ...


def server_rows(
    carried: Carried, runs: Runs, ctx: Settings, capacity: Cells, header_of: Headers, build: BuildRows[F],
    order: Sequence[str], rows: Rows[F],
) -> list[F]:
    """The server facts of every server of `runs` in its order (`build`: those of
    some servers with their `capacity` cells, under headers of `header_of`:
    kept_headers'), each file's run of them carried while its key and its
    cells are the same; then under one header, the columns any of them has in
    the kind's `order` (as the rules stage reads them fastest, and as a
    process of its own builds them), each file's run of them put under it
    once while its rows and that header are the same."""
    parts: list[tuple[bytes | None, _Facts[F] | None, Sequence[F]]] = []
    for lo, hi, digest in runs.runs:
        part = runs.servers[lo:hi]
        cells = {name: column[lo:hi] for name, column in capacity.items()}
        key = _with_cells(digest, cells) if digest is not None else None
        if key is None:
            parts.append((None, None, build(part, cells, header_of)))
            continue
        made = functools.partial(_made_rows, build, part, cells, header_of, ctx.knowledge)
        got = carried.get("server rows", key, _Facts, made)
        parts.append((key, got, got.facts))
    return _under_one_header(carried, parts, header_of, order, rows)


def _under_one_header(
    carried: Carried, parts: Sequence[tuple[bytes | None, _Facts[F] | None, Sequence[F]]], headers: Headers,
    order: Sequence[str], rows: Rows[F],
) -> list[F]:
    """The facts of every part under one header (see server_rows)."""
    per_part = [{rows.row_of(fact).header for fact in facts} for _, _, facts in parts]
    present: set[Header] = set().union(*per_part)
    if len(present) <= 1:
        return [fact for _, _, facts in parts for fact in facts]
    names = tuple(name for name in order if any(name in h.index for h in present))
    header = headers.get(names) or headers.setdefault(names, Header(names))
    out: list[F] = []
    for (key, holder, facts), seen in zip(parts, per_part, strict=True):
        if seen == {header}:
            out += facts
        elif key is None:
            out += _reheaded(facts, header, rows)
        else:
            # The header by identity, held: rows under it are read at C speed together.
            under = hashlib.blake2b(key + id(header).to_bytes(8, "little")).digest()
            made = functools.partial(_made_reheaded, facts, header, rows, holder)
            out += carried.get("server rows under one header", under, _Facts, made).facts
    return out


def _made_reheaded(facts: Sequence[F], header: Header, rows: Rows[F], holder: object) -> _Facts[F]:
    return _Facts((holder, header), tuple(_reheaded(facts, header, rows)))


def _reheaded(facts: Sequence[F], header: Header, rows: Rows[F]) -> list[F]:
    """The same facts, their rows under `header` (which has every column they have)."""
    under = _under([rows.row_of(f) for f in facts], header)
    return [rows.remade(fact, row) for fact, row in zip(facts, under, strict=True)]


def kept_headers(carried: Carried, kind: str) -> Headers:
    """The headers of a kind's rows, by their columns, shared by the commands a
    resident process runs (rows of the same columns then share one)."""
    known: Headers = carried.get("fact headers", kind.encode(), dict, dict)
    if len(known) > MAX_HEADERS:  # used by every command, so never dropped: bounded here
        known.clear()  # server rows under the headers cleared are put under one again (one_header)
    return known


@dataclass(frozen=True)
class _Facts(Generic[F]):
    """One file's run of a kind's facts, and every object whose id their key holds."""

    held: tuple[object, ...]
    facts: tuple[F, ...]


def server_facts(
    carried: Carried, runs: Runs, ctx: Settings, kind: str, build: Callable[[Servers], list[F]]
) -> list[F]:
    """The facts of a kind made of the servers' software alone (`build`: those
    of some servers, in their order), each kept file's run of them carried
    while its key is the same (these kinds read no capacity cells)."""
    facts: list[F] = []
    for lo, hi, digest in runs.runs:
        part = runs.servers[lo:hi]
        if digest is None:
            facts += build(part)
            continue
        made = functools.partial(_made_facts, build, part, ctx.knowledge)
        key = hashlib.blake2b(digest + kind.encode()).digest()  # the digest has one length: no ambiguity
        facts += carried.get("server facts", key, _Facts, made).facts
    return facts


def _held(knowledge: object, part: Servers) -> tuple[object, ...]:
    """Every object whose id a run's key holds (made only when what is carried is made)."""
    return (knowledge, *(entry.place for _, entry in part))


def _made_facts(build: Callable[[Servers], list[F]], part: Servers, knowledge: object) -> _Facts[F]:
    return _Facts(_held(knowledge, part), tuple(build(part)))


def _made_rows(
    build: BuildRows[F], part: Servers, cells: Cells, headers: Headers, knowledge: object
) -> _Facts[F]:
    return _Facts(_held(knowledge, part), tuple(build(part, cells, headers)))


def file_runs(files: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of consecutive servers of one file."""
    ends = list(itertools.accumulate(len(list(group)) for _, group in itertools.groupby(files)))
    starts = [0, *ends][: len(ends)]
    return list(zip(starts, ends, strict=True))


def _shared(inv: Inventory, ctx: Settings, workloads: Mapping[str, Mapping[str, Any]]) -> bytes | None:
    """What every server's rows read besides its own server and cells, as bytes:
    every field of the context (the knowledge tables by identity), the catalog
    and the workload figures; None if some of it cannot be written so."""
    return shared_values(inv, ctx, workloads, id(ctx.knowledge))


def shared_values(
    inv: Inventory, ctx: Settings, workloads: Mapping[str, Mapping[str, Any]], knowledge: int | str
) -> bytes | None:
    """_shared with the knowledge tables spelled `knowledge` (the resident
    process: their id; checker.derive.kept_rows: "builtin", the only ones it keys)."""
    try:
        settings = [
            (f.name, knowledge if f.name == "knowledge" else _plain(value))
            for f in dataclasses.fields(ctx)
            for value in (getattr(ctx, f.name),)
        ]
        return FORMAT + marshal.dumps((settings, _catalog(inv), _workloads(workloads)), _MARSHAL)
    except ValueError:  # a value neither marshal nor _plain writes
        return None


def _catalog(inv: Inventory) -> Any:
    return [
        [(name, _plain(placed.value.model_dump())) for name, placed in table.items()]
        for table in (inv.gpu_models, inv.server_models)
    ]


def _workloads(figures: Mapping[str, Mapping[str, Any]]) -> Any:
    return [
        (name, [(k, _plain(v.model_dump() if k == "model" else v)) for k, v in values.items()])
        for name, values in figures.items()
    ]


_SCALARS = (type(None), bool, int, float, str)


def _plain(value: Any) -> Any:
    """A model's dumped values as marshal writes them, each kind of container and
    value told apart (a date, a number as the YAML wrote it); ValueError on
    anything else."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return ("m", [(_plain(k), _plain(v)) for k, v in value.items()])
    if kind is list or kind is tuple:
        return (kind.__name__, [_plain(v) for v in value])
    if kind is dt.date:
        return ("d", value.isoformat())
    if kind is WrittenFloat:
        return ("f", float(value), value.yaml_text)
    raise ValueError(f"no plain spelling for {kind.__name__}")


def _key(shared: bytes, part: Servers) -> bytes | None:
    """What a run's facts read of its servers: their names, places (by identity:
    a place holds the server's model, its file and its source map), facilities
    and rollout dates, after `shared`."""
    entries = [entry for _, entry in part]
    dates = [entry.rollout_date for entry in entries]
    # A document's date is every one of its servers': each distinct one written once as text.
    iso: dict[dt.date | None, str | None] = {d: d.isoformat() for d in set(dates) if d is not None}
    body = (
        [name for name, _ in part],
        list(map(id, map(operator.attrgetter("place"), entries))),
        list(map(operator.attrgetter("facility"), entries)),
        list(map(iso.get, dates)),
    )
    try:
        return hashlib.blake2b(shared + marshal.dumps(body, _MARSHAL)).digest()
    except ValueError:  # a value marshal does not write
        return None


def _with_cells(digest: bytes, cells: Cells) -> bytes | None:
    """A run's digest with its capacity cells (the server rows read them), as values."""
    try:
        return hashlib.blake2b(digest + marshal.dumps((list(cells), list(cells.values())), _MARSHAL)).digest()
    except ValueError:  # a value marshal does not write
        return None


def one_header(rows: list[Row], headers: Headers, order: Sequence[str]) -> list[Row]:
    """The rows under one header: the columns any of them has, in the kind's order."""
    distinct = set(map(_HEADER_OF, rows))  # headers compare by identity; gathered at C speed
    if len(distinct) <= 1:
        return rows
    present = {name for header in distinct for name in header.names}
    names = tuple(name for name in order if name in present)
    return _under(rows, headers.get(names) or headers.setdefault(names, Header(names)))


_HEADER_OF = operator.attrgetter("header")


def _under(rows: list[Row], header: Header) -> list[Row]:
    """The rows under `header`, which has every column they have."""
    distinct = {id(row.header): row.header for row in rows}
    names = header.names
    # Each header's cells picked in the new order, None (one past the end) where it has no such column.
    pick = {i: operator.itemgetter(*[h.index.get(n, len(h.names)) for n in names])
            for i, h in distinct.items()}
    # The same cells (and Nones): whether one is NaN is what the row knew, and
    # which of its columns are alike in its block (by name: however they are laid out).
    if len(names) == 1:
        return [Row(header, (pick[id(row.header)]((*row.cells, None)),), row.nan, row.block) for row in rows]
    return [Row(header, pick[id(row.header)]((*row.cells, None)), row.nan, row.block) for row in rows]


# ---------------------------------------------------------------- racks and feeds
BuildSome = Callable[[Sequence[int], Headers], list[F]]  # the facts of these entities, under these headers


def table_facts(
    carried: Carried, kind: str, places: Sequence[object], table: Table[Any], constant: object,
    build: BuildSome[F],
) -> list[F]:
    """The facts of a kind made of one capacity table's entities (racks, feeds:
    written at `places`, in the table's order), each the last command's where
    what it is made from is the same (checker.derive.carried_columns.per_item): its place
    (by identity: the place holds the model, its file and its source map; its
    key is made of names written there), its row of every column of `table`,
    and `constant` (what every entity's facts read besides, as marshal bytes).
    `build`: the facts of some entities (indices into `places`), under these
    headers; the others are not built again.

    A warm audit after one servers file changed changes the capacity of the
    racks its servers stand in: the other racks' and feeds' facts are those
    of the last command, so the rules stage asks nothing of them again
    (checker.evaluate.engine, `evaluate` with `carried`)."""
    headers = kept_headers(carried, kind)
    try:
        fixed = marshal.dumps(cast(Any, constant), _MARSHAL)
    except ValueError:  # a value marshal does not write: built as in a process of its own
        return build(range(len(places)), headers)

    def made(some: Sequence[int]) -> Columns:
        return {"facts": build(some, headers)}

    return cast(list[F], per_item(carried, f"{kind} facts", places, fixed, made, table.columns)["facts"])
