"""The readiness report as one self-contained HTML file (templates/report.html.j2).

The same data as the Markdown report (`markdown.context`), autoescaped; inline
CSS, no script, and a Content-Security-Policy that forbids every request, so
the file opens, prints and mails without a network. A large fleet's rack table
shows the fullest racks (RACK_ROWS) and counts the rest.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from checker.core.findings import CATEGORIES, SEVERITY_RANK
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.markdown import EntityStatus, context
from checker.render.svg import elevation, load_bars, timeline, unmounted
from checker.render.templating import html_environment

RACK_ROWS = 200  # racks in the HTML rack table and its bar charts; the rest are counted
ELEVATIONS = 48  # rack elevations drawn: the most used racks
TIMELINE = 40  # support contracts and waivers on the timeline: the soonest to end
_WAIVER_STATE = {"active": "ok", "expiring": "warning", "expired": "error", "unused": "info"}


def _day(value: Any) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        return None


def _timeline(data: Mapping[str, Any], as_of: dt.date) -> Any:
    """Support contracts (grouped as the support table groups them) and waivers, by end date."""
    items: list[tuple[str, dt.date, str]] = []
    for s in data["support"]:
        until = _day(s["support.until"])
        if until is not None:
            what = f"support {s['support.vendor'] or '?'} {s['support.level'] or ''}".strip()
            items.append((f"{what}, {s['servers']} servers", until, s["verdict"]))
    for w in data["waivers"]:
        items.append((f"waiver {w.rule} on {w.entity}", w.expires, _WAIVER_STATE[w.state]))
    items.sort(key=lambda item: (item[1], item[0]))
    marks = [("rollout", d) for d in (_day(r) for r in data["key"]["rollout"]) if d is not None]
    if not items:
        return None
    return timeline(items[:TIMELINE], as_of, marks, "Support and waivers: from the audit day to their end")


def _fullest(racks: Sequence[Mapping[str, Any]], limit: int) -> list[Mapping[str, Any]]:
    """The `limit` most used racks (after a failure), in their inventory order."""
    if len(racks) <= limit:
        return list(racks)
    ranked = sorted(range(len(racks)), key=lambda i: (-(racks[i].get("utilization_pct") or 0.0), i))
    return [racks[i] for i in sorted(ranked[:limit])]


_CATEGORIES = tuple(CATEGORIES)
_RANK = {"ok": -1, **SEVERITY_RANK}


def html_context(result: AuditResult, ctx: RenderContext) -> dict[str, Any]:
    data = context(result, ctx)
    rows = data["rack_rows"]
    data["rack_table"] = _fullest(rows, RACK_ROWS)
    data["racks_left_out"] = len(rows) - len(data["rack_table"])
    status = EntityStatus()
    for f in result.detected:
        status.add(f)
    by_rack: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for s in data["facts"].get("server", []):
        by_rack[(s.get("facility", ""), s.get("rack", ""))].append(s)

    def worst(entity: str) -> str:
        return max((status.of([entity], c) for c in _CATEGORIES), key=_RANK.__getitem__)

    drawn = _fullest(rows, ELEVATIONS)
    data["elevations"] = [
        {
            "rack": r,
            "svg": elevation(r, by_rack.get((r.get("facility", ""), r.get("name", "")), []), worst),
            "unmounted": unmounted(by_rack.get((r.get("facility", ""), r.get("name", "")), [])),
        }
        for r in drawn
    ]
    data["elevations_left_out"] = len(rows) - len(drawn)
    table = data["rack_table"]
    data["power_bars"] = load_bars(
        table, "utilization_pct", "normal_side_load_kw",
        "Rack load after a failure, % of the capacity left (inner bar: each side with all up)",
    )
    data["timeline"] = _timeline(data, result.as_of)
    data["cooling_bars"] = load_bars(table, "cooling_utilization_pct", None, "Rack heat, % of its cooling")
    return data


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return html_environment().get_template("report.html.j2").render(html_context(result, ctx))
