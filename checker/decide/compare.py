"""What a change does: two audits compared. Findings are matched by rule and
entity (lines move); capacity by entity id.

A finding only the head has is new, one only the base has is resolved (the
JSON contract's `new` and `resolved`). Of those, a reviewer reads some apart:

- **worsened**: the entity had a less severe finding of the same category at
  the base, which the change resolved (`power.rack-headroom`, a warning, gave
  way to `power.rack-capacity`, an error), or the same finding was waived at
  the base and no longer is (its waiver was removed): it now blocks where it
  did not. Its earlier finding is not listed as resolved.
- **waived**: a new finding a waiver covers; it does not block, and is not
  counted as new.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from checker.core.entity import entity_id
from checker.core.findings import SEVERITY_RANK, Finding
from checker.decide.result import AuditResult

FindingKey = tuple[str, str, str]


@dataclass(frozen=True)
class Figure:
    """One capacity figure `checker diff` compares, for racks and facilities."""

    name: str  # its key in the JSON `capacity_changes`
    unit: str


# In the order the text and the comment show them.
FIGURES: tuple[Figure, ...] = (
    Figure("load_kw", "kW"),  # peak draw: a rack's load, a facility's peak IT (what its UPS carries)
    Figure("headroom_kw", "kW"),  # feed capacity (rack) or UPS capacity (facility) less that load
    Figure("heat_kw", "kW"),
    Figure("cooling_headroom_kw", "kW"),  # a rack's cooling_kw, a facility's usable cooling, less the heat
    Figure("u_used", "U"),
    Figure("u_free", "U"),
    Figure("weight_kg", "kg"),
    Figure("servers", ""),
    Figure("gpus", ""),
)
Figures = Mapping[str, "float | None"]


@dataclass(frozen=True)
class Delta:
    """A rack's or facility's figures (FIGURES) before and after the change;
    a figure it does not have is None."""

    entity: str
    before: Figures
    after: Figures

    @property
    def load_before(self) -> float:
        return self.before.get("load_kw") or 0.0

    @property
    def load_after(self) -> float:
        return self.after.get("load_kw") or 0.0

    @property
    def headroom_before(self) -> float | None:
        return self.before.get("headroom_kw")

    @property
    def headroom_after(self) -> float | None:
        return self.after.get("headroom_kw")

    @property
    def load_change(self) -> float:
        return round(self.load_after - self.load_before, 3)

    def change(self, name: str) -> float | None:
        """After less before, None when either side lacks the figure."""
        b, a = self.before.get(name), self.after.get(name)
        return None if a is None or b is None else round(a - b, 3)

    def changed(self, name: str) -> bool:
        return self.before.get(name) != self.after.get(name)


@dataclass(frozen=True)
class Worsened:
    """A new finding that replaces a less severe one of its entity (or one that was waived)."""

    finding: Finding  # at the head
    was: Finding  # at the base


def _rank(f: Finding) -> tuple[int, tuple[str, int, int, str, str, str]]:
    """Most severe first, then output order."""
    return (-SEVERITY_RANK[f.severity], f.sort_key())


def by_severity(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=_rank))


@dataclass(frozen=True)
class Sections:
    """What a reviewer reads, each most severe first: the change's new findings
    (unwaived, not worsened), worsened ones, resolved ones (not those a
    worsened finding replaced) and new waived ones."""

    new: tuple[Finding, ...]
    worsened: tuple[Worsened, ...]
    resolved: tuple[Finding, ...]
    waived: tuple[Finding, ...]


@dataclass(frozen=True)
class DiffResult:
    ref: str
    commit: str
    base: AuditResult
    head: AuditResult
    new: tuple[Finding, ...]  # every finding only the head has, waived ones too (the JSON contract)
    resolved: tuple[Finding, ...]  # every finding only the base has
    deltas: tuple[Delta, ...]
    exit_code: int
    worsened: tuple[Worsened, ...] = ()
    fail_on: str = "error"
    fail_on_new: bool = False

    @functools.cached_property
    def sections(self) -> Sections:
        worse = {id(w.finding) for w in self.worsened}
        was = {id(w.was) for w in self.worsened}
        return Sections(
            new=by_severity(f for f in self.new if not f.waived and id(f) not in worse),
            worsened=tuple(sorted(self.worsened, key=lambda w: _rank(w.finding))),
            resolved=by_severity(f for f in self.resolved if id(f) not in was),
            waived=by_severity(f for f in self.new if f.waived and id(f) not in worse),
        )

    @property
    def introduced(self) -> tuple[Finding, ...]:
        """Every finding the change brings, most severe first: new, worsened (a
        lifted waiver's too) and new waived ones."""
        s = self.sections
        return by_severity([*s.new, *(w.finding for w in s.worsened), *s.waived])

    def blocking(self) -> tuple[Finding, ...]:
        """The change's findings that fail at `fail_on`, most severe first."""
        return tuple(f for f in self.introduced if blocks(f, self.fail_on))

    def head_narrowed(self) -> AuditResult:
        """The head audit narrowed to the change's findings: what annotations and SARIF show."""
        return replace(self.head, detected=self.introduced)


def key(f: Finding) -> FindingKey:
    # Schema findings have no entity: their file and message identify them.
    return (f.rule, f.entity, "") if f.entity else (f.rule, f.file, f.message)


def changed(
    base: AuditResult, head: AuditResult
) -> tuple[tuple[Finding, ...], tuple[Finding, ...], tuple[Worsened, ...]]:
    """The findings only the head has (new) and only the base has (resolved),
    matched over every finding, each with its message, in output order; and
    the matched ones waived at the base only (their waiver was lifted).

    Findings that share a key (one rule on the several frameworks of one
    server, equal input errors in one file) are matched one to one, those with
    equal messages first: a second failing framework on a server is new, not
    hidden behind the first."""
    before, after = _indices(base.detected), _indices(head.detected)
    new: set[int] = set()
    resolved: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for k in after.keys() | before.keys():
        b, h = before.get(k, []), after.get(k, [])
        if len(b) == len(h) == 1:
            pairs.append((b[0], h[0]))
            continue
        left_b, left_h, matched = _unmatched(base, b, head, h)
        resolved.update(left_b)
        new.update(left_h)
        pairs += matched
    lifted = sorted((h, b) for b, h in pairs if base.detected[b].waived and not head.detected[h].waived)
    return (
        head.with_messages(f for i, f in enumerate(head.detected) if i in new),
        base.with_messages(f for i, f in enumerate(base.detected) if i in resolved),
        tuple(
            Worsened(*head.with_messages([head.detected[h]]), *base.with_messages([base.detected[b]]))
            for h, b in lifted
        ),
    )


def worsened(new: Sequence[Finding], resolved: Sequence[Finding]) -> tuple[Worsened, ...]:
    """New findings that replace a less severe resolved one of the same entity
    and category: the most severe new with the least severe resolved first."""
    gone: dict[tuple[str, str], list[Finding]] = {}
    for f in sorted(resolved, key=lambda f: (SEVERITY_RANK[f.severity], f.sort_key())):
        if f.entity:
            gone.setdefault((f.entity, f.category), []).append(f)
    out = []
    for f in by_severity(f for f in new if not f.waived and f.entity):
        earlier = gone.get((f.entity, f.category))
        if earlier and SEVERITY_RANK[earlier[0].severity] < SEVERITY_RANK[f.severity]:
            out.append(Worsened(f, earlier.pop(0)))
    return tuple(out)


def _indices(findings: Sequence[Finding]) -> dict[FindingKey, list[int]]:
    out: dict[FindingKey, list[int]] = {}
    for i, f in enumerate(findings):
        out.setdefault(key(f), []).append(i)
    return out


def _unmatched(
    base: AuditResult, b: list[int], head: AuditResult, h: list[int]
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Of findings under one key, those of each side left after pairing equal
    messages, then the rest in order: the surplus of each side, and the pairs
    (base, head)."""
    if not b or not h:
        return b, h, []
    messages_b = [f.message for f in base.with_messages(base.detected[i] for i in b)]
    messages_h = [f.message for f in head.with_messages(head.detected[i] for i in h)]
    free_b: dict[str, list[int]] = {}
    for i, message in zip(b, messages_b, strict=True):
        free_b.setdefault(message, []).append(i)
    rest_h = []
    pairs = []
    for i, message in zip(h, messages_h, strict=True):
        same = free_b.get(message)
        if same:
            pairs.append((same.pop(0), i))
        else:
            rest_h.append(i)
    rest_b = sorted(i for left in free_b.values() for i in left)
    paired = min(len(rest_b), len(rest_h))
    pairs += zip(rest_b[:paired], rest_h[:paired], strict=True)
    return rest_b[paired:], rest_h[paired:], pairs


# Figures that are amounts: an entity absent on one side has none of them (0),
# where a capacity or headroom it does not have is unknown (None).
AMOUNTS = frozenset({"load_kw", "heat_kw", "u_used", "weight_kg", "servers", "gpus"})


def _less(capacity: Any, load: float) -> float | None:
    return None if capacity is None else round(float(capacity) - load, 3)


def _total(values: Iterable[Any]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return round(sum(known), 3) if known else None


def _gpus(result: AuditResult) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
    """GPUs per rack and per facility: each server's gpu.count, times its
    compute trays for a rack-scale system (as the readiness report counts them)."""
    racks: dict[tuple[str, str], int] = {}
    facilities: dict[str, int] = {}
    for fact in result.facts:
        if fact.kind != "server":
            continue
        v = fact.values
        n = int(v.get("gpu.count") or 0) * int(v.get("trays") or 1)
        where = (str(v.get("facility")), str(v.get("rack")))
        racks[where] = racks.get(where, 0) + n
        facilities[where[0]] = facilities.get(where[0], 0) + n
    return racks, facilities


def figures(result: AuditResult) -> dict[str, dict[str, float | None]]:
    """FIGURES of every rack and facility of an audit whose rules ran."""
    cap = result.capacity
    if cap is None:
        return {}
    gpus_of_rack, gpus_of_facility = _gpus(result)
    out: dict[str, dict[str, float | None]] = {}
    racks_of: dict[str, list[Mapping[str, Any]]] = {}
    for (facility, rack), row in zip(cap.racks.keys, cap.racks.rows, strict=True):
        racks_of.setdefault(facility, []).append(row)
        load = float(row.get("load_kw", 0.0))
        out[entity_id("rack", (facility, rack))] = {
            "load_kw": load,
            "headroom_kw": _less(row.get("capacity_kw"), load),
            "heat_kw": row.get("heat_kw"),
            "cooling_headroom_kw": row.get("cooling_headroom_kw"),
            "u_used": row.get("u_used"),
            "u_free": row.get("u_free"),
            "weight_kg": row.get("total_weight_kg"),
            "servers": row.get("server_count"),
            "gpus": gpus_of_rack.get((facility, rack), 0),
        }
    for facility, row in zip(cap.facilities.keys, cap.facilities.rows, strict=True):
        racks = racks_of.get(facility, [])
        # A facility's load is its peak IT draw, what its UPS (it_capacity_kw) is checked on.
        load = float(row.get("peak_it_kw", 0.0))
        out[entity_id("facility", facility)] = {
            "load_kw": load,
            "headroom_kw": _less(row.get("it_capacity_kw"), load),
            "heat_kw": row.get("heat_kw"),
            "cooling_headroom_kw": row.get("cooling_headroom_kw"),
            "u_used": _total(r.get("u_used") for r in racks),
            "u_free": _total(r.get("u_free") for r in racks),
            "weight_kg": _total(r.get("total_weight_kg") for r in racks),
            "servers": row.get("server_count"),
            "gpus": gpus_of_facility.get(facility, 0),
        }
    return out


def _absent() -> dict[str, float | None]:
    return {f.name: (0 if f.name in AMOUNTS else None) for f in FIGURES}


def deltas(base: AuditResult, head: AuditResult) -> tuple[Delta, ...]:
    """Capacity changes between two valid trees. A tree with input errors has no
    capacity to compare (its figures would read as changes to or from "n/a"):
    its input errors are the diff's findings."""
    if base.exit_code == 2 or head.exit_code == 2:
        return ()
    before, after = figures(base), figures(head)
    out = []
    for entity in sorted(before.keys() | after.keys()):
        b, a = before.get(entity) or _absent(), after.get(entity) or _absent()
        if b != a:
            out.append(Delta(entity, b, a))
    return tuple(out)


def blocks(f: Finding, threshold: str) -> bool:
    """Whether the finding fails a run at `threshold` (unwaived, at least as severe)."""
    return not f.waived and SEVERITY_RANK[f.severity] >= SEVERITY_RANK[threshold]


def fails(findings: Iterable[Finding], threshold: str) -> bool:
    return any(blocks(f, threshold) for f in findings)
