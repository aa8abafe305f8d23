"""checker.derive.carried_rows: each servers file's rows, carried by the resident process.

Whether a carried audit says what a cold one says is tests/test_results_cache.py's
(every input of the rows changed alone, in a process of its own and as the
resident process runs); here, the pieces."""

from __future__ import annotations

import math

import pytest

from checker.derive.carried_rows import _plain, file_runs, one_header
from checker.derive.rows import Header, Row
from checker.source.parse import WrittenFloat


def test_runs_of_one_file() -> None:
    assert file_runs(["a", "a", "b", "a"]) == [(0, 2), (2, 3), (3, 4)]
    assert file_runs([]) == []


def test_rows_of_several_headers_end_under_one_in_the_kinds_order() -> None:
    first, second = Header(("name", "memory_gb")), Header(("name", "gpu.count"))
    rows = [Row(first, ("a", 512)), Row(second, ("b", 8)), Row(first, ("c", None))]
    headers: dict[tuple[str, ...], Header] = {}
    out = one_header(rows, headers, ["name", "gpu.count", "psu.count", "memory_gb"])
    assert [dict(row.items()) for row in out] == [dict(row.items()) for row in rows]
    assert {row.header for row in out} == {headers[("name", "gpu.count", "memory_gb")]}
    assert [row.cells for row in out] == [("a", None, 512), ("b", 8, None), ("c", None, None)]


def test_rows_underone_header_are_kept_as_they_are() -> None:
    header = Header(("name",))
    rows = [Row(header, ("a",)), Row(header, ("b",))]
    assert one_header(rows, {}, ["name"]) is rows
    one = [Row(Header(("name",)), ("a",)), Row(Header(("gpu.count",)), (8,))]
    assert [row.cells for row in one_header(one, {}, ["gpu.count", "name"])] == [(None, "a"), (8, None)]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (1, 1.0), (1, True), (0, None), ([1], (1,)), ({"a": 1}, [("a", 1)]),
        (WrittenFloat(1.5, "1.50"), 1.5), (WrittenFloat(1.5, "1.50"), WrittenFloat(1.5, "1.5")),
    ],
)
def test_values_equal_in_python_are_told_apart(one: object, other: object) -> None:
    import marshal

    assert marshal.dumps(_plain(one), 2) != marshal.dumps(_plain(other), 2)


def test_nan_is_itself_and_an_unknown_value_is_refused() -> None:
    import marshal

    assert marshal.dumps(_plain(math.nan), 2) == marshal.dumps(_plain(math.nan), 2)
    with pytest.raises(ValueError):
        _plain({1, 2})


FIXTURES = ("every-field", "fleet", "liquid", "nvl72", "panels", "panel-lines", "shelves", "ups-blocks")
FOLDERS = ["inventories", "examples/nvl72", *(f"tests/fixtures/{name}" for name in FIXTURES)]


@pytest.mark.parametrize("folder", FOLDERS)
def test_capacity_cells_are_plain_python_values(folder: str) -> None:
    """The carried rows' key writes the servers' capacity cells as marshal bytes,
    which spell a numpy scalar as its raw bytes (an int64 and a float64 could then
    look alike): every cell must be a plain value."""
    from pathlib import Path

    from checker.derive.capacity import compute
    from checker.load.build import load

    inv, problems = load([Path(__file__).resolve().parents[2] / folder])
    assert not [p for p in problems if p.severity == "error"], problems
    cells = compute(inv).servers.cells_for(list(inv.servers))
    kinds = {type(value) for column in cells.values() for value in column}
    assert kinds <= {type(None), bool, int, float, str}, kinds


def test_every_setting_of_the_context_is_in_the_key() -> None:
    """A field added to the facts' Context is in the carried rows' key with no
    change to carried_rows: each field changed alone gives another key."""
    import dataclasses
    import datetime as dt
    from pathlib import Path

    from checker.derive.carried_rows import _shared
    from checker.derive.facts import Context
    from checker.derive.knowledge import builtin
    from checker.load.build import load

    inv, _ = load([Path(__file__).resolve().parents[1] / "fixtures" / "minimal"])
    base = Context(dt.date(2027, 1, 15))
    other = {dt.date: dt.date(2027, 1, 16), int: 1, float: 0.5, str: "x"}
    keys = {_shared(inv, base, {})}
    for f in dataclasses.fields(Context):
        value = getattr(base, f.name)
        changed = builtin().model_copy() if f.name == "knowledge" else (
            value + other[type(value)] if type(value) in (int, float) else other[type(value)])
        keys.add(_shared(inv, dataclasses.replace(base, **{f.name: changed}), {}))
    assert None not in keys
    assert len(keys) == len(dataclasses.fields(Context)) + 1


def test_rows_put_under_one_header_know_what_they_knew_of_nan() -> None:
    first, second = Header(("name", "memory_gb")), Header(("name", "gpu.count"))
    rows = [Row(first, ("a", 512), False), Row(second, ("b", math.nan), True), Row(first, ("c", None))]
    out = one_header(rows, {}, ["name", "gpu.count", "memory_gb"])
    assert [row.nan for row in out] == [False, True, None]
    assert [row.has_nan for row in out] == [False, True, False]
