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


_SCALARS = (str, int, float, bool, type(None))


def _key(key: Any) -> str:
    # As json.dumps writes a key: 1 -> "1", True -> "true", None -> "null".
    return json.dumps(key if isinstance(key, str) else json.dumps(key), ensure_ascii=False)


def _indented(value: Any, depth: int) -> str:
    """Exactly `json.dumps(value, indent=2, ensure_ascii=False)` at `depth`, faster.

    With `indent`, json.dumps runs its pure-Python encoder (most of the JSON
    stage on a large fleet: 17,500 capacity rows). A mapping or list of
    scalars is written by the C encoder instead, its item separator carrying
    the newline and indentation `indent=2` would write."""
    pad = "\n" + "  " * (depth + 1)
    if isinstance(value, dict) and value:
        if all(isinstance(v, _SCALARS) for v in value.values()):
            flat = json.dumps(value, ensure_ascii=False, separators=("," + pad, ": "))
            return "{" + pad + flat[1:-1] + pad[:-2] + "}"
        items = (f"{_key(k)}: {_indented(v, depth + 1)}" for k, v in value.items())
        return "{" + pad + ("," + pad).join(items) + pad[:-2] + "}"
    if isinstance(value, list) and value:
        if all(isinstance(v, _SCALARS) for v in value):
            flat = json.dumps(value, ensure_ascii=False, separators=("," + pad, ": "))
            return "[" + pad + flat[1:-1] + pad[:-2] + "]"
        return "[" + pad + ("," + pad).join(_indented(v, depth + 1) for v in value) + pad[:-2] + "]"
    return json.dumps(value, ensure_ascii=False)


def dumps(doc: dict[str, Any]) -> str:
    """Indented, non-ASCII kept, and no raw control character even where JSON allows one."""
    return escape_json(_indented(doc, 0)) + "\n"


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return dumps(document(result))
