"""checker.yaml and the command line: discovery, validation, overrides, globs that match nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.core.errors import UserError
from checker.decide.config import Config, check_selection, find_config, load_config, settings


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
