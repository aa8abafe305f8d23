from __future__ import annotations

import pytest

from checker.decide.compare import Delta
from checker.render.diff_formats import delta_line


@pytest.mark.parametrize(
    ("delta", "line"),
    [
        (Delta("rack/hx1/H01", 10.2, 30.6, 15.8, -4.6), "rack hx1/H01: +20.4 kW, headroom 15.8 -> -4.6 kW"),
        (Delta("rack/hx1/H02", 20.4, 0.0, None, None), "rack hx1/H02: -20.4 kW"),
        (Delta("facility/sh1", 0.0, 0.0, 100.0, 120.0), "facility sh1: +0.0 kW, headroom 100.0 -> 120.0 kW"),
        (Delta("rack/n/R", 0.0, 5.0, None, -5.0), "rack n/R: +5.0 kW, headroom n/a -> -5.0 kW"),
    ],
)
def test_delta_line(delta: Delta, line: str) -> None:
    assert delta_line(delta) == line
