"""JUnit XML: a case per rule x entity checked, a failure per finding, well-formed XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from tests.conftest import Run
from tests.helpers import assert_golden


def test_junit_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("junit")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.junit.xml", run.out)


def test_junit_counts_passed_failed_and_waived_cases(golden_run: Callable[[str], Run]) -> None:
    root = ET.fromstring(golden_run("junit").out)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    support = suites["support.level-24x7"]
    cases = {c.get("name"): c for c in support.iter("testcase")}
    assert set(cases) == {"server/s1", "server/s2"}
    assert cases["server/s1"].find("failure") is None
    assert cases["server/s2"].find("failure") is not None
    assert suites["power.rack-capacity"].get("skipped") == "1"
    total = sum(int(s.get("tests", "0")) for s in suites.values())
    assert root.get("tests") == str(total)
