"""The rollout readiness report: Markdown rendered by Jinja from templates/report.md.j2.

Python only groups and orders what the result holds; the layout, headings and
wording live in the template. Figures come from fact fields: a figure the
derive stage does not compute is simply absent from the report.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.core.findings import CATEGORIES, SEVERITIES, SEVERITY_RANK, Finding
from checker.core.rulemeta import RuleMeta
from checker.decide.result import AuditResult
from checker.derive.facts import Fact
from checker.render.context import PLAIN, RenderContext
from checker.render.groups import NAMES_SHOWN, name_of, shown_groups
from checker.render.summary import key_figures, racks_with_feeds, risks
from checker.render.templating import environment


@dataclass(frozen=True)
class RuleGroup:
    """One row of "findings by rule": 24 identical warnings become one row."""

    meta: RuleMeta | None
    rule: str
    severity: str
    findings: tuple[Finding, ...]

    @property
    def open(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.waived)

    @property
    def waived(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.waived)


@dataclass(frozen=True)
class Verdict:
    label: str
    reason: str


@dataclass
class EntityStatus:
    """Worst open finding per entity and category, for the matrix-style tables."""

    worst: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, f: Finding) -> None:
        key = (f.entity, f.category)
        if f.waived:
            return
        if key not in self.worst or SEVERITY_RANK[f.severity] > SEVERITY_RANK[self.worst[key]]:
            self.worst[key] = f.severity

    def of(self, entities: Iterable[str], category: str) -> str:
        found = [self.worst[(e, category)] for e in entities if (e, category) in self.worst]
        return max(found, key=SEVERITY_RANK.__getitem__) if found else "ok"


def _groups(result: AuditResult) -> list[RuleGroup]:
    metas = {m.id: m for m in result.rules}
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in result.detected:
        by_rule[f.rule].append(f)
    groups = [RuleGroup(metas.get(rule), rule, fs[0].severity, tuple(fs)) for rule, fs in by_rule.items()]
    return sorted(groups, key=lambda g: (not g.open, -SEVERITY_RANK[g.severity], g.rule))


def _verdict(result: AuditResult, groups: Sequence[RuleGroup]) -> Verdict:
    blocking = [g for g in groups if g.open and result.verdict == "fail" and g.severity == "error"]
    if not result.rules_evaluated:
        errors = sum(len(g.open) for g in groups)
        return Verdict("BLOCKED", f"{errors} input errors; no rule could be evaluated until they are fixed")
    if result.verdict == "fail":
        failing = blocking or [g for g in groups if g.open]
        return Verdict("BLOCKED", "fails on " + ", ".join(f"`{g.rule}` ({len(g.open)})" for g in failing))
    open_groups = [g for g in groups if g.open]
    if open_groups:
        n = sum(len(g.open) for g in open_groups)
        return Verdict("READY WITH WARNINGS", f"nothing blocks the rollout; {n} findings below the threshold")
    return Verdict("READY", "every rule passed")


def _counts(findings: Sequence[Finding]) -> list[tuple[str, dict[str, int]]]:
    table: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
    for f in findings:
        table[f.category]["waived" if f.waived else f.severity] += 1
    return [(c, dict(n)) for c, n in table.items() if n]


class _Row(Mapping[str, Any]):
    """A fact as the report reads it: its values, and its entity, file and line.

    The line is looked up only when the report shows it (the facility and
    rack tables link each row, the server tables do not): a fast-parsed
    file's source map costs a parse of that file, and reading every server's
    line parsed every server file again (10,000 servers: 2.5 s)."""

    __slots__ = ("_fact",)
    _WHERE = ("entity", "file", "line")

    def __init__(self, fact: Fact) -> None:
        self._fact = fact

    def __getitem__(self, key: str) -> Any:
        fact = self._fact
        if key in fact.values:  # a fact field wins over the place, as a dict merge would have it
            return fact.values[key]
        if key == "entity":
            return fact.entity
        if key == "file":
            return fact.file
        if key == "line":
            return fact.src.line
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        yield from (k for k in self._WHERE if k not in self._fact.values)
        yield from self._fact.values

    def __len__(self) -> int:
        return len(self._fact.values) + sum(k not in self._fact.values for k in self._WHERE)


def _facts(facts: Sequence[Fact]) -> dict[str, list[Mapping[str, Any]]]:
    by_kind: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for fact in facts:
        by_kind[fact.kind].append(_Row(fact))
    return by_kind


def _frameworks(frameworks: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """`pytorch 2.3.1+cu121, tensorflow 2.15.0` per server entity, from the framework facts."""
    per_server: dict[str, list[str]] = defaultdict(list)
    for f in frameworks:
        per_server[f["entity"]].append(f"{f.get('name', '')} {f.get('version', '')}".strip())
    return {server: ", ".join(sorted(names)) for server, names in per_server.items()}


def _software(
    servers: Sequence[Mapping[str, Any]], frameworks: Mapping[str, str], status: EntityStatus
) -> list[dict[str, Any]]:
    """Servers grouped by GPU model x driver / CUDA / ROCm / frameworks -> worst compatibility verdict."""
    keys = ("gpu.model", "software.driver", "software.cuda", "software.rocm", "frameworks")
    groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for s in servers:
        # Not {**s, ...}: that would read every field of the row, its line too.
        written = [s.get(k) for k in keys[:-1]] + [frameworks.get(s["entity"], "")]
        groups[tuple(v or "" for v in written)].append(s["entity"])
    return [
        {**dict(zip(keys, key, strict=True)), "servers": len(e), "verdict": status.of(e, "compatibility")}
        for key, e in sorted(groups.items())
    ]


def _workloads(
    workloads: Sequence[Mapping[str, Any]], servers: Sequence[Mapping[str, Any]], status: EntityStatus
) -> list[dict[str, Any]]:
    """Workload facts with a fit verdict: the worst workload-fit finding on it or its servers."""
    runs: dict[str, list[str]] = defaultdict(list)
    for s in servers:
        if s.get("workload"):
            runs[s["workload"]].append(s["entity"])
    return [
        {**w, "fit": status.of([w["entity"], *runs.get(w.get("name", ""), [])], "workload-fit")}
        for w in workloads
    ]


def _support(servers: Sequence[Mapping[str, Any]], status: EntityStatus) -> list[dict[str, Any]]:
    keys = ("support.vendor", "support.level", "support.until", "rollout_date")
    groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for s in servers:
        groups[tuple(s.get(k) or "" for k in keys)].append(s["entity"])
    return [
        {**dict(zip(keys, key, strict=True)), "servers": len(e), "verdict": status.of(e, "support")}
        for key, e in sorted(groups.items())
    ]


def context(result: AuditResult, ctx: RenderContext) -> dict[str, Any]:
    groups = _groups(result)
    status = EntityStatus()
    for f in result.detected:
        status.add(f)
    facts = _facts(result.facts)
    racks = facts.get("rack", [])
    return {
        "result": result,
        "verdict": _verdict(result, groups),
        "groups": groups,
        "counts": _counts(result.detected),
        "shown": shown_groups(result, ctx.max_per_rule, alike=ctx.group),
        "names_shown": 0 if ctx.max_per_rule == 0 else NAMES_SHOWN,
        "name_of": name_of,
        "severities": SEVERITIES,
        "facts": facts,
        "software": _software(facts.get("server", []), _frameworks(facts.get("framework", [])), status),
        "workloads": _workloads(facts.get("workload", []), facts.get("server", []), status),
        "support": _support(facts.get("server", []), status),
        "key": key_figures(facts.get("facility", []), racks, facts.get("server", [])),
        "risks": risks(groups, result.with_messages),
        "rack_rows": racks_with_feeds(racks, facts.get("feed", [])),
        "waivers": result.waivers,
        "waived": result.with_messages(f for f in result.detected if f.waived),
        "waiver_findings": [f for f in result.detected if f.category == "waiver"],
        "link": ctx.link,
        "pictures": None,  # render/pictures.py: the SVG files written beside a report
    }


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    return environment().get_template("report.md.j2").render(context(result, ctx))
