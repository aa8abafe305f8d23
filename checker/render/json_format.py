"""JSON: the machine contract (docs/architecture.md "JSON output"); stable bytes.

Fields are only ever added, never renamed or removed: CI scripts read them.
"""

from __future__ import annotations

import json
from typing import Any

from checker.audit import AuditResult
from checker.findings import Finding
from checker.render.context import PLAIN, RenderContext
from checker.terminal import escape_json


def finding_json(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity,
        "category": f.category,
        "entity": f.entity,
        "message": f.message,
        "remediation": f.remediation,
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "waived": f.waived,
    }


def document(result: AuditResult) -> dict[str, Any]:
    # `truncated` (findings left out per rule, --max-per-rule) appears only when some were.
    extra = {"truncated": result.truncated} if result.truncated else {}
    return {
        "tool": "checker",
        "version": result.version,
        "as_of": result.as_of.isoformat(),
        "verdict": result.verdict,
        "summary": result.summary,
        "findings": [finding_json(f) for f in result.findings],
        "capacity": result.capacity.to_json() if result.capacity else {"facilities": [], "racks": []},
        **extra,
    }


def dumps(doc: dict[str, Any]) -> str:
    """Indented, non-ASCII kept, and no raw control character even where JSON allows one."""
    return escape_json(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return dumps(document(result))
