"""Waivers: exact and glob matches, expiry, expiring soon, unused, unknown rules."""

from __future__ import annotations

import datetime as dt
import fnmatch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.core.findings import Finding
from checker.decide.waivers import apply_waivers
from checker.load.build import Placed
from checker.load.models import Waiver
from checker.source.parse import Src
from tests.helpers import finding

AS_OF = dt.date(2027, 1, 15)




def _waiver(
    rule: str = "power.rack-capacity", entity: str = "rack/f/A", expires: str = "2027-03-31"
) -> Placed[Waiver]:
    w = Waiver(
        rule=rule, entity=entity, reason="ticket DC-1", owner="ops", expires=dt.date.fromisoformat(expires)
    )
    return Placed(w, "w.yaml", Src(2, 5, children={"expires": Src(6, 14)}, keys={"expires": (6, 5)}))


KNOWN = ["power.rack-capacity", "support.missing", "waiver.unused", "waiver.expired", "waiver.expiring"]


def _apply(findings: list[Finding], waivers: list[Placed[Waiver]]) -> list[Finding]:
    return apply_waivers(findings, waivers, AS_OF, KNOWN, KNOWN)


def test_active_waiver_marks_the_matching_finding_only() -> None:
    out = _apply([finding(), finding(entity="rack/f/B")], [_waiver()])
    assert [(f.entity, f.waived) for f in out] == [("rack/f/A", True), ("rack/f/B", False)]


def test_expired_waiver_waives_nothing_and_is_an_error() -> None:
    out = _apply([finding()], [_waiver(expires="2027-01-14")])
    assert out[0].waived is False
    assert (out[1].rule, out[1].severity, out[1].line, out[1].column) == ("waiver.expired", "error", 6, 14)


def test_waiver_expiring_on_the_day_still_waives() -> None:
    out = _apply([finding()], [_waiver(expires="2027-01-15")])
    assert out[0].waived and [f.rule for f in out[1:]] == ["waiver.expiring"]


def test_unused_waiver_is_a_warning() -> None:
    out = _apply([], [_waiver()])
    assert [(f.rule, f.severity) for f in out] == [("waiver.unused", "warning")]


def test_unused_waiver_of_an_unselected_rule_is_not_reported() -> None:
    assert apply_waivers([], [_waiver()], AS_OF, ["support.missing"], KNOWN) == []


def test_waiver_of_unknown_rule_is_a_schema_error_with_suggestion() -> None:
    (f,) = _apply([], [_waiver(rule="power.rack-capacty")])
    assert f.category == "schema" and "did you mean 'power.rack-capacity'" in f.message


@pytest.mark.parametrize(
    ("rule", "entity", "waived"),
    [
        ("power.rack-capacity", "rack/f/A", True),
        ("power.*", "rack/f/A", True),
        ("power.rack-capacity", "rack/f/*", True),
        ("power.rack-capacity", "rack/f/A?", False),
        ("support.*", "rack/f/A", False),
        ("power.rack-capacity", "rack/g/*", False),
    ],
)
def test_rule_and_entity_globs(rule: str, entity: str, waived: bool) -> None:
    out = _apply([finding()], [_waiver(rule=rule, entity=entity)])
    assert out[0].waived is waived


def test_one_glob_waiver_covers_many_entities_and_is_used() -> None:
    findings = [finding(entity=f"rack/sh1/A0{i}") for i in range(1, 4)] + [finding(entity="rack/sh1/B01")]
    out = _apply(findings, [_waiver(entity="rack/sh1/A0*")])
    assert [f.waived for f in out] == [True, True, True, False]


@pytest.mark.parametrize(
    ("expires", "rules"),
    [
        ("2027-01-15", ["waiver.expiring"]),  # the last day it waives
        ("2027-02-14", ["waiver.expiring"]),  # 30 days after --as-of
        ("2027-02-15", []),
        ("2027-01-14", ["waiver.expired"]),
    ],
)
def test_expiring_within_30_days_is_a_warning(expires: str, rules: list[str]) -> None:
    out = _apply([finding()], [_waiver(expires=expires)])
    extra = [f for f in out if f.category == "waiver"]
    assert [f.rule for f in extra] == rules
    assert all(f.severity == ("error" if f.rule == "waiver.expired" else "warning") for f in extra)


def test_a_rule_glob_that_matches_no_rule_is_a_schema_error() -> None:
    out = _apply([finding()], [_waiver(rule="powr.*")])
    assert [(f.rule, f.category) for f in out if not f.waived][-1] == ("schema.reference", "schema")


# Patterns over a small alphabet, so that exact names, `*`, `?` and `[...]` globs meet.
_PATTERN = st.text(alphabet="ab*?[]/", min_size=1, max_size=5)
_NAME = st.text(alphabet="ab/", min_size=1, max_size=4)


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(
    patterns=st.lists(st.tuples(_PATTERN, _PATTERN), min_size=1, max_size=8),
    names=st.lists(st.tuples(_NAME, _NAME), min_size=1, max_size=8),
)
def test_the_waiver_index_waives_what_fnmatch_matches(
    patterns: list[tuple[str, str]], names: list[tuple[str, str]]
) -> None:
    # The index looks up exact waivers and tries only the globs; the result is
    # fnmatchcase's over every waiver and finding, as the docs promise.
    waivers = [_waiver(rule=r, entity=e) for r, e in patterns]
    findings = [finding(rule=r, entity=e) for r, e in names]
    out = apply_waivers(findings, waivers, AS_OF, [], [])
    expected = [
        any(fnmatch.fnmatchcase(r, w.value.rule) and fnmatch.fnmatchcase(e, w.value.entity) for w in waivers)
        for r, e in names
    ]
    assert [f.waived for f in out[: len(findings)]] == expected
    unused = [f for f in out[len(findings) :] if f.rule == "waiver.unused"]
    assert unused == []  # nothing selected, so no unused-waiver finding either way
