"""The pipeline: load -> derive -> evaluate -> decide. Rendering reads the result.

See docs/architecture.md for the stages and the data that flows between them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from checker.core.findings import Finding, by_place
from checker.core.perf import keep
from checker.decide.config import Settings, check_selection
from checker.decide.result import AuditResult
from checker.decide.verdict import override_severity, verdict
from checker.decide.waivers import apply_waivers, waiver_records
from checker.derive.capacity import Capacity, compute
from checker.derive.facts import Context, Fact, build_all
from checker.derive.knowledge import TABLE_KINDS, builtin, extend
from checker.evaluate.engine import Messages, evaluate
from checker.evaluate.memo import open_memo
from checker.evaluate.rulebook import Rulebook, load_rulebook, matches
from checker.load.build import load
from checker.load.reading import ReadOptions
from checker.source.reader import display_path


def run_audit(
    paths: Sequence[Path],
    cfg: Settings,
    as_of: dt.date,
    rulebook: Rulebook | None = None,
    options: ReadOptions | None = None,
) -> AuditResult:
    """One audit. `options`: how files are read (cache, processes); default: no
    cache, this process only. Nothing of one audit is kept for the next, but what
    `options.carried` carries (the resident process's: checker.core.carried)."""
    options = options or ReadOptions()
    book = rulebook or load_rulebook(cfg.rule_dirs, cache_dir=options.cache_dir, carried=options.carried)
    metas = book.metadata()
    known = [m.id for m in metas]
    check_selection(cfg, known)
    inv, schema = load(paths, exclude=cfg.config_file, options=options, tables=list(TABLE_KINDS),
                       knowledge=book.knowledge)
    keep(inv)  # to the end of a process that ends itself: not freed model by model (8 ms at 10,000 servers)
    # The user's knowledge documents (docs/knowledge.md) merged into the built-in tables.
    knowledge = extend(builtin(), inv.tables)
    schema += knowledge.problems
    active = book.selected(cfg.select, cfg.ignore)
    capacity: Capacity | None = None
    messages = Messages()
    facts: list[Fact] = []
    findings: list[Finding] = list(schema)
    # Rules would misread a half-loaded inventory: input errors are reported alone.
    if not schema:
        capacity = compute(inv, options.carried)
        facts = build_all(inv, capacity, Context(
            as_of, cfg.support_horizon_days, knowledge.knowledge,
            large_model_params_b=cfg.large_model_params_b, headroom_pct=cfg.headroom_pct,
            support_level=cfg.support_level,
        ), options.carried)
        memo = open_memo(options.cache_dir, active.rules) if options.cache_dir else None
        found, messages = evaluate(active.rules, facts, memo, options.carried)
        findings += knowledge.overrides + found
    findings = override_severity(findings, cfg.severity)
    selected = [r for r in known if matches(r, cfg.select) and not matches(r, cfg.ignore)]
    # With input errors no rule ran: no waiver can be called unused.
    findings = apply_waivers(findings, inv.waivers, as_of, [] if schema else selected, known)
    chosen = set(selected)
    findings = [f for f in findings if f.category == "schema" or f.rule in chosen]
    ordered = sorted(findings, key=by_place)
    v = verdict(ordered, cfg.fail_on)
    # Schema findings stay even when their check is not selected: describe them too.
    reported = {f.rule for f in ordered}
    ran = tuple(
        m for m in metas if m.id in reported or (m.id in selected and (m.builtin or capacity is not None))
    )
    return AuditResult(
        as_of, v.verdict, v.exit_code, v.counts, tuple(ordered), capacity, ran, tuple(facts), messages,
        waivers=waiver_records(ordered, inv.waivers, as_of),
        paths=tuple(sorted({display_path(p) for p in paths})),
        keep_positions=inv.keep_positions,
    )
