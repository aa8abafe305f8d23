"""Hostile git trees: `checker diff --base REF` against commits a pull request could craft.

The base tree is laid out in a private temporary folder. A crafted tree (built
with `git mktree`, or byte by byte with `git hash-object --literally`) can hold
entries named `..`, names with a slash, or symbolic links pointing out; a
partial clone can lack objects. Each is a located one-line error, exit 2, and
nothing is written outside the temporary folder (issue 17, "Git").
"""

from __future__ import annotations

import binascii
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import AS_OF, MINIMAL, CliRunner

WHO = ["-c", "user.name=t", "-c", "user.email=t@example.com"]


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", *WHO, *args], cwd=repo, input=stdin, check=True, capture_output=True)
    return done.stdout.decode().strip()


def _blob(repo: Path, data: bytes) -> str:
    return _git(repo, "hash-object", "-w", "--stdin", stdin=data)


def _tree(repo: Path, *entries: tuple[str, str, str, str]) -> str:
    """`git mktree` from (mode, kind, oid, name) entries."""
    text = "".join(f"{mode} {kind} {oid}\t{name}\n" for mode, kind, oid, name in entries)
    return _git(repo, "mktree", stdin=text.encode())


def _literal_tree(repo: Path, *entries: tuple[str, str, bytes]) -> str:
    """A tree object written byte by byte: names git itself would refuse (a slash in one)."""
    body = b"".join(
        f"{mode} ".encode() + name + b"\0" + binascii.unhexlify(oid) for mode, oid, name in entries
    )
    return _git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", stdin=body)


def _commit(repo: Path, tree: str) -> str:
    return _git(repo, "commit-tree", tree, "-m", "crafted")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "deep" / "er" / "work"
    shutil.copytree(MINIMAL, work / "inv")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "base")
    monkeypatch.chdir(work)
    return work


def _inventory_tree(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD:inv")


def test_a_dotdot_entry_never_writes_outside_the_base_folder(
    repo: Path, cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The base tree is laid out in TMP/a/b/c/d/checker-base-*/: inv/../../../../victim.yaml
    # would be TMP/a/b/victim.yaml, a file of the user's.
    (tmp_path / "a" / "b" / "c" / "d").mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "a" / "b" / "c" / "d"))
    victim = tmp_path / "a" / "b" / "victim.yaml"
    victim.write_text("precious\n")
    evil = _tree(repo, ("100644", "blob", _blob(repo, b"kind: Waivers\nwaivers: []\n"), "victim.yaml"))
    for _ in range(3):
        evil = _tree(repo, ("040000", "tree", evil, ".."))
    inv = _tree(repo, *[
        tuple(line.split(None, 3)) for line in _git(repo, "ls-tree", "HEAD:inv").splitlines()  # type: ignore[misc]
    ], ("040000", "tree", evil, ".."))
    commit = _commit(repo, _tree(repo, ("040000", "tree", inv, "inv")))
    run = cli("diff", "--base", commit, "inv", *AS_OF)
    assert run.code == 2, run.out + run.err
    assert run.err == (
        f"{commit[:12]}:inv/../../../../victim.yaml: a tree entry that would land outside the base tree"
        " ('..', '.', empty or absolute name); checker diff refuses a crafted commit\n"
    )
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in (tmp_path / "a" / "b" / "c" / "d").iterdir()) == []


def test_a_name_with_a_slash_is_refused(repo: Path, cli: CliRunner) -> None:
    blob = _blob(repo, b"kind: Waivers\nwaivers: []\n")
    inv = _literal_tree(repo, ("100644", blob, b"/abs.yaml"))
    commit = _commit(repo, _literal_tree(repo, ("40000", inv, b"inv")))
    run = cli("diff", "--base", commit, "inv", *AS_OF)
    assert run.code == 2 and f"{commit[:12]}:inv//abs.yaml: a tree entry that would land outside" in run.err


def test_a_symbolic_link_in_the_base_tree_is_refused(repo: Path, cli: CliRunner) -> None:
    link = _blob(repo, b"../../../../../../etc/passwd")
    inv = _tree(repo, ("120000", "blob", link, "servers.yaml"))
    commit = _commit(repo, _tree(repo, ("040000", "tree", inv, "inv")))
    run = cli("diff", "--base", commit, "inv", *AS_OF)
    assert run.code == 2
    assert run.err.startswith(f"{commit[:12]}:inv/servers.yaml: a symbolic link in the base tree")


def _object_file(repo: Path, oid: str) -> Path:
    return repo / ".git" / "objects" / oid[:2] / oid[2:]


def test_a_missing_blob_is_a_located_error(repo: Path, cli: CliRunner) -> None:
    oid = _git(repo, "rev-parse", "HEAD:inv/servers.yaml")
    _object_file(repo, oid).unlink()
    (repo / "inv" / "servers.yaml").write_text((MINIMAL / "servers.yaml").read_text())
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 2, run.err
    head = _git(repo, "rev-parse", "HEAD")[:12]
    assert run.err.startswith(f"{head}:inv/servers.yaml: object {oid} is missing or corrupt")


def test_a_missing_tree_is_a_located_error(repo: Path, cli: CliRunner) -> None:
    _object_file(repo, _inventory_tree(repo)).unlink()
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 2, run.err
    assert run.err.startswith(f"{_git(repo, 'rev-parse', 'HEAD')[:12]}: cannot read the base tree:")
    assert len(run.err.splitlines()) == 1


def test_a_corrupt_blob_is_a_located_error(repo: Path, cli: CliRunner) -> None:
    path = _object_file(repo, _git(repo, "rev-parse", "HEAD:inv/servers.yaml"))
    path.chmod(0o644)
    path.write_bytes(b"not zlib at all")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 2, run.err
    assert "inv/servers.yaml: object" in run.err and "is missing or corrupt" in run.err
    assert "Traceback" not in run.err and "internal error" not in run.err


def test_a_diff_with_an_invalid_head_shows_no_capacity_from_or_to_nothing(repo: Path, cli: CliRunner) -> None:
    (repo / "inv" / "facility.yaml").write_text("kind: Facility\nname: [\n")
    run = cli("diff", "--base", "HEAD", "inv", *AS_OF)
    assert run.code == 2
    assert "n/a" not in run.out and "capacity changes: 0" in run.out, run.out
