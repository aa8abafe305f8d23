"""The lines a change touched, as spans."""

from __future__ import annotations

import pytest

from checker.decide.touched import EVERY_LINE, Lines


@pytest.mark.parametrize(
    ("spans", "line", "inside"),
    [
        (((3, 5), (9, 9)), 2, False),
        (((3, 5), (9, 9)), 3, True),
        (((3, 5), (9, 9)), 5, True),
        (((3, 5), (9, 9)), 6, False),
        (((3, 5), (9, 9)), 9, True),
        (((3, 5), (9, 9)), 10, False),
        ((), 1, False),
        (EVERY_LINE.spans, 123_456, True),
    ],
)
def test_lines(spans: tuple[tuple[int, int], ...], line: int, inside: bool) -> None:
    assert (line in Lines(spans)) is inside
