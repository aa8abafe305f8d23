"""Small builders shared by the unit tests."""

from __future__ import annotations

from checker.expr import compile_when
from checker.facts import REGISTRY
from checker.inventory.source import Src
from checker.rulebook import _JINJA, CompiledRule, Rule


def compiled_rule(
    rule_id: str, on: str, when: str, *, locate: str | None = None, severity: str = "error"
) -> CompiledRule:
    rule = Rule.model_validate(
        {
            "id": rule_id,
            "title": "t",
            "category": "power",
            "severity": severity,
            "on": on,
            "when": when,
            "message": rule_id + " on {{ name }}",
            "remediation": "r",
            "locate": locate,
        }
    )
    when_ = compile_when(when, REGISTRY[on].field_types())
    return CompiledRule(rule, "rules/t.yaml", Src(1, 1), when_, _JINJA.compile_message(rule.message), False)
