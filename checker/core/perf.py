"""Process-level performance switches."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# What a process that ends itself holds to its end (ending_process), else None.
_kept: list[object] | None = None


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause CPython's cycle collector while building many small objects.

    It rescans every live object on each full pass, so loading an inventory
    slows down with its own size (measured here: composing 5 MB of YAML took
    4.8 s with it, 1.1 s without). Inventories and findings hold no cycles
    worth collecting in a short-lived run; re-entrant, and restored on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def ending_process() -> None:
    """The process is ended with os._exit once its command is done (checker.cli.run):
    what the run built is then neither collected nor freed object by object on the
    way out. The collector stays paused to the end (gc_paused then restores it
    paused: re-enabled, its first pass scans every object the run left, 25 ms of a
    10,000-server audit's CPU), and `keep` holds what returning would free."""
    global _kept
    gc.disable()
    _kept = []


def keep(value: object) -> None:
    """Hold `value` to the end of a process that ends itself (ending_process): its
    objects are not freed one by one as the command returns (20 ms for a
    10,000-server audit's result). Elsewhere (a library call of checker.cli.main)
    it is freed as usual."""
    if _kept is not None:
        _kept.append(value)
