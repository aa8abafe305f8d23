"""The composite Action's own shell, run end to end in temporary git repositories.

The steps of action.yml are run as GitHub runs them (bash, the step's env, its
working directory) in a temporary repository: an `origin` with the base branch
and a checkout of the pull request. `gh` is a stub that keeps a pull request's
comments in a JSON file, answers `gh api` as GitHub would (its `--jq` run by
jq) and records every call; it can be told to refuse, as GitHub refuses a
token that cannot write (issue 17, "The Action"; issue 20, the pull-request mode).

Two kinds of pull request:
- a hostile one, which plants `checker-diff.md` and `checker.sarif` as links to
  `.git/config` (where a checkout keeps its token) and, in one case, breaks
  `checker.yaml` so that checker stops before writing;
- a change that adds two servers to a full rack (its feeds within 10 % of
  their capacity, a warning), beside twelve existing warnings.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from checker.render.diff_formats import MARKER
from tests.conftest import MINIMAL

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "c2VjcmV0LXRva2Vu"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
REPO = "acme/dc-inventory"
GH_STUB = f"""#!{sys.executable}
# `gh api [--paginate] [--method M] PATH [--jq FILTER] [--input FILE]` over $GH_COMMENTS.
import json, os, subprocess, sys

args = sys.argv[1:]
def option(name):
    return args[args.index(name) + 1] if name in args else None
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if os.environ.get("GH_REFUSE"):
    sys.exit("HTTP 403: Resource not accessible by integration")
assert args[0] == "api", args
state = os.environ["GH_COMMENTS"]
comments = json.load(open(state)) if os.path.exists(state) else []
method = option("--method") or "GET"
path = next(a for a in args[1:] if a.startswith("repos/"))
if method == "GET":
    out = json.dumps(comments)
    if option("--jq"):
        out = subprocess.run(["jq", "-r", option("--jq")], input=out, capture_output=True, text=True,
                             check=True).stdout
    sys.stdout.write(out)
    sys.exit(0)
body = json.load(open(option("--input")))["body"]
if method == "PATCH":
    cid = int(path.rsplit("/", 1)[1])
    [c for c in comments if c["id"] == cid][0]["body"] = body
else:
    comments.append({{"id": 100 + len(comments), "user": {{"login": "github-actions[bot]"}}, "body": body}})
json.dump(comments, open(state, "w"))
print("{{}}")
"""
needs_jq = pytest.mark.skipif(shutil.which("jq") is None, reason="the gh stub runs --jq filters with jq")


def _steps() -> dict[str, dict[str, object]]:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    return {step["name"]: step for step in action["runs"]["steps"] if "name" in step}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _clone(tmp_path: Path, origin: Path) -> Path:
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(origin), str(work))
    # actions/checkout keeps the token in the checkout's config.
    _git(work, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    _git(work, "checkout", "-qb", "pr")
    return work


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A hostile pull request against `main` of a local `origin`."""
    origin = tmp_path / "origin"
    shutil.copytree(MINIMAL, origin / "inventories")
    _git(origin, "init", "-q")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "base")
    work = _clone(tmp_path, origin)
    (work / "checker-diff.md").symlink_to(".git/config")
    (work / "checker.sarif").symlink_to(".git/config")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "plant links")
    return work


FACILITY = """\
kind: Facility
name: fra1
power: {it_capacity_kw: 500}
cooling: {capacity_kw: 600}
racks:
  - name: R01
    redundancy: 2N
    feeds:
      - {name: R01-A, side: A, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
      - {name: R01-B, side: B, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
  - name: R02
    redundancy: 2N
    cooling_kw: 20
    feeds:
      - {name: R02-A, side: A, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
      - {name: R02-B, side: B, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
"""
# R02: 2 x 8.3 kW on 2N feeds of 415 V x 32 A x sqrt(3) x 0.8 = 18.4 kW: 90.2 %, a warning
# (power.rack-headroom). R01: twelve 1-GPU servers on next-business-day support, twelve
# warnings (support.level-24x7): more than the 10 warnings GitHub shows a step.
SERVERS = """\
kind: Servers
facility: fra1
rollout_date: 2027-02-01
defaults:
  u_height: 4
  power_w: {max: 8300}
  gpu: {model: l4, count: 8}
  support: {vendor: Acme, level: 24x7, until: 2030-12-31}
servers:
""" + "".join(
    f"  - {{name: e{i:02d}, rack: R01, position: {i + 1}, u_height: 1, power_w: {{max: 500}},"
    " gpu: {model: l4, count: 1}, support: {vendor: Acme, level: nbd, until: 2030-12-31}}\n"
    for i in range(12)
) + "  - {name: a1, rack: R02, position: 1}\n  - {name: a2, rack: R02, position: 5}\n"
# Two more: 33.2 kW, 14.8 kW over the feeds and 13.2 kW over the rack's 20 kW of cooling.
TWO_MORE = "  - {name: a3, rack: R02, position: 9}\n  - {name: a4, rack: R02, position: 13}\n"
ADDED_LINES = {24, 25}  # servers.yaml: 9 lines of header, 14 servers, then the two


def _full_rack(tmp_path: Path, folder: str, change: str = TWO_MORE) -> Path:
    """A pull request that appends `change` to the servers of a full rack, its inventory in `folder`."""
    origin = tmp_path / "origin"
    inventories = origin / folder / "inventories"
    inventories.mkdir(parents=True)
    (inventories / "facility.yaml").write_text(FACILITY)
    (inventories / "servers.yaml").write_text(SERVERS)
    _git(origin, "init", "-q")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "base")
    work = _clone(tmp_path, origin)
    with (work / folder / "inventories" / "servers.yaml").open("a") as f:
        f.write(change)
    _git(work, "commit", "-qam", "two more servers")
    return work


def _run_step(
    name: str, work: Path, extra_env: dict[str, str], workdir: str = "."
) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp = work.parent
    (tmp / "bin").mkdir(exist_ok=True)
    gh = tmp / "bin" / "gh"
    gh.write_text(GH_STUB)
    gh.chmod(0o755)
    runner_temp = tmp / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    output = tmp / "github-output"
    step = _steps()[name]
    inherited = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS")}
    env = {
        **inherited,
        "PATH": f"{tmp / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(output),
        "GH_LOG": str(tmp / "gh.log"),
        "GH_COMMENTS": str(tmp / "comments.json"),
        "CHECKER_NO_CACHE": "1",
        **{k: str(v) for k, v in dict(step.get("env", {})).items() if "${{" not in str(v)},  # type: ignore[call-overload]
        **extra_env,
    }
    cwd = work / workdir if "working-directory" in step else work
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", str(step["run"])],
        cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120,
    )
    return done, tmp


def _outputs(tmp: Path) -> dict[str, str]:
    """What the steps wrote to $GITHUB_OUTPUT (the last value of each)."""
    return dict(line.split("=", 1) for line in (tmp / "github-output").read_text().splitlines())


def _event(work: Path, **extra: str) -> dict[str, str]:
    """A pull_request run's env for the audit and comment steps."""
    return {
        "EVENT_NAME": "pull_request", "BASE_REF": "main", "HEAD_SHA": _git(work, "rev-parse", "HEAD"),
        "HEAD_REPO": REPO, "GITHUB_REPOSITORY": REPO, "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(work.parent / "summary.md"),
        "CHECKER_PATHS": "inventories", "CHECKER_FAIL_ON": "error", "CHECKER_FAIL_ON_NEW": "false",
        "CHECKER_ARGS": "--as-of 2027-01-15", "PR_NUMBER": "7", "GH_TOKEN": "x",
        "COMMENT_AUTHOR": "github-actions[bot]", **extra,
    }  # fmt: skip


def _audit_then_comment(
    work: Path, env: dict[str, str], workdir: str = "."
) -> subprocess.CompletedProcess[str]:
    audit, tmp = _run_step("Audit (annotations, job summary)", work, env, workdir)
    assert audit.returncode == 0, audit.stderr
    out = _outputs(tmp)
    env = {**env, "CAN_WRITE": out["can-write"], "COMMENT": out.get("comment", "")}
    comment, _ = _run_step("Comment the diff on the pull request", work, env)
    assert comment.returncode == 0, comment.stderr
    return audit


def _config(work: Path) -> str:
    return (work / ".git" / "config").read_text()


def _posted(tmp: Path) -> list[dict[str, object]]:
    path = tmp / "comments.json"
    return json.loads(path.read_text()) if path.exists() else []


# ------------------------------------------------------------ a hostile pull request
@needs_jq
def test_the_comment_is_the_diff_checker_wrote_not_the_planted_link(pull_request: Path) -> None:
    before = _config(pull_request)
    _audit_then_comment(pull_request, _event(pull_request))
    posted = _posted(pull_request.parent)
    assert len(posted) == 1
    body = str(posted[0]["body"])
    assert TOKEN not in body and "extraheader" not in body
    assert body.startswith("**✔ pass:**") and body.rstrip().endswith(MARKER)
    assert _config(pull_request) == before and (pull_request / "checker-diff.md").is_symlink()


def test_a_broken_config_posts_nothing_rather_than_the_planted_file(pull_request: Path) -> None:
    (pull_request / "checker.yaml").write_text("fail_on: [\n")  # checker exits 2 before writing
    before = _config(pull_request)
    audit, tmp = _run_step("Audit (annotations, job summary)", pull_request, _event(pull_request))
    out = _outputs(tmp)
    assert "comment" not in out and "sarif" not in out and out["exit-code"] == "2", audit.stderr
    env = {**_event(pull_request), "CAN_WRITE": out["can-write"], "COMMENT": ""}
    done, _ = _run_step("Comment the diff on the pull request", pull_request, env)
    assert done.returncode == 0, done.stderr
    assert not (tmp / "gh.log").exists(), (tmp / "gh.log").read_text()
    assert "no comment posted" in done.stdout
    assert _config(pull_request) == before


AUDIT = {"CHECKER_PATHS": "inventories", "CHECKER_FAIL_ON": "error", "CHECKER_ARGS": "",
         "EVENT_NAME": "push", "GITHUB_REPOSITORY": REPO}  # fmt: skip


def test_the_audit_writes_its_sarif_outside_the_checkout(pull_request: Path) -> None:
    before = _config(pull_request)
    done, tmp = _run_step("Audit (annotations, job summary)", pull_request, AUDIT)
    assert done.returncode == 0, done.stderr
    outputs = _outputs(tmp)
    assert outputs["exit-code"] == "0"
    sarif = Path(outputs["sarif"])
    assert sarif.is_relative_to(tmp / "runner-temp") and not sarif.is_symlink()
    assert '"version": "2.1.0"' in sarif.read_text()
    assert _config(pull_request) == before and (pull_request / "checker.sarif").is_symlink()


def test_an_audit_that_writes_nothing_uploads_nothing(pull_request: Path) -> None:
    (pull_request / "checker.yaml").write_text("fail_on: [\n")
    done, tmp = _run_step("Audit (annotations, job summary)", pull_request, AUDIT)
    assert done.returncode == 0, done.stderr
    assert _outputs(tmp) == {"can-write": "true", "exit-code": "2"}


def test_the_upload_takes_only_the_audits_own_file() -> None:
    steps = _steps()
    upload = steps["Upload SARIF"]
    assert upload["with"]["sarif_file"] == "${{ steps.audit.outputs.sarif }}"  # type: ignore[index]
    assert "steps.audit.outputs.sarif != ''" in str(upload["if"])


# ------------------------------------------------------------ two servers into a full rack
def _annotations(stdout: str) -> list[tuple[str, str, int, str]]:
    """(level, file, line, title) of each annotation with a file."""
    command = r"^::(error|warning|notice) file=([^,]*),line=(\d+),col=\d+,title=([^:]*)::"
    found = re.findall(command, stdout, re.M)
    return [(level, file, int(line), title) for level, file, line, title in found]


@needs_jq
@pytest.mark.parametrize("folder", [".", "dc"])  # at the repository root, or in a sub-directory
def test_two_servers_into_a_full_rack_end_to_end(tmp_path: Path, folder: str) -> None:
    work = _full_rack(tmp_path, folder)
    head = _git(work, "rev-parse", "HEAD")
    servers = "inventories/servers.yaml" if folder == "." else f"{folder}/inventories/servers.yaml"
    audit = _audit_then_comment(work, _event(work), folder)

    # Annotations: the change's two errors, both on a line it added (a3, the first added
    # server of the rack), not on the rack's line nor on the twelve existing warnings.
    notes = _annotations(audit.stdout)
    assert notes == [
        ("error", servers, 24, "cooling.rack-capacity"),
        ("error", servers, 24, "power.rack-capacity (worsened%3A was warning power.rack-headroom)"),
    ], audit.stdout
    assert {line for _, _, line, _ in notes} <= ADDED_LINES
    assert _outputs(tmp_path)["exit-code"] == "1"

    # SARIF: the same two, named from the repository root.
    sarif = json.loads(Path(_outputs(tmp_path)["sarif"]).read_text())
    places = [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
         r["locations"][0]["physicalLocation"]["region"]["startLine"])
        for r in sarif["runs"][0]["results"]
    ]  # fmt: skip
    assert sorted(places) == [("cooling.rack-capacity", servers, 24), ("power.rack-capacity", servers, 24)]

    # The comment: the verdict first, with its reason; worsened; power, cooling, U and GPUs.
    [comment] = _posted(tmp_path)
    body = str(comment["body"])
    lines = body.splitlines()
    assert lines[0] == (
        "**✖ fail:** rack fra1/R02 gives off 33.2 kW (113278 BTU/h) at peak, over the 20 kW its air cooling "
        "can reject (and 1 more new or worsened at or above error)"
    )
    link = f"[{servers}:24](https://github.com/{REPO}/blob/{head}/{servers}#L24)"
    assert (
        f"| error | `power.rack-capacity` | rack/fra1/R02 | {link} | rack fra1/R02 draws 33.2 kW, over its "
        "18.4 kW 2N feed capacity | was warning power.rack-headroom: rack fra1/R02 runs at 90.2 % of its "
        "18.4 kW 2N capacity (1.8 kW headroom): after a side fails the other side carries 16.6 kW |"
    ) in lines
    assert "**Resolved findings**" not in body  # the warning that became an error is not "resolved"
    assert (
        "| rack fra1/R02 | +16.6 kW (headroom 1.8 → -14.8) | heat +16.6 kW (headroom 3.4 → -13.2) "
        "| +8 (free 34 → 26) | — | +2 | +16 |"
    ) in lines
    assert "- `power.rack-capacity`: Move servers to a rack with headroom, or add or upsize feeds." in lines
    # The job summary has it too (where it stays when no comment can be posted).
    assert (tmp_path / "summary.md").read_text() == body


@needs_jq
def test_the_comment_is_updated_in_place_and_no_one_elses_is(tmp_path: Path) -> None:
    work = _full_rack(tmp_path, ".")
    theirs = [
        {"id": 1, "user": {"login": "github-actions[bot]"}, "body": "coverage: 91 %"},  # another tool's
        {"id": 2, "user": {"login": "octocat"}, "body": f"quoting checker:\n{MARKER}"},  # a person's
    ]
    (tmp_path / "comments.json").write_text(json.dumps(theirs))
    _audit_then_comment(work, _event(work))
    first = _posted(tmp_path)
    assert first[:2] == theirs and len(first) == 3 and str(first[2]["body"]).startswith("**✖ fail:**")
    # The next push moves a4 to the roomy rack: the same comment now says so.
    servers = work / "inventories" / "servers.yaml"
    servers.write_text(servers.read_text().replace("rack: R02, position: 13", "rack: R01, position: 20"))
    _git(work, "commit", "-qam", "move a4")
    _audit_then_comment(work, _event(work))
    second = _posted(tmp_path)
    assert second[:2] == theirs and len(second) == 3 and second[2]["id"] == first[2]["id"]
    assert second[2]["body"] != first[2]["body"]
    calls = [json.loads(line) for line in (tmp_path / "gh.log").read_text().splitlines()]
    methods = [c[c.index("--method") + 1] if "--method" in c else "GET" for c in calls]
    assert methods == ["GET", "POST", "GET", "PATCH"]


ROOMY = "  - {name: a3, rack: R01, position: 20}\n"  # 8.3 kW more on R01: 14.3 of 18.4 kW, 77.7 %


@pytest.mark.parametrize(
    ("why", "extra"),
    [
        ("fork", {"HEAD_REPO": "someone/dc-inventory"}),
        ("dependabot", {"GITHUB_ACTOR": "dependabot[bot]"}),
        ("refused", {"GH_REFUSE": "1"}),  # a token without pull-requests: write
    ],
)
def test_a_run_that_cannot_write_passes_with_the_comment_in_the_summary(
    tmp_path: Path, why: str, extra: dict[str, str]
) -> None:
    work = _full_rack(tmp_path, ".", ROOMY)
    env = _event(work, **extra)
    audit, _ = _run_step("Audit (annotations, job summary)", work, env)
    assert audit.returncode == 0, audit.stderr
    out = _outputs(tmp_path)
    assert (out["exit-code"], out["can-write"]) == ("0", "false" if why != "refused" else "true")
    env = {**env, "CAN_WRITE": out["can-write"], "COMMENT": out["comment"]}
    comment, _ = _run_step("Comment the diff on the pull request", work, env)
    assert comment.returncode == 0, comment.stderr
    assert "::notice title=checker::no pull-request comment (" in comment.stdout
    assert _posted(tmp_path) == []
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("**✔ pass:** no new or worsened finding at or above error")
    done, _ = _run_step("Fail on findings", work, {"CODE": out["exit-code"]})
    assert done.returncode == 0
    # The upload stands down too, and a refusal of code scanning fails no job.
    upload = _steps()["Upload SARIF"]
    assert "steps.audit.outputs.can-write == 'true'" in str(upload["if"])
    assert upload["continue-on-error"] is True


def test_a_push_in_a_sub_directory_names_files_from_the_root(tmp_path: Path) -> None:
    """`checker audit` on a push, run in `dc/` (working-directory): GitHub resolves
    annotation and SARIF paths from the repository root."""
    work = _full_rack(tmp_path, "dc")
    env = {**AUDIT, "CHECKER_ARGS": "--as-of 2027-01-15", "GITHUB_ACTIONS": "true",
           "GITHUB_WORKSPACE": str(work), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}  # fmt: skip
    audit, _ = _run_step("Audit (annotations, job summary)", work, env, "dc")
    assert audit.returncode == 0, audit.stderr
    notes = _annotations(audit.stdout)
    # Two errors first, then twelve warnings, of which GitHub shows ten: a notice says so.
    assert audit.stdout.startswith("::notice title=checker::2 warnings not shown as annotations: ")
    assert [level for level, _, _, _ in notes] == ["error"] * 2 + ["warning"] * 12
    assert {file for _, file, _, _ in notes} == {
        "dc/inventories/facility.yaml", "dc/inventories/servers.yaml",
    }, audit.stdout  # fmt: skip
    sarif = json.loads(Path(_outputs(tmp_path)["sarif"]).read_text())
    results = sarif["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"dc/inventories/facility.yaml", "dc/inventories/servers.yaml"}
