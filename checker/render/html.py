"""The readiness report as one self-contained HTML file (templates/report.html.j2).

The same data as the Markdown report (`markdown.context`), autoescaped; inline
CSS, no script, and a Content-Security-Policy that forbids every request, so
the file opens, prints and mails without a network. A large fleet's rack table
shows the fullest racks (RACK_ROWS) and counts the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.markdown import context
from checker.render.templating import html_environment

RACK_ROWS = 200  # racks in the HTML rack table; the rest are counted


def _fullest(racks: Sequence[Mapping[str, Any]], limit: int) -> list[Mapping[str, Any]]:
    """The `limit` most used racks (after a failure), in their inventory order."""
    if len(racks) <= limit:
        return list(racks)
    ranked = sorted(range(len(racks)), key=lambda i: (-(racks[i].get("utilization_pct") or 0.0), i))
    return [racks[i] for i in sorted(ranked[:limit])]


def html_context(result: AuditResult, ctx: RenderContext) -> dict[str, Any]:
    data = context(result, ctx)
    rows = data["rack_rows"]
    data["rack_table"] = _fullest(rows, RACK_ROWS)
    data["racks_left_out"] = len(rows) - len(data["rack_table"])
    return data


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return html_environment().get_template("report.html.j2").render(html_context(result, ctx))
