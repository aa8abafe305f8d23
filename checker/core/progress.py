"""Progress on stderr for a long audit: one line, rewritten in place.

Shown only to a person watching: when stderr is a terminal, `CI` is not set
(CI services set it; their logs would keep every redraw) and `TERM` is not
`dumb` (no cursor control). Nothing appears before `DELAY_S`: a quick audit
prints exactly what it printed before. The line goes through
`SafeStream.write_status` (checker.core.terminal), which escapes it like every other
human-readable output: file names come from pull requests.

Stages report through module functions (`stage`, `files`, `servers`) that do
nothing when no progress line is shown, so library callers pay nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

from checker.core.terminal import SafeStream

DELAY_S = 2.0  # "longer than a couple of seconds"
INTERVAL_S = 0.2  # redraws at most five times a second


@dataclass(frozen=True)
class State:
    stage: str = "starting"
    files_done: int = 0
    files_total: int = 0
    servers: int = 0
    file: str = ""

    def line(self) -> str:
        parts = [f"checker: {self.stage}"]
        if self.files_total:
            parts.append(f"{self.files_done}/{self.files_total} files")
        if self.servers:
            parts.append(f"{self.servers:,} servers")
        text = ", ".join(parts)
        return f"{text} ({self.file})" if self.file else text


class Progress:
    """A state the audit updates and a thread that draws it once DELAY_S has passed."""

    def __init__(self, out: SafeStream, delay_s: float | None = None, interval_s: float = INTERVAL_S) -> None:
        self.out = out
        self.state = State()  # replaced whole, never mutated: the drawing thread reads it
        self._delay = DELAY_S if delay_s is None else delay_s
        self._interval = interval_s
        self._deadline = 0.0
        self._shown = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, **changes: str | int) -> None:
        self.state = dataclasses.replace(self.state, **changes)  # type: ignore[arg-type]

    def _draw(self, stop: threading.Event) -> None:
        if stop.wait(max(self._deadline - time.monotonic(), 0.0)):
            return
        while True:
            text = self.state.line()
            if text != self._shown:
                self.out.write_status(text)
                self._shown = text
            if stop.wait(self._interval):
                return

    def _start(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._draw, args=(self._stop,), name="checker-progress", daemon=True
        )
        self._thread.start()

    def _halt(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """No drawing thread inside: forking a process that runs threads can deadlock the child."""
        self._halt()
        try:
            yield
        finally:
            self._start()

    def __enter__(self) -> Progress:
        self._deadline = time.monotonic() + self._delay
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._halt()
        if self._shown:
            self.out.write_status("")  # the report starts on a clean line


# The line being shown, if any. A context variable, not a parameter of every
# stage, on purpose: it is set only by `shown` around one command and reset
# when that ends, it changes no result (only what stderr shows while a person
# watches), and a stage reports to it without knowing whether anyone listens;
# library callers never set it, so their runs report to nothing. Options that
# change what a run reads or finds are passed explicitly (ReadOptions, Settings).
_CURRENT: ContextVar[Progress | None] = ContextVar("checker_progress", default=None)


def wanted(stream: object, environ: Mapping[str, str] = os.environ) -> bool:
    """A person is watching this stream: a terminal, not a CI log, able to rewrite a line."""
    isatty = getattr(stream, "isatty", None)
    return bool(
        isatty is not None
        and isatty()
        and not environ.get("CI")
        and environ.get("TERM") != "dumb"
    )


@contextlib.contextmanager
def shown(stream: object, environ: Mapping[str, str] = os.environ) -> Iterator[None]:
    """Show progress on `stream` for the duration, if a person is watching it."""
    if not isinstance(stream, SafeStream) or not wanted(stream, environ):
        yield
        return
    with Progress(stream) as progress:
        token = _CURRENT.set(progress)
        try:
            yield
        finally:
            _CURRENT.reset(token)


def _update(**changes: str | int) -> None:
    progress = _CURRENT.get()
    if progress is not None:
        progress.update(**changes)


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """The progress line (if any) stops drawing inside, e.g. while worker processes are forked."""
    progress = _CURRENT.get()
    if progress is None:
        yield
        return
    with progress.suspended():
        yield


def stage(name: str) -> None:
    _update(stage=name, file="")


def files(done: int, total: int, name: str = "") -> None:
    _update(files_done=done, files_total=total, file=name)


def servers(count: int) -> None:
    _update(servers=count)
