"""Hostile caches: a cache folder pointed at user files, or written by somebody else.

`--cache-dir .` or CHECKER_CACHE_DIR=$HOME must never delete, tag or follow
anything of the user's; a cache restored from elsewhere (a CI cache a pull
request could have written) must never change a result; a planted link,
FIFO or huge file among the entries must never hang or exhaust the run
(issue 17, "Cache").
"""

from __future__ import annotations

import hashlib
import hmac
import os
import shutil
import time
from pathlib import Path

import pytest

from checker.load import cache
from checker.load.cache import content_key, encode
from checker.source.parse import YamlProblem
from tests.conftest import AS_OF, MINIMAL, CliRunner
from tests.helpers import deadline

MONTHS_AGO = time.time() - 90 * 86400


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHECKER_NO_CACHE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    shutil.copytree(MINIMAL, tmp_path / "inv")
    return tmp_path


def _old_file(path: Path, text: str = "mine\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (MONTHS_AGO, MONTHS_AGO))
    return path


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_project_named_as_cache_folder_is_left_alone(project: Path, cli: CliRunner) -> None:
    _old_file(project / "files" / "report-2026.md")
    _old_file(project / "files" / content_key(b"looks like an entry"))
    before = _tree(project)
    run = cli("audit", "inv", *AS_OF, "--cache-dir", ".")
    assert run.code == 0, run.err
    assert _tree(project) == before  # nothing pruned, no CACHEDIR.TAG, no marker
    info = cli("cache", "info", "--cache-dir", ".")
    assert "in use: no" in info.out and "not a cache folder checker made" in info.out


def test_cache_clean_refuses_a_folder_checker_did_not_make(
    project: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = project / "home"
    _old_file(home / "files" / "tax-return.pdf")
    _old_file(home / ".bashrc")
    monkeypatch.setenv("CHECKER_CACHE_DIR", str(home))
    before = _tree(home)
    run = cli("cache", "clean")
    assert run.code == 2 and run.err == (
        f"{home}: not a cache folder checker made (no {cache.MARKER} marker); nothing removed\n"
    )
    assert cli("audit", "inv", *AS_OF).code == 0
    assert _tree(home) == before


def test_a_files_link_in_a_cache_is_never_followed(project: Path, cli: CliRunner) -> None:
    folder = project / "c"
    assert cli("audit", "inv", *AS_OF, "--cache-dir", str(folder)).code == 0
    shutil.rmtree(folder / "files")
    victim = project / "documents"
    _old_file(victim / content_key(b"x"))
    (folder / "files").symlink_to(victim)
    (folder / "last-prune").unlink()  # the next audit prunes
    before = _tree(victim)
    assert cli("audit", "inv", *AS_OF, "--cache-dir", str(folder)).code == 0
    run = cli("cache", "clean", "--cache-dir", str(folder))
    assert run.code == 2 and "not a folder checker made" in run.err
    assert _tree(victim) == before


def test_clean_and_prune_remove_only_what_checker_named(project: Path, cli: CliRunner) -> None:
    folder = project / "c"
    assert cli("audit", "inv", *AS_OF, "--cache-dir", str(folder)).code == 0
    entries = folder / "files"
    made = len(list(entries.iterdir()))
    assert made >= 3  # one per inventory file at least
    _old_file(entries / "notes.txt")
    outside = _old_file(project / "outside.txt")
    (entries / content_key(b"a link")).symlink_to(outside)
    (folder / "last-prune").unlink()
    assert cli("audit", "inv", *AS_OF, "--cache-dir", str(folder)).code == 0
    assert (entries / "notes.txt").exists() and outside.exists()
    planted = {"notes.txt", content_key(b"a link")}
    made = len([p for p in entries.iterdir() if p.name not in planted])  # the second one kept more
    run = cli("cache", "clean", "--cache-dir", str(folder))
    assert run.out == f"removed {made} entries from {folder}\n"
    assert sorted(p.name for p in entries.iterdir()) == sorted(["notes.txt", content_key(b"a link")])
    assert outside.read_text() == "mine\n"


def test_the_tag_is_written_only_in_a_folder_checker_made(project: Path, cli: CliRunner) -> None:
    assert cli("audit", "inv", *AS_OF, "--cache-dir", "new").code == 0
    tag = (project / "new" / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (project / "new" / cache.MARKER).is_file()


def _entry_path(folder: Path, inventory: Path) -> Path:
    return folder / "files" / content_key(inventory.read_bytes())


@pytest.mark.parametrize("plant", ["dev-zero", "fifo", "huge"])
def test_a_planted_entry_is_a_miss_not_a_hang(
    project: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    folder = project / "c"
    assert cli("audit", "inv", *AS_OF, "--cache-dir", str(folder), "--jobs", "1").code == 0
    entry = _entry_path(folder, project / "inv" / "servers.yaml")
    entry.unlink()
    if plant == "dev-zero":
        entry.symlink_to("/dev/zero")
    elif plant == "fifo":
        os.mkfifo(entry)
    else:
        monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 64)
        entry.write_bytes(b"\0" * 65)
    with deadline(30):
        run = cli("audit", "inv", *AS_OF, "--cache-dir", str(folder), "--jobs", "1")
    assert run.code == 0, run.err


def test_a_fifo_key_is_no_cache_not_a_hang(project: Path, cli: CliRunner) -> None:
    folder = project / "c"
    key = cache._key_file(folder)
    key.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(key)
    with deadline(30):
        run = cli("audit", "inv", *AS_OF, "--cache-dir", str(folder), "--jobs", "1")
    assert run.code == 0, run.err
    assert "is not a regular file" in cli("cache", "info", "--cache-dir", str(folder)).out


def _forge(folder: Path, inventory: Path, secret: bytes) -> None:
    """What a restored cache could hold: an entry that turns a good file into a YAML error."""
    key = content_key(inventory.read_bytes())
    payload = encode(YamlProblem("schema.yaml", 1, 1, "forged: this file is broken"))
    mac = hmac.new(secret, key.encode() + b"\0" + payload, hashlib.sha256).digest()
    (folder / "files" / key).write_bytes(cache._MAGIC + mac + payload)


def test_a_restored_cache_cannot_forge_an_entry(project: Path, cli: CliRunner) -> None:
    folder = project / "c"
    assert cli("audit", "inv", *AS_OF, "--cache-dir", str(folder), "--jobs", "1").code == 0
    # Whoever writes the cache folder (a CI cache restored from a pull request's
    # run) writes a key beside the entries, as checker once kept it, and signs with it.
    known = b"k" * 32
    (folder / "hmac.key").write_bytes(known)
    (folder / "hmac.key").chmod(0o600)
    _forge(folder, project / "inv" / "servers.yaml", known)
    run = cli("audit", "inv", *AS_OF, "--cache-dir", str(folder), "--jobs", "1")
    assert run.code == 0 and "forged" not in run.out, run.out
    assert not any(p.name.endswith(".key") for p in folder.rglob("*") if p.name != "hmac.key")


def test_a_cache_copied_elsewhere_starts_afresh(project: Path, cli: CliRunner) -> None:
    folder = project / "c"
    assert cli("audit", "inv", *AS_OF, "--cache-dir", str(folder), "--jobs", "1").code == 0
    shutil.copytree(folder, project / "restored")
    assert cache._key_file(project / "restored") != cache._key_file(folder)
    opened = cache.open_cache(project / "restored")
    assert opened is not None
    inventory = project / "inv" / "servers.yaml"
    text = inventory.read_text()
    assert opened.get(content_key(inventory.read_bytes()), lambda: text) is None
