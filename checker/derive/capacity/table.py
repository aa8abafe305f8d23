"""Typed capacity columns keyed by the inventory's own keys.

A table is a set of equally long numpy columns, one row per entity, in the
inventory's order. Each column is declared once, with its unit and meaning:
the same declaration documents the fact field (`checker facts`) and names the
value in the JSON `capacity` section. A NaN (or None) cell means "not known
for this entity" and is left out of facts and JSON alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, Literal, TypeVar

import numpy as np
import numpy.typing as npt

K = TypeVar("K")
ColumnType = Literal["number", "string", "boolean"]
# Rounded so JSON output is stable and readable; 1 W resolution in kW is plenty.
DECIMALS = 3


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    unit: str
    doc: str
    type: ColumnType = "number"
    # A value looked up from the entity's rack or facility so one-fact rules can
    # compare against it; not a figure of its own, so not in the JSON section.
    context: bool = False


# Whole floats below this are exactly an int64, so numpy makes their ints.
_INT64_EXACT = 2.0**63


def _cells(values: npt.NDArray[Any], kind: ColumnType) -> list[Any]:
    """Plain Python values: NaN -> None, whole floats -> int (512 GB, not 512.0 GB).
    Worked out for the whole column in numpy, not value by value in Python (the
    capacity tables of 10,000 servers: 300,000 values)."""
    if kind == "string":
        return list(values.tolist())
    floats = values.astype(np.float64)
    if kind == "boolean":
        cells = (floats != 0).astype(object)  # bool(v): NaN is left out below
    else:
        rounded = np.round(floats, DECIMALS)
        whole = np.isfinite(rounded) & (rounded == np.trunc(rounded))  # float.is_integer()
        ints = rounded[whole]
        if ints.size and np.abs(ints).max() >= _INT64_EXACT:
            return [None if v != v else int(v) if v.is_integer() else v for v in rounded.tolist()]
        cells = rounded.astype(object)
        cells[whole] = ints.astype(np.int64)  # Python ints, as int(v)
    cells[np.isnan(floats)] = None
    return list(cells.tolist())


def assemble(columns: Sequence[tuple[str, Sequence[Any]]], count: int) -> list[dict[str, Any]]:
    """One dict per row, in column order, without None values: a column never
    set is left out, a column always set goes in by dict(zip()) at C speed,
    and only the columns set for some rows are checked row by row."""
    kept = [(name, cell) for name, cell in columns if cell.count(None) < count]
    sometimes = [name for name, cell in kept if None in cell]
    names = [name for name, _ in kept]
    rows = zip(*(cell for _, cell in kept), strict=True) if kept else [()] * count
    records = [dict(zip(names, row, strict=True)) for row in rows]
    for record in records if sometimes else ():
        for name in sometimes:
            if record[name] is None:
                del record[name]
    return records


@dataclass(frozen=True)
class Table(Generic[K]):
    keys: Sequence[K]
    spec: tuple[Column, ...]
    columns: Mapping[str, npt.NDArray[Any]] = field(repr=False)

    def __post_init__(self) -> None:
        names = [c.name for c in self.spec]
        if sorted(names) != sorted(self.columns):  # a bug: every column declared, once
            raise ValueError(f"columns {sorted(self.columns)} do not match their declarations {names}")
        for name, values in self.columns.items():
            if len(values) != len(self.keys):
                raise ValueError(f"column {name} has {len(values)} rows for {len(self.keys)} keys")

    @cached_property
    def index(self) -> dict[K, int]:
        return {k: i for i, k in enumerate(self.keys)}

    @cached_property
    def cells(self) -> dict[str, list[Any]]:
        """Each column as plain Python values (None where not known), in declaration order."""
        return {c.name: _cells(self.columns[c.name], c.type) for c in self.spec}

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        """Each entity's known values, in declaration order."""
        return assemble(list(self.cells.items()), len(self.keys))

    @cached_property
    def figures(self) -> list[dict[str, Any]]:
        """Rows without context columns: what the JSON `capacity` section shows."""
        context = {c.name for c in self.spec if c.context}
        if not context:
            return self.rows
        return assemble([(k, v) for k, v in self.cells.items() if k not in context], len(self.keys))

    def cells_for(self, keys: Sequence[K], some: Sequence[int] | None = None) -> dict[str, list[Any]]:
        """`cells`, for entities listed in `keys`: they must be the table's own
        keys in its order (facts take whole columns, so a mismatch is a bug).
        `some`: of the entities at those positions only (worked out for them
        alone where `cells` is not made already)."""
        if list(keys) != list(self.keys):
            raise ValueError("entities listed in another order than the capacity table's")
        if some is None or len(some) == len(self.keys):
            return self.cells
        return self.cells_at(some)

    def cells_at(self, some: Sequence[int]) -> dict[str, list[Any]]:
        """`cells` of the entities at those positions only (worked out for them
        alone where `cells` is not made already)."""
        if "cells" in self.__dict__:
            return {name: [column[i] for i in some] for name, column in self.cells.items()}
        at = slice(some.start, some.stop) if isinstance(some, range) and some.step == 1 else np.asarray(
            some, dtype=np.intp)
        return {c.name: _cells(self.columns[c.name][at], c.type) for c in self.spec}

    def row(self, key: K) -> dict[str, Any]:
        return self.rows[self.index[key]]

    def column(self, name: str) -> npt.NDArray[Any]:
        return self.columns[name]
