"""The inventories as of a git ref, laid out in a temporary folder, read through git.

Nothing touches the user's checkout or index: files come from `git ls-tree`
and `git cat-file --batch` (one process for all blobs), and are written under
a temporary root that mirrors the repository, so paths relative to the
current directory read the same in both trees.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from checker.core.errors import UserError
from checker.core.terminal import escape
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


_SYMLINK = "120000"


def _checked(commit: str, name: str) -> str:
    """A path from the tree that stays inside the folder it is laid out in. Git never
    writes `..`, `.`, an empty component or a leading `/`; a crafted commit can."""
    parts = name.split("/")
    if name.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise UserError(
            f"{commit[:12]}:{escape(name)}: a tree entry that would land outside the base tree"
            " ('..', '.', empty or absolute name); checker diff refuses a crafted commit"
        )
    return name


def _blobs(root: Path, commit: str, prefixes: Sequence[PurePosixPath]) -> list[tuple[str, str]]:
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", commit], root)
    out = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, oid = meta.decode("ascii", "replace").split()
        decoded = _checked(commit, name.decode("utf-8", "surrogateescape"))
        if kind == "blob" and _wanted(decoded, prefixes):
            if mode == _SYMLINK:
                raise UserError(
                    f"{commit[:12]}:{escape(decoded)}: a symbolic link in the base tree;"
                    " checker diff reads regular files only, and never follows a link from a commit"
                )
            out.append((oid, decoded))
    return out


def _cat(root: Path, oids: Sequence[str], names: Sequence[str], commit: str) -> Iterator[bytes]:
    data = _git(["cat-file", "--batch"], root, stdin="".join(f"{o}\n" for o in oids).encode())
    pos = 0
    for oid, name in zip(oids, names, strict=True):
        header_end = data.find(b"\n", pos)
        header = data[pos:header_end].split() if header_end >= 0 else []
        if len(header) != 3 or not header[2].isdigit():
            raise UserError(
                f"{commit[:12]}:{escape(name)}: object {oid} is missing or corrupt in the repository"
                " (a shallow or partial clone? fetch the base, e.g. with git fetch --unshallow)"
            )
        size = int(header[2])
        start = header_end + 1
        if start + size > len(data):
            raise UserError(f"{commit[:12]}:{escape(name)}: object {oid} is truncated in the repository")
        yield data[start : start + size]
        pos = start + size + 1


def materialize(root: Path, commit: str, paths: Sequence[Path], into: Path) -> list[Path]:
    """Write every YAML file below `paths` as of `commit` under `into` (mirroring the
    repository); return the paths, within `into`, that hold an inventory at that commit.

    A path the commit lacks, or a folder with no YAML file in it there, is left
    out: it is an empty inventory at the commit, everything in it is new. It is
    never audited as an empty folder (an input error that would stop every rule
    of the base audit) nor replaced by another path.

    Nothing is written outside `into`: a tree entry with a `..`, `.`, empty or
    absolute name, or a symbolic link, is refused (a located error), and each
    file is created new, never through a link. A missing or corrupt object (a
    partial clone) is a located error too."""
    prefixes = [_inside(p, root) for p in paths]
    try:
        blobs = _blobs(root, commit, prefixes)
        contents = _cat(root, [oid for oid, _ in blobs], [name for _, name in blobs], commit)
        base = into.resolve()
        for (_, name), content in zip(blobs, contents, strict=True):
            target = base / name
            if not target.parent.resolve().is_relative_to(base):  # belt and braces, after _checked
                raise UserError(f"{commit[:12]}:{escape(name)}: would be written outside the base tree")
            _create(target, content, f"{commit[:12]}:{escape(name)}")
    except _GitError as exc:
        lines = str(exc).splitlines() or ["git failed"]
        raise UserError(f"{commit[:12]}: cannot read the base tree: {escape(lines[-1])}") from None
    names = [PurePosixPath(name) for _, name in blobs]
    return [into / p for p in prefixes if any(_under(name, p) for name in names)]


def _create(target: Path, content: bytes, shown: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise UserError(f"{shown}: cannot lay out the base tree: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def changed_lines(old: Path, new: Path) -> list[tuple[int, int]]:
    """The lines of `new` that differ from `old`, as (first, last) spans: the
    `+` side of each hunk of `git diff --unified=0` (git's diff, so the lines a
    pull request's diff shows). A hunk that only removes lines touches none.

    The two files are compared as they are (`--no-index`: tracked or not, in
    any folder), as text, with no external diff or text conversion that a
    user's configuration might name."""
    if old.read_bytes() == new.read_bytes():
        return []
    args = ["diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "--text", "--unified=0"]
    try:
        done = subprocess.run(
            ["git", *args, "--", str(old), str(new)], capture_output=True, check=False
        )
    except FileNotFoundError:
        raise UserError("git is not installed: `checker diff` reads the base through git") from None
    if done.returncode not in (0, 1):  # 1: the files differ
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines() or ["git diff failed"]
        raise UserError(f"{escape(str(new))}: cannot compare with the base: {escape(lines[-1])}")
    spans = []
    for match in _HUNK.finditer(done.stdout):
        first, count = int(match[1]), int(match[2]) if match[2] is not None else 1
        if count:
            spans.append((first, first + count - 1))
    return spans


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)
