"""JUnit XML: a test case per rule that ran, in a test suite per category.

CI systems (GitLab, Jenkins, Azure) count test cases: a rule that found
nothing is a passed case, one with open findings a <failure> that lists
them (`file:line:col: severity entity: message`, a line each), one whose
every finding is waived is <skipped>.

A case per rule, not per entity checked: 10,000 servers made 410,000 cases
and 48 MB, over what GitLab reads (a file under 30 MB, and a count of test
cases per report: https://docs.gitlab.com/ci/testing/unit_test_reports/,
"File format and size limits"). The listings share LISTING_BYTES: a rule
gets what it needs while an equal share of what is left covers it, and
a listing cut short ends with a count of the rest (`--format json` lists
every finding). The document is valid against the Jenkins xunit plugin's
junit-10.xsd (tests/fixtures/schemas/), the strictest of the common
readers: no `skipped` on <testsuites>, no `file` on <testcase>.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

from checker.core.findings import SEVERITY_RANK, Finding
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext

# What the failure listings of one document may take, in bytes of XML: a
# third of GitLab's 30 MB, so the rest of the document (a few KB) never matters.
LISTING_BYTES = 10_000_000

# XML 1.0 forbids most control characters even as references: show them escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def _x(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass(frozen=True)
class Case:
    rule: str
    category: str
    findings: tuple[Finding, ...]  # in output order, with their messages

    @property
    def open(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.waived)


def _line(f: Finding) -> str:
    waived = " (waived)" if f.waived else ""
    entity = f" {f.entity}:" if f.entity else ""
    return _x(f"{f.file}:{f.line}:{f.column}: {f.severity}{waived}{entity} {f.message}")


def _size(line: str) -> int:
    """The bytes a listing line takes in the document (escaped, with its newline)."""
    return len(escape(line).encode("utf-8", "backslashreplace")) + 1


def allowances(needs: Sequence[int], budget: int) -> list[int]:
    """Each listing's share of `budget`: what it needs while an equal share of
    what is left covers it; the listings that need more split the rest."""
    out = [0] * len(needs)
    left = budget
    order = sorted(range(len(needs)), key=lambda i: needs[i])
    for k, i in enumerate(order):
        out[i] = min(needs[i], left // (len(needs) - k))
        left -= out[i]
    return out


def _listing(lines: Sequence[str], allowance: int) -> str:
    shown, used = [], 0
    for line in lines:
        used += _size(line)
        if used > allowance:
            break
        shown.append(line)
    rest = len(lines) - len(shown)
    if rest:
        shown.append(
            f"... and {rest:,} more not listed (the listings of a JUnit file share {LISTING_BYTES:,} bytes); "
            "`--format json` lists every finding"
        )
    return "\n".join(shown)


def _plural(n: int, one: str) -> str:
    return f"{n:,} {one}" if n == 1 else f"{n:,} {one}s"


def _case(suite: ET.Element, case: Case, listing: str) -> tuple[int, int]:
    element = ET.SubElement(suite, "testcase", name=case.rule, classname=f"checker.{case.category}")
    failing = case.open
    if failing:
        worst = max(failing, key=lambda f: SEVERITY_RANK[f.severity])
        message = failing[0].message
        if len(failing) > 1:
            message = f"{len(failing):,} open findings, the first: {message}"
        failure = ET.SubElement(element, "failure", message=_x(message), type=worst.severity)
        failure.text = listing
    elif case.findings:
        message = f"{_plural(len(case.findings), 'finding')}, all waived"
        skipped = ET.SubElement(element, "skipped", message=message)
        skipped.text = listing
    return int(bool(failing)), int(bool(case.findings) and not failing)


def cases(result: AuditResult) -> list[Case]:
    """A case per rule that ran, in the rules' order, and one per rule of a finding
    whose rule did not (none, as the audit describes every rule it reports)."""
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in result.findings:
        by_rule[f.rule].append(f)
    out = [Case(m.id, m.category, tuple(by_rule.pop(m.id, ()))) for m in result.rules]
    out += [Case(rule, fs[0].category, tuple(fs)) for rule, fs in sorted(by_rule.items())]
    return out


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    all_cases = cases(result)
    lines = [[_line(f) for f in c.findings] for c in all_cases]
    shares = allowances([sum(map(_size, ls)) for ls in lines], LISTING_BYTES)
    by_category: dict[str, list[tuple[Case, str]]] = defaultdict(list)
    for case, ls, share in zip(all_cases, lines, shares, strict=True):
        by_category[case.category].append((case, _listing(ls, share)))
    root = ET.Element("testsuites", name="checker")
    totals = [0, 0, 0]
    for category in sorted(by_category):
        suite = ET.SubElement(root, "testsuite", name=category)
        failures = skipped = 0
        for case, listing in by_category[category]:
            failed, waived = _case(suite, case, listing)
            failures, skipped = failures + failed, skipped + waived
        n = len(by_category[category])
        suite.attrib.update(tests=str(n), failures=str(failures), errors="0", skipped=str(skipped))
        totals = [totals[0] + n, totals[1] + failures, totals[2] + skipped]
    # <testsuites> has no `skipped` in the Jenkins schema: its suites count them.
    root.attrib.update(tests=str(totals[0]), failures=str(totals[1]), errors="0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
