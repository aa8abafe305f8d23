"""SARIF 2.1.0 (OASIS), the format code-scanning services read, within GitHub's limits.

Spec: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
Every rule that ran is a `reportingDescriptor` in `tool.driver.rules` (so a
service can show the rule's help even for a clean run); every open finding is
a `result` with a physical location, a region and a fingerprint of its rule
and entity (render/fingerprint.py), so two findings on one line stay two
alerts and a finding keeps its alert when lines move.

GitHub code scanning is what reads it (the Action uploads it):
- It ignores `suppressions` (a suppressed result is an open alert), and §3.27.23
  has a run's results carry them all or none: a waived finding is left out,
  and the run says how many were (a tool execution notification per rule).
- It rejects a run of more than 25,000 results
  (https://docs.github.com/code-security/code-scanning/troubleshooting-sarif-uploads/results-exceed-limit):
  the most severe 25,000 are kept, in output order, and a notification per
  rule counts the findings left out. `--format json` has every one.
- `automationDetails.id` names the audited paths, so two uses of the Action
  on different inventories are two analyses, not one replacing the other (the
  upload keeps an id the SARIF brings: github/codeql-action upload-lib.ts,
  populateRunAutomationDetails).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from checker.core.findings import SEVERITY_RANK, Finding
from checker.core.rulemeta import RuleMeta
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.fingerprint import fingerprints
from checker.render.json_format import dumps

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
MAX_RESULTS = 25_000  # a run GitHub code scanning accepts (module docstring)
# The key GitHub matches results on across runs (module docstring of fingerprint.py).
FINGERPRINT_KEY = "primaryLocationLineHash"


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


def _result(f: Finding, fingerprint: str, index: dict[str, int]) -> dict[str, Any]:
    return {
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
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }


def kept(findings: Sequence[Finding], limit: int) -> list[int]:
    """The indices of the open findings that become results: the `limit` most
    severe (ties in output order), in output order."""
    open_ = [i for i, f in enumerate(findings) if not f.waived]
    ranked = sorted(open_, key=lambda i: -SEVERITY_RANK[findings[i].severity])
    return sorted(ranked[:limit])


def _plural(n: int, one: str) -> str:
    return f"{n:,} {one}" if n == 1 else f"{n:,} {one}s"


def _notifications(
    findings: Sequence[Finding], results: Sequence[int], index: dict[str, int]
) -> list[dict[str, Any]]:
    """What the run leaves out, a notification per rule: its waived findings,
    and the open ones past GitHub's limit."""
    chosen = set(results)
    waived: Counter[str] = Counter(f.rule for f in findings if f.waived)
    cut: Counter[str] = Counter(
        f.rule for i, f in enumerate(findings) if not f.waived and i not in chosen
    )
    out = []
    for rule in sorted(cut):
        out.append({
            "descriptor": {"id": "checker.results-limit"},
            "associatedRule": {"id": rule, "index": index[rule]},
            "level": "warning",
            "message": {
                "text": f"{_plural(cut[rule], 'finding')} of {rule} left out: GitHub code scanning takes "
                f"at most {MAX_RESULTS:,} results a run, the most severe are kept; "
                "`--format json` lists every finding"
            },
        })
    for rule in sorted(waived):
        out.append({
            "descriptor": {"id": "checker.waived"},
            "associatedRule": {"id": rule, "index": index[rule]},
            "level": "note",
            "message": {
                "text": f"{_plural(waived[rule], 'waived finding')} of {rule} left out: GitHub code scanning "
                "ignores SARIF suppressions and would show "
                + ("it as an open alert" if waived[rule] == 1 else "them as open alerts")
            },
        })
    return out


def automation_id(paths: Sequence[str]) -> str:
    """`checker/inventories/`: the category of the analysis (the part before the
    last `/`), one per set of audited paths."""
    return f"checker/{'+'.join(paths)}/"


def document(result: AuditResult, ctx: RenderContext = PLAIN) -> dict[str, Any]:
    rules = list(result.rules)
    index = {m.id: i for i, m in enumerate(rules)}
    detected = result.detected
    results = kept(detected, MAX_RESULTS)
    prints = fingerprints(detected)
    shown = result.with_messages(detected[i] for i in results)
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
                "automationDetails": {"id": automation_id(result.paths)},
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": _notifications(detected, results, index),
                    }
                ],
                "results": [_result(f, prints[i], index) for f, i in zip(shown, results, strict=True)],
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return dumps(document(result, ctx))
