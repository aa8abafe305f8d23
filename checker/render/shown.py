"""What a format people read shows of the findings: the first N of each rule.

A million errors make a readable log, not 150 MB; but the cap is a display
setting (RenderContext.max_per_rule), never a decision: the verdict, the
summary, JSON, SARIF, JUnit and `checker diff` see every finding, and each
capped format says how many it left out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from checker.core.findings import Finding
from checker.decide.result import AuditResult


@dataclass(frozen=True)
class Shown:
    findings: tuple[Finding, ...]  # in output order, with their messages
    left_out: dict[str, int]  # rule id -> how many of its findings are not shown (rules that lost some)



def shown(result: AuditResult, limit: int) -> Shown:
    """The first `limit` findings of each rule, in output order (0: every one)."""
    if limit <= 0:
        return Shown(result.findings, {})
    seen: Counter[str] = Counter()
    kept = []
    for f in result.detected:
        seen[f.rule] += 1
        if seen[f.rule] <= limit:
            kept.append(f)
    left_out = {rule: n - limit for rule, n in sorted(seen.items()) if n > limit}
    return Shown(result.with_messages(kept), left_out)
