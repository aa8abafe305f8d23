"""Plain text: one `file:line:column: severity rule message` line per finding,
then the findings counted by rule, then the one-line verdict.

24 identical support warnings should not bury one waived power error: the
summary by rule shows both at a glance. Colour only marks severities, and only
for a person at a terminal (RenderContext.color; never with NO_COLOR).
"""

from __future__ import annotations

from collections import Counter

from checker.core.findings import SEVERITY_RANK, Finding
from checker.core.terminal import escape
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.groups import NAMES_SHOWN, FindingGroup, name_of, shown_groups

# SGR colours (ECMA-48): red, yellow, cyan; bold for the verdict.
_COLOURS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m", "fail": "\x1b[1;31m",
            "pass": "\x1b[1;32m"}
_RESET = "\x1b[0m"


def _paint(word: str, ctx: RenderContext) -> str:
    return f"{_COLOURS[word]}{word}{_RESET}" if ctx.color and word in _COLOURS else word


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def summary_line(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    s = result.summary
    counts = ", ".join(
        (
            _plural(s["error"], "error"),
            _plural(s["warning"], "warning"),
            _plural(s["info"], "info"),
            f"{s['waived']} waived",
        )
    )
    return f"checker: {counts}: {_paint(result.verdict, ctx)}"


def finding_line(f: Finding, ctx: RenderContext = PLAIN) -> str:
    # Each field escaped on its own: a newline in a file name must not start a line.
    where = f"{escape(f.file)}:{f.line}:{f.column}"
    text = f"{where}: {_paint(f.severity, ctx)} {escape(f.rule)} {escape(f.message)}"
    return text + (" [waived]" if f.waived else "")


def group_line(g: FindingGroup, ctx: RenderContext = PLAIN) -> str:
    """The first finding's line, then the alike others by name, each with its
    own line where that is not the first's (an editor can still go there):
    `... (and 12 more alike: sh1-b01-inf2, sh1-b02-inf1 (line 64), ... and 2 more)`."""
    line = finding_line(g.first, ctx)
    if not g.others:
        return line
    others, unlisted = g.listed(0 if ctx.max_per_rule == 0 else NAMES_SHOWN)
    listed = ", ".join(escape(name_of(o)) + _place(o, g.first) for o in others)
    more = f" and {unlisted} more" if unlisted else ""
    return f"{line} (and {len(g.others)} more alike: {listed}{more})"


def _place(f: Finding, first: Finding) -> str:
    if f.file != first.file:
        return f" ({escape(f.file)}:{f.line})"
    return f" (line {f.line})" if f.line != first.line else ""


def left_out_lines(left_out: dict[str, int]) -> list[str]:
    return [
        f"checker: {n} more {escape(rule)} {'finding' if n == 1 else 'findings'} not shown"
        " (--max-per-rule 0 shows all)"
        for rule, n in left_out.items()
    ]


def by_rule_lines(result: AuditResult, ctx: RenderContext = PLAIN) -> list[str]:
    """`  24 warning  support.level-24x7`, most severe first; counts include findings not shown."""
    total = Counter(f.rule for f in result.detected)
    waived = Counter(f.rule for f in result.detected if f.waived)
    severity = {f.rule: f.severity for f in result.detected}
    order = sorted(total, key=lambda r: (-SEVERITY_RANK[severity[r]], -total[r], r))
    width = max(len(str(n)) for n in total.values())
    return [
        f"  {total[r]:>{width}} {_paint(severity[r], ctx)}{' ' * (8 - len(severity[r]))}{escape(r)}"
        + (f" ({waived[r]} waived)" if waived[r] else "")
        for r in order
    ]


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    if ctx.summary_only:  # --quiet
        return summary_line(result, ctx) + "\n"
    view = shown_groups(result, ctx.max_per_rule, alike=ctx.group)
    lines = [group_line(g, ctx) for g in view.groups]
    lines += left_out_lines(view.left_out)
    if result.detected:
        lines += ["", "findings by rule:", *by_rule_lines(result, ctx)]
    lines.append(summary_line(result, ctx))
    return "\n".join(lines) + "\n"
