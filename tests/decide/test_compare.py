"""Worsened findings: a new one that replaces a less severe one of its entity and category."""

from __future__ import annotations

import pytest

from checker.core.findings import Finding
from checker.decide.compare import worsened


def _f(
    rule: str, severity: str, entity: str = "rack/f/R1", category: str = "power", waived: bool = False
) -> Finding:
    message = f"{rule} on {entity}"
    return Finding(rule, severity, category, entity, message, "", "a.yaml", 1, 1, waived)  # type: ignore[arg-type]


HEADROOM = _f("power.rack-headroom", "warning")
CAPACITY = _f("power.rack-capacity", "error")


@pytest.mark.parametrize(
    ("new", "resolved", "pairs"),
    [
        ([CAPACITY], [HEADROOM], [("power.rack-capacity", "power.rack-headroom")]),  # warning -> error
        ([CAPACITY], [_f("cooling.rack-headroom", "warning", category="cooling")], []),  # another category
        ([CAPACITY], [_f("power.rack-headroom", "warning", entity="rack/f/R2")], []),  # another entity
        ([_f("power.rack-headroom", "warning")], [_f("power.rack-capacity", "error")], []),  # it eased
        ([_f("power.x", "warning")], [_f("power.y", "warning")], []),  # as severe as before
        ([_f("power.rack-capacity", "error", waived=True)], [HEADROOM], []),  # waived: not blocking
        ([_f("schema.reference", "error", entity="", category="schema")],
         [_f("schema.invalid", "warning", entity="", category="schema")], []),  # no entity: no pairing
        # Two new errors, one warning gone: one of them worsened it, the other is new.
        ([_f("power.b", "error"), _f("power.a", "error")], [HEADROOM], [("power.a", "power.rack-headroom")]),
        # An info and a warning gone, one new error: it replaces the least severe.
        ([CAPACITY], [HEADROOM, _f("power.i", "info")], [("power.rack-capacity", "power.i")]),
    ],
)  # fmt: skip
def test_worsened(new: list[Finding], resolved: list[Finding], pairs: list[tuple[str, str]]) -> None:
    assert [(w.finding.rule, w.was.rule) for w in worsened(new, resolved)] == pairs
