from __future__ import annotations

import pytest

from checker.engine import durable_fact, evaluate, match
from checker.facts import Fact
from checker.inventory.source import parse
from checker.rulebook import CompiledRule, Rule
from tests.helpers import compiled_rule


def _facts(n: int) -> list[tuple[str, dict[str, object]]]:
    return [("rack", {"name": f"R{i}", "load_kw": float(i % 100), "capacity_kw": 49.5}) for i in range(n)]


def test_ten_thousand_facts_yield_exactly_the_matching_findings_every_run() -> None:
    rule = compiled_rule("t.half", "rack", "load_kw > capacity_kw")
    facts = _facts(10_000)
    expected = sum(1 for _, v in facts if v["load_kw"] > v["capacity_kw"])  # type: ignore[operator]
    assert expected == 5_000
    runs = [match([rule], facts) for _ in range(3)]
    assert all(len(r) == expected for r in runs)
    assert runs[0] == runs[1] == runs[2]
    assert len(set(runs[0])) == expected  # one match per fact, no duplicates


def test_every_rule_fires_on_each_matching_fact_once() -> None:
    rules = [
        compiled_rule("t.over", "rack", "load_kw > capacity_kw"),
        compiled_rule("t.any", "rack", "load_kw >= 0"),
        compiled_rule("t.feed", "feed", "amps > 0"),
    ]
    facts = [
        ("rack", {"name": "A", "load_kw": 60.0, "capacity_kw": 49.5}),
        ("rack", {"name": "B", "load_kw": 10.0, "capacity_kw": 49.5}),
    ]
    assert match(rules, facts) == [(0, 0), (1, 0), (1, 1)]


def test_no_rules_or_no_facts_match_nothing() -> None:
    assert match([], _facts(3)) == []
    assert match([compiled_rule("t.x", "rack", "load_kw > 1")], []) == []


def test_durable_fact_drops_missing_values_and_numbers_facts() -> None:
    fact = durable_fact(7, "server", {"name": "s", "support.level": None, "gpu.count": 8})
    assert fact["id"] == 7 and fact["kind"] == "server"
    assert None not in fact.values()


def test_findings_are_located_at_the_locate_field_else_the_entity() -> None:
    doc = parse("name: A01\nfeeds:\n  - {name: f}\nload_kw: 3\n")[0]
    fact = Fact(
        "rack", "rack/sh1/A01", {"name": "A01", "load_kw": 30.0, "capacity_kw": 20.0}, "f.yaml", doc.src
    )
    located = compiled_rule("t.loc", "rack", "load_kw > capacity_kw", locate="feeds")
    plain = compiled_rule("t.plain", "rack", "load_kw > capacity_kw")
    findings = evaluate([located, plain], [fact])
    # Findings come out in source order.
    assert [(f.rule, f.line, f.column) for f in findings] == [("t.plain", 1, 1), ("t.loc", 2, 1)]
    assert [f.message for f in findings] == ["t.plain on A01", "t.loc on A01"]


@pytest.mark.parametrize("cls", [CompiledRule, Rule])
def test_compiled_rules_are_immutable(cls: type) -> None:
    rule = compiled_rule("t.x", "rack", "load_kw > 1")
    target = rule if cls is CompiledRule else rule.rule
    with pytest.raises((AttributeError, TypeError, ValueError)):
        target.severity = "info"  # type: ignore[misc, union-attr]
