"""Decide: severity overrides, threshold -> verdict and exit code.

Detection produced findings; this stage only re-labels them (severity; waivers
are checker/decide/waivers.py), never drops one (what a format shows of them
is the format's business: checker/render/shown.py) and never re-reads files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checker.core.findings import SEVERITY_RANK, Finding, Severity
from checker.evaluate.rulebook import matches


def override_severity(
    findings: Sequence[Finding], overrides: Sequence[tuple[str, Severity]]
) -> list[Finding]:
    """Schema findings stay errors: invalid input is never downgraded."""
    if not overrides:
        return list(findings)
    # The first override whose glob matches a rule, worked out once per rule (75,000 findings, ~150 rules).
    by_rule: dict[str, Severity | None] = {}
    for rule in {f.rule for f in findings}:
        by_rule[rule] = next((sev for glob, sev in overrides if matches(rule, [glob])), None)
    out = []
    for f in findings:
        new = by_rule[f.rule]
        out.append(f.with_severity(new) if new and f.category != "schema" else f)
    return out


@dataclass(frozen=True)
class Verdict:
    verdict: str
    exit_code: int
    counts: dict[str, int]


def verdict(findings: Sequence[Finding], fail_on: Severity) -> Verdict:
    counts = {"error": 0, "warning": 0, "info": 0, "waived": 0}
    for f in findings:
        counts["waived" if f.waived else f.severity] += 1
    threshold = SEVERITY_RANK[fail_on]
    failing = any(not f.waived and SEVERITY_RANK[f.severity] >= threshold for f in findings)
    invalid = any(f.category == "schema" for f in findings)
    code = 2 if invalid else 1 if failing else 0
    return Verdict("fail" if failing else "pass", code, counts)
