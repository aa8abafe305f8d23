from __future__ import annotations

import dataclasses

from checker.evaluate.rulebook import load_rulebook
from checker.evaluate.ruletest import run_rule_tests
from tests.helpers import compiled_rule


def test_builtin_rulebook_examples_all_pass() -> None:
    report, ok = run_rule_tests(load_rulebook().rules)
    assert ok, report
    assert report.rstrip().endswith(" failed") and "FAIL" not in report


def test_wrong_examples_are_reported() -> None:
    rule = compiled_rule("t.big", "rack", "load_kw > 30")
    broken = rule.rule.model_copy(
        update={
            "examples": rule.rule.examples.model_copy(
                update={"fail": [{"load_kw": 1}], "pass_": [{"load_kw": 99}]}
            )
        }
    )
    report, ok = run_rule_tests([dataclasses.replace(rule, rule=broken)])
    assert not ok
    assert "fail example 1 did not fire; pass example 1 fired" in report
    assert report.endswith("0 passed, 1 failed\n")


def test_rule_without_examples_is_untested() -> None:
    report, ok = run_rule_tests([compiled_rule("t.big", "rack", "load_kw > 30")])
    assert not ok and "needs at least one fail and one pass example" in report
