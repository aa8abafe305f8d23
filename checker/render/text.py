"""Plain text: one `file:line:column: severity rule message` line per finding."""

from __future__ import annotations

from checker.audit import AuditResult
from checker.findings import Finding
from checker.render.context import PLAIN, RenderContext
from checker.terminal import escape


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def summary_line(result: AuditResult) -> str:
    s = result.summary
    counts = ", ".join(
        (
            _plural(s["error"], "error"),
            _plural(s["warning"], "warning"),
            _plural(s["info"], "info"),
            f"{s['waived']} waived",
        )
    )
    return f"checker: {counts}: {result.verdict}"


def finding_line(f: Finding) -> str:
    # Each field escaped on its own: a newline in a file name must not start a line.
    text = f"{escape(f.file)}:{f.line}:{f.column}: {f.severity} {escape(f.rule)} {escape(f.message)}"
    return text + (" [waived]" if f.waived else "")


def truncation_lines(result: AuditResult) -> list[str]:
    return [
        f"checker: {n} more {escape(rule)} {'finding' if n == 1 else 'findings'} not shown"
        " (--max-per-rule 0 shows all)"
        for rule, n in result.truncated.items()
    ]


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    lines = [finding_line(f) for f in result.findings]
    lines += truncation_lines(result)
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
