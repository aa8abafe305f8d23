"""Columns of one value per item, carried by the resident process to the next command.

What the server table reads of each server, each server's workload fit row,
each rack's and feed's facts: a value per item, made of that item alone (an
immutable object, such as a placed model), of a context every item shares,
and of the item's row of some input arrays. In the resident process
(checker.core.carried) `per_item` gives an item that is the last command's,
at the same index, with the same context and inputs, the value it had; only
the others are made. A process of its own makes them all. Here, not in
checker.core.carried, because it needs numpy, which the command line does
not import until a command runs (tests/test_package.py).
"""

from __future__ import annotations

import hashlib
import itertools
import marshal
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from checker.core.carried import Carried

# One value per item: a numpy array, or a list (of objects numpy would not hold).
Columns = dict[str, Any]
Arrays = Mapping[str, npt.NDArray[Any]]


def per_item(
    carried: Carried | None,
    what: str,
    items: Sequence[object],
    context: object,
    make: Callable[[Sequence[int]], Columns],
    inputs: Arrays | None = None,
) -> Columns:
    """`make(range(len(items)))`: columns of one value per item, each a function of
    its item alone (by identity: an immutable object, such as a placed model),
    of `context` (compared with ==) and of its row of `inputs` (arrays of one
    value per item). With `carried` (the resident process's), an item that is
    the last command's, at the same index, with the same context and its row
    of `inputs` the same (`unchanged`), has the values it had; `make` is given
    the indices of the others only. The items and the context are held, so no
    other object can take an id compared here; the columns returned are those
    the next command gets too, so they are read, never changed."""
    if carried is None:
        return make(range(len(items)))
    # One holder per kind of columns and count of items: two inventories audited in turn keep both.
    last = carried.get(what, hashlib.blake2b(marshal.dumps(len(items))).digest(), _Last, _Last)
    inputs = inputs or {}
    if last.columns is None or last.context != context or last.inputs.keys() != inputs.keys():
        columns = make(range(len(items)))
    else:
        same = np.fromiter(map(operator.is_, items, last.items), dtype=bool, count=len(items))
        for name, column in inputs.items():
            same &= unchanged(last.inputs[name], column)
        changed = np.flatnonzero(~same)
        columns = _patched(last.columns, changed, make(changed.tolist())) if len(changed) else last.columns
    last.items, last.context, last.inputs, last.columns = list(items), context, dict(inputs), columns
    return dict(columns)  # the columns themselves are shared with the next command: never changed


class _Last:
    """What per_item made in the last command that used this holder, and of what."""

    def __init__(self) -> None:
        self.items: list[object] = []
        self.context: object = None
        self.inputs: dict[str, npt.NDArray[Any]] = {}
        self.columns: Columns | None = None


def _patched(columns: Columns, at: npt.NDArray[np.intp], new: Columns) -> Columns:
    """`columns` with the values at `at` those of `new` (one per index, in order)."""
    out: Columns = {}
    for name, column in columns.items():
        if isinstance(column, np.ndarray):
            column = column.copy()
            column[at] = new[name]
        else:
            column = list(column)
            for i, value in zip(at.tolist(), new[name], strict=True):
                column[i] = value
        out[name] = column
    return out


_TEXT = frozenset({str, type(None)})


def unchanged(old: npt.NDArray[Any], new: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """Which values of an input column are what they were: floats bit for bit (0.0
    and -0.0 differ, a NaN is itself), integers and booleans as numbers, objects
    only as text (str or None: 1, 1.0 and True are equal in Python, not as
    figures); any other column is taken as changed."""
    if old.dtype != new.dtype or old.shape != new.shape:
        return np.zeros(len(new), dtype=bool)
    if new.dtype == np.float64:
        return np.asarray(old.view(np.uint64) == new.view(np.uint64))
    if new.dtype.kind in "biu":
        return np.asarray(old == new)
    if new.dtype == object and _TEXT.issuperset(map(type, itertools.chain(old, new))):
        return np.asarray(old == new, dtype=bool)
    return np.zeros(len(new), dtype=bool)
