"""SARIF 2.1.0 (OASIS), the format code-scanning services read.

Spec: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
Every rule that ran is a `reportingDescriptor` in `tool.driver.rules` (so a
service can show the rule's help even for a clean run); every finding is a
`result` with a physical location and region. Waived findings are results with
an external suppression (§3.35), so they stay visible but do not alert.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from checker.core.findings import Finding
from checker.core.rulemeta import RuleMeta
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.json_format import dumps

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _name(rule_id: str) -> str:
    """`power.rack-capacity` -> `PowerRackCapacity` (§3.49.7: a readable identifier)."""
    return "".join(part.capitalize() for part in rule_id.replace("-", ".").split("."))


def _descriptor(m: RuleMeta) -> dict[str, Any]:
    full = m.rationale or m.title
    help_md = f"{full}\n\n**Remediation:** {m.remediation}"
    if m.references:
        help_md += "\n\n**References:** " + "; ".join(m.references)
    return {
        "id": m.id,
        "name": _name(m.id),
        "shortDescription": {"text": m.title},
        "fullDescription": {"text": full},
        "help": {"text": f"{full} Remediation: {m.remediation}", "markdown": help_md},
        "defaultConfiguration": {"level": LEVELS[m.severity]},
        "properties": {"category": m.category, "tags": [m.category]},
    }


def _uri(file: str) -> str:
    path = PurePosixPath(file)
    return path.as_uri() if path.is_absolute() else quote(file, errors="surrogateescape")


def _result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.file)},
                    "region": {"startLine": f.line, "startColumn": f.column},
                },
                **({"logicalLocations": [{"fullyQualifiedName": f.entity}]} if f.entity else {}),
            }
        ],
        # Lines move; a finding is the same finding while rule and entity are.
        "partialFingerprints": {"checker/v1": f"{f.rule}:{f.entity or f.file}"},
    }
    if f.waived:
        out["suppressions"] = [{"kind": "external", "justification": "waived by a Waivers entry"}]
    return out


def document(result: AuditResult, ctx: RenderContext = PLAIN) -> dict[str, Any]:
    rules = list(result.rules)
    index = {m.id: i for i, m in enumerate(rules)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "checker",
                        "version": result.version,
                        "semanticVersion": result.version,
                        "rules": [_descriptor(m) for m in rules],
                    }
                },
                "results": [_result(f, index) for f in result.findings],
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return dumps(document(result, ctx))
