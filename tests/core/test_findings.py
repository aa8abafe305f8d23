from __future__ import annotations

import dataclasses

import pytest

from checker.core.findings import CATEGORIES, SEVERITIES, SEVERITY_RANK, Finding, Location, located


def test_findings_are_immutable_and_relabelled_by_copy() -> None:
    f = located("power.x", "power", Location("a.yaml", 3, 5), "m", severity="warning")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.severity = "error"  # type: ignore[misc]
    assert f.with_waived().waived and not f.waived
    assert f.with_severity("info").severity == "info" and f.severity == "warning"


def test_sort_key_orders_by_place_then_rule() -> None:
    a = Finding("b.rule", "error", "power", "e", "m", "r", "a.yaml", 2, 1)
    b = Finding("a.rule", "error", "power", "e", "m", "r", "a.yaml", 10, 1)
    c = Finding("a.rule", "error", "power", "e", "m", "r", "a.yaml", 2, 1)
    assert sorted([a, b, c], key=Finding.sort_key) == [c, a, b]


def test_contract_vocabularies() -> None:
    assert SEVERITIES == ("error", "warning", "info")
    assert SEVERITY_RANK["error"] > SEVERITY_RANK["warning"] > SEVERITY_RANK["info"]
    assert CATEGORIES == (
        "schema",
        "power",
        "cooling",
        "space",
        "weight",
        "pue",
        "compatibility",
        "support",
        "workload-fit",
        "waiver",
        "config",  # checker diff's config.weakened (added; the contract only ever extends)
    )
