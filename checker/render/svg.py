"""Pictures for the readiness report, drawn as SVG from the facts: no network, no script.

- `elevation`: a rack front view, one box per rack-mounted device at its U
  positions (U 1 at the bottom), with its name and kW, coloured by the worst
  open finding on it; devices without a position are listed below the rack.
- `load_bars`: per rack, the load after a failure against the capacity left
  then (the full bar), the per-side load with both sides up inside it, the
  warning line (where the headroom rules warn: 90 %, or 100 % less checker.yaml's
  headroom_pct) and the limit (100 %).
- `timeline`: support contracts and waivers from the audit day to their end,
  with the rollout marked.

Every string from the inventory is XML-escaped; figures are written with fixed
decimals, so the same input gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

PITCH = 14  # px per U
WIDTH = 250  # the rack's outer width
RAIL = 26  # the U-number rail on the left
TOP = 22  # room for the rack's name
WARN_PCT = 90.0  # power.rack-headroom and cooling.rack-headroom warn from here
LIMIT_PCT = 100.0
FILL = {"error": "#f4c2c4", "warning": "#f8e3a3", "info": "#dbe7f3", "ok": "#cdebd3"}
STROKE = {"error": "#cf222e", "warning": "#9a6700", "info": "#0550ae", "ok": "#1a7f37"}


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def device_box(position: int, u_height: int, rack_u: int) -> tuple[int, int]:
    """The y and height of a device that occupies U `position` .. position + u_height - 1."""
    top_u = position + u_height - 1
    return TOP + (rack_u - top_u) * PITCH, u_height * PITCH


def elevation(
    rack: Mapping[str, Any], servers: Sequence[Mapping[str, Any]], status: Callable[[str], str]
) -> Markup:
    """The rack's elevation; `status(entity)` is the worst open severity on a device, or "ok"."""
    rack_u = int(rack.get("u_height") or 42)
    height = TOP + rack_u * PITCH + 8
    title = f"{rack.get('facility', '')}/{rack.get('name', '')}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="elevation" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="rack {escape(title)}">',
        f"<title>rack {escape(title)}</title>",
        f'<text x="{WIDTH // 2}" y="15" text-anchor="middle" font-size="12" font-weight="bold">'
        f"{escape(_clip(title, 34))}</text>",
        f'<rect x="{RAIL}" y="{TOP}" width="{WIDTH - RAIL - 4}" height="{rack_u * PITCH}" '
        'fill="#f6f8fa" stroke="#57606a"/>',
    ]
    for u in range(1, rack_u + 1, 5 if rack_u > 24 else 1):
        y, _ = device_box(u, 1, rack_u)
        parts.append(
            f'<text x="{RAIL - 4}" y="{y + PITCH - 3}" text-anchor="end" font-size="9" '
            f'fill="#57606a">{u}</text>'
        )
    for s in servers:
        position, u_height = s.get("position"), s.get("u_height")
        if s.get("fills_rack"):  # a rack-scale system written without U: it takes U 1 to the top
            position, u_height = 1, rack_u
        if position is None or not u_height:
            continue
        y, h = device_box(int(position), int(u_height), rack_u)
        state = status(s["entity"])
        kw = float(s.get("peak_w") or 0) / 1000
        name = str(s.get("name", ""))
        parts += [
            f'<g class="device {state}" data-u="{int(position)}">',
            f"<title>{escape(name)}: U{int(position)}-{int(position) + int(u_height) - 1}, "
            f"{_f(kw)} kW, {state}</title>",
            f'<rect x="{RAIL + 2}" y="{y + 1}" width="{WIDTH - RAIL - 8}" height="{h - 2}" '
            f'fill="{FILL[state]}" stroke="{STROKE[state]}"/>',
            f'<text x="{RAIL + 6}" y="{y + min(h, 2 * PITCH) / 2 + 4:.0f}" font-size="10">'
            f"{escape(_clip(name, 26))} · {_f(kw)} kW</text>",
            "</g>",
        ]
    parts.append("</svg>")
    return Markup("\n".join(parts))


def unmounted(servers: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rack's devices without a position: listed beside its elevation."""
    def placed(s: Mapping[str, Any]) -> bool:
        return bool(s.get("fills_rack")) or (s.get("position") is not None and bool(s.get("u_height")))

    return [s for s in servers if not placed(s)]


def _state(pct: float, warn: float = WARN_PCT) -> str:
    return "error" if pct > LIMIT_PCT else "warning" if pct >= warn else "ok"


def _warn_pct(rows: Sequence[Mapping[str, Any]]) -> float:
    """Where the headroom rules warn: 100 % less the racks' headroom_pct (checker.yaml), else 90 %."""
    kept = next((r["headroom_pct"] for r in rows if r.get("headroom_pct") is not None), None)
    return WARN_PCT if kept is None else LIMIT_PCT - float(kept)


def load_bars(
    racks: Sequence[Mapping[str, Any]], field: str, inner: str | None, caption: str
) -> Markup:
    """One bar a rack: `field` (a % of capacity), with `inner` (kW, as a share of
    the same capacity) drawn inside it; the warning and limit lines across."""
    rows = [r for r in racks if r.get(field) is not None]
    warn = _warn_pct(rows)
    label_w, bar_w, row_h = 150, 420, 16
    top = 30
    scale_max = max([120.0, *(float(r[field]) for r in rows)])
    scale_max = float(int(scale_max / 10 + 0.999) * 10)
    height = top + row_h * len(rows) + 20
    width = label_w + bar_w + 60

    def x(pct: float) -> float:
        return label_w + bar_w * min(pct, scale_max) / scale_max

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bars" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(caption)}">',
        f"<title>{escape(caption)}</title>",
        f'<text x="0" y="14" font-size="12" font-weight="bold">{escape(caption)}</text>',
    ]
    for i, r in enumerate(rows):
        pct = float(r[field])
        y = top + i * row_h
        state = _state(pct, warn)
        name = f"{r.get('facility', '')}/{r.get('name', '')}"
        parts += [
            f'<g class="bar {state}">',
            f"<title>{escape(name)}: {_f(pct)} %</title>",
            f'<text x="{label_w - 6}" y="{y + 11}" text-anchor="end" font-size="10">'
            f"{escape(_clip(name, 24))}</text>",
            f'<rect x="{label_w}" y="{y + 2}" width="{x(pct) - label_w:.1f}" height="{row_h - 4}" '
            f'fill="{FILL[state]}" stroke="{STROKE[state]}"/>',
        ]
        capacity = r.get("capacity_kw")
        if inner and r.get(inner) is not None and capacity:
            share = float(r[inner]) / float(capacity) * 100
            parts.append(
                f'<rect class="normal" x="{label_w}" y="{y + 5}" width="{x(share) - label_w:.1f}" '
                f'height="{row_h - 10}" fill="{STROKE[state]}"/>'
            )
        parts += [f'<text x="{x(pct) + 4:.1f}" y="{y + 11}" font-size="10">{_f(pct)} %</text>', "</g>"]
    bottom = top + row_h * len(rows)
    lines = (
        (warn, STROKE["warning"], "warning", "end", -3),
        (LIMIT_PCT, STROKE["error"], "limit", "start", 3),
    )
    for pct, colour, label, anchor, dx in lines:
        parts += [
            f'<line class="{label}" x1="{x(pct):.1f}" y1="{top - 4}" x2="{x(pct):.1f}" y2="{bottom + 2}" '
            f'stroke="{colour}" stroke-dasharray="4 3"/>',
            f'<text x="{x(pct) + dx:.1f}" y="{top - 8}" text-anchor="{anchor}" font-size="9" fill="{colour}">'
            f"{label} {_f(pct)} %</text>",
        ]
    parts.append(f'<text x="{label_w}" y="{bottom + 14}" font-size="9" fill="#57606a">0 %</text>')
    parts.append(
        f'<text x="{label_w + bar_w}" y="{bottom + 14}" text-anchor="end" font-size="9" fill="#57606a">'
        f"{_f(scale_max)} %</text>"
    )
    parts.append("</svg>")
    return Markup("\n".join(parts))


def timeline(
    items: Sequence[tuple[str, dt.date, str]],
    as_of: dt.date,
    marks: Sequence[tuple[str, dt.date]],
    caption: str,
) -> Markup:
    """One bar per item from the audit day to its date (support ends, a waiver expires),
    coloured by its state; `marks` (the rollout) are drawn as lines across."""
    label_w, bar_w, row_h, top = 260, 440, 16, 38
    dates = [d for _, d, _ in items] + [d for _, d in marks] + [as_of]
    start, end = min(dates), max(dates)
    span = max((end - start).days, 30)
    height = top + row_h * len(items) + 24
    width = label_w + bar_w + 90

    def x(day: dt.date) -> float:
        return label_w + bar_w * (day - start).days / span

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(caption)}">',
        f"<title>{escape(caption)}</title>",
        f'<text x="0" y="14" font-size="12" font-weight="bold">{escape(caption)}</text>',
    ]
    for i, (label, day, state) in enumerate(items):
        y = top + i * row_h
        left, right = sorted((x(as_of), x(day)))
        parts += [
            f'<g class="span {state}">',
            f"<title>{escape(label)}: {day.isoformat()}, {state}</title>",
            f'<text x="{label_w - 6}" y="{y + 11}" text-anchor="end" font-size="10">'
            f"{escape(_clip(label, 44))}</text>",
            f'<rect x="{left:.1f}" y="{y + 2}" width="{max(right - left, 2):.1f}" height="{row_h - 4}" '
            f'fill="{FILL[state]}" stroke="{STROKE[state]}"/>',
            f'<text x="{right + 4:.1f}" y="{y + 11}" font-size="10">{day.isoformat()}</text>',
            "</g>",
        ]
    bottom = top + row_h * len(items)
    # The audit day is labelled above the bars, the rollout below: they are often days apart.
    for i, (label, day) in enumerate([("as of", as_of), *marks]):
        parts += [
            f'<line class="mark" x1="{x(day):.1f}" y1="{top - 6}" x2="{x(day):.1f}" y2="{bottom + 2}" '
            'stroke="#57606a" stroke-dasharray="3 3"/>',
            f'<text x="{x(day):.1f}" y="{top - 9 if i == 0 else bottom + 14}" text-anchor="start" '
            f'font-size="9" fill="#57606a">{escape(label)} {day.isoformat()}</text>',
        ]
    parts.append("</svg>")
    return Markup("\n".join(parts))
