"""U overlap detection in one sorted pass, on plain arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from checker.derive.capacity.servers import overlaps

NAN = math.nan


def run(rows: list[tuple[int, float, float]]) -> list[int]:
    """rows: (rack, position, u_height); NaN position = not rack-mounted."""
    rack = np.array([r for r, _, _ in rows], dtype=np.intp)
    position = np.array([p for _, p, _ in rows], dtype=np.float64)
    height = np.array([h for _, _, h in rows], dtype=np.float64)
    mounted = ~np.isnan(position) & ~np.isnan(height)
    return overlaps(rack, position, height, mounted).tolist()


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([(0, 1, 2), (0, 3, 2)], [-1, -1]),  # U1-U2 and U3-U4 touch, no overlap
        ([(0, 1, 2), (0, 2, 2)], [-1, 0]),  # U2 shared
        ([(0, 3, 2), (0, 1, 8)], [1, -1]),  # written out of order: the upper one is reported
        ([(0, 1, 10), (0, 3, 1), (0, 6, 1)], [-1, 0, 0]),  # both inside a tall one
        ([(0, 1, 4), (1, 1, 4)], [-1, -1]),  # same U, different racks
        ([(0, 1, 4), (0, NAN, NAN), (0, 2, 1)], [-1, -1, 0]),  # a shelf device takes no U
        ([(0, 5, 2), (0, 5, 2), (0, 5, 2)], [-1, 0, 1]),  # equal positions: each against the one before
        ([(-1, 1, 4), (0, 1, 4)], [-1, -1]),  # no rack: not compared
        ([], []),
    ],
)
def test_overlaps(rows: list[tuple[int, float, float]], expected: list[int]) -> None:
    assert run(rows) == expected
