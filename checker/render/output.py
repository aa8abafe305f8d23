"""Where rendered formats go: stdout, files written atomically, the GitHub step summary.

A file is written to a temporary sibling and renamed over the target
(os.replace is atomic on POSIX and Windows), so a reader never sees half a
report and a failed run leaves the previous file intact. Destinations are
checked before the audit runs: a typo in a path costs nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from checker.core.errors import UserError
from checker.core.terminal import escape_lines
from checker.decide.result import AuditResult
from checker.load.build import YAML_SUFFIXES
from checker.render import get_formatter
from checker.render.context import RenderContext


@dataclass(frozen=True)
class Output:
    format: str
    file: Path | None  # None: standard output


def parse_spec(text: str) -> Output:
    """`FMT[:FILE]`; an unknown format fails here, before any work."""
    name, _, file = text.partition(":")
    get_formatter(name)
    return Output(name, Path(file) if file else None)


def _is_input(target: Path, inputs: Sequence[Path]) -> bool:
    """An input file, or a YAML file where the next audit would read it as one."""
    for path in (p.resolve() for p in inputs):
        if target == path or (target.suffix.lower() in YAML_SUFFIXES and target.is_relative_to(path)):
            return True
    return False


def check_writable(outputs: Sequence[Output], inputs: Sequence[Path]) -> None:
    """Every output file can be written, and none of them is (or would become) an input file."""
    for out in outputs:
        if out.file is None:
            continue
        target = out.file.resolve()
        if target.is_dir():
            raise UserError(f"{out.file}: cannot write {out.format} output: is a directory")
        if _is_input(target, inputs):
            raise UserError(f"{out.file}: refusing to write {out.format} output among the inventories")
        parent = target.parent
        if not parent.is_dir():
            raise UserError(f"{out.file}: cannot write {out.format} output: no such folder")
        if not os.access(parent, os.W_OK):
            raise UserError(f"{out.file}: cannot write {out.format} output: folder is not writable")


def write_atomic(file: Path, text: str) -> None:
    """Write `text` to `file` by rename, or straight into it where a rename would
    replace what the path stands for: a device (`/dev/null`, `/dev/stdout`) or
    a FIFO. A symbolic link stays a link: its target is replaced."""
    target = file.resolve()
    with contextlib.suppress(OSError):
        if not stat.S_ISREG(target.stat().st_mode):
            _write_through(file, target, text)
            return
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(f"{file}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise UserError(f"{file}: cannot write: {exc.strerror}") from None


def _write_through(file: Path, target: Path, text: str) -> None:
    try:
        with open(target, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            handle.write(text)
    except OSError as exc:
        raise UserError(f"{file}: cannot write: {exc.strerror}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def link_base(file: Path | None) -> str:
    """Links in a Markdown file point at inventories relative to the file's own folder."""
    if file is None:
        return ""
    rel = os.path.relpath(Path.cwd(), file.resolve().parent)
    return "" if rel == "." else Path(rel).as_posix() + "/"


def github_blob_base(env: Mapping[str, str]) -> str:
    """In a step summary relative links go nowhere: link the commit's files on GitHub."""
    server, repo, sha = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_SHA")
    if not (server and repo and sha):
        return ""
    workspace = env.get("GITHUB_WORKSPACE")
    rel = os.path.relpath(Path.cwd(), workspace) if workspace else "."
    prefix = "" if rel == "." or rel.startswith("..") else Path(rel).as_posix() + "/"
    return f"{server}/{repo}/blob/{sha}/{prefix}"


def emit(
    result: AuditResult,
    outputs: Sequence[Output],
    *,
    color: bool = False,
    max_per_rule: int = 100,
    env: Mapping[str, str] | None = None,
) -> None:
    """Every output, and under GitHub Actions (`env`) the job summary. All are
    rendered before any is written: a message that fails to render (exit 2)
    leaves no output half-written."""
    rendered = []
    for out in outputs:
        ctx = RenderContext(link_base(out.file), color and out.file is None, max_per_rule)
        rendered.append((out, get_formatter(out.format)(result, ctx), ctx.color))
    summary = _step_summary(result, env, max_per_rule) if env is not None else None
    for out, text, colored in rendered:
        write_output(out, text, colored=colored)
    if summary is not None:
        append_step_summary(*summary)


def write_output(out: Output, text: str, colored: bool = False) -> None:
    # Formatters escape user strings for their own syntax; this is the terminal's
    # last line of defence, since any of these files may be printed by `cat`.
    # Coloured text is the one exception: it escapes every field itself
    # (render/text.py) and its own SGR sequences must reach the terminal.
    if not colored:
        text = escape_lines(text)
    if out.file is None:
        sys.stdout.write(text)
    else:
        write_atomic(out.file, text)


def _step_summary(result: AuditResult, env: Mapping[str, str], max_per_rule: int) -> tuple[str, str] | None:
    """Under GitHub Actions the readiness report lands in the job's summary page."""
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    ctx = RenderContext(link_base=github_blob_base(env), max_per_rule=max_per_rule)
    return path, escape_lines(get_formatter("markdown")(result, ctx))


def append_step_summary(path: str, text: str) -> None:
    try:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
    except OSError as exc:
        raise UserError(f"{path}: cannot append the step summary: {exc.strerror}") from None


def pictures_folder(report: Path) -> Path:
    """Where a Markdown report's pictures go: `readiness.md` -> `readiness-pictures/` beside it."""
    return report.with_name(f"{report.stem}-pictures")


_PICTURE_NAMES = r"rack-\d{3}\.svg|load\.svg|cooling\.svg|timeline\.svg"


def write_pictures(folder: Path, files: Mapping[str, str]) -> None:
    """The pictures of a report, each written atomically; pictures this report no
    longer draws (a rack elevation past the last one) are removed, nothing else."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder}: cannot write the report's pictures: not a folder")
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.svg"):
        if old.name not in files and re.fullmatch(_PICTURE_NAMES, old.name):
            old.unlink()
    for name, text in sorted(files.items()):
        write_atomic(folder / name, escape_lines(text))
