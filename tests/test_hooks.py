"""The integrations a team wires in: the pre-commit hook, the GitHub Action, the workflows."""

from __future__ import annotations

import functools
import os
import re
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


def _inventory_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "inventory-repo"
    shutil.copytree(ROOT / "tests" / "fixtures" / "overload", repo / "inventories")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "inventory"], cwd=repo, check=True)
    return repo


def _clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No compiler flags and a pip cache of its own, empty (no wheel built earlier
    can be reused): what a new user's machine has."""
    env = {k: v for k, v in os.environ.items() if k not in ("CPPFLAGS", "CFLAGS", "PIP_NO_CACHE_DIR")}
    return {**env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
            "PIP_CACHE_DIR": str(tmp_path / "pip-cache"), **extra}


def _try_repo(python: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [python, "-m", "pre_commit", "try-repo", str(ROOT), "checker-audit", "--all-files"]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_pre_commit_try_repo_runs_the_hook(tmp_path: Path) -> None:
    """pre-commit installs this repository as a hook and audits a fixture inventory repository."""
    done = _try_repo(sys.executable, _inventory_repo(tmp_path), _clean_env(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr  # the overload fixture fails the audit
    assert "error power.rack-capacity rack f1/R01 draws 7 kW" in done.stdout


def _is_3_13(python: str) -> bool:
    probe = [python, "-c", "import sys; sys.exit(sys.version_info[:2] != (3, 13))"]
    try:
        return subprocess.run(probe, capture_output=True, check=False, timeout=30).returncode == 0
    except OSError:
        return False


@functools.cache
def python_3_13() -> str | None:
    """A Python 3.13 that runs: on PATH (a pyenv shim there may not), else one pyenv installed."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which("python3.13"), *map(str, sorted(pyenv.glob("3.13*/bin/python3.13")))]
    return next((c for c in candidates if c and _is_3_13(c)), None)


@pytest.mark.slow
@pytest.mark.skipif(python_3_13() is None, reason="no Python 3.13 on PATH or in pyenv")
def test_pre_commit_hook_installs_and_runs_on_python_3_13_from_a_clean_pip_cache(tmp_path: Path) -> None:
    """durable-rules 2.0.28 from PyPI builds a module that fails at import on 3.13
    (PyEval_CallObject); the hook must install and run with no flag from the user."""
    python = python_3_13()
    assert python is not None
    venv = tmp_path / "venv-3.13"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    path = f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    env = _clean_env(tmp_path, PATH=path, PIP_LOG=str(tmp_path / "pip.log"))
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "pre-commit"]
    subprocess.run(install, env=env, check=True, capture_output=True)
    done = _try_repo(str(venv / "bin" / "python"), _inventory_repo(tmp_path), env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error power.rack-capacity rack f1/R01 draws 7 kW" in done.stdout
    # The hook's environment is 3.13's (try-repo keeps it in a temporary folder of
    # its own): pip built checker, durable-rules' engine inside, for CPython 3.13.
    log = (tmp_path / "pip.log").read_text()
    assert re.search(r"checker-0\.1\.0-cp313-cp313-[\w.]+\.whl", log), log[-2000:]


def _uses(node: object) -> list[str]:
    if isinstance(node, dict):
        return [*([node["uses"]] if isinstance(node.get("uses"), str) else []),
                *(u for value in node.values() for u in _uses(value))]
    if isinstance(node, list):
        return [u for item in node for u in _uses(item)]
    return []


@pytest.mark.parametrize(
    "path", [ROOT / "action.yml", *WORKFLOWS], ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_actions_are_pinned_by_commit(path: Path) -> None:
    """A tag (`@v4`) can be moved to other code; a full commit SHA cannot."""
    uses = _uses(yaml.safe_load(path.read_text()))
    assert uses
    assert [u for u in uses if not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u)] == []
