"""Findings: small immutable records, produced by detection, read by everyone after."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
# Rank for thresholds: a finding fails the run when its rank >= the threshold's.
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}

Category = Literal[
    "schema",
    "power",
    "cooling",
    "space",
    "weight",
    "pue",
    "compatibility",
    "support",
    "workload-fit",
    "waiver",
    "config",
]
CATEGORIES: tuple[str, ...] = get_args(Category)


@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int
    column: int


# Output order: a finding's file, line, column, rule, entity and message, read at
# C speed (Finding.sort_key; sorts of many findings use it as their key).
by_place = operator.attrgetter("file", "line", "column", "rule", "entity", "message")


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: Severity
    category: str
    entity: str
    message: str
    remediation: str
    file: str
    line: int
    column: int
    waived: bool = False
    # A rule finding's fact (its index among the audit's facts), whose values
    # render its message when a format shows it (evaluate.engine.Messages);
    # -1 for the findings of built-in checks, which carry their message.
    fact: int = field(default=-1, compare=False, repr=False)

    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        key: tuple[str, int, int, str, str, str] = by_place(self)
        return key

    def with_waived(self) -> Finding:
        return replace(self, waived=True)

    def with_severity(self, severity: Severity) -> Finding:
        return replace(self, severity=severity)


def entity_name(entity: str) -> str:
    """`sh1/A01` of `rack/sh1/A01`: the name a message calls its entity by."""
    return entity.partition("/")[2]


def located(
    rule: str,
    category: str,
    loc: Location,
    message: str,
    *,
    severity: Severity = "error",
    entity: str = "",
    remediation: str = "",
) -> Finding:
    """A finding at a known place; the common shape of input and waiver findings."""
    return Finding(rule, severity, category, entity, message, remediation, loc.file, loc.line, loc.column)
