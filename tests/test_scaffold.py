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
