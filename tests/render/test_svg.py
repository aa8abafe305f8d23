"""The report's pictures: golden SVG, well-formed XML, devices at their U positions, names escaped."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from typing import Any

from checker.render.svg import LIMIT_PCT, PITCH, TOP, WARN_PCT, elevation, load_bars, timeline, unmounted
from tests.helpers import assert_golden

NS = {"s": "http://www.w3.org/2000/svg"}
HOSTILE = "x<script>alert(1)</script>&amp;\"'"
RACK = {"facility": "f1", "name": "R01", "u_height": 42}
SERVERS: list[dict[str, Any]] = [
    {"entity": "server/dgx", "name": "dgx", "position": 1, "u_height": 8, "peak_w": 10200},
    {"entity": "server/evil", "name": HOSTILE, "position": 10, "u_height": 2, "peak_w": 900},
    {"entity": "server/top", "name": "top", "position": 41, "u_height": 2, "peak_w": 500},
    {"entity": "server/shelf", "name": "shelf", "peak_w": 60},
]
STATUS = {"server/dgx": "error", "server/evil": "warning"}
RACKS: list[dict[str, Any]] = [
    {"facility": "f1", "name": "R01", "utilization_pct": 61.5, "normal_side_load_kw": 10.2,
     "capacity_kw": 33.17},
    {"facility": "f1", "name": "R02", "utilization_pct": 91.4, "normal_side_load_kw": 7.7,
     "capacity_kw": 16.85},
    {"facility": "f1", "name": HOSTILE, "utilization_pct": 121.07, "capacity_kw": 16.85},
]


def _elevation() -> str:
    return str(elevation(RACK, SERVERS, lambda e: STATUS.get(e, "ok")))


def _devices(svg: str) -> dict[str, tuple[float, float, str]]:
    """Each device's title, its box (top y, bottom y) and class."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iterfind("s:g", NS):
        title = g.findtext("s:title", namespaces=NS) or ""
        rect = g.find("s:rect", NS)
        assert rect is not None
        y, h = float(rect.get("y", 0)), float(rect.get("height", 0))
        out[title.split(": U")[0]] = (y - 1, y + h + 1, g.get("class", ""))
    return out


def test_elevation_golden() -> None:
    assert_golden("elevation.svg", _elevation() + "\n")


def test_devices_sit_at_their_u_positions() -> None:
    devices = _devices(_elevation())
    bottom = TOP + 42 * PITCH  # the bottom of U 1
    assert devices["dgx"] == (bottom - 8 * PITCH, bottom, "device error")  # U1-U8
    assert devices[HOSTILE] == (bottom - 11 * PITCH, bottom - 9 * PITCH, "device warning")  # U10-U11
    assert devices["top"][0] == TOP and devices["top"][2] == "device ok"  # U41-U42: the top of the rack
    assert "shelf" not in devices and [s["name"] for s in unmounted(SERVERS)] == ["shelf"]


def test_elevation_shows_names_and_kw_as_text() -> None:
    svg = _elevation()
    root = ET.fromstring(svg)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "dgx · 10.2 kW" in texts
    assert not root.findall(".//s:script", NS) and "<script" not in svg
    assert any(t.startswith("x<script>") for t in texts)  # the hostile name, as text


def test_load_bars_golden_with_warning_and_limit_lines() -> None:
    svg = str(load_bars(RACKS, "utilization_pct", "normal_side_load_kw", f"load {HOSTILE}"))
    assert_golden("load-bars.svg", svg + "\n")
    root = ET.fromstring(svg)
    lines = {ln.get("class"): float(ln.get("x1", 0)) for ln in root.iterfind("s:line", NS)}
    # The scale runs to 130 % (the fullest rack, rounded up): 150 px of labels, 420 px of bar.
    x = {"warning": 150 + 420 * WARN_PCT / 130, "limit": 150 + 420 * LIMIT_PCT / 130}
    assert lines == {k: round(v, 1) for k, v in x.items()}
    states = [g.get("class") for g in root.iterfind("s:g", NS)]
    assert states == ["bar ok", "bar warning", "bar error"]
    normal = root.findall(".//s:rect[@class='normal']", NS)
    assert len(normal) == 2  # the rack without a per-side figure has no inner bar


def test_the_warning_line_follows_the_headroom_setting() -> None:
    # checker.yaml headroom_pct: 20 puts the rules' warning, and the line, at 80 %.
    kept = [{**r, "headroom_pct": 20} for r in RACKS]
    root = ET.fromstring(str(load_bars(kept, "utilization_pct", None, "load")))
    lines = {ln.get("class"): float(ln.get("x1", 0)) for ln in root.iterfind("s:line", NS)}
    assert lines["warning"] == round(150 + 420 * 80 / 130, 1)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert [t for t in texts if t.startswith("warning")] == ["warning 80 %"]


def test_timeline_golden_bars_end_on_their_dates() -> None:
    as_of = dt.date(2027, 1, 15)
    items = [
        (f"waiver on {HOSTILE}", dt.date(2027, 2, 1), "warning"),
        ("support NVIDIA 24x7, 12 servers", dt.date(2029, 12, 31), "ok"),
    ]
    svg = str(timeline(items, as_of, [("rollout", dt.date(2027, 2, 1))], "Support and waivers"))
    assert_golden("timeline.svg", svg + "\n")
    root = ET.fromstring(svg)
    rects = [g.find("s:rect", NS) for g in root.iterfind("s:g", NS)]
    assert all(r is not None for r in rects)
    ends = [float(r.get("x", 0)) + float(r.get("width", 0)) for r in rects if r is not None]
    span = (dt.date(2029, 12, 31) - as_of).days
    assert ends == [round(260 + 440 * 17 / span, 1), 260 + 440]  # the waiver 17 days on, support at the end
    assert [g.get("class") for g in root.iterfind("s:g", NS)] == ["span warning", "span ok"]


def test_a_rack_scale_system_fills_its_rack() -> None:
    nvl72 = {"entity": "server/nvl", "name": "nvl", "fills_rack": True, "peak_w": 132000}
    svg = str(elevation({"facility": "f", "name": "L01", "u_height": 48}, [nvl72], lambda e: "ok"))
    assert _devices(svg)["nvl"] == (TOP, TOP + 48 * PITCH, "device ok")
    assert unmounted([nvl72]) == []
