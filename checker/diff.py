"""`checker diff`: what a change does, against the same paths as of a git ref.

Both trees are audited with today's rulebook and configuration, so the diff
shows what the inventory change does, not what a rule change does. Findings
are matched by rule and entity (lines move); capacity by entity id. The new
findings are then pointed at the lines the change touched where their cause
is (checker.decide.touched), and every path is named from the repository's
root, as `git diff` and GitHub name them, from whatever folder it runs in.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from checker.core.findings import Finding
from checker.decide.compare import DiffResult, changed, deltas, fails, worsened
from checker.decide.config import CONFIG_NAMES, PYPROJECT, find_config, searched
from checker.decide.result import AuditResult
from checker.decide.touched import EVERY_LINE, Lines, relocate
from checker.gitref import changed_lines, materialize, repo_root, resolve_ref, working_directory
from checker.render.output import from_root
from checker.source.reader import display_path


def diff(
    ref: str,
    paths: Sequence[Path],
    audit: Callable[[Sequence[Path]], AuditResult],
    *,
    fail_on: str,
    fail_on_new: bool,
    settings_change: Callable[[str], Sequence[Finding]] | None = None,
) -> DiffResult:
    """`settings_change(commit)`: what the change's own settings turn off against
    the base's (checker.decide.weakened), new findings of the change."""
    root = repo_root(Path.cwd())
    commit = resolve_ref(root, ref)
    head = audit(paths)
    cwd_in_repo = PurePosixPath(Path.cwd().resolve().relative_to(root.resolve()).as_posix())
    prefix = "" if cwd_in_repo == PurePosixPath(".") else f"{cwd_in_repo}/"
    with tempfile.TemporaryDirectory(prefix="checker-base-") as tmp:
        base_root = Path(tmp)
        base = _audit_base(root, commit, paths, audit, base_root, cwd_in_repo)
        new, resolved, lifted = changed(base, head)
        new = relocate(new, head.facts, _Touched(root, base_root))
    new, resolved = _named_from_root(new, prefix), _named_from_root(resolved, prefix)
    if settings_change is not None:
        new = (*new, *_named_from_root(settings_change(commit), prefix))
    lifted = tuple(
        replace(w, finding=_named_from_root([w.finding], prefix)[0], was=_named_from_root([w.was], prefix)[0])
        for w in lifted
    )
    result = DiffResult(
        ref, commit, base, head, new, resolved, deltas(base, head), 0,
        worsened=(*worsened(new, resolved), *lifted), fail_on=fail_on, fail_on_new=fail_on_new,
    )  # fmt: skip
    if head.exit_code == 2:
        code = 2
    elif fail_on_new:
        code = int(fails(result.introduced, fail_on))
    else:
        code = head.exit_code
    return replace(result, exit_code=code)


def _audit_base(
    root: Path,
    commit: str,
    paths: Sequence[Path],
    audit: Callable[[Sequence[Path]], AuditResult],
    base_root: Path,
    cwd_in_repo: PurePosixPath,
) -> AuditResult:
    existing = materialize(root, commit, paths, base_root)
    here = base_root / cwd_in_repo
    here.mkdir(parents=True, exist_ok=True)
    # Same relative paths in both trees, so findings show the same file names.
    # No path held an inventory at the base: `audit([])` reads nothing, the
    # base is empty (never the default inventories/ or the current folder).
    with working_directory(here):
        return audit([Path(os.path.relpath(p, here)) for p in existing])


class _Touched:
    """The lines the change touched in a file of the head (named as findings
    name it, from the current folder): its git diff with the file as laid out
    from the base; every line of a file the base lacks; none of a file outside
    the repository (the built-in catalog). Each file is compared once."""

    def __init__(self, root: Path, base_root: Path) -> None:
        self._root = root.resolve()
        self._base_root = base_root
        self._seen: dict[str, Lines] = {}

    def __call__(self, file: str) -> Lines:
        found = self._seen.get(file)
        if found is None:
            found = self._seen[file] = self._lines(file)
        return found

    def _lines(self, file: str) -> Lines:
        head = Path(os.path.abspath(file))
        try:
            inside = head.relative_to(self._root)
        except ValueError:
            return Lines()
        if not head.is_file():
            return Lines()
        base = self._base_root / inside
        if not base.is_file():
            return EVERY_LINE
        # The file itself, not a link to it: git would compare a link's target name.
        return Lines(tuple(changed_lines(base, head.resolve())))


def _named_from_root(findings: Iterable[Finding], prefix: str) -> tuple[Finding, ...]:
    return tuple(replace(f, file=from_root(f.file, prefix)) for f in findings)


def base_config(
    root: Path, commit: str, paths: Sequence[Path], explicit: Path | None, into: Path
) -> tuple[Path | None, str]:
    """The config `checker` would have read at `commit`, laid out under `into`
    (the files it would have looked at, nothing else), and its name in the
    repository; (None, '') if there was none. `explicit`: --config's file,
    read as of `commit`; else the search of find_config, in the base tree."""
    inside = root.resolve()
    if explicit is not None and not explicit.resolve().is_relative_to(inside):
        # Not in the repository: no commit has another version of it, so both sides read it.
        return explicit.resolve(), display_path(explicit)
    if explicit is not None:
        candidates = [explicit]
    else:
        starts = [*(p if p.is_dir() else p.parent for p in paths), Path()]
        folders = {folder for start in starts for folder in searched(start)}
        candidates = [folder / name for folder in sorted(folders) for name in (*CONFIG_NAMES, PYPROJECT)]
    wanted = [c for c in candidates if c.resolve().is_relative_to(inside)]
    materialize(root, commit, wanted, into)
    (into / ".git").mkdir(exist_ok=True)  # the base tree's root: the search stops there

    def mirrored(path: Path) -> Path:
        return into / path.resolve().relative_to(inside)

    if explicit is not None:
        found: Path | None = mirrored(explicit) if mirrored(explicit).is_file() else None
    else:
        here, there = mirrored(Path.cwd()), [mirrored(p) for p in paths]
        here.mkdir(parents=True, exist_ok=True)
        with working_directory(here):  # find_config's last place to look is the current folder
            found = find_config(there)
    if found is None:
        return None, ""
    found = found.resolve()
    return found, found.relative_to(into.resolve()).as_posix()


def base_rules(root: Path, commit: str, folders: Sequence[Path], into: Path) -> list[Path]:
    """The rule folders `folders` as of `commit`, laid out under `into`: those that
    held a rule file there (a folder the base lacks holds no rule)."""
    inside = root.resolve()
    return materialize(root, commit, [f for f in folders if f.resolve().is_relative_to(inside)], into)
