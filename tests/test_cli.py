"""The CLI contract (docs/architecture.md "CLI", "JSON output"): exact text, exit codes, JSON.

Exit codes: 0 pass; 1 findings at or above --fail-on; 2 invalid input or usage;
3 internal error. Every audit passes --as-of so dates are deterministic.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from checker import __version__
from checker.cli import BUG_HINT
from checker.derive.facts import REGISTRY
from checker.derive.knowledge import TABLE_KINDS
from checker.load.build import KINDS
from tests.conftest import AS_OF, FIXTURES, MINIMAL, CliRunner, Writer, summary

REPO = Path(__file__).resolve().parent.parent

# 12:5 is the `feeds` key of rack R01 (the rule locates `feeds`); 16:15 the `level` key of s2's support.
RACK = ("overload/facility.yaml:12:5: error power.rack-capacity "
        "rack f1/R01 draws 7 kW, over its 5.9 kW 2N feed capacity")
# The text format counts findings by rule before the verdict line.
BY_RULE = "\nfindings by rule:\n  1 error   power.rack-capacity\n  1 warning support.level-24x7\n"
NBD = ("overload/servers.yaml:16:15: warning support.level-24x7 "
       "server s2 has nbd support; the rollout expects 24x7")


# ---------------------------------------------------------------- exit 0 / 1 and the text format
def test_minimal_inventory_passes(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "minimal", *AS_OF)
    assert (run.code, run.out, run.err) == (0, summary(verdict="pass") + "\n", "")


def test_rack_over_capacity_fails_with_exit_1(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "overload", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.out == f"{RACK}\n{NBD}\n{BY_RULE}{summary(error=1, warning=1)}\n"


@pytest.mark.parametrize("quiet", ["--quiet", "-q"])
def test_quiet_prints_the_summary_line_only(cli: CliRunner, in_fixtures: Path, quiet: str) -> None:
    run = cli("audit", "overload", *AS_OF, quiet)
    assert (run.code, run.out, run.err) == (1, summary(error=1, warning=1) + "\n", "")


def test_quiet_leaves_the_other_formats_whole(cli: CliRunner, in_fixtures: Path, tmp_path: Path) -> None:
    run = cli("audit", "overload", *AS_OF, "--quiet", "--format", f"json:{tmp_path / 'a.json'}")
    assert (run.code, run.out) == (1, "")
    assert len(json.loads((tmp_path / "a.json").read_text())["findings"]) == 2


@pytest.mark.parametrize(
    ("formats", "first", "second"),
    [
        (("text", "json"), "text", "json"),
        (("json", "sarif:-", "junit:out.xml"), "json", "sarif"),
        (("github", "markdown:/dev/stdout"), "github", "markdown"),
    ],
)
@pytest.mark.parametrize("command", ["audit", "diff"])
def test_two_formats_to_standard_output_are_refused(
    cli: CliRunner, in_fixtures: Path, formats: tuple[str, ...], first: str, second: str, command: str
) -> None:
    """They would interleave: a JSON object among text lines parses as neither."""
    base = ("--base", "HEAD") if command == "diff" else ()
    run = cli(command, "overload", *AS_OF, *base, *(a for f in formats for a in ("--format", f)))
    assert (run.code, run.out) == (2, "")
    assert run.err == (
        f"checker: --format {first} and --format {second} would both write to standard output;"
        f" give all but one a file (--format {second}:FILE)\n"
    )
    assert not (in_fixtures / "out.xml").exists()


def test_glob_waiver_covers_a_row(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "overload", "waivers/glob.yaml", *AS_OF)
    expected = [f"{RACK} [waived]", NBD, summary(warning=1, waived=1, verdict="pass")]
    assert (run.code, run.lines, run.err) == (0, expected, "")


def test_glob_waiver_that_matches_no_entity_is_an_input_error(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "overload", "waivers/glob-nothing.yaml", *AS_OF)
    assert run.code == 2
    where = "waivers/glob-nothing.yaml:4:13: error schema.reference"
    assert f"{where} waiver names unknown entity 'rack/f1/Z*'" in run.out


@pytest.mark.parametrize(("waiver", "code", "expected"), [
    pytest.param("waivers/active.yaml", 0, [
        f"{RACK} [waived]", NBD, summary(warning=1, waived=1, verdict="pass"),
    ], id="active"),
    pytest.param("waivers/expiring.yaml", 0, [
        f"{RACK} [waived]", NBD,
        "waivers/expiring.yaml:7:14: warning waiver.expiring waiver for power.rack-capacity on rack/f1/R01 "
        "expires on 2027-02-01, within 30 days",
        summary(warning=2, waived=1, verdict="pass"),
    ], id="expiring-within-30-days"),
    pytest.param("waivers/expired.yaml", 1, [
        RACK, NBD,
        "waivers/expired.yaml:7:14: error waiver.expired waiver for power.rack-capacity on rack/f1/R01 "
        "expired on 2027-01-01; the finding is no longer waived",
        summary(error=2, warning=1),
    ], id="expired"),
])
def test_waivers(cli: CliRunner, in_fixtures: Path, waiver: str, code: int, expected: list[str]) -> None:
    run = cli("audit", "overload", waiver, *AS_OF)
    assert (run.code, run.lines, run.err) == (code, expected, "")


UNUSED = ("waivers/active.yaml:3:5: warning waiver.unused waiver for power.rack-capacity on rack/f1/R01 "
          "matches no finding")


@pytest.mark.parametrize(("fail_on", "code", "verdict"), [
    ((), 0, "pass"),
    (("--fail-on", "error"), 0, "pass"),
    (("--fail-on", "warning"), 1, "fail"),
    (("--fail-on", "info"), 1, "fail"),
])
def test_unused_waiver_is_a_warning_and_fail_on_decides(
    cli: CliRunner, in_fixtures: Path, fail_on: tuple[str, ...], code: int, verdict: str,
) -> None:
    """The minimal rack is within capacity, so the waiver for it matches nothing."""
    run = cli("audit", "minimal", "waivers/active.yaml", *AS_OF, *fail_on)
    assert (run.code, run.lines) == (code, [UNUSED, summary(warning=1, verdict=verdict)])


def test_unused_waiver_of_an_ignored_rule_is_not_reported(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "minimal", "waivers/active.yaml", *AS_OF, "--ignore", "power.*")
    assert (run.code, run.lines) == (0, [summary(verdict="pass")])


@pytest.mark.parametrize(("options", "code", "expected"), [
    (("--select", "power.*"), 1, [RACK, summary(error=1)]),
    (("--select", "support.level-24x7"), 0, [NBD, summary(warning=1, verdict="pass")]),
    (("--select", "power.*", "--select", "support.*"), 1, [RACK, NBD, summary(error=1, warning=1)]),
    (("--ignore", "power.rack-*"), 0, [NBD, summary(warning=1, verdict="pass")]),
    (("--ignore", "power.rack-*", "--fail-on", "warning"), 1, [NBD, summary(warning=1)]),
    (("--ignore", "*"), 0, [summary(verdict="pass")]),
    (("--select", "power.*", "--ignore", "power.rack-capacity"), 0, [summary(verdict="pass")]),
], ids=["select", "select-one", "select-two", "ignore", "ignore-fail-on-warning", "ignore-all",
        "select-then-ignore"])
def test_select_and_ignore_globs(
    cli: CliRunner, in_fixtures: Path, options: tuple[str, ...], code: int, expected: list[str],
) -> None:
    run = cli("audit", "overload", *AS_OF, *options)
    assert (run.code, run.lines) == (code, expected)


def test_schema_findings_are_never_ignored(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", "kind: Facility\nname: f1\nbogus: 1\n")
    run = cli("audit", ".", *AS_OF, "--ignore", "*", "--fail-on", "info")
    assert (run.code, run.lines) == (2, ["bad.yaml:3:1: error schema.unknown-field unknown field 'bogus'",
                                         summary(error=1)])


# ---------------------------------------------------------------- checker.yaml
def test_config_beside_the_inventories(cli: CliRunner, in_fixtures: Path) -> None:
    """configured/checker.yaml: `power.rack-*` severity warning, fail_on warning."""
    run = cli("audit", "configured/inventories", *AS_OF)
    assert (run.code, run.lines) == (1, [
        "configured/inventories/facility.yaml:12:5: warning power.rack-capacity rack f1/R01 draws 7 kW, "
        "over its 5.9 kW 2N feed capacity",
        "configured/inventories/servers.yaml:16:15: warning support.level-24x7 server s2 has nbd support; "
        "the rollout expects 24x7",
        summary(warning=2),
    ])


def test_command_line_overrides_config_fail_on(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "configured/inventories", *AS_OF, "--fail-on", "error")
    assert run.code == 0
    assert run.lines[-1] == summary(warning=2, verdict="pass")


def test_explicit_config(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "overload", *AS_OF, "--config", "configured/checker.yaml")
    assert (run.code, run.lines[-1]) == (1, summary(warning=2))


def test_schema_errors_keep_their_severity(cli: CliRunner, workdir: Writer) -> None:
    workdir("checker.yaml", 'severity: {"*": info}\n')
    workdir("inv/bad.yaml", "kind: Facility\nname: f1\nbogus: 1\n")
    run = cli("audit", "inv", *AS_OF)
    assert (run.code, run.lines) == (2, ["inv/bad.yaml:3:1: error schema.unknown-field unknown field 'bogus'",
                                         summary(error=1)])


@pytest.mark.parametrize(("config", "stderr"), [
    ('select: ["*"]\nfail_onn: warning\n',
     "checker.yaml:2:1: unknown field 'fail_onn' (did you mean 'fail_on'?)"),
    ("fail_on: warnings\n",
     "checker.yaml:1:10: fail_on: Input should be 'error', 'warning' or 'info' (got 'warnings')"),
    ('severity: {"power.*": fatal}\n',
     "checker.yaml:1:23: severity.power.*: Input should be 'error', 'warning' or 'info' (got 'fatal')"),
    ("fail_on: [\n",
     "checker.yaml:2:1: invalid YAML: while parsing a flow node did not find expected node content"),
    ("fail_on: error\nfail_on: info\n", "checker.yaml:2:1: duplicate key 'fail_on' (first set on line 1)"),
], ids=["unknown-key", "bad-fail-on", "bad-severity", "invalid-yaml", "duplicate-key"])
def test_bad_config_beside_the_inventories(cli: CliRunner, workdir: Writer, config: str, stderr: str) -> None:
    workdir("checker.yaml", config)
    for part in ("facility", "servers", "workloads"):
        workdir(f"inv/{part}.yaml", (MINIMAL / f"{part}.yaml").read_text())
    run = cli("audit", "inv", *AS_OF)
    assert (run.code, run.out, run.err) == (2, "", stderr + "\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository whose inventories are two folders down, and whose config
    is [tool.checker] in its pyproject.toml; the run starts in the inventories."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(FIXTURES / "overload", tmp_path / "inventories" / "sh1")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "dc-inventory"\n\n[tool.checker]\nignore = ["support.*"]\nfail_on = "warning"\n'
        '\n[tool.checker.severity]\n"power.*" = "warning"\n'
    )
    monkeypatch.chdir(tmp_path / "inventories")
    return tmp_path


def test_config_is_found_upward_from_a_sub_directory(
    cli: CliRunner, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "inventories" / "sh1")  # two folders below the config
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines == [
        "facility.yaml:12:5: warning power.rack-capacity rack f1/R01 draws 7 kW,"
        " over its 5.9 kW 2N feed capacity",
        summary(warning=1),
    ]


def test_checker_config_shows_each_setting_and_where_it_came_from(cli: CliRunner, repo: Path) -> None:
    run = cli("config", "sh1", "--ignore", "cooling.*", "--max-per-rule", "0", "--no-group")
    pyproject = (repo / "pyproject.toml").as_posix()
    assert (run.code, run.err) == (0, "")
    assert run.out.splitlines() == [
        f"# config file: {pyproject} (the nearest one)",
        'select: ["*"]                       # default',
        f'ignore: ["support.*", "cooling.*"]  # {pyproject}:5:1 + --ignore',
        f'severity: {{"power.*": "warning"}}    # {pyproject}:8:15',
        f'fail_on: "warning"                  # {pyproject}:6:1',
        "rules: []                           # default",
        "support_horizon_days: 365           # default",
        "max_per_rule: 0                     # --max-per-rule",  # 0 is a value, not "unset"
        "group_findings: false               # --no-group",
        'netbox: {"custom_fields": {}}       # default',
        "large_model_params_b: 1.0           # default",
        "headroom_pct: 10.0                  # default",
        'support_level: "24x7"               # default',
    ]


def test_checker_config_without_a_config_file_says_so(cli: CliRunner, workdir: Writer) -> None:
    workdir(".git/HEAD", "ref: refs/heads/main\n")
    run = cli("config", ".", "--fail-on", "info")
    assert (run.code, run.err) == (0, "")
    assert run.out.splitlines()[:5] == [
        "# config file: none found (checker.yaml, .checker.yaml, checker.yml, .checker.yml or [tool.checker]"
        " in pyproject.toml, from the inventories' folder up to the repository root): defaults",
        'select: ["*"]                  # default',
        "ignore: []                     # default",
        "severity: {}                   # default",
        'fail_on: "info"                # --fail-on',
    ]


def test_checker_config_refuses_a_glob_that_matches_no_rule(cli: CliRunner, repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.checker]\nignore = ["suport.*"]\n')
    run = cli("config", "sh1")
    assert (run.code, run.out) == (2, "")
    assert run.err == (f"{(repo / 'pyproject.toml').as_posix()}:2:10: ignore 'suport.*' matches no rule"
                       " (did you mean 'support.missing'?)\n")


def test_missing_explicit_config(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "minimal", *AS_OF, "--config", "nope.yaml")
    assert (run.code, run.out, run.err) == (2, "", "nope.yaml: config file not found\n")


# ---------------------------------------------------------------- JSON
FINDING_KEYS = ["rule", "severity", "category", "entity", "message", "remediation", "file", "line", "column",
                "waived"]


def test_json_contract(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "overload", "waivers/active.yaml", *AS_OF, "--format", "json")
    assert (run.code, run.err) == (0, "")
    doc = json.loads(run.out)
    assert list(doc) == ["tool", "version", "as_of", "verdict", "summary", "findings", "capacity"]
    assert (doc["tool"], doc["version"], doc["as_of"]) == ("checker", __version__, "2027-01-15")
    assert doc["verdict"] == "pass"
    assert doc["summary"] == {"error": 0, "warning": 1, "info": 0, "waived": 1}
    assert [list(f) for f in doc["findings"]] == [FINDING_KEYS, FINDING_KEYS]
    assert doc["findings"][0] == {
        "rule": "power.rack-capacity", "severity": "error", "category": "power", "entity": "rack/f1/R01",
        "message": "rack f1/R01 draws 7 kW, over its 5.9 kW 2N feed capacity",
        "remediation": "Move servers to a rack with headroom, or add or upsize feeds.",
        "file": "overload/facility.yaml", "line": 12, "column": 5, "waived": True,
    }
    assert doc["findings"][1]["entity"] == "server/s2"
    # The contract only adds: the 0.1.0 sections first, then the cooling plant, the UPS blocks,
    # the power shelves, the panels.
    sections = ["facilities", "racks", "feeds", "servers", "cooling_units", "cdus", "ups_blocks", "shelves",
                "panels"]
    assert list(doc["capacity"]) == sections
    assert doc["capacity"]["facilities"][0]["entity"] == "facility/f1"
    rack = doc["capacity"]["racks"][0]
    assert (rack["entity"], rack["capacity_kw"], rack["load_kw"]) == ("rack/f1/R01", 5.888, 7.0)


def test_json_of_schema_findings(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", "kind: Facility\nname: f1\nbogus: 1\n")
    run = cli("audit", ".", *AS_OF, "--format", "json")
    doc = json.loads(run.out)
    assert (run.code, doc["verdict"], doc["summary"]) == (2, "fail", {"error": 1, "warning": 0, "info": 0,
                                                                      "waived": 0})
    assert doc["findings"] == [{
        "rule": "schema.unknown-field", "severity": "error", "category": "schema", "entity": "",
        "message": "unknown field 'bogus'", "remediation": "", "file": "bad.yaml", "line": 3, "column": 1,
        "waived": False,
    }]
    assert doc["capacity"] == {"facilities": [], "racks": []}


def test_json_is_byte_stable(cli: CliRunner, in_fixtures: Path) -> None:
    first = cli("audit", "overload", "waivers/expiring.yaml", *AS_OF, "--format", "json")
    second = cli("audit", "overload", "waivers/expiring.yaml", *AS_OF, "--format", "json")
    assert first.out.encode() == second.out.encode()
    assert first.out.endswith("}\n")


def test_format_to_a_file(cli: CliRunner, in_fixtures: Path, tmp_path: Path) -> None:
    target = tmp_path / "audit.json"
    run = cli("audit", "overload", *AS_OF, "--format", "text", "--format", f"json:{target}")
    assert run.code == 1
    assert run.out == f"{RACK}\n{NBD}\n{BY_RULE}{summary(error=1, warning=1)}\n"  # text still goes to stdout
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert (doc["verdict"], doc["summary"]["error"]) == ("fail", 1)
    alone = cli("audit", "overload", *AS_OF, "--format", f"json:{target}")
    assert (alone.code, alone.out) == (1, "")  # only a file: nothing on stdout


def test_format_to_a_file_that_cannot_be_written(cli: CliRunner, in_fixtures: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "dir.json"
    run = cli("audit", "minimal", *AS_OF, "--format", f"json:{target}")
    assert (run.code, run.err) == (2, f"{target}: cannot write json output: no such folder\n")


@pytest.mark.parametrize(("name", "hint"), [("nope", ""), ("jsn", " (did you mean 'json'?)")])
def test_unknown_format(cli: CliRunner, in_fixtures: Path, name: str, hint: str) -> None:
    """A usage error from argparse's type conversion: exit 2 before any work, no traceback."""
    run = cli("audit", "minimal", *AS_OF, "--format", name)
    assert (run.code, run.out) == (2, "")
    lines = run.err.splitlines()  # the usage text wraps with the terminal width
    assert lines[0].startswith("usage: checker audit ")
    assert lines[-1] == (f"checker audit: error: argument --format: unknown format '{name}'{hint}; "
                         "known: text, json, markdown, html, sarif, junit, gitlab, github")
    assert "Traceback" not in run.err


# ---------------------------------------------------------------- usage errors
@pytest.mark.parametrize(("argv", "last_line"), [
    (("audit", "--as-of", "2027-13-01"), "checker audit: error: argument --as-of: not a date (YYYY-MM-DD): "
                                         "'2027-13-01'"),
    (("audit", "--fail-on", "fatal"), "checker audit: error: argument --fail-on: invalid choice: 'fatal' "
                                      "(choose from 'error', 'warning', 'info')"),
    (("frobnicate",), "checker: error: argument COMMAND: invalid choice: 'frobnicate' (choose from 'audit', "
                      "'report', 'diff', 'config', 'init', 'rules', 'explain', 'facts', 'schema', 'import',"
                      " 'cache', 'resident')"),
    ((), "checker: error: the following arguments are required: COMMAND"),
], ids=["bad-date", "bad-fail-on", "bad-command", "no-command"])
def test_usage_errors_exit_2(
    cli: CliRunner, in_fixtures: Path, argv: tuple[str, ...], last_line: str,
) -> None:
    run = cli(*argv)
    assert (run.code, run.out) == (2, "")
    assert run.err.splitlines()[-1] == last_line
    assert "Traceback" not in run.err


# ---------------------------------------------------------------- other commands
def test_version(cli: CliRunner) -> None:
    run = cli("--version")
    assert (run.code, run.out, run.err) == (0, f"checker {__version__}\n", "")


@pytest.mark.parametrize(("argv", "usage"), [
    (("--help",), "usage: checker [-h]"),
    (("audit", "--help"), "usage: checker audit [-h]"),
])
def test_help_returns_0(cli: CliRunner, argv: tuple[str, ...], usage: str) -> None:
    run = cli(*argv)  # main returns the code: the fixture lets no SystemExit through
    assert (run.code, run.err) == (0, "")
    assert run.out.startswith(usage)


def test_rules_list(cli: CliRunner) -> None:
    run = cli("rules", "list")
    assert run.code == 0
    rows = {line.split()[0]: line for line in run.lines}
    for rule_id in ("power.rack-capacity", "support.missing", "schema.yaml", "schema.alias-bomb",
                    "schema.reference", "waiver.expired", "waiver.unused", "waiver.expiring"):
        assert rule_id in rows
    assert re.fullmatch(r"power\.rack-capacity +error +power +Rack load within feed capacity",
                        rows["power.rack-capacity"])
    assert re.fullmatch(r"waiver\.unused +warning +waiver +Waivers match a finding", rows["waiver.unused"])
    assert list(rows) == sorted(rows)


def test_explain(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    run = cli("explain", "power.rack-capacity")
    assert (run.code, run.err) == (0, "")
    assert run.lines[:5] == [
        "power.rack-capacity: Rack load within feed capacity",
        "  severity: error",
        "  category: power",
        "  on: rack",
        "  when: load_kw > capacity_kw",
    ]
    assert re.fullmatch(r"  defined in: rules/power\.yaml:\d+", run.lines[5])
    assert any(line.startswith("  rationale: ") for line in run.lines)
    assert "  remediation: Move servers to a rack with headroom, or add or upsize feeds." in run.lines
    assert any(line.startswith("  references: NEC 210.20(A)") for line in run.lines)
    assert any(line.startswith("  fails on: {") for line in run.lines)
    assert any(line.startswith("  passes on: {") for line in run.lines)


def test_explain_a_builtin_check(cli: CliRunner) -> None:
    run = cli("explain", "waiver.expired")
    assert run.code == 0
    assert run.lines[:3] == ["waiver.expired: Waivers are not expired", "  severity: error",
                             "  category: waiver"]


def test_rules_show_is_explain_without_examples(cli: CliRunner) -> None:
    run = cli("rules", "show", "power.rack-capacity")
    assert run.code == 0
    assert run.lines[0] == "power.rack-capacity: Rack load within feed capacity"
    assert not any("fails on" in line for line in run.lines)


@pytest.mark.parametrize("argv", [("explain", "nope"), ("rules", "show", "nope")])
def test_explain_unknown_rule(cli: CliRunner, argv: tuple[str, ...]) -> None:
    run = cli(*argv)
    assert (run.code, run.out, run.err) == (2, "", "unknown rule 'nope'; see `checker rules list`\n")


def test_facts_rack(cli: CliRunner) -> None:
    run = cli("facts", "rack")
    assert run.code == 0
    assert run.lines[0] == "rack: a rack position with its feeds and load"
    assert any(re.fullmatch(r"  load_kw +number +sum of server peak draw .* \[kW\]", line)
               for line in run.lines)
    assert any(re.fullmatch(r"  capacity_kw +number +.*\[kW\]", line) for line in run.lines)


def test_facts_lists_every_kind(cli: CliRunner) -> None:
    run = cli("facts")
    kinds = [line.split(":")[0] for line in run.lines if not line.startswith(" ")]
    kinds_ = ["facility", "rack", "feed", "cooling_unit", "cdu", "ups", "panel", "server", "shelf"]
    assert (run.code, kinds) == (0, [*kinds_, "workload", "framework", "container", "engine", "jax"])


@pytest.mark.parametrize(("kind", "hint"), [
    ("nope", ""),
    ("racks", " (did you mean 'rack'?)"),
    ("sever", " (did you mean 'server'?)"),
])
def test_facts_unknown_kind(cli: CliRunner, kind: str, hint: str) -> None:
    run = cli("facts", kind)
    assert (run.code, run.out) == (2, "")
    known = ", ".join(REGISTRY)
    assert run.err == f"unknown fact kind '{kind}'{hint}; known: {known}\n"


def test_schema(cli: CliRunner) -> None:
    run = cli("schema")
    assert run.code == 0
    schema = json.loads(run.out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # One if/then per kind on `kind` (not a oneOf, whose errors cover every kind); inventories
    # may hold documents of the knowledge tables' kinds too (docs/knowledge.md).
    kinds = sorted({*KINDS, *TABLE_KINDS})
    assert sorted(schema["properties"]["kind"]["enum"]) == kinds
    assert sorted(c["if"]["properties"]["kind"]["const"] for c in schema["allOf"]) == kinds
    assert "oneOf" not in schema
    feed = schema["$defs"]["Feed"]
    assert feed["additionalProperties"] is False
    assert {"voltage", "amps", "side", "phase", "max_utilization"} <= set(feed["properties"])
    assert cli("schema").out == run.out


# ---------------------------------------------------------------- dogfooding
def test_example_rollout_audits_without_input_errors(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    run = cli("audit", "inventories/", *AS_OF)
    assert run.code in (0, 1), run.out
    assert " schema." not in run.out
    assert run.err == ""
    last = r"checker: \d+ errors?, \d+ warnings?, \d+ info, \d+ waived: (pass|fail)"
    assert re.fullmatch(last, run.lines[-1])


def test_example_rollout_is_the_default_path(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert cli("audit", *AS_OF).out == cli("audit", "inventories/", *AS_OF).out


def test_builtin_rulebook_examples_pass(cli: CliRunner) -> None:
    run = cli("rules", "test")
    assert run.code == 0, run.out
    assert re.fullmatch(r"\d+ passed, 0 failed", run.lines[-1])
    assert all(line.startswith("ok ") for line in run.lines[:-1])


# ---------------------------------------------------------------- custom rules
MEMORY = "custom-inventory/servers.yaml:9:5: warning acme.min-memory server s1 has 32 GB of RAM for 2 GPUs"
# The built-in rule on the same field: 2 x L4 (48 GB) want 96 GB of RAM.
HOST_MEMORY = ("custom-inventory/servers.yaml:9:5: warning workload-fit.host-memory server s1 has 32 GB "
               "of RAM for 48 GB of GPU memory; the guide asks for at least 96 GB")


def test_custom_rule_in_an_audit(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "custom-inventory", "--rules", "custom-rules", *AS_OF)
    assert (run.code, run.lines) == (0, [MEMORY, HOST_MEMORY, summary(warning=2, verdict="pass")])
    # not built in
    assert cli("audit", "custom-inventory", *AS_OF).lines == [HOST_MEMORY, summary(warning=1, verdict="pass")]


def test_custom_rule_from_config(cli: CliRunner, workdir: Writer) -> None:
    shutil.copytree(FIXTURES / "custom-inventory", Path("custom-inventory"))
    shutil.copytree(FIXTURES / "custom-rules", Path("policies"))
    workdir("checker.yaml", "rules: [policies]\nfail_on: warning\n")
    run = cli("audit", "custom-inventory", *AS_OF)
    assert (run.code, run.lines) == (1, [MEMORY, HOST_MEMORY, summary(warning=2)])


def test_custom_rule_tests(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("rules", "test", "custom-rules")
    assert (run.code, run.err) == (0, "")
    assert run.lines == ["ok   acme.min-memory (1 fail, 2 pass)  custom-rules/memory.yaml:3",
                         "1 passed, 0 failed"]


def test_custom_rule_listed_and_explained(cli: CliRunner, in_fixtures: Path) -> None:
    assert "acme.min-memory" in cli("rules", "list", "--rules", "custom-rules").out
    run = cli("explain", "acme.min-memory", "--rules", "custom-rules")
    assert run.code == 0
    assert "  fails on: {\"gpu\": {\"count\": 2}, \"memory_gb\": 32, \"name\": \"gpu1\"}" in run.lines


RULE = """\
rules:
  - id: acme.r1
    title: Big racks
    category: {category}
    severity: warning
    on: {on}
    when: {when}
    message: "{message}"
    remediation: Split it.
    examples:
      fail: [{{name: R01, load_kw: 40}}]
      pass: [{{name: R01, load_kw: 10}}]
"""


def rule(*, category: str = "power", on: str = "rack", when: str = "load_kw > 30",
         message: str = "rack {{ name }} draws {{ load_kw }} kW") -> str:
    return RULE.format(category=category, on=on, when=when, message=message)


def test_rules_test_reports_a_failing_example(cli: CliRunner, workdir: Writer) -> None:
    workdir("rules/r.yaml", rule(when="load_kw > 50"))
    run = cli("rules", "test", "rules")
    assert run.code == 1
    assert run.lines == ["FAIL acme.r1 (fail example 1 did not fire)  rules/r.yaml:2", "0 passed, 1 failed"]


# (id, rule file text, the one line on stderr); `when:` values start at column 11 of line 7.
BAD_RULES: list[tuple[str, str, str]] = [
    ("import", rule(when="__import__('os').system('ls') > 0"),
     "rules/r.yaml:7:11: rule acme.r1: function calls other than exists(field) are not allowed"),
    ("lambda", rule(when="load_kw > (lambda:1)"),  # the lambda is column 12 of the expression
     "rules/r.yaml:7:22: rule acme.r1: lambda expressions are not allowed in a `when` expression"),
    ("unknown-category", rule(category="powr"),
     "rules/r.yaml:4:15: rules.0.category: Input should be 'schema', 'power', 'cooling', 'space', 'weight', "
     "'pue', 'compatibility', 'support', 'workload-fit', 'waiver' or 'config' (got 'powr')"),
    ("unknown-field-in-when", rule(when="load_kw > 30 and laod_kw > 1"),
     "rules/r.yaml:7:28: rule acme.r1: unknown field 'laod_kw' (did you mean 'load_kw'?)"),
    ("unknown-on", rule(on="rak"),
     "rules/r.yaml:6:9: rule acme.r1: unknown fact kind 'rak' (did you mean 'rack'?); "
     f"known: {', '.join(REGISTRY)}"),
    ("bad-jinja", rule(message="rack {{ name "),
     "rules/r.yaml:8:14: rule acme.r1: bad message template: unexpected end of template, "
     "expected 'end of print statement'."),
    ("unknown-field-in-message", rule(message="rack {{ nmae }}"),
     "rules/r.yaml:8:14: rule acme.r1 message: 'nmae' is not a field of rack facts (did you mean 'name'?)"),
    ("unknown-field-in-example", rule().replace("load_kw: 10}", "lod: 1}"),  # 12:14 is the example
     "rules/r.yaml:12:14: rule acme.r1 example: 'lod' is not a field of rack facts "
     "(did you mean 'load_kw'?)"),
    ("bad-id", rule().replace("id: acme.r1", "id: Acme R1"),
     "rules/r.yaml:2:9: rules.0.id: String should match pattern "
     "'^[a-z0-9][a-z0-9-]*(\\.[a-z0-9][a-z0-9-]*)+$' (got 'Acme R1')"),
    ("unknown-rule-field", rule().replace("severity: warning", "severity: warning\n    level: 3"),
     "rules/r.yaml:6:5: unknown field 'rules.0.level'"),
    ("invalid-yaml", rule(when="load_kw: 30"),
     "rules/r.yaml:7:18: invalid YAML: mapping values are not allowed in this context"),
]


@pytest.mark.parametrize(("text", "stderr"), [pytest.param(*case[1:], id=case[0]) for case in BAD_RULES])
def test_invalid_rule_folder(cli: CliRunner, workdir: Writer, text: str, stderr: str) -> None:
    workdir("rules/r.yaml", text)
    run = cli("rules", "test", "rules")
    assert (run.code, run.out, run.err) == (2, "", stderr + "\n")


def test_duplicate_rule_id(cli: CliRunner, workdir: Writer) -> None:
    workdir("rules/a.yaml", rule())
    workdir("rules/b.yaml", rule())
    run = cli("rules", "test", "rules")
    assert (run.code, run.err) == (2, "rules/b.yaml:2:5: rule id acme.r1 already defined at rules/a.yaml:2\n")


def test_custom_rule_cannot_reuse_a_builtin_id(cli: CliRunner, workdir: Writer) -> None:
    workdir("rules/r.yaml", rule().replace("acme.r1", "power.rack-capacity"))
    run = cli("audit", str(MINIMAL), "--rules", "rules", *AS_OF)
    assert run.code == 2
    expected = r"rules/r\.yaml:2:5: rule id power\.rack-capacity already defined at .*power\.yaml:\d+\n"
    assert re.fullmatch(expected, run.err)


def test_invalid_rule_stops_an_audit(cli: CliRunner, workdir: Writer) -> None:
    workdir("rules/r.yaml", rule(when="__import__('os').system('ls') > 0"))
    run = cli("audit", str(MINIMAL), "--rules", "rules", *AS_OF)
    assert (run.code, run.out) == (2, "")
    assert run.err == ("rules/r.yaml:7:11: rule acme.r1: "
                       "function calls other than exists(field) are not allowed\n")


def test_every_problem_in_a_rule_folder_is_listed(cli: CliRunner, workdir: Writer) -> None:
    workdir("rules/a.yaml", rule(on="rak"))
    workdir("rules/b.yaml", rule(category="powr").replace("acme.r1", "acme.r2"))
    run = cli("rules", "test", "rules")
    assert run.code == 2
    assert [line.split(":")[0] for line in run.err.splitlines()] == ["rules/a.yaml", "rules/b.yaml"]


# A knowledge document in a rule folder is read with the rules (docs/knowledge.md); a bad one
# stops every command that reads the folder, at the line and column of its problem.
BAD_GPUS = ("rules/team/knowledge/gpus.yaml:1:1: missing required field 'gpus'\n"
            "rules/team/knowledge/gpus.yaml:2:1: unknown field 'models'")


@pytest.mark.parametrize("command", [
    pytest.param(("rules", "test", "rules"), id="rules-test"),
    pytest.param(("rules", "list", "--rules", "rules"), id="rules-list"),
    pytest.param(("explain", "acme.r1", "--rules", "rules"), id="explain"),
    pytest.param(("audit", str(MINIMAL), "--rules", "rules", *AS_OF), id="audit"),
    pytest.param(("audit", str(MINIMAL), "--config", "checker.yaml", *AS_OF), id="config-rules"),
    pytest.param(("diff", "--base", "HEAD", str(MINIMAL), "--rules", "rules", *AS_OF), id="diff"),
])
def test_a_bad_knowledge_document_in_a_rule_folder_stops_every_command(
    cli: CliRunner, workdir: Writer, command: tuple[str, ...]
) -> None:
    workdir("rules/r.yaml", rule())
    # Laid out as the built-in rules/ is; the copy of the built-in CUDA table is read and changes nothing.
    workdir("rules/knowledge/cuda.yaml", (REPO / "rules" / "knowledge" / "cuda.yaml").read_text())
    workdir("rules/team/knowledge/gpus.yaml", "kind: GpuModels\nmodels: []\n")
    workdir("checker.yaml", "rules: [rules]\n")
    run = cli(*command)
    assert (run.code, run.out, run.err) == (2, "", BAD_GPUS + "\n")


def test_the_built_in_tables_copied_into_a_rule_folder_change_nothing(
    cli: CliRunner, workdir: Writer
) -> None:
    for name in ("cuda", "drivers", "frameworks", "containers", "rocm", "fit"):
        workdir(f"rules/knowledge/{name}.yaml", (REPO / "rules" / "knowledge" / f"{name}.yaml").read_text())
    run = cli("audit", str(MINIMAL), "--rules", "rules", *AS_OF)
    assert (run.code, run.out, run.err) == (0, summary(verdict="pass") + "\n", "")


@pytest.mark.parametrize(("text", "stderr"), [
    pytest.param("# ours\nkind: Facility\nname: f1\n",
                 "rules/r.yaml:2:1: a Facility document is an inventory, not rules: "
                 "put it with the inventories",
                 id="inventory"),
    pytest.param("kind: CudaReleases\nreleases: []\n",
                 "rules/r.yaml:1:1: missing required field 'sources'\n"
                 "rules/r.yaml:1:1: missing required field 'as_of'",
                 id="table"),
])
def test_a_document_of_another_kind_in_a_rule_folder_says_where_it_belongs(
    cli: CliRunner, workdir: Writer, text: str, stderr: str
) -> None:
    workdir("rules/r.yaml", text)
    run = cli("rules", "test", "rules")
    assert (run.code, run.out, run.err) == (2, "", stderr + "\n")


def test_the_builtin_rule_folder_named_keeps_its_knowledge_base(cli: CliRunner) -> None:
    from checker.core.resources import rules_dir

    run = cli("rules", "test", str(rules_dir()))
    assert (run.code, run.err) == (0, "")
    assert re.fullmatch(r"\d+ passed, 0 failed", run.lines[-1])


def test_what_a_rule_folder_reads(cli: CliRunner, workdir: Writer) -> None:
    # Nested folders are read; a README or a backup file is not YAML and is not a rule file.
    workdir("rules/team/r.yaml", rule())
    workdir("rules/README.md", "# our rules\n")
    workdir("rules/team/r.yaml~", "not: read\n")
    run = cli("rules", "test", "rules")
    assert (run.code, run.err) == (0, "")
    assert run.lines == ["ok   acme.r1 (1 fail, 1 pass)  rules/team/r.yaml:2", "1 passed, 0 failed"]


def test_missing_rule_folder(cli: CliRunner, workdir: Writer) -> None:
    run = cli("audit", str(MINIMAL), "--rules", "nope", *AS_OF)
    assert (run.code, run.err) == (2, "nope: rule folder not found\n")


UNKNOWN_LAOD_KW = "rule acme.r1: unknown field 'laod_kw' (did you mean 'load_kw'?)"


# `laod_kw` in `when:` values written other ways; the expected position is where it is in the file.
@pytest.mark.parametrize(("when", "position"), [
    pytest.param("'load_kw > 30 and laod_kw > 1'", "7:29", id="single-quoted"),  # the quote is column 11
    pytest.param('"load_kw > 30 and laod_kw > 1"', "7:29", id="double-quoted"),
    pytest.param(">-\n      load_kw > 30 and\n      laod_kw > 1", "9:7", id="folded"),
    pytest.param(">-\n      load_kw > 30 and laod_kw > 1", "8:24", id="folded-one-line"),
    pytest.param("|-\n      load_kw > 30 and laod_kw > 1", "8:24", id="literal-one-line"),
    pytest.param("|-\n      (load_kw > 30 and\n        laod_kw > 1)", "9:9", id="literal-two-lines"),
    pytest.param("load_kw > 30 and\n      laod_kw > 1", "8:7", id="plain-two-lines"),
    pytest.param("'load_kw > 30 and\n      laod_kw > 1'", "8:7", id="quoted-two-lines"),
    pytest.param("'name == ''x'' and laod_kw > 1'", "7:30", id="single-quote-escape"),
    pytest.param('"name == \\"x\\" and laod_kw > 1"', "7:30", id="double-quote-escape"),
    pytest.param(">-\n      (load_kw > 30 and\n\n      laod_kw > 1)", "10:7", id="folded-blank-line"),
])
def test_error_position_in_a_when(cli: CliRunner, workdir: Writer, when: str, position: str) -> None:
    workdir("rules/r.yaml", rule(when=when))
    run = cli("rules", "test", "rules")
    assert (run.code, run.out) == (2, "")
    assert run.err == f"rules/r.yaml:{position}: {UNKNOWN_LAOD_KW}\n"


# ---------------------------------------------------------------- internal errors
def _boom(*args: object, **kwargs: object) -> object:
    raise RuntimeError("boom")


def test_internal_error_exits_3_without_traceback(
    cli: CliRunner, in_fixtures: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CHECKER_DEBUG", raising=False)
    monkeypatch.setattr("checker.audit.compute", _boom)  # the numpy stage, inside the audit
    run = cli("audit", "minimal", *AS_OF)
    assert (run.code, run.out) == (3, "")
    assert run.err == f"checker: internal error (RuntimeError: boom): {BUG_HINT}\n"
    assert "please report it" in run.err and "Traceback" not in run.err


def test_internal_error_traceback_with_checker_debug(
    cli: CliRunner, in_fixtures: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHECKER_DEBUG", "1")
    monkeypatch.setattr("checker.audit.compute", _boom)
    run = cli("audit", "minimal", *AS_OF)
    assert run.code == 3
    assert run.err.startswith("Traceback (most recent call last):")
    assert run.err.splitlines()[-1] == f"checker: internal error (RuntimeError: boom): {BUG_HINT}"


def test_config_among_the_inventories_is_not_read_as_an_inventory(cli: CliRunner, workdir: Writer) -> None:
    workdir("checker.yaml", "fail_on: warning\n", minimal=("facility", "servers", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert "schema." not in run.out and run.code in (0, 1)


def test_config_in_the_current_directory_is_found(cli: CliRunner, workdir: Writer) -> None:
    workdir("deep/inv/x.yaml", "kind: Workloads\nworkloads: []\n")
    workdir("checker.yaml", "fial_on: warning\n")
    run = cli("audit", "deep/inv", *AS_OF)
    assert (run.code, run.err) == (2, "checker.yaml:1:1: unknown field 'fial_on' (did you mean 'fail_on'?)\n")


# ---------------------------------------------------------------- software, support and fit
COMPAT = [
    "compat/servers.yaml:17:16: error compatibility.gpu-driver-minimum server b200: the b200 needs driver "
    "570.133.20 or newer, more than its CUDA does; the server has 570.86.15",
    "compat/servers.yaml:17:73: error compatibility.framework-cuda-architecture server b200: pytorch "
    "2.6.0+cu126 is built with CUDA 12.6, which cannot run the b200 (Blackwell: needs a CUDA 12.8 or "
    "newer build)",
    "compat/servers.yaml:17:73: error compatibility.framework-release-architecture server b200: pytorch "
    "2.6.0+cu126 predates support for Blackwell (b200): it needs pytorch 2.7 or newer",
    "compat/servers.yaml:26:16: error compatibility.gpu-rocm-too-old server mi300x: ROCm 5.7 predates the "
    "mi300x, which needs ROCm 6.0.0 or newer",
    "compat/workloads.yaml:5:5: error workload-fit.gpu-memory workload pretrain-70b (70B training, bf16) "
    "needs about 169.3 GB on each of its 8 GPUs (1120 GB of states sharded, with a 20 % planning allowance, "
    "1.3 GB runtime), but its smallest GPU has 80 GB",
]


def test_software_and_fit_findings_point_at_the_lines(cli: CliRunner, in_fixtures: Path) -> None:
    select = ["--select", "compatibility.*", "--select", "workload-fit.*", "--select", "support.*"]
    # The drivers' lifecycle: test_driver_branches_past_end_of_life_at_the_rollout_are_errors.
    run = cli("audit", "compat", *select, "--ignore", "support.driver-*", *AS_OF)
    assert (run.code, run.lines, run.err) == (1, [*COMPAT, summary(error=5)], "")


# A wheel's own CUDA and architectures, the PyPI default build, update releases,
# December 2026 stacks that pass (tests/fixtures/stacks2026).
STACKS_2026 = [
    "stacks2026/servers.yaml:16:73: error compatibility.framework-cuda-dropped server v100-cu130: pytorch "
    "2.9.1+cu130 runs CUDA 13.0 (from variant), which no longer supports the v100-sxm2-32gb (Volta); "
    "support ended with CUDA 13.0",
    "stacks2026/servers.yaml:19:73: error compatibility.framework-wheel-architecture server v100-cu128: the "
    "pytorch 2.11.0+cu128 wheel holds no code for the v100-sxm2-32gb (compute capability 7.0): 2.11 "
    "removed sm_70 from the cu128 wheels (PR #175253) (unverified)",
    "stacks2026/servers.yaml:32:16: warning compatibility.driver-minor-version server h100-update: driver "
    "570.86.15 runs CUDA 12.8.1 only with limitations (minor-version compatibility); every feature needs "
    "570.124.06 (the tables mark that minimum unverified)",
    # Containers: forward compatibility runs CUDA 13 on R570 on an H100 (h100-r570-cuda13: no finding),
    # not on an RTX card, nor where the image's release notes ask for more.
    "stacks2026/servers.yaml:60:20: error compatibility.container-driver-below-floor server "
    "rtx-r570-cuda13: container image nvcr.io/nvidia/cuda:13.0.2-runtime-ubuntu24.04 brings CUDA 13.0.2, "
    "which needs driver 580 or newer; the server has 570.133.20, and forward compatibility does not "
    "apply: the rtx-6000-ada is not a data-center GPU (cuda-compat works only on data-center GPUs and "
    "Jetson)",
    "stacks2026/servers.yaml:67:11: error compatibility.container-driver-below-floor server "
    "h100-r535-ngc: container image nvcr.io/nvidia/pytorch:26.05-py3 brings CUDA 13.2.1, which needs "
    "driver 580 or newer; the server has 535.129.03, and forward compatibility does not apply: the "
    "image's release notes ask for driver 570 or later",
    "stacks2026/servers.yaml:68:11: warning compatibility.container-tag-latest server h100-r535-ngc: "
    "container image pytorch/pytorch:latest is not pinned (tag latest), so what it brings changes under "
    "the plan and cannot be checked",
    "stacks2026/servers.yaml:69:11: warning compatibility.container-image-unknown server h100-r535-ngc: "
    "container image registry.example.com/ml/train:7 is not one the tables know and declares no CUDA, so "
    "what it brings cannot be checked",
    "stacks2026/servers.yaml:78:11: error compatibility.container-gpu-cuda-dropped server "
    "v100-cuda13-image: container image nvidia/cuda:13.0.2-base-ubuntu24.04 brings CUDA 13.0.2, which no "
    "longer supports the v100-sxm2-32gb (Volta); support ended with CUDA 13.0",
    "stacks2026/servers.yaml:83:5: error compatibility.nvidia-libraries-on-amd server mi300x-nccl: the "
    "mi300x is an AMD GPU, but the server declares NVIDIA's cuDNN 8.9 and NCCL 2.18",
    # Engines pin their torch and bring their CUDA; JAX's plugin needs its family's driver
    # (h100-engines-dec2026, the December 2026 stack with vLLM and JAX: no finding).
    "stacks2026/servers.yaml:101:13: error compatibility.engine-torch-mismatch server h100-engines-r570: "
    "vLLM 0.11.0 pins torch 2.8.0, but the server declares torch 2.9.0+cu128: pip replaces it with 2.8.0, "
    "or the engine's kernels do not load",
    "stacks2026/servers.yaml:102:21: error compatibility.engine-driver-below-floor server h100-engines-r570: "
    "TensorRT-LLM 1.2.0 runs CUDA 13.0 (from engine wheel), which needs driver 580 or newer; the server has "
    "570.133.20 (the tables mark the engine's CUDA unverified)",
    "stacks2026/servers.yaml:102:21: error compatibility.engine-torch-mismatch server h100-engines-r570: "
    "TensorRT-LLM 1.2.0 pins torch 2.9.1, but the server declares torch 2.9.0+cu128: pip replaces it "
    "with 2.9.1, or the engine's kernels do not load",
    "stacks2026/servers.yaml:103:31: error compatibility.jax-driver-below-floor server h100-engines-r570: "
    "jax 0.8.0 with the cuda13 plugin needs driver 580 or newer (CUDA 13); the server has 570.133.20",
    "stacks2026/servers.yaml:113:31: error compatibility.jax-local-cudnn server h100-jax-local: jax 0.8.0 "
    "with the cuda12-local plugin needs cuDNN 9.8 or newer, below 10.0, but finds cuDNN 9.5 (declared)",
    "stacks2026/servers.yaml:114:15: warning compatibility.engine-driver-minor-version server "
    "h100-jax-local: SGLang 0.5.23 runs CUDA 13.2 (from pinned torch's PyPI default) on driver 580.95.05 "
    "only with limitations (minor-version compatibility); every feature needs 595.45.04 (the tables mark "
    "that minimum unverified)",
]
STALE = ("stacks2026/facility.yaml:2:1: info compatibility.knowledge-stale facility f1: the compatibility "
         "tables are current to 2026-10-21, 267 days before the audit date; releases since then are not in "
         "them, and facts in them may have changed")


def test_stacks_of_2026_are_checked_by_the_wheels_they_install(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "stacks2026", "--select", "compatibility.*", *AS_OF)
    assert (run.code, run.lines, run.err) == (1, [*STACKS_2026, summary(error=11, warning=4)], "")


def test_tables_more_than_six_months_old_say_so(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "stacks2026", "--select", "compatibility.*", "--as-of", "2027-07-15")
    expected = [STALE, *STACKS_2026, summary(error=11, warning=4, info=1)]
    assert (run.code, run.lines, run.err) == (1, expected, "")
    # Within six months of the tables (183 days after 2026-10-21): no notice.
    run = cli("audit", "stacks2026", "--select", "compatibility.knowledge-stale", "--as-of", "2027-04-22")
    assert (run.code, run.lines) == (0, [summary(verdict="pass")])


def test_a_framework_source_typo_is_a_located_input_error(cli: CliRunner, workdir: Writer) -> None:
    workdir("s.yaml", "kind: Servers\nfacility: f1\nservers:\n  - name: s1\n    rack: R01\n"
            "    software: {frameworks: {pytorch: {version: \"2.9.1\", source: pip}}}\n",
            minimal=("facility",))
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2 and "Traceback" not in run.err
    assert run.lines[0] == (
        "s.yaml:6:65: error schema.invalid software.frameworks.pytorch.source: Input should be "
        "'pypi', 'conda-forge', 'container' or 'vendor' (got 'pip')")


def test_driver_branches_past_end_of_life_at_the_rollout_are_errors(
    cli: CliRunner, in_fixtures: Path
) -> None:
    # R570 (production branch) ended in February 2026, R535 (long-term) in June 2026; R580 runs to June 2028.
    eol = ("stacks2026/servers.yaml:{}: error support.driver-branch-eol server {}: driver {} is on R{} ({} "
           "branch), which reached end of life in {}, before 2027-02-01 (the tables mark that lifecycle "
           "unverified)")
    r570 = ("570", "production", "2026-02")
    run = cli("audit", "stacks2026", "--select", "support.driver-*", *AS_OF, "--no-group")
    assert (run.code, run.lines, run.err) == (1, [
        # R575 (a new-feature branch) is in no source the driver tables have: said, not passed.
        "stacks2026/servers.yaml:27:16: warning support.driver-branch-unknown server a100-plain: driver "
        "575.57.08 is on R575, a branch the driver tables do not list, so its end of life and forward "
        "compatibility were not checked",
        eol.format("32:16", "h100-update", "570.86.15", *r570),
        eol.format("53:7", "h100-r570-cuda13", "570.133.20", *r570),
        eol.format("59:7", "rtx-r570-cuda13", "570.133.20", *r570),
        eol.format("65:7", "h100-r535-ngc", "535.129.03", "535", "long-term", "2026-06"),
        eol.format("99:7", "h100-engines-r570", "570.133.20", *r570),
        summary(error=5, warning=1),
    ], "")


def test_fast_links_other_than_sxm_nvlink_keep_work_off_pcie(cli: CliRunner, in_fixtures: Path) -> None:
    # 8 x MI300X (Infinity Fabric mesh) and an H100 NVL pair: no PCIe warning; bridge pairs of 8: one.
    run = cli("audit", "interconnect", "--select", "workload-fit.*", *AS_OF)
    assert (run.code, run.lines, run.err) == (0, [
        "interconnect/servers.yaml:20:43: warning workload-fit.nvlink server h100-nvl-8 trains train-nvl on "
        "8 x h100-nvl without a fast link across them (nvlink-bridge in groups of 2): gradients cross PCIe; "
        "a bridge is taken to join 2 GPUs (set network.nvlink_bridge)",
        summary(warning=1, verdict="pass"),
    ], "")


def test_a_bad_image_reference_is_a_located_input_error(cli: CliRunner, workdir: Writer) -> None:
    workdir("s.yaml", "kind: Servers\nfacility: f1\nservers:\n  - name: s1\n    rack: R01\n"
            "    software: {driver: \"580.95.05\", containers: [\"nvcr.io/NVIDIA/pytorch:26.05 py3\"]}\n",
            minimal=("facility",))
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2 and "Traceback" not in run.err
    assert run.lines[0] == (
        "s.yaml:6:50: error schema.invalid software.containers.0.image: an image reference is "
        "[registry/]name[:tag][@sha256:digest], lowercase (e.g. nvcr.io/nvidia/pytorch:26.05-py3) "
        "(got 'nvcr.io/NVIDIA/pytorch:26.05 py3')")


# ---------------------------------------------------------------- --jobs, the cache
@pytest.fixture
def rollout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example rollout (8 files) to change, audited from tmp_path."""
    shutil.copytree(REPO / "inventories", tmp_path / "inventories")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "inventories"


def _json_audit(cli: CliRunner, *options: str) -> str:
    run = cli("audit", "inventories", *AS_OF, "--format", "json", *options)
    assert run.code in (0, 1) and run.err == "", run.err
    return run.out


def test_jobs_1_and_2_give_the_same_bytes(
    cli: CliRunner, rollout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from checker.load import reading

    monkeypatch.setattr(reading, "POOL_MIN_BYTES", 0)  # the example rollout is small: pool it anyway
    pools: list[int] = []
    real = reading.ProcessPoolExecutor

    def counting(count: int, **kwargs: object) -> object:
        pools.append(count)
        return real(count, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "ProcessPoolExecutor", counting)
    one = _json_audit(cli, "--jobs", "1", "--no-cache")
    assert pools == []
    two = _json_audit(cli, "--jobs", "2", "--no-cache")
    assert pools == [1]  # one worker beside this process
    assert one.encode() == two.encode()


def test_a_cache_hit_and_a_changed_file_give_the_cold_bytes(
    cli: CliRunner, rollout: Path, parsed: list[str]
) -> None:
    cold = _json_audit(cli, "--no-cache")
    files = len(parsed)
    assert _json_audit(cli, "--cache-dir", "cache") == cold  # writes the entries
    assert _json_audit(cli, "--cache-dir", "cache") == cold  # reads them
    assert len(parsed) == 2 * files
    training = rollout / "sh1" / "servers-training.yaml"
    text = training.read_text()
    assert "until: 2027-12-31" in text
    training.write_text(text.replace("until: 2027-12-31", "until: 2026-12-31"))  # support expired
    del parsed[:]
    changed = _json_audit(cli, "--no-cache")
    assert changed != cold
    assert _json_audit(cli, "--cache-dir", "cache") == changed
    assert parsed[files:] == ["servers-training.yaml"]


def test_damaged_cache_entries_are_rebuilt_silently(
    cli: CliRunner, rollout: Path, parsed: list[str]
) -> None:
    cold = _json_audit(cli, "--cache-dir", "cache")
    files = len(parsed)
    entries = sorted((rollout.parent / "cache" / "files").iterdir())
    # and the compiled rulebook, the rules' outcomes and messages, and each file's validated
    # documents but the built-in servers catalog's (its raw fields are merged under servers)
    assert len(entries) == files + 3 + files - 1
    for i, entry in enumerate(entries):
        data = entry.read_bytes()
        entry.write_bytes(data[: len(data) // 2] if i % 2 else b"\x00garbage" * 10)
    assert _json_audit(cli, "--cache-dir", "cache") == cold
    assert len(parsed) == 2 * files  # every entry was refused and the file parsed again
    assert _json_audit(cli, "--cache-dir", "cache") == cold
    assert len(parsed) == 2 * files  # ... and written again


def test_an_entry_from_another_checker_version_is_not_used(
    cli: CliRunner, rollout: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from checker.load import cache

    cold = _json_audit(cli, "--cache-dir", "cache")
    files = len(parsed)
    monkeypatch.setattr(cache, "__version__", "99.0.0")
    cache.salt.cache_clear()
    try:
        assert _json_audit(cli, "--cache-dir", "cache") == cold
    finally:
        monkeypatch.undo()
        cache.salt.cache_clear()
    assert len(parsed) == 2 * files


def test_no_cache_from_the_environment(
    cli: CliRunner, rollout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHECKER_CACHE_DIR", str(rollout.parent / "env-cache"))
    monkeypatch.delenv("CHECKER_NO_CACHE")
    _json_audit(cli)
    assert len(list((rollout.parent / "env-cache" / "files").iterdir())) > 0
    monkeypatch.setenv("CHECKER_NO_CACHE", "1")
    monkeypatch.setenv("CHECKER_CACHE_DIR", str(rollout.parent / "unused"))
    _json_audit(cli)
    assert not (rollout.parent / "unused").exists()


@pytest.mark.parametrize(
    ("env", "written"),
    [({}, True), ({"CI": "true"}, False), ({"CI": "true", "CHECKER_CACHE_DIR": "named"}, True)],
    ids=["local", "ci", "ci-with-a-named-folder"],
)
def test_under_ci_only_a_named_cache_folder_is_used(
    cli: CliRunner, rollout: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], written: bool
) -> None:
    # A CI runner starts empty and is thrown away: entries in its home would never be read.
    monkeypatch.delenv("CHECKER_NO_CACHE")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(rollout.parent / "xdg"))
    for name, value in env.items():
        monkeypatch.setenv(name, str(rollout.parent / value) if name == "CHECKER_CACHE_DIR" else value)
    _json_audit(cli)
    folder = rollout.parent / ("named" if "CHECKER_CACHE_DIR" in env else "xdg/checker")
    assert (folder / "files").is_dir() == written


def test_cache_info_and_clean(cli: CliRunner, rollout: Path) -> None:
    _json_audit(cli, "--cache-dir", "cache")
    info = cli("cache", "info", "--cache-dir", "cache")
    assert info.code == 0 and info.err == ""
    assert info.lines[0] == "cache folder: cache"
    assert re.fullmatch(r"entries: \d+ \(\d+\.\d MB\)", info.lines[1])
    assert info.lines[2] == "in use: yes"
    entries = int(info.lines[1].split()[1])
    clean = cli("cache", "clean", "--cache-dir", "cache")
    assert (clean.code, clean.out, clean.err) == (0, f"removed {entries} entries from cache\n", "")
    assert cli("cache", "info", "--cache-dir", "cache").lines[1] == "entries: 0 (0.0 MB)"


@pytest.mark.parametrize(("argv", "last_line"), [
    (("--jobs", "0"), "checker audit: error: argument -j/--jobs: not a whole number >= 1: '0'"),
    (("--no-cache", "--cache-dir", "c"), "checker audit: error: argument --cache-dir: not allowed with "
                                         "argument --no-cache"),
], ids=["jobs-0", "no-cache-and-dir"])
def test_reading_usage_errors(cli: CliRunner, argv: tuple[str, ...], last_line: str) -> None:
    run = cli("audit", *argv)
    assert (run.code, run.out) == (2, "")
    assert run.err.splitlines()[-1] == last_line
