"""Output destinations: many formats from one run, atomic files, clear refusals, GitHub Actions."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from checker.core.errors import UserError
from checker.render.output import (
    from_root,
    github_blob_base,
    github_commit_base,
    link_base,
    root_link_base,
    write_atomic,
)
from tests.conftest import AS_OF, CliRunner, summary


def test_one_run_writes_every_format_and_exits_with_the_audits_code(
    in_fixtures: Path, tmp_path: Path, cli: CliRunner
) -> None:
    names = {"json": "a.json", "sarif": "a.sarif", "junit": "a.xml", "markdown": "a.md"}
    specs = [f"--format={fmt}:{tmp_path / name}" for fmt, name in names.items()]
    run = cli("audit", "overload", *AS_OF, "--format", "text", *specs)
    assert run.code == 1 and run.err == ""
    assert run.lines[-1] == summary(error=1, warning=1)
    assert json.loads((tmp_path / "a.json").read_text())["verdict"] == "fail"
    assert json.loads((tmp_path / "a.sarif").read_text())["version"] == "2.1.0"
    assert (tmp_path / "a.xml").read_text().startswith("<?xml")
    assert (tmp_path / "a.md").read_text().startswith("# Rollout readiness: BLOCKED")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("--format=yaml", "unknown format 'yaml'"),
        ("--format=json:/nonexistent-dir/out.json", "cannot write json output: no such folder"),
        ("--format=json:overload/facility.yaml", "refusing to write json output among the inventories"),
        ("--format=json:overload/new.yml", "refusing to write json output among the inventories"),
        ("--format=json:overload", "cannot write json output: is a directory"),
    ],
)
def test_bad_destinations_exit_2_before_any_work(
    in_fixtures: Path, cli: CliRunner, spec: str, message: str
) -> None:
    before = (in_fixtures / "overload" / "facility.yaml").read_bytes()
    run = cli("audit", "overload", *AS_OF, spec)
    assert run.code == 2 and run.out == ""
    assert message in run.err and "Traceback" not in run.err
    assert (in_fixtures / "overload" / "facility.yaml").read_bytes() == before


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "r.md"
    target.write_text("old")
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["r.md"]


def test_a_fifo_is_written_into_not_replaced(tmp_path: Path) -> None:
    # `--format json:/dev/null` once replaced /dev/null with a regular file (run
    # as root, the rename succeeds): a device or FIFO is written into instead.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    write_atomic(fifo, "through\n")
    reader.join(timeout=10)
    assert got == ["through\n"] and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_symbolic_link_is_refused_not_followed(tmp_path: Path) -> None:
    # A pull request can commit `checker-diff.md` as a link to `.git/config`:
    # writing through it would overwrite the checkout's credentials.
    secret = tmp_path / "config"
    secret.write_text("[http] extraheader = AUTHORIZATION: basic c2VjcmV0\n")
    (tmp_path / "link.md").symlink_to(secret)
    with pytest.raises(UserError, match="refusing to write output through a symbolic link"):
        write_atomic(tmp_path / "link.md", "new\n")
    assert secret.read_text().startswith("[http]") and (tmp_path / "link.md").is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["config", "link.md"]


def test_links_are_relative_to_the_written_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    assert link_base(None) == ""
    assert link_base(Path("r.md")) == ""
    assert link_base(Path("docs/r.md")) == "../"


def test_step_summary_links_point_at_the_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/dc",
           "GITHUB_SHA": "abc123", "GITHUB_WORKSPACE": str(tmp_path)}
    assert github_blob_base(env) == "https://github.com/acme/dc/blob/abc123/"
    assert github_blob_base({}) == ""


HEAD = "0123456789abcdef0123456789abcdef01234567"
MERGE = "f" * 40


@pytest.mark.parametrize(
    ("event", "base"),
    [
        # A pull request's run: its head commit, not the merge commit GitHub made (GITHUB_SHA).
        ({"pull_request": {"head": {"sha": HEAD}}}, f"https://github.com/acme/dc/blob/{HEAD}/"),
        ({"ref": "refs/heads/main"}, f"https://github.com/acme/dc/blob/{MERGE}/"),  # a push
        ({"pull_request": {"head": {"sha": "../../evil"}}}, f"https://github.com/acme/dc/blob/{MERGE}/"),
        ("not json", f"https://github.com/acme/dc/blob/{MERGE}/"),
    ],
)
def test_diff_links_point_at_the_pull_requests_head(tmp_path: Path, event: object, base: str) -> None:
    path = tmp_path / "event.json"
    path.write_text(event if isinstance(event, str) else json.dumps(event))
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/dc", "GITHUB_SHA": MERGE,
           "GITHUB_EVENT_PATH": str(path)}  # fmt: skip
    assert github_commit_base(env) == base
    assert github_commit_base({}) == ""


@pytest.mark.parametrize(
    ("file", "prefix", "named"),
    [
        ("inv/a.yaml", "", "inv/a.yaml"),
        ("inv/a.yaml", "dc/", "dc/inv/a.yaml"),
        ("../shared/a.yaml", "dc/", "shared/a.yaml"),
        ("../../elsewhere.yaml", "dc/", "../../elsewhere.yaml"),  # outside the repository: as it is
        ("/opt/checker/rules/knowledge/gpus.yaml", "dc/", "/opt/checker/rules/knowledge/gpus.yaml"),
    ],
)
def test_from_root(file: str, prefix: str, named: str) -> None:
    assert from_root(file, prefix) == named


def test_diff_links_from_a_file_reach_the_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dc" / "docs").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "dc")
    assert root_link_base(tmp_path, None) == "../"
    assert root_link_base(tmp_path, Path("docs/comment.md")) == "../../"
    assert root_link_base(tmp_path, tmp_path / "comment.md") == ""


def test_under_github_actions_text_becomes_annotations_and_the_report_the_summary(
    in_fixtures: Path, tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = tmp_path / "summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    run = cli("audit", "overload", *AS_OF)
    assert run.code == 1
    first = "::error file=overload/facility.yaml,line=12,col=5,title=power.rack-capacity::"
    assert run.lines[0].startswith(first)
    assert step_summary.read_text().startswith("earlier step\n# Rollout readiness: BLOCKED")
