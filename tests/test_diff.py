"""`checker diff` end to end in a temporary git repository."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.conftest import AS_OF, CliRunner

FACILITY = """\
    kind: Facility
    name: hx1
    power: {it_capacity_kw: 500}
    racks:
      - name: H01
        redundancy: 2N
        feeds:
          - {name: H01-A, side: A, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
          - {name: H01-B, side: B, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
      - name: H02
        redundancy: 2N
        feeds:
          - {name: H02-A, side: A, voltage: 415, amps: 63, phase: 3, max_utilization: 80}
          - {name: H02-B, side: B, voltage: 415, amps: 63, phase: 3, max_utilization: 80}
    cooling: {capacity_kw: 600}
    """
SERVERS = """\
    kind: Servers
    facility: hx1
    defaults:
      support: {vendor: NVIDIA, level: 24x7, until: 2030-12-31}
    servers:
      - {name: g1, model: dgx-h100, rack: H01, position: 1}
    """
TWO_MORE = ("  - {name: g2, model: dgx-h100, rack: %s, position: 10}\n"
            "  - {name: g3, model: dgx-h100, rack: %s, position: 20}\n")
NEW = ("inv/facility.yaml:7:5: error power.rack-capacity "
       "rack hx1/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity")


def _git(repo: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *who, *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose HEAD holds a clean inventory: one DGX H100 in 2N rack H01."""
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "facility.yaml").write_text(textwrap.dedent(FACILITY))
    (tmp_path / "inv" / "servers.yaml").write_text(textwrap.dedent(SERVERS))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "commit", "-q", "--allow-empty", "-m", "0")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "clean")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _add_two(repo: Path, rack: str) -> None:
    with (repo / "inv" / "servers.yaml").open("a") as f:
        f.write(TWO_MORE % (rack, rack))


def test_two_dgx_in_a_2n_rack_are_one_new_finding_and_a_delta(repo: Path, cli: CliRunner) -> None:
    _add_two(repo, "H01")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[0].startswith("new findings against HEAD (")
    assert run.lines[1:] == [
        f"  {NEW}",
        "resolved findings: 0",
        "capacity changes: 2",
        "  facility hx1: +20.4 kW, headroom 489.8 -> 469.4 kW",
        "  rack hx1/H01: +20.4 kW, headroom 8.2 -> -12.2 kW",
        "checker diff: 1 new, 0 resolved, 2 capacity changes: fail",
    ]


def test_a_facility_delta_is_peak_draw_whatever_the_basis(repo: Path, cli: CliRunner) -> None:
    """On power.basis typical (7 kW of 10.2 kW a DGX H100) the UPS headroom is still on peak."""
    facility = repo / "inv" / "facility.yaml"
    facility.write_text(facility.read_text().replace("500}", "500, basis: typical}"))
    servers = repo / "inv" / "servers.yaml"
    servers.write_text(servers.read_text().replace("support:", "power_w: {typical: 7000}\n  support:"))
    _git(repo, "commit", "-qam", "typical")
    _add_two(repo, "H02")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert "  facility hx1: +20.4 kW, headroom 489.8 -> 469.4 kW" in run.lines


def test_moving_them_elsewhere_resolves_the_finding(repo: Path, cli: CliRunner) -> None:
    _add_two(repo, "H01")
    _git(repo, "commit", "-qam", "overload")
    (repo / "inv" / "servers.yaml").write_text(textwrap.dedent(SERVERS) + TWO_MORE % ("H02", "H02"))
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 0, run.out
    assert "resolved findings: 1" in run.lines
    assert f"  {NEW}" in run.lines
    assert "  rack hx1/H01: -20.4 kW, headroom -12.2 -> 8.2 kW" in run.lines
    assert "  rack hx1/H02: +20.4 kW, headroom 36.2 -> 15.8 kW" in run.lines


def test_fail_on_new_ignores_existing_debt(repo: Path, cli: CliRunner) -> None:
    _add_two(repo, "H01")
    _git(repo, "commit", "-qam", "debt")
    assert cli("diff", "--base", "HEAD", "inv", *AS_OF).code == 1
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--fail-on-new")
    assert run.code == 0 and "checker diff: 0 new, 0 resolved, 0 capacity changes: pass" in run.lines


def test_json_and_markdown(repo: Path, cli: CliRunner, tmp_path: Path) -> None:
    _add_two(repo, "H01")
    out = tmp_path.parent / f"{tmp_path.name}-comment.md"
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "json", "--format", f"markdown:{out}")
    doc = json.loads(run.out)
    assert [f["entity"] for f in doc["new"]] == ["rack/hx1/H01"] and doc["resolved"] == []
    assert doc["capacity_changes"][1] == {
        "entity": "rack/hx1/H01",
        "load_kw": {"before": 10.2, "after": 30.6, "change": 20.4},
        "headroom_kw": {"before": 8.201, "after": -12.199},
    }
    comment = out.read_text()
    assert comment.startswith("### checker: 1 new, 0 resolved against `HEAD`")
    assert "- rack hx1/H01: +20.4 kW, headroom 8.2 -\\> -12.2 kW" in comment  # `>` escaped, renders as is


def test_github_annotations_show_only_new_findings(repo: Path, cli: CliRunner) -> None:
    _add_two(repo, "H01")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "github")
    assert run.lines[0].startswith("::error file=inv/facility.yaml,line=7,col=5,title=power.rack-capacity::")


def test_code_review_formats_show_only_new_findings_as_the_audit_fingerprints_them(
    repo: Path, cli: CliRunner
) -> None:
    """GitLab's issues and SARIF's results of `checker diff` are the new findings,
    each with the fingerprint the full audit gives it: the same issue or alert."""
    _add_two(repo, "H01")
    issues = json.loads(cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "gitlab").out)
    audit = json.loads(cli("audit", "inv", *AS_OF, "--format", "gitlab").out)
    results = json.loads(cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "sarif").out)["runs"][0]
    new = json.loads(cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "json").out)["new"]
    rules = [f["rule"] for f in new]
    assert [i["check_name"] for i in issues] == [r["ruleId"] for r in results["results"]] == rules
    assert {i["fingerprint"] for i in issues} <= {i["fingerprint"] for i in audit}
    assert [i["fingerprint"] for i in issues] == [
        r["partialFingerprints"]["primaryLocationLineHash"] for r in results["results"]
    ]


# A second facility, hx2, whose rack H01 is overloaded: what a new path brings.
HX2_FINDINGS = [
    "more/facility.yaml:5:5: warning power.psu-side-degraded rack hx2/H01: 3 of its 3 servers keep less "
    "than their peak draw on one side's PSUs (as little as 97.1 %): when a side fails they run at reduced "
    "performance until it is back",
    "more/facility.yaml:7:5: error power.rack-capacity "
    "rack hx2/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity",
]
HX2_NEW = [f"  {line}" for line in HX2_FINDINGS]
HX2_CHANGES = [
    "capacity changes: 3",
    "  facility hx2: +30.6 kW, headroom n/a -> 469.4 kW",
    "  rack hx2/H01: +30.6 kW, headroom n/a -> -12.2 kW",
    "  rack hx2/H02: +0.0 kW, headroom n/a -> 36.2 kW",
]


def _write_hx2(repo: Path) -> None:
    (repo / "more").mkdir(exist_ok=True)
    (repo / "more" / "facility.yaml").write_text(textwrap.dedent(FACILITY).replace("hx1", "hx2"))
    servers = textwrap.dedent(SERVERS).replace("hx1", "hx2").replace("g1", "k1") + TWO_MORE % ("H01", "H01")
    (repo / "more" / "servers.yaml").write_text(servers.replace("g2", "k2").replace("g3", "k3"))


@pytest.fixture
def debt(repo: Path) -> Path:
    """The repository with a finding at HEAD (rack hx1/H01 overloaded): a wrong base
    audit shows it resolved and hx1's racks as changed."""
    _add_two(repo, "H01")
    _git(repo, "commit", "-qam", "debt")
    return repo


@pytest.mark.parametrize(
    "paths",
    [
        ("inv", "more"),  # a folder the base lacks
        ("inv", "more/facility.yaml", "more/servers.yaml"),  # files the base lacks
        ("more",),  # only paths the base lacks: the base is empty
        ("more/facility.yaml", "more/servers.yaml"),
    ],
)
def test_a_path_the_base_lacks_is_an_empty_inventory_there(
    debt: Path, cli: CliRunner, paths: tuple[str, ...]
) -> None:
    _write_hx2(debt)
    run = cli("diff", "--base", "HEAD", *paths, *AS_OF)
    assert run.err == ""
    assert run.lines[0].startswith("new findings against HEAD (") and run.lines[0].endswith("): 2")
    assert run.lines[1:] == [
        *HX2_NEW,
        "resolved findings: 0",  # not an input error at the base, not hx1's debt
        *HX2_CHANGES,  # hx1's racks did not change
        "checker diff: 2 new, 0 resolved, 3 capacity changes: fail",
    ]
    assert run.code == 1
    assert cli("diff", "--base", "HEAD", *paths, *AS_OF, "--fail-on-new").code == 1


def test_a_folder_with_no_yaml_file_at_the_base_is_empty_there(debt: Path, cli: CliRunner) -> None:
    (debt / "more").mkdir()
    (debt / "more" / "README.md").write_text("hx2, soon\n")
    _git(debt, "add", "-A")
    _git(debt, "commit", "-qm", "placeholder")
    _write_hx2(debt)
    run = cli("diff", "--base", "HEAD", "inv", "more", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == [
        *HX2_NEW,
        "resolved findings: 0",
        *HX2_CHANGES,
        "checker diff: 2 new, 0 resolved, 3 capacity changes: fail",
    ]


def test_the_default_path_the_base_lacks_is_empty_there(debt: Path, cli: CliRunner) -> None:
    _write_hx2(debt)
    (debt / "more").rename(debt / "inventories")
    run = cli("diff", "--base", "HEAD", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == [
        *(line.replace("more/", "inventories/") for line in HX2_NEW),
        "resolved findings: 0",
        *HX2_CHANGES,
        "checker diff: 2 new, 0 resolved, 3 capacity changes: fail",
    ]


def test_a_file_named_whatever_its_name_is_read_at_the_base_too(debt: Path, cli: CliRunner) -> None:
    # The audit reads a file named on the command line whatever its name: so does the base.
    (debt / "inv" / "servers.yaml").rename(debt / "servers.inventory")
    _git(debt, "add", "-A")
    _git(debt, "commit", "-qm", "renamed")
    run = cli("diff", "--base", "HEAD", "inv", "servers.inventory", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == [
        "resolved findings: 0",
        "capacity changes: 0",
        "checker diff: 0 new, 0 resolved, 0 capacity changes: fail",
    ]


def test_a_file_deleted_below_a_path_resolves_its_findings(debt: Path, cli: CliRunner) -> None:
    _write_hx2(debt)
    _git(debt, "add", "-A")
    _git(debt, "commit", "-qm", "hx2")
    (debt / "more" / "servers.yaml").unlink()
    run = cli("diff", "--base", "HEAD", "inv", "more", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == [
        "resolved findings: 2",
        *HX2_NEW,
        "capacity changes: 2",
        "  facility hx2: -30.6 kW, headroom 469.4 -> 500.0 kW",
        "  rack hx2/H01: -30.6 kW, headroom -12.2 -> 18.4 kW",
        "checker diff: 0 new, 2 resolved, 2 capacity changes: fail",
    ]


def test_a_path_deleted_at_head_is_an_error_as_in_an_audit(debt: Path, cli: CliRunner) -> None:
    # The working tree is audited as `checker audit` would: a path it lacks is an error.
    _write_hx2(debt)
    _git(debt, "add", "-A")
    _git(debt, "commit", "-qm", "hx2")
    _git(debt, "rm", "-rq", "more")
    run = cli("diff", "--base", "HEAD", "inv", "more", *AS_OF)
    assert (run.code, run.out, run.err) == (2, "", "more: no such file or directory\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--base", "no-such-branch", "inv"), "unknown git ref 'no-such-branch': no such branch, tag"),
        (("--base=--output=x", "inv"), "unknown git ref '--output=x'"),
    ],
)
def test_bad_refs_exit_2(repo: Path, cli: CliRunner, args: tuple[str, ...], message: str) -> None:
    run = cli("diff", *args, *AS_OF)
    assert run.code == 2 and message in run.err and run.out == ""


def test_outside_a_repository_exits_2(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    (tmp_path / "inv").mkdir()
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 2 and "not inside a git repository" in run.err


def _frameworks(repo: Path, frameworks: str) -> None:
    servers = textwrap.dedent(SERVERS).replace(
        "rack: H01, position: 1}", f"rack: H01, position: 1, software: {{frameworks: {frameworks}}}}}"
    )
    (repo / "inv" / "servers.yaml").write_text(servers)


def test_a_second_finding_of_one_rule_on_one_entity_is_new(repo: Path, cli: CliRunner) -> None:
    # Two frameworks of one server are two facts with the server's entity id:
    # a second unknown framework must not hide behind the first.
    _frameworks(repo, "{foo: '1.0'}")
    _git(repo, "commit", "-qam", "one unknown framework")
    _frameworks(repo, "{foo: '1.0', bar: '2.0'}")
    run = cli("diff", "--base", "HEAD", "inv", "--fail-on-new", "--fail-on", "warning", *AS_OF)
    assert run.code == 1, run.out
    new = [line for line in run.lines if "compatibility.framework-unknown" in line]
    assert len(new) == 1 and "framework bar 2.0" in new[0], run.out
    assert run.lines[-1] == "checker diff: 1 new, 0 resolved, 0 capacity changes: fail"


def test_a_changed_value_of_a_finding_is_neither_new_nor_resolved(repo: Path, cli: CliRunner) -> None:
    _frameworks(repo, "{foo: '1.0', bar: '2.0'}")
    _git(repo, "commit", "-qam", "two unknown frameworks")
    _frameworks(repo, "{foo: '1.1', bar: '2.0'}")
    run = cli("diff", "--base", "HEAD", "inv", "--fail-on-new", *AS_OF)
    assert run.lines[-1] == "checker diff: 0 new, 0 resolved, 0 capacity changes: pass", run.out
