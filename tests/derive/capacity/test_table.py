from __future__ import annotations

import math

import numpy as np
import pytest

from checker.derive.capacity.table import Column, Table, _cells

SPEC = (
    Column("kw", "kW", "a figure"),
    Column("label", "", "a name", "string"),
    Column("flag", "", "a flag", "boolean"),
)


def table(kw: list[float], label: list[str | None], flag: list[float]) -> Table[str]:
    keys = [f"k{i}" for i in range(len(kw))]
    columns = {
        "kw": np.asarray(kw, dtype=np.float64),
        "label": np.asarray(label, dtype=object),
        "flag": np.asarray(flag, dtype=np.float64),
    }
    return Table(keys, SPEC, columns)


def test_rows_are_plain_rounded_values_without_unknowns() -> None:
    t = table([1.23456, 512.0, math.nan], ["a", None, "c"], [1.0, 0.0, math.nan])
    assert t.rows == [
        {"kw": 1.235, "label": "a", "flag": True},
        {"kw": 512, "flag": False},  # whole numbers are ints; None is left out
        {"label": "c"},
    ]
    assert isinstance(t.rows[1]["kw"], int)
    assert t.row("k2") == {"label": "c"}


def test_columns_must_match_their_declarations() -> None:
    with pytest.raises(ValueError, match="do not match"):
        Table(["k"], SPEC[:1], {"kw": np.zeros(1), "extra": np.zeros(1)})
    with pytest.raises(ValueError, match="has 2 rows for 1 keys"):
        Table(["k"], SPEC[:1], {"kw": np.zeros(2)})


def test_whole_columns_only_for_the_tables_own_order() -> None:
    t = Table(["k1", "k2"], (Column("label", "", "", "string"),), {"label": np.array(["b", "c"])})
    assert t.cells_for(["k1", "k2"]) == {"label": ["b", "c"]}
    with pytest.raises(ValueError):
        t.cells_for(["k2", "k1"])  # facts would get another entity's figures


def _cells_one_by_one(values: np.ndarray, kind: str) -> list[object]:
    """The conversion value by value, as it was written before numpy did it."""
    if kind == "string":
        return list(values.tolist())
    if kind == "boolean":
        return [None if v != v else bool(v) for v in values.astype(np.float64).tolist()]
    rounded = np.round(values.astype(np.float64), 3).tolist()
    return [None if v != v else int(v) if v.is_integer() else v for v in rounded]


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0004, 2.0006, 512.0, 1e15, 2.0**53, 2.0**62, 2.0**63, -(2.0**63),
         1e20, 1e300, math.inf, -math.inf, math.nan, 10200.0, 0.1 + 0.2]


@pytest.mark.parametrize("kind", ["number", "boolean"])
@pytest.mark.parametrize(
    "values",
    [EDGES, [v for v in EDGES if abs(v) < 2.0**62 or v != v], [math.nan] * 3, [], [7.0] * 5,
     list(np.random.default_rng(7).normal(0, 1e6, 500).round(1))],
)
def test_cells_are_the_values_one_by_one_would_give_with_their_types(kind: str, values: list[float]) -> None:
    array = np.array(values, dtype=np.float64)
    got = _cells(array, kind)  # type: ignore[arg-type]
    want = _cells_one_by_one(array, kind)
    assert [(type(v), v) for v in got] == [(type(v), v) for v in want]
