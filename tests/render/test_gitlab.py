"""GitLab Code Quality: valid against the documented report format, an issue
per open finding, fingerprints GitLab keeps apart."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AS_OF, FIXTURES, CliRunner, Run
from tests.helpers import assert_golden

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = FIXTURES / "schemas" / "gitlab-code-quality.schema.json"


def valid(report: list[dict[str, Any]]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_gitlab_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("gitlab")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.gitlab.json", run.out)


def test_gitlab_is_valid_against_the_documented_format(golden_run: Callable[[str], Run]) -> None:
    valid(json.loads(golden_run("gitlab").out))


def test_the_schema_catches_what_gitlab_ignores() -> None:
    """A `warning` severity, or a line where GitLab reads `lines.begin`, fails it."""
    jsonschema = pytest.importorskip("jsonschema")
    good = {"description": "d", "check_name": "c", "fingerprint": "f", "severity": "major",
            "location": {"path": "a.yaml", "lines": {"begin": 3}}}
    valid([good])
    for bad in ({**good, "severity": "warning"}, {**good, "location": {"path": "a.yaml", "line": 3}}):
        with pytest.raises(jsonschema.ValidationError):
            valid([bad])


def test_an_issue_per_open_finding(golden_run: Callable[[str], Run]) -> None:
    report = json.loads(golden_run("gitlab").out)
    # The golden fixture: an nbd-support warning, an expiring waiver, a waived overload.
    assert [(i["check_name"], i["severity"], i["location"]) for i in report] == [
        ("support.level-24x7", "major", {"path": "overload/servers.yaml", "lines": {"begin": 16}}),
        ("waiver.expiring", "major", {"path": "waivers/expiring.yaml", "lines": {"begin": 7}}),
    ]
    assert report[0]["description"] == "server s2 has nbd support; the rollout expects 24x7"


def test_fingerprints_are_unique_and_the_sarif_ones(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """GitLab keys issues by fingerprint: on the example rollout, where servers
    share lines, 51 open findings stay 51 issues, each fingerprinted as its
    SARIF result is (one identity for a finding on either service)."""
    monkeypatch.chdir(ROOT)
    report = json.loads(cli("audit", "inventories", "--format", "gitlab", *AS_OF).out)
    valid(report)
    sarif = json.loads(cli("audit", "inventories", "--format", "sarif", *AS_OF).out)["runs"][0]["results"]
    assert len({i["fingerprint"] for i in report}) == len(report) == 51
    assert [i["fingerprint"] for i in report] == [
        r["partialFingerprints"]["primaryLocationLineHash"] for r in sarif
    ]
