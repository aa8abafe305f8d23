"""Where this checker was installed from: to repair a broken install, and to pin
the scaffold's pre-commit hook and workflow to the commit that is running.

pip records the source of a package installed from a folder, an archive or a
git URL in `direct_url.json` (PEP 610,
https://packaging.python.org/en/latest/specifications/direct-url/); one from
an index has none. Only the standard library is used here: this runs
when the rest of checker may not import (checker/__main__.py).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "checker"
_SHA = re.compile(r"[0-9a-f]{40}")
_GITHUB = re.compile(r"(?:https://github\.com/|git@github\.com:)([\w.-]+/[\w.-]+?)(?:\.git)?/?")


@dataclass(frozen=True)
class Source:
    """`pip install` of what reinstalls this checker, and the git repository and
    commit it was built from, where known."""

    requirement: str  # "checker", a folder, an archive URL or git+URL@commit
    editable: bool = False
    repository: str | None = None
    commit: str | None = None

    @property
    def github(self) -> str | None:
        """`owner/name` of a GitHub repository, as a workflow's `uses:` names it."""
        found = _GITHUB.fullmatch(self.repository or "")
        return found.group(1) if found else None


def _direct_url() -> dict[str, object] | None:
    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        found = json.loads(text) if text else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=False, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def source() -> Source:
    info = _direct_url()
    if info is None:
        return Source(DISTRIBUTION)
    url = str(info.get("url", ""))
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict):  # pip install git+URL@ref
        given = str(vcs.get("commit_id", ""))
        kind = str(vcs.get("vcs", "git"))
        pinned = given if _SHA.fullmatch(given) else None
        return Source(f"{kind}+{url}@{given}", repository=url, commit=pinned)
    if url.startswith("file://"):
        folder = Path(unquote(urlparse(url).path))
        dir_info = info.get("dir_info")
        editable = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
        # A git clone (pre-commit installs its hooks from one): its origin and HEAD.
        head = _git(folder, "rev-parse", "HEAD") if folder.is_dir() else None
        repository = _git(folder, "remote", "get-url", "origin") if head else None
        pinned = head if repository and head and _SHA.fullmatch(head) else None
        return Source(str(folder), editable, repository if pinned else None, pinned)
    return Source(url or DISTRIBUTION)
