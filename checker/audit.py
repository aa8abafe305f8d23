"""The pipeline: load -> derive -> evaluate -> decide. Rendering reads the result.

See docs/architecture.md for the stages and the data that flows between them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from checker import __version__
from checker.capacity import Capacity, compute
from checker.config import Settings, check_selection
from checker.decide import cap_per_rule, override_severity, verdict
from checker.engine import evaluate
from checker.facts import Context, Fact, build_all
from checker.findings import Finding
from checker.inventory.loader import load
from checker.rulebook import Rulebook, load_rulebook, matches
from checker.rulemeta import RuleMeta
from checker.waivers import apply_waivers


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


def run_audit(
    paths: Sequence[Path], cfg: Settings, as_of: dt.date, rulebook: Rulebook | None = None
) -> AuditResult:
    book = rulebook or load_rulebook(cfg.rule_dirs)
    metas = book.metadata()
    known = [m.id for m in metas]
    check_selection(cfg, known)
    inv, schema = load(paths, exclude=cfg.config_file)
    active = book.selected(cfg.select, cfg.ignore)
    capacity: Capacity | None = None
    facts: list[Fact] = []
    findings: list[Finding] = list(schema)
    # Rules would misread a half-loaded inventory: input errors are reported alone.
    if not schema:
        capacity = compute(inv)
        facts = build_all(inv, capacity, Context(as_of, cfg.support_horizon_days))
        findings += evaluate(active.rules, facts, cfg.max_per_rule)
    findings = override_severity(findings, cfg.severity)
    selected = [r for r in known if matches(r, cfg.select) and not matches(r, cfg.ignore)]
    # With input errors no rule ran: no waiver can be called unused.
    findings = apply_waivers(findings, inv.waivers, as_of, [] if schema else selected, known)
    findings = [f for f in findings if f.category == "schema" or f.rule in selected]
    ordered = sorted(findings, key=Finding.sort_key)
    v = verdict(ordered, cfg.fail_on)
    shown, cut = cap_per_rule(ordered, cfg.max_per_rule)
    # Schema findings stay even when their check is not selected: describe them too.
    reported = {f.rule for f in ordered}
    ran = tuple(
        m for m in metas if m.id in reported or (m.id in selected and (m.builtin or capacity is not None))
    )
    return AuditResult(
        as_of, v.verdict, v.exit_code, v.counts, tuple(shown), capacity, ran, tuple(facts), truncated=cut
    )
