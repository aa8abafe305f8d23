from __future__ import annotations

import datetime as dt

import pytest

from checker.audit import AuditResult
from checker.errors import UserError
from checker.findings import Finding
from checker.render import get_formatter


def _result(findings: list[Finding]) -> AuditResult:
    summary = {"error": 1, "warning": 0, "info": 0, "waived": 1}
    return AuditResult(dt.date(2027, 1, 15), "fail", 1, summary, tuple(findings), None)


FINDINGS = [
    Finding("power.rack-capacity", "error", "power", "rack/f/A", "rack f/A draws 20 kW", "r", "f.yaml", 3, 5),
    Finding(
        "power.rack-capacity",
        "error",
        "power",
        "rack/f/B",
        "rack f/B draws 20 kW",
        "r",
        "f.yaml",
        9,
        5,
        waived=True,
    ),
]


def test_text_lines_and_summary() -> None:
    assert get_formatter("text")(_result(FINDINGS)) == (
        "f.yaml:3:5: error power.rack-capacity rack f/A draws 20 kW\n"
        "f.yaml:9:5: error power.rack-capacity rack f/B draws 20 kW [waived]\n"
        "checker: 1 error, 0 warnings, 0 info, 1 waived: fail\n"
    )


def test_unknown_format_is_a_user_error_with_suggestion() -> None:
    with pytest.raises(UserError, match="did you mean 'json'"):
        get_formatter("jsn")
