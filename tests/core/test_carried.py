"""checker.core.carried: what the resident process carries from one command to the next."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from checker.core.carried import COMMANDS, Carried, Columns, _unchanged, per_item


def test_a_result_is_made_once_while_each_command_uses_it() -> None:
    carried, made = Carried(), []

    def make() -> str:
        made.append(1)
        return "value"

    for _ in range(3):
        carried.turn()
        assert carried.get("what", b"digest", str, make) == "value"
        assert carried.get("what", b"digest", str, make) == "value"
    assert made == [1]


def test_what_no_recent_command_used_is_dropped() -> None:
    carried = Carried()
    carried.turn()
    carried.get("what", b"fleet", str, lambda: "fleet")
    for _ in range(COMMANDS - 1):  # other commands: the fleet's result stays
        carried.turn()
        carried.get("what", b"small", str, lambda: "small")
    assert carried.get("what", b"fleet", str, lambda: "made again") == "fleet"
    for _ in range(COMMANDS - 1):  # commands that use nothing: both still there for the next
        carried.turn()
    assert len(carried) == 2
    carried.turn()  # the last COMMANDS commands used neither
    assert len(carried) == 0
    assert carried.get("what", b"fleet", str, lambda: "made again") == "made again"


def test_results_are_apart_by_what_they_are_and_by_type() -> None:
    carried = Carried()
    carried.turn()
    assert carried.get("one", b"d", str, lambda: "one") == "one"
    assert carried.get("other", b"d", str, lambda: "other") == "other"
    assert carried.get("one", b"d", tuple, lambda: (1,)) == (1,)  # not a tuple carried: made


def test_nothing_is_carried_for_what_fails() -> None:
    carried = Carried()
    carried.turn()

    def broken() -> str:
        raise ValueError("bad entry")

    with pytest.raises(ValueError):
        carried.get("what", b"d", str, broken)
    assert len(carried) == 0


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
    """core.carried._unchanged: an item's values are the last command's only where
    every input of its row is what it was."""
    assert _unchanged(np.asarray(old), np.asarray(new)).tolist() == same


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
