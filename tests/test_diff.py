"""`checker diff` end to end in a temporary git repository."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import AS_OF, CliRunner, Run
from tests.gitrepo import FACILITY, SERVERS, TWO_MORE, add_two, git

NEW_AT_RACK = ("inv/facility.yaml:7:5: error power.rack-capacity "
               "rack hx1/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity")
# The rack's finding on g2, the first server the change added to it (servers.yaml line 7),
# not on the rack's own line, which the change did not touch.
NEW = NEW_AT_RACK.replace("inv/facility.yaml:7:5", "inv/servers.yaml:7:5")
# A DGX H100 (catalog): 10.2 kW, 8 U, 130.45 kg, 8 GPUs; racks are 42 U.
TWO_DGX = [
    "capacity changes: 2",
    "  facility hx1: +20.4 kW, headroom 489.8 -> 469.4 kW; cooling headroom 589.8 -> 569.4 kW; "
    "+16 U (free 76 -> 60); +260.9 kg; +2 servers; +16 GPUs",
    "  rack hx1/H01: +20.4 kW, headroom 8.2 -> -12.2 kW; heat +20.4 kW; +16 U (free 34 -> 18); "
    "+260.9 kg; +2 servers; +16 GPUs",
]


def test_two_dgx_in_a_2n_rack_are_one_new_finding_and_a_delta(repo: Path, cli: CliRunner) -> None:
    add_two(repo, "H01")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[0].startswith("checker diff against HEAD (")
    assert run.lines[0].endswith("): fail: rack hx1/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity")
    assert run.lines[1:] == [
        "new findings: 1",
        f"  {NEW}",
        "worsened findings: 0",
        "resolved findings: 0",
        "waived findings: 0",
        *TWO_DGX,
        "checker diff: 1 new, 0 worsened, 0 resolved, 0 waived, 2 capacity changes: fail",
    ]


def _delta(run: Run, entity: str) -> str:
    """The capacity change line of one rack or facility."""
    found = [line for line in run.lines if line.startswith(f"  {entity}: ")]
    assert len(found) == 1, run.out
    return found[0]


def test_a_facility_delta_is_peak_draw_whatever_the_basis(repo: Path, cli: CliRunner) -> None:
    """On power.basis typical (7 kW of 10.2 kW a DGX H100) the UPS headroom is still on peak."""
    facility = repo / "inv" / "facility.yaml"
    facility.write_text(facility.read_text().replace("500}", "500, basis: typical}"))
    servers = repo / "inv" / "servers.yaml"
    servers.write_text(servers.read_text().replace("support:", "power_w: {typical: 7000}\n  support:"))
    git(repo, "commit", "-qam", "typical")
    add_two(repo, "H02")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert _delta(run, "facility hx1").startswith("  facility hx1: +20.4 kW, headroom 489.8 -> 469.4 kW;")


def test_moving_them_elsewhere_resolves_the_finding(repo: Path, cli: CliRunner) -> None:
    add_two(repo, "H01")
    git(repo, "commit", "-qam", "overload")
    (repo / "inv" / "servers.yaml").write_text(textwrap.dedent(SERVERS) + TWO_MORE % ("H02", "H02"))
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 0, run.out
    assert "resolved findings: 1" in run.lines
    assert f"  {NEW_AT_RACK}" in run.lines  # where it was, at the base
    assert _delta(run, "rack hx1/H01").startswith("  rack hx1/H01: -20.4 kW, headroom -12.2 -> 8.2 kW;")
    assert _delta(run, "rack hx1/H02").startswith("  rack hx1/H02: +20.4 kW, headroom 36.2 -> 15.8 kW;")


def test_fail_on_new_ignores_existing_debt(repo: Path, cli: CliRunner) -> None:
    add_two(repo, "H01")
    git(repo, "commit", "-qam", "debt")
    assert cli("diff", "--base", "HEAD", "inv", *AS_OF).code == 1
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--fail-on-new")
    assert run.code == 0
    assert "checker diff: 0 new, 0 worsened, 0 resolved, 0 waived, 0 capacity changes: pass" in run.lines


def test_json_and_markdown(repo: Path, cli: CliRunner, tmp_path: Path) -> None:
    add_two(repo, "H01")
    out = tmp_path.parent / f"{tmp_path.name}-comment.md"
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "json", "--format", f"markdown:{out}")
    doc = json.loads(run.out)
    assert [f["entity"] for f in doc["new"]] == ["rack/hx1/H01"] and doc["resolved"] == []
    assert doc["capacity_changes"][1] == {
        "entity": "rack/hx1/H01",
        "load_kw": {"before": 10.2, "after": 30.6, "change": 20.4},
        "headroom_kw": {"before": 8.201, "after": -12.199, "change": -20.4},
        "heat_kw": {"before": 10.2, "after": 30.6, "change": 20.4},
        "cooling_headroom_kw": {"before": None, "after": None, "change": None},  # no cooling_kw of its own
        "u_used": {"before": 8, "after": 24, "change": 16},
        "u_free": {"before": 34, "after": 18, "change": -16},
        "weight_kg": {"before": 130.45, "after": 391.35, "change": 260.9},
        "servers": {"before": 1, "after": 3, "change": 2},
        "gpus": {"before": 8, "after": 24, "change": 16},
    }
    assert doc["counts"] == {"new": 1, "worsened": 0, "resolved": 0, "waived": 0}
    assert doc["reason"] == "rack hx1/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity"
    comment = out.read_text()
    assert comment.startswith("**✖ fail:** rack hx1/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity\n")
    # Linked from the comment's folder (beside the repository) to the file, named from the root.
    assert (
        "| error | `power.rack-capacity` | rack/hx1/H01 "
        f"| [inv/servers.yaml:7]({tmp_path.name}/inv/servers.yaml#L7) "
        "| rack hx1/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity |"
    ) in comment.splitlines()
    assert (
        "| rack hx1/H01 | +20.4 kW (headroom 8.2 → -12.2) | heat +20.4 kW | +16 (free 34 → 18) "
        "| +260.9 kg | +2 | +16 |"
    ) in comment.splitlines()
    assert "- `power.rack-capacity`: Move servers to a rack with headroom, or add or upsize feeds." in comment
    assert comment.endswith("<!-- checker:comment -->\n")


def test_github_annotations_show_only_new_findings(repo: Path, cli: CliRunner) -> None:
    add_two(repo, "H01")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "github")
    # On g2's line, which the change added: not on the rack's, which it did not touch.
    assert run.lines[0].startswith("::error file=inv/servers.yaml,line=7,col=5,title=power.rack-capacity::")


def test_code_review_formats_show_only_new_findings_as_the_audit_fingerprints_them(
    repo: Path, cli: CliRunner
) -> None:
    """GitLab's issues and SARIF's results of `checker diff` are the new findings,
    each with the fingerprint the full audit gives it: the same issue or alert."""
    add_two(repo, "H01")
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
# Most severe first. A file the base lacks is all new: findings stay where they are.
HX2_FINDINGS = [
    "more/facility.yaml:7:5: error power.rack-capacity "
    "rack hx2/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity",
    "more/facility.yaml:5:5: warning power.psu-side-degraded rack hx2/H01: 3 of its 3 servers keep less "
    "than their peak draw on one side's PSUs (as little as 97.1 %): when a side fails they run at reduced "
    "performance until it is back",
]
HX2_NEW = [f"  {line}" for line in HX2_FINDINGS]
HX2_CHANGES = [
    "capacity changes: 3",
    "  facility hx2: +30.6 kW, headroom n/a -> 469.4 kW; cooling headroom n/a -> 569.4 kW; "
    "+24 U (free n/a -> 60); +391.35 kg; +3 servers; +24 GPUs",
    "  rack hx2/H01: +30.6 kW, headroom n/a -> -12.2 kW; heat +30.6 kW; +24 U (free n/a -> 18); "
    "+391.35 kg; +3 servers; +24 GPUs",
    "  rack hx2/H02: +0.0 kW, headroom n/a -> 36.2 kW; +0 U (free n/a -> 42)",
]
HX2_DIFF = [
    "new findings: 2",
    *HX2_NEW,
    "worsened findings: 0",
    "resolved findings: 0",  # not an input error at the base, not hx1's debt
    "waived findings: 0",
    *HX2_CHANGES,  # hx1's racks did not change
    "checker diff: 2 new, 0 worsened, 0 resolved, 0 waived, 3 capacity changes: fail",
]
HX2_VERDICT = "): fail: rack hx2/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity"


def _write_hx2(repo: Path) -> None:
    (repo / "more").mkdir(exist_ok=True)
    (repo / "more" / "facility.yaml").write_text(textwrap.dedent(FACILITY).replace("hx1", "hx2"))
    servers = textwrap.dedent(SERVERS).replace("hx1", "hx2").replace("g1", "k1") + TWO_MORE % ("H01", "H01")
    (repo / "more" / "servers.yaml").write_text(servers.replace("g2", "k2").replace("g3", "k3"))


@pytest.fixture
def debt(repo: Path) -> Path:
    """The repository with a finding at HEAD (rack hx1/H01 overloaded): a wrong base
    audit shows it resolved and hx1's racks as changed."""
    add_two(repo, "H01")
    git(repo, "commit", "-qam", "debt")
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
    assert run.lines[0].startswith("checker diff against HEAD (") and run.lines[0].endswith(HX2_VERDICT)
    assert run.lines[1:] == HX2_DIFF
    assert run.code == 1
    assert cli("diff", "--base", "HEAD", *paths, *AS_OF, "--fail-on-new").code == 1


def test_a_folder_with_no_yaml_file_at_the_base_is_empty_there(debt: Path, cli: CliRunner) -> None:
    (debt / "more").mkdir()
    (debt / "more" / "README.md").write_text("hx2, soon\n")
    git(debt, "add", "-A")
    git(debt, "commit", "-qm", "placeholder")
    _write_hx2(debt)
    run = cli("diff", "--base", "HEAD", "inv", "more", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == HX2_DIFF


def test_the_default_path_the_base_lacks_is_empty_there(debt: Path, cli: CliRunner) -> None:
    _write_hx2(debt)
    (debt / "more").rename(debt / "inventories")
    run = cli("diff", "--base", "HEAD", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == [line.replace("more/", "inventories/") for line in HX2_DIFF]


def test_a_file_named_whatever_its_name_is_read_at_the_base_too(debt: Path, cli: CliRunner) -> None:
    # The audit reads a file named on the command line whatever its name: so does the base.
    (debt / "inv" / "servers.yaml").rename(debt / "servers.inventory")
    git(debt, "add", "-A")
    git(debt, "commit", "-qm", "renamed")
    run = cli("diff", "--base", "HEAD", "inv", "servers.inventory", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == [
        "new findings: 0",
        "worsened findings: 0",
        "resolved findings: 0",
        "waived findings: 0",
        "capacity changes: 0",
        "checker diff: 0 new, 0 worsened, 0 resolved, 0 waived, 0 capacity changes: fail",
    ]


def test_a_file_deleted_below_a_path_resolves_its_findings(debt: Path, cli: CliRunner) -> None:
    _write_hx2(debt)
    git(debt, "add", "-A")
    git(debt, "commit", "-qm", "hx2")
    (debt / "more" / "servers.yaml").unlink()
    run = cli("diff", "--base", "HEAD", "inv", "more", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines[1:] == [
        "new findings: 0",
        "worsened findings: 0",
        "resolved findings: 2",
        *HX2_NEW,
        "waived findings: 0",
        "capacity changes: 2",
        "  facility hx2: -30.6 kW, headroom 469.4 -> 500.0 kW; cooling headroom 569.4 -> 600.0 kW; "
        "-24 U (free 60 -> 84); -391.35 kg; -3 servers; -24 GPUs",
        "  rack hx2/H01: -30.6 kW, headroom -12.2 -> 18.4 kW; heat -30.6 kW; -24 U (free 18 -> 42); "
        "-391.35 kg; -3 servers; -24 GPUs",
        "checker diff: 0 new, 0 worsened, 2 resolved, 0 waived, 2 capacity changes: fail",
    ]


def test_a_path_deleted_at_head_is_an_error_as_in_an_audit(debt: Path, cli: CliRunner) -> None:
    # The working tree is audited as `checker audit` would: a path it lacks is an error.
    _write_hx2(debt)
    git(debt, "add", "-A")
    git(debt, "commit", "-qm", "hx2")
    git(debt, "rm", "-rq", "more")
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
    git(repo, "commit", "-qam", "one unknown framework")
    _frameworks(repo, "{foo: '1.0', bar: '2.0'}")
    run = cli("diff", "--base", "HEAD", "inv", "--fail-on-new", "--fail-on", "warning", *AS_OF)
    assert run.code == 1, run.out
    new = [line for line in run.lines if "compatibility.framework-unknown" in line]
    assert len(new) == 1 and "framework bar 2.0" in new[0], run.out
    assert run.lines[-1] == "checker diff: 1 new, 0 worsened, 0 resolved, 0 waived, 0 capacity changes: fail"


def test_a_changed_value_of_a_finding_is_neither_new_nor_resolved(repo: Path, cli: CliRunner) -> None:
    _frameworks(repo, "{foo: '1.0', bar: '2.0'}")
    git(repo, "commit", "-qam", "two unknown frameworks")
    _frameworks(repo, "{foo: '1.1', bar: '2.0'}")
    run = cli("diff", "--base", "HEAD", "inv", "--fail-on-new", *AS_OF)
    summary = "checker diff: 0 new, 0 worsened, 0 resolved, 0 waived, 0 capacity changes: pass"
    assert run.lines[-1] == summary, run.out


# ---------------------------------------------------------------- where the change is
ENDS_SOON = ("warning support.ends-soon server g2: support ends 2027-03-01, 45 days after the rollout "
             "on 2027-01-15 (horizon 365 days)")


@pytest.mark.parametrize(
    ("base", "added", "where"),
    [
        # From `defaults:`: on g2's own mapping (line 7), not the defaults' line 4.
        ("  - {name: g1, model: dgx-h100, rack: H02, position: 1}\n",
         "  - name: g2\n    model: dgx-h100\n    rack: H02\n    position: 10\n", "inv/servers.yaml:7:5"),
        # From a YAML anchor (g1's mapping): on g2's `<<:`, not g1's lines.
        ("  - &dgx\n    name: g1\n    model: dgx-h100\n    rack: H02\n    position: 1\n",
         "  - <<: *dgx\n    name: g2\n    position: 10\n", "inv/servers.yaml:11:5"),
    ],
)  # fmt: skip
def test_an_inherited_fields_finding_is_on_the_server_the_change_added(
    repo: Path, cli: CliRunner, base: str, added: str, where: str
) -> None:
    header = "kind: Servers\nfacility: hx1\ndefaults:\n"
    header += "  support: {vendor: NVIDIA, level: 24x7, until: 2027-03-01}\n"
    servers = repo / "inv" / "servers.yaml"
    servers.write_text(header + "servers:\n" + base)
    git(repo, "commit", "-qam", "g1, support ending soon")  # g1's warning is debt: on line 4
    servers.write_text(header + "servers:\n" + base + added)
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.lines[1:3] == ["new findings: 1", f"  {where}: {ENDS_SOON}"], run.out


def test_a_change_to_the_rack_itself_is_on_the_line_it_changed(repo: Path, cli: CliRunner) -> None:
    facility = repo / "inv" / "facility.yaml"
    facility.write_text(facility.read_text().replace("amps: 32", "amps: 16", 1))  # H01-A, line 8
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.lines[1:3] == [
        "new findings: 1",
        "  inv/facility.yaml:8:7: error power.rack-capacity rack hx1/H01 draws 10.2 kW, over its 9.2 kW 2N "
        "feed capacity",
    ], run.out


MODELS = """\
kind: ServerModels
servers:
  - {name: big, vendor: Acme, u_height: 2, power_w: {max: 9000}, source: a datasheet}
"""


def test_a_finding_caused_elsewhere_stays_where_it_points(repo: Path, cli: CliRunner) -> None:
    # A catalog model's draw goes up: no line of the rack or of its server changed.
    (repo / "inv" / "models.yaml").write_text(MODELS)
    servers = repo / "inv" / "servers.yaml"
    servers.write_text(servers.read_text().replace("model: dgx-h100", "model: big"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a 9 kW model")
    (repo / "inv" / "models.yaml").write_text(MODELS.replace("9000", "19000"))
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.lines[1:3] == [
        "new findings: 1",
        "  inv/facility.yaml:7:5: error power.rack-capacity rack hx1/H01 draws 19 kW, over its 18.4 kW 2N "
        "feed capacity",
    ], run.out


def test_paths_are_named_from_the_repository_root_in_a_sub_directory(
    repo: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_two(repo, "H01")
    monkeypatch.chdir(repo / "inv")
    run = cli("diff", "--base", "HEAD", ".", *AS_OF)
    assert run.lines[2] == f"  {NEW}", run.out  # inv/servers.yaml, as git diff names it


# ---------------------------------------------------------------- worsened and waived
FULL = "  - {name: g2, rack: H01, position: 10, power_w: {max: 6600}, u_height: 2}\n"  # 16.8 of 18.4 kW


def test_a_warning_that_became_an_error_is_worsened_not_resolved(repo: Path, cli: CliRunner) -> None:
    with (repo / "inv" / "servers.yaml").open("a") as f:
        f.write(FULL)
    git(repo, "commit", "-qam", "a full rack: 91.3 %")
    with (repo / "inv" / "servers.yaml").open("a") as f:
        f.write("  - {name: g3, rack: H01, position: 20, power_w: {max: 2000}, u_height: 1}\n")
    # One format to standard output (two would interleave there), the other to a file.
    out = repo.parent / "diff.json"
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--format", "text", "--format", f"json:{out}")
    text = run.out
    lines = text.splitlines()
    assert lines[1:6] == [
        "new findings: 0",
        "worsened findings: 1",
        "  inv/servers.yaml:8:5: error power.rack-capacity rack hx1/H01 draws 18.8 kW, over its 18.4 kW 2N "
        "feed capacity (was warning power.rack-headroom)",
        "resolved findings: 0",
        "waived findings: 0",
    ], text
    report = json.loads(out.read_text())
    # The contract's lists keep their meaning: the error is new, the warning resolved.
    assert [f["rule"] for f in report["new"]] == ["power.rack-capacity"]
    assert [f["rule"] for f in report["resolved"]] == ["power.rack-headroom"]
    assert [(w["rule"], w["was"]["rule"]) for w in report["worsened"]] == [
        ("power.rack-capacity", "power.rack-headroom")
    ]
    assert report["counts"] == {"new": 0, "worsened": 1, "resolved": 0, "waived": 0}


WAIVER = """\
kind: Waivers
waivers:
  - {rule: power.rack-capacity, entity: rack/hx1/H01, reason: PDU swap DC-1, owner: ops@example.com,
     expires: 2027-12-31}
"""


def test_a_new_finding_a_waiver_covers_is_apart_and_does_not_fail_on_new(repo: Path, cli: CliRunner) -> None:
    (repo / "inv" / "waivers.yaml").write_text(WAIVER)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "waiver ahead of the change")
    add_two(repo, "H01")
    run = cli("diff", "--base", "HEAD", "inv", "--fail-on-new", *AS_OF)
    assert run.code == 0, run.out
    assert run.lines[1:6] == [
        "new findings: 0",
        "worsened findings: 0",
        "resolved findings: 1",  # the waiver now matches a finding
        "  inv/waivers.yaml:3:5: warning waiver.unused waiver for power.rack-capacity on rack/hx1/H01 "
        "matches no finding",
        "waived findings: 1",
    ], run.out
    assert run.lines[6] == f"  {NEW} [waived]"


def test_a_lifted_waiver_is_worsened_and_fails_on_new(repo: Path, cli: CliRunner) -> None:
    (repo / "inv" / "waivers.yaml").write_text(WAIVER)
    add_two(repo, "H01")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "overloaded, waived")
    (repo / "inv" / "waivers.yaml").unlink()
    run = cli("diff", "--base", "HEAD", "inv", "--fail-on-new", *AS_OF)
    assert run.code == 1, run.out
    assert run.lines[1:4] == [
        "new findings: 0",
        "worsened findings: 1",
        f"  {NEW_AT_RACK} (was waived)",
    ], run.out


G2 = "  - {name: g2, model: dgx-h100, rack: H01, position: 10}\n"
DEFAULTS_BELOW = """\
kind: Servers
facility: hx1
servers:
  - {name: g1, model: dgx-h100, rack: H01, position: 1}
defaults:
  support: {vendor: NVIDIA, level: 24x7, until: 2030-12-31}
"""


@pytest.mark.parametrize(
    ("change", "where"),
    [
        # The defaults raise every server's draw: the rack's finding is on the line that did.
        (lambda t: t.replace("  support:", "  power_w: {max: 20000}\n  support:"), "inv/servers.yaml:6:3"),
        # A server added (line 5) and the defaults below touched too (a new vendor name): the
        # server, not the defaults line that g1, already there, inherits.
        (lambda t: t.replace("defaults:", f"{G2}defaults:").replace("NVIDIA", "NVIDIA Corp"),
         "inv/servers.yaml:5:5"),
    ],
)  # fmt: skip
def test_a_change_to_the_defaults_is_where_a_rack_finding_points_when_no_server_changed(
    repo: Path, cli: CliRunner, change: Callable[[str], str], where: str
) -> None:
    servers = repo / "inv" / "servers.yaml"
    servers.write_text(DEFAULTS_BELOW)
    git(repo, "commit", "-qam", "defaults written below the servers")
    servers.write_text(change(DEFAULTS_BELOW))
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    new = [line for line in run.lines if "power.rack-capacity" in line]
    assert len(new) == 1 and new[0].startswith(f"  {where}: error power.rack-capacity rack hx1/H01"), run.out


def test_the_comment_shows_alike_findings_once_with_their_names(repo: Path, cli: CliRunner) -> None:
    servers = repo / "inv" / "servers.yaml"
    nbd = "".join(
        f"  - {{name: n{i}, model: dgx-h100, rack: H02, position: {10 * i + 1}, "
        "support: {vendor: NVIDIA, level: nbd, until: 2030-12-31}}\n"
        for i in range(3)
    )
    servers.write_text(servers.read_text() + nbd)  # lines 7 to 9
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF, "--select", "support.*", "--format", "markdown")
    assert (
        "| warning | `support.level-24x7` | server/n0 | [inv/servers.yaml:7](inv/servers.yaml#L7) "
        "| server n0 has nbd support; the rollout expects 24x7 (and 2 more alike: [n1](inv/servers.yaml#L8), "
        "[n2](inv/servers.yaml#L9)) |"
    ) in run.out.splitlines(), run.out
    assert "): 3 new, 0 worsened, 0 resolved" in run.out  # counted as findings, not rows
