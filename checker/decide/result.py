"""What an audit decided: the record every format reads."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from checker import __version__
from checker.core.findings import Finding
from checker.core.rulemeta import RuleMeta
from checker.derive.capacity import Capacity
from checker.derive.facts import Fact


@dataclass(frozen=True)
class AuditResult:
    """Everything formatters may read; they never re-read files.

    `rules` are the rules and checks that ran (SARIF's driver rules, JUnit's
    test cases); `facts` are the entities the rules looked at, with every
    derived figure (empty when input errors kept the rules from running).
    """

    as_of: dt.date
    verdict: str
    exit_code: int
    summary: dict[str, int]
    findings: tuple[Finding, ...]
    capacity: Capacity | None
    rules: tuple[RuleMeta, ...] = ()
    facts: tuple[Fact, ...] = ()
    version: str = __version__
    # Findings left out per rule (Settings.max_per_rule); the summary counts them.
    truncated: dict[str, int] = field(default_factory=dict)

    @property
    def rules_evaluated(self) -> bool:
        return self.capacity is not None
