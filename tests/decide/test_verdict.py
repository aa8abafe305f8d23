"""Decide: severity overrides, the verdict and exit code, the per-rule output cap."""

from __future__ import annotations

import pytest

from checker.decide.verdict import override_severity, verdict
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


