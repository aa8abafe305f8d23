from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from checker.decide import (
    Config,
    apply_waivers,
    cap_per_rule,
    check_selection,
    find_config,
    load_config,
    override_severity,
    settings,
    verdict,
)
from checker.errors import UserError
from checker.findings import Finding
from checker.inventory.loader import Placed
from checker.inventory.models import Waiver
from checker.inventory.source import Src

AS_OF = dt.date(2027, 1, 15)


def _finding(
    rule: str = "power.rack-capacity",
    severity: str = "error",
    entity: str = "rack/f/A",
    category: str = "power",
) -> Finding:
    return Finding(rule, severity, category, entity, "m", "r", "f.yaml", 3, 5)  # type: ignore[arg-type]


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
    out = _apply([_finding(), _finding(entity="rack/f/B")], [_waiver()])
    assert [(f.entity, f.waived) for f in out] == [("rack/f/A", True), ("rack/f/B", False)]


def test_expired_waiver_waives_nothing_and_is_an_error() -> None:
    out = _apply([_finding()], [_waiver(expires="2027-01-14")])
    assert out[0].waived is False
    assert (out[1].rule, out[1].severity, out[1].line, out[1].column) == ("waiver.expired", "error", 6, 14)


def test_waiver_expiring_on_the_day_still_waives() -> None:
    out = _apply([_finding()], [_waiver(expires="2027-01-15")])
    assert out[0].waived and [f.rule for f in out[1:]] == ["waiver.expiring"]


def test_unused_waiver_is_a_warning() -> None:
    out = _apply([], [_waiver()])
    assert [(f.rule, f.severity) for f in out] == [("waiver.unused", "warning")]


def test_unused_waiver_of_an_unselected_rule_is_not_reported() -> None:
    assert apply_waivers([], [_waiver()], AS_OF, ["support.missing"], KNOWN) == []


def test_waiver_of_unknown_rule_is_a_schema_error_with_suggestion() -> None:
    (f,) = _apply([], [_waiver(rule="power.rack-capacty")])
    assert f.category == "schema" and "did you mean 'power.rack-capacity'" in f.message


def test_schema_findings_are_never_waived_or_downgraded() -> None:
    schema = _finding(rule="schema.invalid", category="schema")
    assert override_severity([schema], [("*", "info")]) == [schema]


@pytest.mark.parametrize(
    ("severities", "fail_on", "expected"),
    [
        ([], "error", ("pass", 0)),
        (["warning"], "error", ("pass", 0)),
        (["warning"], "warning", ("fail", 1)),
        (["info"], "warning", ("pass", 0)),
        (["info"], "info", ("fail", 1)),
        (["error"], "error", ("fail", 1)),
    ],
)
def test_verdict_threshold(severities: list[str], fail_on: str, expected: tuple[str, int]) -> None:
    v = verdict([_finding(severity=s) for s in severities], fail_on)  # type: ignore[arg-type]
    assert (v.verdict, v.exit_code) == expected


def test_waived_findings_do_not_fail_and_are_counted() -> None:
    v = verdict([_finding().with_waived()], "error")
    assert (v.verdict, v.exit_code, v.counts["waived"], v.counts["error"]) == ("pass", 0, 1, 0)


def test_schema_findings_exit_2() -> None:
    assert verdict([_finding(rule="schema.yaml", category="schema")], "error").exit_code == 2


def test_config_file_beside_inventories(tmp_path: Path) -> None:
    inv = tmp_path / "inventories"
    inv.mkdir()
    (tmp_path / "checker.yaml").write_text("fail_on: warning\nignore: [support.*]\nrules: [policies]\n")
    path = find_config([inv])
    assert path == (tmp_path / "checker.yaml").resolve()
    config, where = load_config(path)
    s = settings(config, where, select=[], ignore=["x.*"], fail_on=None, rule_dirs=[])
    assert s.fail_on == "warning" and s.ignore == ("support.*", "x.*") and s.select == ("*",)
    assert s.rule_dirs == (tmp_path.resolve() / "policies",)


def test_command_line_overrides_config() -> None:
    s = settings(
        Config(select=["power.*"], fail_on="warning"),
        None,
        select=["support.*"],
        ignore=[],
        fail_on="info",
        rule_dirs=[],
    )
    assert s.select == ("support.*",) and s.fail_on == "info"


def test_invalid_config_names_file_line_column(tmp_path: Path) -> None:
    (tmp_path / "checker.yaml").write_text("fail_on: warning\nfial_on: error\n")
    with pytest.raises(UserError) as exc:
        load_config(tmp_path / "checker.yaml")
    assert exc.value.lines[0].endswith("checker.yaml:2:1: unknown field 'fial_on' (did you mean 'fail_on'?)")


@pytest.mark.parametrize(("limit", "shown", "truncated"), [
    (0, 5, {}),
    (3, 4, {"a.x": 1}),
    (1, 2, {"a.x": 3}),
    (10, 5, {}),
])
def test_cap_per_rule_keeps_the_first_of_each_rule(limit: int, shown: int, truncated: dict[str, int]) -> None:
    findings = [_finding(rule="a.x", entity=f"rack/f/{i}") for i in range(4)] + [_finding(rule="b.y")]
    kept, cut = cap_per_rule(findings, limit)
    assert (len(kept), cut) == (shown, truncated)
    assert kept == [f for f in findings if f in kept]  # order kept


@pytest.mark.parametrize(("config", "select", "ignore", "lines"), [
    (Config(), [], [], []),
    (Config(), ["power.*"], ["support.missing"], []),
    (Config(), ["power.rack-capacty"], [],
     ["checker: --select 'power.rack-capacty' matches no rule (did you mean 'power.rack-capacity'?)"]),
    (Config(), [], ["nope.*"], ["checker: --ignore 'nope.*' matches no rule"]),
    (Config(severity={"x.*": "info"}), [], [], ["checker: severity 'x.*' matches no rule"]),
])
def test_every_glob_must_match_a_rule(
    config: Config, select: list[str], ignore: list[str], lines: list[str]
) -> None:
    known = ["power.rack-capacity", "support.missing", "schema.yaml"]
    cfg = settings(config, None, select=select, ignore=ignore, fail_on=None, rule_dirs=[])
    if not lines:
        check_selection(cfg, known)
        return
    with pytest.raises(UserError) as exc:
        check_selection(cfg, known)
    assert list(exc.value.lines) == lines


def test_config_globs_are_located(tmp_path: Path) -> None:
    (tmp_path / "checker.yaml").write_text("select:\n  - power.*\n  - suport.*\n")
    config, where = load_config(tmp_path / "checker.yaml")
    cfg = settings(config, where, select=[], ignore=[], fail_on=None, rule_dirs=[])
    with pytest.raises(UserError) as exc:
        check_selection(cfg, ["power.rack-capacity", "support.missing"])
    assert exc.value.lines[0].endswith(
        "checker.yaml:3:5: select 'suport.*' matches no rule (did you mean 'support.missing'?)"
    )
