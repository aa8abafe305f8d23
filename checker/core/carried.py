"""What the resident process carries from one command to the next.

A command in a process of its own builds everything it uses and drops it at
its end. The resident process (checker/resident_process.py) runs command
after command, and a pull request's next audit reads mostly the bytes the
last one read: the same compiled rulebook, the same validated models of every
file that did not change. `Carried` holds such results from one command to
the next, each under a digest of every byte it was made from, so that a
result is reused only where the same bytes would make it again: it holds
values of pure functions of bytes, never an option, a finding or a run's
verdict, and nothing whose maker reads a clock or the environment.

Only what one of the last COMMANDS commands used is kept: `turn` (before
each command) drops whatever no command since then has used, so what is
carried is bounded by a few inventories' worth (a 10-server audit between two
audits of a fleet does not drop the fleet's models), and the resident process
ends itself when it holds too much (checker.resident.MAX_RSS). A caller that
passes no `Carried` (every process of its own, every library call) gets none
of this: nothing of one audit outlives it there (tests/test_run_state.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


COMMANDS = 4


class Carried:
    """Results by (what they are, a digest of their bytes), kept for the next commands."""

    def __init__(self) -> None:
        # What each of the last commands used, the newest last: a result is in one only.
        self._used: list[dict[tuple[str, bytes], object]] = [{}]

    def turn(self) -> None:
        """A command starts: what the last COMMANDS - 1 used is what it may reuse."""
        self._used = [*self._used[-(COMMANDS - 1):], {}]

    def get(self, what: str, digest: bytes, kind: type[T], make: Callable[[], T]) -> T:
        """The result `make` gives for these bytes: the one carried, else made now.
        `kind`, its type: a value carried under `what` that is not one is made again.
        Whatever `make` raises propagates, and nothing is carried for it."""
        key = (what, digest)
        got = None
        for used in reversed(self._used):
            got = used.pop(key, None)
            if got is not None:
                break
        if not isinstance(got, kind):
            got = make()
        self._used[-1][key] = got
        return got

    def __len__(self) -> int:
        return sum(map(len, self._used))
