"""JUnit XML: a test suite per rule, a test case per entity the rule checked.

CI systems (GitLab, Jenkins, Azure) count test cases: a clean rack shows as a
passed case, not as nothing. A finding is a <failure>; a waived one is
<skipped>. Built-in input and waiver checks look at files, not entities: they
get a case per entity or file they reported on, or one passing case.
Schema: https://github.com/testmoapp/junitxml (the de facto common subset).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence

from checker.core.findings import Finding
from checker.core.rulemeta import RuleMeta
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext

# XML 1.0 forbids most control characters even as references: show them escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def _x(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _cases(meta: RuleMeta, entities: Sequence[str], findings: Sequence[Finding]) -> dict[str, list[Finding]]:
    cases: dict[str, list[Finding]] = {e: [] for e in entities}
    for f in findings:
        cases.setdefault(f.entity or f.file, []).append(f)
    return cases or {"all inputs": []}


def _case(suite: ET.Element, rule: str, name: str, found: Sequence[Finding]) -> tuple[int, int]:
    case = ET.SubElement(suite, "testcase", name=_x(name), classname=rule)
    failing = [f for f in found if not f.waived]
    if failing:
        text = "\n".join(f"{f.file}:{f.line}:{f.column}: {f.severity} {f.message}" for f in failing)
        failure = ET.SubElement(case, "failure", message=_x(failing[0].message), type=failing[0].severity)
        failure.text = _x(text)
    elif found:
        ET.SubElement(case, "skipped", message=_x(f"waived: {found[0].message}"))
    return int(bool(failing)), int(bool(found) and not failing)


def _suite(root: ET.Element, meta: RuleMeta, cases: dict[str, list[Finding]]) -> tuple[int, int, int]:
    suite = ET.SubElement(root, "testsuite", name=meta.id)
    failures = skipped = 0
    for name in sorted(cases):
        failed, waived = _case(suite, meta.id, name, cases[name])
        failures, skipped = failures + failed, skipped + waived
    suite.attrib.update(tests=str(len(cases)), failures=str(failures), errors="0", skipped=str(skipped))
    return len(cases), failures, skipped


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    by_kind: dict[str, list[str]] = defaultdict(list)
    for fact in result.facts:
        by_kind[fact.kind].append(fact.entity)
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in result.findings:
        by_rule[f.rule].append(f)
    root = ET.Element("testsuites", name="checker")
    totals = [0, 0, 0]
    for meta in result.rules:
        entities = by_kind.get(meta.on, []) if meta.on else []
        counts = _suite(root, meta, _cases(meta, entities, by_rule.get(meta.id, [])))
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
    root.attrib.update(tests=str(totals[0]), failures=str(totals[1]), errors="0", skipped=str(totals[2]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
