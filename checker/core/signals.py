"""Ctrl-C, SIGTERM and SIGHUP end a run cleanly: exit 130, 143 or 129, nothing half-written.

Each of the three raises `Interrupted` where the program is, so every
`finally` runs (temporary files are removed) and the command line turns it
into the shell's code for the signal (128 + its number). A signal is also
remembered: code that swallows the exception (a library that catches
everything) cannot make a run that was interrupted write its outputs, since
`check()` raises again before anything is written, and `held()` keeps a
signal from arriving half-way through replacing a set of files.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

_SIGNALS = tuple(
    s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP")) if s is not None
)
_received: list[int] = []


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; `exit_code` is 128 + its number."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _handler(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise Interrupted(signum)


@contextmanager
def handled() -> Iterator[None]:
    """Within: the three signals raise Interrupted (in the main thread; elsewhere, as before)."""
    _received.clear()
    before: list[tuple[int, Callable[..., Any] | int | None]] = []
    try:
        for sig in _SIGNALS:
            try:
                before.append((sig, signal.signal(sig, _handler)))
            except (ValueError, OSError):  # not the main thread: leave signals as they are
                break
        yield
    finally:
        for sig, old in before:
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


def check() -> None:
    """Raise Interrupted if a signal came during the run, even one somebody swallowed."""
    if _received:
        raise Interrupted(_received[0])


@contextmanager
def held() -> Iterator[None]:
    """The three signals wait until the block is done (then arrive, and raise)."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    old = mask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)
