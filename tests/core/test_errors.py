from __future__ import annotations

from checker.core.errors import UserError, at


def test_user_error_holds_one_line_per_problem() -> None:
    assert UserError("one").lines == ("one",)
    assert UserError(["a", "b"]).lines == ("a", "b")
    assert str(UserError(["a", "b"])) == "a\nb"


def test_located_problem_spelling() -> None:
    assert at("inventories/sh1/facility.yaml", 41, 7, "bad") == "inventories/sh1/facility.yaml:41:7: bad"
