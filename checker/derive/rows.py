"""A kind's fact values, one row per entity under a header its rows share."""

from __future__ import annotations

import itertools
import operator
from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence
from typing import Any

from checker.core.made import made, setter


class Header:
    """The field names of one kind's rows, shared by all of them, with each
    name's position (a fact costs one tuple of cells, not a dict of its own)."""

    __slots__ = ("index", "names")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.index = {name: i for i, name in enumerate(self.names)}


_set = object.__setattr__


class Block:
    """Rows made together (a part of one kind's facts, or one kept file's server
    rows) and the columns whose cell is one object in every one of them: the
    rules stage projects such rows once, not once a row, when all it reads
    of them is those columns (checker.evaluate.engine._projected)."""

    __slots__ = ("same", "version")

    def __init__(self, same: frozenset[str], version: bytes | None = None) -> None:
        self.same = same
        # The rows as an entry holds them, where they are a kept file's servers or
        # chunk of racks or feeds (checker.derive.kept_rows, kept_tables): what the
        # rules found on them is kept under it (checker.evaluate.memo.Found).
        # None: rows made this run only.
        self.version = version


class Row(Mapping[str, Any]):
    """One entity's fact values as a read-only mapping: a tuple of cells in its
    kind's `Header` order, None where the entity has no value (so the field is
    absent, as from a dict that leaves it out).

    A 100,000-server fleet has ~175,000 facts of up to ~100 fields: a dict each
    was ~1.6 kB per server, this tuple ~0.6 kB (docs/performance.md, "Memory")."""

    __slots__ = ("block", "cells", "header", "nan")
    header: Header
    cells: tuple[Any, ...]
    nan: bool | None  # whether a cell is NaN; None: not asked yet (has_nan asks)
    block: Block | None  # the rows it was made with, where its maker knew their alike columns

    def __init__(
        self, header: Header, cells: tuple[Any, ...], nan: bool | None = None, block: Block | None = None
    ) -> None:
        _set(self, "header", header)
        _set(self, "cells", cells)
        _set(self, "nan", nan)  # given: what has_nan would answer (its maker asked its columns)
        _set(self, "block", block)

    @property
    def has_nan(self) -> bool:
        """Whether a cell is NaN (unequal to itself), asked of every cell once in
        the row's life: rows carried from one command to the next
        (checker.derive.carried_rows) are not asked again."""
        if self.nan is None:
            _set(self, "nan", any(map(operator.ne, self.cells, self.cells)))
        return bool(self.nan)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a fact's values cannot be changed ({name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a fact's values cannot be changed ({name})")

    def __reduce__(self) -> tuple[type[Row], tuple[Header, tuple[Any, ...]]]:
        # Copied and pickled through __init__, not by setting its slots.
        return Row, (self.header, self.cells)

    def get(self, name: str, default: Any = None) -> Any:
        i = self.header.index.get(name)
        value = None if i is None else self.cells[i]
        return default if value is None else value

    def __getitem__(self, name: str) -> Any:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (name for name, value in zip(self.header.names, self.cells, strict=True) if value is not None)

    def __len__(self) -> int:
        return len(self.cells) - self.cells.count(None)

    def items(self) -> ItemsView[str, Any]:
        return _RowItems(self)

    def __repr__(self) -> str:
        return f"Row({dict(self.items())!r})"


def made_rows(
    header: Header, cells: Iterable[tuple[Any, ...]], count: int, nan: bool | None, block: Block | None
) -> list[Row]:
    """`Row(header, c, nan, block)` of each of the `count` cells `c`, made a column
    at a time (core.made: a warm 100,000-server audit makes 175,000 rows)."""
    listed = cells if isinstance(cells, list) else list(cells)
    if len(listed) != count:
        raise ValueError(f"{len(listed)} rows' cells for {count} rows")  # a bug, not input
    each = itertools.repeat
    set_header, set_cells, set_nan, set_block = _SET_ROW
    slots = ((set_header, each(header)), (set_cells, listed), (set_nan, each(nan)), (set_block, each(block)))
    rows: list[Row] = made(Row, count, slots)
    return rows


_SET_ROW = tuple(setter(Row, name) for name in ("header", "cells", "nan", "block"))


class _RowItems(ItemsView[str, Any]):
    """(name, value) pairs read straight off the cells (the hot loop of messages
    and the NaN check), not a lookup per name."""

    __slots__ = ("_row",)

    def __init__(self, row: Row) -> None:
        super().__init__(row)
        self._row = row

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        pairs = zip(self._row.header.names, self._row.cells, strict=True)
        return ((name, value) for name, value in pairs if value is not None)
