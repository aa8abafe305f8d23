"""What a change does: two audits compared. Findings are matched by rule and
entity (lines move); capacity by entity id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
    matched over every finding, each with its message, in output order.

    Findings that share a key (one rule on the several frameworks of one
    server, equal input errors in one file) are matched one to one, those with
    equal messages first: a second failing framework on a server is new, not
    hidden behind the first."""
    before, after = _indices(base.detected), _indices(head.detected)
    new: set[int] = set()
    resolved: set[int] = set()
    for k in after.keys() | before.keys():
        b, h = before.get(k, []), after.get(k, [])
        if len(b) == len(h) == 1:
            continue
        left_b, left_h = _unmatched(base, b, head, h)
        resolved.update(left_b)
        new.update(left_h)
    return (
        head.with_messages(f for i, f in enumerate(head.detected) if i in new),
        base.with_messages(f for i, f in enumerate(base.detected) if i in resolved),
    )


def _indices(findings: Sequence[Finding]) -> dict[FindingKey, list[int]]:
    out: dict[FindingKey, list[int]] = {}
    for i, f in enumerate(findings):
        out.setdefault(key(f), []).append(i)
    return out


def _unmatched(
    base: AuditResult, b: list[int], head: AuditResult, h: list[int]
) -> tuple[list[int], list[int]]:
    """Of findings under one key, those of each side left after pairing equal
    messages, then the rest in order: the surplus of each side."""
    if not b or not h:
        return b, h
    messages_b = [f.message for f in base.with_messages(base.detected[i] for i in b)]
    messages_h = [f.message for f in head.with_messages(head.detected[i] for i in h)]
    free_b: dict[str, list[int]] = {}
    for i, message in zip(b, messages_b, strict=True):
        free_b.setdefault(message, []).append(i)
    rest_h = []
    for i, message in zip(h, messages_h, strict=True):
        same = free_b.get(message)
        if same:
            same.pop(0)
        else:
            rest_h.append(i)
    rest_b = sorted(i for left in free_b.values() for i in left)
    paired = min(len(rest_b), len(rest_h))
    return rest_b[paired:], rest_h[paired:]


def _rows(result: AuditResult) -> dict[str, Mapping[str, Any]]:
    if result.capacity is None:
        return {}
    doc = result.capacity.to_json()
    return {row["entity"]: row for row in [*doc["facilities"], *doc["racks"]]}


def _figures(row: Mapping[str, Any] | None) -> tuple[float, float | None]:
    if row is None:
        return 0.0, None
    # A facility's load is its peak IT draw, what its UPS (it_capacity_kw) is checked on.
    load = float(row.get("load_kw", row.get("peak_it_kw", 0.0)))
    cap = row.get("capacity_kw", row.get("it_capacity_kw"))
    return load, (round(float(cap) - load, 3) if cap is not None else None)


def deltas(base: AuditResult, head: AuditResult) -> tuple[Delta, ...]:
    """Capacity changes between two valid trees. A tree with input errors has no
    capacity to compare (its figures would read as changes to or from "n/a"):
    its input errors are the diff's findings."""
    if base.exit_code == 2 or head.exit_code == 2:
        return ()
    before, after = _rows(base), _rows(head)
    out = []
    for entity in sorted(before.keys() | after.keys()):
        (lb, hb), (la, ha) = _figures(before.get(entity)), _figures(after.get(entity))
        if (lb, hb) != (la, ha):
            out.append(Delta(entity, lb, la, hb, ha))
    return tuple(out)


def fails(findings: Iterable[Finding], threshold: str) -> bool:
    return any(not f.waived and SEVERITY_RANK[f.severity] >= SEVERITY_RANK[threshold] for f in findings)
