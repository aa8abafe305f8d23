"""The integrations a team wires in: the pre-commit hook, the GitHub Action, the workflows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted([*(ROOT / ".github" / "workflows").glob("*.yml"),
                    *(ROOT / "templates" / "init" / ".github" / "workflows").glob("*.yml")])


def _check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_workflows_are_valid_github_workflows(workflow: Path) -> None:
    done = _check_jsonschema("vendor.github-workflows", workflow)
    assert done.returncode == 0, done.stdout + done.stderr


def test_action_is_a_valid_github_action() -> None:
    done = _check_jsonschema("vendor.github-actions", ROOT / "action.yml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_schema_checks_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "action.yml"
    bad.write_text("name: x\nruns: {using: composite, steps: [{run: echo}]}\n")  # a run step needs a shell
    assert _check_jsonschema("vendor.github-actions", bad).returncode != 0


def test_action_passes_inputs_through_env_not_into_scripts() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    for step in action["runs"]["steps"]:
        assert "${{ inputs." not in step.get("run", ""), step["name"]


def test_hook_audits_the_whole_inventory_once() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["pass_filenames"], hook["require_serial"]) == (
        "checker-audit", "checker audit", False, True)


@pytest.mark.slow
def test_pre_commit_try_repo_runs_the_hook(tmp_path: Path) -> None:
    """pre-commit installs this repository as a hook and audits a fixture inventory repository."""
    repo = tmp_path / "inventory-repo"
    shutil.copytree(ROOT / "tests" / "fixtures" / "overload", repo / "inventories")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           # durable-rules' last release needs this to build on 3.13 (README).
           "CPPFLAGS": "-DPyEval_CallObject=PyObject_CallObject"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "inventory"], cwd=repo, check=True)
    pre_commit = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "checker-audit", "--all-files"]
    done = subprocess.run(pre_commit, cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # the overload fixture fails the audit
    assert "error power.rack-capacity rack f1/R01 draws 7 kW" in done.stdout
