"""Plain text: one `file:line:column: severity rule message` line per finding."""

from __future__ import annotations

from checker.audit import AuditResult
from checker.findings import Finding
from checker.render.context import PLAIN, RenderContext


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
    waived = " [waived]" if f.waived else ""
    return f"{f.file}:{f.line}:{f.column}: {f.severity} {f.rule} {f.message}{waived}"


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    lines = [finding_line(f) for f in result.findings]
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
