"""The pipeline: load -> derive -> evaluate -> decide. Rendering reads the result."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker import __version__
from checker.builtin import BUILTIN_CHECKS
from checker.capacity import Capacity, compute
from checker.decide import (
    Settings,
    apply_waivers,
    cap_per_rule,
    check_selection,
    override_severity,
    verdict,
)
from checker.engine import evaluate
from checker.facts import Context, build_all
from checker.findings import Finding
from checker.inventory.loader import Inventory, load
from checker.rulebook import Rulebook, load_rulebook, matches


@dataclass(frozen=True)
class AuditResult:
    """Everything formatters may read; they never re-read files."""

    as_of: dt.date
    verdict: str
    exit_code: int
    summary: dict[str, int]
    findings: tuple[Finding, ...]
    capacity: Capacity | None
    inventory: Inventory
    version: str = __version__
    # Findings left out per rule (Settings.max_per_rule); the summary counts them.
    truncated: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        extra = {"truncated": self.truncated} if self.truncated else {}
        return {
            "tool": "checker",
            "version": self.version,
            "as_of": self.as_of.isoformat(),
            "verdict": self.verdict,
            "summary": self.summary,
            "findings": [_finding_json(f) for f in self.findings],
            "capacity": self.capacity.to_json() if self.capacity else {"facilities": [], "racks": []},
            **extra,
        }


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity,
        "category": f.category,
        "entity": f.entity,
        "message": f.message,
        "remediation": f.remediation,
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "waived": f.waived,
    }


def run_audit(
    paths: Sequence[Path], cfg: Settings, as_of: dt.date, rulebook: Rulebook | None = None
) -> AuditResult:
    book = rulebook or load_rulebook(cfg.rule_dirs)
    known = [*book.ids(), *(c.id for c in BUILTIN_CHECKS)]
    check_selection(cfg, known)
    inv, schema = load(paths, exclude=cfg.config_file)
    active = book.selected(cfg.select, cfg.ignore)
    capacity: Capacity | None = None
    findings: list[Finding] = list(schema)
    # Rules would misread a half-loaded inventory: input errors are reported alone.
    if not schema:
        capacity = compute(inv)
        ctx = Context(as_of, cfg.support_horizon_days)
        findings += evaluate(active.rules, build_all(inv, capacity, ctx))
    findings = override_severity(findings, cfg.severity)
    selected = [r for r in known if matches(r, cfg.select) and not matches(r, cfg.ignore)]
    # With input errors no rule ran: no waiver can be called unused.
    findings = apply_waivers(findings, inv.waivers, as_of, [] if schema else selected, known)
    findings = [f for f in findings if f.category == "schema" or f.rule in selected]
    ordered = sorted(findings, key=Finding.sort_key)
    v = verdict(ordered, cfg.fail_on)
    shown, truncated = cap_per_rule(ordered, cfg.max_per_rule)
    return AuditResult(
        as_of, v.verdict, v.exit_code, v.counts, tuple(shown), capacity, inv, truncated=truncated
    )
