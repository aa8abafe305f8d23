"""Plain text: one `file:line:column: severity rule message` line per finding."""

from __future__ import annotations

from checker.audit import AuditResult
from checker.findings import Finding
from checker.render import formatter
from checker.terminal import escape


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def _line(f: Finding) -> str:
    # Each field escaped on its own: a newline in a file name must not start a line.
    text = f"{escape(f.file)}:{f.line}:{f.column}: {f.severity} {escape(f.rule)} {escape(f.message)}"
    return text + (" [waived]" if f.waived else "")


@formatter("text")
def render(result: AuditResult) -> str:
    lines = [_line(f) for f in result.findings]
    s = result.summary
    counts = ", ".join(
        (
            _plural(s["error"], "error"),
            _plural(s["warning"], "warning"),
            _plural(s["info"], "info"),
            f"{s['waived']} waived",
        )
    )
    lines += [
        f"checker: {n} more {escape(rule)} {'finding' if n == 1 else 'findings'} not shown"
        " (--max-per-rule 0 shows all)"
        for rule, n in result.truncated.items()
    ]
    lines.append(f"checker: {counts}: {result.verdict}")
    return "\n".join(lines) + "\n"
