"""The inventories as of a git ref, laid out in a temporary folder, read through git.

Nothing touches the user's checkout or index: files come from `git ls-tree`
and `git cat-file --batch` (one process for all blobs), and are written under
a temporary root that mirrors the repository, so paths relative to the
current directory read the same in both trees.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from checker.core.errors import UserError
from checker.load.build import YAML_SUFFIXES


def _git(args: Sequence[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False)
    except FileNotFoundError:
        raise UserError("git is not installed: `checker diff` reads the base through git") from None
    if done.returncode != 0:
        raise _GitError(done.stderr.decode("utf-8", "replace").strip())
    return done.stdout


class _GitError(Exception):
    pass


def repo_root(cwd: Path) -> Path:
    try:
        return Path(_git(["rev-parse", "--show-toplevel"], cwd).decode().strip())
    except _GitError:
        raise UserError(f"{cwd}: not inside a git repository (diff compares with a git ref)") from None


def resolve_ref(root: Path, ref: str) -> str:
    """The commit a ref names, or a clear error (never a ref parsed as an option)."""
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root)
    except _GitError:
        raise UserError(f"unknown git ref '{ref}': no such branch, tag or commit") from None
    return out.decode().strip()


def _inside(path: Path, root: Path) -> PurePosixPath:
    try:
        return PurePosixPath(path.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        raise UserError(f"{path}: outside the git repository {root}") from None


def _under(path: PurePosixPath, prefix: PurePosixPath) -> bool:
    """`path` is the file `prefix` names, or a YAML file below the folder it names:
    what an audit of `prefix` reads (a file named on the command line is read
    whatever its name)."""
    if path == prefix:
        return True
    below = prefix == PurePosixPath(".") or prefix in path.parents
    return below and path.suffix.lower() in YAML_SUFFIXES


def _wanted(name: str, prefixes: Sequence[PurePosixPath]) -> bool:
    path = PurePosixPath(name)
    return any(_under(path, p) for p in prefixes)


def _blobs(root: Path, commit: str, prefixes: Sequence[PurePosixPath]) -> list[tuple[str, str]]:
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", commit], root)
    out = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        _mode, kind, oid = meta.decode().split()
        decoded = name.decode("utf-8", "surrogateescape")
        if kind == "blob" and _wanted(decoded, prefixes):
            out.append((oid, decoded))
    return out


def _cat(root: Path, oids: Sequence[str]) -> Iterator[bytes]:
    data = _git(["cat-file", "--batch"], root, stdin="".join(f"{o}\n" for o in oids).encode())
    pos = 0
    for _ in oids:
        header_end = data.index(b"\n", pos)
        size = int(data[pos:header_end].split()[2])
        start = header_end + 1
        yield data[start : start + size]
        pos = start + size + 1


def materialize(root: Path, commit: str, paths: Sequence[Path], into: Path) -> list[Path]:
    """Write every YAML file below `paths` as of `commit` under `into` (mirroring the
    repository); return the paths, within `into`, that hold an inventory at that commit.

    A path the commit lacks, or a folder with no YAML file in it there, is left
    out: it is an empty inventory at the commit, everything in it is new. It is
    never audited as an empty folder (an input error that would stop every rule
    of the base audit) nor replaced by another path."""
    prefixes = [_inside(p, root) for p in paths]
    blobs = _blobs(root, commit, prefixes)
    for (_, name), content in zip(blobs, _cat(root, [oid for oid, _ in blobs]), strict=True):
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    names = [PurePosixPath(name) for _, name in blobs]
    return [into / p for p in prefixes if any(_under(name, p) for name in names)]


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)
