"""One rule-metadata type for YAML rules and built-in checks alike.

`rules list/show`, `explain`, the rule reference, SARIF's `tool.driver.rules`
and JUnit's test cases all read `RuleMeta`; none of them needs to know whether
a rule is a `when` expression or a check written in Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from checker.core.findings import Severity

BUILT_IN = "built in"


@dataclass(frozen=True, slots=True)
class RuleMeta:
    id: str
    title: str
    category: str
    severity: Severity
    remediation: str
    rationale: str = ""
    references: tuple[str, ...] = ()
    # A YAML rule's fact kind and expression; None for a built-in check.
    on: str | None = None
    when: str | None = None
    # Where the rule is defined ("rules/power.yaml:4"), or BUILT_IN.
    origin: str = BUILT_IN
    fail_examples: tuple[Mapping[str, Any], ...] = ()
    pass_examples: tuple[Mapping[str, Any], ...] = ()

    @property
    def builtin(self) -> bool:
        return self.on is None
