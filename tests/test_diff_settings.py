"""`checker diff` says where the change's own settings check less than the base's.

Both trees are audited with the change's checker.yaml, so a pull request that
ignores the rules (or adds a checker.yaml of its own nearer the inventories,
which wins) made both trees quiet alike and the diff passed with nothing
said. Each weakening is now a new `config.weakened` warning at its line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.evaluate.rulebook import load_rulebook
from tests.conftest import AS_OF, CliRunner
from tests.gitrepo import add_two, git

PASS_LINE = "checker diff: {new} new, 0 worsened, 0 resolved, 0 waived, 0 capacity changes: pass"


def _commit_config(repo: Path, text: str, name: str = "checker.yaml") -> None:
    (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")


def _own_rules(repo: Path) -> None:
    """A team's rule folder, `own/`, with one rule of its own."""
    (repo / "own").mkdir()
    (repo / "own" / "r.yaml").write_text(
        "rules:\n  - {id: acme.big, title: t, category: power, severity: warning, on: server,"
        " when: 'peak_w > 1000000', message: m, remediation: r}\n"
    )


def _weakened(run_lines: list[str]) -> list[str]:
    return [line.strip() for line in run_lines if "config.weakened" in line]


@pytest.mark.parametrize(
    ("base", "head", "expected"),
    [
        # The rules turned off: every rule but the input checks and this one.
        ("", 'ignore: ["power.*"]\n', "checker.yaml:1:1: warning config.weakened the change stops"),
        ("fail_on: warning\n", "fail_on: error\n",
         "checker.yaml:1:1: warning config.weakened the change raises fail_on from warning to error, "
         "against the base's checker.yaml"),
        ("", "headroom_pct: 0\n",
         "checker.yaml:1:1: warning config.weakened the change loosens headroom_pct from 10 to 0, "
         "against the base's defaults (it had no checker.yaml)"),
        ("", "support_level: nbd\n",
         "checker.yaml:1:1: warning config.weakened the change loosens support_level from 24x7 to nbd"),
        ("", "support_horizon_days: 30\n", "loosens support_horizon_days from 365 to 30"),
        ("", "large_model_params_b: 500\n", "loosens large_model_params_b from 1 to 500"),
        ("rules: [own]\n", "",
         "checker.yaml:1:1: warning config.weakened the change no longer reads the rule folders own"),
        ("", 'severity: {"power.rack-capacity": warning}\n',
         "checker.yaml:1:1: warning config.weakened the change lowers the severity of 1 rules: "
         "power.rack-capacity (error -> warning), against the base's defaults (it had no checker.yaml)"),
    ],
)
def test_each_weakening_is_a_new_warning_at_its_line(
    repo: Path, cli: CliRunner, base: str, head: str, expected: str
) -> None:
    _own_rules(repo)
    if base:
        _commit_config(repo, base)
    (repo / "checker.yaml").write_text(head)
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 0, run.lines
    (line,) = _weakened(run.lines)
    assert expected in line, line
    assert PASS_LINE.format(new=1) in run.lines


@pytest.mark.parametrize(
    ("base", "head"),
    [
        ("", ""),  # no config either side
        ("fail_on: error\n", "fail_on: warning\n"),  # stricter
        ('ignore: ["power.*"]\n', 'ignore: ["power.rack-*"]\n'),  # runs more
        ("headroom_pct: 10\n", "headroom_pct: 20\n"),
        ('severity: {"power.rack-capacity": warning}\n', ""),  # back to the rule's own, error
        ("rules: [./own]\n", "rules: [own]\n"),  # the same folder, written another way
    ],
)
def test_settings_that_check_as_much_or_more_say_nothing(
    repo: Path, cli: CliRunner, base: str, head: str
) -> None:
    _own_rules(repo)
    if base:
        _commit_config(repo, base)
    (repo / "checker.yaml").write_text(head)
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert _weakened(run.lines) == [] and run.code in (0, 1), run.lines  # 1: fail_on warning, stricter


def test_a_config_of_its_own_beside_the_inventories_is_judged_against_the_base(
    repo: Path, cli: CliRunner
) -> None:
    # The repository's checker.yaml fails on warnings; the change adds inv/checker.yaml
    # (the nearest config wins) that ignores every rule and an overloaded rack.
    _commit_config(repo, "fail_on: warning\n")
    (repo / "inv" / "checker.yaml").write_text('ignore: ["*"]\n')
    add_two(repo, "H01")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--fail-on-new")
    weak = _weakened(run.lines)
    assert [w.split(" config.weakened ")[0] for w in weak] == [
        "inv/checker.yaml:1:1: warning",  # the rules stopped
        "inv/checker.yaml:1:1: warning",  # fail_on back to its default, error
    ]
    (stops,) = [w for w in weak if "the change stops" in w]
    judged = [m for m in load_rulebook([]).metadata() if m.category != "schema" and m.id != "config.weakened"]
    assert f"the change stops {len(judged)} rules the base ran: " in stops, stops  # every one of them
    assert any("raises fail_on from warning to error" in w for w in weak)
    # The change's own settings cannot hide what judges them.
    assert run.code == 0  # fail_on is error there: the warnings are shown, not failed
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--fail-on-new", "--fail-on", "warning")
    assert run.code == 1


def test_the_json_and_the_comment_carry_it(repo: Path, cli: CliRunner, tmp_path: Path) -> None:
    (repo / "checker.yaml").write_text('ignore: ["power.*"]\n')
    md, js = tmp_path / "c.md", tmp_path / "c.json"
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", f"markdown:{md}", "--format", f"json:{js}")
    assert run.code == 0
    new = json.loads(js.read_text())["new"]
    assert [f["rule"] for f in new] == ["config.weakened"]
    assert new[0]["file"] == "checker.yaml" and new[0]["line"] == 1
    assert "config.weakened" in md.read_text()


def test_a_broken_base_config_is_judged_by_the_defaults(repo: Path, cli: CliRunner) -> None:
    _commit_config(repo, "fail_on: sometimes\n")
    (repo / "checker.yaml").write_text("headroom_pct: 0\n")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    (line,) = _weakened(run.lines)
    assert line.endswith("against the base's checker.yaml (not valid there, so its defaults)"), line


def test_the_change_cannot_ignore_what_judges_it(repo: Path, cli: CliRunner) -> None:
    (repo / "checker.yaml").write_text('ignore: ["config.weakened", "power.*"]\n')
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    (line,) = _weakened(run.lines)
    assert "the change stops" in line and "config.weakened," not in line


# ---------------------------------------------------------------- the team's own rules
OWN_RULE = ("rules:\n  - {{id: acme.big, title: t, category: power, severity: {severity}, on: server,"
            " when: '{when}', message: m, remediation: r}}\n")


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (OWN_RULE.format(severity="warning", when="peak_w > 2000000"),
         "own/r.yaml:2:5: warning config.weakened the change edits rule acme.big: its condition, "
         "'peak_w > 1000000' -> 'peak_w > 2000000'; both trees are audited with the new rule"),
        (OWN_RULE.format(severity="info", when="peak_w > 1000000"),
         "own/r.yaml:2:5: warning config.weakened the change edits rule acme.big: its severity, "
         "warning -> info"),
        ("rules: []\n",
         "checker.yaml:1:1: warning config.weakened the change removes 1 of the team's rules: acme.big, "
         "which the base's rule folders hold"),
        (OWN_RULE.format(severity="error", when="peak_w > 1000000"), None),  # stricter: nothing to say
    ],
)
def test_an_edit_to_the_teams_own_rules_is_said(
    repo: Path, cli: CliRunner, head: str, expected: str | None
) -> None:
    _own_rules(repo)
    _commit_config(repo, "rules: [own]\n")
    (repo / "own" / "r.yaml").write_text(head)
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    weak = _weakened(run.lines)
    if expected is None:
        assert weak == [], weak
    else:
        (line,) = weak
        assert line.startswith(expected), line


def test_a_setting_is_placed_at_its_own_line(repo: Path, cli: CliRunner) -> None:
    (repo / "checker.yaml").write_text("# the team's policy\nheadroom_pct: 0\n")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    (line,) = _weakened(run.lines)
    assert line.startswith("checker.yaml:2:1: warning config.weakened the change loosens headroom_pct"), line


def test_a_nearer_config_naming_the_same_folder_name_reads_another_folder(repo: Path, cli: CliRunner) -> None:
    """`rules: [own]` is relative to its config: at the base the root's checker.yaml
    read `own/`; the change's inv/checker.yaml, nearer the inventories, reads `inv/own`."""
    _own_rules(repo)
    _commit_config(repo, "rules: [own]\n")
    (repo / "inv" / "checker.yaml").write_text("rules: [own]\n")
    (repo / "inv" / "own").mkdir()
    rule = (repo / "own" / "r.yaml").read_text()
    (repo / "inv" / "own" / "r.yaml").write_text(rule.replace("acme.big", "acme.other"))
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    (line,) = _weakened(run.lines)
    assert line.startswith("inv/checker.yaml:1:1: warning config.weakened the change no longer reads the rule"
                           " folders own,"), line


def test_a_config_outside_the_repository_is_the_same_on_both_sides(
    repo: Path, cli: CliRunner, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "checker.yaml"
    outside.write_text("headroom_pct: 0\n")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--config", str(outside))
    assert run.code == 0 and _weakened(run.lines) == [], (run.code, run.err, run.lines)


@pytest.mark.parametrize(
    ("name", "text"),
    [(".checker.yaml", "fail_on: error\n"), ("pyproject.toml", "[tool.checker\n")],
)
def test_a_base_whose_config_cannot_be_found_is_judged_by_the_defaults(
    repo: Path, cli: CliRunner, name: str, text: str
) -> None:
    """Two configs in one folder, or a pyproject.toml that is not TOML: the search
    itself fails at the base; the change, which fixed it, is judged by the defaults."""
    (repo / "checker.yaml").write_text("headroom_pct: 0\n")
    _commit_config(repo, text, name)
    git(repo, "rm", "-q", name)
    git(repo, "commit", "-qm", "fixed")
    run = cli("diff", "--base", "HEAD~1", "inv", *AS_OF)
    (line,) = _weakened(run.lines)
    assert line.endswith("against the base's config (not valid there, so its defaults)"), line


TEAM_MODEL = """\
kind: ServerModels
servers:
  - name: acme-box
    description: the team's own server
    source: https://example.com/acme-box
    u_height: 4
    power_w: {max: %d}
"""


def test_an_edited_knowledge_document_of_the_team_is_reported(repo: Path, cli: CliRunner) -> None:
    """A catalog figure in the team's rule folder (a server model's draw) changes the
    base's findings as much as the head's: both trees are audited with the change's."""
    _own_rules(repo)
    (repo / "own" / "models.yaml").write_text(TEAM_MODEL % 10200)
    _commit_config(repo, "rules: [own]\n")
    assert _weakened(cli("diff", "--base", "HEAD", "inv", *AS_OF).lines) == []  # nothing edited yet
    (repo / "own" / "models.yaml").write_text(TEAM_MODEL % 5700)
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    (line,) = _weakened(run.lines)
    assert line.startswith("own/models.yaml:1:1: warning config.weakened the change edits the knowledge"
                           " documents of the team's rule folders (1 new or changed, 1 removed)"), line
