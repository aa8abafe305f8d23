"""Reading a tree at a git ref without touching the checkout or the index."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from checker.core.errors import UserError
from checker.gitref import materialize, repo_root, resolve_ref


def _git(repo: Path, *args: str) -> str:
    who = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    return subprocess.run(["git", *who, *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "inv" / "sub").mkdir(parents=True)
    (tmp_path / "inv" / "a.yaml").write_text("old a\n")
    (tmp_path / "inv" / "sub" / "b.YML").write_text("b\n")
    (tmp_path / "inv" / "notes.txt").write_text("not yaml\n")
    (tmp_path / "other.yaml").write_text("outside the path\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "inv" / "a.yaml").write_text("new a, not committed\n")
    return tmp_path


def test_materialize_writes_the_committed_yaml_below_the_paths(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    into = tmp_path_factory.mktemp("base")
    status_before = _git(repo, "status", "--porcelain")
    existing = materialize(repo, resolve_ref(repo, "HEAD"), [repo / "inv"], into)
    assert existing == [into / "inv"]
    files = sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file())
    assert files == ["inv/a.yaml", "inv/sub/b.YML"]
    assert (into / "inv" / "a.yaml").read_text() == "old a\n"
    assert _git(repo, "status", "--porcelain") == status_before  # checkout and index untouched


def test_a_file_missing_at_the_ref_is_left_out(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    (repo / "inv" / "new.yaml").write_text("x\n")
    into = tmp_path_factory.mktemp("base")
    assert materialize(repo, resolve_ref(repo, "HEAD"), [repo / "inv" / "new.yaml"], into) == []


def test_errors_are_user_errors(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown git ref 'HEAD~5'"):
        resolve_ref(repo, "HEAD~5")
    assert repo_root(repo / "inv").resolve() == repo.resolve()


def test_a_path_outside_the_repository_is_a_user_error(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    with pytest.raises(UserError, match="outside the git repository"):
        materialize(repo, resolve_ref(repo, "HEAD"), [outside], tmp_path_factory.mktemp("base"))


def test_a_path_with_no_inventory_at_the_ref_is_left_out_not_made_an_empty_folder(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # An empty folder would be audited as an input error ("nothing to check"),
    # stopping every rule of the base audit: a path the ref lacks is no inventory.
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "c.yaml").write_text("c\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "README.md").write_text("only prose\n")
    _git(repo, "add", "docs")
    _git(repo, "commit", "-qm", "docs")
    into = tmp_path_factory.mktemp("base")
    paths = [repo / "new", repo / "new" / "deep" / "c.yaml", repo / "docs", repo / "inv"]
    assert materialize(repo, resolve_ref(repo, "HEAD"), paths, into) == [into / "inv"]
    assert not (into / "new").exists() and not (into / "docs").exists()


def test_a_file_named_is_written_whatever_its_name(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # As the audit reads a file named on the command line whatever its name.
    into = tmp_path_factory.mktemp("base")
    assert materialize(repo, resolve_ref(repo, "HEAD"), [repo / "inv" / "notes.txt"], into) == [
        into / "inv" / "notes.txt"
    ]
    assert (into / "inv" / "notes.txt").read_text() == "not yaml\n"
