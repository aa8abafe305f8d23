"""checker.derive.carried_columns: columns of one value per item, carried by the resident process.

Whether a carried audit says what a cold one says is tests/test_results_cache.py's;
here, the pieces."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from checker.core.carried import Carried
from checker.derive.carried_columns import Columns, per_item, unchanged

NAN = float("nan")


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        # Floats bit for bit: 0.0 and -0.0 are equal numbers, not equal cells; a NaN is itself.
        ([1.5, 0.0, NAN, 2.0], [1.5, -0.0, NAN, 2.5], [True, False, True, False]),
        # Integers and booleans as numbers.
        (np.asarray([1, 2]), np.asarray([1, 3]), [True, False]),
        (np.asarray([True, False]), np.asarray([True, True]), [True, False]),
        # Another dtype or length: every value taken as changed.
        (np.asarray([1, 2]), np.asarray([1.0, 2.0]), [False, False]),
        ([1.0, 2.0], [1.0, 2.0, 3.0], [False, False, False]),
        # Objects as text; None is no text.
        (np.asarray(["A", None, "B"], dtype=object), np.asarray(["A", None, None], dtype=object),
         [True, True, False]),
        # Objects that are not all text: 1 and True are equal in Python, not as figures.
        (np.asarray([1, "A"], dtype=object), np.asarray([True, "A"], dtype=object), [False, False]),
    ],
)
def test_an_input_is_unchanged_only_as_the_same_value(old: Any, new: Any, same: list[bool]) -> None:
    """carried_columns.unchanged: an item's values are the last command's only where
    every input of its row is what it was."""
    assert unchanged(np.asarray(old), np.asarray(new)).tolist() == same


def test_per_item_makes_again_only_the_items_whose_inputs_changed() -> None:
    """per_item: an item that is the same object, with the same context and its
    row of the inputs unchanged, keeps its values; the others are made, and a
    process of its own (no carried) makes them all."""
    made: list[list[int]] = []
    a, b, c = object(), object(), object()

    def make(items: Sequence[object], context: int) -> Any:
        def columns(some: Sequence[int]) -> Columns:
            made.append(list(some))
            ids = np.asarray([id(items[i]) + context for i in some])
            return {"id": ids, "item": [items[i] for i in some]}
        return columns

    carried = Carried()

    def run(items: list[object], context: int = 0, inputs: Any = None) -> Columns:
        carried.turn()
        return per_item(carried, "test", items, context, make(items, context), inputs)

    assert run([a, b, c])["item"] == [a, b, c]
    assert run([a, b, c])["item"] == [a, b, c]
    d = object()
    got = run([a, d, c])
    assert got["item"] == [a, d, c] and got["id"].tolist() == [id(a), id(d), id(c)]
    got = run([a, d, c], inputs={"w": np.asarray([1.0, 2.0, 3.0])})  # inputs added: all made
    got = run([a, d, c], inputs={"w": np.asarray([1.0, 2.5, 3.0])})
    got = run([a, d, c], context=1, inputs={"w": np.asarray([1.0, 2.5, 3.0])})
    assert got["id"].tolist() == [id(a) + 1, id(d) + 1, id(c) + 1]
    assert made == [[0, 1, 2], [1], [0, 1, 2], [1], [0, 1, 2]]
    assert per_item(None, "test", [a], 0, make([a], 0))["item"] == [a]
