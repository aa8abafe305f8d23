"""`checker rules test`: every rule's examples through the real engine.

A `fail` example must make its rule fire, a `pass` example must not. A rule
without both kinds of example is reported as untested: a rule nobody has
seen fire is a rule nobody knows works.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.evaluate.engine import match
from checker.evaluate.message import MessageError, render_message
from checker.evaluate.rulebook import CompiledRule, flatten, nest


def _cases(rules: Sequence[CompiledRule]) -> list[tuple[int, str, int, dict[str, Any]]]:
    """(rule index, 'fail'|'pass', example number, flat values) for every example."""
    cases = []
    for i, rule in enumerate(rules):
        for label, examples in (("fail", rule.rule.examples.fail), ("pass", rule.rule.examples.pass_)):
            cases += [(i, label, n, flatten(e)) for n, e in enumerate(examples, start=1)]
    return cases


# Rules whose examples go through the engine together. A rule's examples only
# need its own rule: matching every example against every rule made the work
# and durable's memory grow with rules x examples (3,000 rules took 3.4 GB).
# In groups, both grow linearly, and a group is big enough that the rulesets'
# set-up stays small beside the matching (benchmarks/rules_test.py).
GROUP = 100


def _fired(
    rules: Sequence[CompiledRule], cases: Sequence[tuple[int, str, int, dict[str, Any]]]
) -> set[tuple[int, int]]:
    """(rule index, case index) for every rule that fires on one of its own examples."""
    own: dict[int, list[int]] = {}
    for index, case in enumerate(cases):
        own.setdefault(case[0], []).append(index)
    fired: set[tuple[int, int]] = set()
    for start in range(0, len(rules), GROUP):
        group = range(start, min(start + GROUP, len(rules)))
        chosen = [index for i in group for index in own.get(i, [])]
        facts = [(rules[cases[index][0]].rule.on, cases[index][3]) for index in chosen]
        for r, f in match([rules[i] for i in group], facts):
            if cases[chosen[f]][0] == group[r]:
                fired.add((group[r], chosen[f]))
    return fired


def run_rule_tests(rules: Sequence[CompiledRule]) -> tuple[str, bool]:
    cases = _cases(rules)
    fired = _fired(rules, cases)
    problems: dict[int, list[str]] = {i: [] for i in range(len(rules))}
    for fact_index, (i, label, n, values) in enumerate(cases):
        did_fire = (i, fact_index) in fired
        try:
            if did_fire:  # a message is rendered when its rule fires, as in an audit
                render_message(rules[i].template, nest(values))
        except MessageError as exc:
            problems[i].append(f"message fails on {label} example {n}: {exc}")
        if label == "fail" and not did_fire:
            problems[i].append(f"fail example {n} did not fire")
        if label == "pass" and did_fire:
            problems[i].append(f"pass example {n} fired")
    lines = []
    for i, rule in enumerate(rules):
        ex = rule.rule.examples
        if not ex.fail or not ex.pass_:
            problems[i].append("needs at least one fail and one pass example")
        status = "FAIL" if problems[i] else "ok"
        detail = "; ".join(problems[i]) or f"{len(ex.fail)} fail, {len(ex.pass_)} pass"
        lines.append(f"{status:<4} {rule.id} ({detail})  {rule.file}:{rule.src.line}")
    failed = sum(1 for p in problems.values() if p)
    lines.append(f"{len(rules) - failed} passed, {failed} failed")
    return "\n".join(lines) + "\n", failed == 0
