"""Each servers file's fact rows, carried by the resident process to the next command.

Building the server facts is most of the facts stage, and in a warm audit
after one file changed every other file's servers get the same rows again.
In the resident process (checker.core.carried) the rows of each run of
servers of one file read back from the cache folder (whose models are then
the very objects of the last command) are kept under a key of everything
they are made from, and used again where the key is the same:

- the servers' own validated models, by identity (a kept file's models are
  the very objects of the last command: checker.load.validated via Carried),
  with their names, facilities and rollout dates;
- their capacity cells (their rack's and facility's figures included:
  checker.derive.capacity.servers), as the values themselves;
- every field of the context (checker.derive.facts.Context: the audit date
  and the settings; a field added there is in the key with no change here),
  the knowledge tables by identity (the built-in ones, or this run's with a
  user's documents merged in), the GPU and server catalog's models and the
  workload fit figures (which count servers in every file), as values.

Values are compared as marshal bytes (format 2: no references, so equal values
give equal bytes), which tell 1, 1.0 and true apart and find NaN equal to
itself (capacity cells are plain Python values, checker.derive.capacity.table;
marshal would write a numpy scalar as its raw bytes). An object compared by
identity is held by the carried rows, so its id cannot be another object's
while they are carried. Where something cannot be
written as marshal bytes, the rows are built as in a process of its own. The
rows built are those checker.derive.facts builds (`build`), so a carried run
gives the same facts, checked byte for byte by tests/test_results_cache.py.
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
from typing import Any, ClassVar, Protocol

from checker.core.carried import Carried
from checker.derive.rows import Header, Row
from checker.load.build import Inventory, ServerEntry
from checker.source.parse import WrittenFloat

FORMAT = b"server rows 1\x00"
_MARSHAL = 2  # no references: equal values, equal bytes
MAX_HEADERS = 256  # sets of columns kept for the server rows' headers

Servers = Sequence[tuple[str, ServerEntry]]
Cells = Mapping[str, Sequence[Any]]
Headers = dict[tuple[str, ...], Header]
Build = Callable[[Servers, Cells, Headers], list[Row]]  # the rows of these servers, with these cells


class Settings(Protocol):
    """checker.derive.facts.Context, a dataclass: every field of it is in the key
    (_shared), so a setting added to it is never left out; the knowledge tables
    by identity."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def knowledge(self) -> object: ...


@dataclass(frozen=True)
class _Rows:
    """One file's run of server rows, and every object whose id their key holds."""

    held: tuple[object, ...]
    rows: tuple[Row, ...]


def server_rows(
    carried: Carried,
    inv: Inventory,
    ctx: Settings,
    workloads: Mapping[str, Mapping[str, Any]],
    capacity: Cells,
    build: Build,
    order: Sequence[str],
) -> list[Row]:
    """The rows of every server of `inv` in its order (`capacity`: their cells;
    `workloads`: the fit figures), each file's run of them carried while its key
    is the same; `order`, the kind's field names (the rows end under one header,
    as the rules stage reads them fastest)."""
    servers = list(inv.servers.items())
    # Rows of the same columns share one header, this command's and the last ones'.
    headers: Headers = carried.get("fact headers", b"server", dict, dict)
    if len(headers) > MAX_HEADERS:  # used by every command, so never dropped: bounded here
        headers.clear()  # rows under the headers cleared are put under one again (_one_header)
    shared = _shared(inv, ctx, workloads)
    # Only a kept file's models are the next command's too (checker.load.validated, via
    # Carried): another's are new objects each time, and their rows would never be used.
    kept = {holder.file for holder in inv.kept}
    rows: list[Row] = []
    for lo, hi in _runs([entry.place.file for _, entry in servers]):
        part = servers[lo:hi]
        cells = {name: column[lo:hi] for name, column in capacity.items()}
        key = _key(shared, part, cells) if shared is not None and part[0][1].place.file in kept else None
        if key is None:
            rows += build(part, cells, headers)
            continue
        held = (ctx.knowledge, *(entry.server for _, entry in part))
        made = functools.partial(_made, build, part, cells, headers, held)
        rows += carried.get("server rows", key, _Rows, made).rows
    return _one_header(rows, headers, order)


def _made(build: Build, part: Servers, cells: Cells, headers: Headers, held: tuple[object, ...]) -> _Rows:
    return _Rows(held, tuple(build(part, cells, headers)))


def _runs(files: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of consecutive servers of one file."""
    ends = list(itertools.accumulate(sum(1 for _ in group) for _, group in itertools.groupby(files)))
    starts = [0, *ends][: len(ends)]
    return list(zip(starts, ends, strict=True))


def _shared(inv: Inventory, ctx: Settings, workloads: Mapping[str, Mapping[str, Any]]) -> bytes | None:
    """What every server's rows read besides its own server and cells, as bytes:
    every field of the context (the knowledge tables by identity), the catalog
    and the workload figures; None if some of it cannot be written so."""
    try:
        settings = [
            (f.name, id(value) if f.name == "knowledge" else _plain(value))
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


def _key(shared: bytes, part: Servers, cells: Cells) -> bytes | None:
    entries = [entry for _, entry in part]
    dates = [entry.rollout_date for entry in entries]
    # A document's date is every one of its servers': each distinct one written once as text.
    iso: dict[dt.date | None, str | None] = {d: d.isoformat() for d in set(dates) if d is not None}
    body = (
        [name for name, _ in part],
        list(map(id, map(operator.attrgetter("server"), entries))),
        list(map(operator.attrgetter("facility"), entries)),
        list(map(iso.get, dates)),
        list(cells),
        list(cells.values()),
    )
    try:
        return hashlib.blake2b(shared + marshal.dumps(body, _MARSHAL)).digest()
    except ValueError:  # a value marshal does not write
        return None


def _one_header(rows: list[Row], headers: Headers, order: Sequence[str]) -> list[Row]:
    """The rows under one header: the columns any of them has, in the kind's order."""
    distinct = {id(row.header): row.header for row in rows}
    if len(distinct) <= 1:
        return rows
    present = {name for header in distinct.values() for name in header.names}
    names = tuple(name for name in order if name in present)
    header = headers.get(names) or headers.setdefault(names, Header(names))
    # Each header's cells picked in the new order, None (one past the end) where it has no such column.
    pick = {i: operator.itemgetter(*[h.index.get(n, len(h.names)) for n in names])
            for i, h in distinct.items()}
    if len(names) == 1:
        return [Row(header, (pick[id(row.header)]((*row.cells, None)),)) for row in rows]
    return [Row(header, pick[id(row.header)]((*row.cells, None))) for row in rows]
