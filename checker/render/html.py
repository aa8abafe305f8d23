"""The readiness report as one self-contained HTML file (templates/report.html.j2).

The same data as the Markdown report (`markdown.context`), autoescaped, with
the pictures inline (render/pictures.py); inline CSS, no script, and a
Content-Security-Policy that forbids every request, so the file opens, prints
and mails without a network. A large fleet's rack table shows the most used
racks (pictures.RACK_ROWS) and counts the rest.
"""

from __future__ import annotations

from typing import Any

from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.markdown import context
from checker.render.pictures import pictures
from checker.render.templating import html_environment


def html_context(result: AuditResult, ctx: RenderContext) -> dict[str, Any]:
    data = context(result, ctx)
    data.update(pictures(result, data))
    return data


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return html_environment().get_template("report.html.j2").render(html_context(result, ctx))
