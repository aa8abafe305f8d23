"""The readiness report's pictures, for the HTML (inline) and the Markdown (SVG files
beside it): which racks are drawn, and the SVG of each picture (render/svg.py).

A large fleet draws its most used racks: RACK_ROWS in the load bars (and the
HTML rack table), ELEVATIONS elevations, TIMELINE support contracts and
waivers; the rest are counted.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from checker.core.findings import CATEGORIES, SEVERITY_RANK
from checker.decide.result import AuditResult
from checker.render.context import RenderContext
from checker.render.markdown import EntityStatus, context
from checker.render.svg import elevation, load_bars, timeline, unmounted
from checker.render.templating import environment

RACK_ROWS = 200  # racks in the HTML rack table and the bar charts; the rest are counted
ELEVATIONS = 48  # rack elevations drawn: the most used racks
TIMELINE = 40  # support contracts and waivers on the timeline: the soonest to end
_WAIVER_STATE = {"active": "ok", "expiring": "warning", "expired": "error", "unused": "info"}
_RANK = {"ok": -1, **SEVERITY_RANK}
POWER_CAPTION = "Rack load after a failure, % of the capacity left (inner bar: each side with all up)"
COOLING_CAPTION = "Rack heat, % of its cooling"
TIMELINE_CAPTION = "Support and waivers: from the audit day to their end"


def fullest(racks: Sequence[Mapping[str, Any]], limit: int) -> list[Mapping[str, Any]]:
    """The `limit` most used racks (after a failure), in their inventory order."""
    if len(racks) <= limit:
        return list(racks)
    ranked = sorted(range(len(racks)), key=lambda i: (-(racks[i].get("utilization_pct") or 0.0), i))
    return [racks[i] for i in sorted(ranked[:limit])]


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
    return timeline(items[:TIMELINE], as_of, marks, TIMELINE_CAPTION)


def pictures(result: AuditResult, data: Mapping[str, Any]) -> dict[str, Any]:
    """The pictures of a report context (`markdown.context`): rack_table (the racks
    the bars show), elevations ({rack, svg, unmounted}), power_bars, cooling_bars
    (None without cooling figures), timeline (None without dates), and how many
    racks each leaves out."""
    rows = data["rack_rows"]
    table = fullest(rows, RACK_ROWS)
    drawn = fullest(rows, ELEVATIONS)
    status = EntityStatus()
    for f in result.detected:
        status.add(f)
    by_rack: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for s in data["facts"].get("server", []):
        by_rack[(s.get("facility", ""), s.get("rack", ""))].append(s)

    def worst(entity: str) -> str:
        return max((status.of([entity], c) for c in CATEGORIES), key=_RANK.__getitem__)

    elevations = []
    for r in drawn:
        mine = by_rack.get((r.get("facility", ""), r.get("name", "")), [])
        elevations.append({"rack": r, "svg": elevation(r, mine, worst), "unmounted": unmounted(mine)})
    cooled = [r for r in table if r.get("cooling_utilization_pct") is not None]
    power = load_bars(table, "utilization_pct", "normal_side_load_kw", POWER_CAPTION) if table else None
    cooling = load_bars(cooled, "cooling_utilization_pct", None, COOLING_CAPTION) if cooled else None
    return {
        "rack_table": table,
        "racks_left_out": len(rows) - len(table),
        "elevations": elevations,
        "elevations_left_out": len(rows) - len(drawn),
        "power_bars": power,
        "cooling_bars": cooling,
        "timeline": _timeline(data, result.as_of),
    }


PICTURE_FILES = (("power_bars", "load.svg"), ("cooling_bars", "cooling.svg"), ("timeline", "timeline.svg"))


def markdown_with_pictures(
    result: AuditResult, ctx: RenderContext, folder: str
) -> tuple[str, dict[str, str]]:
    """The Markdown report that shows its pictures as SVG files in `folder` (a path
    relative to the report), and those files: name -> SVG text."""
    data = context(result, ctx)
    drawn = pictures(result, data)
    files: dict[str, str] = {}
    links: dict[str, Any] = {"elevations": [], **{key: None for key, _ in PICTURE_FILES}}
    base = quote(folder.rstrip("/")) + "/"
    for key, name in PICTURE_FILES:
        if drawn[key] is not None:
            files[name] = str(drawn[key]) + "\n"
            links[key] = base + name
    for i, e in enumerate(drawn["elevations"], 1):
        name = f"rack-{i:03d}.svg"
        files[name] = str(e["svg"]) + "\n"
        links["elevations"].append({"rack": e["rack"], "src": base + name, "unmounted": e["unmounted"]})
    links["elevations_left_out"] = drawn["elevations_left_out"]
    links["bars_left_out"] = drawn["racks_left_out"]
    data["pictures"] = links
    return environment().get_template("report.md.j2").render(data), files
