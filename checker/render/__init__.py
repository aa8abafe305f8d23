"""The formats: one explicit table, name -> formatter; formatters only read an AuditResult.

Adding a format is one module with a `render(result) -> str` and one row
below; `--format` help and the unknown-name message are built from this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from checker.core.suggest import lookup
from checker.decide.result import AuditResult
from checker.render import github, json_format, junit, markdown, sarif, text
from checker.render.context import RenderContext

Formatter = Callable[[AuditResult, RenderContext], str]


@dataclass(frozen=True)
class Format:
    name: str
    render: Formatter
    summary: str


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("text", text.render, "file:line:col: severity rule message, then a summary (default)"),
        Format("json", json_format.render, "the JSON contract, byte-stable"),
        Format("markdown", markdown.render, "the rollout readiness report"),
        Format("sarif", sarif.render, "SARIF 2.1.0 for code scanning"),
        Format("junit", junit.render, "JUnit XML: a test case per rule and entity checked"),
        Format("github", github.render, "GitHub Actions workflow-command annotations"),
    )
}


def get_formatter(name: str) -> Formatter:
    return lookup(FORMATS, name, "format").render


def formats_help() -> str:
    return "; ".join(f"{f.name}: {f.summary}" for f in FORMATS.values())
