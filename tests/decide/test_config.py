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


# ---------------------------------------------------------------- discovery
def _repo(tmp_path: Path) -> Path:
    """A repository root (a `.git` folder) with inventories two folders down."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "inventories" / "sh1").mkdir(parents=True)
    return tmp_path / "repo"


CONFIGS = {
    "checker.yaml": "fail_on: warning\n",
    ".checker.yaml": "fail_on: warning\n",
    "checker.yml": "fail_on: warning\n",
    ".checker.yml": "fail_on: warning\n",
    "pyproject.toml": '[project]\nname = "inv"\n\n[tool.checker]\nfail_on = "warning"\n',
}


@pytest.mark.parametrize("name", CONFIGS)
def test_each_config_name_is_found_upward_from_the_inventories(tmp_path: Path, name: str) -> None:
    repo = _repo(tmp_path)
    (repo / name).write_text(CONFIGS[name])
    found = find_config([repo / "inventories" / "sh1"])
    assert found == (repo / name).resolve()
    assert load_config(found)[0].fail_on == "warning"


def test_the_nearest_config_wins(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "checker.yaml").write_text("fail_on: info\n")
    (repo / "inventories" / ".checker.yaml").write_text("fail_on: warning\n")
    assert find_config([repo / "inventories" / "sh1"]) == (repo / "inventories" / ".checker.yaml").resolve()
    assert find_config([repo / "inventories" / "sh1" / "servers.yaml"]) == find_config([repo / "inventories"])


def test_the_search_stops_at_the_repository_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    (tmp_path / "checker.yaml").write_text("fail_on: info\n")  # outside the repository: not its config
    monkeypatch.chdir(repo)
    assert find_config([repo / "inventories"]) is None
    (repo / ".git").rmdir()
    (repo / ".git").write_text("gitdir: elsewhere\n")  # a worktree's or submodule's .git is a file
    assert find_config([repo / "inventories"]) is None


def test_a_pyproject_without_a_checker_table_is_passed_over(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "inventories" / "pyproject.toml").write_text('[tool.ruff]\nline-length = 100\n')
    (repo / "checker.yaml").write_text("fail_on: info\n")
    assert find_config([repo / "inventories"]) == (repo / "checker.yaml").resolve()


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (("checker.yaml", ".checker.yaml"),
         "checker.yaml and .checker.yaml are both checker configs; keep one"),
        (("checker.yml", "pyproject.toml"),
         "checker.yml and pyproject.toml [tool.checker] are both checker configs; keep one"),
    ],
)
def test_two_configs_in_one_folder_are_an_error_not_a_choice(
    tmp_path: Path, names: tuple[str, ...], message: str
) -> None:
    repo = _repo(tmp_path)
    for name in names:
        (repo / name).write_text(CONFIGS[name])
    with pytest.raises(UserError) as exc:
        find_config([repo / "inventories"])
    assert list(exc.value.lines) == [f"{repo.as_posix()}: {message}"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[tool.checker]\nfail_on = "warnings"\n',
         "2:11: fail_on: Input should be 'error', 'warning' or 'info' (got 'warnings')"),
        ('[tool.checker]\nselect = ["*"]\n  fial_on = "error"\n',
         "3:3: unknown field 'fial_on' (did you mean 'fail_on'?)"),
        ('[tool.checker]\nheadroom_pct = 100\n',
         "2:16: headroom_pct: Input should be less than 100 (got 100)"),
        ('[tool.checker.severity]\n"power.*" = "fatal"\n',
         "2:13: severity.power.*: Input should be 'error', 'warning' or 'info' (got 'fatal')"),
        ('[tool.checker.netbox]\ncustom_fields = {a = "gpu.modle"}\n',
         "2:17: netbox.custom_fields.a: Input should be"),
        ('[tool]\nchecker.max_per_rule = -1\n',
         "2:24: max_per_rule: Input should be greater than or equal to 0 (got -1)"),
        ("[tool]\nchecker = 3\n", "1:1: tool.checker must be a table of settings"),
        ('[tool.checker]\nfail_on = \n', "2:11: invalid TOML: Invalid value"),
    ],
    ids=["value", "unknown-key", "number", "subtable", "inline-table", "dotted-key", "not-a-table", "toml"],
)
def test_a_pyproject_config_error_names_file_line_column(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(UserError) as exc:
        load_config(tmp_path / "pyproject.toml")
    (line,) = exc.value.lines
    assert line.startswith(f"{(tmp_path / 'pyproject.toml').as_posix()}:{message}"), line


def test_a_pyproject_config_reads_like_checker_yaml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.checker]\nselect = ["power.*", "support.*"]\nignore = ["support.level-24x7"]\n'
        'rules = ["policies"]\n\n[tool.checker.severity]\n"power.rack-*" = "warning"\n'
    )
    config, where = load_config(tmp_path / "pyproject.toml")
    s = settings(config, where, select=[], ignore=[], fail_on=None, rule_dirs=[])
    assert (s.select, s.ignore, s.severity) == (
        ("power.*", "support.*"), ("support.level-24x7",), (("power.rack-*", "warning"),))
    assert s.rule_dirs == (tmp_path / "policies",)
    shown = (tmp_path / "pyproject.toml").as_posix()
    assert config.position("select", 1) == f"{shown}:2:10"
    assert config.position("severity", "power.rack-*", key=True) == f"{shown}:7:1"
