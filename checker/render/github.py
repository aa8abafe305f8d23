"""GitHub Actions workflow commands: an annotation on the exact line of the PR.

https://docs.github.com/actions/reference/workflow-commands-for-github-actions
Values are escaped as the Actions toolkit does (toolkit/packages/core
command.ts): `%`, CR and LF everywhere, and `:` and `,` in properties, so a
message can neither end the command early nor forge another one.
"""

from __future__ import annotations

from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.shown import shown
from checker.render.text import left_out_lines, summary_line

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    # A waived finding is shown, quietly: it no longer blocks the merge.
    command = "notice" if f.waived else COMMANDS[f.severity]
    title = f"{f.rule} (waived)" if f.waived else f.rule
    props = f"file={_prop(f.file)},line={f.line},col={f.column},title={_prop(title)}"
    return f"::{command} {props}::{_data(f.message)}"


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    view = shown(result, ctx.max_per_rule)
    lines = [annotation(f) for f in view.findings]
    lines += left_out_lines(view.left_out)
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
