"""JUnit XML: a case per rule, valid against the Jenkins xunit plugin's XSD,
failures listing their findings within the file's budget."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.evaluate.rulebook import load_rulebook
from checker.render import junit
from tests.conftest import FIXTURES, Run
from tests.helpers import assert_golden

XSD = FIXTURES / "schemas" / "junit-10.xsd"
META = tuple(m for m in load_rulebook().metadata() if m.id in ("power.rack-capacity", "support.level-24x7"))


def valid(text: str) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    xmlschema.XMLSchema(str(XSD)).validate(text)


def _racks(n: int, message: str = "over") -> tuple[Finding, ...]:
    return tuple(
        Finding("power.rack-capacity", "error", "power", f"rack/f/R{i:03d}", f"R{i:03d} {message}", "r",
                "f.yaml", i, 5)
        for i in range(1, n + 1)
    )


def _result(findings: tuple[Finding, ...]) -> AuditResult:
    return AuditResult(dt.date(2027, 1, 15), "fail", 1, {}, findings, None, META)


def _cases(text: str) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in ET.fromstring(text).iter("testcase")}


def test_junit_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("junit")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.junit.xml", run.out)


def test_junit_is_valid_against_the_jenkins_xunit_schema(golden_run: Callable[[str], Run]) -> None:
    valid(golden_run("junit").out)


def test_the_schema_catches_what_jenkins_refuses() -> None:
    """The validator is not a formality: `skipped` on <testsuites> (what the JUnit
    of checker 0.1.0 wrote) fails it."""
    xmlschema = pytest.importorskip("xmlschema")
    with pytest.raises(xmlschema.XMLSchemaValidationError, match="skipped"):
        valid('<testsuites name="checker" tests="0" failures="0" errors="0" skipped="0"/>')


def test_a_case_per_rule_passed_failed_or_skipped(golden_run: Callable[[str], Run]) -> None:
    root = ET.fromstring(golden_run("junit").out)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    cases = _cases(golden_run("junit").out)
    # One open nbd-support warning, one waived overload, rules that found nothing.
    support = cases["support.level-24x7"].find("failure")
    assert support is not None and support.get("type") == "warning"
    assert support.text == ("overload/servers.yaml:16:15: warning server/s2: server s2 has nbd support; "
                            "the rollout expects 24x7")
    skipped = cases["power.rack-capacity"].find("skipped")
    assert skipped is not None and skipped.get("message") == "1 finding, all waived"
    assert len(cases["power.feed-overload"]) == 0  # passed
    assert cases["power.feed-overload"].get("classname") == "checker.power"
    assert suites["power"].get("skipped") == "1"
    assert root.get("tests") == str(len(cases)) == str(sum(int(s.get("tests", "")) for s in suites.values()))
    assert root.get("failures") == str(sum(c.find("failure") is not None for c in cases.values()))


def test_a_failure_lists_every_finding_of_its_rule() -> None:
    text = junit.render(_result(_racks(30)))
    valid(text)
    failure = _cases(text)["power.rack-capacity"].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.get("message") == "30 open findings, the first: R001 over"
    expected = [f"f.yaml:{i}:5: error rack/f/R{i:03d}: R{i:03d} over" for i in range(1, 31)]
    assert failure.text.splitlines() == expected


@pytest.mark.parametrize(
    ("needs", "budget", "shares"),
    [
        ([10, 20, 30], 100, [10, 20, 30]),  # all fit
        ([10, 100, 100], 100, [10, 45, 45]),  # the small one whole, the rest split
        ([0, 50, 1000], 90, [0, 45, 45]),
        ([5, 5, 5], 9, [3, 3, 3]),  # rounding down never spends more than the budget
    ],
)
def test_allowances(needs: list[int], budget: int, shares: list[int]) -> None:
    assert junit.allowances(needs, budget) == shares
    assert sum(shares) <= budget


def test_listings_cut_short_count_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(junit, "LISTING_BYTES", 1_000)
    support = Finding("support.level-24x7", "warning", "support", "server/s1", "s1 nbd", "r", "g.yaml", 3, 1)
    text = junit.render(_result((*_racks(100), support)))
    valid(text)
    cases = _cases(text)
    listed = (cases["power.rack-capacity"].findtext("failure") or "").splitlines()
    # The support case keeps its line (37 bytes and a newline); power.rack-capacity
    # gets the other 962: lines R001-R009 take 41 bytes each, R010 on 42, so
    # 9 x 41 + 14 x 42 = 957: 23 lines.
    assert listed[:-1] == [f"f.yaml:{i}:5: error rack/f/R{i:03d}: R{i:03d} over" for i in range(1, 24)]
    assert listed[-1] == ("... and 77 more not listed (the listings of a JUnit file share 1,000 bytes); "
                          "`--format json` lists every finding")
    assert cases["support.level-24x7"].findtext("failure") == "g.yaml:3:1: warning server/s1: s1 nbd"


def test_a_fleet_of_long_messages_stays_within_the_budget() -> None:
    """The listings never pass LISTING_BYTES, however many findings: 20,000
    findings of 1 KB each (20 MB of messages) make a file under 10.1 MB."""
    text = junit.render(_result(_racks(20_000, "x" * 1_000)))
    assert len(text.encode()) < junit.LISTING_BYTES + 100_000
    listed = _cases(text)["power.rack-capacity"].findtext("failure") or ""
    assert listed.endswith("more not listed (the listings of a JUnit file share 10,000,000 bytes); "
                           "`--format json` lists every finding")


def test_control_characters_never_reach_the_xml() -> None:
    odd = Finding("power.rack-capacity", "error", "power", "rack/f/\x01R", "bad \x1b[31m", "r", "f.yaml",
                  1, 1)
    text = junit.render(_result((odd,)))
    valid(text)
    assert "\\x01R" in text and "\\x1b[31m" in text and "\x1b" not in text
