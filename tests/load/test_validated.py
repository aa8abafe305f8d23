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


def _servers_as(body: tuple[Any, ...], change: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> bytes:
    what, fmt, digest, tables, docs = body
    docs = [(*d[:5], [change(s) for s in d[5]]) if d[0] == "servers" else d for d in docs]
    return cache.pack((what, fmt, digest, tables, docs))


def test_the_entry_as_written_is_read(servers_entry: tuple[Any, ...]) -> None:
    _, docs = validated.decode(cache.pack(servers_entry))
    assert any(isinstance(d, validated.KeptServers) and d.servers for d in docs)


def _swapped(body: tuple[Any, ...], at: int) -> tuple[Any, ...]:
    """The same entry with its fields sets numbered otherwise: 1 and the first
    server's swapped, so that server's is 1 (a set is read by its number alone)."""
    what, fmt, digest, (sets, combos, parts), docs = body
    first = next(s for d in docs if d[0] == "servers" for s in d[5])[at]
    swap = {1: first, first: 1}
    sets = list(sets)
    sets[1], sets[first] = sets[first], sets[1]
    parts = [(p[0], swap.get(p[1], p[1]), *p[2:]) for p in parts]  # a part: (class, fields set, ...)
    docs = [
        (*d[:5], [(*s[:at], swap.get(s[at], s[at]), *s[at + 1:]) for s in d[5]]) if d[0] == "servers" else d
        for d in docs
    ]
    return (what, fmt, digest, (sets, combos, parts), docs)


def _with_one_at(bodies: list[tuple[Any, ...]], at: int) -> tuple[tuple[Any, ...], int, int]:
    """An entry with a server whose number at `at` is 1, and where: that server's
    document and its index there. Fields sets are renumbered to give one; sets
    of parts are built in order (each reads the parts before it), so an entry
    that has one is looked for."""
    for body in bodies:
        for i, doc in enumerate(body[4]):
            for j, server in enumerate(doc[5] if doc[0] == "servers" else ()):
                if server[at] == 1:
                    return body, i, j
    assert at == 4, "no server of the inventories has its set of parts numbered 1"
    return _with_one_at([_swapped(bodies[0], at)], at)


def _server_as(body: tuple[Any, ...], doc: int, server: int, at: int, value: Any) -> bytes:
    what, fmt, digest, tables, docs = body
    docs = list(docs)
    servers = list(docs[doc][5])
    servers[server] = (*servers[server][:at], value, *servers[server][at + 1:])
    docs[doc] = (*docs[doc][:5], servers)
    return cache.pack((what, fmt, digest, tables, docs))


@pytest.mark.parametrize("at", [4, 6], ids=["fields set", "set of parts"])
def test_a_number_spelled_as_a_bool_is_a_bad_entry(servers_entries: list[tuple[Any, ...]], at: int) -> None:
    """True is 1, and the same key in a dict: read as 1, it would build the model."""
    body, doc, server = _with_one_at(servers_entries, at)
    validated.decode(_server_as(body, doc, server, at, 1))  # the entry as it is (or renumbered) is read
    with pytest.raises(cache.BadEntry):
        validated.decode(_server_as(body, doc, server, at, True))


# A server: (index, shape, shape, class, fields set, values, set of parts, other values).
FORGED: dict[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {
    "a fields set that is a float": lambda s: (*s[:4], float(s[4]), *s[5:]),
    "a class that is no name": lambda s: (*s[:3], ("Server",), *s[4:]),
    "other values that are no tuple": lambda s: (*s[:7], list(s[7])),
    "another value that is no pair": lambda s: (*s[:7], (("memory_gb",),)),
    "a field name that is no text": lambda s: (*s[:7], ((1, 2),)),
    "a value list too short": lambda s: (*s[:5], s[5][:-1], *s[6:]),
    # Caught when the entry is read, though no model is made until one is asked for
    # (validated.ServerRun): a model made later could not fall back to the file.
    "a value list too long": lambda s: (*s[:5], [*s[5], None], *s[6:]),
    "a value that is no scalar": lambda s: (*s[:5], [[1], *s[5][1:]], *s[6:]),
    "an index that is a bool": lambda s: (True, *s[1:]),
    "an index that is text": lambda s: ("0", *s[1:]),
    "no shape of its defaults": lambda s: (s[0], None, *s[2:]),
    "a shape that is no pair": lambda s: (s[0], ("name",), *s[2:]),
    "a class that is not a server": lambda s: (*s[:3], "Rack", *s[4:]),
    "a field of no server": lambda s: (*s[:7], (("nonesuch", 1),)),
    "a set of parts of no entry": lambda s: (*s[:6], 10**6, s[7]),
    "a server short": lambda s: s[:7],
}


@pytest.mark.parametrize("change", FORGED.values(), ids=FORGED.keys())
def test_a_value_of_another_type_is_a_bad_entry(
    servers_entry: tuple[Any, ...], change: Callable[[tuple[Any, ...]], tuple[Any, ...]]
) -> None:
    with pytest.raises(cache.BadEntry):
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
    body, doc, server = _with_one_at(servers_entries, 4)
    written = (("memory_gb", ("f", 2048.5, "2048.50")),)
    forged = cache.unpack(_server_as(body, doc, server, 7, written))
    checked, own = 0, 0
    for body in [*servers_entries, forged]:
        for doc in validated.decode(cache.pack(body))[1]:
            if not isinstance(doc, validated.KeptServers):
                continue
            run = doc.servers
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
@pytest.fixture(scope="module")
def facility_entry(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    """The body of the kept entry of the inventories' facility of the most racks,
    as an audit wrote it."""
    found = _entries_of(INVENTORIES, tmp_path_factory.mktemp("cache"), lambda d: d[3] == "Facility")
    return max(found, key=lambda body: sum(p[0] == "Rack" for p in body[3][2]))


def _facility_of(body: tuple[Any, ...]) -> validated.KeptFacility:
    (kept,) = [d for d in validated.decode(cache.pack(body))[1] if isinstance(d, validated.KeptFacility)]
    return kept


def test_a_kept_facilitys_racks_and_feeds_columns_are_what_their_models_hold(
    facility_entry: tuple[Any, ...],
) -> None:
    """A kept facility's racks and feeds read a column at a time (validated.PartRun)
    are what their models hold, the same objects where a model holds a part;
    the facility's `racks` are its racks' models, and each feed is one of its
    rack's (`feed_racks`), in order."""
    kept = _facility_of(facility_entry)
    assert kept.placed and kept.model.racks is kept.racks and len(kept.racks) > 3
    for run, cls in ((kept.racks, m.Rack), (kept.feeds, m.Feed)):
        for name in cls.model_fields:
            column = run.column(name)
            assert len(column) == len(run)
            for i, value in enumerate(column):
                held = getattr(run[i], name)
                assert value is held or (type(value) is type(held) and value == held), (name, i)
    assert [f for rack in kept.racks for f in rack.feeds] == list(kept.feeds)
    assert all(kept.feeds[i] in kept.racks[r].feeds for i, r in enumerate(kept.feed_racks))
    assert kept.racks == list(kept.racks) and list(kept.racks) == kept.racks


def test_a_kept_facilitys_racks_are_made_only_when_asked_for(facility_entry: tuple[Any, ...]) -> None:
    kept = _facility_of(facility_entry)
    kept.racks.column("name")
    kept.racks.column("row")
    kept.feeds.column("voltage")
    assert not any(isinstance(p, (m.Rack, m.Feed)) for p in kept.racks._reader._parts)
    rack = kept.racks[1]
    made = [p for p in kept.racks._reader._parts if isinstance(p, (m.Rack, m.Feed))]
    assert made == [*rack.feeds, rack] or sorted(map(id, made)) == sorted(map(id, [*rack.feeds, rack]))


def _facility_as(body: tuple[Any, ...], change: Callable[[Any], Any]) -> bytes:
    """The entry with its facility document's spelling (its model, and the parts) changed."""
    what, fmt, digest, tables, docs = body
    changed = change((tables, next(d for d in docs if d[3] == "Facility")))
    tables, doc = changed
    return cache.pack((what, fmt, digest, tables, [doc if d[3] == "Facility" else d for d in docs]))


def _racks_as(doc: Any, racks: Any) -> Any:
    """A facility document with its model's `racks` value replaced."""
    name, kept, values, combo, others = doc[5]
    others = tuple((k, racks(v)) if k == "racks" else (k, v) for k, v in others)
    return (*doc[:5], (name, kept, values, combo, others))


def _part_of(tables: Any, cls: str, change: Callable[[Any], Any]) -> Any:
    """The tables with the first part of class `cls` changed."""
    sets, combos, parts = tables
    at = next(i for i, p in enumerate(parts) if p[0] == cls)
    return (sets, combos, [*parts[:at], change(parts[at]), *parts[at + 1:]])


def _feeds_as(rack: Any, feeds: Callable[[Any], Any]) -> Any:
    return (*rack[:4], tuple((k, feeds(v)) if k == "feeds" else (k, v) for k, v in rack[4]))


# Each is a BadEntry when the entry is read, though no rack or feed is made then.
FORGED_FACILITY: dict[str, Callable[[Any], Any]] = {
    "placed that is no bool": lambda td: (td[0], (*td[1][:4], 1, td[1][5])),
    "racks that are no list": lambda td: (td[0], _racks_as(td[1], tuple)),
    "a rack that is no part": lambda td: (td[0], _racks_as(td[1], lambda v: [("p", "3"), *v[1:]])),
    "a rack of no entry": lambda td: (td[0], _racks_as(td[1], lambda v: [*v, ("p", 10**6)])),
    "a rack that is a feed": lambda td: (td[0], _racks_as(td[1], lambda v: [("p", 0), *v[1:]])),
    "no racks": lambda td: (td[0], (*td[1][:5], (*td[1][5][:4], ()))),
    "a rack's feeds that are no list": lambda td: (
        _part_of(td[0], "Rack", lambda r: _feeds_as(r, tuple)), td[1]
    ),
    "a rack's feed ahead of it": lambda td: (
        _part_of(td[0], "Rack", lambda r: _feeds_as(r, lambda v: [*v, ("p", 10**5)])), td[1]
    ),
    "a rack's feed that is a rack": lambda td: (_self_feed(td[0]), td[1]),
    "a rack's other value of no field": lambda td: (
        _part_of(td[0], "Rack", lambda r: (*r[:4], (*r[4], ("nonesuch", [])))), td[1]
    ),
    "a feed's value that is no scalar": lambda td: (
        _part_of(td[0], "Feed", lambda f: (*f[:2], [[1], *f[2][1:]], *f[3:])), td[1]
    ),
}


def _self_feed(tables: Any) -> Any:
    """The tables with the second rack's feeds naming the first rack."""
    sets, combos, parts = tables
    racks = [i for i, p in enumerate(parts) if p[0] == "Rack"]
    first, second = racks[0], racks[1]
    parts = list(parts)
    parts[second] = _feeds_as(parts[second], lambda v: [("p", first), *v[1:]])
    return (sets, combos, parts)


def test_the_forged_facility_helpers_change_what_they_say(facility_entry: tuple[Any, ...]) -> None:
    for label, change in FORGED_FACILITY.items():
        assert _facility_as(facility_entry, change) != cache.pack(facility_entry), label


@pytest.mark.parametrize("change", FORGED_FACILITY.values(), ids=FORGED_FACILITY.keys())
def test_a_facility_of_another_type_is_a_bad_entry(
    facility_entry: tuple[Any, ...], change: Callable[[Any], Any]
) -> None:
    _facility_of(facility_entry)  # the entry as written is read
    with pytest.raises(cache.BadEntry):
        validated.decode(_facility_as(facility_entry, change))
