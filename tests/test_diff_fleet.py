"""`checker diff` and the machine formats on a fleet with more findings per
rule than the display cap shows (100): none is lost to the cap.

The fleet (benchmarks/fleet.py) has 250 racks of four 10.2 kW servers, each
over its 2N feeds: 250 `power.rack-capacity` errors before any change.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchmarks import fleet
from checker.cli import main
from tests.conftest import AS_OF, CliRunner

SERVERS = 1_000
RACKS = SERVERS // fleet.SERVERS_PER_RACK
POD = "fleet/" + fleet.pod_file(0)


def _git(repo: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *who, *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fleet.write(SERVERS, tmp_path / "fleet")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "fleet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The unchanged fleet audited once in each machine format."""
    folder = tmp_path_factory.mktemp("fleet") / "fleet"
    fleet.write(SERVERS, folder)
    out = {}
    for fmt in ("json", "junit", "sarif"):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            main(["audit", str(folder), "--format", fmt, *AS_OF])
        out[fmt] = buffer.getvalue()
    return out


def _add_overloaded_rack(repo: Path) -> None:
    facility = repo / "fleet" / "facility.yaml"
    rack = f"  - name: R{RACKS:05d}\n    redundancy: 2N\n    feeds: *feeds\n"
    facility.write_text(facility.read_text() + rack)
    pod = repo / "fleet" / fleet.pod_file(0)
    body = fleet.servers(SERVERS, SERVERS + fleet.SERVERS_PER_RACK).split("servers:\n", 1)[1]
    pod.write_text(pod.read_text() + body)


def test_the_fleet_has_more_findings_of_one_rule_than_the_cap_shows(audits: dict[str, str]) -> None:
    report = json.loads(audits["json"])
    assert [f["rule"] for f in report["findings"]].count("power.rack-capacity") == RACKS > 100


def test_an_added_overloaded_rack_is_new_and_fails(repo: Path, cli: CliRunner) -> None:
    _add_overloaded_rack(repo)
    run = cli("diff", "--base", "HEAD", "fleet", "--fail-on-new", *AS_OF)
    assert run.code == 1, run.out
    assert (
        "  fleet/facility.yaml:760:5: error power.rack-capacity rack bench/R00250 draws 40.8 kW, "
        "over its 36.2 kW 2N feed capacity"
    ) in run.out.splitlines()
    # Air cooling and PSU sides of the new rack too; nothing on a rack the change left alone.
    assert run.out.splitlines()[-1] == (
        "checker diff: 3 new, 0 worsened, 0 resolved, 0 waived, 2 capacity changes: fail"
    )
    doc = json.loads(cli("diff", "--base", "HEAD", "fleet", "--format", "json", *AS_OF).out)
    assert {f["entity"] for f in doc["new"]} == {f"rack/bench/R{RACKS:05d}"}


def test_fixing_one_rack_adds_no_new_finding(repo: Path, cli: CliRunner) -> None:
    pod = repo / "fleet" / fleet.pod_file(0)
    # Rack R00007 keeps one of its four servers: within its feeds.
    text = pod.read_text()
    for i in (29, 30, 31):
        text = re.sub(rf"  - name: gpu-{i:06d}\n(    .*\n)+?(?=  - name:)", "", text)
    pod.write_text(text)
    run = cli("diff", "--base", "HEAD", "fleet", "--fail-on-new", *AS_OF)
    assert run.code == 0, run.out
    assert run.out.splitlines()[-1] == (
        "checker diff: 0 new, 0 worsened, 2 resolved, 0 waived, 2 capacity changes: pass"
    )
    doc = json.loads(cli("diff", "--base", "HEAD", "fleet", "--format", "json", *AS_OF).out)
    assert {f["entity"] for f in doc["resolved"]} == {"rack/bench/R00007"}
    assert {d["entity"] for d in doc["capacity_changes"]} == {"facility/bench", "rack/bench/R00007"}


def test_junit_lists_every_finding_in_its_rules_failure(audits: dict[str, str]) -> None:
    junit = ET.fromstring(audits["junit"])
    report = json.loads(audits["json"])
    cases = {c.get("name"): c for c in junit.iter("testcase")}
    for rule in {f["rule"] for f in report["findings"]}:
        listed = (cases[rule].findtext("failure") or "").splitlines()
        entities = [f["entity"] for f in report["findings"] if f["rule"] == rule]
        assert [line.split(" ")[2].rstrip(":") for line in listed] == entities
    # Every rack is over its feeds: each one is listed, past the first 100 too.
    assert len((cases["power.rack-capacity"].findtext("failure") or "").splitlines()) == RACKS


def test_sarif_has_every_open_finding(audits: dict[str, str]) -> None:
    sarif = json.loads(audits["sarif"])
    report = json.loads(audits["json"])
    assert len(sarif["runs"][0]["results"]) == len(report["findings"]) == sum(report["summary"].values())
