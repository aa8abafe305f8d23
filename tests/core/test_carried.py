"""checker.core.carried: what the resident process carries from one command to the next."""

from __future__ import annotations

import pytest

from checker.core.carried import COMMANDS, Carried


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
