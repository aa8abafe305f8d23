"""What the resident process carries from one command to the next.

A command in a process of its own builds everything it uses and drops it at
its end. The resident process (checker/resident_process.py) runs command
after command, and a pull request's next audit reads mostly the bytes the
last one read: the same compiled rulebook, the same validated models of every
file that did not change. `Carried` holds such results from one command to
the next, each under a digest of every byte it was made from, so that a
result is reused only where the same bytes would make it again: it holds
values of pure functions of bytes, never an option, a finding or a run's
verdict, and nothing whose maker reads a clock or the environment.

Only what one of the last COMMANDS commands used is kept: `turn` (before
each command) drops whatever no command since then has used, so what is
carried is bounded by a few inventories' worth (a 10-server audit between two
audits of a fleet does not drop the fleet's models), and the resident process
ends itself when it holds too much (checker.resident.MAX_RSS). A caller that
passes no `Carried` (every process of its own, every library call) gets none
of this: nothing of one audit outlives it there (tests/test_run_state.py).
"""

from __future__ import annotations

import hashlib
import itertools
import marshal
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T")


COMMANDS = 4


class Carried:
    """Results by (what they are, a digest of their bytes), kept for the next commands."""

    def __init__(self) -> None:
        # What each of the last commands used, the newest last: a result is in one only.
        self._used: list[dict[tuple[str, bytes], object]] = [{}]

    def turn(self) -> None:
        """A command starts: what the last COMMANDS - 1 used is what it may reuse."""
        self._used = [*self._used[-(COMMANDS - 1):], {}]

    def get(self, what: str, digest: bytes, kind: type[T], make: Callable[[], T]) -> T:
        """The result `make` gives for these bytes: the one carried, else made now.
        `kind`, its type: a value carried under `what` that is not one is made again.
        Whatever `make` raises propagates, and nothing is carried for it."""
        key = (what, digest)
        got = None
        for used in reversed(self._used):
            got = used.pop(key, None)
            if got is not None:
                break
        if not isinstance(got, kind):
            got = make()
        self._used[-1][key] = got
        return got

    def __len__(self) -> int:
        return sum(map(len, self._used))


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
    of `inputs` unchanged (_unchanged), has the values it had; `make` is given
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
            same &= _unchanged(last.inputs[name], column)
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


def _unchanged(old: npt.NDArray[Any], new: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
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
