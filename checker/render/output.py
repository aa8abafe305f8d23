"""Where rendered formats go: stdout, files written atomically, the GitHub step summary.

A file is written to a temporary sibling and renamed over the target
(os.replace is atomic on POSIX and Windows), so a reader never sees half a
report and a failed run leaves the previous file intact; the files of one run
are renamed together, after all of them are written. Destinations are checked
before the audit runs: a typo in a path costs nothing.

Inventories come from pull requests anyone can open, so a destination is never
written through a symbolic link (one planted in the checkout could point at
`.git/config` or a home folder), never onto an input of the run, and never
named twice (docs/security.md).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from checker.core import signals
from checker.core.errors import UserError, clip
from checker.core.resources import rules_dir, templates_dir
from checker.core.terminal import escape_annotations, escape_lines
from checker.decide.result import AuditResult
from checker.load.build import YAML_SUFFIXES
from checker.render import get, get_formatter, step_summary
from checker.render.context import RenderContext

FIFO_WAIT_S = 5.0  # how long a FIFO output waits for its reader


@dataclass(frozen=True)
class Output:
    format: str
    file: Path | None  # None: standard output


def parse_spec(text: str) -> Output:
    """`FMT[:FILE]`; an unknown format fails here, before any work."""
    name, _, file = text.partition(":")
    get_formatter(name)
    return Output(name, destination(file))


def destination(file: str | Path | None) -> Path | None:
    """A file to write, or None for standard output (none given, `-` or `/dev/stdout`:
    the latter is a link that a pipe would not let be reopened)."""
    if file is None or str(file) in ("", "-", "/dev/stdout"):
        return None
    return Path(file)


def _is_input(target: Path, inputs: Sequence[Path]) -> bool:
    """An input file, or a YAML file where the next audit would read it as one."""
    for path in (p.resolve() for p in inputs):
        if target == path or (target.suffix.lower() in YAML_SUFFIXES and target.is_relative_to(path)):
            return True
    return False


def _real(file: Path) -> Path:
    """Where `file` is written: its folder with every link resolved, and its own
    name as it is (a link there is refused, never followed)."""
    return Path(os.path.realpath(file.parent if file.name else file)) / file.name


def _lstat(file: Path, what: str) -> os.stat_result | None:
    try:
        return os.lstat(file)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"{file}: cannot write {what}: {exc.strerror}") from None


def check_target(
    file: Path,
    what: str,
    inputs: Sequence[Path] = (),
    protected: Sequence[Path] = (),
) -> None:
    """`file` may receive `what`: it is no symbolic link, folder, socket or input of
    the run (an inventory, the config, a rule file, checker's own rules and
    templates), and its folder exists and is writable."""
    info = _lstat(file, what)
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise UserError(f"{file}: refusing to write {what} through a symbolic link")
        if stat.S_ISDIR(info.st_mode):
            raise UserError(f"{file}: cannot write {what}: is a directory")
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            raise UserError(f"{file}: cannot write {what}: not a regular file, device or FIFO")
    target = _real(file)
    if _is_input(target, inputs):
        raise UserError(f"{file}: refusing to write {what} among the inventories")
    own = (rules_dir().resolve(), templates_dir().resolve())
    if _is_input(target, protected) or any(target.is_relative_to(d) for d in own):
        raise UserError(f"{file}: refusing to write {what} over an input of the run (config or rules)")
    parent = target.parent
    if not parent.is_dir():
        raise UserError(f"{file}: cannot write {what}: no such folder")
    if not os.access(parent, os.W_OK):
        raise UserError(f"{file}: cannot write {what}: folder is not writable")


def _identity(file: Path) -> tuple[object, ...]:
    try:
        info = file.stat()
        return (info.st_dev, info.st_ino)
    except OSError:
        return (str(_real(file)),)


def check_writable(
    outputs: Sequence[Output],
    inputs: Sequence[Path],
    protected: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
) -> None:
    """Every output file can be written, none of them is (or would become) an input
    file, and no two name the same file; under GitHub Actions (`env`) the same
    holds for the step summary. At most one goes to standard output: two
    would interleave there (a JSON object in the middle of text lines)."""
    to_stdout = [out for out in outputs if out.file is None]
    if len(to_stdout) > 1:
        first, second = to_stdout[:2]
        raise UserError(
            f"checker: --format {first.format} and --format {second.format} would both write to standard"
            f" output; give all but one a file (--format {second.format}:FILE)"
        )
    seen: dict[tuple[object, ...], Output] = {}
    for out in outputs:
        if out.file is None:
            continue
        check_target(out.file, f"{out.format} output", inputs, protected)
        earlier = seen.setdefault(_identity(out.file), out)
        if earlier is not out:
            raise UserError(
                f"{out.file}: {earlier.format} and {out.format} output would overwrite each other;"
                " give each format its own file"
            )
    summary = env.get("GITHUB_STEP_SUMMARY") if env is not None else None
    if summary:
        check_target(Path(summary), "the step summary", inputs, protected)


class _Staged:
    """One file of a set being written: a finished temporary file beside it, renamed
    over it by `commit`, or an open device or FIFO that `commit` writes into."""

    def __init__(self, file: Path, data: bytes) -> None:
        self.file = file
        self.data = data
        self.tmp: str | None = None
        self.fd: int | None = None
        info = _lstat(file, "output")
        if info is not None and stat.S_ISLNK(info.st_mode):  # planted since the check
            raise UserError(f"{file}: refusing to write output through a symbolic link")
        self.target = _real(file)
        try:
            if info is not None and not stat.S_ISREG(info.st_mode):
                self._open_device(stat.S_ISFIFO(info.st_mode))
            else:
                self._write_temporary(info)
        except BaseException:  # a signal half-way: the temporary file goes too
            self.discard()
            raise

    def _open_device(self, fifo: bool) -> None:
        # A FIFO with no reader would block the run for ever: opened without
        # waiting it says ENXIO instead, and a reader gets FIFO_WAIT_S to come.
        flags = os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | (os.O_NONBLOCK if fifo else 0)
        deadline = time.monotonic() + FIFO_WAIT_S
        while True:
            try:
                self.fd = os.open(self.file, flags)
                os.set_blocking(self.fd, True)
                return
            except OSError as exc:
                if exc.errno == errno.ENXIO and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                why = "no process reads this FIFO" if exc.errno == errno.ENXIO else exc.strerror
                raise UserError(f"{self.file}: cannot write: {why}") from None

    def _write_temporary(self, info: os.stat_result | None) -> None:
        try:
            folder, name = self.target.parent, self.target.name
            fd, self.tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        except OSError as exc:
            raise UserError(f"{self.file}: cannot write: {exc.strerror}") from None
        try:
            # The file it replaces keeps its permissions (a 0600 report stays private).
            os.fchmod(fd, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as handle:
                handle.write(self.data)
        except OSError as exc:
            self.discard()
            raise UserError(f"{self.file}: cannot write: {exc.strerror}") from None

    def rename(self) -> None:
        if self.tmp is None:
            return
        try:
            os.replace(self.tmp, self.target)  # never follows a link at the target
        except OSError as exc:
            raise UserError(f"{self.file}: cannot write: {exc.strerror}") from None
        self.tmp = None

    def write_device(self) -> None:
        if self.fd is None:
            return
        try:
            view = memoryview(self.data)
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError as exc:
            raise UserError(f"{self.file}: cannot write: {exc.strerror}") from None

    def discard(self) -> None:
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def write_files(files: Sequence[tuple[Path, str]]) -> None:
    """Write a set of files together: each is written in full to a temporary file
    beside it, then all are renamed into place with signals held, so a run ends
    with every file new or every file as it was, and no temporary file left,
    whatever stops it (an error, Ctrl-C, SIGTERM, SIGHUP). A run that was
    interrupted writes nothing."""
    signals.check()
    staged: list[_Staged] = []
    try:
        for file, text in files:
            staged.append(_Staged(file, text.encode("utf-8", "backslashreplace")))
        signals.check()
        with signals.held():
            for item in staged:
                item.rename()
        for item in staged:
            item.write_device()
    finally:
        for item in staged:
            item.discard()


def write_atomic(file: Path, text: str) -> None:
    """One file, as write_files writes a set; refused through a symbolic link."""
    write_files([(file, text)])


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


def root_link_base(root: Path, file: Path | None) -> str:
    """Links to files named from the repository root (`checker diff`), from the
    folder an output is read in: its file's folder, or the current one."""
    folder = file.resolve().parent if file is not None else Path.cwd()
    rel = os.path.relpath(root.resolve(), folder)
    return "" if rel == "." else Path(rel).as_posix() + "/"


def _pull_request_head(env: Mapping[str, str]) -> str | None:
    """The head commit of the pull request an Actions run is for, from its event
    file: GITHUB_SHA there is the merge commit GitHub made, not a commit of the
    branch. None when the run is not for a pull request."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            event = json.load(handle)
        sha = event["pull_request"]["head"]["sha"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return sha if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) else None


def github_commit_base(env: Mapping[str, str]) -> str:
    """Links to a file named from the repository root, on GitHub, at the pull
    request's head commit (else the run's commit); "" outside a GitHub run."""
    server, repo = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY")
    sha = _pull_request_head(env) or env.get("GITHUB_SHA")
    if not (server and repo and sha):
        return ""
    return f"{server}/{repo}/blob/{sha}/"


def workspace_prefix(env: Mapping[str, str]) -> str:
    """The current folder from the checkout's root (GITHUB_WORKSPACE): "" there
    or outside it, `dc/` in a sub-directory."""
    workspace = env.get("GITHUB_WORKSPACE")
    rel = os.path.relpath(Path.cwd(), workspace) if workspace else "."
    return "" if rel == "." or rel.startswith("..") else Path(rel).as_posix() + "/"


def from_root(file: str, prefix: str) -> str:
    """A path relative to the current folder, named from the repository root
    (`prefix`: the current folder from the root, `dc/`); an absolute path, or
    one outside the repository, as it is."""
    if not prefix or not file or os.path.isabs(file):
        return file
    name = os.path.normpath(os.path.join(prefix, file))
    return file if name.startswith("..") else Path(name).as_posix()


def rooted(result: AuditResult, prefix: str) -> AuditResult:
    """The audit with its findings named from the repository root."""
    if not prefix:
        return result
    moved = tuple(replace(f, file=from_root(f.file, prefix)) for f in result.detected)
    return replace(result, detected=moved)


def github_blob_base(env: Mapping[str, str]) -> str:
    """In a step summary relative links go nowhere: link the commit's files on GitHub."""
    server, repo, sha = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_SHA")
    if not (server and repo and sha):
        return ""
    return f"{server}/{repo}/blob/{sha}/{workspace_prefix(env)}"


def emit(
    result: AuditResult,
    outputs: Sequence[Output],
    *,
    color: bool = False,
    max_per_rule: int = 100,
    group: bool = True,
    env: Mapping[str, str] | None = None,
    summary_only: bool = False,
) -> None:
    """Every output, and under GitHub Actions (`env`) the job summary. All are
    rendered before any is written: a message that fails to render (exit 2)
    leaves no output half-written."""
    rendered = []
    # Under GitHub Actions, the formats a service reads name files from the
    # repository root (where GitHub resolves them), from any working directory.
    prefix = workspace_prefix(env) if env is not None else ""
    for out in outputs:
        coloured = color and out.file is None
        ctx = RenderContext(link_base(out.file), coloured, max_per_rule, group, summary_only)
        fmt = get(out.format)
        seen = rooted(result, prefix) if fmt.from_root else result
        rendered.append((out, fmt.render(seen, ctx), ctx.color))
    summary = _step_summary(result, env, max_per_rule, group) if env is not None else None
    escaped = {id(o) for o, _, c in rendered if c or get(o.format).escaped}
    write_outputs([(out, text) for out, text, _ in rendered], escaped=escaped)
    if summary is not None:
        append_step_summary(*summary)


def _guarded(out: Output, text: str, escaped: bool) -> str:
    # Formatters escape user strings for their own syntax; this is the terminal's
    # last line of defence, since any of these files may be printed by `cat`.
    # The exceptions are escaped already: coloured text escapes every field
    # itself (render/text.py) and its own SGR sequences must reach the terminal;
    # JSON escapes every control character (Format.escaped). Only the github
    # format may start a line with a workflow command (`::`).
    if escaped:
        return text
    return escape_annotations(text) if out.format == "github" else escape_lines(text)


def write_outputs(items: Sequence[tuple[Output, str]], escaped: set[int] | None = None) -> None:
    """The files of a run together (write_files), then what goes to standard output.
    `escaped`: the outputs (by id) whose text is escaped already (_guarded)."""
    escaped = escaped or set()
    texts = [(out, _guarded(out, text, id(out) in escaped)) for out, text in items]
    write_files([(out.file, text) for out, text in texts if out.file is not None])
    for out, text in texts:
        if out.file is None:
            if out.format == "github":
                getattr(sys.stdout, "write_annotations", sys.stdout.write)(text)
            else:  # escaped now, by _guarded or before it: not scanned again by the stream
                getattr(sys.stdout, "write_rendered", sys.stdout.write)(text)


def write_output(out: Output, text: str, colored: bool = False) -> None:
    write_outputs([(out, text)], {id(out)} if colored else None)


def _step_summary(
    result: AuditResult, env: Mapping[str, str], max_per_rule: int, group: bool
) -> tuple[str, str] | None:
    """Under GitHub Actions the readiness report lands in the job's summary page."""
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    ctx = RenderContext(link_base=github_blob_base(env), max_per_rule=max_per_rule, group=group)
    return path, escape_lines(get_formatter("markdown")(result, ctx))


def append_step_summary(path: str, text: str) -> None:
    """Appended, never through a symbolic link, never into anything but a regular file,
    and cut to what GitHub takes with what the step wrote there before (step_summary.py)."""
    signals.check()
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        why = "is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise UserError(f"{path}: cannot append the step summary: {why}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{path}: cannot append the step summary: not a regular file")
        text = step_summary.fit(text, step_summary.LIMIT - info.st_size)
        if not text:
            sys.stderr.write(
                f"checker: the step summary already holds {info.st_size:,} bytes, the readiness report is "
                f"not appended: {step_summary.ADVICE}\n"
            )
            return
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(text.encode("utf-8", "backslashreplace"))
    except OSError as exc:
        raise UserError(f"{path}: cannot append the step summary: {exc.strerror}") from None
    finally:
        os.close(fd)


def pictures_folder(report: Path) -> Path:
    """Where a Markdown report's pictures go: `readiness.md` -> `readiness-pictures/` beside it."""
    return report.with_name(f"{report.stem}-pictures")


_PICTURE_NAMES = r"rack-\d{3}\.svg|load\.svg|cooling\.svg|timeline\.svg"


def write_pictures(folder: Path, files: Mapping[str, str]) -> None:
    """The pictures of a report, written together as any run's files are (never
    through a link); pictures this report no longer draws (a rack elevation
    past the last one) are removed, nothing else."""
    try:
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise UserError(f"{folder}: cannot write the report's pictures: not a folder of its own")
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.svg"):
            if old.name not in files and re.fullmatch(_PICTURE_NAMES, old.name):
                old.unlink()  # a link among them is removed, never followed
    except OSError as exc:  # `-o` with a name of 250 characters: its `-pictures` folder's is too long
        raise UserError(f"{clip(str(folder))}: cannot write the report's pictures: {exc.strerror}") from None
    write_files([(folder / name, escape_lines(text)) for name, text in sorted(files.items())])
