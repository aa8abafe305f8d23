"""`checker init`: a new inventory repository whose own audit passes.

The files are templates/init/ as they are (layout in templates, not Python
strings), plus the JSON Schema that the inventories' yaml-language-server
lines point at. The pre-commit hook and the workflow are pinned to the commit
this checker was installed from, when that is known (installed from git, or
from a git clone with an origin, as pre-commit installs hooks); else they keep
the placeholders their comments explain. Nothing is overwritten: if any file exists, nothing is written;
if writing fails or is interrupted half-way, what was written is removed again.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from checker.core.errors import UserError
from checker.core.install import Source, source
from checker.core.resources import templates_dir
from checker.load.schema import inventory_schema

SCHEMA_FILE = "inventory.schema.json"
# The placeholders of templates/init/ a known origin replaces.
REPOSITORY = "https://github.com/YOUR-ORG/checker"
COMMIT = "0" * 40
ACTION = f"YOUR-ORG/checker@{COMMIT}"


def pinned(text: str, origin: Source) -> str:
    """`text` with the placeholders naming checker's repository and commit filled in from `origin`."""
    if origin.repository is None or origin.commit is None:
        return text
    if origin.github is not None:
        text = text.replace(ACTION, f"{origin.github}@{origin.commit}")
    return text.replace(REPOSITORY, origin.repository).replace(f"rev: {COMMIT}", f"rev: {origin.commit}")


def _sources() -> dict[str, str]:
    root = templates_dir() / "init"
    files = sorted(p for p in root.rglob("*") if p.is_file())
    origin = source()
    out = {p.relative_to(root).as_posix(): pinned(p.read_text(encoding="utf-8"), origin) for p in files}
    out[SCHEMA_FILE] = json.dumps(inventory_schema(), indent=2, sort_keys=True) + "\n"
    return out


def init(target: Path) -> list[Path]:
    """Write the scaffold under `target`; refuse, writing nothing, if any file exists."""
    files = _sources()
    existing = [target / name for name in files if os.path.lexists(target / name)]
    if existing:
        raise UserError([f"{p}: already exists; checker init never overwrites" for p in existing])
    if target.exists() and not target.is_dir():
        raise UserError(f"{target}: not a folder")
    written: list[Path] = []
    made: list[Path] = []  # folders this run created, innermost last
    try:
        for name, text in files.items():
            path = target / name
            try:
                _mkdirs(path.parent, made)
                with path.open("x", encoding="utf-8") as handle:  # "x": never clobber a file that appeared
                    written.append(path)
                    handle.write(text)
            except OSError as exc:
                raise UserError(f"{path}: cannot write: {exc.strerror}") from None
    except BaseException:  # an error, Ctrl-C, SIGTERM: no partial scaffold is left
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return written


def _mkdirs(folder: Path, made: list[Path]) -> None:
    """Create `folder` and its missing parents, each added to `made` once created."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)
