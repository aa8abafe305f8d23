"""A kept file's entry (checker.load.validated) is read type by type: a value of
another type than encode writes is a BadEntry (a miss), never a model built
from it, even where Python finds the two equal (True == 1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from checker.cli import main
from checker.load import cache, validated
from checker.load import models as m
from checker.source.parse import WrittenFloat
from tests.conftest import AS_OF

INVENTORIES = Path(__file__).resolve().parents[2] / "inventories"


@pytest.fixture(scope="module")
def servers_entries(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, ...]]:
    """The bodies of the kept servers files' entries, as an audit wrote them
    (in the order of their keys, which hold the code's time stamps)."""
    return _entries_of(INVENTORIES, tmp_path_factory.mktemp("cache"), lambda d: d[0] == "servers")


def _entries_of(inventories: Path, folder: Path, holds: Callable[[Any], bool]) -> list[tuple[Any, ...]]:
    """Those with a document that `holds`."""
    argv = ["audit", str(inventories), *AS_OF, "--cache-dir", str(folder), "--format", "json:-"]
    assert main(argv) in (0, 1)
    store = cache.open_cache(folder)
    assert store is not None
    found = []
    for entry in sorted((folder / cache.ENTRIES).iterdir()):
        body = cache.unpack(store.payload(entry.name) or b"N")
        if type(body) is tuple and body[:1] == ("validated",) and any(map(holds, body[4])):
            found.append(body)
    assert found
    return found


@pytest.fixture
def servers_entry(servers_entries: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    return servers_entries[0]


def _servers_as(body: tuple[Any, ...], change: Callable[[tuple[Any, ...]], Any]) -> bytes:
    """The entry with each servers document's servers (validated._servers_out) changed."""
    what, fmt, digest, tables, docs = body
    docs = [(*d[:5], change(d[5])) if d[0] == "servers" else d for d in docs]
    return cache.pack((what, fmt, digest, tables, docs))


# A document's servers: (indexes, defaults' shapes, catalogs' shapes, classes,
# fields sets, sets of parts, a column of each field's values, other values);
# classes, fields sets, sets of parts and each field a column (same, cell or cells).
INDEXES, DEFAULTS, CATALOGS, CLASSES, SETS, COMBOS, VALUES, OTHERS = range(8)
FIELDS = list(m.Server.model_fields)


def _at(k: int, change: Callable[[Any], Any]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A change of part `k` of a document's servers."""
    return lambda t: (*t[:k], change(t[k]), *t[k + 1:])


def _field(name: str, change: Callable[[Any], Any]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A change of the column of field `name`."""
    at = FIELDS.index(name)
    return _at(VALUES, lambda columns: [*columns[:at], change(columns[at]), *columns[at + 1:]])


def _each(column: Any, count: int) -> list[Any]:
    same, data = column
    return [data] * count if same else list(data)


def test_the_entry_as_written_is_read(servers_entry: tuple[Any, ...]) -> None:
    _, docs = validated.decode(cache.pack(servers_entry))
    assert any(isinstance(d, validated.KeptServers) and d.servers for d in docs)


def test_a_files_servers_share_their_columns(servers_entries: list[tuple[Any, ...]]) -> None:
    """A field all of a document's servers hold alike is written once."""
    tables = [d[5] for body in servers_entries for d in body[4] if d[0] == "servers" and d[5][INDEXES]]
    assert all(t[CLASSES] == (True, "Server") for t in tables)
    shared = [same for t in tables for same, _ in t[VALUES]]
    assert shared.count(True) > shared.count(False) > 0


def _swapped(body: tuple[Any, ...]) -> tuple[Any, ...]:
    """The same entry with its fields sets numbered otherwise: 1 and the first
    server's swapped, so that server's is 1 (a set is read by its number alone)."""
    what, fmt, digest, (sets, combos, parts), docs = body
    table = next(d[5] for d in docs if d[0] == "servers" and d[5][INDEXES])
    first = _each(table[SETS], len(table[INDEXES]))[0]
    swap = {1: first, first: 1}
    sets = list(sets)
    sets[1], sets[first] = sets[first], sets[1]
    parts = [(p[0], swap.get(p[1], p[1]), *p[2:]) for p in parts]  # a part: (class, fields set, ...)
    def renumbered(column: Any) -> Any:
        same, data = column
        return (True, swap.get(data, data)) if same else (False, tuple(swap.get(n, n) for n in data))

    docs = [(*d[:5], _at(SETS, renumbered)(d[5])) if d[0] == "servers" else d for d in docs]
    return (what, fmt, digest, (sets, combos, parts), docs)


def _with_one_at(bodies: list[tuple[Any, ...]], k: int) -> tuple[tuple[Any, ...], int]:
    """An entry with a server whose number at part `k` (SETS, COMBOS) is 1, and
    that server's document. Fields sets are renumbered to give one; sets of
    parts are built in order (each reads the parts before it), so an entry that
    has one is looked for."""
    for body in bodies:
        for i, doc in enumerate(body[4]):
            if doc[0] == "servers" and doc[5][INDEXES] and 1 in _each(doc[5][k], len(doc[5][INDEXES])):
                return body, i
    assert k == SETS, "no server of the inventories has its set of parts numbered 1"
    return _with_one_at([_swapped(bodies[0])], k)


def _doc_as(body: tuple[Any, ...], doc: int, change: Callable[[tuple[Any, ...]], Any]) -> bytes:
    what, fmt, digest, tables, docs = body
    docs = list(docs)
    docs[doc] = (*docs[doc][:5], change(docs[doc][5]))
    return cache.pack((what, fmt, digest, tables, docs))


@pytest.mark.parametrize("k", [SETS, COMBOS], ids=["fields set", "set of parts"])
def test_a_number_spelled_as_a_bool_is_a_bad_entry(servers_entries: list[tuple[Any, ...]], k: int) -> None:
    """True is 1, and the same key in a dict: read as 1, it would build the model."""
    body, doc = _with_one_at(servers_entries, k)
    count = len(body[4][doc][5][INDEXES])
    def spelled(one: Any) -> Callable[[Any], Any]:
        return _at(k, lambda c: (False, tuple(one if n == 1 else n for n in _each(c, count))))
    validated.decode(_doc_as(body, doc, spelled(1)))  # the entry as it is (or renumbered) is read
    with pytest.raises(cache.BadEntry, match="not a server"):
        validated.decode(_doc_as(body, doc, spelled(True)))


def _first_other(value: Any) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    return _at(OTHERS, lambda o: [value, *o[1:]])


NO_SCALAR = "a cell that is no scalar"
# Each with what it is refused for: its own fault, not another's.
FORGED: dict[str, tuple[Callable[[tuple[Any, ...]], Any], str]] = {
    "servers that are no tuple": (list, "not the servers of a document"),
    "servers short": (lambda t: t[:7], "not the servers of a document"),
    "indexes in a tuple": (_at(INDEXES, tuple), "not a server"),
    "an index that is a bool": (_at(INDEXES, lambda c: [True, *c[1:]]), "not a server"),
    "an index that is text": (_at(INDEXES, lambda c: ["0", *c[1:]]), "not a server"),
    "a class that is a number": (_at(CLASSES, lambda c: (True, 1)), "not a server"),
    "a class that is not a server": (_at(CLASSES, lambda c: (True, "Rack")), "not a model: 'Rack'"),
    "a fields set that is a float": (_at(SETS, lambda c: (True, 1.0)), "not a server"),
    "a fields set of no entry": (_at(SETS, lambda c: (True, 10**6)), "no such fields set"),
    "a set of parts of no entry": (_at(COMBOS, lambda c: (True, 10**6)), "no such set of parts"),
    "a column that is no pair": (_at(SETS, lambda c: c[:1]), "not a column"),
    "a column whose flag is a number": (_at(SETS, lambda c: (int(c[0]), c[1])), "not a column"),
    "a column a cell short": (_field("name", lambda c: (False, c[1][:-1])), "not a cell of each"),
    "cells in a list": (_field("name", lambda c: (False, list(c[1]))), "not a cell of each"),
    "a value that is no scalar": (_field("name", lambda c: (False, ([1], *c[1][1:]))), NO_SCALAR),
    "a shared value that is no scalar": (_field("memory_gb", lambda c: (True, [c[1]])), NO_SCALAR),
    "a value list too short": (_at(VALUES, lambda v: v[:-1]), "not the fields of a server"),
    "a value list too long": (_at(VALUES, lambda v: [*v, (True, None)]), "not the fields of a server"),
    "values in a tuple": (_at(VALUES, tuple), "not the fields of a server"),
    "other values in a tuple": (_at(OTHERS, tuple), "not the values of a server"),
    "other values one short": (_at(OTHERS, lambda o: o[:-1]), "not the values of a server"),
    "other values that are no tuple": (_first_other([]), "not the values of a server"),
    "another value that is no pair": (_first_other((("memory_gb",),)), "not a value"),
    "a field name that is no text": (_first_other(((1, 2),)), "not a field of Server"),
    "a field of no server": (_first_other((("nonesuch", 1),)), "not a field of Server"),
    "no shape of its defaults": (_at(DEFAULTS, lambda c: [None, *c[1:]]), "not a shape"),
    "a shape that is no pair": (_at(DEFAULTS, lambda c: [("name",), *c[1:]]), "not a shape"),
    "shapes one short": (_at(CATALOGS, lambda c: c[:-1]), "not the shapes of the servers"),
}


@pytest.mark.parametrize("label", FORGED)
def test_a_value_of_another_type_is_a_bad_entry(servers_entry: tuple[Any, ...], label: str) -> None:
    change, refused = FORGED[label]
    assert _servers_as(servers_entry, change) != cache.pack(servers_entry)
    with pytest.raises(cache.BadEntry, match=refused):
        validated.decode(_servers_as(servers_entry, change))


# A part: (class, fields set, values, set of parts, other values), read a column at a time.
FORGED_PARTS: dict[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {
    "a fields set that is a bool": lambda p: (p[0], True, *p[2:]),
    "a class that is no name": lambda p: ((p[0],), *p[1:]),
    "a value that is no scalar": lambda p: (*p[:2], [{"a": 1}, *p[2][1:]], *p[3:]),
    "a value list too long": lambda p: (*p[:2], [*p[2], None], *p[3:]),
    "values that are no list": lambda p: (*p[:2], tuple(p[2]), *p[3:]),
    "other values that are no tuple": lambda p: (*p[:4], list(p[4])),
    "another part's number ahead of it": lambda p: (*p[:4], (("model", ("p", 10**6)),)),
    "a part short": lambda p: p[:4],
}


@pytest.mark.parametrize("change", FORGED_PARTS.values(), ids=FORGED_PARTS.keys())
def test_a_part_of_another_type_is_a_bad_entry(
    servers_entry: tuple[Any, ...], change: Callable[[tuple[Any, ...]], tuple[Any, ...]]
) -> None:
    what, fmt, digest, (sets, combos, parts), docs = servers_entry
    assert parts
    forged = (what, fmt, digest, (sets, combos, [change(parts[0]), *parts[1:]]), docs)
    with pytest.raises(cache.BadEntry):
        validated.decode(cache.pack(forged))


def test_each_column_is_what_each_model_holds(servers_entries: list[tuple[Any, ...]]) -> None:
    """A kept server's field read a column at a time is the value its model holds
    (the same object: parts are shared), for every field of every server kept:
    scalars, shared parts, and values of their own (none of the inventories'
    servers has one: one is given a float as written, `2048.50`)."""
    body, doc = _with_one_at(servers_entries, SETS)
    written = (("memory_gb", ("f", 2048.5, "2048.50")),)
    forged = cache.unpack(_doc_as(body, doc, _first_other(written)))
    checked, own = 0, 0
    for body in [*servers_entries, forged]:
        for kept in validated.decode(cache.pack(body))[1]:
            if not isinstance(kept, validated.KeptServers):
                continue
            run = kept.servers
            assert isinstance(run, validated.ServerRun)
            for name in m.Server.model_fields:
                column = run.column(name)
                assert len(column) == len(run)
                for i, value in enumerate(column):
                    held = getattr(run.model(i), name)
                    assert value is held or (type(value) is type(held) and value == held), (name, i)
                    checked += 1
                    own += type(value) is WrittenFloat
    assert checked > 500 and own == 1


# (document, path descended, path located, whether at the key, line, column)
_POSITION = (0, ("racks", 3), ("power",), True, 12, 5)


@pytest.mark.parametrize(
    "row",
    [
        (True, *_POSITION[1:]),  # a document that is a bool
        (*_POSITION[:3], 1, *_POSITION[4:]),  # a number for whether the key was located
        (*_POSITION[:3], "key", *_POSITION[4:]),
        (_POSITION[0], ["racks", 3], *_POSITION[2:]),  # a path that is no tuple
        (*_POSITION[:2], (1.5,), *_POSITION[3:]),  # a step that is no name or index
        (*_POSITION[:2], (True,), *_POSITION[3:]),
        (*_POSITION[:4], "12", _POSITION[5]),  # a line that is no number
        (*_POSITION[:5], 5.0),
        _POSITION[:5],  # a field short
        list(_POSITION),
    ],
)
def test_a_position_of_another_type_is_a_bad_entry(row: Any) -> None:
    """Positions are checked a column at a time: one wrong row among good ones spoils the entry."""
    good = (1, ("feeds", 0), (), None, 3, 1)
    assert validated._positions_in(("positions", validated.FORMAT, [good, _POSITION])) == {
        good[:4]: good[4:], _POSITION[:4]: _POSITION[4:],
    }
    with pytest.raises(cache.BadEntry):
        validated._positions_in(("positions", validated.FORMAT, [good, row]))


# ---------------------------------------------------------------- a kept facility
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# The inventories' racks (no ATS, no psu_order), the NVL72 example's (psu_order:
# lists of texts) and every-field's (an ATS: a second table of models).
FACILITIES = {
    "inventories": INVENTORIES, "nvl72": EXAMPLES / "nvl72", "every-field": FIXTURES / "every-field",
}


def _facility_doc(body: tuple[Any, ...]) -> Any:
    return next(d for d in body[4] if d[0] == "facility")


def _racks_in(body: tuple[Any, ...]) -> int:
    return len(_facility_doc(body)[5][1]) if any(d[0] == "facility" for d in body[4]) else -1


@pytest.fixture(scope="module")
def facility_entries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, ...]]:
    """For each of FACILITIES, the body of the kept entry of its facility of the
    most racks, as an audit wrote it."""
    out = {}
    for label, folder in FACILITIES.items():
        found = _entries_of(folder, tmp_path_factory.mktemp("cache"), lambda d: d[0] == "facility")
        out[label] = max(found, key=_racks_in)
    return out


@pytest.fixture
def facility_entry(facility_entries: dict[str, tuple[Any, ...]]) -> tuple[Any, ...]:
    return facility_entries["inventories"]


def _facility_of(body: tuple[Any, ...]) -> validated.KeptFacility:
    (kept,) = [d for d in validated.decode(cache.pack(body))[1] if isinstance(d, validated.KeptFacility)]
    return kept


@pytest.mark.parametrize("label", FACILITIES)
def test_a_kept_facilitys_racks_and_feeds_columns_are_what_their_models_hold(
    facility_entries: dict[str, tuple[Any, ...]], label: str
) -> None:
    """A kept facility's racks and feeds read a column at a time (validated.TableRun)
    are what their models hold, the same objects where a model holds one of
    another table (a rack's feeds); the facility's `racks` are its racks'
    models, and each feed is its rack's (`feed_racks`) at its index (`feed_at`), in order."""
    kept = _facility_of(facility_entries[label])
    assert kept.placed and kept.model.racks is kept.racks
    assert len(kept.racks) >= (1 if label == "every-field" else 3)
    for run, cls in ((kept.racks, m.Rack), (kept.feeds, m.Feed)):
        for name in cls.model_fields:
            column = run.column(name)
            assert len(column) == len(run)
            for i, value in enumerate(column):
                held = getattr(run[i], name)
                assert value is held or (type(value) is type(held) and value == held), (name, i)
            assert run.column(name) is column  # read once
    assert [f for rack in kept.racks for f in rack.feeds] == list(kept.feeds)
    feed_racks = zip(kept.feeds, kept.feed_racks, kept.feed_at, strict=True)
    assert all(kept.racks[r].feeds[i] is feed for feed, r, i in feed_racks)
    assert kept.racks == list(kept.racks) and list(kept.racks) == kept.racks


def test_the_kept_facilities_hold_each_kind_of_column(facility_entries: dict[str, tuple[Any, ...]]) -> None:
    """What the test above reads covers each spelling of a column (_Writer.table)."""
    def kinds(table: Any) -> set[str]:
        found = {kind for _, kind, _ in table[2]}
        for _, kind, data in table[2]:
            if kind == "t":
                found |= kinds(data[1])
        return found

    held = set().union(*(kinds(_facility_doc(body)[5]) for body in facility_entries.values()))
    assert held == {"s", "n", "e", "t"}
    rack = _facility_of(facility_entries["every-field"]).racks[0]
    assert rack.ats and all(isinstance(a, m.Ats) for a in rack.ats)


def test_a_kept_facilitys_racks_are_made_only_when_asked_for(facility_entry: tuple[Any, ...]) -> None:
    kept = _facility_of(facility_entry)
    kept.racks.column("name")
    kept.racks.column("row")
    kept.feeds.column("voltage")
    assert not any(kept.racks._models) and not any(kept.feeds._models)
    rack = kept.racks[1]
    assert [i for i, made in enumerate(kept.racks._models) if made is not None] == [1]
    made = [f for f in kept.feeds._models if f is not None]
    assert len(made) == len(rack.feeds) and all(a is b for a, b in zip(made, rack.feeds, strict=True))
    assert kept.racks[1] is rack


def _facility_as(body: tuple[Any, ...], change: Callable[[Any], Any]) -> bytes:
    """The entry with its facility document (and the entry's tables) changed."""
    what, fmt, digest, tables, docs = body
    tables, doc = change((tables, _facility_doc(body)))
    return cache.pack((what, fmt, digest, tables, [doc if d[0] == "facility" else d for d in docs]))


def _doc_table(change: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A change of the racks' table of the facility document."""
    return lambda td: (td[0], (*td[1][:5], change(td[1][5])))


def _column(name: str, change: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A change of the column of field `name` of a table."""
    return lambda t: (t[0], t[1], [change(c) if c[0] == name else c for c in t[2]])


def _feeds(change: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A change of the racks' feeds: (their counts, the feeds' table)."""
    return _column("feeds", lambda c: (c[0], c[1], change(c[2])))


def _racks_other(racks: Any) -> Callable[[Any], Any]:
    """The facility's model with its `racks` spelled otherwise."""
    def change(td: Any) -> Any:
        name, kept, values, combo, others = td[1][4]
        others = tuple((k, racks) if k == "racks" else (k, v) for k, v in others)
        return (td[0], (*td[1][:4], (name, kept, values, combo, others), td[1][5]))
    return change


def _as_parts(td: Any) -> Any:
    """The facility as a document of another kind holds it: a model, its racks as parts."""
    doc = td[1]
    return (td[0], ("model", doc[1], doc[2], "Facility", doc[3], doc[4]))


def _odd_set(td: Any) -> Any:
    """A fields set naming no field of a rack, given to the first rack."""
    sets, combos, parts = td[0]
    table = td[1][5]
    forged = (table[0], [len(sets), *table[1][1:]], table[2])
    return ([*sets, ("nonesuch",)], combos, parts), (*td[1][:5], forged)


def _first_cell(column: Any, value: Any) -> Any:
    """A racks' column of names (one each) with the first `value`."""
    return (False, (value, *column[2][1][1:]))


def _names(table: Any, first: Any) -> Any:
    """A racks' table whose `psu_order` is lists of names, the first rack's `[first]`."""
    return _column("psu_order", lambda c: (c[0], "n", [[first], *([None] * (len(table[1]) - 1))]))(table)


def _feeds_of_racks(table: Any) -> Any:
    """The racks' feeds a table of racks: each rack's feed one of them."""
    return _feeds(lambda data: ([1] * len(table[1]), table))(table)


# Each is a BadEntry when the entry is read, though no rack or feed is made then.
FORGED_FACILITY: dict[str, Callable[[Any], Any]] = {
    "placed that is no bool": lambda td: (td[0], (*td[1][:3], 1, *td[1][4:])),
    "racks as parts": _as_parts,
    "racks both as parts and as a table": _racks_other([("p", 0)]),
    "racks that are no list": _racks_other(()),
    "no racks": lambda td: (td[0], (*td[1][:4], (*td[1][4][:4], ()), td[1][5])),
    "a table that is no tuple": _doc_table(list),
    "a table of feeds for the racks": _doc_table(lambda t: ("Feed", *t[1:])),
    "a table of no class": _doc_table(lambda t: ("Nonesuch", *t[1:])),
    "a fields set that is a bool": _doc_table(lambda t: (t[0], [True, *t[1][1:]], t[2])),
    "a fields set of no entry": _doc_table(lambda t: (t[0], [10**6, *t[1][1:]], t[2])),
    "a fields set of no field of a rack": _odd_set,
    "a column short": _doc_table(lambda t: (t[0], t[1], t[2][:-1])),
    "columns out of order": _doc_table(lambda t: (t[0], t[1], [t[2][1], t[2][0], *t[2][2:]])),
    "a column of another field": _doc_table(_column("name", lambda c: ("nonesuch", *c[1:]))),
    "a column of no kind": _doc_table(_column("name", lambda c: (c[0], "x", c[2]))),
    "a column a value short": _doc_table(_column("name", lambda c: (*c[:2], (False, c[2][1][:-1])))),
    "a value that is no scalar": _doc_table(_column("name", lambda c: (*c[:2], _first_cell(c, ["R"])))),
    "a value that is a tuple": _doc_table(_column("name", lambda c: (*c[:2], _first_cell(c, ("R",))))),
    "a shared value that is no scalar": _doc_table(_column("psu_order", lambda c: (*c[:2], (True, ["A"])))),
    "a list of texts of a number": _doc_table(lambda t: _names(t, [1])),
    "a list of texts that is a tuple": _doc_table(lambda t: _names(t, ("A",))),
    "empty lists with values": _doc_table(_column("ats", lambda c: (c[0], "e", []))),
    "feeds counted short": _doc_table(_feeds(lambda d: ([d[0][0] - 1, *d[0][1:]], d[1]))),
    "a feed count below zero": _doc_table(_feeds(lambda d: ([-1, d[0][1] + d[0][0] + 1, *d[0][2:]], d[1]))),
    "a feed count that is a bool": _doc_table(
        _feeds(lambda d: ([True, d[0][1] + d[0][0] - 1, *d[0][2:]], d[1]))
    ),
    "feeds that are racks": _doc_table(_feeds_of_racks),
    "a feed's value that is no scalar": _doc_table(
        _feeds(lambda d: (d[0], _column("voltage", lambda c: (*c[:2], (True, [1])))(d[1])))
    ),
}


# What each is refused for: its own fault, not another"s.
REFUSED = {
    "placed that is no bool": "expected bool",
    "racks as parts": "a facility with its racks as parts",
    "racks both as parts and as a table": "not the racks of a facility",
    "racks that are no list": "not the racks of a facility",
    "no racks": "not the racks of a facility",
    "a table that is no tuple": "not a table$",
    "a table of feeds for the racks": "not a table of Rack",
    "a table of no class": "not a table of Rack",
    "a fields set that is a bool": "not the fields sets of a table",
    "a fields set of no entry": "no such fields set",
    "a fields set of no field of a rack": "not the fields of Rack",
    "a column short": "not a column of each field of Rack",
    "columns out of order": "not the column of Rack.name",
    "a column of another field": "not the column of Rack.name",
    "a column of no kind": "not a column$",
    "a column a value short": "not a cell of each",
    "a value that is no scalar": "a cell that is no scalar",
    "a value that is a tuple": "a cell that is no scalar",
    "a shared value that is no scalar": "a cell that is no scalar",
    "a list of texts of a number": "no list of texts",
    "a list of texts that is a tuple": "no list of texts",
    "empty lists with values": "not a column$",
    "feeds counted short": "not the models of each model's list",
    "a feed count below zero": "not the models of each model's list",
    "a feed count that is a bool": "not the count of each model's list",
    "feeds that are racks": "not each a Feed",
    "a feed's value that is no scalar": "a cell that is no scalar",
}


def test_the_forged_facility_helpers_change_what_they_say(facility_entry: tuple[Any, ...]) -> None:
    assert _facility_doc(facility_entry)[5][2][0][0] == "name"  # the column the forgeries above change
    for label, change in FORGED_FACILITY.items():
        assert _facility_as(facility_entry, change) != cache.pack(facility_entry), label


@pytest.mark.parametrize("label", FORGED_FACILITY)
def test_a_facility_of_another_type_is_a_bad_entry(facility_entry: tuple[Any, ...], label: str) -> None:
    assert REFUSED.keys() == FORGED_FACILITY.keys()
    _facility_of(facility_entry)  # the entry as written is read
    with pytest.raises(cache.BadEntry, match=REFUSED[label]):
        validated.decode(_facility_as(facility_entry, FORGED_FACILITY[label]))


def test_a_facility_whose_racks_have_no_table_is_not_kept() -> None:
    """A rack value no column spells (a model of its own where a field is a
    scalar) makes the file's entry unencodable: it is read afresh, not kept."""
    rack = m.Rack.model_construct(name="R1", feeds=[], row=m.Ats.model_construct(name="x"))
    facility = m.Facility.model_construct(kind="Facility", name="f", racks=[rack])
    with pytest.raises(cache.Unencodable):
        validated.encode(b"", [validated.KeptModel(0, False, "Facility", facility, True)])
