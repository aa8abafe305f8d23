"""Decide: severity overrides, the verdict and exit code, the per-rule output cap."""

from __future__ import annotations

import pytest

from checker.decide.verdict import cap_per_rule, override_severity, verdict
from tests.helpers import finding


def test_schema_findings_are_never_waived_or_downgraded() -> None:
    schema = finding(rule="schema.invalid", category="schema")
    assert override_severity([schema], [("*", "info")]) == [schema]


@pytest.mark.parametrize(
    ("severities", "fail_on", "expected"),
    [
        ([], "error", ("pass", 0)),
        (["warning"], "error", ("pass", 0)),
        (["warning"], "warning", ("fail", 1)),
        (["info"], "warning", ("pass", 0)),
        (["info"], "info", ("fail", 1)),
        (["error"], "error", ("fail", 1)),
    ],
)
def test_verdict_threshold(severities: list[str], fail_on: str, expected: tuple[str, int]) -> None:
    v = verdict([finding(severity=s) for s in severities], fail_on)  # type: ignore[arg-type]
    assert (v.verdict, v.exit_code) == expected


def test_waived_findings_do_not_fail_and_are_counted() -> None:
    v = verdict([finding().with_waived()], "error")
    assert (v.verdict, v.exit_code, v.counts["waived"], v.counts["error"]) == ("pass", 0, 1, 0)


def test_schema_findings_exit_2() -> None:
    assert verdict([finding(rule="schema.yaml", category="schema")], "error").exit_code == 2


@pytest.mark.parametrize(("limit", "shown", "truncated"), [
    (0, 5, {}),
    (3, 4, {"a.x": 1}),
    (1, 2, {"a.x": 3}),
    (10, 5, {}),
])
def test_cap_per_rule_keeps_the_first_of_each_rule(limit: int, shown: int, truncated: dict[str, int]) -> None:
    findings = [finding(rule="a.x", entity=f"rack/f/{i}") for i in range(4)] + [finding(rule="b.y")]
    kept, cut = cap_per_rule(findings, limit)
    assert (len(kept), cut) == (shown, truncated)
    assert kept == [f for f in findings if f in kept]  # order kept


