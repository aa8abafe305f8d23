"""`checker diff`: what a change does, against the same paths as of a git ref.

Both trees are audited with today's rulebook and configuration, so the diff
shows what the inventory change does, not what a rule change does. Findings
are matched by rule and entity (lines move); capacity by entity id.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from checker.decide.compare import DiffResult, changed, deltas, fails
from checker.decide.result import AuditResult
from checker.gitref import materialize, repo_root, resolve_ref, working_directory


def diff(
    ref: str,
    paths: Sequence[Path],
    audit: Callable[[Sequence[Path]], AuditResult],
    *,
    fail_on: str,
    fail_on_new: bool,
) -> DiffResult:
    root = repo_root(Path.cwd())
    commit = resolve_ref(root, ref)
    head = audit(paths)
    base = _audit_base(root, commit, paths, audit)
    new, resolved = changed(base, head)
    if head.exit_code == 2:
        code = 2
    elif fail_on_new:
        code = int(fails(new, fail_on))
    else:
        code = head.exit_code
    return DiffResult(ref, commit, base, head, new, resolved, deltas(base, head), code)


def _audit_base(
    root: Path, commit: str, paths: Sequence[Path], audit: Callable[[Sequence[Path]], AuditResult]
) -> AuditResult:
    cwd_in_repo = Path.cwd().resolve().relative_to(root.resolve())
    with tempfile.TemporaryDirectory(prefix="checker-base-") as tmp:
        base_root = Path(tmp)
        existing = materialize(root, commit, paths, base_root)
        here = base_root / cwd_in_repo
        here.mkdir(parents=True, exist_ok=True)
        # Same relative paths in both trees, so findings show the same file names.
        # No path held an inventory at the base: `audit([])` reads nothing, the
        # base is empty (never the default inventories/ or the current folder).
        with working_directory(here):
            return audit([Path(os.path.relpath(p, here)) for p in existing])
