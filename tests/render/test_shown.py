"""The display cap: the formats people read show the first N findings of each
rule and say how many they left out; nothing else is cut, and only the
messages shown are rendered."""

from __future__ import annotations

import datetime as dt

import pytest

from checker.decide.result import AuditResult
from checker.derive.facts import Fact
from checker.evaluate.engine import evaluate
from checker.evaluate.rulebook import CompiledRule
from checker.render.shown import shown
from checker.source.parse import parse
from tests.helpers import compiled_rule, finding


def _result(limit_facts: int = 20) -> AuditResult:
    src = parse("name: R\n")[0].src
    facts = [
        Fact("rack", f"rack/f/R{i}", {"name": f"R{i}", "load_kw": float(i)}, f"f{i % 3}.yaml", src)
        for i in range(limit_facts)
    ]
    rules = [compiled_rule("t.a", "rack", "load_kw >= 0"), compiled_rule("t.b", "rack", "load_kw > 9")]
    found, messages = evaluate(rules, facts)
    summary = {"error": len(found), "warning": 0, "info": 0, "waived": 0}
    as_of = dt.date(2027, 1, 15)
    return AuditResult(as_of, "fail", 1, summary, tuple(found), None, (), tuple(facts), messages)


@pytest.mark.parametrize(("limit", "kept", "left_out"), [
    (0, 30, {}),
    (1, 2, {"t.a": 19, "t.b": 9}),
    (7, 14, {"t.a": 13, "t.b": 3}),
    (10, 20, {"t.a": 10}),
    (20, 30, {}),
])
def test_the_first_of_each_rule_are_shown_and_the_rest_counted(
    limit: int, kept: int, left_out: dict[str, int]
) -> None:
    result = _result()
    view = shown(result, limit)
    assert (len(view.findings), view.left_out) == (kept, left_out)
    # In output order, and the same findings (with messages) as the whole list.
    assert list(view.findings) == [f for f in result.findings if f in view.findings]
    assert all(f.message for f in view.findings)


@pytest.mark.parametrize("limit", [1, 3, 0])
def test_only_the_messages_shown_are_rendered(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _result()
    rendered: list[str] = []
    original = CompiledRule.render

    def counting(self: CompiledRule, values: dict[str, object], entity: str = "") -> str:
        rendered.append(entity)
        return original(self, values, entity)

    monkeypatch.setattr(CompiledRule, "render", counting)
    view = shown(result, limit)
    assert len(rendered) == len(view.findings) == (30 if limit == 0 else 2 * limit)


def test_every_finding_has_its_own_message() -> None:
    # Rendered from its own fact: "t.a on R7" for rack/f/R7.
    findings = _result().findings
    assert len(findings) == 30
    assert all(f.message == f"{f.rule} on {f.entity.rsplit('/', 1)[1]}" for f in findings)


def test_findings_of_built_in_checks_keep_their_message() -> None:
    f = finding(rule="schema.invalid", category="schema")
    result = AuditResult(dt.date(2027, 1, 15), "fail", 2, {}, (f,), None)
    assert shown(result, 1).findings == (f,) and result.findings == (f,)
