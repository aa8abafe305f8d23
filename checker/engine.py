"""Evaluate compiled rules over facts with durable-rules, synchronously.

durable.engine.Host starts timer threads that dispatch actions every 0.2 s,
so actions would run partly on those threads and findings could be lost or
raced. Our host starts none; we drain actions ourselves until none is
pending, so every rule x matching fact yields exactly one match, in order.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import durable_rules_engine
from durable import engine as durable

from checker.expr import fact_key
from checker.facts import Fact
from checker.findings import Finding, Location
from checker.rulebook import CompiledRule

_names = itertools.count()


class _QuietHost(durable.Host):  # type: ignore[misc]
    """A durable-rules host without background timer threads."""

    def _run(self) -> None:
        pass


def _condition(rule: CompiledRule) -> dict[str, Any]:
    return {"all": [{"m": {"$and": [{"kind": rule.rule.on}, rule.when.condition]}}]}


def durable_fact(index: int, kind: str, values: Mapping[str, Any]) -> dict[str, Any]:
    # A unique id per fact: durable-rules refuses an identical fact twice.
    fact = {fact_key(k): v for k, v in values.items() if v is not None}
    fact["id"] = index
    fact["kind"] = kind
    return fact


def match(
    rules: Sequence[CompiledRule], facts: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[tuple[int, int]]:
    """(rule index, fact index) for every rule that fires on a (kind, values) fact."""
    if not rules or not facts:
        return []
    fired: list[tuple[int, int]] = []

    def action_for(rule_index: int) -> Any:
        def action(c: Any) -> None:
            fired.append((rule_index, int(c.m["id"])))

        return action

    name = f"checker{next(_names)}"
    definition = {f"r{i}": {**_condition(r), "run": action_for(i)} for i, r in enumerate(rules)}
    ruleset = _QuietHost({name: definition}).get_ruleset(name)
    try:
        # "Not handled" only means no rule matched any fact: normal.
        with contextlib.suppress(durable.MessageNotHandledException):
            ruleset.assert_facts([durable_fact(i, kind, v) for i, (kind, v) in enumerate(facts)])
        _drain(ruleset, fired)
    finally:
        # The C engine keeps every ruleset (and its facts) until deleted.
        durable_rules_engine.delete_ruleset(ruleset._handle)
    return sorted(fired)


def _drain(ruleset: Any, fired: list[tuple[int, int]]) -> None:
    while True:
        before = len(fired)
        ruleset.dispatch()
        if len(fired) == before:
            return


def _location(rule: CompiledRule, fact: Fact) -> Location:
    field = rule.rule.locate
    path = field.split(".") if field else []
    return Location(fact.file, *fact.src.locate(path, key=True))


def evaluate(rules: Sequence[CompiledRule], facts: Sequence[Fact]) -> list[Finding]:
    """One finding per rule x matching fact, located at `locate` or the entity."""
    pairs = match(rules, [(f.kind, f.values) for f in facts])
    findings = []
    for rule_index, fact_index in pairs:
        rule, fact = rules[rule_index], facts[fact_index]
        loc = _location(rule, fact)
        findings.append(
            Finding(
                rule.id,
                rule.rule.severity,
                rule.rule.category,
                fact.entity,
                rule.render(fact.values),
                rule.rule.remediation,
                loc.file,
                loc.line,
                loc.column,
            )
        )
    return sorted(findings, key=Finding.sort_key)
