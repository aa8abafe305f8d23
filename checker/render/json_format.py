"""JSON per the contract (DESIGN.md "Findings and JSON output"); stable bytes."""

from __future__ import annotations

import json

from checker.audit import AuditResult
from checker.render import formatter
from checker.terminal import escape_json


@formatter("json")
def render(result: AuditResult) -> str:
    return escape_json(json.dumps(result.to_json(), indent=2, ensure_ascii=False)) + "\n"
