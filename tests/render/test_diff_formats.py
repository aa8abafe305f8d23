from __future__ import annotations

from typing import Any

import pytest

from checker.decide.compare import Delta
from checker.render.diff_formats import _delta_cells, delta_line


def _d(entity: str, before: dict[str, Any], after: dict[str, Any]) -> Delta:
    return Delta(entity, before, after)


@pytest.mark.parametrize(
    ("delta", "line"),
    [
        (
            _d("rack/hx1/H01", {"load_kw": 10.2, "headroom_kw": 15.8},
               {"load_kw": 30.6, "headroom_kw": -4.6}),
            "rack hx1/H01: +20.4 kW, headroom 15.8 -> -4.6 kW",
        ),
        (_d("rack/hx1/H02", {"load_kw": 20.4}, {"load_kw": 0.0}), "rack hx1/H02: -20.4 kW"),
        (
            _d("facility/sh1", {"load_kw": 0, "headroom_kw": 100.0}, {"load_kw": 0, "headroom_kw": 120.0}),
            "facility sh1: +0.0 kW, headroom 100.0 -> 120.0 kW",
        ),
        (
            _d("rack/n/R", {"load_kw": 0.0}, {"load_kw": 5.0, "headroom_kw": -5.0}),
            "rack n/R: +5.0 kW, headroom n/a -> -5.0 kW",
        ),
        # Two 4 U, 8-GPU servers of 8.3 kW and 60 kg into a rack with 20 kW of cooling.
        (
            _d(
                "rack/fra1/R02",
                {"load_kw": 16.6, "headroom_kw": 1.8, "heat_kw": 16.6, "cooling_headroom_kw": 3.4,
                 "u_used": 8, "u_free": 34, "weight_kg": 120, "servers": 2, "gpus": 16},
                {"load_kw": 33.2, "headroom_kw": -14.8, "heat_kw": 33.2, "cooling_headroom_kw": -13.2,
                 "u_used": 16, "u_free": 26, "weight_kg": 240, "servers": 4, "gpus": 32},
            ),
            "rack fra1/R02: +16.6 kW, headroom 1.8 -> -14.8 kW; cooling headroom 3.4 -> -13.2 kW; "
            "+8 U (free 34 -> 26); +120 kg; +2 servers; +16 GPUs",
        ),
        # No cooling figure of its own (no cooling_kw): the heat it adds; one server, one GPU.
        (
            _d("rack/x/R", {"load_kw": 1.0, "heat_kw": 1.0, "servers": 1, "gpus": 1},
               {"load_kw": 0.5, "heat_kw": 0.5, "servers": 0, "gpus": 0}),
            "rack x/R: -0.5 kW; heat -0.5 kW; -1 server; -1 GPU",
        ),
    ],
)  # fmt: skip
def test_delta_line(delta: Delta, line: str) -> None:
    assert delta_line(delta) == line


def test_the_comment_shows_a_dash_where_a_figure_did_not_change() -> None:
    d = _d("rack/x/R", {"load_kw": 1.0, "gpus": 8}, {"load_kw": 1.0, "gpus": 16})
    assert _delta_cells(d) == {
        "power": "—", "cooling": "—", "u": "—", "weight_kg": "—", "servers": "—", "gpus": "+8",
    }  # fmt: skip
