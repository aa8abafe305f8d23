"""What a change does: two audits compared. Findings are matched by rule and
entity (lines move); capacity by entity id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from checker.core.findings import SEVERITY_RANK, Finding
from checker.decide.result import AuditResult

FindingKey = tuple[str, str, str]


@dataclass(frozen=True)
class Delta:
    """A rack's or facility's load and headroom before and after the change."""

    entity: str
    load_before: float
    load_after: float
    headroom_before: float | None
    headroom_after: float | None

    @property
    def load_change(self) -> float:
        return round(self.load_after - self.load_before, 3)


@dataclass(frozen=True)
class DiffResult:
    ref: str
    commit: str
    base: AuditResult
    head: AuditResult
    new: tuple[Finding, ...]
    resolved: tuple[Finding, ...]
    deltas: tuple[Delta, ...]
    exit_code: int

    def head_with_new_only(self) -> AuditResult:
        """The head audit narrowed to new findings: what annotations and SARIF should show."""
        return replace(self.head, detected=self.new)


def key(f: Finding) -> FindingKey:
    # Schema findings have no entity: their file and message identify them.
    return (f.rule, f.entity, "") if f.entity else (f.rule, f.file, f.message)


def changed(base: AuditResult, head: AuditResult) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """The findings only the head has (new) and only the base has (resolved),
    matched over every finding, each with its message."""
    base_keys, head_keys = {key(f) for f in base.detected}, {key(f) for f in head.detected}
    new = head.with_messages(f for f in head.detected if key(f) not in base_keys)
    resolved = base.with_messages(f for f in base.detected if key(f) not in head_keys)
    return new, resolved


def _rows(result: AuditResult) -> dict[str, Mapping[str, Any]]:
    if result.capacity is None:
        return {}
    doc = result.capacity.to_json()
    return {row["entity"]: row for row in [*doc["facilities"], *doc["racks"]]}


def _figures(row: Mapping[str, Any] | None) -> tuple[float, float | None]:
    if row is None:
        return 0.0, None
    load = float(row.get("load_kw", row.get("it_load_kw", 0.0)))
    cap = row.get("capacity_kw", row.get("it_capacity_kw"))
    return load, (round(float(cap) - load, 3) if cap is not None else None)


def deltas(base: AuditResult, head: AuditResult) -> tuple[Delta, ...]:
    before, after = _rows(base), _rows(head)
    out = []
    for entity in sorted(before.keys() | after.keys()):
        (lb, hb), (la, ha) = _figures(before.get(entity)), _figures(after.get(entity))
        if (lb, hb) != (la, ha):
            out.append(Delta(entity, lb, la, hb, ha))
    return tuple(out)


def fails(findings: Iterable[Finding], threshold: str) -> bool:
    return any(not f.waived and SEVERITY_RANK[f.severity] >= SEVERITY_RANK[threshold] for f in findings)
