"""What a format people read shows of the findings: the first N of each rule.

A million errors make a readable log, not 150 MB; but the cap is a display
setting (RenderContext.max_per_rule), never a decision: the verdict, the
summary, JSON, SARIF, JUnit and `checker diff` see every finding, and each
capped format says how many it left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.render.groups import shown_groups


@dataclass(frozen=True)
class Shown:
    findings: tuple[Finding, ...]  # in output order, with their messages
    left_out: dict[str, int]  # rule id -> how many of its findings are not shown (rules that lost some)


def shown(result: AuditResult, limit: int) -> Shown:
    """The first `limit` findings of each rule, in output order (0: every one):
    the cap of render/groups.py with a group per finding (one cap, one count of
    what it left out, for the formats that show each finding on its own line)."""
    view = shown_groups(result, limit, alike=False)
    return Shown(tuple(g.first for g in view.groups), view.left_out)
