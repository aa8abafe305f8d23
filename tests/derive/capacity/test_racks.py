"""Feed capacity (NetBox's formula), hand-computed; rack figures are tested end to end in test_capacity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from checker.derive.capacity.feeds import feed_kw


@pytest.mark.parametrize(
    ("voltage", "amps", "util", "phase", "pf", "kw"),
    [
        (415, 32, 80, 3, 1.0, 18.40),  # 415 x 32 x 0.8 x sqrt(3) = 18,400 W
        (230, 32, 80, 1, 1.0, 5.89),  # 230 x 32 x 0.8 = 5,888 W
        (380, 32, 80, 3, 1.0, 16.85),  # Shanghai: 380 V line-to-line
        (400, 32, 80, 3, 1.0, 17.74),
        (380, 63, 80, 3, 1.0, 33.17),
        (220, 16, 80, 1, 1.0, 2.82),
        (208, 30, 100, 1, 1.0, 6.24),
        (230, 16, 80, 1, 0.9, 2.65),
    ],
)
def test_feed_capacity_is_netbox_formula(
    voltage: float, amps: float, util: float, phase: int, pf: float, kw: float
) -> None:
    got = feed_kw(*(np.array([x], dtype=float) for x in (voltage, amps, util, phase, pf)))
    assert got[0] == pytest.approx(kw, abs=0.005)
    assert got[0] == pytest.approx(
        voltage * amps * util / 100 * (math.sqrt(3) if phase == 3 else 1) * pf / 1000
    )


def test_feed_capacity_is_vectorised() -> None:
    ones = np.ones(3)
    got = feed_kw(
        np.array([415.0, 230.0, 380.0]), np.array([32.0, 32.0, 63.0]), ones * 80, np.array([3, 1, 3]), ones
    )
    assert got.round(2).tolist() == [18.4, 5.89, 33.17]
