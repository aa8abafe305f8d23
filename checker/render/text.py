"""Plain text: one `file:line:column: severity rule message` line per finding."""

from __future__ import annotations

from checker.audit import AuditResult
from checker.render import formatter


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


@formatter("text")
def render(result: AuditResult) -> str:
    lines = [
        f"{f.file}:{f.line}:{f.column}: {f.severity} {f.rule} {f.message}" + (" [waived]" if f.waived else "")
        for f in result.findings
    ]
    s = result.summary
    counts = ", ".join(
        (
            _plural(s["error"], "error"),
            _plural(s["warning"], "warning"),
            _plural(s["info"], "info"),
            f"{s['waived']} waived",
        )
    )
    lines.append(f"checker: {counts}: {result.verdict}")
    return "\n".join(lines) + "\n"
