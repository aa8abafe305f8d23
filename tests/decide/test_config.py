"""checker.yaml and the command line: discovery, validation, overrides, globs that match nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.core.errors import UserError
from checker.decide.config import Config, check_selection, find_config, load_config, policy_in, settings


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


def test_policy_thresholds_reach_the_settings(tmp_path: Path) -> None:
    (tmp_path / "checker.yaml").write_text("large_model_params_b: 7\nheadroom_pct: 20\n")
    config, where = load_config(tmp_path / "checker.yaml")
    s = settings(config, where, select=[], ignore=[], fail_on=None, rule_dirs=[])
    assert (s.large_model_params_b, s.headroom_pct) == (7, 20)
    defaults = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    assert (defaults.large_model_params_b, defaults.headroom_pct) == (1, 10)


@pytest.mark.parametrize(("text", "message"), [
    ("headroom_pct: 100\n", "1:15: headroom_pct: Input should be less than 100 (got 100)"),
    ("headroom_pct: -1\n", "1:15: headroom_pct: Input should be greater than or equal to 0 (got -1)"),
    ("large_model_params_b: 0\n", "1:23: large_model_params_b: Input should be greater than 0 (got 0)"),
    ("large_model_params_b: yes\n", "1:23: large_model_params_b: Input should be a valid number (got True)"),
])
def test_policy_thresholds_are_validated(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "checker.yaml").write_text(text)
    with pytest.raises(UserError) as exc:
        load_config(tmp_path / "checker.yaml")
    assert list(exc.value.lines) == [f"{tmp_path / 'checker.yaml'}:{message}"]


def test_policy_a_rule_reads() -> None:
    when = "utilization_pct >= 100 - headroom_pct and load_kw <= capacity_kw"
    assert policy_in(when, Config()) == [("headroom_pct", 10, "default")]
    assert policy_in(when, Config(headroom_pct=15)) == [("headroom_pct", 15, "config")]
    assert policy_in("load_kw > capacity_kw", Config()) == []


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
