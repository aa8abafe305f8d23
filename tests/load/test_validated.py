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
from tests.conftest import AS_OF

INVENTORIES = Path(__file__).resolve().parents[2] / "inventories"


@pytest.fixture(scope="module")
def servers_entry(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    """The body of a kept servers file's entry, as an audit wrote it."""
    folder = tmp_path_factory.mktemp("cache")
    argv = ["audit", str(INVENTORIES), *AS_OF, "--cache-dir", str(folder), "--format", "json:-"]
    assert main(argv) in (0, 1)
    store = cache.open_cache(folder)
    assert store is not None
    for entry in sorted((folder / cache.ENTRIES).iterdir()):
        body = cache.unpack(store.payload(entry.name) or b"N")
        if type(body) is tuple and body[:1] == ("validated",) and any(d[0] == "servers" for d in body[4]):
            return body
    raise AssertionError("no servers file kept")


def _servers_as(body: tuple[Any, ...], change: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> bytes:
    what, fmt, digest, tables, docs = body
    docs = [(*d[:5], [change(s) for s in d[5]]) if d[0] == "servers" else d for d in docs]
    return cache.pack((what, fmt, digest, tables, docs))


def test_the_entry_as_written_is_read(servers_entry: tuple[Any, ...]) -> None:
    _, docs = validated.decode(cache.pack(servers_entry))
    assert any(isinstance(d, validated.KeptServers) and d.servers for d in docs)


def _swapped(body: tuple[Any, ...], table: int, at: int) -> tuple[Any, ...]:
    """The same entry with its fields sets (table 0) or sets of parts (table 1)
    numbered otherwise: 1 and the first server's swapped, so that server's is 1."""
    what, fmt, digest, tables, docs = body
    servers = [s for d in docs if d[0] == "servers" for s in d[5]]
    first = servers[0][at]
    swap = {1: first, first: 1}
    new_tables = list(tables)
    rows = list(tables[table])
    rows[1], rows[first] = rows[first], rows[1]
    new_tables[table] = rows
    in_part = 1 if table == 0 else 3  # a part: (class, fields set, values, set of parts, others)
    new_tables[2] = [(*p[:in_part], swap.get(p[in_part], p[in_part]), *p[in_part + 1:]) for p in tables[2]]
    docs = [
        (*d[:5], [(*s[:at], swap.get(s[at], s[at]), *s[at + 1:]) for s in d[5]]) if d[0] == "servers" else d
        for d in docs
    ]
    return (what, fmt, digest, tuple(new_tables), docs)


def _first_server_as(body: tuple[Any, ...], at: int, value: Any) -> bytes:
    what, fmt, digest, tables, docs = body
    done = False
    out = []
    for d in docs:
        if d[0] == "servers" and not done and d[5]:
            first, *rest = d[5]
            d = (*d[:5], [(*first[:at], value, *first[at + 1:]), *rest])
            done = True
        out.append(d)
    return cache.pack((what, fmt, digest, tables, out))


@pytest.mark.parametrize(("table", "at"), [(0, 4), (1, 6)], ids=["fields set", "set of parts"])
def test_a_number_spelled_as_a_bool_is_a_bad_entry(
    servers_entry: tuple[Any, ...], table: int, at: int
) -> None:
    """True is 1, and the same key in a dict: read as 1, it would build the model."""
    swapped = _swapped(servers_entry, table, at)
    validated.decode(_first_server_as(swapped, at, 1))  # the entry renumbered is read
    with pytest.raises(cache.BadEntry):
        validated.decode(_first_server_as(swapped, at, True))


# A server: (index, shape, shape, class, fields set, values, set of parts, other values).
FORGED: dict[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {
    "a fields set that is a float": lambda s: (*s[:4], float(s[4]), *s[5:]),
    "a class that is no name": lambda s: (*s[:3], ("Server",), *s[4:]),
    "other values that are no tuple": lambda s: (*s[:7], list(s[7])),
    "another value that is no pair": lambda s: (*s[:7], (("memory_gb",),)),
    "a field name that is no text": lambda s: (*s[:7], ((1, 2),)),
    "a value list too short": lambda s: (*s[:5], s[5][:-1], *s[6:]),
}


@pytest.mark.parametrize("change", FORGED.values(), ids=FORGED.keys())
def test_a_value_of_another_type_is_a_bad_entry(
    servers_entry: tuple[Any, ...], change: Callable[[tuple[Any, ...]], tuple[Any, ...]]
) -> None:
    with pytest.raises(cache.BadEntry):
        validated.decode(_servers_as(servers_entry, change))
