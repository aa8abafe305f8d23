"""The composite Action's own shell, run end to end against a hostile pull request.

The steps of action.yml are run as GitHub runs them (bash, the step's env) in a
temporary repository: an `origin` with the base branch and a checkout of the
pull request. The pull request plants `checker-diff.md` and `checker.sarif` as
links to `.git/config` (where a checkout keeps its token) and, in one case,
breaks `checker.yaml` so that checker stops before writing. `gh` is a stub that
records what it would post (issue 17, "The Action").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import MINIMAL

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "c2VjcmV0LXRva2Vu"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
GH_STUB = """#!/bin/sh
# Records the body a comment would have: `gh pr comment N --body-file FILE [--edit-last]`.
while [ $# -gt 0 ]; do
  if [ "$1" = --body-file ]; then cat "$2" >> "$GH_LOG"; echo "--- posted" >> "$GH_LOG"; fi
  shift
done
"""


def _steps() -> dict[str, dict[str, object]]:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    return {step["name"]: step for step in action["runs"]["steps"] if "name" in step}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A checkout of a pull request against `main` of a local `origin`."""
    origin = tmp_path / "origin"
    shutil.copytree(MINIMAL, origin / "inventories")
    _git(origin, "init", "-q")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "base")
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(origin), str(work))
    # actions/checkout keeps the token in the checkout's config.
    _git(work, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    _git(work, "checkout", "-qb", "pr")
    (work / "checker-diff.md").symlink_to(".git/config")
    (work / "checker.sarif").symlink_to(".git/config")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "plant links")
    return work


def _run_step(
    name: str, work: Path, extra_env: dict[str, str]
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
    env = {
        **os.environ,
        "PATH": f"{tmp / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(output),
        "GH_LOG": str(tmp / "gh.log"),
        "CHECKER_NO_CACHE": "1",
        **{k: str(v) for k, v in dict(step.get("env", {})).items() if "${{" not in str(v)},  # type: ignore[call-overload]
        **extra_env,
    }
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.pop("GITHUB_ACTIONS", None)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", str(step["run"])],
        cwd=work, env=env, capture_output=True, text=True, check=False, timeout=120,
    )
    return done, tmp


COMMENT = {"BASE_REF": "main", "PR_NUMBER": "7", "GH_TOKEN": "x", "CHECKER_PATHS": "inventories",
           "CHECKER_ARGS": ""}
AUDIT = {"CHECKER_PATHS": "inventories", "CHECKER_FAIL_ON": "error", "CHECKER_ARGS": ""}


def _config(work: Path) -> str:
    return (work / ".git" / "config").read_text()


def test_the_comment_is_the_diff_checker_wrote_not_the_planted_link(pull_request: Path) -> None:
    before = _config(pull_request)
    done, tmp = _run_step("Comment the diff on the pull request", pull_request, COMMENT)
    assert done.returncode == 0, done.stderr
    posted = (tmp / "gh.log").read_text()
    assert TOKEN not in posted and "extraheader" not in posted
    assert posted.startswith("#") and "--- posted" in posted
    assert _config(pull_request) == before and (pull_request / "checker-diff.md").is_symlink()


def test_a_broken_config_posts_nothing_rather_than_the_planted_file(pull_request: Path) -> None:
    (pull_request / "checker.yaml").write_text("fail_on: [\n")  # checker exits 2 before writing
    before = _config(pull_request)
    done, tmp = _run_step("Comment the diff on the pull request", pull_request, COMMENT)
    assert done.returncode == 0, done.stderr
    assert not (tmp / "gh.log").exists(), (tmp / "gh.log").read_text()
    assert "no comment posted" in done.stdout
    assert _config(pull_request) == before


def test_the_audit_writes_its_sarif_outside_the_checkout(pull_request: Path) -> None:
    before = _config(pull_request)
    done, tmp = _run_step("Audit (annotations, job summary)", pull_request, AUDIT)
    assert done.returncode == 0, done.stderr
    outputs = dict(line.split("=", 1) for line in (tmp / "github-output").read_text().splitlines())
    assert outputs["exit-code"] == "0"
    sarif = Path(outputs["sarif"])
    assert sarif.is_relative_to(tmp / "runner-temp") and not sarif.is_symlink()
    assert '"version": "2.1.0"' in sarif.read_text()
    assert _config(pull_request) == before and (pull_request / "checker.sarif").is_symlink()


def test_an_audit_that_writes_nothing_uploads_nothing(pull_request: Path) -> None:
    (pull_request / "checker.yaml").write_text("fail_on: [\n")
    done, tmp = _run_step("Audit (annotations, job summary)", pull_request, AUDIT)
    assert done.returncode == 0, done.stderr
    outputs = dict(line.split("=", 1) for line in (tmp / "github-output").read_text().splitlines())
    assert outputs == {"exit-code": "2"}


def test_the_upload_takes_only_the_audits_own_file() -> None:
    steps = _steps()
    upload = steps["Upload SARIF"]
    assert upload["with"]["sarif_file"] == "${{ steps.audit.outputs.sarif }}"  # type: ignore[index]
    assert "steps.audit.outputs.sarif != ''" in str(upload["if"])
