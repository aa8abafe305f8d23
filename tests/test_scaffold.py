"""`checker init`: a repository whose own audit passes, and nothing overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner

FILES = [".github/workflows/checker.yml", ".pre-commit-config.yaml", "checker.yaml",
         "inventories/facility.yaml", "inventories/servers.yaml", "inventories/workloads.yaml",
         "inventory.schema.json"]


def test_init_then_audit_passes(tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "dc-inventory"
    run = cli("init", str(target))
    assert run.code == 0 and run.err == ""
    assert run.lines == [*(f"wrote {target / f}" for f in FILES), f"next: cd {target} && checker audit"]
    monkeypatch.chdir(target)
    audit = cli("audit")
    assert (audit.code, audit.err) == (0, ""), audit.out


def test_init_never_overwrites_and_writes_nothing_then(tmp_path: Path, cli: CliRunner) -> None:
    (tmp_path / "checker.yaml").write_text("fail_on: warning\n")
    run = cli("init", str(tmp_path))
    assert run.code == 2 and run.out == ""
    assert run.err == f"{tmp_path / 'checker.yaml'}: already exists; checker init never overwrites\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checker.yaml"]
    assert (tmp_path / "checker.yaml").read_text() == "fail_on: warning\n"


def test_init_into_a_file_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    (tmp_path / "f").write_text("")
    run = cli("init", str(tmp_path / "f"))
    assert run.code == 2 and "not a folder" in run.err


def _clone(tmp_path: Path, origin: str) -> tuple[Path, str]:
    """A git clone of checker with an origin, as pre-commit installs a hook from."""
    import subprocess

    clone = tmp_path / "clone"
    clone.mkdir()
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "checker"], check=True)
    subprocess.run([*git, "remote", "add", "origin", origin], check=True)
    done = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    return clone, done.stdout.strip()


@pytest.mark.parametrize(
    ("origin", "uses"),
    [
        ("https://github.com/acme/checker.git", "acme/checker@{head}"),
        # Not on GitHub: the workflow's `uses:` keeps its placeholder.
        ("https://git.example.com/platform/checker", "YOUR-ORG/checker@" + "0" * 40),
    ],
)
def test_init_pins_the_hook_and_the_workflow_to_the_commit_installed(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch, origin: str, uses: str
) -> None:
    from checker.core import install

    clone, head = _clone(tmp_path, origin)
    monkeypatch.setattr(install, "_direct_url", lambda: {"url": clone.as_uri(), "dir_info": {}})
    target = tmp_path / "dc-inventory"
    assert cli("init", str(target)).code == 0
    hook = (target / ".pre-commit-config.yaml").read_text()
    assert f"  - repo: {origin}\n    rev: {head}\n" in hook
    workflow = (target / ".github" / "workflows" / "checker.yml").read_text()
    assert f"      - uses: {uses.format(head=head)}\n" in workflow


def test_init_from_an_index_install_keeps_the_placeholders_its_comments_explain(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from checker.core import install

    monkeypatch.setattr(install, "_direct_url", lambda: None)
    assert cli("init", str(tmp_path / "inv")).code == 0
    hook = (tmp_path / "inv" / ".pre-commit-config.yaml").read_text()
    assert "  - repo: https://github.com/YOUR-ORG/checker\n    rev: " + "0" * 40 + "\n" in hook
    assert "full commit SHA" in hook


def test_the_scaffold_passes_yamllints_defaults(tmp_path: Path, cli: CliRunner) -> None:
    """Teams lint their YAML; the files checker init writes must not start them off with errors."""
    from yamllint import linter
    from yamllint.config import YamlLintConfig

    assert cli("init", str(tmp_path)).code == 0
    config = YamlLintConfig("extends: default")
    problems = [
        f"{path.relative_to(tmp_path)}:{p.line}:{p.column}: {p.message} ({p.rule})"
        for path in sorted(tmp_path.rglob("*.y*ml"))
        for p in linter.run(path.read_text(), config)
    ]
    assert problems == []
