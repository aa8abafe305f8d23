from __future__ import annotations

import json
from collections.abc import Callable

from checker.render import get_formatter
from tests.conftest import Run
from tests.helpers import assert_golden
from tests.test_text import FINDINGS, _result


def test_json_contract_fields() -> None:
    data = json.loads(get_formatter("json")(_result(FINDINGS)))
    assert list(data) == ["tool", "version", "as_of", "verdict", "summary", "findings", "capacity"]
    assert data["as_of"] == "2027-01-15" and data["verdict"] == "fail"
    assert list(data["findings"][0]) == [
        "rule",
        "severity",
        "category",
        "entity",
        "message",
        "remediation",
        "file",
        "line",
        "column",
        "waived",
    ]
    assert data["findings"][1]["waived"] is True
    assert data["capacity"] == {"facilities": [], "racks": []}


def test_json_keeps_non_ascii_text_and_ends_with_a_newline() -> None:
    out = get_formatter("json")(_result(FINDINGS))
    assert out.endswith("}\n")


def test_json_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("json")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.json", run.out)
